//! proxmox_kvm: create, clone, converge, power and remove QEMU VMs, with a check mode that
//! predicts the real run.
//!
//! Pipeline (this file wires it): the start-up (`connect::Session`: `params.rs`'s validated task,
//! the client) → the reads of what exists (here) → `plan.rs` (pure: what to write, what is
//! refused, what stays pending, which power call) → `checks.rs` (every check before the first
//! write, in check and real runs alike) → `Run::execute`, the one place check mode is decided: it
//! records the plan's prediction for the later tasks of the run, or `apply.rs` makes the writes,
//! each task waited for → `result.rs` (what the task returns). Diffs are computed from the plan,
//! not from the read-back, so check and real runs show the same diff by construction; a real
//! run's diff only fills in what PVE decided (values marked known after apply, the volumes it
//! made: `resolved`).

mod apply;
mod checks;
mod params;
mod plan;
mod result;
mod spec;

use std::collections::BTreeSet;

use module_utils::check::readback;
use module_utils::check::world::{addressed_by, World};
use module_utils::connect::Session;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::cipassword;
use module_utils::pve::client::Api;
use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::inflight;
use module_utils::pve::pools::{self, PoolMove};
use module_utils::pve::preflight::Content;
use module_utils::pve::resources::{NameOf, VmResource};
use module_utils::pve::restore;
use module_utils::pve::snapshots;
use module_utils::pve::state;
use module_utils::pve::storage::StorageConfig;
use module_utils::{Error, Result};
use serde_json::{Map, Value};

pub use params::{CloneOpts, Params, State};
pub use plan::{
    clone_base, converge, drive_value, migration_refusal, nic_value, predict, scalar_equal, template_config,
    transition, Change, Converge, DriveOutcome, Power, PowerCall, Refusal, Transition, Wanted,
};
pub use result::{config_map, devices, macs};
pub use spec::SPEC;

use apply::Apply;
use checks::Checks;
use params::is_drive_key;
use plan::{listed_power, Plan, Write};
use result::{diff, outcome, resolved, with_pool};

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let session = Session::start(ctx, Params::from_spec)?;
    let world = session.world();
    let checks = Checks::new(&session.api, session.privileges(), &world);
    let mut run = Run { ctx, api: &session.api, world: &world, checks: &checks, p: &session.params };
    run.dispatch()
}

struct Run<'a> {
    ctx: &'a mut Context,
    /// The client, for `apply` and the reads only a real run makes (`status/current`).
    api: &'a dyn Api,
    /// What the task reads VMs and configs through (the run's predictions in check mode).
    world: &'a World<'a>,
    /// The checks before any write (preflight, schema, privileges, state, space).
    checks: &'a Checks<'a>,
    p: &'a Params,
}

/// What a task left: the VM and its config (predicted in check mode, read back otherwise), and
/// the config the plan predicted (for a new VM, with the vmid it took).
struct Done {
    vm: VmResource,
    after: VmConfig,
    planned: VmConfig,
}

