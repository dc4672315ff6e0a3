//! A saved plan verified whole before a real run's first write: every host's and task's recorded reads and inputs against the cluster, one message listing what moved.
//!
//! The action plugin (`plugins/plugin_utils/plan_verify.py`) runs the first ferro task of a real
//! run that applies a plan once more, before it, with `_ferro_saved_plan` set to
//! `{"mode": "verify", "records": [...]}`: every record of the plan for this task's API host.
//! This invocation then only reads: the cluster's VMs once, each VM config a record read from
//! PVE (not one an earlier task only predicted, which the task itself compares), each input, and
//! whether a vmid the plan creates is still free. Any difference fails the invocation with the
//! list, per host and task, and the plugin refuses the run before any task writes.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::check::saved::{compare_read, flat, Read, Record, Request, SavedTask};
use crate::check::unknown::KNOWN_AFTER_APPLY;
use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::config::{self, VmConfig};
use crate::pve::pools::pool_of;
use crate::pve::resources::{self, VmResource};

/// The verification invocation, once connected (`connect::Session::start`): it ends there, with
/// the error this returns, so the module's body never runs. A drift is that failure; when the
/// plan holds, the answer is kept in `saved` and the protocol returns it (`SavedTask::held`).
pub fn run(api: &dyn Api, records: &[Value], saved: &SavedTask) -> Error {
    match verify(api, records) {
        Err(e) => e,
        Ok(moved) if moved.is_empty() => {
            saved.hold(format!("the saved plan holds: {} records verified", records.len()));
            Error::Internal("the saved plan was verified: the task itself does not run in this invocation".into())
        }
        Ok(moved) => Error::failed(format!(
            "the saved plan no longer holds, so this run writes nothing: {}. Make and approve a new plan",
            moved.join("; ")
        )),
    }
}

/// What moved since the plan, one line per host and task.
pub fn verify(api: &dyn Api, records: &[Value]) -> Result<Vec<String>> {
    let vms = resources::cluster_vms(api)?;
    let mut configs: BTreeMap<u64, Option<VmConfig>> = BTreeMap::new();
    let mut out = Vec::new();
    for value in records {
        let text = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let record: Record = serde_json::from_value(value.clone()).unwrap_or_default();
        let mut moved = Vec::new();
        for plan in record.reads.iter().filter(|r| !r.predicted) {
            let Some(vm) = vms.iter().find(|v| v.vmid == plan.vmid) else {
                moved.push(format!("VM {} is gone", plan.vmid));
                continue;
            };
            let config = match configs.get(&vm.vmid) {
                Some(c) => c.clone(),
                None => {
                    let c = config::read(api, vm).ok();
                    configs.insert(vm.vmid, c.clone());
                    c
                }
            };
            let Some(config) = config else {
                moved.push(format!("VM {}'s config cannot be read", plan.vmid));
                continue;
            };
            if let Err(e) = compare_read(&Record { reads: vec![plan.clone()], ..Record::default() }, &read(vm, &config))
            {
                moved.push(inner(&e.to_string()));
            }
        }
        for input in &record.inputs {
            if let Some(now) = input.now(api, &vms)? {
                moved.extend(crate::check::saved_inputs::compare(std::slice::from_ref(input), &now));
            }
        }
        moved.extend(record.writes.iter().filter_map(|w| taken_vmid(w, &vms)));
        if !moved.is_empty() {
            out.push(format!(
                "host {}, task {:?} at {}: {}",
                text("host"),
                text("task"),
                text("path"),
                moved.join(", ")
            ));
        }
    }
    Ok(out)
}

/// The VM as a task of the real run would read it (`SavedTask::read`).
fn read(vm: &VmResource, config: &VmConfig) -> Read {
    Read {
        vmid: vm.vmid,
        node: vm.node.clone(),
        name: vm.name.clone(),
        digest: config.digest.clone(),
        predicted: false,
        config: flat(config),
        status: Some(vm.status.clone()),
        pool: pool_of(vm).map(str::to_string),
    }
}

/// A create or clone of a given vmid that another VM holds now.
fn taken_vmid(write: &Request, vms: &[VmResource]) -> Option<String> {
    let creates = write.method == "POST" && (write.path.ends_with("/qemu") || write.path.ends_with("/clone"));
    let key = if write.path.ends_with("/clone") { "newid" } else { "vmid" };
    let (_, id) = write.params.iter().find(|(k, _)| creates && k == key)?;
    if id.contains(KNOWN_AFTER_APPLY) {
        // a VM made by name alone: one of that name now would be found, and not made
        let (_, name) = write.params.iter().find(|(k, _)| k == "name")?;
        let vm = vms.iter().find(|v| v.name.as_deref() == Some(name.as_str()))?;
        return Some(format!("a VM named {name}, which the plan creates, exists now (vmid {})", vm.vmid));
    }
    let vm = vms.iter().find(|v| v.vmid.to_string() == *id)?;
    Some(format!("VM {id}, which the plan creates, exists now ({})", vm.name.as_deref().unwrap_or("no name")))
}

/// A per-task drift message without the words around it (`saved::compare_read`).
fn inner(message: &str) -> String {
    let m = message.strip_prefix("the saved plan no longer holds: ").unwrap_or(message);
    m.strip_suffix(". Nothing was written; make and approve a new plan").unwrap_or(m).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drift_message_loses_its_frame() {
        assert_eq!(
            inner("the saved plan no longer holds: VM 1 moved. Nothing was written; make and approve a new plan"),
            "VM 1 moved"
        );
    }

    #[test]
    fn a_planned_vmid_taken_is_named_and_one_known_after_apply_never() {
        let vm = VmResource::from_json(&serde_json::json!({"vmid": 150, "name": "x", "node": "pve1", "type": "qemu"}))
            .unwrap();
        let create = |id: &str| Request {
            method: "POST".into(),
            path: "/nodes/pve1/qemu".into(),
            params: vec![("vmid".into(), id.into())],
        };
        assert!(taken_vmid(&create("150"), std::slice::from_ref(&vm)).unwrap().contains("exists now (x)"));
        assert_eq!(taken_vmid(&create(KNOWN_AFTER_APPLY), std::slice::from_ref(&vm)), None);
        let mut by_name = create(KNOWN_AFTER_APPLY);
        by_name.params.push(("name".into(), "x".into()));
        assert!(taken_vmid(&by_name, &[vm])
            .unwrap()
            .contains("a VM named x, which the plan creates, exists now (vmid 150)"));
    }
}
