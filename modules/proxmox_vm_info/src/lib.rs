//! proxmox_vm_info: list VMs with their config, parsed NICs and disks, and guest network.
//!
//! Pipeline: `Params` → `select` (pure: which cluster entries the task asks for) → `read`
//! (the I/O: node check, node lists, configs, agent). Read-only, so check mode is a normal run.

mod spec;

use std::collections::BTreeMap;

use module_utils::check::predictions::{self, Predictions};
use module_utils::connect::connect;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::client::{form, Api, ApiPath};
use module_utils::pve::devices::{parse_config_disks, parse_config_nics};
use module_utils::pve::resources::VmResource;
use module_utils::{Error, Result};
use serde_json::{Map, Value};

pub use spec::SPEC;

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
    pub fn from_ctx(p: &module_utils::ansible::spec::Params) -> Result<Params> {
        let vmid = match p.int("vmid") {
            Some(v) if v < 0 => return Err(Error::args(format!("vmid must be a positive integer, got {v}"))),
            Some(v) => Some(v as u64),
            None => None,
        };
        if let Some(node) = p.str("node") {
            module_utils::pve::pveformat::check_option("node", module_utils::pve::pveformat::PveFormat::Node, node)?;
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

/// The entries the task selects, in vmid order. Pure.
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

/// The cluster entry merged with the node's list entry, `vmid` as int and `template` as bool
/// (the upstream return shape). Pure.
pub fn merge_entry(vm: &VmResource, node_entry: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut entry = vm.raw.clone();
    if let Some(extra) = node_entry {
        for (k, v) in extra {
            entry.insert(k.clone(), v.clone());
        }
    }
    entry.insert("vmid".into(), Value::from(vm.vmid));
    entry.insert("template".into(), Value::Bool(module_utils::pve::resources::lenient_bool(entry.get("template"))));
    entry.insert("node".into(), Value::from(vm.node.clone()));
    entry.insert("type".into(), Value::from(vm.kind.clone()));
    entry
}

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let params = Params::from_ctx(&ctx.params)?;
    if let Some(id) = params.vmid {
        ctx.identify("vmid", id);
    }
    let api = connect(ctx)?;
    let vms = read(&api, &params, ctx.predictions.as_ref())?;
    Ok(Outcome::new(false, "").with("proxmox_vms", Value::Array(vms)))
}

/// All reads of one task, in the fewest calls.
/// `plan`: in check mode, the predictions of the run's earlier tasks (VMs they would create or
/// change count as they would be).
pub fn read(api: &dyn Api, params: &Params, plan: Option<&Predictions>) -> Result<Vec<Value>> {
    if let Some(node) = &params.node {
        let nodes = api
            .get(&ApiPath::new(["nodes"]), &Vec::new())
            .map_err(|e| e.context("Unable to retrieve Proxmox VE node"))?;
        let known = nodes
            .as_array()
            .is_some_and(|list| list.iter().any(|n| n.get("node").and_then(Value::as_str) == Some(node)));
        if !known {
            return Err(Error::failed(format!(
                "Node {} doesn't exist in PVE cluster",
                module_utils::error::clip(node, module_utils::pve::pveformat::QUOTE_MAX)
            )));
        }
    }
    let all = predictions::cluster_vms(api, plan)?;
    let selected = select(&all, params);

    // One list read per (node, kind) that has selected VMs, for the node-list fields.
    let mut node_lists: BTreeMap<(String, String), Map<String, Value>> = BTreeMap::new();
    for vm in selected.iter().filter(|v| !predictions::is_predicted(v)) {
        let key = (vm.node.clone(), vm.kind.clone());
        if node_lists.contains_key(&key) {
            continue;
        }
        let list = api.get(&ApiPath::new(["nodes", &vm.node, &vm.kind]), &Vec::new()).map_err(|e| {
            e.context(if vm.kind == "lxc" {
                "Failed to retrieve LXC VMs information"
            } else {
                "Failed to retrieve QEMU VMs information"
            })
        })?;
        let by_id: Map<String, Value> = list
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| {
                        let id = module_utils::pve::resources::lenient_u64(i.get("vmid"))?;
                        Some((id.to_string(), i.clone()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        node_lists.insert(key, by_id);
    }

    let mut out = Vec::with_capacity(selected.len());
    for vm in selected {
        let node_entry = node_lists
            .get(&(vm.node.clone(), vm.kind.clone()))
            .and_then(|m| m.get(&vm.vmid.to_string()))
            .and_then(Value::as_object);
        let mut entry = merge_entry(vm, node_entry);
        if params.config != ConfigMode::None {
            let config = match plan.and_then(|p| p.get(vm.vmid)) {
                Some(predicted) => {
                    let cfg = predicted.config();
                    let view = if params.config == ConfigMode::Current { cfg.current.clone() } else { cfg.effective() };
                    view.into_iter()
                        .map(|(k, v)| {
                            let value = module_utils::pve::devices::config_json_value(&k, &v);
                            (k, value)
                        })
                        .collect()
                }
                None => {
                    let current = if params.config == ConfigMode::Current { "1" } else { "0" };
                    let config = api
                        .get(&vm.path().join(["config"]), &form([("current", current)]))
                        .map_err(|e| e.context(&format!("Failed to retrieve the configuration of VM {}", vm.vmid)))?;
                    config.as_object().cloned().unwrap_or_default()
                }
            };
            if vm.kind == "qemu" {
                let nics: Vec<Value> = parse_config_nics(&config).iter().map(|n| n.to_json()).collect();
                let disks: Vec<Value> = parse_config_disks(&config).iter().map(|d| d.to_json()).collect();
                entry.insert("nics".into(), Value::Array(nics));
                entry.insert("disks".into(), Value::Array(disks));
            }
            entry.insert("config".into(), Value::Object(config));
        }
        if params.network {
            match guest_network(api, vm) {
                Ok(net) => {
                    entry.insert("network".into(), net);
                }
                Err(why) => {
                    entry.insert("network_error".into(), Value::String(why));
                }
            }
        }
        out.push(Value::Object(entry));
    }
    Ok(out)
}

/// The guest's interfaces, or why they cannot be read. A stopped VM is not asked at all.
fn guest_network(api: &dyn Api, vm: &VmResource) -> std::result::Result<Value, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster() -> Vec<VmResource> {
        [
            json!({"vmid": 100, "name": "web", "node": "pve1", "type": "qemu", "status": "running", "template": 0, "id": "qemu/100"}),
            json!({"vmid": 9000, "name": "tmpl", "node": "pve1", "type": "qemu", "status": "stopped", "template": 1, "id": "qemu/9000"}),
            json!({"vmid": 101, "node": "pve2", "type": "qemu", "status": "stopped", "id": "qemu/101"}),
            json!({"vmid": 200, "name": "web", "node": "pve2", "type": "lxc", "status": "running", "id": "lxc/200"}),
        ]
        .iter()
        .filter_map(VmResource::from_json)
        .collect()
    }

    fn params() -> Params {
        Params { node: None, kind: None, vmid: None, name: None, config: ConfigMode::None, network: false }
    }

    fn ids(sel: Vec<&VmResource>) -> Vec<u64> {
        sel.iter().map(|v| v.vmid).collect()
    }

    #[test]
    fn selection_table() {
        let c = cluster();
        let cases: Vec<(Params, Vec<u64>)> = vec![
            (params(), vec![100, 101, 200, 9000]),
            (Params { kind: Some("qemu".into()), ..params() }, vec![100, 101, 9000]),
            (Params { node: Some("pve2".into()), ..params() }, vec![101, 200]),
            (Params { vmid: Some(9000), ..params() }, vec![9000]),
            (Params { vmid: Some(4242), ..params() }, vec![]),
            (Params { name: Some("web".into()), ..params() }, vec![100, 200]),
            (Params { name: Some("".into()), ..params() }, vec![101]),
        ];
        let mut sorted = c.clone();
        sorted.sort_by_key(|v| v.vmid);
        for (p, want) in cases {
            assert_eq!(ids(select(&sorted, &p)), want, "params {p:?}");
        }
    }

    #[test]
    fn merged_entry_types_vmid_and_template() {
        let c = cluster();
        let node_entry: Map<String, Value> =
            serde_json::from_value(json!({"vmid": "9000", "pid": 1234, "template": "1"})).unwrap();
        let e = merge_entry(&c[1], Some(&node_entry));
        assert_eq!(e["vmid"], json!(9000));
        assert_eq!(e["template"], json!(true));
        assert_eq!(e["pid"], json!(1234));
        assert_eq!(merge_entry(&c[0], None)["template"], json!(false));
    }

    module_utils::stub_test!(SPEC);
}
