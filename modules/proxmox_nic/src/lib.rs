//! proxmox_nic: make one `netN` of a VM exactly what the task describes, keeping its MAC.
//!
//! Pipeline: `Params::from_spec` (validation beyond types) → `plan` (pure: the VM's config and
//! power state in, the change and its predicted result out) → `apply` (the one write and the
//! read back). Check mode returns the plan's prediction and writes nothing.

mod spec;

use module_utils::ansible::diff::Diff;
use module_utils::check::predictions;
use module_utils::connect::connect;
use module_utils::error::clip;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::client::{form, Api};
use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::hotplug::nic_change_waits;
use module_utils::pve::propstring::{normalize_mac, PropertyString, NET};
use module_utils::pve::pveformat::{check_option, PveFormat};
use module_utils::pve::resources::{require, VmResource};
use module_utils::{Error, Result};
use serde_json::Value;

pub use spec::SPEC;

/// The NIC options this module manages; any other option of an existing NIC is kept.
const MANAGED_KEYS: &[&str] =
    &["model", "macaddr", "bridge", "tag", "trunks", "firewall", "link_down", "mtu", "queues", "rate"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Present,
    Absent,
}

/// The validated options of one task.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub vmid: Option<u64>,
    pub name: Option<String>,
    pub interface: String,
    pub state: State,
    pub model: String,
    /// Upper case.
    pub mac: Option<String>,
    pub bridge: Option<String>,
    pub tag: Option<i64>,
    /// `;`-joined VLAN ids, as PVE writes them.
    pub trunks: Option<String>,
    pub firewall: bool,
    pub link_down: bool,
    pub mtu: Option<i64>,
    pub queues: Option<i64>,
    pub rate: Option<f64>,
}

impl Params {
    /// Check what upstream leaves to PVE, before any call. `warn` receives warnings.
    pub fn from_spec(p: &module_utils::ansible::spec::Params, warn: &mut dyn FnMut(String)) -> Result<Params> {
        let interface = p.str("interface").unwrap_or_default().to_string();
        let index_ok = interface
            .strip_prefix("net")
            .and_then(|n| {
                (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0')))
                    .then_some(n)
            })
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n <= 31);
        if !index_ok {
            return Err(Error::args(format!("interface must be one of net0 to net31, got '{}'", clip(&interface, 40))));
        }
        let vmid = match p.int("vmid") {
            Some(v) if !(100..=999_999_999).contains(&v) => {
                return Err(Error::args(format!("vmid must be between 100 and 999999999, got {v}")))
            }
            v => v.map(|v| v as u64),
        };
        let mac = match p.str("mac") {
            Some(m) => Some(normalize_mac(m).ok_or_else(|| {
                Error::args(format!("mac must be a unicast MAC address like BC:24:11:00:00:01, got '{}'", clip(m, 40)))
            })?),
            None => None,
        };
        let tag = p.int("tag");
        if let Some(t) = tag {
            if !(1..=4094).contains(&t) {
                return Err(Error::args(format!("tag must be between 1 and 4094, got {t}")));
            }
        }
        let trunks = match p.list("trunks") {
            Some(items) if !items.is_empty() => {
                let mut ids = Vec::new();
                for item in items {
                    let id = item.as_i64().filter(|id| (1..=4094).contains(id)).ok_or_else(|| {
                        Error::args(format!("trunks must be VLAN ids between 1 and 4094, got {item}"))
                    })?;
                    ids.push(id.to_string());
                }
                Some(ids.join(";"))
            }
            _ => None,
        };
        let model = p.str("model").unwrap_or("virtio").to_string();
        let mut mtu = p.int("mtu");
        if let Some(m) = mtu {
            if !(m == 1 || (576..=65520).contains(&m)) {
                return Err(Error::args(format!(
                    "mtu must be 1 (use the bridge's MTU) or between 576 and 65520, got {m}"
                )));
            }
            if model != "virtio" {
                warn(format!(
                    "Ignoring MTU for nic {interface} on VM with vmid {}, model should be set to 'virtio': {model}",
                    vmid.map(|v| v.to_string()).or_else(|| p.str("name").map(str::to_string)).unwrap_or_default()
                ));
                mtu = None;
            }
        }
        let queues = p.int("queues");
        if let Some(q) = queues {
            if !(0..=64).contains(&q) {
                return Err(Error::args(format!("queues must be between 0 and 64, got {q}")));
            }
        }
        let rate = p.float("rate");
        if let Some(r) = rate {
            if !(r >= 0.0 && r.is_finite()) {
                return Err(Error::args(format!("rate must be a number of MB/s, 0 or more, got {r}")));
            }
        }
        let bridge = p.str("bridge").map(str::to_string);
        if bridge.as_deref() == Some("") {
            return Err(Error::args("bridge must not be empty (leave it out for user-mode networking)"));
        }
        if let Some(b) = &bridge {
            check_option("bridge", PveFormat::BridgeId, b)?;
        }
        Ok(Params {
            vmid,
            name: p.str("name").map(str::to_string),
            interface,
            state: if p.str("state") == Some("absent") { State::Absent } else { State::Present },
            model,
            mac,
            bridge,
            tag,
            trunks,
            firewall: p.bool("firewall").unwrap_or(false),
            link_down: p.bool("link_down").unwrap_or(false),
            mtu,
            queues,
            rate,
        })
    }
}

