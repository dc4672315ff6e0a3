//! proxmox_disk's I/O after the plan: the writes it makes (also checked in check mode), each sent and its task waited for, the read back.

use std::time::Duration;

use module_utils::pve::client::Api;

use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::request::{form, ApiPath, Form, Method};
use module_utils::pve::resources::VmResource;
use module_utils::pve::tasks::{as_upid, Waiter};
use module_utils::pve::transient::again_on_lock_timeout;
use module_utils::Result;

use crate::params::Params;
use crate::plan::{Action, Plan};

/// What PVE holds after the write.
pub struct Applied {
    pub after: VmConfig,
    pub target_after: Option<VmConfig>,
    pub unused: Option<String>,
    pub pending: bool,
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
            warnings: Vec::new(),
        }
    }
}

/// One write as sent: method, path, form.
pub type Write = (Method, ApiPath, Form);

/// The writes of `action`, in order, each with `digest` (the read it was planned from). The
/// second write of `ResizeKeepingPending` is sent with the digest of the config read after the
/// resize; `digest` stands in for it here, which the schema check does not tell apart (the
/// client, which has not seen that form checked, checks it again as it sends it).
pub fn writes(vm: &VmResource, disk: &str, action: &Action, digest: Option<&str>) -> Vec<Write> {
    let with_digest = |mut f: Form| {
        if let Some(d) = digest {
            f.push(("digest".into(), d.to_string()));
        }
        f
    };
    let config = || vm.path().join(["config"]);
    let resize =
        |size: &str| (Method::Put, vm.path().join(["resize"]), with_digest(form([("disk", disk), ("size", size)])));
    match action {
        Action::None => Vec::new(),
        Action::SetDrive(value) => vec![(Method::Post, config(), with_digest(form([(disk, value.as_str())])))],
        Action::Resize(size) => vec![resize(size)],
        Action::ResizeKeepingPending { size, pending } => {
            vec![resize(size), (Method::Post, config(), with_digest(form([(disk, pending.as_str())])))]
        }
        Action::Unlink { force } => vec![(
            Method::Put,
            vm.path().join(["unlink"]),
            form([("idlist", disk), ("force", if *force { "1" } else { "0" })]),
        )],
        Action::Move(f) => vec![(Method::Post, vm.path().join(["move_disk"]), with_digest(f.clone()))],
    }
}

/// What a failure of `action`'s writes says the module was doing.
pub fn context(vmid: u64, disk: &str, action: &Action) -> String {
    match action {
        Action::SetDrive(_) => format!("Unable to create/update disk {disk} in VM {vmid}"),
        Action::Resize(_) | Action::ResizeKeepingPending { .. } => format!("Failed to resize disk {disk} in VM {vmid}"),
        Action::Unlink { .. } => format!("Unable to remove disk {disk} from VM {vmid}"),
        Action::Move(_) | Action::None => format!("Failed to move disk {disk} in VM {vmid}"),
    }
}

/// Make the plan's writes (guarded by the digest of `config`, the read it was planned from),
/// wait for their tasks, read the result back. A plan with nothing to write reads nothing.
pub fn apply(
    api: &dyn Api,
    vm: &VmResource,
    config: &VmConfig,
    params: &Params,
    plan: &Plan,
    target: Option<&VmResource>,
) -> Result<Applied> {
    let action = &plan.action;
    let disk = params.disk.as_str();
    let mut writes = writes(vm, disk, action, config.digest.as_deref()).into_iter();
    let Some((method, path, body)) = writes.next() else { return Ok(Applied::predicted(plan)) };
    let waiter = Waiter::new(Duration::from_secs(params.timeout));
    let context = context(vm.vmid, disk, action);
    let mut warnings = Vec::new();
    let second = writes.next();
    // Each write with its task: a task that failed on a lock timeout before any change is sent
    // again within the task's `timeout` (pve::transient, docs/pve-semantics.md §55), the second
    // write of a resize keeping a pending change too (its digest is the resize's, §60).
    let budget = Duration::from_secs(params.timeout);
    let send = |method: Method, path: &ApiPath, body: &Form, context: &str| {
        again_on_lock_timeout(api.journal(), budget, || {
            let answer = api.call(method, path, body).map_err(|e| e.context(context))?;
            as_upid(&answer).map(|upid| waiter.wait(api, upid)).transpose()
        })
    };
    let done = send(method, &path, &body, &context)?;
    warnings.extend(done.map(|d| d.warnings).unwrap_or_default());
    if let Some((method, path, mut body)) = second {
        // The resize of a drive with a pending change: then write the pending value again with
        // the new size, guarded by the digest of the config the resize left.
        let resized = config::read(api, vm)?;
        body.retain(|(k, _)| k != "digest");
        if let Some(d) = &resized.digest {
            body.push(("digest".into(), d.clone()));
        }
        let context = format!(
            "disk {disk} of VM {} was resized, but its pending change still carries the old size (it would come back at the next start)",
            vm.vmid
        );
        let done = send(method, &path, &body, &context)?;
        warnings.extend(done.map(|d| d.warnings).unwrap_or_default());
    }
    read_back(api, vm, config, disk, target, warnings)
}

/// The VM's config (and a move's target's) as the writes left it, and the `unusedN` they made.
fn read_back(
    api: &dyn Api,
    vm: &VmResource,
    config: &VmConfig,
    disk: &str,
    target: Option<&VmResource>,
    warnings: Vec<String>,
) -> Result<Applied> {
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
