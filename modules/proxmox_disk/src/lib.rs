//! proxmox_disk: one drive of a VM through its whole lifecycle, never losing data by surprise.
//!
//! `main` wires the common shape: the start-up (`connect::Session`: `params`, the client) → the
//! reads (through `check::world`) → `plan` (pure: config + task → the one write and the config
//! after it) → `checks`, in check and real runs alike (the privileges the writes need, PVE's API
//! schema on each planned write, the VM's state, the storage or volume they use) → in check mode
//! the prediction is recorded for the run's later tasks, otherwise `apply` makes the write, waits
//! for its task and reads the result back → `result` (the task's return values).

mod apply;
mod checks;
mod params;
mod plan;
mod result;
mod spec;

use std::collections::{BTreeMap, BTreeSet};

use module_utils::check::readback;
use module_utils::check::world::World;
use module_utils::connect::Session;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::devices::volume_storage;
use module_utils::pve::preflight::Preflight;
use module_utils::pve::resources::VmResource;
use module_utils::pve::state;
use module_utils::Result;

use apply::Applied;
use checks::Checks;
pub use params::{Create, Params, SizeRequest, State};
pub use plan::{plan, predict_volume, Action, Facts, Plan};
pub use spec::SPEC;

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let session = Session::start(ctx, |args, _| Params::from_spec(args))?;
    let (params, api) = (&session.params, &session.api);
    let world = session.world();
    let preflight = Preflight::new(api).reserving(world.reserved()).sharing_nodes(world.known_nodes());
    let checks = Checks { api, privileges: session.privileges(), preflight };
    // The task names the node: one read when it changes nothing (`World::on_node`), whatever
    // the power state, which that read does not give.
    if let (Some((vm, config)), None, None) = (
        world.on_node(params.node.as_deref(), params.vmid, params.name.as_deref())?,
        params.target_vmid,
        &params.import_from,
    ) {
        if let Some(plan) = noop(&vm, &config, params) {
            ctx.identify("vmid", vm.vmid);
            for w in &plan.warnings {
                ctx.warn(w.clone());
            }
            return Ok(result::outcome(ctx, &vm, &config, params, &plan, Applied::predicted(&plan)));
        }
    }
    let vms = world.vms_for_task(params.vmid, params.name.as_deref())?;
    let vm = world.qemu_vm(&vms, params.vmid, params.name.as_deref())?;
    ctx.identify("vmid", vm.vmid);
    let config = world.config(vm)?;
    // Another writer between our read and our write: plan again from what it left.
    config::retry_on_conflict(api, vm, config, |config| converge(ctx, &world, &checks, &vms, vm, config, params))
}

/// The plan of a task that changes nothing on `vm` whether it runs or not (no target, no
/// storage listing), else `None`.
fn noop(vm: &VmResource, config: &VmConfig, params: &Params) -> Option<Plan> {
    let none = BTreeMap::new();
    let facts = |running| Facts { vmid: vm.vmid, running, config, storages: &[], listed: &none, target: None };
    let stopped = plan(params, &facts(false)).ok()?;
    let running = plan(params, &facts(true)).ok()?;
    (stopped.action == Action::None && stopped == running).then_some(stopped)
}