/// What the task will do to the NIC.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    None,
    /// `PUT .../config netN=<value>`.
    Set(String),
    /// `PUT .../config delete=netN`.
    Delete,
}

/// The plan for one task: the action, and the NIC before and (predicted) after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub action: Action,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Whether, after the action, the NIC will wait for the next start (predicted).
    pub pending: bool,
}

/// A float as PVE would keep it when we send it: integral rates without a fraction.
fn number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// The NIC the task describes, given the NIC that exists (for its MAC and unmanaged options).
/// Every value from the task goes through `set_checked`: none can add or change another key.
pub fn desired_nic(params: &Params, existing: Option<&PropertyString>) -> Result<PropertyString> {
    let mut nic = PropertyString::new(&NET);
    nic.set_checked("model", &params.model)?;
    match (&params.mac, existing.and_then(|e| e.get("macaddr"))) {
        (Some(mac), _) => nic.set_checked("macaddr", mac).map_err(|e| Error::args(format!("mac: {e}")))?,
        (None, Some(kept)) => nic.set("macaddr", kept),
        (None, None) => {}
    }
    let optional = [
        ("bridge", params.bridge.clone()),
        ("firewall", params.firewall.then(|| "1".to_string())),
        ("link_down", params.link_down.then(|| "1".to_string())),
        ("mtu", params.mtu.map(|v| v.to_string())),
        ("queues", params.queues.map(|v| v.to_string())),
        ("rate", params.rate.map(number_text)),
        ("tag", params.tag.map(|v| v.to_string())),
        ("trunks", params.trunks.clone()),
    ];
    for (key, value) in optional {
        if let Some(v) = value {
            nic.set_checked(key, &v)?;
        }
    }
    if let Some(existing) = existing {
        for (key, value) in existing.iter() {
            if !MANAGED_KEYS.contains(&key) {
                nic.set(key, value);
            }
        }
    }
    Ok(nic)
}

/// Plan the task against the VM's config. Pure.
pub fn plan(config: &VmConfig, running: bool, params: &Params) -> Result<Plan> {
    let iface = params.interface.as_str();
    let before_text = config.get(iface).map(str::to_string);
    let before = match &before_text {
        Some(text) => Some(
            PropertyString::parse_lenient(&NET, text)
                .map_err(|e| Error::failed(format!("the current {iface} of the VM cannot be read: {e}")))?,
        ),
        None => None,
    };
    let already_pending = config.is_pending(iface);
    // What the VM runs with now decides whether a change can be hot-plugged.
    let applied = config.current.get(iface).and_then(|c| PropertyString::parse_lenient(&NET, c).ok());
    match params.state {
        State::Absent => Ok(match before {
            None => Plan { action: Action::None, before: None, after: None, pending: already_pending },
            Some(_) => Plan {
                action: Action::Delete,
                before: before_text,
                after: None,
                pending: running && nic_change_waits(&config.hotplug(), applied.as_ref(), None),
            },
        }),
        State::Present => {
            let desired = desired_nic(params, before.as_ref())?;
            if let Some(b) = &before {
                if b.semantically_equal(&desired) {
                    return Ok(Plan {
                        action: Action::None,
                        before: before_text.clone(),
                        after: before_text,
                        pending: already_pending,
                    });
                }
            }
            let pending = running && nic_change_waits(&config.hotplug(), applied.as_ref(), Some(&desired));
            let value = desired.to_checked_string()?;
            Ok(Plan { action: Action::Set(value.clone()), before: before_text, after: Some(value), pending })
        }
    }
}

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let params = ctx.parse(Params::from_spec)?;
    if let Some(id) = params.vmid {
        ctx.identify("vmid", id);
    }
    let api = connect(ctx)?;
    let plan_dir = ctx.predictions.clone();
    let vms = predictions::cluster_vms(&api, plan_dir.as_ref())?;
    let vm = require(&vms, params.vmid, params.name.as_deref())?;
    ctx.identify("vmid", vm.vmid);
    if vm.kind != "qemu" {
        return Err(Error::failed(format!("VM with vmid {} is a container ({}), not a QEMU VM", vm.vmid, vm.kind)));
    }
    let config = predictions::read_config(&api, vm, plan_dir.as_ref())?;
    // Another writer between our read and our write: plan again from what it left.
    let mut bridges = None;
    config::retry_on_conflict(&api, vm, config, |config| {
        let plan = plan(config, vm.status == "running", &params)?;
        // A bridge the node lacks: refused before the write, and also when an earlier run left
        // the NIC pending on it (check mode alike: the node's bridges are only read).
        if let (Some(bridge), true) = (&params.bridge, matches!(plan.action, Action::Set(_)) || plan.pending) {
            if bridges.is_none() {
                bridges = Some(module_utils::pve::resources::node_bridges(&api, &vm.node)?);
            }
            module_utils::pve::resources::require_bridge(
                bridges.as_deref().unwrap_or_default(),
                bridge,
                &vm.node,
                "bridge",
            )?;
        }
        run(ctx, &api, vm, config, &params, plan)
    })
}

