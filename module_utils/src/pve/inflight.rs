//! VMs in flight: a VM whose create or clone task still runs, found by its lock, its task found on its node and waited for.
//!
//! While `create_vm` or `clone_vm` runs, the new VM's config holds only `lock: create` /
//! `lock: clone` (qemu-server API2/Qemu.pm `create_and_lock_config`, `clone_vm`), so it is not "an
//! existing VM that differs": it is half made, and its name is not known until the task ends
//! (/cluster/resources shows `VM <vmid>`, what `vmstatus` gives a config without a name).
//! docs/pve-semantics.md §30.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::request::{form, ApiPath};
use crate::pve::resources::VmResource;
use crate::pve::tasks::Waiter;

/// The config locks of a VM that a running create or clone task holds.
pub const IN_FLIGHT_LOCKS: [&str; 2] = ["create", "clone"];

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
/// `qmrestore`, which holds the same lock) with the vmid as its id; a `qmclone`'s id is its
/// source, so the clone's log names the target (`creating a clone of VM <src> with ID <newid>`,
/// Qemu.pm `clone_vm`). `None` when no such task is visible: another user's tasks need
/// Sys.Audit on the node, and a lock left by a task that died has none.
pub fn making_task(api: &dyn Api, vm: &VmResource) -> Result<Option<String>> {
    let vmid = vm.vmid.to_string();
    let (query, kinds): (_, &[&str]) = match vm.lock.as_deref() {
        Some("create") => (form([("source", "active"), ("vmid", vmid.as_str())]), &["qmcreate", "qmrestore"]),
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

/// Wait, at most `timeout`, for the create or clone that makes `vm` to end: its task when it is
/// visible (whatever its outcome: the caller reads what it left), else until `reread` no longer
/// shows `vm` in flight. Fails naming the task (or the lock) when it does not end in time.
pub fn wait_for(
    api: &dyn Api,
    vm: &VmResource,
    timeout: Duration,
    reread: &dyn Fn() -> Result<Vec<VmResource>>,
) -> Result<()> {
    wait_until(api, vm, Instant::now() + timeout, timeout, true, reread)
}

/// `wait_for` until `deadline`, a wait of `timeout` in all (what a failure names). Without a
/// visible task, `poll` says whether to wait for the lock to go, or to fail at once: such a lock
/// is another user's task or a stale lock (a task that died), which PVE never clears itself.
fn wait_until(
    api: &dyn Api,
    vm: &VmResource,
    deadline: Instant,
    timeout: Duration,
    poll: bool,
    reread: &dyn Fn() -> Result<Vec<VmResource>>,
) -> Result<()> {
    let lock = vm.lock.clone().unwrap_or_default();
    let what = if lock == "clone" { "cloned" } else { "created" };
    if let Some(upid) = making_task(api, vm)? {
        return match Waiter::new(deadline.saturating_duration_since(Instant::now())).wait(api, &upid) {
            Ok(_) | Err(Error::TaskFailed { .. }) => Ok(()),
            Err(Error::TaskTimeout { .. }) => Err(Error::failed(format!(
                "VM {} is being {what} by task {upid} (lock: {lock}), which had not ended after {}s (timeout)",
                vm.vmid,
                timeout.as_secs()
            ))),
            Err(e) => Err(e),
        };
    }
    let unseen = format!(
        "VM {} is locked ({lock}) and no running task of it is visible to this user (another user's tasks need Sys.Audit on /nodes/{}; a lock left by a task that died stays until 'qm unlock')",
        vm.vmid, vm.node
    );
    if !poll {
        return Err(Error::failed(unseen));
    }
    let mut pause = Duration::from_millis(100);
    loop {
        let still = reread()?.into_iter().any(|v| v.vmid == vm.vmid && is_in_flight(&v));
        if !still {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::failed(format!("{unseen}; it was still locked after {}s (timeout)", timeout.as_secs())));
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(Duration::from_secs(2));
    }
}

/// Read the VMs with `read` until none that `addressed` selects is in flight, waiting for each
/// (`wait_for`; `poll`: also for a lock without a visible task) within `timeout` overall, and
/// return that read.
pub fn settle(
    api: &dyn Api,
    timeout: Duration,
    poll: bool,
    addressed: &dyn Fn(&VmResource) -> bool,
    read: &dyn Fn() -> Result<Vec<VmResource>>,
) -> Result<Vec<VmResource>> {
    let deadline = Instant::now() + timeout;
    loop {
        let vms = read()?;
        let Some(busy) = vms.iter().find(|v| is_in_flight(v) && addressed(v)).cloned() else {
            return Ok(vms);
        };
        wait_until(api, &busy, deadline, timeout, poll, read)?;
    }
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
