//! proxmox_vm_info's validated task: which VMs, which config view, whether to ask the guest agent.

use module_utils::pve::pveformat::{check_option, PveFormat};
use module_utils::pve::resources::vmid_option;
use module_utils::Result;

/// Which configuration to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigMode {
    None,
    Current,
    Pending,
}

/// The validated options of one task.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub node: Option<String>,
    /// `None` for `all`.
    pub kind: Option<String>,
    pub vmid: Option<u64>,
    pub name: Option<String>,
    pub config: ConfigMode,
    pub network: bool,
}

impl Params {
    /// Check what upstream leaves to PVE, before any call.
    pub fn from_spec(p: &module_utils::ansible::spec::Args) -> Result<Params> {
        // A vmid outside PVE's range names no VM: refused, not read as "every VM" (§29).
        let vmid = vmid_option("vmid", p.int("vmid"))?;
        if let Some(node) = p.str("node") {
            check_option("node", PveFormat::Node, node)?;
        }
        Ok(Params {
            node: p.str("node").map(str::to_string),
            kind: p.str("type").filter(|t| *t != "all").map(str::to_string),
            vmid,
            name: p.str("name").map(str::to_string),
            config: match p.str("config") {
                Some("current") => ConfigMode::Current,
                Some("pending") => ConfigMode::Pending,
                _ => ConfigMode::None,
            },
            network: p.bool("network").unwrap_or(false),
        })
    }
}

impl module_utils::connect::Task for Params {
    fn vmid(&self) -> Option<u64> {
        self.vmid
    }
}
