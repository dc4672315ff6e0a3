//! proxmox_disk: one drive of a VM through its whole lifecycle, never losing data by surprise.
//!
//! `main` wires the common shape: `params` (the validated task) → the reads (through
//! `check::world`) → `plan` (pure: config + task → the one write and the config after it) →
//! in check mode the prediction is recorded for the run's later tasks, otherwise `apply` makes
//! the write, waits for its task and reads the result back.

mod apply;
mod params;
mod plan;
mod spec;

use module_utils::ansible::diff::Diff;
use module_utils::check::world::{qemu_vm, World};
use module_utils::connect::connect;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::devices::config_text;
use module_utils::pve::propstring::parse_size;
use module_utils::pve::resources::{resolve, StorageResource, VmResource};
use module_utils::Result;
use serde_json::{json, Map, Value};

use apply::Applied;
pub use params::{Create, Params, SizeRequest, State};
pub use plan::{plan, predict_volume, Action, Facts, Plan};
pub use spec::SPEC;

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let params = Params::from_spec(&ctx.params)?;
    if let Some(id) = params.vmid {
        ctx.identify("vmid", id);
    }
    let api = connect(ctx)?;
    let world = World::new(&api, ctx.predictions.clone());
    let (vms, storages) = world.vms_and_storages()?;
    let vm = qemu_vm(&vms, params.vmid, params.name.as_deref())?;
    ctx.identify("vmid", vm.vmid);
    let config = world.config(vm)?;
    let node_storages: Vec<_> = storages.into_iter().filter(|s| s.node == vm.node).collect();
    // Another writer between our read and our write: plan again from what it left.
    config::retry_on_conflict(&api, vm, config, |config| {
        converge(ctx, &world, &vms, vm, config, &node_storages, &params)
    })
}

/// Read what a reassign needs, plan from `config`, then record the prediction (check mode) or
/// make the write.
fn converge(
    ctx: &mut Context,
    world: &World,
    vms: &[VmResource],
    vm: &VmResource,
    config: &VmConfig,
    node_storages: &[StorageResource],
    params: &Params,
) -> Result<Outcome> {
    let target = match params.target_vmid {
        Some(t) => match resolve(vms, Some(t), None)? {
            Some(tvm) => Some((tvm.clone(), world.config(tvm)?)),
            None => None,
        },
        None => None,
    };
    let facts = Facts {
        vmid: vm.vmid,
        running: vm.status == "running",
        config,
        storages: node_storages,
        target: target.as_ref().map(|(t, c)| (t.vmid, c)),
    };
    let plan = plan(params, &facts)?;
    for w in &plan.warnings {
        ctx.warn(w.clone());
    }
    let changed = plan.action != Action::None;
    let done = if ctx.check_mode {
        if changed {
            world.record_config(vm, &plan.after)?;
            if let (Some((tvm, _)), Some(t_after)) = (&target, &plan.target_after) {
                world.record_config(tvm, t_after)?;
            }
        }
        Applied::predicted(&plan)
    } else {
        apply::apply(world.api(), vm, config, params, &plan, target.as_ref().map(|(t, _)| t))?
    };
    for w in &done.warnings {
        ctx.warn(w.clone());
    }
    let Applied { after, target_after, unused, pending, volume_known: known, .. } = done;
    if pending {
        ctx.warn(format!(
            "the change to {} of VM {} is pending: Proxmox VE applies it when the VM is next started",
            params.disk, vm.vmid
        ));
    }
    let diff = Diff::config(
        Some(&config_text(&view(config, &params.disk))),
        Some(&config_text(&view(&after, &params.disk))),
        &format!("VM {} {}", vm.vmid, params.disk),
    );
    // Where the drive is after the run: this VM, or the target of a reassign.
    let (drive_config, drive_key) = match (&target_after, &params.target_vmid) {
        (Some(t), Some(_)) => (t, params.target_disk.clone().unwrap_or_else(|| params.disk.clone())),
        _ => (&after, params.disk.clone()),
    };
    let drive = drive_config.get(&drive_key).map(str::to_string);
    let volume = drive.as_deref().and_then(|d| d.split(',').next()).filter(|_| known).map(str::to_string);
    let size_text = drive
        .as_deref()
        .and_then(|d| d.split(',').find_map(|p| p.strip_prefix("size=")))
        .filter(|_| known)
        .map(str::to_string);
    let size = match size_text {
        Some(t) => json!({"text": t, "bytes": parse_size(&t).ok()}),
        None => Value::Null,
    };
    let mut outcome = Outcome::new(changed, plan.msg.clone())
        .with("vmid", vm.vmid)
        .with("disk", params.disk.clone())
        .with("volume", volume.map(Value::String).unwrap_or(Value::Null))
        .with("size", size)
        .with("config", drive.filter(|_| known).map(Value::String).unwrap_or(Value::Null))
        .with("pending", pending)
        .with("reboot_required", pending)
        .with_diff(Some(diff));
    if let Some(u) = unused {
        outcome = outcome.with("unused", u);
    }
    Ok(outcome)
}

fn view(config: &VmConfig, disk: &str) -> Map<String, Value> {
    plan::diff_view(config, disk).into_iter().map(|(k, v)| (k, Value::String(v))).collect()
}

#[cfg(test)]
mod tests;
