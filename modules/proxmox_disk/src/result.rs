//! proxmox_disk's result: the task's `Outcome` (the drive, its volume and size, the diff) from the plan and what apply gave back (or the plan's prediction in check mode).

use module_utils::ansible::diff::Diff;
use module_utils::check::unknown::KNOWN_AFTER_APPLY;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::config_text;
use module_utils::pve::propstring::parse_size;
use module_utils::pve::resources::VmResource;
use serde_json::{json, Map, Value};

use crate::apply::Applied;
use crate::params::{Params, State};
use crate::plan::{self, Action, Plan};

/// The result of the task: its warnings, the drive where it is after the run (this VM, or the
/// target of a reassign), its volume and size, and the diff of the drive's keys. `config`: the
/// config the plan was made from; `done`: what apply gave back, or the plan's prediction.
pub fn outcome(
    ctx: &mut Context,
    vm: &VmResource,
    config: &VmConfig,
    params: &Params,
    plan: &Plan,
    done: Applied,
) -> Outcome {
    let changed = plan.action != Action::None;
    for w in &done.warnings {
        ctx.warn(w.clone());
    }
    let Applied { after, target_after, unused, pending, .. } = done;
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
    // Where the drive is after the run: this VM, or the target of a reassign (`target_vmid`
    // counts only with state moved: another state leaves the drive where it is).
    let (drive_config, drive_key) = match (&target_after, &params.target_vmid) {
        (Some(t), Some(_)) if params.state == State::Moved => {
            (t, params.target_disk.clone().unwrap_or_else(|| params.disk.clone()))
        }
        _ => (&after, params.disk.clone()),
    };
    let drive = drive_config.get(&drive_key).map(str::to_string);
    let volume = drive.as_deref().and_then(|d| d.split(',').next()).map(str::to_string);
    let size_text =
        drive.as_deref().and_then(|d| d.split(',').find_map(|p| p.strip_prefix("size="))).map(str::to_string);
    // A size known only after apply keeps the result's shape, marked in both places.
    let size = match size_text {
        Some(t) if t == KNOWN_AFTER_APPLY => json!({"text": t, "bytes": KNOWN_AFTER_APPLY}),
        Some(t) => json!({"text": t, "bytes": parse_size(&t).ok()}),
        None => Value::Null,
    };
    let mut outcome = Outcome::new(changed, plan.msg.clone())
        .with("vmid", vm.vmid)
        .with("disk", params.disk.clone())
        .with("volume", volume.map(Value::String).unwrap_or(Value::Null))
        .with("size", size)
        .with("config", drive.map(Value::String).unwrap_or(Value::Null))
        // the one type of `pending` in every module: the keys that wait (docs/common.rs)
        .with("pending", if pending { json!([params.disk]) } else { json!([]) })
        .with("reboot_required", pending)
        .with_diff(Some(diff));
    if let Some(u) = unused {
        outcome = outcome.with("unused", u);
    }
    outcome
}

fn view(config: &VmConfig, disk: &str) -> Map<String, Value> {
    plan::diff_view(config, disk).into_iter().map(|(k, v)| (k, Value::String(v))).collect()
}
