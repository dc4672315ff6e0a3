//! proxmox_kvm's result: what a task returns (`outcome`, `new_vm`, `drift`, `already_absent`, `removed`): a VM's keys, its NICs' MACs, its drives' volumes, the config with `cipassword` masked and its diff, and the planned config with what PVE resolved.

use std::collections::BTreeMap;

use module_utils::ansible::diff::Diff;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::config_text;
use module_utils::pve::devices::{format_for_key, is_nic_key, sort_natural};
use module_utils::pve::pools::PoolMove;
use module_utils::pve::propstring::PropertyString;
use module_utils::pve::resources::VmResource;
use serde_json::{json, Map, Value};

use crate::params::is_drive_key;
use crate::plan::{drift_line, is_marked, listed_power, Converge, Power, MASKED};

/// The config as the diff shows it, `cipassword` masked.
pub fn config_map(config: &BTreeMap<String, String>) -> Map<String, Value> {
    config
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(if k == "cipassword" { MASKED.to_string() } else { v.clone() })))
        .collect()
}

/// `netN` → MAC of every NIC that has one.
pub fn macs(config: &BTreeMap<String, String>) -> Map<String, Value> {
    field_by_key(config, is_nic_key, "macaddr")
}

/// Disk key → volume of every drive.
pub fn devices(config: &BTreeMap<String, String>) -> Map<String, Value> {
    field_by_key(config, is_drive_key, "file")
}

/// Key → `field` of the property string of every key `is_key` selects that has it, in natural
/// key order (`net2` before `net10`).
fn field_by_key(config: &BTreeMap<String, String>, is_key: fn(&str) -> bool, field: &str) -> Map<String, Value> {
    let mut keys: Vec<&String> = config.keys().filter(|k| is_key(k)).collect();
    sort_natural(&mut keys);
    keys.into_iter()
        .filter_map(|k| {
            let ps = PropertyString::parse_lenient(format_for_key(k)?, &config[k]).ok()?;
            Some((k.clone(), Value::String(ps.get(field)?.to_string())))
        })
        .collect()
}

/// The planned config the diff shows: in a real run, each value the plan could only mark
/// `(known after apply)` is the value PVE gave it (`after`, as read back), and each drive names
/// the volume PVE made, so a real run's diff never shows a volume that does not exist; in a
/// check run `after` is the plan itself, and the marks and predicted names stay.
pub fn resolved(planned: &VmConfig, after: &VmConfig) -> VmConfig {
    let real = after.effective();
    let mut out = planned.clone();
    for side in [&mut out.current, &mut out.pending] {
        for (key, value) in side.iter_mut() {
            let Some(v) = real.get(key) else { continue };
            if is_marked(value) {
                *value = v.clone();
            } else if let (Some(predicted), Some(made)) = (drive_volume(key, value), drive_volume(key, v)) {
                if predicted != made {
                    *value = value.replacen(&predicted, &made, 1);
                }
            }
        }
    }
    out
}

/// The volume a drive value names (`None`: not a drive, or no volume: `none`, `cdrom`, a path).
fn drive_volume(key: &str, value: &str) -> Option<String> {
    let ps = PropertyString::parse_lenient(format_for_key(key)?, value).ok()?;
    let file = ps.get("file")?;
    module_utils::pve::volume::Volume::parse(file).map(|_| file.to_string())
}

/// The result of a run on an existing (or just created) VM. `before` is Proxmox VE's status
/// of the VM before the task (`running` or `stopped`, as `status/current` says; `None` when it
/// did not exist), returned as `status` with upstream's meaning; `after` its power state after
/// the task, returned as `power_state`.
pub fn outcome(
    changed: bool,
    msg: String,
    vm: &VmResource,
    config: Option<&VmConfig>,
    before: Option<&str>,
    after: Option<Power>,
) -> Outcome {
    let effective = config.map(VmConfig::effective).unwrap_or_default();
    let pending: Vec<String> = config.map(|c| c.pending_keys().into_iter().collect()).unwrap_or_default();
    let name = effective.get("name").cloned().or_else(|| vm.name.clone());
    Outcome::new(changed, msg)
        .with("vmid", vm.vmid)
        .with("name", name.map(Value::String).unwrap_or(Value::Null))
        .with("node", vm.node.clone())
        .with("status", before.map(|s| Value::String(s.to_string())).unwrap_or(Value::Null))
        .with("power_state", after.map(|p| Value::String(p.as_str().to_string())).unwrap_or(Value::Null))
        .with("mac", Value::Object(macs(&effective)))
        .with("devices", Value::Object(devices(&effective)))
        .with("reboot_required", !pending.is_empty())
        .with("pending", json!(pending))
}

