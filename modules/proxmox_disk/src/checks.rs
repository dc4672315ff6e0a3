//! proxmox_disk's checks before its first write, in check and real runs alike: privileges, PVE's API schema on each write, the VM's state, the storage or volume the write uses and its space.

use std::collections::BTreeMap;

use module_utils::check::world::World;
use module_utils::pve::client::Api;
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{format_for_key, parse_new_cloudinit, parse_new_disk, volume_storage, Disk};
use module_utils::pve::hotplug;
use module_utils::pve::permissions::{self, Need, Privileges};
use module_utils::pve::preflight::{Content, Preflight};
use module_utils::pve::propstring::{parse_size, PropertyString};
use module_utils::pve::replication;
use module_utils::pve::request::{describe, form};
use module_utils::pve::resources::VmResource;
use module_utils::pve::schema::drive;
use module_utils::pve::snapshots;
use module_utils::pve::state::{self, Facts as VmFacts, Op};
use module_utils::pve::values;
use module_utils::pve::volume::Volume;
use module_utils::{Error, Result};

use crate::apply;
use crate::params::Params;
use crate::plan::{self, Action, Facts, Plan};

/// The checks before a write, with the reads they share across the tries of one run.
pub struct Checks<'a> {
    pub api: &'a dyn Api,
    pub privileges: Privileges<'a>,
    pub preflight: Preflight<'a>,
}

