//! proxmox_disk's plan: from the VM's config and the task, the one write to make and the
//! config PVE will hold afterwards. Pure: no I/O, so check mode is "plan, don't apply".
//!
//! The predictions follow real PVE (docs/pve-semantics.md): new volumes take the lowest free
//! `vm-<vmid>-disk-<n>` on their storage (§8), a volume taken out of a drive goes to the lowest
//! free `unusedN` when the VM owns it (§11), and on a running VM the hotplug rules of §6 decide
//! what waits for the next start.

use std::collections::{BTreeMap, BTreeSet};

use module_utils::pve::client::Form;
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{format_for_key, volume_storage};
use module_utils::pve::hotplug;
use module_utils::pve::propstring::{format_size, parse_size, PropertyString};
use module_utils::pve::resources::StorageResource;
use module_utils::{Error, Result};

use crate::params::{Create, Params, SizeRequest, State};

const GIB: u64 = 1 << 30;

/// The write a task needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    None,
    /// `POST .../config {<disk>: <value>}` (a `qmconfig` task).
    SetDrive(String),
    /// `PUT .../resize {disk, size}` (a `resize` task).
    Resize(String),
    /// The resize of a drive with a change waiting for the next start: `PUT .../resize` (which
    /// rewrites the applied drive only), then `POST .../config {<disk>: <the pending value with
    /// the new size>}`, so that the next start does not bring the old size back.
    ResizeKeepingPending {
        size: String,
        pending: String,
    },
    /// `PUT .../unlink {idlist: <disk>, force}`.
    Unlink {
        force: bool,
    },
    /// `POST .../move_disk` with these parameters (a `qmmove` task).
    Move(Form),
}

/// What the VM (and, for a reassign, the target VM) look like to the plan.
#[derive(Debug, Clone)]
pub struct World<'a> {
    pub vmid: u64,
    pub running: bool,
    pub config: &'a VmConfig,
    /// Storages of the VM's node, to predict volume names.
    pub storages: &'a [StorageResource],
    /// The target VM of a reassign: (vmid, config).
    pub target: Option<(u64, &'a VmConfig)>,
}

/// The plan: the action, the message, and the predicted configs after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub action: Action,
    pub msg: String,
    pub warnings: Vec<String>,
    /// The VM's config after the action, as PVE will hold it.
    pub after: VmConfig,
    /// The target VM's config after a reassign.
    pub target_after: Option<VmConfig>,
    /// Whether the drive will wait for the next start.
    pub pending: bool,
    /// The `unusedN` key that will hold a volume taken out of use.
    pub unused: Option<String>,
    /// The drive's volume after the action, when it can be known without reading the storage.
    pub volume_known: bool,
}

impl Plan {
    fn unchanged(config: &VmConfig, msg: String) -> Plan {
        Plan {
            action: Action::None,
            msg,
            warnings: Vec::new(),
            after: config.clone(),
            target_after: None,
            pending: false,
            unused: None,
            volume_known: true,
        }
    }
}

fn parse_drive(key: &str, text: &str) -> Result<PropertyString> {
    let format = format_for_key(key).ok_or_else(|| Error::Internal(format!("{key} is not a drive key")))?;
    PropertyString::parse_lenient(format, text)
        .map_err(|e| Error::failed(format!("the current value of {key} cannot be read: {e}")))
}

/// `vm-<vmid>-disk-<n>` / `base-<vmid>-disk-<n>` numbers of `storage` that the config refers to.
fn disk_numbers(config: &VmConfig, storage: &str, vmid: u64) -> BTreeSet<u32> {
    let mut used = BTreeSet::new();
    let values = config.current.values().chain(config.pending.values());
    for value in values {
        let volume = value.split(',').next().unwrap_or("");
        if volume_storage(volume) != Some(storage) {
            continue;
        }
        let name = volume.split_once(':').map(|(_, n)| n).unwrap_or("");
        let name = name.rsplit('/').next().unwrap_or(name);
        for prefix in [format!("vm-{vmid}-disk-"), format!("base-{vmid}-disk-")] {
            if let Some(rest) = name.strip_prefix(&prefix) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(n) = digits.parse() {
                    used.insert(n);
                }
            }
        }
    }
    used
}