fn run(
    ctx: &mut Context,
    api: &dyn Api,
    vm: &VmResource,
    config: &VmConfig,
    params: &Params,
    plan: Plan,
) -> Result<Outcome> {
    let iface = params.interface.as_str();
    let changed = plan.action != Action::None;
    let diff = Diff::text(
        &line(iface, plan.before.as_deref()),
        &line(iface, plan.after.as_deref()),
        &format!("VM {} {iface} (before)", vm.vmid),
        &format!("VM {} {iface} (after)", vm.vmid),
    );
    let (after, pending) = if ctx.check_mode || !changed {
        if ctx.check_mode && changed {
            let predicted = config.with_change(iface, plan.after.as_deref(), plan.pending);
            predictions::record_config(ctx.predictions.as_ref(), vm, &predicted)?;
        }
        (plan.after.clone(), plan.pending)
    } else {
        apply(api, vm, config, iface, &plan.action)?
    };
    if pending {
        ctx.warn(format!(
            "the change to {iface} of VM {} is pending: Proxmox VE applies it when the VM is next started (it could not be hot-plugged)",
            vm.vmid
        ));
    }
    let msg = match (&plan.action, params.state) {
        (Action::Set(_), _) => format!("Nic {iface} updated on VM with vmid {}", vm.vmid),
        (Action::Delete, _) => format!("Nic {iface} deleted on VM with vmid {}", vm.vmid),
        (Action::None, State::Present) if pending => format!(
            "Nic {iface} on VM with vmid {} is as the task asks, but Proxmox VE has not applied it: the change is pending until the VM is next started",
            vm.vmid
        ),
        (Action::None, State::Present) => format!("Nic {iface} unchanged on VM with vmid {}", vm.vmid),
        (Action::None, State::Absent) => format!("Nic {iface} does not exist on VM with vmid {}", vm.vmid),
    };
    let mac = after
        .as_deref()
        .and_then(|a| PropertyString::parse_lenient(&NET, a).ok())
        .and_then(|n| n.get("macaddr").map(str::to_string));
    Ok(Outcome::new(changed, msg)
        .with("vmid", vm.vmid)
        .with("interface", iface)
        .with("mac", mac.map(Value::String).unwrap_or(Value::Null))
        .with("config", after.map(Value::String).unwrap_or(Value::Null))
        .with("pending", pending)
        .with("reboot_required", pending)
        .with_diff(Some(diff)))
}

/// The one write, then a read back of what PVE made of it.
fn apply(
    api: &dyn Api,
    vm: &VmResource,
    config: &VmConfig,
    iface: &str,
    action: &Action,
) -> Result<(Option<String>, bool)> {
    let body = match action {
        Action::Set(value) => form([(iface, value.as_str())]),
        Action::Delete => form([("delete", iface)]),
        Action::None => return Ok((config.get(iface).map(str::to_string), config.is_pending(iface))),
    };
    let verb = if matches!(action, Action::Delete) { "delete" } else { "change" };
    config::write(api, vm, body, config.digest.as_deref())
        .map_err(|e| e.context(&format!("Unable to {verb} nic {iface} on VM with vmid {}", vm.vmid)))?;
    let after = config::read(api, vm)?;
    Ok((after.get(iface).map(str::to_string), after.is_pending(iface)))
}

fn line(iface: &str, value: Option<&str>) -> String {
    value.map(|v| format!("{iface}: {v}\n")).unwrap_or_default()
}

#[cfg(test)]
mod tests;