/// What must hold before the plan's writes, in check and real runs alike (so both fail with the
/// same message, and nothing is written): the privileges they need (qemu-server checks the
/// method's own privileges before anything else), PVE's API schema on each write as it will be
/// sent (through the client, which then sends it without a second check), the VM's state
/// (`vm_state`), then the storage or volume they use (docs/pve-semantics.md §26, §27, §28, §33).
pub fn guard(
    checks: &Checks,
    vm: &VmResource,
    facts: &Facts,
    params: &Params,
    plan: &Plan,
    target: Option<&VmResource>,
) -> Result<()> {
    let disk = params.disk.as_str();
    let config = facts.config;
    let volume = config.get(disk).and_then(|d| d.split(',').next()).unwrap_or("");
    let needs: Vec<Need> = match &plan.action {
        Action::None => return Ok(()),
        Action::SetDrive(value) => {
            permissions::update(vm.vmid, &config.effective(), &form([(disk, value.as_str())]), &[])
        }
        Action::Resize(_) => permissions::resize(vm.vmid, volume),
        Action::ResizeKeepingPending { pending, .. } => {
            let mut needs = permissions::resize(vm.vmid, volume);
            needs.extend(permissions::update(vm.vmid, &config.effective(), &form([(disk, pending.as_str())]), &[]));
            needs
        }
        // a forced unlink frees the volume when the removal is applied: now, unless it waits for the next start
        Action::Unlink { force } => {
            permissions::unlink(vm.vmid, disk, config.get(disk).unwrap_or(""), *force && !plan.pending)
        }
        Action::Move(_) => match (params.target_vmid, params.target_storage.as_deref()) {
            (Some(target), _) => {
                let mut needs = permissions::reassign_disk(vm.vmid, target, volume_storage(volume).unwrap_or(""));
                // a path has no storage: move_vm_disk refuses it (`vm_state`) before its storage's check
                needs.retain(|n| !matches!(n, Need::Privs { path, .. } if path == "/storage/"));
                needs
            }
            (None, Some(storage)) => permissions::move_disk(vm.vmid, storage),
            (None, None) => Vec::new(),
        },
    };
    if let Action::SetDrive(_) = &plan.action {
        // check_volume_access parses a named volume before it weighs the privileges on it (§57.1)
        if let Some(volid) = &params.iso_image {
            checks.preflight.volname(volid, "iso_image")?;
        }
    }
    let writes = apply::writes(vm, disk, &plan.action, config.digest.as_deref());
    let request: Vec<String> = writes.iter().map(|(method, path, body)| describe(*method, path, body)).collect();
    let request = request.join(" then ");
    checks.privileges.require_for(&needs, &request)?;
    if let Action::SetDrive(value) = &plan.action {
        // update_vm_api's `$check_storage_access`, after the options' privileges: an import source's format before its own privileges (§63.3)
        let set = form([(disk, value.as_str())]);
        let option = |_: &str| "import_from".to_string();
        checks.preflight.import_sources(&checks.privileges, vm.vmid, &set, None, (&request, &option))?;
    }
    for (method, path, body) in writes {
        checks.api.check_write(method, &path, &body)?;
    }
    if let (Action::Move(_), Some(target)) = (&plan.action, target) {
        // Qemu.pm move_vm_disk ($load_and_check_reassign_configs), before the VMs' states
        if let Some(words) = values::reassign_nodes(vm, target) {
            return Err(Error::failed(format!("{}: {words}", apply::context(vm.vmid, disk, &plan.action))));
        }
    }
    if let Action::SetDrive(value) = &plan.action {
        // update_vm_api's `$check_replication` (§50): the jobs read only when the drive would be refused
        let storages = checks.preflight.storages()?;
        if let Some(words) = replication::config_drive(true, value, &storages) {
            if !replication::jobs_of(checks.api, vm.vmid)?.is_empty() {
                return Err(Error::failed(format!("{}: {words}", apply::context(vm.vmid, disk, &plan.action))));
            }
        }
    }
    vm_state(checks, vm, facts, params, &plan.action)?;
    if let (Action::Move(_), Some(target)) = (&plan.action, target) {
        // move_vm_disk's last reassign check (§50): the target's jobs read only for a volume that cannot replicate
        let storages = checks.preflight.storages()?;
        if let Some(words) = replication::reassign(volume, &storages) {
            if !replication::jobs_of(checks.api, target.vmid)?.is_empty() {
                return Err(Error::failed(format!("{}: {words}", apply::context(vm.vmid, disk, &plan.action))));
            }
        }
    }
    let (node, preflight) = (vm.node.as_str(), &checks.preflight);
    match (&plan.action, plan.allocates_on()) {
        (Action::Move(_), Some(storage)) => {
            preflight.move_target(node, storage, "target_storage")?;
            moved_with_delete(checks, vm, facts, params, &plan.action)?;
            // its task's clone_disk mirrors a running VM's drive, and refuses some before allocating
            if let Some(value) = facts.running.then(|| config.get(disk)).flatten() {
                if let Some(words) = preflight.mirrored_drive(vm, disk, value, storage)? {
                    return Err(Error::failed(format!("target_storage: storage migration failed: {words}")));
                }
            }
            // qemu-server move_vm_disk allocates inside its task: PVE's words carry its prefix
            allocation_fits(preflight, node, facts, params, storage, "target_storage", "storage migration failed: ")
        }
        (Action::SetDrive(_), Some(storage)) => {
            preflight.storage(node, storage, Content::Images, "storage")?;
            // create_disks hands `format` (else storage.cfg's default) to the storage as it is
            // (§42.1); every new disk here has a size (§57.3)
            let option = if params.format.is_some() { "format" } else { "storage" };
            new_disk_format(preflight, node, facts, params, storage, option)?;
            allocation_fits(preflight, node, facts, params, storage, "storage", "")?;
            match &params.import_from {
                Some(source) => {
                    // the source's owner (§63.6, §70): its format and privileges came first
                    preflight.import_source(node, disk, source)?;
                    preflight.volume(node, source, "import_from")
                }
                None => Ok(()),
            }
        }
        (Action::Resize(_) | Action::ResizeKeepingPending { .. }, _) => {
            // resize_vm's volume_resize takes the added size where the storage reserves it (§42.3)
            let size_of = |value: Option<&String>| {
                let drive = Disk::parse(disk, value?)?;
                Some((drive.volume?, drive.size_bytes?))
            };
            let (Some((volid, have)), Some((_, want))) =
                (size_of(config.current.get(disk)), size_of(plan.after.current.get(disk)))
            else {
                return Ok(());
            };
            let context = apply::context(vm.vmid, disk, &plan.action);
            preflight.growth(node, &volid, want.saturating_sub(have), &context)
        }
        (Action::SetDrive(_), None) => match &params.iso_image {
            Some(iso) => preflight.attached(node, iso, "iso_image"),
            None => Ok(()),
        },
        _ => Ok(()),
    }?;
    if let Action::SetDrive(value) = &plan.action {
        // update_vm_api's drive rules against the applied config: a TPM's version, SEV-SNP's EFI disk (§63)
        if let Some(words) = values::drives(&config.current, &form([(disk, value.as_str())])) {
            return Err(Error::failed(format!("{}: {words}", apply::context(vm.vmid, disk, &plan.action))));
        }
    }
    media_change(vm, config, disk, &plan.action)
}