/// The volume PVE will allocate on `storage` for `vmid`, or `None` when it cannot be known
/// without reading the storage (a file storage whose default format we cannot see).
pub fn predict_volume(
    config: &VmConfig,
    storages: &[StorageResource],
    storage: &str,
    vmid: u64,
    format: Option<&str>,
) -> Option<String> {
    let info = storages.iter().find(|s| s.storage == storage)?;
    let used = disk_numbers(config, storage, vmid);
    let n = (0..).find(|n| !used.contains(n))?;
    if info.is_file_based() {
        let ext = format?;
        Some(format!("{storage}:{vmid}/vm-{vmid}-disk-{n}.{ext}"))
    } else {
        Some(format!("{storage}:vm-{vmid}-disk-{n}"))
    }
}

/// The lowest free `unusedN` of a config (AbstractConfig.pm `add_unused_volume`).
fn next_unused(config: &VmConfig) -> String {
    let effective = config.effective();
    let n = (0..256)
        .find(|n| !effective.contains_key(&format!("unused{n}")) && !config.current.contains_key(&format!("unused{n}")))
        .unwrap_or(255);
    format!("unused{n}")
}

/// Whether PVE registers this drive's volume as `unusedN` when it leaves the drive: only a
/// volume the VM owns, never a CD-ROM or a cloud-init drive (QemuServer.pm
/// `vmconfig_register_unused_drive`, docs/pve-semantics.md §11).
fn becomes_unused(drive: &PropertyString, vmid: u64) -> Option<String> {
    if drive.get("media") == Some("cdrom") {
        return None;
    }
    let volume = drive.get("file")?;
    let name = volume.split_once(':')?.1;
    let owned = name.contains(&format!("vm-{vmid}-disk-")) || name.contains(&format!("base-{vmid}-disk-"));
    owned.then(|| volume.to_string())
}

/// Add `volume` as an unused entry of `config` (if not listed already); returns the key.
fn add_unused(config: &mut VmConfig, volume: &str) -> Option<String> {
    if config.effective().iter().any(|(k, v)| k.starts_with("unused") && v == volume) {
        return None;
    }
    let key = next_unused(config);
    config.current.insert(key.clone(), volume.to_string());
    Some(key)
}

/// The size text PVE allocates from `STORAGE:N` (N GiB, fractions allowed).
fn gib_text(bytes: u64) -> String {
    if bytes % GIB == 0 {
        (bytes / GIB).to_string()
    } else {
        format!("{}", bytes as f64 / GIB as f64)
    }
}

/// Plan a task. Pure.
pub fn plan(params: &Params, world: &World) -> Result<Plan> {
    let disk = params.disk.as_str();
    let current_text = world.config.get(disk).map(str::to_string);
    let current = current_text.as_deref().map(|t| parse_drive(disk, t)).transpose()?;
    // Resize and move act on the drive as applied (Qemu.pm resize_vm, move_vm_disk read the
    // main section), so that is what they are planned from.
    let applied = || -> Result<Option<PropertyString>> {
        if world.config.is_pending(disk) && world.config.current.contains_key(disk) {
            let what = if params.state == State::Resized { "resizing" } else { "moving" };
            return Err(Error::failed(format!(
                "{disk} of VM {} has a change waiting for the next start; Proxmox VE would apply it after {what} the disk and undo part of it: restart the VM (or revert the pending change) first",
                world.vmid
            )));
        }
        if current.is_some() && !world.config.current.contains_key(disk) {
            return Err(Error::failed(format!(
                "{disk} of VM {} is only a pending change so far: start the VM (or apply the change) first",
                world.vmid
            )));
        }
        Ok(current.clone())
    };
    match params.state {
        State::Present => plan_present(params, world, current),
        State::Resized => {
            let unchanged = plan_resize(params, world, current.clone());
            match unchanged {
                Ok(p) if p.action == Action::None => Ok(p),
                _ => match resizable_pending(params, world)? {
                    Some((applied, pending)) => plan_resize_with_pending(params, world, applied, pending),
                    None => plan_resize(params, world, applied()?),
                },
            }
        }
        State::Detached => plan_remove(params, world, current, false),
        State::Absent => plan_remove(params, world, current, true),
        State::Moved => match params.target_vmid {
            Some(target) => plan_reassign(params, world, current, target),
            None => {
                let current_applied = world.config.current.get(disk).map(|t| parse_drive(disk, t)).transpose()?;
                match plan_move(params, world, current_applied.or(current.clone())) {
                    Ok(p) if p.action == Action::None => Ok(p),
                    _ => plan_move(params, world, applied()?),
                }
            }
        },
    }
}

