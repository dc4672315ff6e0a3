//! proxmox_vm_info's result: each selected VM's entry in the upstream return shape (the cluster entry merged with its node's, the config with parsed NICs and disks, the guest's network), and the task's `Outcome`.

use module_utils::protocol::Outcome;
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{config_json_value, parse_config_disks, parse_config_nics};
use module_utils::pve::pveformat::lenient_bool;
use module_utils::pve::resources::VmResource;
use serde_json::{Map, Value};

use crate::params::ConfigMode;

/// The task's result: the entries, in vmid order; read-only, so never a change.
pub fn outcome(vms: Vec<Value>) -> Outcome {
    Outcome::new(false, "").with("proxmox_vms", Value::Array(vms))
}

/// One VM's entry: `merge_entry`, then its config (`add_config`) when read, then the guest's
/// network, or why it could not be read, when asked for.
pub fn entry(
    vm: &VmResource,
    node_entry: Option<&Map<String, Value>>,
    config: Option<Map<String, Value>>,
    network: Option<std::result::Result<Value, String>>,
) -> Value {
    let mut entry = merge_entry(vm, node_entry);
    if let Some(config) = config {
        add_config(&mut entry, &vm.kind, config);
    }
    match network {
        Some(Ok(net)) => {
            entry.insert("network".into(), net);
        }
        Some(Err(why)) => {
            entry.insert("network_error".into(), Value::String(why));
        }
        None => {}
    }
    Value::Object(entry)
}

/// The cluster entry merged with the node's list entry, `vmid` as int and `template` as bool
/// (the upstream return shape).
pub fn merge_entry(vm: &VmResource, node_entry: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut entry = vm.raw.clone();
    // check mode's mark of a VM an earlier task would create is not a field of Proxmox VE's
    entry.remove(module_utils::check::predictions::PREDICTED_MARK);
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
