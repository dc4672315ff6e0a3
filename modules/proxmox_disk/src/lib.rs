//! proxmox_disk: one drive of a VM through its whole lifecycle, never losing data by surprise.
//!
//! Pipeline: `Params::from_spec` → `plan::plan` (pure: config + task → the one write and the
//! config after it) → `apply` (the write, the wait for its task, the read back). Check mode
//! returns the plan's prediction and writes nothing.

mod params;
mod plan;
mod spec;

use std::time::Duration;

use module_utils::ansible::diff::Diff;
use module_utils::check::predictions;
use module_utils::connect::connect;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::client::{form, Api};
use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::devices::config_text;
use module_utils::pve::propstring::parse_size;
use module_utils::pve::resources::{require, VmResource};
use module_utils::pve::tasks::{as_upid, Waiter};
use module_utils::{Error, Result};
use serde_json::{json, Map, Value};

pub use params::{Create, Params, SizeRequest, State};
pub use plan::{plan, predict_volume, Action, Plan, World};
pub use spec::SPEC;

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let params = Params::from_spec(&ctx.params)?;
    if let Some(id) = params.vmid {
        ctx.identify("vmid", id);
    }
    let api = connect(ctx)?;
    let plan_dir = ctx.predictions.clone();
    let (vms, storages) = predictions::cluster_vms_and_storages(&api, plan_dir.as_ref())?;
    let vm = require(&vms, params.vmid, params.name.as_deref())?;
    ctx.identify("vmid", vm.vmid);
    if vm.kind != "qemu" {
        return Err(Error::failed(format!("VM with vmid {} is a container ({}), not a QEMU VM", vm.vmid, vm.kind)));
    }
    let config = predictions::read_config(&api, vm, plan_dir.as_ref())?;
    let node_storages: Vec<_> = storages.into_iter().filter(|s| s.node == vm.node).collect();
    // Another writer between our read and our write: plan again from what it left.
    config::retry_on_conflict(&api, vm, config, |config| converge(ctx, &api, &vms, vm, config, &node_storages, &params))
}

/// Plan from `config` and, outside check mode, make the write.
fn converge(
    ctx: &mut Context,
    api: &dyn Api,
    vms: &[VmResource],
    vm: &VmResource,
    config: &VmConfig,
    node_storages: &[module_utils::pve::resources::StorageResource],
    params: &Params,
) -> Result<Outcome> {
    let plan_dir = ctx.predictions.clone();
    let target = match params.target_vmid {
        Some(t) => match module_utils::pve::resources::resolve(vms, Some(t), None)? {
            Some(tvm) => Some((tvm.clone(), predictions::read_config(api, tvm, plan_dir.as_ref())?)),
            None => None,
        },
        None => None,
    };
    let world = World {
        vmid: vm.vmid,
        running: vm.status == "running",
        config,
        storages: node_storages,
        target: target.as_ref().map(|(t, c)| (t.vmid, c)),
    };
    let plan = plan(params, &world)?;
    for w in &plan.warnings {
        ctx.warn(w.clone());
    }
    let changed = plan.action != Action::None;
    let (after, target_after, unused, pending, known) = if ctx.check_mode || !changed {
        if ctx.check_mode && changed {
            predictions::record_config(plan_dir.as_ref(), vm, &plan.after)?;
            if let (Some((tvm, _)), Some(t_after)) = (&target, &plan.target_after) {
                predictions::record_config(plan_dir.as_ref(), tvm, t_after)?;
            }
        }
        (plan.after.clone(), plan.target_after.clone(), plan.unused.clone(), plan.pending, plan.volume_known)
    } else {
        let done = apply(api, vm, config, params, &plan.action, target.as_ref().map(|(t, _)| t))?;
        for w in &done.warnings {
            ctx.warn(w.clone());
        }
        (done.after, done.target_after, done.unused, done.pending, true)
    };
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

/// What PVE holds after the write.
struct Applied {
    after: VmConfig,
    target_after: Option<VmConfig>,
    unused: Option<String>,
    pending: bool,
    warnings: Vec<String>,
}

/// Make the write, wait for its task, read the result back.
fn apply(
    api: &dyn Api,
    vm: &VmResource,
    config: &VmConfig,
    params: &Params,
    action: &Action,
    target: Option<&VmResource>,
) -> Result<Applied> {
    let disk = params.disk.as_str();
    let waiter = Waiter::new(Duration::from_secs(params.timeout));
    let digest = config.digest.clone();
    let with_digest = |mut f: module_utils::pve::client::Form| {
        if let Some(d) = &digest {
            f.push(("digest".into(), d.clone()));
        }
        f
    };
    let mut warnings = Vec::new();
    let answer = match action {
        Action::None => Value::Null,
        Action::SetDrive(value) => api
            .post(&vm.path().join(["config"]), &with_digest(form([(disk, value.as_str())])))
            .map_err(|e| e.context(&format!("Unable to create/update disk {disk} in VM {}", vm.vmid)))?,
        Action::Resize(size) => api
            .put(&vm.path().join(["resize"]), &with_digest(form([("disk", disk), ("size", size.as_str())])))
            .map_err(|e| e.context(&format!("Failed to resize disk {disk} in VM {}", vm.vmid)))?,
        Action::ResizeKeepingPending { size, pending } => {
            let context = format!("Failed to resize disk {disk} in VM {}", vm.vmid);
            let answer = api
                .put(&vm.path().join(["resize"]), &with_digest(form([("disk", disk), ("size", size.as_str())])))
                .map_err(|e| e.context(&context))?;
            if let Some(upid) = as_upid(&answer) {
                warnings.extend(waiter.wait(api, upid).map_err(|e| e.context(&context))?.warnings);
            }
            // The resize changed the config: its new digest guards the second write.
            let resized = config::read(api, vm)?;
            let mut body = form([(disk, pending.as_str())]);
            if let Some(d) = &resized.digest {
                body.push(("digest".into(), d.clone()));
            }
            api.post(&vm.path().join(["config"]), &body).map_err(|e| {
                e.context(&format!(
                    "disk {disk} of VM {} was resized, but its pending change still carries the old size (it would come back at the next start)",
                    vm.vmid
                ))
            })?
        }
        Action::Unlink { force } => api
            .put(&vm.path().join(["unlink"]), &form([("idlist", disk), ("force", if *force { "1" } else { "0" })]))
            .map_err(|e| e.context(&format!("Unable to remove disk {disk} from VM {}", vm.vmid)))?,
        Action::Move(f) => api
            .post(&vm.path().join(["move_disk"]), &with_digest(f.clone()))
            .map_err(|e| e.context(&format!("Failed to move disk {disk} in VM {}", vm.vmid)))?,
    };
    if let Some(upid) = as_upid(&answer) {
        let done = waiter.wait(api, upid)?;
        warnings.extend(done.warnings);
    }
    let after = config::read(api, vm)?;
    let target_after = match target {
        Some(t) => Some(config::read(api, t)?),
        None => None,
    };
    // The unusedN that holds the volume this run took out of use.
    let before_unused: Vec<&String> =
        config.current.iter().filter(|(k, _)| k.starts_with("unused")).map(|(_, v)| v).collect();
    let unused = after
        .current
        .iter()
        .find(|(k, v)| k.starts_with("unused") && !before_unused.contains(v))
        .map(|(k, _)| k.clone());
    let pending = after.is_pending(disk);
    Ok(Applied { after, target_after, unused, pending, warnings })
}

#[cfg(test)]
mod tests;
