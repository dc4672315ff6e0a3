//! proxmox_kvm's writes, I/O only: each `plan::Write` carried out through `Api`, every task it
//! starts waited for through `Waiter`, and the config read back. Never called in check mode.

use std::time::{Duration, Instant};

use module_utils::protocol::Context;
use module_utils::pve::client::Api;
use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::permissions::Privileges;
use module_utils::pve::request::{ApiPath, Form};
use module_utils::pve::resources::VmResource;
use module_utils::pve::state;
use module_utils::pve::tasks::{as_upid, Waiter};
use module_utils::pve::transient::again_on_lock_timeout;
use module_utils::{Error, Result};
use serde_json::Value;

pub(crate) mod names;

use crate::params::Params;
use crate::plan::{self, Write};

/// How many times a create or clone with an automatic vmid tries the next free id after
/// another run took the one it got: enough for `forks: 50` creating at the same moment.
const MAX_VMID_ATTEMPTS: usize = 64;

/// What the writes left, where it differs from the plan's prediction: the VM (a new one's id and
/// node) and its config as read back.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    pub vm: Option<VmResource>,
    pub after: Option<VmConfig>,
}

/// The next free vmid, `GET /cluster/nextid`.
pub(crate) fn nextid(api: &dyn Api) -> Result<u64> {
    let v = api
        .get(&ApiPath::new(["cluster", "nextid"]), &Vec::new())
        .map_err(|e| e.context("Unable to retrieve next free vmid"))?;
    module_utils::pve::pveformat::lenient_u64(Some(&v))
        .ok_or_else(|| Error::Internal(format!("/cluster/nextid answered {v}")))
}

/// Refuse a create of `vmid` that a guest holds somewhere in the cluster, one this user cannot
/// see (qemu-server API2/Qemu.pm `create_vm` dies in `create_and_lock_config`): asked with
/// `GET /cluster/nextid?vmid=`, which pve-manager PVE/API2/Cluster.pm `nextid` answers for any
/// user, with the parameter error `VM <vmid> already exists` for an id in the cluster's vmlist,
/// whatever the caller may see (§47.2). Any other answer leaves the question to the create.
/// Not asked of a user who holds `VM.Audit` on every guest: `/cluster/resources` lists every guest
/// of the cluster's vmlist to them (pve-manager `API2/Cluster.pm` `resources` skips only those
/// without it), so a vmid it does not list is free (§66).
pub(crate) fn refuse_taken_vmid(api: &dyn Api, privileges: &Privileges, vmid: u64, label: &str) -> Result<()> {
    if privileges.sees_every_guest().unwrap_or(false) {
        return Ok(());
    }
    let query = vec![("vmid".to_string(), vmid.to_string())];
    match api.get(&ApiPath::new(["cluster", "nextid"]), &query) {
        Err(Error::Api { status: 400, message, .. }) if message.contains("already exists") => {
            let label = if label.is_empty() { vmid.to_string() } else { label.to_string() };
            Err(Error::failed(format!(
                "creation of qemu VM {label} with vmid {vmid} failed: unable to create VM {vmid} - VM {vmid} \
                 already exists (held by a guest this user cannot see); nothing was changed"
            )))
        }
        _ => Ok(()),
    }
}

/// Whether a failed create or clone failed because its vmid was taken in the meantime.
fn already_exists(e: &Error) -> bool {
    let text = match e {
        Error::TaskFailed { exitstatus, .. } => exitstatus.clone(),
        other => other.to_string(),
    };
    text.contains("already exists")
}

pub(crate) struct Apply<'a> {
    pub api: &'a dyn Api,
    pub ctx: &'a mut Context,
    pub p: &'a Params,
    /// For a create or clone without a vmid: the id `GET /cluster/nextid` offered before the
    /// writes, whose privileges the checks checked. The first attempt takes it; a collision
    /// with another run asks for the next one.
    pub offered_vmid: Option<u64>,
}

