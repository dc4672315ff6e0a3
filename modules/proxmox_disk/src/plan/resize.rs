//! The plan of `state: resized`: grow the applied drive, and keep a pending change of the same volume with the new size. Pure.

use module_utils::pve::propstring::{format_size, parse_size, PropertyString};
use module_utils::{Error, Result};

use super::{missing, parse_drive, Action, Facts, Plan};
use crate::params::{Params, SizeRequest};

/// A drive whose pending change keeps its volume (only options differ): (applied, pending).
///
/// Qemu.pm resize_vm grows the volume and rewrites the applied drive (`$conf->{$disk}`) only;
/// the pending value keeps its old `size=` and replaces the applied one at the next start
/// (QemuServer.pm vmconfig_apply_pending), so PVE alone would show the old size of a grown
/// volume from then on. That is safe to follow when the pending value names the same volume:
/// the module resizes as PVE does, then writes the pending value again with the new size. A
/// pending change that replaces or deletes the drive is still refused (`applied` in `plan`):
/// the volume resized would not be the one the VM uses after its next start.
pub(super) fn resizable_pending(params: &Params, facts: &Facts) -> Result<Option<(PropertyString, PropertyString)>> {
    let disk = params.disk.as_str();
    let (Some(applied), Some(pending)) = (facts.config.current.get(disk), facts.config.pending.get(disk)) else {
        return Ok(None);
    };
    if !facts.config.is_pending(disk) || facts.config.pending_delete.contains_key(disk) {
        return Ok(None);
    }
    let (applied, pending) = (parse_drive(disk, applied)?, parse_drive(disk, pending)?);
    if applied.get("file") != pending.get("file") || applied.get("media") == Some("cdrom") {
        return Ok(None);
    }
    Ok(Some((applied, pending)))
}

pub(super) fn plan_resize_with_pending(
    params: &Params,
    facts: &Facts,
    applied: PropertyString,
    pending: PropertyString,
) -> Result<Plan> {
    let disk = params.disk.as_str();
    let mut plan = plan_resize(params, facts, Some(applied))?;
    let Action::Resize(size) = plan.action.clone() else {
        return Ok(plan);
    };
    let grown = plan.after.current.get(disk).and_then(|v| parse_drive(disk, v).ok());
    let Some(new_size) = grown.as_ref().and_then(|d| d.get("size")).map(str::to_string) else {
        return Err(Error::Internal(format!("the planned resize of {disk} has no size")));
    };
    let mut pending = pending;
    pending.set("size", &new_size);
    let pending = pending.to_string();
    plan.after.pending.insert(disk.to_string(), pending.clone());
    plan.action = Action::ResizeKeepingPending { size, pending };
    plan.pending = true;
    Ok(plan)
}

pub(super) fn plan_resize(params: &Params, facts: &Facts, current: Option<PropertyString>) -> Result<Plan> {
    let disk = params.disk.as_str();
    let vmid = facts.vmid;
    let current = current.ok_or_else(|| missing(params, facts))?;
    if current.get("media") == Some("cdrom") {
        return Err(Error::failed(format!("{disk} of VM {vmid} is a CD-ROM drive: it cannot be resized")));
    }
    let have = current.get("size").and_then(|s| parse_size(s).ok()).ok_or_else(|| {
        Error::failed(format!("the size of {disk} of VM {vmid} is not known to Proxmox VE (no size= in its config)"))
    })?;
    let mut warnings = Vec::new();
    let (want, send) = match params.size {
        Some(SizeRequest::Absolute(want)) => {
            if want < have {
                return Err(Error::failed(format!(
                    "shrinking disks is not supported: {disk} of VM {vmid} is {}, the task asks for {}",
                    format_size(have),
                    format_size(want)
                )));
            }
            if want == have {
                return Ok(Plan::unchanged(facts.config, format!("Disk {disk} is already {} size", format_size(have))));
            }
            (want, format_size(want))
        }
        Some(SizeRequest::Grow { bytes: 0, ref text }) => {
            return Ok(Plan::unchanged(
                facts.config,
                format!("Disk {disk} stays {} size: size +{text} grows nothing", format_size(have)),
            ));
        }
        Some(SizeRequest::Grow { bytes, ref text }) => {
            warnings.push(format!(
                "size +{text} grows {disk} every time the task runs; give an absolute size to make it idempotent"
            ));
            (have + bytes, format!("+{}", format_size(bytes)))
        }
        None => return Err(Error::args("state is resized but all of the following are missing: size")),
    };
    let mut resized = current.clone();
    resized.set("size", &format_size(want));
    let value = resized.to_string();
    // Resize grows the volume live and rewrites the applied drive at once, running or not (§10).
    let mut after = facts.config.clone();
    after.current.insert(disk.to_string(), value);
    Ok(Plan {
        action: Action::Resize(send),
        msg: format!("Disk {disk} resized in VM {vmid}"),
        warnings,
        after,
        target_after: None,
        pending: facts.config.is_pending(disk),
        unused: None,
    })
}
