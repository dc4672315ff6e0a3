//! VMs in flight: a VM whose create or clone task still runs, found by its lock, its task found on its node and waited for; a lock no running task holds, stale.
//!
//! While `create_vm` or `clone_vm` runs, the new VM's config holds only `lock: create` /
//! `lock: clone` (qemu-server API2/Qemu.pm `create_and_lock_config`, `clone_vm`), so it is not "an
//! existing VM that differs": it is half made, and its name is not known until the task ends
//! (/cluster/resources shows `VM <vmid>`, what `vmstatus` gives a config without a name).
//! docs/pve-semantics.md §30. When the task died (a killed worker, a node reboot) the lock stays
//! and no task holds it; a user who sees every task of the node can tell, and fails at once
//! rather than wait out the timeout (§38).

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::permissions::Privileges;
use crate::pve::request::{form, ApiPath};
use crate::pve::resources::VmResource;
use crate::pve::tasks::Waiter;

/// The config locks of a VM that a running create or clone task holds.
pub const IN_FLIGHT_LOCKS: [&str; 2] = ["create", "clone"];

/// How long apart the two looks are that find a lock without a task before it is called stale.
const STALE_CONFIRM: Duration = Duration::from_secs(1);

/// Whether `vm` is being created or cloned (its config holds `lock: create` or `lock: clone`).
pub fn is_in_flight(vm: &VmResource) -> bool {
    vm.lock.as_deref().is_some_and(|l| IN_FLIGHT_LOCKS.contains(&l))
}

/// Whether `vm` may turn out to be named `name` once its task ends: its name is not known yet
/// (none, or the `VM <vmid>` PVE shows for a config without one) or it is already `name`.
pub fn may_be_named(vm: &VmResource, name: &str) -> bool {
    match vm.name.as_deref() {
        None => true,
        Some(n) => n == name || n == format!("VM {}", vm.vmid),
    }
}

/// The running task that makes `vm`, from its node's active tasks (`GET /nodes/{node}/tasks
/// ?source=active`, pve-manager Tasks.pm `node_tasks`): for `lock: create` a `qmcreate` (or a
/// `qmrestore`, or the `qmtunnel` of an incoming remote migration, Qemu.pm `mtunnel`, which hold
/// the same lock) with the vmid as its id; a `qmclone`'s id is its
/// source, so the clone's log names the target (`creating a clone of VM <src> with ID <newid>`,
/// Qemu.pm `clone_vm`). `None` when no such task is visible: another user's tasks need
/// Sys.Audit on the node, and a lock left by a task that died has none.
pub fn making_task(api: &dyn Api, vm: &VmResource) -> Result<Option<String>> {
    let vmid = vm.vmid.to_string();
    let (query, kinds): (_, &[&str]) = match vm.lock.as_deref() {
        Some("create") => {
            (form([("source", "active"), ("vmid", vmid.as_str())]), &["qmcreate", "qmrestore", "qmtunnel"])
        }
        Some("clone") => (form([("source", "active"), ("typefilter", "qmclone")]), &["qmclone"]),
        _ => return Ok(None),
    };
    let path = ApiPath::new(["nodes", &vm.node, "tasks"]);
    let tasks =
        api.get(&path, &query).map_err(|e| e.context(&format!("reading the running tasks of node {}", vm.node)))?;
    let running = tasks.as_array().cloned().unwrap_or_default().into_iter().filter_map(|t| {
        let upid = t.get("upid").and_then(Value::as_str)?.to_string();
        let kind = t.get("type").and_then(Value::as_str).or_else(|| upid.split(':').nth(5))?;
        // an ended task not yet archived is still listed, with its end time and exit status
        let ended = t.get("endtime").is_some_and(|e| !e.is_null())
            || t.get("status").and_then(Value::as_str).is_some_and(|s| s != "RUNNING");
        (kinds.contains(&kind) && !ended).then_some(upid)
    });
    let wanted = format!(" with ID {vmid}");
    for upid in running {
        if vm.lock.as_deref() == Some("create") {
            return Ok(Some(upid));
        }
        let log = api.get(&path.join([upid.as_str(), "log"]), &form([("start", "0"), ("limit", "20")]))?;
        let names_it = log.as_array().is_some_and(|lines| {
            lines.iter().filter_map(|l| l.get("t").and_then(Value::as_str)).any(|t| t.ends_with(&wanted))
        });
        if names_it {
            return Ok(Some(upid));
        }
    }
    Ok(None)
}

