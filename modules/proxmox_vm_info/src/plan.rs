//! proxmox_vm_info's plan: which cluster entries the task selects, which node lists that needs, and the return shape of each entry. Pure: no I/O.

use std::collections::BTreeSet;

use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{config_json_value, parse_config_disks, parse_config_nics};
use module_utils::pve::pveformat::{lenient_bool, lenient_u64};
use module_utils::pve::resources::VmResource;
use serde_json::{Map, Value};

use crate::params::{ConfigMode, Params};

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

/// The cluster entry merged with the node's list entry, `vmid` as int and `template` as bool
/// (the upstream return shape).
pub fn merge_entry(vm: &VmResource, node_entry: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut entry = vm.raw.clone();
    if let Some(extra) = node_entry {
        for (k, v) in extra {
            entry.insert(k.clone(), v.clone());
        }
    }
    entry.insert("vmid".into(), Value::from(vm.vmid));
    entry.insert("template".into(), Value::Bool(lenient_bool(entry.get("template"))));
    entry.insert("node".into(), Value::from(vm.node.clone()));
    entry.insert("type".into(), Value::from(vm.kind.clone()));
    entry
}

/// A check-mode prediction's config as `GET .../config` would answer it (`current=1`: the
/// applied values; else with the pending ones over them).
pub fn predicted_config_view(config: &VmConfig, mode: ConfigMode) -> Map<String, Value> {
    let view = if mode == ConfigMode::Current { config.current.clone() } else { config.effective() };
    view.into_iter()
        .map(|(k, v)| {
            let value = config_json_value(&k, &v);
            (k, value)
        })
        .collect()
}

/// Add the config to an entry, with a QEMU VM's parsed `nics` and `disks`.
pub fn add_config(entry: &mut Map<String, Value>, kind: &str, config: Map<String, Value>) {
    if kind == "qemu" {
        let nics: Vec<Value> = parse_config_nics(&config).iter().map(|n| n.to_json()).collect();
        let disks: Vec<Value> = parse_config_disks(&config).iter().map(|d| d.to_json()).collect();
        entry.insert("nics".into(), Value::Array(nics));
        entry.insert("disks".into(), Value::Array(disks));
    }
    entry.insert("config".into(), Value::Object(config));
}