/// QemuServer.pm vmconfig_update_disk, run by the update's task on a running VM: a drive's media
/// type cannot change live (`pve::hotplug`, §48.3). PVE would write the change pending, then fail:
/// refused before any write instead, in check and real runs alike.
fn media_change(vm: &VmResource, config: &VmConfig, disk: &str, action: &Action) -> Result<()> {
    let (Action::SetDrive(value), true) = (action, vm.status == "running") else { return Ok(()) };
    let (Some(applied), Some(format)) = (config.current.get(disk), format_for_key(disk)) else { return Ok(()) };
    let (Ok(applied), Ok(desired)) =
        (PropertyString::parse_lenient(format, applied), PropertyString::parse_lenient(format, value))
    else {
        return Ok(());
    };
    match hotplug::drive_update_refusal(disk, &applied, &desired) {
        Some(words) => Err(Error::failed(format!("{}: {words}", apply::context(vm.vmid, disk, action)))),
        None => Ok(()),
    }
}

/// Qemu.pm move_vm_disk to a storage with `delete`: refused (after the target storage's checks)
/// while a snapshot, or another drive, uses the source volume (`pve::snapshots`, §45.2).
fn moved_with_delete(checks: &Checks, vm: &VmResource, facts: &Facts, params: &Params, action: &Action) -> Result<()> {
    let volume = facts.config.get(&params.disk).and_then(|d| Disk::parse(&params.disk, d)).and_then(|d| d.volume);
    let Some(volid) = volume.filter(|_| params.delete_moved) else { return Ok(()) };
    if in_snapshot(checks, vm, facts, &params.disk, &volid)? {
        let context = apply::context(vm.vmid, &params.disk, action);
        return Err(Error::failed(format!("{context}: {}", snapshots::MOVE_SNAPSHOTTED_WITH_DELETE)));
    }
    Ok(())
}