fn missing(params: &Params, world: &World) -> Error {
    Error::failed(format!("Unable to process missing disk {} in VM {}", params.disk, world.vmid))
}

fn plan_present(params: &Params, world: &World, current: Option<PropertyString>) -> Result<Plan> {
    let disk = params.disk.as_str();
    let vmid = world.vmid;
    let mut warnings = Vec::new();
    let create = match (&current, params.create) {
        (None, Create::Disabled) => {
            return Ok(Plan::unchanged(
                world.config,
                format!("Disk {disk} not found in VM {vmid} and creation was disabled in parameters."),
            ))
        }
        (None, _) | (Some(_), Create::Forced) => true,
        (Some(_), _) => false,
    };

    if !create {
        let Some(current) = current else { return Err(missing(params, world)) };
        // Update: only the options the task names; the volume stays.
        let mut desired = current.clone();
        for (key, value) in &params.options {
            desired.set_checked(key, value)?;
        }
        if let Some(iso) = &params.iso_image {
            desired.set_checked("file", iso).map_err(|e| Error::args(format!("iso_image: {e}")))?;
        }
        if let (Some(SizeRequest::Absolute(want)), Some(have)) =
            (&params.size, current.get("size").and_then(|s| parse_size(s).ok()))
        {
            if *want != have {
                warnings.push(format!(
                    "size is only used to create a disk: {disk} is {} and stays so (use state: resized to grow it)",
                    format_size(have)
                ));
            }
        }
        if let (Some(storage), Some(vol)) = (&params.storage, current.get("file")) {
            if volume_storage(vol).is_some_and(|s| s != storage) {
                warnings.push(format!(
                    "storage is only used to create a disk: {disk} stays on {} (use state: moved to move it)",
                    volume_storage(vol).unwrap_or("")
                ));
            }
        }
        if desired.semantically_equal(&current) {
            let mut p = Plan::unchanged(world.config, format!("Disk {disk} is up to date in VM {vmid}"));
            p.warnings = warnings;
            p.pending = world.config.is_pending(disk);
            return Ok(p);
        }
        let value = desired.to_checked_string()?;
        let applied = world.config.current.get(disk).map(|t| parse_drive(disk, t)).transpose()?;
        // A drive with only a pending value so far stays pending; otherwise PVE's hot-plug rule decides.
        let pending = world.running
            && applied
                .as_ref()
                .is_none_or(|a| hotplug::drive_update_waits(&world.config.hotplug(), params.bus, a, &desired));
        let mut after = world.config.with_change(disk, Some(&value), pending);
        let mut unused = None;
        // A CD-ROM medium or a volume swapped in place: the old one is not registered unused,
        // since only the medium of a CD-ROM can change here.
        if !pending {
            if let (Some(old), Some(new_file)) = (applied.as_ref(), desired.get("file")) {
                if old.get("file") != Some(new_file) {
                    if let Some(vol) = becomes_unused(old, vmid) {
                        unused = add_unused(&mut after, &vol);
                    }
                }
            }
        }
        return Ok(Plan {
            action: Action::SetDrive(value),
            msg: format!("Disk {disk} updated in VM {vmid}"),
            warnings,
            after,
            target_after: None,
            pending,
            unused,
            volume_known: true,
        });
    }

    // Create (or replace, with create: forced).
    let mut value =
        PropertyString::new(format_for_key(disk).ok_or_else(|| Error::Internal(format!("{disk} is not a drive key")))?);
    let (msg, predicted_file, predicted_size, volume_known) = if let Some(iso) = &params.iso_image {
        value.set_checked("file", iso).map_err(|e| Error::args(format!("iso_image: {e}")))?;
        (format!("CD-ROM was created on {disk} bus in VM {vmid}"), Some(iso.clone()), None, true)
    } else {
        let storage = params.storage.as_deref().ok_or_else(|| Error::args("The storage option must be specified."))?;
        if let Some(src) = &params.import_from {
            value.set_checked("file", &format!("{storage}:0")).map_err(|e| Error::args(format!("storage: {e}")))?;
            value.set_checked("import-from", src).map_err(|e| Error::args(format!("import_from: {e}")))?;
            let vol = predict_volume(world.config, world.storages, storage, vmid, params.format.as_deref());
            (format!("Disk {disk} imported into VM {vmid}"), vol.clone(), None, vol.is_some())
        } else {
            let special = matches!(params.bus, "efidisk" | "tpmstate");
            let bytes = match (&params.size, special) {
                (Some(SizeRequest::Absolute(b)), _) => *b,
                (_, true) => GIB,
                (Some(SizeRequest::Grow { .. }), false) | (None, false) => {
                    return Err(Error::args(format!("size is required to create disk {disk}")))
                }
            };
            value
                .set_checked("file", &format!("{storage}:{}", gib_text(bytes)))
                .map_err(|e| Error::args(format!("storage: {e}")))?;
            let vol = predict_volume(world.config, world.storages, storage, vmid, params.format.as_deref());
            let block = world.storages.iter().any(|s| s.storage == storage && !s.is_file_based());
            // efidisk0 and tpmstate0 get fixed sizes: 4M on block storages (§8).
            let size = match (params.bus, block) {
                ("efidisk" | "tpmstate", true) => Some(4 << 20),
                ("efidisk" | "tpmstate", false) => None,
                _ => Some(bytes),
            };
            (format!("Disk {disk} created in VM {vmid}"), vol.clone(), size, vol.is_some() && size.is_some())
        }
    };
    if let Some(f) = &params.format {
        value.set_checked("format", f).map_err(|e| Error::args(format!("format: {e}")))?;
    }
    for (key, v) in &params.options {
        value.set_checked(key, v)?;
    }
    if params.iso_image.is_some() {
        value.set("media", "cdrom");
    }
    let send = value.to_checked_string()?;

    // What PVE will store: the allocated volume, `format=` dropped, the size filled in.
    let mut stored = value.clone();
    stored.remove("import-from");
    if params.iso_image.is_none() {
        stored.remove("format");
    }
    match &predicted_file {
        Some(f) => stored.set("file", f),
        None => {
            stored.set("file", &format!("{}:<volume allocated by Proxmox VE>", params.storage.as_deref().unwrap_or("")))
        }
    }
    if let Some(b) = predicted_size {
        stored.set("size", &format_size(b));
    }
    let stored = stored.to_string();

    let applied = world.config.current.get(disk).map(|t| parse_drive(disk, t)).transpose()?;
    let pending = world.running
        && hotplug::drive_plug_waits(&world.config.hotplug(), params.bus)
        && !(params.iso_image.is_some() && applied.as_ref().is_some_and(|a| a.get("media") == Some("cdrom")));
    let mut after = world.config.with_change(disk, Some(&stored), pending);
    let mut unused = None;
    if !pending {
        if let Some(old) = &applied {
            if let Some(vol) = becomes_unused(old, vmid) {
                unused = add_unused(&mut after, &vol);
            }
        }
    }
    if current.is_some() {
        warnings.push(format!(
            "create: forced replaces {disk}; its old volume is kept{}",
            unused.as_deref().map(|u| format!(" as {u}")).unwrap_or_default()
        ));
    }
    Ok(Plan { action: Action::SetDrive(send), msg, warnings, after, target_after: None, pending, unused, volume_known })
}