/// The result of a task on an existing VM that changes nothing, read on its node alone
/// (`World::on_node`): as `drift` and the unchanged update give it, with `status` and
/// `power_state` null (that one read does not give the power state).
pub fn unchanged(vm: &VmResource, config: &VmConfig) -> Outcome {
    let label = config.get("name").map(str::to_string).unwrap_or_else(|| vm.vmid.to_string());
    outcome(false, format!("VM {label} with vmid {} already exists", vm.vmid), vm, Some(config), None, None)
        .with("drift", Value::Object(Map::new()))
        .with_diff(Some(diff(vm.vmid, Some(config), Some(config))))
}

/// The result of a create or clone: changed, the new VM (`vm`, its config `after` as read back
/// or predicted) stopped, no drift, and the diff from nothing to the `planned` config as PVE
/// resolved it.
pub fn new_vm(vm: &VmResource, after: &VmConfig, planned: &VmConfig, msg: String) -> Outcome {
    let planned = resolved(planned, after);
    outcome(true, msg, vm, Some(after), None, Some(Power::Stopped))
        .with("drift", Value::Object(Map::new()))
        .with_diff(Some(diff(vm.vmid, None, Some(&planned))))
}

/// `update: false` on an existing VM: report how it differs from the task, change nothing.
pub fn drift(ctx: &mut Context, vm: &VmResource, config: &VmConfig, conv: &Converge, label: &str) -> Outcome {
    let mut drift = Map::new();
    for c in &conv.changes {
        // never a password or its hash: both masked (SECURITY.md)
        let hide = |v: &str| if c.key == "cipassword" { MASKED.to_string() } else { v.to_string() };
        let (before, after) = (c.before.as_deref().map(hide), hide(&c.after));
        let line = drift_line(&c.key, before.as_deref(), &after);
        ctx.warn(format!("{line}; set update: true to apply"));
        drift.insert(c.key.clone(), json!({"before": before, "after": after}));
    }
    for r in &conv.refused {
        ctx.warn(format!("{}: {}", r.key, r.reason));
        drift.insert(r.key.clone(), json!({"before": r.before, "after": r.wanted}));
    }
    let msg = if drift.is_empty() {
        format!("VM {label} with vmid {} already exists", vm.vmid)
    } else {
        let keys: Vec<&str> = drift.keys().map(String::as_str).collect();
        format!(
            "VM {label} with vmid {} already exists and differs from the task in {} (not changed: update is false)",
            vm.vmid,
            keys.join(", ")
        )
    };
    outcome(false, msg, vm, Some(config), Some(&vm.status), Some(listed_power(vm)))
        .with("drift", Value::Object(drift))
        .with_diff(Some(diff(vm.vmid, Some(config), Some(config))))
}

/// The result of a removal that found no VM (`label`: the task's name or vmid).
pub fn already_absent(label: &str, vmid: Option<u64>) -> Outcome {
    let head = Outcome::new(false, format!("VM {label} is already absent"))
        .with("vmid", vmid.map(Value::from).unwrap_or(Value::Null))
        .with("status", Value::Null);
    gone(head).with_diff(Some(diff(vmid.unwrap_or(0), None, None)))
}

/// The result of a removal of `vm`: its keys as they were (`config`, the power state `now`),
/// the diff from its config to nothing.
pub fn removed(vm: &VmResource, config: &VmConfig, now: Power) -> Outcome {
    let head = Outcome::new(true, format!("VM {} removed", vm.vmid))
        .with("vmid", vm.vmid)
        .with("name", vm.name.clone().map(Value::String).unwrap_or(Value::Null))
        .with("node", vm.node.clone())
        .with("status", now.resource_status());
    gone(head).with_diff(Some(diff(vm.vmid, Some(config), None)))
}

/// The result of a task that found no VM to remove, or removed one: `head` with the VM's keys
/// as they were, then those of a VM that is not there.
fn gone(head: Outcome) -> Outcome {
    head.with("power_state", Value::Null)
        .with("mac", json!({}))
        .with("devices", json!({}))
        .with("pending", json!([]))
        .with("reboot_required", false)
}

pub fn diff(vmid: u64, before: Option<&VmConfig>, after: Option<&VmConfig>) -> Diff {
    let b = before.map(|c| config_text(&config_map(&c.effective())));
    let a = after.map(|c| config_text(&config_map(&c.effective())));
    Diff::config(b.as_deref(), a.as_deref(), &format!("VM {vmid}"))
}

/// `d` with the `pool:` lines of a VM's move into the task's pool.
pub fn with_pool(mut d: Diff, mv: &PoolMove) -> Diff {
    let (before, after) = mv.diff_lines();
    d.before.push_str(&before);
    d.after.push_str(&after);
    d
}
