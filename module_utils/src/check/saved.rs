//! A saved plan's task: in `--check` what it read and the writes it would make, recorded; in the real run the same compared before any write.
//!
//! The action plugin (`plugins/plugin_utils/native.py`) hands it in as `_ferro_saved_plan`:
//! `{"mode": "save"}` in a check run that saves a plan, `{"mode": "apply", "reads": [...],
//! "writes": [...]}` in the real run that applies one (the task's record from the plan, its
//! secrets given back in clear by the plugin where the task's own secrets hash to them). The
//! module reports what it read and planned as `_ferro_saved_plan_recorded` (`protocol.rs`),
//! each secret replaced by the keyed hash the plugin handed in with it (`tokens`).
//!
//! Modules need only two calls, at the seams they already have: `World::config` reports each
//! VM config it reads (`read`), and the place that knows every request of the task before the
//! first is sent (each module's guard) reports them (`writes`). In apply mode either fails the
//! task, before any write, with what moved since the plan (docs/saved-plans.md). A config write
//! then carries the digest of the read, which equals the plan's: PVE itself refuses a change
//! that lands in between, and the retry that follows a digest conflict plans again and meets a
//! different digest here, so the conflict is reported as drift instead of being retried.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::check::saved_inputs::{self as inputs, flat, shown, Input};
use crate::check::unknown::KNOWN_AFTER_APPLY;
use crate::error::{Error, Result};
use crate::pve::config::VmConfig;
use crate::pve::request::{ApiPath, Form, Method};
use crate::pve::resources::VmResource;

/// One VM config a task read: the VM's identity, the digest, the config as read (secrets left
/// out), and whether it came from an earlier task's prediction rather than from PVE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Read {
    pub vmid: u64,
    pub node: String,
    pub name: Option<String>,
    pub digest: Option<String>,
    pub predicted: bool,
    /// `key` for the applied value, `pending:key` for a pending one, `delete:key` for a pending delete.
    pub config: BTreeMap<String, String>,
    /// The power state `/cluster/resources` listed (a config write's effect, applied now or
    /// pending, depends on it) and the pool the VM is in; absent in a plan of an older build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
}

/// One request the task would send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub params: Vec<(String, String)>,
}

/// A VM a task reports on without reading its config (proxmox_vm_info): who it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub vmid: u64,
    pub node: String,
    pub name: Option<String>,
}

/// What a task read and would write.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub reads: Vec<Read>,
    pub writes: Vec<Request>,
    /// The VMs a read-only task selected.
    #[serde(default)]
    pub vms: Vec<Identity>,
    /// The other facts its writes depend on: a snapshot a clone copies, an import source.
    #[serde(default)]
    pub inputs: Vec<Input>,
    /// The vmid a create or clone without one was planned with: PVE chooses it at apply, so the
    /// plan holds it as known after apply (`bound_at_apply`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_vmid: Option<u64>,
}

#[derive(Debug)]
struct Ledger {
    /// `Some` when applying: the plan's record for this task.
    planned: Option<Record>,
    /// When saving: each secret of the task with the keyed hash that stands for it in the plan,
    /// longest secret first (the plugin computes them: the key never reaches the module).
    tokens: Vec<(String, String)>,
    record: Record,
    /// How many times the task's writes were reported: a second time is a re-plan after PVE
    /// refused the first write's digest.
    rounds: u32,
    /// Writes the task makes after those it reports next (a pool move after a config write).
    then: Vec<Request>,
    /// The records of the whole run, when the plugin asks this invocation to verify them all
    /// before the run's first write (`check::plan_verify`).
    verify: Option<Vec<Value>>,
    /// The answer of that verification when the plan holds.
    held: Option<String>,
}

/// The saved plan's view of this task, shared by the module's world and guard.
#[derive(Debug, Clone)]
pub struct SavedTask(Rc<RefCell<Ledger>>);

