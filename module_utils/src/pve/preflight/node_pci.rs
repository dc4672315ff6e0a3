//! What a start reads of its node's PCI devices, for a `hostpciN` given by `host` id: the ids `GET /nodes/<node>/hardware/pci` lists, and the warning when this user may not read them (docs/pve-semantics.md §72).

use std::collections::BTreeMap;

use super::Preflight;
use crate::pve::request::ApiPath;
use crate::pve::values::devices::host_ids;

/// The privileges pve-manager API2/Hardware/PCI.pm `pci_scan` takes (any one, on `/`).
pub const PCI_SCAN: [&str; 2] = ["Sys.Audit", "Sys.Modify"];

impl Preflight<'_> {
    /// The node's PCI device ids (`<domain>:<bus>:<slot>.<function>`) as
    /// `GET /nodes/<node>/hardware/pci` lists them (API2/Hardware/PCI.pm `pci_scan`, SysFSTools.pm
    /// `lspci`) with an empty `pci-class-blacklist` (it hides memory controllers, bridges and
    /// processors by default, which `parse_hostpci`'s `lspci` finds too) and without the
    /// names (`verbose=0`); `None` when the config has no `host` id or the read fails.
    pub fn node_pci(&self, node: &str, config: &BTreeMap<String, String>) -> Option<Vec<String>> {
        if host_ids(config).is_empty() {
            return None;
        }
        let path = ApiPath::new(["nodes", node, "hardware", "pci"]);
        let query = vec![("pci-class-blacklist".to_string(), String::new()), ("verbose".to_string(), "0".to_string())];
        let data = self.api.get(&path, &query).ok()?;
        Some(data.as_array()?.iter().filter_map(|d| Some(d.get("id")?.as_str()?.to_string())).collect())
    }
}

/// The warning of a start whose `host` ids the node's list would decide, when this user may not
/// read the list (none of `PCI_SCAN` on `/`): PVE refuses a device the node lacks (which one,
/// of several, is known after apply).
pub fn pci_unknown(vmid: u64, node: &str, config: &BTreeMap<String, String>) -> Option<String> {
    let ids = host_ids(config);
    let missing = match ids.as_slice() {
        [] => return None,
        [one] => one,
        _ => "(known after apply)",
    };
    Some(format!(
        "whether VM {vmid} starts is not known: it passes through PCI device(s) {} by host id and node {node}'s PCI devices are listed only with {} on /; PVE may refuse it: no PCI device found for '{missing}'",
        ids.join(", "),
        PCI_SCAN.join(" or ")
    ))
}
