//! proxmox_nic: make one `netN` of a VM exactly what the task describes, keeping its MAC.
//!
//! `main` wires the common shape: `params` (the validated task) → the reads (through
//! `check::world`) → `plan` (pure: the change and its predicted result) → `guard`, in check and
//! real runs alike (the privileges the write needs, PVE's API schema on it, the bridge) → in
//! check mode the prediction is recorded for the run's later tasks, otherwise `apply` makes the
//! write.

mod apply;
mod params;
mod plan;
mod spec;

use module_utils::ansible::diff::Diff;
use module_utils::check::world::World;
use module_utils::connect::{connect, connection};
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::permissions::{self, Privileges};
use module_utils::pve::propstring::{PropertyString, NET};
use module_utils::pve::resources::{node_bridges, require_bridge, VmResource};
use module_utils::pve::schema;
use module_utils::pve::state::{self, Facts, Op};
use module_utils::{Error, Result};
use serde_json::Value;

pub use params::{Params, State};
pub use plan::{desired_nic, plan, Action, Plan};
pub use spec::SPEC;

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let params = ctx.parse(Params::from_spec)?;
    if let Some(id) = params.vmid {
        ctx.identify("vmid", id);
    }
    let authid = connection(&ctx.params)?.authid();
    let api = connect(ctx)?;
    let privileges = Privileges::new(&api, &authid);
    let world = World::new(&api, ctx.predictions.clone()).saving(ctx.saved.clone());
    let vms = world.vms_for_task(params.vmid, params.name.as_deref())?;
    let vm = world.qemu_vm(&vms, params.vmid, params.name.as_deref())?;
    ctx.identify("vmid", vm.vmid);
    let config = world.config(vm)?;
    let iface = params.interface.as_str();
    let mut bridges = None;
    // Another writer between our read and our write: plan again from what it left.
    config::retry_on_conflict(&api, vm, config, |config| {
        let plan = plan(config, vm.status == "running", &params)?;
        guard(&privileges, vm, config, iface, &plan.action)?;
        let write = apply::write(vm, config, iface, &plan.action);
        world.writes(write.iter().map(|(method, path, form)| (*method, path, form)))?;
        // A bridge the node lacks: refused before the write, and also when an earlier run left
        // the NIC pending on it (check mode alike: the node's bridges are only read, after the
        // privileges: a user who may not change the VM may not see its bridges either).
        if let (Some(bridge), true) = (&params.bridge, matches!(plan.action, Action::Set(_)) || plan.pending) {
            if bridges.is_none() {
                bridges = Some(node_bridges(&api, &vm.node)?);
            }
            require_bridge(bridges.as_deref().unwrap_or_default(), bridge, &vm.node, "bridge")?;
        }
        let (after, pending) = if ctx.check_mode {
            if plan.action != Action::None {
                world.record_config(vm, &config.with_change(iface, plan.after.as_deref(), plan.pending))?;
            }
            (plan.after.clone(), plan.pending)
        } else {
            apply::apply(&api, vm, config, iface, &plan.action)?
        };
        Ok(outcome(ctx, vm, &params, &plan, after, pending))
    })
}

/// What must hold before the write, in check and real runs alike (so both fail with the same
/// message, and nothing is written): the privileges it needs (qemu-server `update_vm_api`:
/// one `VM.Config.*` on the VM, `VM.Config.Network`, `SDN.Use` on the bridge), PVE's API schema
/// on the write as it will be sent, then the VM's lock (docs/pve-semantics.md §27, §28, §33).
fn guard(privileges: &Privileges, vm: &VmResource, config: &VmConfig, iface: &str, action: &Action) -> Result<()> {
    let Some((method, path, body)) = apply::write(vm, config, iface, action) else { return Ok(()) };
    let (set, delete) = match action {
        Action::Delete => (Vec::new(), vec![iface.to_string()]),
        _ => (body.iter().filter(|(k, _)| k == iface).cloned().collect(), Vec::new()),
    };
    privileges.require(&permissions::update(vm.vmid, &config.effective(), &set, &delete))?;
    schema::check_write(method, &path, &body)?;
    // the VM's state (its lock) as update_vm_api checks it, inside the handler (pve::state)
    let facts = Facts { vmid: vm.vmid, config, running: vm.status == "running", skiplock: false };
    match state::refusal(Op::Config { deletes: &delete, force: false }, &facts) {
        Some(words) => Err(Error::failed(format!("{}: {words}", apply::context(vm.vmid, iface, action)))),
        None => Ok(()),
    }
}

/// The result of the task: the plan's change, and the NIC as it is after it (read back, or
/// predicted in check mode).
fn outcome(
    ctx: &mut Context,
    vm: &VmResource,
    params: &Params,
    plan: &Plan,
    after: Option<String>,
    pending: bool,
) -> Outcome {
    let iface = params.interface.as_str();
    let changed = plan.action != Action::None;
    let diff = Diff::text(
        &line(iface, plan.before.as_deref()),
        &line(iface, after.as_deref()),
        &format!("VM {} {iface} (before)", vm.vmid),
        &format!("VM {} {iface} (after)", vm.vmid),
    );
    if pending {
        ctx.warn(format!(
            "the change to {iface} of VM {} is pending: Proxmox VE applies it when the VM is next started (it could not be hot-plugged)",
            vm.vmid
        ));
    }
    let msg = match (&plan.action, params.state) {
        (Action::Set(_), _) => format!("Nic {iface} updated on VM with vmid {}", vm.vmid),
        (Action::Delete, _) => format!("Nic {iface} deleted on VM with vmid {}", vm.vmid),
        (Action::None, State::Present) if pending => format!(
            "Nic {iface} on VM with vmid {} is as the task asks, but Proxmox VE has not applied it: the change is pending until the VM is next started",
            vm.vmid
        ),
        (Action::None, State::Present) => format!("Nic {iface} unchanged on VM with vmid {}", vm.vmid),
        (Action::None, State::Absent) => format!("Nic {iface} does not exist on VM with vmid {}", vm.vmid),
    };
    let mac = after
        .as_deref()
        .and_then(|a| PropertyString::parse_lenient(&NET, a).ok())
        .and_then(|n| n.get("macaddr").map(str::to_string));
    Outcome::new(changed, msg)
        .with("vmid", vm.vmid)
        .with("interface", iface)
        .with("mac", mac.map(Value::String).unwrap_or(Value::Null))
        .with("config", after.map(Value::String).unwrap_or(Value::Null))
        .with("pending", pending)
        .with("reboot_required", pending)
        .with_diff(Some(diff))
}

fn line(iface: &str, value: Option<&str>) -> String {
    value.map(|v| format!("{iface}: {v}\n")).unwrap_or_default()
}

#[cfg(test)]
mod tests;