impl Run<'_> {
    /// The one place check mode is decided. In both modes `checks` first checks what PVE would
    /// refuse (preflight, the schema of each planned request, privileges), with the same message.
    /// Then in check mode: the plan's prediction recorded for the later tasks of the run (a
    /// new VM without a vmid gets the predicted next free one) and returned; otherwise the plan's
    /// writes made and what PVE holds after them returned. `before`: the config the plan was made
    /// from (the source's, for a clone).
    fn execute(&mut self, mut plan: Plan, before: Option<&VmConfig>) -> Result<Done> {
        if let (true, Some(taken)) = (self.ctx.check_mode, plan.auto_vmid.take()) {
            plan.set_vmid(self.predicted_nextid(&taken)?);
            self.world.bound_at_apply(plan.vm.vmid);
        }
        // A real create or clone without a vmid: the privileges of the id PVE offers now (its first attempt takes it).
        let (vmid, offered_vmid) = match plan.vm.vmid {
            0 => {
                let api = self.api;
                let id = self.checks.before_new_vm(&plan.write, before, self.p, || apply::nextid(api))?;
                (id, Some(id))
            }
            id => {
                self.checks.before_write(&plan.write, before, id, self.p)?;
                (id, None)
            }
        };
        self.checks.activated(&plan.write, before, &|vm| self.world.is_predicted(vm), vmid)?;
        for unknown in self.checks.privileges.take_unknowns() {
            self.ctx.warn(unknown);
        }
        // New volumes named with their id (check mode named them above), then their space, last as in PVE.
        if offered_vmid.is_some() {
            plan.set_vmid(vmid);
        }
        self.checks.capacity(&plan.write, before, &plan.after, vmid)?;
        self.world.writes(checks::requests(&plan.write, vmid).iter().map(|(m, path, form, _)| (*m, path, form)))?;
        if self.ctx.check_mode {
            self.world.record(plan.prediction.clone())?;
            self.world.reserve(vmid, &self.checks.reserved_here());
            return Ok(Done { vm: plan.vm, planned: plan.after.clone(), after: plan.after });
        }
        let applied = Apply { api: self.api, ctx: &mut *self.ctx, p: self.p, offered_vmid }.run(&plan.write)?;
        // What PVE stored, read back after the last write, against the prediction (§46); a new
        // VM's every predicted key is the task's.
        if let Some(stored) = &applied.after {
            let from = if matches!(plan.write, Write::Create { .. } | Write::Clone { .. }) { None } else { before };
            let vmid = applied.vm.as_ref().map_or(plan.vm.vmid, |v| v.vmid);
            readback::verify(&format!("VM {vmid}"), from, &plan.after, stored)?;
        }
        Ok(Done {
            vm: applied.vm.unwrap_or(plan.vm),
            after: applied.after.unwrap_or_else(|| plan.after.clone()),
            planned: plan.after,
        })
    }

    /// The storages, read only when a key the task writes is a drive (their volume names
    /// depend on them).
    fn storages_for<'k>(&self, mut keys: impl Iterator<Item = &'k str>) -> Result<Vec<StorageConfig>> {
        if keys.any(is_drive_key) {
            self.checks.storages()
        } else {
            Ok(Vec::new())
        }
    }

    /// The volumes listed on `sids` of `node`: the disk numbers PVE's `find_free_diskname` skips
    /// when it names the new volumes there (§40.2). Only a storage storage.cfg has, enabled on a
    /// node that is online, holding images, is asked (the preflight refuses the others, in its
    /// words); one that cannot be listed counts as empty: naming is a prediction, never a reason
    /// to fail.
    fn listed(&self, node: &str, storages: &[StorageConfig], sids: BTreeSet<String>) -> Vec<String> {
        let preflight = &self.checks.preflight;
        if storages.is_empty() || preflight.node(node, "node").is_err() {
            return Vec::new();
        }
        let known = sids.into_iter().filter(|sid| preflight.storage(node, sid, Content::Images, "").is_ok());
        let lists = known.filter_map(|sid| preflight.volumes_on(node, &sid).ok());
        lists.flat_map(|l| self.world.listed(&l).into_keys()).collect()
    }

    /// The vmid a check-mode create or clone would get: PVE's next free id, skipping ids that
    /// earlier tasks of this check run predicted for their VMs (`taken`).
    fn predicted_nextid(&mut self, taken: &[u64]) -> Result<u64> {
        let mut id = apply::nextid(self.api)?;
        while taken.contains(&id) {
            id += 1;
        }
        self.ctx.warn(format!(
            "vmid {id} is a prediction (the next free vmid now); the real run takes the next free vmid when it runs"
        ));
        Ok(id)
    }

    /// The VMs once the one the task names is not being created or cloned (waited for, §30).
    fn vms(&self) -> Result<Vec<VmResource>> {
        self.world.vms_for_task(self.p.vmid, self.p.name.as_deref())
    }

    /// After a real create or clone by name alone (`auto`: no vmid given) made `ours`: the VM
    /// of that name an overlapping run made first, when there is one (`ours` is then removed;
    /// apply/names.rs). `mark`: the journal before the create or clone.
    fn yielded(&mut self, ours: &VmResource, auto: bool, mark: Option<usize>) -> Result<Option<VmResource>> {
        let (Some(name), true, Some(mark)) = (self.p.name.as_deref(), auto && !self.ctx.check_mode, mark) else {
            return Ok(None);
        };
        Apply { api: self.api, ctx: &mut *self.ctx, p: self.p, offered_vmid: None }
            .yield_name(self.world, ours, name, mark)
    }

    /// In check mode, before predicting a create or clone by name alone: the VMs the real run would yield to
    /// (apply/names.rs `yield_name`) settled the same way: those of a lower vmid than the next free one whose
    /// create or clone runs and that may bear the name, their task waited for within `timeout`, and a VM that
    /// does not end in time or holds a lock no visible task holds only a warning, as there. Else the VMs as read.
    fn settled_for_name(&mut self, vms: Vec<VmResource>, auto: bool) -> Result<Vec<VmResource>> {
        let Some(name) = self.p.name.as_deref() else { return Ok(vms) };
        if !(auto && self.ctx.check_mode && vms.iter().any(inflight::is_in_flight)) {
            return Ok(vms);
        }
        match apply::names::settled_below(self.world, name, apply::nextid(self.api)?) {
            Ok(vms) => Ok(vms),
            Err(e) => {
                self.ctx.warn(format!(
                    "VM {name} would be made, but whether an overlapping run made another VM of that name is not known: {e}"
                ));
                Ok(vms)
            }
        }
    }

    /// The power state from `status/current` (`/cluster/resources` can lag behind; upstream
    /// reads it for the same reason), as an earlier task of a check run predicted it if one did
    /// (`World::status`: paused and hibernated included).
    fn power(&self, vm: &VmResource) -> Result<Power> {
        let s = self.world.status(vm)?;
        Ok(Power::from_status(
            s.get("status").and_then(Value::as_str).unwrap_or("stopped"),
            s.get("qmpstatus").and_then(Value::as_str),
            s.get("lock").and_then(Value::as_str),
        ))
    }

    /// The VM the task names, which must exist and be a QEMU VM.
    fn find(&mut self, vms: &[VmResource]) -> Result<VmResource> {
        let vm = match self.world.resolve(vms, self.p.vmid, self.p.name.as_deref())? {
            Some(vm) => vm.clone(),
            None => {
                return Err(Error::failed(match self.p.vmid {
                    Some(id) => format!("VM with vmid {id} does not exist in cluster"),
                    None => format!("VM with name = {} does not exist in cluster", self.p.label()),
                }))
            }
        };
        self.ctx.identify("vmid", vm.vmid);
        vm.require_qemu()?;
        Ok(vm)
    }

    fn dispatch(&mut self) -> Result<Outcome> {
        if !self.p.delete.is_empty() || !self.p.revert.is_empty() {
            return self.delete_or_revert();
        }
        if self.p.migrate && self.p.clone.is_none() {
            return self.migrate();
        }
        match self.p.state {
            State::Present if self.p.clone.is_some() => self.clone_vm(),
            State::Present => self.present(),
            State::Absent => self.absent(),
            State::Current => self.current(),
            State::Template => self.template(),
            _ => self.power_state(),
        }
    }

    /// Plan and write from `config`; on a digest conflict plan again from a fresh read
    /// (`config::retry_on_conflict`), unless the task gave its own `digest`: then the conflict is
    /// the answer it asked for.
    fn converging(
        &mut self,
        vm: &VmResource,
        config: VmConfig,
        mut from: impl FnMut(&mut Self, &VmConfig) -> Result<Outcome>,
    ) -> Result<Outcome> {
        if self.p.digest.is_some() {
            return from(self, &config);
        }
        let api = self.api;
        config::retry_on_conflict(api, vm, config, |config| from(self, config))
    }

    // ------------------------------------------------------------------ present

    fn present(&mut self) -> Result<Outcome> {
        if let Some((vm, config)) = self.world.on_node(self.p.one_read_node(), self.p.vmid, self.p.name.as_deref())? {
            if converge(&config, &self.p.desired).is_empty() {
                return Ok(result::unchanged(&vm, &config));
            }
        }
        let vms = self.vms()?;
        let vms = self.settled_for_name(vms, self.p.vmid.is_none())?;
        match self.world.resolve(&vms, self.p.vmid, self.p.name.as_deref())? {
            Some(vm) => {
                let vm = vm.clone();
                self.ctx.identify("vmid", vm.vmid);
                vm.require_qemu()?;
                self.existing(&vm, self.p.update)
            }
            None => self.create(&vms),
        }
    }

    /// Compare an existing VM with the task; write the differences when `update`.
    fn existing(&mut self, vm: &VmResource, update: bool) -> Result<Outcome> {
        let config = self.world.config(vm)?;
        self.converging(vm, config, |run, config| run.existing_from(vm, update, config))
    }

    fn existing_from(&mut self, vm: &VmResource, update: bool, config: &VmConfig) -> Result<Outcome> {
        let config = &self.with_stored_password(vm, config)?;
        let conv = converge(config, &self.p.desired);
        let label =
            config.get("name").map(str::to_string).or_else(|| vm.name.clone()).unwrap_or_else(|| vm.vmid.to_string());
        // The pool: a step of its own (pve::pools), checked before any write, made after the config.
        let pool_move = self.p.pool.as_deref().and_then(|pool| PoolMove::plan(vm, pool));
        if let (Some(mv), false) = (&pool_move, update) {
            self.ctx.warn(pools::not_moved(mv));
        }
        if !update {
            return Ok(result::drift(self.ctx, vm, config, &conv, &label));
        }
        conv.check_refusals(&format!("VM {} cannot be changed as the task asks (nothing was changed)", vm.vmid))?;
        pool_move.iter().try_for_each(|mv| {
            self.checks.pool_move(mv).and_then(|_| self.world.pool_move(vm, config, mv, conv.changes.is_empty()))
        })?;
        let (changed, after, predicted) = if conv.changes.is_empty() {
            (false, config.clone(), config.clone())
        } else {
            let storages = self.storages_for(conv.changes.iter().map(|c| c.key.as_str()))?;
            let new = plan::allocating_on(conv.changes.iter().map(|c| (&c.key, &c.after)), None, false);
            let listed = self.listed(&vm.node, &storages, new);
            let plan = plan::update(vm, config, &conv.changes, self.p, &storages, &listed);
            let predicted = plan.after.clone();
            let done = self.execute(plan, Some(config))?;
            let predicted = resolved(&predicted, &done.after);
            if let Some(w) = plan::pending_warning(vm.vmid, &conv.changes, &done.after) {
                self.ctx.warn(w);
            }
            (true, done.after, predicted)
        };
        if let (Some(mv), false) = (&pool_move, self.ctx.check_mode) {
            pools::apply(self.api, mv)?;
        }
        let changed = changed || pool_move.is_some();
        let msg = if changed {
            format!("VM {label} with vmid {} updated", vm.vmid)
        } else {
            format!("VM {label} with vmid {} already exists", vm.vmid)
        };
        Ok(outcome(changed, msg, vm, Some(&after), Some(&vm.status), Some(listed_power(vm)))
            .with("drift", Value::Object(Map::new()))
            .with_diff(Some(pool_move.iter().fold(diff(vm.vmid, Some(config), Some(&predicted)), with_pool))))
    }

    /// The config to compare with a task that gives `cipassword`: the password PVE stores (and
    /// masks in every config read) in its place, read from the VM's cloud-init user data, so that
    /// `scalar_equal` compares it with the task's (docs/pve-semantics.md §29.5). Where the two
    /// cannot be compared, a warning, and the stored one is left as it is.
    fn with_stored_password(&mut self, vm: &VmResource, config: &VmConfig) -> Result<VmConfig> {
        let mut config = config.clone();
        let Some(wanted) = self.p.desired.get("cipassword") else { return Ok(config) };
        if config.get("cipassword").is_none() || self.world.is_predicted(vm) {
            return Ok(config);
        }
        let stored = cipassword::stored(self.api, vm)?.unwrap_or_else(|| cipassword::MASKED.to_string());
        if cipassword::matches(&stored, wanted).is_none() {
            let why = if stored == cipassword::MASKED {
                "it is hidden from this user without VM.Config.Cloudinit"
            } else {
                "it is stored with a hash scheme other than SHA-256-crypt ($5$)"
            };
            self.ctx.warn(format!(
                "cipassword: the password VM {} stores cannot be compared with the task's ({why}); it is left as it is",
                vm.vmid
            ));
        }
        config.current.insert("cipassword".into(), stored);
        Ok(config)
    }

    fn create(&mut self, vms: &[VmResource]) -> Result<Outcome> {
        let node = self.p.node.clone().ok_or_else(|| Error::args("node is mandatory for creating/updating VM"))?;
        let storages = self.storages_for(self.p.desired.keys().map(String::as_str))?;
        let listed =
            self.listed(&node, &storages, plan::allocating_on(&self.p.desired, self.p.storage.as_deref(), false));
        let plan = plan::create(&node, self.p, vms.iter().map(|v| v.vmid).collect(), &storages, &listed);
        if let plan::Write::Create { form, .. } = &plan.write {
            restore::refuse_request(form)?; // Qemu.pm create_vm, §45.4, §51.4
        }
        // a vmid this user cannot see may still be taken (create_and_lock_config, §47.2)
        if let Some(id) = self.p.vmid.filter(|id| self.world.prediction(*id).is_none()) {
            apply::refuse_taken_vmid(self.api, &self.checks.privileges, id, &self.p.label())?;
        }
        let mark = self.api.journal().map(|j| j.mark());
        let done = self.execute(plan, None)?;
        if let Some(holder) = self.yielded(&done.vm, self.p.vmid.is_none(), mark)? {
            return self.existing(&holder, self.p.update);
        }
        let vmid = done.vm.vmid;
        let label = self.p.label();
        let label = if label.is_empty() { vmid.to_string() } else { label };
        Ok(result::new_vm(&done.vm, &done.after, &done.planned, format!("VM {label} with vmid {vmid} deployed")))
    }

    // -------------------------------------------------------------------- clone

    fn clone_vm(&mut self) -> Result<Outcome> {
        let Some(c) = self.p.clone.clone() else { return self.present() };
        let (source_id, name) = (self.p.vmid, self.p.name.as_deref());
        let vms = self.world.vms_for(&|v| {
            Some(v.vmid) == source_id
                || Some(v.vmid) == c.newid
                || addressed_by(v, None, Some(&c.source))
                || (c.newid.is_none() && addressed_by(v, None, name))
        })?;
        let vms = self.settled_for_name(vms, c.newid.is_none())?;
        let world = self.world;
        let name_of: NameOf = &|vm| world.name_of(vm);
        let source = plan::clone_source(&vms, self.p.vmid, &c.source, name_of)?;
        source.require_qemu()?;
        if let Some(t) = plan::clone_target(&vms, &source, c.newid, self.p.name.as_deref(), name_of)? {
            self.ctx.identify("vmid", t.vmid);
            t.require_qemu()?;
            // The clone exists (made by an earlier run, or by a run that ended while this one
            // waited for it): like any existing VM, it is changed only with update: true;
            // otherwise its differences are drift (§29).
            return self.existing(&t, self.p.update);
        }
        // what clone_vm copies: the snapshot's config when the task names one (§37.2)
        let source_config = match &c.snapname {
            Some(snapname) => self.world.snapshot_config(&source, snapname)?,
            None => self.world.config(&source)?,
        };
        let name = self.p.name.clone().unwrap_or_else(|| {
            format!("Copy-of-VM-{}", source.name.clone().unwrap_or_else(|| source.vmid.to_string()))
        });
        let storages = self.checks.storages()?;
        let taken = vms.iter().map(|v| v.vmid).collect();
        // where the clone's volumes go: the target storage, else each source volume's; and the
        // new disks the task adds
        let mut sids = match &c.storage {
            Some(sid) => [sid.clone()].into(),
            None => plan::allocating_on(&source_config.current, None, true), // clone_vm drops pending
        };
        sids.extend(plan::allocating_on(&self.p.desired, None, false));
        let listed = self.listed(&source.node, &storages, sids);
        let plan = plan::clone(&source, &source_config, &c, &name, self.p, taken, (&storages, &listed))?;
        let mark = self.api.journal().map(|j| j.mark());
        let done = self.execute(plan, Some(&source_config))?;
        if let Some(holder) = self.yielded(&done.vm, c.newid.is_none(), mark)? {
            holder.require_qemu()?;
            return self.existing(&holder, self.p.update);
        }
        let newid = done.vm.vmid;
        Ok(result::new_vm(
            &done.vm,
            &done.after,
            &done.planned,
            format!("VM {name} with newid {newid} cloned from vm with vmid {}", source.vmid),
        ))
    }

    // ------------------------------------------------------------------- absent

    fn absent(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let Some(vm) = self.world.resolve(&vms, self.p.vmid, self.p.name.as_deref())?.cloned() else {
            return Ok(result::already_absent(&self.p.label(), self.p.vmid));
        };
        self.ctx.identify("vmid", vm.vmid);
        vm.require_qemu()?;
        let config = self.world.config(&vm)?;
        plan::refuse_locked(&vm, &config)?;
        let now = self.power(&vm)?;
        self.execute(plan::remove(&vm, &config, now, self.p)?, Some(&config))?;
        // in a check run, the space the removal frees, for the run's later tasks (§40.1)
        if self.ctx.check_mode {
            let preflight = &self.checks.preflight;
            let mut volids = state::owned_volumes(&config, vm.vmid);
            if self.p.destroy_unreferenced_disks {
                volids.extend(preflight.listed_of(&vm.node, vm.vmid)?);
            }
            self.world.free(vm.vmid, &preflight.freeing(&vm.node, volids.iter().map(String::as_str))?);
        }
        Ok(result::removed(&vm, &config, now))
    }

    // -------------------------------------------------------------------- power

    fn power_state(&mut self) -> Result<Outcome> {
        let wanted = Wanted::of(self.p.state)
            .ok_or_else(|| Error::Internal(format!("state {:?} is not a power state", self.p.state)))?;
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let now = self.power(&vm)?;
        let step = transition(now, wanted, self.p.force);
        if let Transition::Refuse(_) = step {
            return Err(Error::failed(step.message(vm.vmid)));
        }
        let config = self.world.config(&vm)?;
        let Transition::Call(call, next) = step else {
            return Ok(outcome(
                false,
                step.message(vm.vmid),
                &vm,
                Some(&config),
                Some(now.resource_status()),
                Some(now),
            ));
        };
        let done = self.execute(plan::power(&vm, &config, call, next, self.p), Some(&config))?;
        Ok(outcome(true, step.message(vm.vmid), &vm, Some(&done.after), Some(now.resource_status()), Some(next)))
    }

    fn current(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let now = self.power(&vm)?;
        let config = self.world.config(&vm)?;
        let name =
            config.get("name").map(str::to_string).or_else(|| vm.name.clone()).unwrap_or_else(|| "(unnamed)".into());
        Ok(outcome(
            false,
            format!("VM {name} with vmid = {} is {}", vm.vmid, now.as_str()),
            &vm,
            Some(&config),
            Some(now.resource_status()),
            Some(now),
        ))
    }

    fn template(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let config = self.world.config(&vm)?;
        if vm.template {
            return Ok(outcome(
                false,
                format!("VM {} is already a template", vm.vmid),
                &vm,
                Some(&config),
                Some("stopped"),
                Some(Power::Stopped),
            ));
        }
        // Qemu.pm template: the lock (in the checks), then the snapshots, then the power state (§45.2)
        if let Some(words) = snapshots::template_refusal(&config, || World::snapshot_names(self.api, &vm))? {
            return Err(Error::failed(format!("conversion of VM {} to template failed: {words}", vm.vmid)));
        }
        let now = self.power(&vm)?;
        // which volumes become base volumes depends on their storage (§47.1): unknown where this user cannot
        // see it, and the real run's diff then names what PVE made of them
        let storages = self.storages_for(config.current.keys().map(String::as_str)).unwrap_or_default();
        let plan = plan::template(&vm, &config, now, self.p, &storages)?;
        let planned = plan.after.clone();
        let done = self.execute(plan, Some(&config))?;
        Ok(outcome(
            true,
            format!("VM {} converted to template", vm.vmid),
            &vm,
            Some(&done.after),
            Some(now.resource_status()),
            Some(Power::Stopped),
        )
        .with_diff(Some(diff(vm.vmid, Some(&config), Some(&resolved(&planned, &done.after))))))
    }

    // ------------------------------------------------------ delete, revert, migrate

    fn delete_or_revert(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let config = self.world.config(&vm)?;
        self.converging(&vm, config, |run, config| run.delete_or_revert_from(&vm, config))
    }

    fn delete_or_revert_from(&mut self, vm: &VmResource, config: &VmConfig) -> Result<Outcome> {
        let step = plan::delete_or_revert(vm, config, self.p);
        let Some(plan) = step.plan else {
            return Ok(outcome(false, step.msg, vm, Some(config), Some(&vm.status), Some(listed_power(vm)))
                .with_diff(Some(diff(vm.vmid, Some(config), Some(config)))));
        };
        let predicted = plan.after.clone();
        let done = self.execute(plan, Some(config))?;
        Ok(outcome(true, step.msg, vm, Some(&done.after), Some(&vm.status), Some(listed_power(vm)))
            .with_diff(Some(diff(vm.vmid, Some(config), Some(&predicted)))))
    }

    fn migrate(&mut self) -> Result<Outcome> {
        let (mut vms, storages) = self.world.vms_and_storages()?;
        if vms.iter().any(|v| inflight::is_in_flight(v) && addressed_by(v, self.p.vmid, self.p.name.as_deref())) {
            vms = self.vms()?;
        }
        let vm = self.find(&vms)?;
        let node =
            self.p.node.clone().ok_or_else(|| Error::args("migrate needs node: the node to migrate the VM to"))?;
        let config = self.world.config(&vm)?;
        let before = (Some(vm.status.as_str()), Some(listed_power(&vm)));
        let Some(plan) = plan::migrate(&vm, &config, &storages, &node, self.p)? else {
            let msg = format!("VM {} is already on {node}", vm.vmid);
            return Ok(outcome(false, msg, &vm, Some(&config), before.0, before.1));
        };
        let done = self.execute(plan, Some(&config))?;
        let msg = format!("VM {} has been migrated from {} to {node}", vm.vmid, vm.node);
        Ok(outcome(true, msg, &done.vm, Some(&done.after), before.0, before.1))
    }
}

#[cfg(test)]
mod tests;