#[allow(clippy::too_many_arguments)]
fn converge(
    ctx: &mut Context,
    world: &World,
    checks: &Checks,
    vms: &[VmResource],
    vm: &VmResource,
    config: &VmConfig,
    params: &Params,
) -> Result<Outcome> {
    let target = match params.target_vmid {
        Some(t) => match world.resolve(vms, Some(t), None)? {
            Some(tvm) => Some((tvm.clone(), world.config(tvm)?)),
            None => None,
        },
        None => None,
    };
    let none = BTreeMap::new();
    let mut facts = Facts {
        vmid: vm.vmid,
        running: vm.status == "running",
        config,
        // storage.cfg names and formats new volumes: read for a plan that allocates one
        storages: &[],
        listed: &none,
        target: target.as_ref().map(|(t, c)| (t.vmid, c)),
    };
    let mut plan = plan(params, &facts)?;
    checks::guard(checks, vm, &facts, params, &plan, target.as_ref().map(|(t, _)| t))?;
    if !world.is_predicted(vm) {
        checks::activated(checks, vm, &facts, params, &plan.action)?;
    }
    // an import source is an input of the plan: replaced after the check, the write would import another image
    if let Some((src, storage)) = params.import_from.as_deref().and_then(|s| Some((s, volume_storage(s)?))) {
        world.volume_input(&vm.node, src, &*checks.preflight.volumes_on(&vm.node, storage)?)?;
    }
    let writes = apply::writes(vm, &params.disk, &plan.action, config.digest.as_deref());
    world.writes(writes.iter().map(|(method, path, form)| (*method, path, form)))?;
    // What PVE names a new volume and the size it fills in for an existing one (an ISO, an
    // import source) come from storage.cfg and the storages' volumes: the check run shows them,
    // so it reads those (once the checks let it) and plans again with what they hold. The real
    // run plans again with storage.cfg too (the preflight has read it for the checks), so that
    // the prediction its read-back compares with (§46) knows a volume's format and fixed size
    // on its storage as the check run's does; the names it leaves known after apply.
    let (listed, storages);
    if plan.action != Action::None && plan.allocates_on().is_some() {
        storages = checks.preflight.storages()?;
        facts.storages = &storages;
        if !ctx.check_mode {
            plan = self::plan(params, &facts)?;
        }
    }
    if ctx.check_mode && plan.action != Action::None {
        let source = params.iso_image.as_deref().or(params.import_from.as_deref()).and_then(volume_storage);
        let storages: BTreeSet<&str> = plan.allocates_on().into_iter().chain(source).collect();
        let mut volumes = BTreeMap::new();
        for storage in &storages {
            volumes.extend(world.listed(&*checks.preflight.volumes_on(&vm.node, storage)?));
        }
        // a volume kept without `size=`, whose size PVE fills in: shown when its storage lists it
        // (this user may not list it; the size is then known after apply)
        if let Some(storage) = plan.sized_on().filter(|s| !storages.contains(s)) {
            if let Ok(list) = checks.preflight.volumes_on(&vm.node, storage) {
                volumes.extend(world.listed(&list));
            }
        }
        listed = volumes;
        facts.listed = &listed;
        plan = self::plan(params, &facts)?;
    }
    for w in &plan.warnings {
        ctx.warn(w.clone());
    }
    let changed = plan.action != Action::None;
    let done = if ctx.check_mode {
        if changed {
            world.record_config(vm, &plan.after)?;
            world.reserve(vm.vmid, &checks.preflight.reserved_here());
            if plan.target_after.is_none() {
                // the volumes the change frees (not a reassign's, renamed for the target): their
                // space, for the run's later tasks (docs/pve-semantics.md §40.1)
                let freed = state::freed_volumes(config, &plan.after, vm.vmid);
                world.free(vm.vmid, &checks.preflight.freeing(&vm.node, freed.iter().map(String::as_str))?);
            }
            if let (Some((tvm, _)), Some(t_after)) = (&target, &plan.target_after) {
                world.record_config(tvm, t_after)?;
            }
        }
        Applied::predicted(&plan)
    } else {
        let applied = apply::apply(world.api(), vm, config, params, &plan, target.as_ref().map(|(t, _)| t))?;
        // what PVE stored, read back after the last write, against the prediction (§46)
        readback::verify(&format!("VM {}", vm.vmid), Some(config), &plan.after, &applied.after)?;
        if let (Some((tvm, tconfig)), Some(predicted), Some(stored)) =
            (&target, &plan.target_after, &applied.target_after)
        {
            readback::verify(&format!("VM {}", tvm.vmid), Some(tconfig), predicted, stored)?;
        }
        applied
    };
    Ok(result::outcome(ctx, vm, config, params, &plan, done))
}

#[cfg(test)]
mod tests;
