//! proxmox_disk: one drive of a VM through its whole lifecycle, never losing data by surprise.
//!
//! `main` wires the common shape: `params` (the validated task) → the reads (through
//! `check::world`) → `plan` (pure: config + task → the one write and the config after it) →
//! `guard`, in check and real runs alike (the privileges the writes need, PVE's API schema on
//! each planned write, the storage or volume they use) → in check mode the prediction is
//! recorded for the run's later tasks, otherwise `apply` makes the write, waits for its task and
//! reads the result back.

mod apply;
mod params;
mod plan;
mod spec;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use module_utils::ansible::diff::Diff;
use module_utils::check::unknown::KNOWN_AFTER_APPLY;
use module_utils::check::world::World;
use module_utils::connect::{connect, connection};
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::devices::{config_text, volume_storage, Disk};
use module_utils::pve::permissions::{self, Need, Privileges};
use module_utils::pve::preflight::{Content, Preflight};
use module_utils::pve::propstring::parse_size;
use module_utils::pve::request::form;
use module_utils::pve::resources::VmResource;
use module_utils::pve::schema;
use module_utils::pve::state::{self, Facts as VmFacts, Op};
use module_utils::pve::volume::Volume;
use module_utils::{Error, Result};
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
    let authid = connection(&ctx.params)?.authid();
    let api = connect(ctx)?;
    let checks = Checks { privileges: Privileges::new(&api, &authid), preflight: Preflight::new(&api) };
    let world = World::new(&api, ctx.predictions.clone())
        .saving(ctx.saved.clone())
        .waiting_up_to(Duration::from_secs(params.timeout));
    let vms = world.vms_for_task(params.vmid, params.name.as_deref())?;
    let vm = world.qemu_vm(&vms, params.vmid, params.name.as_deref())?;
    ctx.identify("vmid", vm.vmid);
    let config = world.config(vm)?;
    // Another writer between our read and our write: plan again from what it left.
    config::retry_on_conflict(&api, vm, config, |config| converge(ctx, &world, &checks, &vms, vm, config, &params))
}

/// The checks before a write, with the reads they share across the tries of one run.
struct Checks<'a> {
    privileges: Privileges<'a>,
    preflight: Preflight<'a>,
}