impl Apply<'_> {
    /// Make the writes of `write`.
    pub(crate) fn run(&mut self, write: &Write) -> Result<Applied> {
        match write {
            Write::Config { vm, body, digest, context, boot_after } => {
                let (first, boot) = plan::boot_last(body, *boot_after);
                config::write(self.api, vm, first, digest.as_deref()).map_err(|e| e.context(context))?;
                let mut after = config::read(self.api, vm)?;
                if let Some(boot) = boot {
                    config::write(self.api, vm, boot, after.digest.as_deref()).map_err(|e| e.context(context))?;
                    after = config::read(self.api, vm)?;
                }
                Ok(Applied { vm: None, after: Some(after) })
            }
            Write::Create { node, vmid, name, label, form } => {
                let vmid = self.create_with_retry(node, *vmid, label, form)?;
                let vm = plan::resource(vmid, name.as_deref(), node, "stopped");
                let after = config::read(self.api, &vm)?;
                Ok(Applied { vm: Some(vm), after: Some(after) })
            }
            Write::Clone { source, newid, name, node, body, .. } => {
                let newid = self.clone_with_retry(source, *newid, (name, node), body)?;
                let vm = plan::resource(newid, Some(name), node, "stopped");
                let config = self.wait_unlocked(&vm)?;
                let after = self.configure_clone(&vm, config)?;
                Ok(Applied { vm: Some(vm), after: Some(after) })
            }
            Write::Power { vm, call, body, read_back } => {
                let path = vm.path().join(["status", call.verb()]);
                self.post_and_wait(&path, body.clone(), call.extra_wait())
                    .map_err(|e| e.context(&call.failure(vm.vmid)))?;
                let after = if *read_back { Some(config::read(self.api, vm)?) } else { None };
                Ok(Applied { vm: None, after })
            }
            Write::Remove { vm, stop, query } => {
                self.remove(vm, stop.as_ref(), query)?;
                Ok(Applied::default())
            }
            Write::Template { vm, stop_first } => {
                if *stop_first {
                    self.post_and_wait(&vm.path().join(["status", "stop"]), Vec::new(), 30)
                        .map_err(|e| e.context(&format!("stopping of VM {} failed", vm.vmid)))?;
                }
                self.post_and_wait(&vm.path().join(["template"]), Vec::new(), 0)
                    .map_err(|e| e.context(&format!("conversion of VM {} to template failed", vm.vmid)))?;
                Ok(Applied { vm: None, after: Some(config::read(self.api, vm)?) })
            }
            Write::Migrate { vm, body, context } => {
                self.post_and_wait(&vm.path().join(["migrate"]), body.clone(), 0).map_err(|e| e.context(context))?;
                Ok(Applied::default())
            }
        }
    }

    fn waiter(&self, extra: u64) -> Waiter {
        Waiter::new(Duration::from_secs(self.p.timeout + extra))
    }

    /// Wait for the task a call answered with (if it answered a UPID); its warnings are ours.
    fn wait(&mut self, answer: &Value, extra: u64) -> Result<()> {
        if let Some(upid) = as_upid(answer) {
            let ok = self.waiter(extra).wait(self.api, upid)?;
            for w in ok.warnings {
                self.ctx.warn(w);
            }
        }
        Ok(())
    }

    /// The id a create or clone without a vmid tries next: the one offered before the writes,
    /// then a new `GET /cluster/nextid` for each retry.
    fn next_free_vmid(&mut self) -> Result<u64> {
        match self.offered_vmid.take() {
            Some(id) => Ok(id),
            None => nextid(self.api),
        }
    }

    /// POST and wait for its task; a task that failed on a lock timeout before any change is
    /// sent again (`pve::transient`, docs/pve-semantics.md §55).
    fn post_and_wait(&mut self, path: &ApiPath, body: Form, extra: u64) -> Result<()> {
        let (api, budget) = (self.api, self.budget());
        again_on_lock_timeout(api.journal(), budget, || {
            let answer = api.post(path, &body)?;
            self.wait(&answer, extra)
        })
    }

    /// How long a transient refusal is sent again: the task's `timeout`.
    fn budget(&self) -> Duration {
        Duration::from_secs(self.p.timeout)
    }

    /// `POST /nodes/{node}/qemu` and wait. Without an explicit vmid, a collision with another
    /// run (PVE: `... already exists on node ...`, before the task starts) takes the next id.
    fn create_with_retry(&mut self, node: &str, vmid: Option<u64>, label: &str, form: &Form) -> Result<u64> {
        let path = ApiPath::new(["nodes", node, "qemu"]);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let id = match vmid {
                Some(v) => v,
                None => self.next_free_vmid()?,
            };
            let mut body: Form = vec![("vmid".into(), id.to_string())];
            body.extend(form.iter().cloned());
            let context = format!("creation of qemu VM {label} with vmid {id} failed");
            let (api, budget) = (self.api, self.budget());
            let result = again_on_lock_timeout(api.journal(), budget, || {
                let answer = api.post(&path, &body)?;
                self.wait(&answer, 0)
            });
            match result {
                Err(e) if vmid.is_none() && already_exists(&e) && attempt < MAX_VMID_ATTEMPTS => continue,
                Err(e) => return Err(e.context(&context)),
                Ok(()) => return Ok(id),
            }
        }
    }

    /// `POST .../clone` and wait; a collision of an automatic newid takes the next id, as create.
    fn clone_with_retry(
        &mut self,
        source: &VmResource,
        newid: Option<u64>,
        (name, node): (&str, &str),
        form: &Form,
    ) -> Result<u64> {
        let path = source.path().join(["clone"]);
        let lost = |api: &dyn Api| {
            api.journal()
                .map_or(0, |j| j.retries().iter().filter(|l| l.contains("the answer was lost; its task")).count())
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let id = match newid {
                Some(v) => v,
                None => self.next_free_vmid()?,
            };
            let mut body: Form = vec![("newid".into(), id.to_string())];
            body.extend(form.iter().cloned());
            let context = format!("Unable to clone vm {name} from vmid {}", source.vmid);
            let (api, budget) = (self.api, self.budget());
            let lost_before = lost(api);
            let result = again_on_lock_timeout(api.journal(), budget, || {
                let answer = api.post(&path, &body)?;
                self.wait(&answer, 0)
            });
            // A lost answer taken for the clone task of this newid (pve::transient) may be another
            // run's that asked for the same newid in the same second, while PVE refused ours:
            // the clone then bears that run's name (Qemu.pm clone_vm writes `name` with it), and
            // ours did nothing: the next id, as for any collision.
            let theirs = || -> Result<bool> {
                let clone = config::read(api, &plan::resource(id, Some(name), node, "stopped"))?;
                Ok(clone.get("name") != Some(name))
            };
            match result {
                Err(e) if newid.is_none() && already_exists(&e) && attempt < MAX_VMID_ATTEMPTS => continue,
                Err(e) => return Err(e.context(&context)),
                Ok(()) if lost(api) > lost_before && theirs()? => {
                    if newid.is_none() && attempt < MAX_VMID_ATTEMPTS {
                        continue;
                    }
                    return Err(Error::failed(format!(
                        "{context}: the answer was lost, and VM {id} is another run's clone; nothing was cloned"
                    )));
                }
                Ok(()) => return Ok(id),
            }
        }
    }

    /// After the clone task: wait until the clone's `lock: clone` is gone, so the configuration
    /// that follows is not refused as locked, and return its config as read then. The clone is
    /// on the node the plan named: Qemu.pm `clone_vm` writes its config on the node the request
    /// went to and, for a `target`, moves it there before the task ends.
    fn wait_unlocked(&self, vm: &VmResource) -> Result<VmConfig> {
        let deadline = Instant::now() + Duration::from_secs(self.p.timeout);
        let mut pause = Duration::from_millis(50);
        loop {
            let config = config::read(self.api, vm)?;
            if !config.current.contains_key("lock") {
                return Ok(config);
            }
            if Instant::now() >= deadline {
                return Err(Error::failed(format!(
                    "the clone task ended, but VM {} is still locked after {}s",
                    vm.vmid, self.p.timeout
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    /// Converge a new clone to the task. Its config is only known once PVE made it (new MACs,
    /// volume names), so this one change is planned here, from the clone as read (`config`,
    /// read once its lock was gone).
    fn configure_clone(&mut self, vm: &VmResource, config: VmConfig) -> Result<VmConfig> {
        let conv = plan::converge(&config, &self.p.desired);
        conv.check_refusals(&format!("VM {} cannot be changed as the task asks (nothing was changed)", vm.vmid))?;
        if conv.changes.is_empty() {
            return Ok(config);
        }
        crate::checks::require_bridges(
            self.api,
            &vm.node,
            conv.changes.iter().map(|c| (c.key.as_str(), c.after.as_str())),
        )?;
        let update = plan::update(vm, &config, &conv.changes, self.p, &[], &[]);
        let after = self.run(&update.write)?.after.unwrap_or(update.after);
        if let Some(w) = plan::pending_warning(vm.vmid, &conv.changes, &after) {
            self.ctx.warn(w);
        }
        Ok(after)
    }

    /// Stop a running VM first (`stop`: the stop's body), then `DELETE` it and make sure it is gone.
    /// PVE's destroy takes no digest: a running VM's config is read again after its stop, and a
    /// volume attached meanwhile refuses the removal, the VM left stopped (docs/saved-plans.md).
    fn remove(&mut self, vm: &VmResource, stop: Option<&Form>, query: &Form) -> Result<()> {
        let mut context = format!("deletion of VM {} failed", vm.vmid);
        if let Some(body) = stop {
            let before = state::owned_volumes(&config::read(self.api, vm)?, vm.vmid);
            self.post_and_wait(&vm.path().join(["status", "stop"]), body.clone(), 30)
                .map_err(|e| e.context(&format!("stopping of VM {} before its removal failed", vm.vmid)))?;
            let now = state::owned_volumes(&config::read(self.api, vm)?, vm.vmid);
            let new: Vec<&String> = now.iter().filter(|v| !before.contains(v)).collect();
            if !new.is_empty() {
                return Err(Error::failed(format!(
                    "VM {} was stopped for its removal, but volumes were attached to it meanwhile ({}): it was not \
                     removed and is left stopped",
                    vm.vmid,
                    new.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
                )));
            }
            context = format!("deletion of VM {} failed (it was stopped for the removal and is left stopped)", vm.vmid);
        }
        let answer = self.api.delete(&vm.path(), query).map_err(|e| e.context(&context))?;
        self.wait(&answer, 0).map_err(|e| e.context(&context))?;
        // The task ended OK: make sure the VM is really gone before saying so.
        let still = module_utils::pve::resources::cluster_vms(self.api)?.into_iter().any(|v| v.vmid == vm.vmid);
        if still {
            return Err(Error::failed(format!("the removal task of VM {} ended, but the VM still exists", vm.vmid)));
        }
        Ok(())
    }
}