impl SavedTask {
    /// From the plugin's `_ferro_saved_plan`; `None` for anything but a save or an apply.
    pub fn from_json(value: &Value) -> Option<SavedTask> {
        let mut verify = None;
        let planned = match value.get("mode").and_then(Value::as_str)? {
            "save" => None,
            "apply" => Some(serde_json::from_value::<Record>(value.clone()).unwrap_or_default()),
            "verify" => {
                verify = Some(value.get("records").and_then(Value::as_array).cloned().unwrap_or_default());
                Some(Record::default())
            }
            _ => return None,
        };
        let mut tokens: Vec<(String, String)> = value
            .get("tokens")
            .and_then(|t| serde_json::from_value::<Vec<(String, String)>>(t.clone()).ok())
            .unwrap_or_default();
        tokens.retain(|(secret, _)| !secret.is_empty());
        tokens.sort_by_key(|(secret, _)| std::cmp::Reverse(secret.len()));
        let record = Record::default();
        Some(SavedTask(Rc::new(RefCell::new(Ledger {
            planned,
            tokens,
            record,
            rounds: 0,
            then: Vec::new(),
            verify,
            held: None,
        }))))
    }

    /// The run's records to verify before its first write, when this invocation only verifies.
    pub fn verifying(&self) -> Option<Vec<Value>> {
        self.0.borrow().verify.clone()
    }

    /// Keep the answer of a whole-run verification that found the plan holding.
    pub fn hold(&self, answer: String) {
        self.0.borrow_mut().held = Some(answer);
    }

    /// The answer of a whole-run verification that found the plan holding, if this invocation made one.
    pub fn held(&self) -> Option<String> {
        self.0.borrow().held.clone()
    }

    /// Whether the real run applies a plan (else a check run saves one).
    pub fn applying(&self) -> bool {
        self.0.borrow().planned.is_some()
    }

    /// What this task read and would write, for the plan.
    pub fn recorded(&self) -> Record {
        self.0.borrow().record.clone()
    }

    /// What this task read and would write, as the plan stores it: every secret replaced by its
    /// keyed hash, wherever it stands in a value.
    pub fn recorded_json(&self) -> Value {
        let ledger = self.0.borrow();
        hash_secrets(serde_json::to_value(&ledger.record).unwrap_or(Value::Null), &ledger.tokens)
    }

    /// A VM config the task read (`predicted`: an earlier check-mode task's prediction). When
    /// applying, it must be the plan's: same VM, same node and name, same digest (or, for a
    /// config the plan only predicted, the same values wherever the plan knew them).
    pub fn read(&self, vm: &VmResource, config: &VmConfig, predicted: bool) -> Result<()> {
        let read = Read {
            vmid: vm.vmid,
            node: vm.node.clone(),
            name: vm.name.clone(),
            digest: config.digest.clone(),
            predicted,
            config: flat(config),
            status: Some(vm.status.clone()).filter(|_| !predicted),
            pool: crate::pve::pools::pool_of(vm).map(str::to_string).filter(|_| !predicted),
        };
        let mut ledger = self.0.borrow_mut();
        if let Some(planned) = &ledger.planned {
            compare_read(planned, &read)?;
        }
        ledger.record.reads.retain(|r| r.vmid != read.vmid);
        ledger.record.reads.push(read);
        Ok(())
    }

    /// The VMs a read-only task selected (vmid, node, name). When applying, they must be the
    /// plan's: a VM that appeared, went or moved is named.
    pub fn identities(&self, vms: &[&VmResource]) -> Result<()> {
        let now: Vec<Identity> =
            vms.iter().map(|vm| Identity { vmid: vm.vmid, node: vm.node.clone(), name: vm.name.clone() }).collect();
        let mut ledger = self.0.borrow_mut();
        if let Some(planned) = &ledger.planned {
            let show =
                |i: &Identity| format!("VM {} ({}) on {}", i.vmid, i.name.as_deref().unwrap_or("no name"), i.node);
            let gone = planned.vms.iter().filter(|p| !now.contains(p)).map(|p| format!("planned {}", show(p)));
            let new = now.iter().filter(|n| !planned.vms.contains(n)).map(|n| format!("now {}", show(n)));
            let moved: Vec<String> = gone.chain(new).collect();
            if !moved.is_empty() {
                return Err(Error::failed(format!(
                    "the saved plan no longer holds: the VMs this task reads changed since the plan: {}",
                    moved.join("; ")
                )));
            }
        }
        ledger.record.vms = now;
        Ok(())
    }

