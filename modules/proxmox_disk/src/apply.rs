//! proxmox_disk's I/O after the plan: the one write (or resize then write), the wait for its task, the read back.

use std::time::Duration;

use module_utils::pve::client::{form, Api, Form};
use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::resources::VmResource;
use module_utils::pve::tasks::{as_upid, Waiter};
use module_utils::Result;
use serde_json::Value;

use crate::params::Params;
use crate::plan::{Action, Plan};

/// What PVE holds after the write.
pub struct Applied {
    pub after: VmConfig,
    pub target_after: Option<VmConfig>,
    pub unused: Option<String>,
    pub pending: bool,
    /// Whether the drive's volume is known (always, once read back).
    pub volume_known: bool,
    pub warnings: Vec<String>,
}

impl Applied {
    /// The plan's prediction, for check mode and for a plan with nothing to write.
    pub fn predicted(plan: &Plan) -> Applied {
        Applied {
            after: plan.after.clone(),
            target_after: plan.target_after.clone(),
            unused: plan.unused.clone(),
            pending: plan.pending,
            volume_known: plan.volume_known,
            warnings: Vec::new(),
        }
    }
}

/// Make the plan's write (guarded by the digest of `config`, the read it was planned from),
/// wait for its task, read the result back. A plan with nothing to write reads nothing.
pub fn apply(
    api: &dyn Api,
    vm: &VmResource,
    config: &VmConfig,
    params: &Params,
    plan: &Plan,
    target: Option<&VmResource>,
) -> Result<Applied> {
    let action = &plan.action;
    if *action == Action::None {
        return Ok(Applied::predicted(plan));
    }
    let disk = params.disk.as_str();
    let waiter = Waiter::new(Duration::from_secs(params.timeout));
    let digest = config.digest.clone();
    let with_digest = |mut f: Form| {
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
    Ok(Applied { after, target_after, unused, pending, volume_known: true, warnings })
}