/// Drive.pm is_volume_in_use: whether a snapshot of `vm` (read now), or a drive other than `key`,
/// uses `volid` (`pve::snapshots`).
fn in_snapshot(checks: &Checks, vm: &VmResource, facts: &Facts, key: &str, volid: &str) -> Result<bool> {
    let snapshots = World::snapshots(checks.api, vm)?;
    Ok(snapshots::volume_in_use(facts.config, key, volid, &snapshots))
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
    let source = facts.config.get(&params.disk);
    let volume = source.and_then(|d| Disk::parse(&params.disk, d)).and_then(|d| d.volume);
    // Qemu.pm move_vm_disk to a VM: both VMs' locks and templates, then the drive's own checks
    // (`pve::snapshots::reassign_refusal`: a CD-ROM, a path, a volume a snapshot uses; then the
    // storage's 'rename' feature, `Preflight::reassign_feature`), then a
    // running source (`pve::state` without and with the power state)
    if let Op::Reassign { .. } = op {
        let target = facts.target.map(|(t, config)| VmFacts { running: false, ..state(t, config) });
        if state::refusal(op, &VmFacts { running: false, ..state(vm.vmid, facts.config) }).is_none()
            && target.is_none_or(|t| state::refusal(op, &t).is_none())
        {
            // the source drive parsed as PVE does, before its volume's checks (§65.1)
            if let Some(words) = source.and_then(|v| drive::move_refusal(&params.disk, v, true)) {
                return Err(refuse(words));
            }
            if let Some(words) =
                snapshots::reassign_refusal(facts.config, &params.disk, || World::snapshots(checks.api, vm))?
            {
                return Err(refuse(words));
            }
            // the 'rename' feature of the volume's storage (§51.1)
            if let Some(words) = volume.as_deref().map(|v| checks.preflight.reassign_feature(v)).transpose()?.flatten()
            {
                return Err(refuse(words));
            }
        }
    }
    if let Some(words) = state::refusal(op, &state(vm.vmid, facts.config)) {
        return Err(refuse(words));
    }
    // move_vm_disk parses the drive after the lock: to a storage, one it cannot parse has no
    // volume; to a VM, after the running source, in the target slot's format too (§65.1)
    let refused = match (op, source) {
        (Op::MoveDisk, Some(value)) => drive::move_refusal(&params.disk, value, false),
        (Op::Reassign { .. }, Some(value)) => {
            let target_disk = params.target_disk.as_deref().unwrap_or(&params.disk);
            drive::reassign_target_refusal(target_disk, value, volume.as_deref().unwrap_or(""))
        }
        _ => None,
    };
    if let Some(words) = refused {
        return Err(refuse(words));
    }
    if let (Op::Reassign { .. }, Some((target, config))) = (op, facts.target) {
        let target = VmFacts { running: false, ..state(target, config) };
        if let Some(words) = state::refusal(op, &target) {
            return Err(refuse(words));
        }
    }
    // QemuServer.pm try_deallocate_drive, for a VM's own volume: an `unusedN` removed (Qemu.pm
    // update_vm_api, at once), a drive removed with `force` from a stopped VM (through
    // vmconfig_apply_pending, which names the option) or unplugged from a running one
    // (vmconfig_hotplug_pending: `hotplug problem - `); refused while a snapshot uses it (§45.2).
    // A drive whose unplug waits is freed at the next stop, after the check has stopped asking.
    let unused = params.disk.starts_with("unused");
    let unplugged = running && !hotplug::drive_plug_waits(&facts.config.hotplug(), &params.disk);
    if let (Action::Unlink { force }, Some(volid)) = (action, volume.as_deref()) {
        let owned = Volume::parse(volid).is_some_and(|v| v.owner == Some(vm.vmid));
        if owned
            && (unused || (*force && (!running || unplugged)))
            && in_snapshot(checks, vm, facts, &params.disk, volid)?
        {
            let words = snapshots::still_in_use(volid);
            let words = match (unused, running) {
                (true, _) => words,
                (false, true) => format!("hotplug problem - {words}"),
                (false, false) => format!("unable to apply pending change {} : {words}", params.disk),
            };
            return Err(refuse(words));
        }
    }
    // Qemu.pm update_vm_api frees a removed drive's volume with `force` (try_deallocate_drive,
    // Storage.pm vdisk_free), which refuses a base volume a linked clone uses; a running VM only
    // frees it at its next stop, so only a stopped one (a template) is refused now
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

/// The new disk's `format` (else storage.cfg's default) on `storage` (`Preflight::new_volume`,
/// §42.1): a file storage's plugin parses the name it gives the file first, so a refusal names
/// it as PVE would (`find_free_diskname` takes it from the storage's volumes, read only to word
/// the refusal; a storage this user cannot list leaves its number unnamed).
fn new_disk_format(
    preflight: &Preflight,
    node: &str,
    facts: &Facts,
    params: &Params,
    storage: &str,
    option: &str,
) -> Result<()> {
    let format = params.format.as_deref();
    if preflight.new_volume(storage, None, format, 1, option, "").is_ok() {
        return Ok(());
    }
    let storages = preflight.storages()?;
    let volid = match preflight.volumes_on(node, storage) {
        Ok(listed) => {
            let planned = plan::plan(params, &Facts { storages: &storages, listed: &listed, ..facts.clone() })?;
            planned.after.get(&params.disk).and_then(|v| v.split(',').next()).map(str::to_string)
        }
        Err(_) => None,
    };
    preflight.new_volume(storage, volid.as_deref(), format, 1, option, "")
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

/// The volume the plan's write makes PVE activate (Qemu.pm `resize_vm`, `move_vm_disk` to a
/// storage, before its copy, and `create_disks` of a drive naming an existing volume), which must still be on its file storage (`Preflight::activated`,
/// docs/pve-semantics.md §65.3). lib.rs leaves out a VM whose config this check run predicts.
pub fn activated(checks: &Checks, vm: &VmResource, facts: &Facts, params: &Params, action: &Action) -> Result<()> {
    let current = || facts.config.get(&params.disk).and_then(|d| Disk::parse(&params.disk, d)?.volume);
    let volume = match action {
        // create_disks of a drive naming an existing volume (an option changed, an unusedN re-attached, §68)
        Action::SetDrive(value) => Disk::parse(&params.disk, value)
            .and_then(|d| d.volume)
            .filter(|f| parse_new_disk(f).is_none() && parse_new_cloudinit(f).is_none()),
        Action::Resize(_) | Action::ResizeKeepingPending { .. } => current(),
        Action::Move(_) if params.target_vmid.is_none() => current(),
        _ => None,
    };
    let Some(volume) = volume else {
        return Ok(());
    };
    let context = format!("{}: ", apply::context(vm.vmid, &params.disk, action));
    checks.preflight.activated(&checks.privileges, &vm.node, &[volume], &context)
}
