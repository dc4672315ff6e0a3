//! proxmox_nic's validated task: the options as typed values, checked beyond their types before any call.

use module_utils::error::clip;
use module_utils::pve::propstring::normalize_mac;
use module_utils::pve::pveformat::{check_option, PveFormat};
use module_utils::pve::resources::vmid_option;
use module_utils::{Error, Result};

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
    /// The VM's node, when the task names it (our addition): the one-read no-op (`World::on_node`).
    pub node: Option<String>,
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
    pub fn from_spec(p: &module_utils::ansible::spec::Args, warn: &mut dyn FnMut(String)) -> Result<Params> {
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
        let vmid = vmid_option("vmid", p.int("vmid"))?;
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
        if let Some(node) = p.str("node") {
            check_option("node", PveFormat::Node, node)?;
        }
        Ok(Params {
            vmid,
            name: p.str("name").map(str::to_string),
            node: p.str("node").map(str::to_string),
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

impl module_utils::connect::Task for Params {
    fn vmid(&self) -> Option<u64> {
        self.vmid
    }
}