/// What must hold before the plan's writes, in check and real runs alike (so both fail with the
/// same message, and nothing is written): the privileges they need (qemu-server checks the
/// method's own privileges before anything else), PVE's API schema on each write as it will be
/// sent, the VM's state (`vm_state`), then the storage or volume they use
/// (docs/pve-semantics.md §26, §27, §28, §33).
fn guard(checks: &Checks, vm: &VmResource, facts: &Facts, params: &Params, plan: &Plan) -> Result<()> {
    let disk = params.disk.as_str();
    let config = facts.config;
    let needs: Vec<Need> = match &plan.action {
        Action::None => return Ok(()),
        Action::SetDrive(value) => {
            permissions::update(vm.vmid, &config.effective(), &form([(disk, value.as_str())]), &[])
        }
        Action::Resize(_) => permissions::resize(vm.vmid),
        Action::ResizeKeepingPending { pending, .. } => {
            let mut needs = permissions::resize(vm.vmid);
            needs.extend(permissions::update(vm.vmid, &config.effective(), &form([(disk, pending.as_str())]), &[]));
            needs
        }
        Action::Unlink { .. } => permissions::unlink(vm.vmid),
        Action::Move(_) => match (params.target_vmid, params.target_storage.as_deref()) {
            (Some(target), _) => {
                let volume = config.get(disk).and_then(|d| d.split(',').next()).unwrap_or("");
                permissions::reassign_disk(vm.vmid, target, volume_storage(volume).unwrap_or(""))
            }
            (None, Some(storage)) => permissions::move_disk(vm.vmid, storage),
            (None, None) => Vec::new(),
        },
    };
    checks.privileges.require(&needs)?;
    for (method, path, body) in apply::writes(vm, disk, &plan.action, config.digest.as_deref()) {
        schema::check_write(method, &path, &body)?;
    }
    vm_state(checks, vm, facts, params, &plan.action)?;
    let (node, preflight) = (vm.node.as_str(), &checks.preflight);
    match (&plan.action, plan.allocates_on()) {
        (Action::Move(_), Some(storage)) => {
            preflight.move_target(node, storage, "target_storage")?;
            // qemu-server move_vm_disk allocates inside its task: PVE's words carry its prefix
            allocation_fits(preflight, node, facts, params, storage, "target_storage", "storage migration failed: ")
        }
        (Action::SetDrive(_), Some(storage)) => {
            preflight.storage(node, storage, Content::Images, "storage")?;
            allocation_fits(preflight, node, facts, params, storage, "storage", "")?;
            match &params.import_from {
                Some(source) => preflight.volume(node, source, "import_from"),
                None => Ok(()),
            }
        }
        (Action::SetDrive(_), None) => match &params.iso_image {
            Some(iso) => preflight.volume(node, iso, "iso_image"),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// What the VM's state makes PVE refuse of the action (`pve::state`: the lock, protection of a
/// drive removed, a template's base volume that linked clones still use; the reassign's target
/// VM's lock too), in check and real runs alike, with the context of the real run's failure.
fn vm_state(checks: &Checks, vm: &VmResource, facts: &Facts, params: &Params, action: &Action) -> Result<()> {
    let disk = [params.disk.clone()];
    let op = match action {
        Action::None => return Ok(()),
        Action::SetDrive(_) => Op::Config { deletes: &[], force: false },
        Action::Resize(_) | Action::ResizeKeepingPending { .. } => Op::Resize,
        Action::Unlink { force } => Op::Config { deletes: &disk, force: *force },
        Action::Move(_) if params.target_vmid.is_some() => Op::Reassign { unused: params.disk.starts_with("unused") },
        Action::Move(_) => Op::MoveDisk,
    };
    let context = apply::context(vm.vmid, &params.disk, action);
    let refuse = |words: String| Error::failed(format!("{context}: {words}"));
    let running = vm.status == "running";
    let state = |vmid, config| VmFacts { vmid, config, running, skiplock: false };
    if let Some(words) = state::refusal(op, &state(vm.vmid, facts.config)) {
        return Err(refuse(words));
    }
    if let (Op::Reassign { .. }, Some((target, config))) = (op, facts.target) {
        let target = VmFacts { running: false, ..state(target, config) };
        if let Some(words) = state::refusal(op, &target) {
            return Err(refuse(words));
        }
    }
    // Qemu.pm update_vm_api frees a removed drive's volume with `force` (try_deallocate_drive,
    // Storage.pm vdisk_free), which refuses a base volume a linked clone uses; a running VM only
    // frees it at its next stop, so only a stopped one (a template) is refused now
    let volume = facts.config.get(&params.disk).and_then(|d| Disk::parse(&params.disk, d)).and_then(|d| d.volume);
    if let (Action::Unlink { force: true }, Some(volid), false) = (action, volume, running) {
        let storage = volid.split(':').next().unwrap_or_default();
        if Volume::parse(&volid).is_some_and(|v| v.is_base && v.owner == Some(vm.vmid))
            && state::base_in_use(&volid, checks.preflight.volumes_on(&vm.node, storage)?.keys())
        {
            return Err(refuse(state::base_volume_in_use(&params.disk, &volid)));
        }
    }
    Ok(())
}

/// The new volume fits on `storage` where allocation reserves its size (§22.4, §26.7): its size
/// as planned with storage.cfg (a new disk's, an EFI or TPM volume's fixed one, the moved disk's;
/// an import's is not known before its source is listed), and, only to word a refusal, its name
/// as PVE would give it (which `find_free_diskname` takes from the storage's volumes).
fn allocation_fits(
    preflight: &Preflight,
    node: &str,
    facts: &Facts,
    params: &Params,
    storage: &str,
    option: &str,
    during: &str,
) -> Result<()> {
    let storages = preflight.storages()?;
    let drive = |listed: &BTreeMap<String, Option<u64>>| -> Result<String> {
        let planned = plan::plan(params, &Facts { storages: &storages, listed, ..facts.clone() })?;
        Ok(planned.after.get(&params.disk).unwrap_or_default().to_string())
    };
    let size = drive(facts.listed)?;
    let Some(bytes) = size.split(',').find_map(|p| p.strip_prefix("size=")).and_then(|t| parse_size(t).ok()) else {
        return Ok(());
    };
    preflight.allocation(node, storage, bytes, option, during, &|| {
        let listed = preflight.volumes_on(node, storage)?;
        Ok(drive(&listed)?.split(',').next().unwrap_or_default().to_string())
    })
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
    guard(checks, vm, &facts, params, &plan)?;
    let writes = apply::writes(vm, &params.disk, &plan.action, config.digest.as_deref());
    world.writes(writes.iter().map(|(method, path, form)| (*method, path, form)))?;
    // What PVE names a new volume and the size it fills in for an existing one (an ISO, an
    // import source) come from storage.cfg and the storages' volumes: the check run shows them,
    // so it reads those (once the checks let it) and plans again with what they hold.
    let (listed, storages);
    if ctx.check_mode && plan.action != Action::None {
        if plan.allocates_on().is_some() {
            storages = checks.preflight.storages()?;
            facts.storages = &storages;
        }
        let source = params.iso_image.as_deref().or(params.import_from.as_deref()).and_then(volume_storage);
        let storages: BTreeSet<&str> = plan.allocates_on().into_iter().chain(source).collect();
        let mut volumes = BTreeMap::new();
        for storage in storages {
            volumes.extend(checks.preflight.volumes_on(&vm.node, storage)?.iter().map(|(k, v)| (k.clone(), *v)));
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
    // Where the drive is after the run: this VM, or the target of a reassign.
    let (drive_config, drive_key) = match (&target_after, &params.target_vmid) {
        (Some(t), Some(_)) => (t, params.target_disk.clone().unwrap_or_else(|| params.disk.clone())),
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