    /// Every request the task is about to send, in order, before the first is sent. When
    /// applying they must be the plan's.
    pub fn writes<'p>(&self, requests: impl IntoIterator<Item = (Method, &'p ApiPath, &'p Form)>) -> Result<()> {
        let requests: Vec<Request> = requests
            .into_iter()
            .map(|(method, path, form)| Request {
                method: method.as_str().to_string(),
                path: path.to_string(),
                params: form.clone(),
            })
            .collect();
        let mut ledger = self.0.borrow_mut();
        let mut requests = requests;
        requests.extend(ledger.then.iter().cloned());
        if let Some(id) = ledger.record.bound_vmid {
            requests = requests.into_iter().map(|r| bound(r, id)).collect();
        }
        ledger.rounds += 1;
        if let Some(planned) = &ledger.planned {
            let predicted: Vec<u64> = planned.reads.iter().filter(|r| r.predicted).map(|r| r.vmid).collect();
            if let Some(moved) = compare_writes(&planned.writes, &requests, &predicted) {
                return Err(if ledger.rounds > 1 {
                    Error::failed(format!(
                        "the saved plan no longer holds: Proxmox VE refused the planned write because the VM's \
                         config changed after this run checked it (its digest no longer matched), and planned \
                         again it would be different: {moved}. Nothing was written; make and approve a new plan"
                    ))
                } else {
                    Error::failed(format!(
                        "the saved plan no longer holds: this task would now make other writes than planned: \
                         {moved}. Nothing was written; make and approve a new plan"
                    ))
                });
            }
        }
        ledger.record.writes = requests;
        Ok(())
    }
}

impl SavedTask {
    /// Writes the task makes after those it reports next (`writes`), compared and recorded with
    /// them: a pool move after the config write it follows.
    pub fn then_writes(&self, requests: Vec<Request>) {
        self.0.borrow_mut().then = requests;
    }

    /// A create or clone without a vmid planned with `vmid`, which PVE chooses when it runs: the
    /// plan holds its vmid as known after apply, and the real run binds whichever it gets.
    pub fn bound_at_apply(&self, vmid: u64) {
        let mut ledger = self.0.borrow_mut();
        if ledger.planned.is_none() {
            ledger.record.bound_vmid = Some(vmid);
        }
    }

    /// Another fact the task's writes depend on (`Input`). When applying it must be the plan's.
    pub fn input(&self, input: Input) -> Result<()> {
        let mut ledger = self.0.borrow_mut();
        if let Some(planned) = &ledger.planned {
            if let Some(moved) = inputs::compare(&planned.inputs, &input) {
                return Err(Error::failed(format!(
                    "the saved plan no longer holds: {moved}. Nothing was written; make and approve a new plan"
                )));
            }
        }
        ledger.record.inputs.retain(|i| (&i.kind, &i.id) != (&input.kind, &input.id));
        ledger.record.inputs.push(input);
        Ok(())
    }

    /// When applying: the planned writes this task did not make, because it found nothing left
    /// to do (a VM already gone, a reboot of a VM now stopped), in words; `None` when it made
    /// them or the plan had none.
    pub fn unmade(&self) -> Option<String> {
        let ledger = self.0.borrow();
        let planned = ledger.planned.as_ref()?;
        if ledger.verify.is_some() || ledger.rounds > 0 || planned.writes.is_empty() {
            return None;
        }
        let lines: Vec<String> = planned.writes.iter().map(|r| format!("{} {}", r.method, r.path)).collect();
        Some(lines.join(", "))
    }
}

/// A planned write's vmid (a create's `vmid`, a clone's `newid`, a path under the new VM) as
/// known after apply.
fn bound(mut request: Request, vmid: u64) -> Request {
    let id = vmid.to_string();
    for (key, value) in request.params.iter_mut() {
        if matches!(key.as_str(), "vmid" | "newid") && *value == id {
            *value = KNOWN_AFTER_APPLY.to_string();
        }
    }
    request
}

fn hash_secrets(value: Value, tokens: &[(String, String)]) -> Value {
    match value {
        // Only a whole value is a secret: `web` inside `existing-web` is a name, not the password
        // `web`, and hashing it there would show where the secret occurs (issue 33).
        Value::String(text) => match tokens.iter().find(|(secret, _)| *secret == text) {
            Some((_, token)) => Value::String(token.clone()),
            None => Value::String(text),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(|v| hash_secrets(v, tokens)).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, hash_secrets(v, tokens))).collect()),
        other => other,
    }
}