/// A wait for the VMs in flight that a task addresses: bounded by the task's `timeout`, and
/// knowing what the user may see of a node's tasks, which tells a stale lock from another user's
/// running task (docs/pve-semantics.md §30, §38).
pub struct InFlight<'a> {
    api: &'a dyn Api,
    /// The privileges of the user the run authenticates as; `None`: not known, so a lock without
    /// a visible task may be another user's.
    privileges: Option<&'a Privileges<'a>>,
    timeout: Duration,
    /// Whether a lock without a visible task is waited for (until it goes, at most `timeout`)
    /// rather than an error at once.
    poll: bool,
}

impl<'a> InFlight<'a> {
    /// Waiting at most `timeout`, for a lock without a visible task too.
    pub fn new(api: &'a dyn Api, timeout: Duration) -> InFlight<'a> {
        InFlight { api, privileges: None, timeout, poll: true }
    }

    /// The same wait, for the user whose privileges these are.
    pub fn seen_by(self, privileges: Option<&'a Privileges<'a>>) -> InFlight<'a> {
        InFlight { privileges, ..self }
    }

    /// The same wait, failing at once on a lock without a visible task instead of waiting for it
    /// to go.
    pub fn without_polling(self) -> InFlight<'a> {
        InFlight { poll: false, ..self }
    }

    /// Read the VMs with `read` until none that `addressed` selects is in flight, waiting for
    /// each within the timeout overall, and return that read. A lock that no running task
    /// holds, seen by a user who sees every task of its node, fails at once (stale).
    pub fn settle(
        &self,
        addressed: &dyn Fn(&VmResource) -> bool,
        read: &dyn Fn() -> Result<Vec<VmResource>>,
    ) -> Result<Vec<VmResource>> {
        let deadline = Instant::now() + self.timeout;
        // tasks seen to end: still listed as running until pvestatd archives them (§38)
        let mut ended = Vec::new();
        loop {
            let vms = read()?;
            let Some(busy) = vms.iter().find(|v| is_in_flight(v) && addressed(v)).cloned() else {
                return Ok(vms);
            };
            self.wait_until(&busy, deadline, &mut ended, read)?;
        }
    }

    /// Wait until `deadline` for the create or clone that makes `vm` to end: its task when one
    /// runs and is visible (whatever its outcome: the caller reads what it left), else, unless
    /// the lock is stale, until `reread` no longer shows `vm` in flight. Fails naming the task
    /// or the lock.
    fn wait_until(
        &self,
        vm: &VmResource,
        deadline: Instant,
        ended: &mut Vec<String>,
        reread: &dyn Fn() -> Result<Vec<VmResource>>,
    ) -> Result<()> {
        let lock = vm.lock.clone().unwrap_or_default();
        let what = if lock == "clone" { "cloned" } else { "created" };
        let secs = self.timeout.as_secs();
        let wait_for_task = |upid: String, ended: &mut Vec<String>| -> Result<()> {
            match Waiter::new(deadline.saturating_duration_since(Instant::now())).wait(self.api, &upid) {
                Ok(_) | Err(Error::TaskFailed { .. }) => {
                    ended.push(upid);
                    Ok(())
                }
                Err(Error::TaskTimeout { .. }) => Err(Error::failed(format!(
                    "VM {} is being {what} by task {upid} (lock: {lock}), which had not ended after {secs}s (timeout)",
                    vm.vmid
                ))),
                Err(e) => Err(e),
            }
        };
        if let Some(upid) = making_task(self.api, vm)?.filter(|u| !ended.contains(u)) {
            return wait_for_task(upid, ended);
        }
        if self.sees_every_task(vm)? {
            // Stale only when two looks a moment apart agree (§38): a create that ended between
            // the VM read and the task read is listed no more, and create_vm writes its locked
            // placeholder before fork_worker starts the task.
            std::thread::sleep(STALE_CONFIRM.min(deadline.saturating_duration_since(Instant::now())));
            let still = reread()?.into_iter().any(|v| v.vmid == vm.vmid && v.lock == vm.lock);
            if !still {
                return Ok(());
            }
            return match making_task(self.api, vm)?.filter(|u| !ended.contains(u)) {
                Some(upid) => wait_for_task(upid, ended),
                None => Err(Error::failed(stale_lock(vm, &lock))),
            };
        }
        let unseen = format!(
            "VM {} is locked ({lock}) and no running task of it is visible to this user: either another user's create or clone of it runs (another user's tasks need Sys.Audit on /nodes/{node} to be seen) or the lock is stale, left by a task that died ({unlock})",
            vm.vmid,
            node = vm.node,
            unlock = unlock_advice(vm)
        );
        if !self.poll {
            return Err(Error::failed(unseen));
        }
        let mut pause = Duration::from_millis(100);
        loop {
            let still = reread()?.into_iter().any(|v| v.vmid == vm.vmid && is_in_flight(&v));
            if !still {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::failed(format!("{unseen}; it was still locked after {secs}s (timeout)")));
            }
            std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }

    /// Whether this user sees every task that may hold `vm`'s lock: Tasks.pm `node_tasks` lists
    /// another user's tasks only to one holding Sys.Audit on `/nodes/<node>` (its `$auditor`),
    /// which `/access/permissions` reports as PVE's `check` finds it. Only for a QEMU VM, whose
    /// tasks `making_task` knows; a container's (`vzcreate`, `vzrestore`, `vzclone`) are waited
    /// for within the timeout, never called stale.
    fn sees_every_task(&self, vm: &VmResource) -> Result<bool> {
        match self.privileges {
            Some(p) if vm.kind == "qemu" => Ok(p.held(&format!("/nodes/{}", vm.node))?.contains("Sys.Audit")),
            _ => Ok(false),
        }
    }
}

