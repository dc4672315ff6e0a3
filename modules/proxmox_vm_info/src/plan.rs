//! proxmox_vm_info's plan: which cluster entries the task selects and which node lists that needs. Pure: no I/O.

use std::collections::BTreeSet;

use module_utils::pve::pveformat::lenient_u64;
use module_utils::pve::resources::VmResource;
use serde_json::{Map, Value};

use crate::params::Params;

/// The entries the task selects, in vmid order.
pub fn select<'a>(vms: &'a [VmResource], params: &Params) -> Vec<&'a VmResource> {
    vms.iter()
        .filter(|v| params.kind.as_deref().is_none_or(|k| v.kind == k))
        .filter(|v| params.node.as_deref().is_none_or(|n| v.node == n))
        .filter(|v| params.vmid.is_none_or(|id| v.vmid == id))
        .filter(|v| match params.name.as_deref() {
            None => true,
            Some("") => v.name.as_deref().unwrap_or("").is_empty(),
            Some(n) => v.name.as_deref() == Some(n),
        })
        .collect()
}

/// The (node, kind) lists to read, one per pair that has a selected VM PVE knows (a VM that
/// exists only as a check-mode prediction is in no node's list).
pub fn node_lists_to_read(
    selected: &[&VmResource],
    predicted_only: impl Fn(&VmResource) -> bool,
) -> BTreeSet<(String, String)> {
    selected.iter().filter(|v| !predicted_only(v)).map(|v| (v.node.clone(), v.kind.clone())).collect()
}

/// A node's list (`GET /nodes/{node}/{kind}`) by vmid, as text.
pub fn by_vmid(list: &Value) -> Map<String, Value> {
    list.as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| {
                    let id = lenient_u64(i.get("vmid"))?;
                    Some((id.to_string(), i.clone()))
                })
                .collect()
        })
        .unwrap_or_default()
}