/// A drive whose pending change keeps its volume (only options differ): (applied, pending).
///
/// Qemu.pm resize_vm grows the volume and rewrites the applied drive (`$conf->{$disk}`) only;
/// the pending value keeps its old `size=` and replaces the applied one at the next start
/// (QemuServer.pm vmconfig_apply_pending), so PVE alone would show the old size of a grown
/// volume from then on. That is safe to follow when the pending value names the same volume:
/// the module resizes as PVE does, then writes the pending value again with the new size. A
/// pending change that replaces or deletes the drive is still refused (`applied` in `plan`):
/// the volume resized would not be the one the VM uses after its next start.
fn resizable_pending(params: &Params, world: &World) -> Result<Option<(PropertyString, PropertyString)>> {
    let disk = params.disk.as_str();
    let (Some(applied), Some(pending)) = (world.config.current.get(disk), world.config.pending.get(disk)) else {
        return Ok(None);
    };
    if !world.config.is_pending(disk) || world.config.pending_delete.contains_key(disk) {
        return Ok(None);
    }
    let (applied, pending) = (parse_drive(disk, applied)?, parse_drive(disk, pending)?);
    if applied.get("file") != pending.get("file") || applied.get("media") == Some("cdrom") {
        return Ok(None);
    }
    Ok(Some((applied, pending)))
}

