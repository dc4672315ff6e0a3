//! proxmox_nic: make one `netN` of a VM exactly what the task describes, keeping its MAC.
//!
//! `main` wires the common shape: the start-up (`connect::Session`: `params`, the client) → the
//! reads (through `check::world`) → `plan` (pure: the change and its predicted result) →
//! `checks`, in check and real runs alike (the privileges the write needs, PVE's API schema on
//! it, the VM's lock, the bridge) → in check mode the prediction is recorded for the run's later
//! tasks, otherwise `apply` makes the write → `result` (the task's return values).

mod apply;
mod checks;
mod params;
mod plan;
mod result;
mod spec;

use module_utils::connect::Session;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::config;
use module_utils::Result;

pub use params::{Params, State};
pub use plan::{desired_nic, plan, Action, Plan};
pub use spec::SPEC;

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let session = Session::start(ctx, Params::from_spec)?;
    let (params, api) = (&session.params, &session.api);
    let privileges = session.privileges();
    let world = session.world();
    // The task names the node: one read when it changes nothing (`World::on_node`); the plan
    // must not depend on the power state, which that read does not give.
    if let Some((vm, config)) = world.on_node(params.node.as_deref(), params.vmid, params.name.as_deref())? {
        let (stopped, running) = (plan(&config, false, params).ok(), plan(&config, true, params).ok());
        if let Some(stopped) = stopped.filter(|p| p.action == Action::None && !p.pending && running.as_ref() == Some(p))
        {
            ctx.identify("vmid", vm.vmid);
            let after = stopped.after.clone();
            return Ok(result::outcome(ctx, &vm, params, &stopped, after, false));
        }
    }
    let vms = world.vms_for_task(params.vmid, params.name.as_deref())?;
    let vm = world.qemu_vm(&vms, params.vmid, params.name.as_deref())?;
    ctx.identify("vmid", vm.vmid);
    let config = world.config(vm)?;
    let iface = params.interface.as_str();
    let mut bridges = None;
    // Another writer between our read and our write: plan again from what it left.
    config::retry_on_conflict(api, vm, config, |config| {
        let plan = plan(config, vm.status == "running", params)?;
        checks::guard(api, &privileges, vm, config, iface, &plan.action)?;
        let write = apply::write(vm, config, iface, &plan.action);
        world.writes(write.iter().map(|(method, path, form)| (*method, path, form)))?;
        checks::bridge(api, &mut bridges, vm, params, &plan)?;
        let predicted = config.with_change(iface, plan.after.as_deref(), plan.pending);
        let (after, pending) = if ctx.check_mode {
            if plan.action != Action::None {
                world.record_config(vm, &predicted)?;
            }
            (plan.after.clone(), plan.pending)
        } else {
            apply::apply(api, vm, config, iface, &plan.action, &predicted)?
        };
        Ok(result::outcome(ctx, vm, params, &plan, after, pending))
    })
}

#[cfg(test)]
mod tests;