/// What clears a stale lock, as PVE has it: `qm unlock` removes the lock without checking
/// whether a task still uses it (qemu-server CLI/qm.pm `unlock`), so the check comes first.
fn unlock_advice(vm: &VmResource) -> String {
    format!(
        "once no create, clone, restore, incoming migration or 'qm importovf' of VM {vmid} runs (an import holds the lock without a task), 'qm unlock {vmid}' on node {node} removes it",
        vmid = vm.vmid,
        node = vm.node
    )
}

/// The failure for a lock no running task holds, seen by a user who sees every task of the node.
fn stale_lock(vm: &VmResource, lock: &str) -> String {
    let kinds = if lock == "clone" { "qmclone" } else { "qmcreate, qmrestore or qmtunnel" };
    format!(
        "VM {vmid} is locked ({lock}) but no task holds the lock: no {kinds} task making VM {vmid} runs on node {node} (looked twice, a second apart), and this user sees every task there (Sys.Audit on /nodes/{node}). The lock is stale: the task that took it ended without removing it (a killed worker or a node reboot leaves it, and PVE never clears it itself); {unlock}",
        vmid = vm.vmid,
        node = vm.node,
        unlock = unlock_advice(vm)
    )
}

/// The VM that holds `name` when several do: the lowest vmid among the QEMU VMs of that name
/// (docs/pve-semantics.md §30: PVE has no unique names, so overlapping runs agree on this).
pub fn name_holder<'v>(vms: &'v [VmResource], name: &str) -> Option<&'v VmResource> {
    vms.iter().filter(|v| v.kind == "qemu" && v.name.as_deref() == Some(name)).min_by_key(|v| v.vmid)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::pve::client::testing::ScriptedApi;
    use crate::pve::request::Method;
    use serde_json::json;

    const UPID: &str = "UPID:pve1:00001234:00005678:65000000:qmclone:9000:root@pam:";

    fn vm(v: Value) -> VmResource {
        VmResource::from_json(&v).unwrap()
    }

    #[test]
    fn only_create_and_clone_locks_are_in_flight_and_a_placeholder_may_bear_any_name() {
        let creating = vm(json!({"vmid": 101, "name": "VM 101", "node": "pve1", "type": "qemu", "lock": "create"}));
        let backup = vm(json!({"vmid": 102, "name": "db", "node": "pve1", "type": "qemu", "lock": "backup"}));
        assert!(is_in_flight(&creating) && !is_in_flight(&backup));
        assert!(may_be_named(&creating, "db-01") && may_be_named(&backup, "db") && !may_be_named(&backup, "web"));
    }

    #[test]
    fn a_clone_task_is_found_by_its_log_naming_the_target() {
        let api = ScriptedApi::default();
        let other = "UPID:pve1:00001111:00002222:65000000:qmclone:9000:root@pam:";
        api.answer(
            Method::Get,
            "/nodes/pve1/tasks",
            Ok(json!([{"upid": other, "status": "RUNNING"}, {"upid": UPID, "status": "RUNNING"}])),
        );
        api.answer(
            Method::Get,
            &ApiPath::new(["nodes", "pve1", "tasks", other, "log"]).encoded(),
            Ok(json!([{"n": 1, "t": "creating a clone of VM 9000 with ID 1300"}])),
        );
        api.answer(
            Method::Get,
            &ApiPath::new(["nodes", "pve1", "tasks", UPID, "log"]).encoded(),
            Ok(json!([{"n": 1, "t": "creating a clone of VM 9000 with ID 300"}])),
        );
        let target = vm(json!({"vmid": 300, "name": "VM 300", "node": "pve1", "type": "qemu", "lock": "clone"}));
        assert_eq!(making_task(&api, &target).unwrap().as_deref(), Some(UPID));
        assert_eq!(api.calls.borrow()[0].2, form([("source", "active"), ("typefilter", "qmclone")]));
    }

    fn locked(lock: &str) -> VmResource {
        vm(json!({"vmid": 101, "name": "VM 101", "node": "pve1", "type": "qemu", "lock": lock}))
    }

    fn privileges_on_node(api: &ScriptedApi, privs: Value) {
        api.answer(Method::Get, "/access/permissions", Ok(json!({ "/nodes/pve1": privs })));
    }

    const STALE: &str = "VM 101 is locked (create) but no task holds the lock: no qmcreate, qmrestore or qmtunnel task making VM 101 runs on node pve1 (looked twice, a second apart), and this user sees every task there (Sys.Audit on /nodes/pve1). The lock is stale: the task that took it ended without removing it (a killed worker or a node reboot leaves it, and PVE never clears it itself); once no create, clone, restore, incoming migration or 'qm importovf' of VM 101 runs (an import holds the lock without a task), 'qm unlock 101' on node pve1 removes it";

    #[test]
    fn a_lock_no_running_task_holds_at_two_looks_a_second_apart_is_stale_for_a_user_who_sees_every_task() {
        let api = ScriptedApi::default();
        // the task that took the lock died: listed no more among the running ones, at either look
        api.answer(Method::Get, "/nodes/pve1/tasks", Ok(json!([])));
        api.answer(Method::Get, "/nodes/pve1/tasks", Ok(json!([])));
        privileges_on_node(&api, json!({"Sys.Audit": 1, "VM.Audit": 1}));
        let privileges = Privileges::new(&api, "ansible@pve!automation");
        let wait = InFlight::new(&api, Duration::from_secs(300)).seen_by(Some(&privileges));
        // the second look reads the VMs once more; a wait would read them again
        let reads = std::cell::Cell::new(0);
        let read = || {
            reads.set(reads.get() + 1);
            match reads.get() {
                1 | 2 => Ok(vec![locked("create")]),
                _ => Err(Error::failed("the VMs were read again: a wait")),
            }
        };
        let e = wait.settle(&|v| v.vmid == 101, &read).unwrap_err().to_string();
        assert_eq!(e, STALE);
        assert_eq!(reads.get(), 2);
        assert_eq!(api.calls.borrow()[1].1, "/access/permissions");
        assert!(api.calls.borrow()[1].2.is_empty(), "one read for every path");
    }

    #[test]
    fn a_create_that_ends_between_the_vm_read_and_the_task_read_is_not_stale() {
        let api = ScriptedApi::default();
        // the create ended just before the task list was read: no longer listed as running
        api.answer(Method::Get, "/nodes/pve1/tasks", Ok(json!([])));
        privileges_on_node(&api, json!({"Sys.Audit": 1}));
        let privileges = Privileges::new(&api, "root@pam");
        let wait = InFlight::new(&api, Duration::from_secs(300)).seen_by(Some(&privileges));
        let made = json!({"vmid": 101, "node": "pve1", "type": "qemu", "name": "web", "status": "stopped"});
        let reads = std::cell::Cell::new(0);
        let read = || {
            reads.set(reads.get() + 1);
            Ok(if reads.get() == 1 { vec![locked("create")] } else { vec![VmResource::from_json(&made).unwrap()] })
        };
        let vms = wait.settle(&|v| v.vmid == 101, &read).unwrap();
        assert_eq!(vms.iter().map(|v| (v.vmid, v.lock.clone())).collect::<Vec<_>>(), [(101, None)]);
    }

    #[test]
    fn a_containers_lock_without_a_visible_task_is_waited_for_never_called_stale() {
        let api = ScriptedApi::default();
        api.answer(Method::Get, "/nodes/pve1/tasks", Ok(json!([])));
        privileges_on_node(&api, json!({"Sys.Audit": 1}));
        let privileges = Privileges::new(&api, "root@pam");
        let wait = InFlight::new(&api, Duration::ZERO).seen_by(Some(&privileges));
        let ct = json!({"vmid": 101, "node": "pve1", "type": "lxc", "lock": "create"});
        let e = wait.settle(&|v| v.vmid == 101, &|| Ok(vec![VmResource::from_json(&ct).unwrap()])).unwrap_err();
        assert!(e.to_string().ends_with("it was still locked after 0s (timeout)"), "{e}");
    }

    #[test]
    fn without_sys_audit_a_lock_is_waited_for_and_its_timeout_names_a_stale_lock_as_a_cause() {
        for privileges_known in [true, false] {
            let api = ScriptedApi::default();
            api.answer(Method::Get, "/nodes/pve1/tasks", Ok(json!([])));
            privileges_on_node(&api, json!({"VM.Audit": 1}));
            let privileges = Privileges::new(&api, "alice@pve");
            let known = privileges_known.then_some(&privileges);
            let wait = InFlight::new(&api, Duration::ZERO).seen_by(known);
            let e = wait.settle(&|v| v.vmid == 101, &|| Ok(vec![locked("clone")])).unwrap_err().to_string();
            assert_eq!(
                e,
                "VM 101 is locked (clone) and no running task of it is visible to this user: either another user's create or clone of it runs (another user's tasks need Sys.Audit on /nodes/pve1 to be seen) or the lock is stale, left by a task that died (once no create, clone, restore, incoming migration or 'qm importovf' of VM 101 runs (an import holds the lock without a task), 'qm unlock 101' on node pve1 removes it); it was still locked after 0s (timeout)"
            );
        }
    }

    #[test]
    fn a_lock_that_goes_while_waited_for_without_a_visible_task_ends_the_wait() {
        let api = ScriptedApi::default();
        api.answer(Method::Get, "/nodes/pve1/tasks", Ok(json!([])));
        let reads = std::cell::Cell::new(0);
        let read = || {
            reads.set(reads.get() + 1);
            Ok(if reads.get() < 3 { vec![locked("create")] } else { vec![] })
        };
        let wait = InFlight::new(&api, Duration::from_secs(30));
        assert!(wait.settle(&|v| v.vmid == 101, &read).unwrap().is_empty());
        assert!(!api.calls.borrow().iter().any(|c| c.1 == "/access/permissions"));
    }

    #[test]
    fn a_task_that_ended_and_left_its_lock_is_not_waited_for_again() {
        let create = "UPID:pve1:00001234:00005678:65000000:qmcreate:101:root@pam:";
        let api = ScriptedApi::default();
        let status = ApiPath::new(["nodes", "pve1", "tasks", create, "status"]).encoded();
        // the task list still shows the task running (pvestatd archives a dead worker later),
        // its status says it ended
        api.answer(Method::Get, &status, Ok(json!({"status": "stopped", "exitstatus": "unexpected status"})));
        api.answer(Method::Get, &ApiPath::new(["nodes", "pve1", "tasks", create, "log"]).encoded(), Ok(json!([])));
        for _look in 0..3 {
            api.answer(Method::Get, "/nodes/pve1/tasks", Ok(json!([{"upid": create, "status": "RUNNING"}])));
        }
        privileges_on_node(&api, json!({"Sys.Audit": 1}));
        let privileges = Privileges::new(&api, "root@pam");
        let wait = InFlight::new(&api, Duration::from_secs(300)).seen_by(Some(&privileges));
        let e = wait.settle(&|v| v.vmid == 101, &|| Ok(vec![locked("create")])).unwrap_err().to_string();
        assert_eq!(e, STALE);
        assert_eq!(api.calls.borrow().iter().filter(|c| c.1 == status).count(), 1);
    }

    #[test]
    fn a_clone_lock_with_only_other_clones_running_is_stale() {
        let api = ScriptedApi::default();
        for _look in 0..2 {
            api.answer(Method::Get, "/nodes/pve1/tasks", Ok(json!([{"upid": UPID, "status": "RUNNING"}])));
            api.answer(
                Method::Get,
                &ApiPath::new(["nodes", "pve1", "tasks", UPID, "log"]).encoded(),
                Ok(json!([{"n": 1, "t": "creating a clone of VM 9000 with ID 300"}])),
            );
        }
        privileges_on_node(&api, json!({"Sys.Audit": 1}));
        let privileges = Privileges::new(&api, "root@pam");
        let wait = InFlight::new(&api, Duration::from_secs(300)).seen_by(Some(&privileges)).without_polling();
        let e = wait.settle(&|v| v.vmid == 101, &|| Ok(vec![locked("clone")])).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "VM 101 is locked (clone) but no task holds the lock: no qmclone task making VM 101 runs on node pve1"
            ),
            "{e}"
        );
    }

    #[test]
    fn the_lowest_vmid_holds_a_name() {
        let vms: Vec<VmResource> = [
            json!({"vmid": 104, "name": "dup", "node": "pve1", "type": "qemu"}),
            json!({"vmid": 90, "name": "dup", "node": "pve1", "type": "lxc"}),
            json!({"vmid": 102, "name": "dup", "node": "pve2", "type": "qemu"}),
        ]
        .into_iter()
        .map(vm)
        .collect();
        assert_eq!(name_holder(&vms, "dup").unwrap().vmid, 102);
        assert!(name_holder(&vms, "none").is_none());
    }
}
