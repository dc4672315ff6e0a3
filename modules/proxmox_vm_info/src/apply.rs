//! proxmox_vm_info's reads beyond the cluster list: a node's VM list, a VM's config, the guest's network.

use module_utils::pve::client::Api;
use module_utils::pve::request::{form, ApiPath};
use module_utils::pve::resources::VmResource;
use module_utils::{Error, Result};
use serde_json::{Map, Value};

use crate::params::ConfigMode;

/// `GET /nodes/{node}/{kind}`: the node's list of VMs (or containers).
pub fn node_list(api: &dyn Api, node: &str, kind: &str) -> Result<Value> {
    api.get(&ApiPath::new(["nodes", node, kind]), &Vec::new()).map_err(|e| {
        e.context(if kind == "lxc" {
            "Failed to retrieve LXC VMs information"
        } else {
            "Failed to retrieve QEMU VMs information"
        })
    })
}

/// `GET .../config`, applied values only (`current=1`) or with the pending ones over them.
pub fn config(api: &dyn Api, vm: &VmResource, mode: ConfigMode) -> Result<Map<String, Value>> {
    let current = if mode == ConfigMode::Current { "1" } else { "0" };
    let config = api
        .get(&vm.path().join(["config"]), &form([("current", current)]))
        .map_err(|e| e.context(&format!("Failed to retrieve the configuration of VM {}", vm.vmid)))?;
    Ok(config.as_object().cloned().unwrap_or_default())
}

/// The guest's interfaces, or why they cannot be read. A stopped VM is not asked at all.
pub fn guest_network(api: &dyn Api, vm: &VmResource) -> std::result::Result<Value, String> {
    if vm.status != "running" {
        return Err(format!("VM {} is not running", vm.vmid));
    }
    let path = if vm.kind == "lxc" {
        vm.path().join(["interfaces"])
    } else {
        vm.path().join(["agent", "network-get-interfaces"])
    };
    match api.get(&path, &Vec::new()) {
        Ok(v) if vm.kind == "lxc" => Ok(v),
        Ok(v) => Ok(v.get("result").cloned().unwrap_or(v)),
        Err(Error::Api { message, .. }) => Err(message),
        Err(e) => Err(e.to_string()),
    }
}