pub(crate) fn compare_read(planned: &Record, read: &Read) -> Result<()> {
    let vmid = read.vmid;
    let drift = |what: String| {
        Err(Error::failed(format!(
            "the saved plan no longer holds: {what}. Nothing was written; make and approve a new plan"
        )))
    };
    let Some(plan) = planned.reads.iter().find(|r| r.vmid == vmid) else {
        return drift(format!("this task now reads VM {vmid}, which it did not read when the plan was made"));
    };
    if plan.node != read.node || plan.name != read.name {
        return drift(format!(
            "VM {vmid} is not the VM of the plan: planned {} on node {}, now {} on node {}",
            plan.name.as_deref().unwrap_or("(no name)"),
            plan.node,
            read.name.as_deref().unwrap_or("(no name)"),
            read.node
        ));
    }
    if let Some(moved) = power_or_pool(plan, read) {
        return drift(moved);
    }
    let known = |k: &str| plan.config.get(k).is_none_or(|v| !v.contains(KNOWN_AFTER_APPLY));
    let same = if plan.predicted {
        let keys = plan.config.keys().chain(read.config.keys()).filter(|k| known(k));
        keys.clone().all(|k| plan.config.get(k) == read.config.get(k))
    } else {
        plan.digest == read.digest
    };
    if same {
        return Ok(());
    }
    let mut changes = Vec::new();
    let mut keys: Vec<&String> = plan.config.keys().chain(read.config.keys()).collect();
    keys.sort_unstable();
    keys.dedup();
    for k in keys.into_iter().filter(|k| known(k)) {
        let (was, now) = (plan.config.get(k), read.config.get(k));
        if was != now {
            changes.push(format!("{k} {} → {}", shown(was, now), shown(now, was)));
        }
    }
    if changes.is_empty() {
        changes.push(format!(
            "digest {} → {}",
            plan.digest.as_deref().unwrap_or("(none)"),
            read.digest.as_deref().unwrap_or("(none)")
        ));
    }
    drift(format!("VM {vmid}'s config changed since the plan: {}", changes.join("; ")))
}

/// What differs between the planned requests and these, or `None`. A config write's digest is
/// compared except for a VM the plan only predicted (the real digest is known only after the
/// earlier task's write); a planned value known only after apply matches any.
fn compare_writes(planned: &[Request], now: &[Request], predicted: &[u64]) -> Option<String> {
    let line = |r: &Request| format!("{} {}", r.method, r.path);
    let mut moved = Vec::new();
    for i in 0..planned.len().max(now.len()) {
        match (planned.get(i), now.get(i)) {
            (Some(p), Some(n)) if line(p) == line(n) => {
                let lenient = predicted.iter().any(|id| p.path.contains(&format!("/qemu/{id}/")));
                let keys: Vec<&String> = p.params.iter().chain(&n.params).map(|(k, _)| k).collect();
                let mut seen = Vec::new();
                for k in keys {
                    if seen.contains(&k) || (lenient && k == "digest") {
                        continue;
                    }
                    seen.push(k);
                    let get = |r: &Request| r.params.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
                    let (was, is) = (get(p), get(n));
                    if was.as_deref().is_some_and(|w| w.contains(KNOWN_AFTER_APPLY)) || was == is {
                        continue;
                    }
                    moved.push(format!(
                        "{}: {k} {} → {}",
                        line(p),
                        shown(was.as_ref(), is.as_ref()),
                        shown(is.as_ref(), was.as_ref())
                    ));
                }
            }
            (Some(p), Some(n)) => moved.push(format!("planned {}, now {}", line(p), line(n))),
            (Some(p), None) => moved.push(format!("planned {}, now no such write", line(p))),
            (None, Some(n)) => moved.push(format!("{} was not planned", line(n))),
            (None, None) => {}
        }
    }
    (!moved.is_empty()).then(|| moved.join("; "))
}

/// A VM's power state or pool that moved since the plan (a config write planned on a stopped
/// VM would go pending on a running one; a pool move depends on the pool it leaves).
fn power_or_pool(plan: &Read, now: &Read) -> Option<String> {
    let none = || "(none)".to_string();
    if plan.status.is_some() && now.status.is_some() && plan.status != now.status {
        return Some(format!(
            "VM {} was {} when the plan was made and is {} now: its planned writes would not have the planned effect",
            now.vmid,
            plan.status.clone().unwrap_or_else(none),
            now.status.clone().unwrap_or_else(none)
        ));
    }
    if !plan.predicted && !now.predicted && plan.pool != now.pool {
        return Some(format!(
            "VM {}'s pool changed since the plan: {} → {}",
            now.vmid,
            plan.pool.clone().unwrap_or_else(none),
            now.pool.clone().unwrap_or_else(none)
        ));
    }
    None
}

#[cfg(test)]
mod tests;
