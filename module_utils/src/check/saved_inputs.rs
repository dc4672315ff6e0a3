//! A saved plan's inputs beyond VM configs: the facts a task's writes depend on (a snapshot a clone copies, an import source's volume, a VM's power state and pool), recorded and compared.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::pve::client::Api;
use crate::pve::config::{self, VmConfig};

/// Config keys whose values a plan never holds (cloud-init's password, which PVE keeps hashed).
const SECRET_KEYS: &[&str] = &["cipassword"];
use crate::pve::request::ApiPath;
use crate::pve::resources::VmResource;

/// One fact a task's writes depend on: what it is (`kind`: `snapshot`, `volume`), which one
/// (`id`: `pve1/100/snap1`, `pve1/local:import/disk.qcow2`) and what it was (`facts`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Input {
    pub kind: String,
    pub id: String,
    pub facts: BTreeMap<String, String>,
}

impl Input {
    /// The snapshot `snapname` of `vm` a clone copies: its config (with `snaptime`, so a
    /// snapshot deleted and taken again under the same name differs).
    pub fn snapshot(vm: &VmResource, snapname: &str, config: &VmConfig) -> Input {
        Input { kind: "snapshot".into(), id: format!("{}/{}/{snapname}", vm.node, vm.vmid), facts: flat(config) }
    }

    /// A volume a task reads (an import source) as its storage lists it on `node`: whether it
    /// is there, and its size.
    pub fn volume(node: &str, volid: &str, size: Option<Option<u64>>) -> Input {
        let mut facts = BTreeMap::new();
        match size {
            None => facts.insert("exists".into(), "no".into()),
            Some(s) => facts.insert("size".into(), s.map_or_else(|| "unknown".into(), |s| s.to_string())),
        };
        Input { kind: "volume".into(), id: format!("{node}/{volid}"), facts }
    }

    /// The same fact as PVE holds it now (for the whole-run verification); `None` for a kind
    /// this build does not know.
    pub fn now(&self, api: &dyn Api, vms: &[VmResource]) -> Result<Option<Input>> {
        let parts: Vec<&str> = self.id.splitn(3, '/').collect();
        Ok(match (self.kind.as_str(), parts.as_slice()) {
            ("snapshot", [node, vmid, snapname]) => {
                let vm = vms.iter().find(|v| v.vmid.to_string() == *vmid && v.node == *node);
                match vm {
                    Some(vm) => match config::read_snapshot(api, vm, snapname) {
                        Ok(c) => Some(Input::snapshot(vm, snapname, &c)),
                        Err(_) => Some(Input { facts: BTreeMap::new(), ..self.clone() }),
                    },
                    None => Some(Input { facts: BTreeMap::new(), ..self.clone() }),
                }
            }
            ("volume", [node, rest @ ..]) => {
                let volid = rest.join("/");
                let storage = volid.split(':').next().unwrap_or_default().to_string();
                let path = ApiPath::new(["nodes", node, "storage", &storage, "content"]);
                let listed = api.get(&path, &Vec::new())?;
                let item = listed.as_array().and_then(|items| {
                    items.iter().find(|i| i.get("volid").and_then(Value::as_str) == Some(volid.as_str()))
                });
                Some(Input::volume(node, &volid, item.map(|i| i.get("size").and_then(Value::as_u64))))
            }
            _ => None,
        })
    }
}

/// What differs between the plan's fact of the same kind and id and `now`, in words; `None`
/// when the plan did not record it (a plan of an older build) or it is the same.
pub fn compare(planned: &[Input], now: &Input) -> Option<String> {
    let plan = planned.iter().find(|p| p.kind == now.kind && p.id == now.id)?;
    if plan.facts == now.facts {
        return None;
    }
    let what = match now.kind.as_str() {
        "snapshot" => format!("the snapshot {} the task copies", now.id),
        "volume" => format!("the volume {} the task reads", now.id),
        other => format!("{other} {}", now.id),
    };
    if now.facts.is_empty() {
        return Some(format!("{what} is gone since the plan"));
    }
    let mut keys: Vec<&String> = plan.facts.keys().chain(now.facts.keys()).collect();
    keys.sort_unstable();
    keys.dedup();
    let changes: Vec<String> = keys
        .into_iter()
        .filter(|k| plan.facts.get(*k) != now.facts.get(*k))
        .map(|k| {
            let (was, is) = (plan.facts.get(k), now.facts.get(k));
            format!("{k} {} → {}", shown(was, is), shown(is, was))
        })
        .collect();
    Some(format!("{what} changed since the plan: {}", changes.join("; ")))
}

/// A config as `key` → value, pending values as `pending:key`, pending deletes as `delete:key`,
/// secrets left out.
pub fn flat(config: &VmConfig) -> BTreeMap<String, String> {
    let keep = |k: &String| !SECRET_KEYS.contains(&k.as_str());
    let mut out: BTreeMap<String, String> =
        config.current.iter().filter(|(k, _)| keep(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    out.extend(config.pending.iter().filter(|(k, _)| keep(k)).map(|(k, v)| (format!("pending:{k}"), v.clone())));
    out.extend(config.pending_delete.iter().map(|(k, force)| (format!("delete:{k}"), force.to_string())));
    out
}

/// A value beside the one it is compared with: a property string shows only the properties that
/// differ (`size=10G` → `size=20G`), anything else whole; a missing value is `(none)`.
pub fn shown(value: Option<&String>, other: Option<&String>) -> String {
    let (Some(v), Some(o)) = (value, other) else {
        return value.cloned().unwrap_or_else(|| "(none)".into());
    };
    let parts: Vec<&str> = v.split(',').collect();
    let others: Vec<&str> = o.split(',').collect();
    if parts.len() < 2 && others.len() < 2 {
        return v.clone();
    }
    let differing: Vec<&str> = parts.iter().filter(|p| !others.contains(p)).copied().collect();
    if differing.is_empty() {
        v.clone()
    } else {
        differing.join(",")
    }
}