fn plan_resize_with_pending(
    params: &Params,
    world: &World,
    applied: PropertyString,
    pending: PropertyString,
) -> Result<Plan> {
    let disk = params.disk.as_str();
    let mut plan = plan_resize(params, world, Some(applied))?;
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

fn plan_resize(params: &Params, world: &World, current: Option<PropertyString>) -> Result<Plan> {
    let disk = params.disk.as_str();
    let vmid = world.vmid;
    let current = current.ok_or_else(|| missing(params, world))?;
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
                return Ok(Plan::unchanged(world.config, format!("Disk {disk} is already {} size", format_size(have))));
            }
            (want, format_size(want))
        }
        Some(SizeRequest::Grow { bytes: 0, ref text }) => {
            return Ok(Plan::unchanged(
                world.config,
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
    let mut after = world.config.clone();
    after.current.insert(disk.to_string(), value);
    Ok(Plan {
        action: Action::Resize(send),
        msg: format!("Disk {disk} resized in VM {vmid}"),
        warnings,
        after,
        target_after: None,
        pending: world.config.is_pending(disk),
        unused: None,
        volume_known: true,
    })
}

fn plan_remove(params: &Params, world: &World, current: Option<PropertyString>, destroy: bool) -> Result<Plan> {
    // Only whether the drive exists matters here: what leaves it is what PVE has applied.
    let disk = params.disk.as_str();
    let vmid = world.vmid;
    if current.is_none() {
        return Ok(Plan::unchanged(
            world.config,
            if destroy {
                format!("Disk {disk} is already absent in VM {vmid}")
            } else {
                format!("Disk {disk} not present in VM {vmid} config")
            },
        ));
    };
    if !destroy && params.bus == "unused" {
        return Ok(Plan::unchanged(world.config, format!("Disk {disk} already detached in VM {vmid}")));
    }
    // unusedN are freed at once; drives on a running VM only with disk hotplug, scsi/virtio (§11).
    let pending = params.bus != "unused"
        && world.running
        && hotplug::drive_plug_waits(&world.config.hotplug(), params.bus)
        && world.config.current.contains_key(disk);
    let mut after = world.config.with_change(disk, None, pending);
    if pending && destroy {
        after.pending_delete.insert(disk.to_string(), true);
    }
    let mut unused = None;
    if !destroy && !pending {
        if let Some(vol) = world
            .config
            .current
            .get(disk)
            .map(|t| parse_drive(disk, t))
            .transpose()?
            .and_then(|d| becomes_unused(&d, vmid))
        {
            unused = add_unused(&mut after, &vol);
        }
    }
    Ok(Plan {
        action: Action::Unlink { force: destroy },
        msg: if destroy {
            format!("Disk {disk} removed from VM {vmid}")
        } else {
            format!("Disk {disk} detached from VM {vmid}")
        },
        warnings: Vec::new(),
        after,
        target_after: None,
        pending,
        unused,
        volume_known: true,
    })
}

fn volume_format(drive: &PropertyString) -> Option<String> {
    if let Some(f) = drive.get("format") {
        return Some(f.to_string());
    }
    let volume = drive.get("file")?;
    let ext = volume.rsplit_once('.')?.1;
    Some(if ["qcow2", "raw", "vmdk", "qed", "qcow"].contains(&ext) { ext.to_string() } else { "raw".to_string() })
}

fn plan_move(params: &Params, world: &World, current: Option<PropertyString>) -> Result<Plan> {
    let disk = params.disk.as_str();
    let vmid = world.vmid;
    let current = current.ok_or_else(|| missing(params, world))?;
    if current.get("media") == Some("cdrom") {
        return Err(Error::failed(format!("{disk} of VM {vmid} is a CD-ROM drive: it cannot be moved")));
    }
    let target = params.target_storage.as_deref().ok_or_else(|| {
        Error::args("state is moved but any of the following are missing: target_storage, target_vmid")
    })?;
    let volume = current.get("file").unwrap_or("").to_string();
    let source_storage = volume_storage(&volume).unwrap_or("").to_string();
    let block_volume = !volume.contains('/') || !volume.contains('.');
    let source_format = volume_format(&current).or_else(|| block_volume.then(|| "raw".to_string()));
    if source_storage == target && params.format.as_deref().is_none_or(|f| Some(f) == source_format.as_deref()) {
        return Ok(Plan::unchanged(world.config, format!("Disk {disk} already at {target} storage")));
    }
    let mut form: Form = vec![("disk".into(), disk.into()), ("storage".into(), target.into())];
    if let Some(f) = &params.format {
        form.push(("format".into(), f.clone()));
    }
    form.push(("delete".into(), if params.delete_moved { "1" } else { "0" }.into()));
    if let Some(b) = params.bwlimit {
        form.push(("bwlimit".into(), b.to_string()));
    }
    let target_block = world.storages.iter().any(|s| s.storage == target && !s.is_file_based());
    let format = params.format.clone().or_else(|| if target_block { Some("raw".into()) } else { None });
    let new_volume = predict_volume(world.config, world.storages, target, vmid, format.as_deref());
    let mut moved = current.clone();
    moved.remove("format");
    match &new_volume {
        Some(v) => moved.set("file", v),
        None => moved.set("file", &format!("{target}:<volume allocated by Proxmox VE>")),
    }
    let value = moved.to_string();
    let mut after = world.config.with_change(disk, Some(&value), world.config.is_pending(disk));
    let unused = if params.delete_moved { None } else { add_unused(&mut after, &volume) };
    Ok(Plan {
        action: Action::Move(form),
        msg: format!("Disk {disk} moved from VM {vmid} storage {source_storage}"),
        warnings: Vec::new(),
        after,
        target_after: None,
        pending: false,
        unused,
        volume_known: new_volume.is_some(),
    })
}

fn plan_reassign(params: &Params, world: &World, current: Option<PropertyString>, target_vmid: u64) -> Result<Plan> {
    let disk = params.disk.as_str();
    let vmid = world.vmid;
    let target_disk = params.target_disk.clone().unwrap_or_else(|| disk.to_string());
    let (tvmid, tconfig) =
        world.target.ok_or_else(|| Error::failed(format!("VM with vmid {target_vmid} does not exist in cluster")))?;
    let Some(current) = current else {
        if tconfig.get(&target_disk).is_some() {
            return Ok(Plan::unchanged(
                world.config,
                format!("Disk {disk} already moved to VM {tvmid} as {target_disk}"),
            ));
        }
        return Err(missing(params, world));
    };
    if tconfig.get(&target_disk).is_some() {
        return Err(Error::failed(format!("VM {tvmid} already has a {target_disk}: choose a free target_disk")));
    }
    let volume = current.get("file").unwrap_or("").to_string();
    let storage = volume_storage(&volume).unwrap_or("").to_string();
    let mut form: Form = vec![
        ("disk".into(), disk.into()),
        ("target-vmid".into(), tvmid.to_string()),
        ("target-disk".into(), target_disk.clone()),
    ];
    if let Some(b) = params.bwlimit {
        form.push(("bwlimit".into(), b.to_string()));
    }
    // The volume is renamed for the target VM (pve-storage `rename_volume`).
    let ext = volume.rsplit_once('.').map(|(_, e)| e.to_string());
    let file_based = world.storages.iter().any(|s| s.storage == storage && s.is_file_based());
    let used = disk_numbers(tconfig, &storage, tvmid);
    let n = (0..).find(|n| !used.contains(n)).unwrap_or(0);
    let new_volume = match (file_based, ext) {
        (true, Some(ext)) => format!("{storage}:{tvmid}/vm-{tvmid}-disk-{n}.{ext}"),
        (true, None) => format!("{storage}:<volume renamed by Proxmox VE>"),
        (false, _) => format!("{storage}:vm-{tvmid}-disk-{n}"),
    };
    let mut moved = current.clone();
    moved.set("file", &new_volume);
    let after = world.config.with_change(disk, None, false);
    let target_after = tconfig.with_change(&target_disk, Some(&moved.to_string()), false);
    Ok(Plan {
        action: Action::Move(form),
        // community.proxmox's words for every move (its integration test asserts them); where the
        // disk went is in the result (the target VM's drive).
        msg: format!("Disk {disk} moved from VM {vmid} storage {storage}"),
        warnings: Vec::new(),
        after,
        target_after: Some(target_after),
        pending: false,
        unused: None,
        volume_known: !new_volume.contains('<'),
    })
}

/// The lines of a config a disk task shows in `--diff`: the drive and every `unusedN`.
pub fn diff_view(config: &VmConfig, disk: &str) -> BTreeMap<String, String> {
    config.effective().into_iter().filter(|(k, _)| k == disk || k.starts_with("unused")).collect()
}
