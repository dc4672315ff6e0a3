//! proxmox_disk's plan: from the VM's config and the task, the one write to make and the
//! config PVE will hold afterwards. Pure: no I/O, so check mode is "plan, don't apply".
//!
//! The predictions follow real PVE (docs/pve-semantics.md): new volumes take the lowest free
//! `vm-<vmid>-disk-<n>` on their storage (§8), a volume taken out of a drive goes to the lowest
//! free `unusedN` when the VM owns it (§11), and on a running VM the hotplug rules of §6 decide
//! what waits for the next start.

mod moves;
mod resize;
mod volumes;

use std::collections::BTreeMap;

use module_utils::check::unknown::KNOWN_AFTER_APPLY;
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{format_for_key, parse_new_disk, volume_storage};
use module_utils::pve::hotplug;
use module_utils::pve::propstring::{format_size, parse_size, PropertyString};
use module_utils::pve::storage::fixed_volume_size;
use module_utils::pve::storage::StorageConfig;
use module_utils::{Error, Result};

use crate::params::{Create, Params, SizeRequest, State};

pub use volumes::{on_template, predict_new_disk, predict_volume};

use moves::{plan_move, plan_reassign};
use resize::{plan_resize, plan_resize_with_pending, resizable_pending};
use volumes::{add_unused, becomes_unused, gib_text};

const GIB: u64 = 1 << 30;

/// The parameters of a `move_disk` request, in the order sent: (name, value). Plain data, so
/// that the plan needs nothing of the client (`apply` sends them as its form).
pub type MoveParams = Vec<(String, String)>;

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
    Move(MoveParams),
}

/// The facts the plan works from: the VM (and, for a reassign, the target VM) as read.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    pub vmid: u64,
    pub running: bool,
    pub config: &'a VmConfig,
    /// storage.cfg as this user sees it, to predict volume names and formats.
    pub storages: &'a [StorageConfig],
    /// The volumes (id -> size) listed on the storages the task names: where a new volume goes
    /// (names PVE will not give again) and where an ISO or import source is (its size). Read in
    /// check mode only, where the prediction is shown; empty otherwise.
    pub listed: &'a BTreeMap<String, Option<u64>>,
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
        }
    }

    /// The storage the plan's write allocates a new volume on (a new or imported disk: the
    /// drive sent as `STORAGE:N`; a move), whose volumes decide the name PVE gives it.
    pub fn allocates_on(&self) -> Option<&str> {
        match &self.action {
            Action::SetDrive(value) => parse_new_disk(value.split(',').next()?)?.0,
            Action::Move(form) => form.iter().find(|(k, _)| k == "storage").map(|(_, v)| v.as_str()),
            _ => None,
        }
    }

    /// The storage of the existing volume a drive update sends without `size=` (PVE fills in
    /// the size its storage reports, `create_disks`): listed in check mode to show that size.
    pub fn sized_on(&self) -> Option<&str> {
        let Action::SetDrive(value) = &self.action else { return None };
        let file = value.split(',').next()?;
        if parse_new_disk(file).is_some() || value.split(',').any(|p| p.starts_with("size=")) {
            return None;
        }
        volume_storage(file)
    }
}

/// The `size=` PVE stores for a drive naming the existing volume `file` (an ISO, or the source of
/// an import, whose size the new volume takes): the size its storage lists, known after apply
/// when it is not listed; `none` and `cdrom` carry none (docs/pve-semantics.md §8.7).
fn existing_volume_size(file: &str, listed: &BTreeMap<String, Option<u64>>) -> Option<String> {
    volume_storage(file)?;
    Some(listed.get(file).copied().flatten().map_or_else(|| KNOWN_AFTER_APPLY.to_string(), format_size))
}

/// What PVE stores for a drive updated to `desired`: Qemu.pm `create_disks` sizes every drive it is
/// sent again (docs/pve-semantics.md §35.3), so a medium swapped in takes its volume's `size=` (as
/// listed, else known after apply) and an ejected one (`none`, `cdrom`) carries none; a drive whose
/// volume stays keeps its size, or takes the size its storage lists when it had none (an ISO
/// inserted by an older PVE or by hand, §48.2).
fn stored_update(
    desired: &PropertyString,
    current: &PropertyString,
    listed: &BTreeMap<String, Option<u64>>,
) -> PropertyString {
    let mut stored = desired.clone();
    let file = desired.get("file").unwrap_or_default();
    if current.get("file") != Some(file) || matches!(file, "none" | "cdrom") || current.get("size").is_none() {
        match existing_volume_size(file, listed) {
            Some(size) => stored.set("size", &size),
            None => {
                stored.remove("size");
            }
        }
    }
    stored
}

fn parse_drive(key: &str, text: &str) -> Result<PropertyString> {
    let format = format_for_key(key).ok_or_else(|| Error::Internal(format!("{key} is not a drive key")))?;
    PropertyString::parse_lenient(format, text)
        .map_err(|e| Error::failed(format!("the current value of {key} cannot be read: {e}")))
}

/// Plan a task. Pure.
pub fn plan(params: &Params, facts: &Facts) -> Result<Plan> {
    let disk = params.disk.as_str();
    let current_text = facts.config.get(disk).map(str::to_string);
    let current = current_text.as_deref().map(|t| parse_drive(disk, t)).transpose()?;
    // Resize and move act on the drive as applied (Qemu.pm resize_vm, move_vm_disk read the
    // main section), so that is what they are planned from.
    let applied = || -> Result<Option<PropertyString>> {
        if facts.config.is_pending(disk) && facts.config.current.contains_key(disk) {
            let what = if params.state == State::Resized { "resizing" } else { "moving" };
            return Err(Error::failed(format!(
                "{disk} of VM {} has a change waiting for the next start; Proxmox VE would apply it after {what} the disk and undo part of it: restart the VM (or revert the pending change) first",
                facts.vmid
            )));
        }
        if current.is_some() && !facts.config.current.contains_key(disk) {
            return Err(Error::failed(format!(
                "{disk} of VM {} is only a pending change so far: start the VM (or apply the change) first",
                facts.vmid
            )));
        }
        Ok(current.clone())
    };
    match params.state {
        State::Present => plan_present(params, facts, current),
        State::Resized => {
            let unchanged = plan_resize(params, facts, current.clone());
            match unchanged {
                Ok(p) if p.action == Action::None => Ok(p),
                _ => match resizable_pending(params, facts)? {
                    Some((applied, pending)) => plan_resize_with_pending(params, facts, applied, pending),
                    None => plan_resize(params, facts, applied()?),
                },
            }
        }
        State::Detached => plan_remove(params, facts, current, false),
        State::Absent => plan_remove(params, facts, current, true),
        State::Moved => match params.target_vmid {
            Some(target) => plan_reassign(params, facts, current, target),
            None => {
                let current_applied = facts.config.current.get(disk).map(|t| parse_drive(disk, t)).transpose()?;
                match plan_move(params, facts, current_applied.or(current.clone())) {
                    Ok(p) if p.action == Action::None => Ok(p),
                    _ => plan_move(params, facts, applied()?),
                }
            }
        },
    }
}

fn missing(params: &Params, facts: &Facts) -> Error {
    Error::failed(format!("Unable to process missing disk {} in VM {}", params.disk, facts.vmid))
}

fn plan_present(params: &Params, facts: &Facts, current: Option<PropertyString>) -> Result<Plan> {
    let disk = params.disk.as_str();
    let vmid = facts.vmid;
    let mut warnings = Vec::new();
    let create = match (&current, params.create) {
        (None, Create::Disabled) => {
            return Ok(Plan::unchanged(
                facts.config,
                format!("Disk {disk} not found in VM {vmid} and creation was disabled in parameters."),
            ))
        }
        (None, _) | (Some(_), Create::Forced) => true,
        (Some(_), _) => false,
    };

    if !create {
        let Some(current) = current else { return Err(missing(params, facts)) };
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
            let mut p = Plan::unchanged(facts.config, format!("Disk {disk} is up to date in VM {vmid}"));
            p.warnings = warnings;
            p.pending = facts.config.is_pending(disk);
            return Ok(p);
        }
        let value = desired.to_checked_string()?;
        let applied = facts.config.current.get(disk).map(|t| parse_drive(disk, t)).transpose()?;
        // A drive with only a pending value so far stays pending; otherwise PVE's hot-plug rule decides.
        let pending = facts.running
            && applied
                .as_ref()
                .is_none_or(|a| hotplug::drive_update_waits(&facts.config.hotplug(), params.bus, a, &desired));
        let stored = stored_update(&desired, &current, facts.listed).to_string();
        let mut after = facts.config.with_change(disk, Some(&stored), pending);
        let mut unused = None;
        // A CD-ROM medium or a volume swapped in place: the old one is not registered unused,
        // since only the medium of a CD-ROM can change here.
        if !pending {
            if let (Some(old), Some(new_file)) = (applied.as_ref(), desired.get("file")) {
                if old.get("file") != Some(new_file) {
                    if let Some(vol) = becomes_unused(old, vmid) {
                        unused = add_unused(&mut after, &vol)?;
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
        });
    }

    // Create (or replace, with create: forced).
    let mut value =
        PropertyString::new(format_for_key(disk).ok_or_else(|| Error::Internal(format!("{disk} is not a drive key")))?);
    let (msg, predicted_file, predicted_size) = if let Some(iso) = &params.iso_image {
        value.set_checked("file", iso).map_err(|e| Error::args(format!("iso_image: {e}")))?;
        let size = existing_volume_size(iso, facts.listed);
        (format!("CD-ROM was created on {disk} bus in VM {vmid}"), Some(iso.clone()), size)
    } else {
        let storage = params.storage.as_deref().ok_or_else(|| Error::args("The storage option must be specified."))?;
        // a new disk and an import both get a new volume, named alike
        let vol = predict_new_disk(facts.config, facts.storages, facts.listed, storage, vmid, params.format.as_deref())
            .map(|v| on_template(facts.config, facts.storages, v, vmid));
        if let Some(src) = &params.import_from {
            value.set_checked("file", &format!("{storage}:0")).map_err(|e| Error::args(format!("storage: {e}")))?;
            value.set_checked("import-from", src).map_err(|e| Error::args(format!("import_from: {e}")))?;
            (format!("Disk {disk} imported into VM {vmid}"), vol, existing_volume_size(src, facts.listed))
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
            // efidisk0 and tpmstate0 get fixed sizes, whatever the task asks (§8.5).
            let plugintype = facts.storages.iter().find(|s| s.storage == storage).map(|s| s.plugintype.as_str());
            let efitype = params.options.iter().find(|(k, _)| k == "efitype").map(|(_, v)| v.as_str());
            let size = match (special, plugintype) {
                (true, Some(t)) => fixed_volume_size(params.bus, t, efitype).map(format_size),
                (true, None) => Some(KNOWN_AFTER_APPLY.to_string()),
                (false, _) => Some(format_size(bytes)),
            };
            (format!("Disk {disk} created in VM {vmid}"), vol, size)
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

    // What PVE will store: the allocated volume, `format=` dropped, the size filled in; what
    // cannot be known before PVE allocates it is marked (the imported disk's size outside check
    // mode, a volume on a storage storage.cfg does not show us).
    let mut stored = value.clone();
    stored.remove("import-from");
    if params.iso_image.is_none() {
        stored.remove("format");
    }
    match &predicted_file {
        Some(f) => stored.set("file", f),
        None => stored.set("file", &format!("{}:{KNOWN_AFTER_APPLY}", params.storage.as_deref().unwrap_or(""))),
    }
    if let Some(size) = &predicted_size {
        stored.set("size", size);
    }
    let stored = stored.to_string();

    let applied = facts.config.current.get(disk).map(|t| parse_drive(disk, t)).transpose()?;
    let pending = facts.running
        && hotplug::drive_plug_waits(&facts.config.hotplug(), params.bus)
        && !(params.iso_image.is_some() && applied.as_ref().is_some_and(|a| a.get("media") == Some("cdrom")));
    let mut after = facts.config.with_change(disk, Some(&stored), pending);
    let mut unused = None;
    if !pending {
        if let Some(old) = &applied {
            if let Some(vol) = becomes_unused(old, vmid) {
                unused = add_unused(&mut after, &vol)?;
            }
        }
    }
    if current.is_some() {
        warnings.push(format!(
            "create: forced replaces {disk}; its old volume is kept{}",
            unused.as_deref().map(|u| format!(" as {u}")).unwrap_or_default()
        ));
    }
    Ok(Plan { action: Action::SetDrive(send), msg, warnings, after, target_after: None, pending, unused })
}

fn plan_remove(params: &Params, facts: &Facts, current: Option<PropertyString>, destroy: bool) -> Result<Plan> {
    // Only whether the drive exists matters here: what leaves it is what PVE has applied.
    let disk = params.disk.as_str();
    let vmid = facts.vmid;
    if current.is_none() {
        return Ok(Plan::unchanged(
            facts.config,
            if destroy {
                format!("Disk {disk} is already absent in VM {vmid}")
            } else {
                format!("Disk {disk} not present in VM {vmid} config")
            },
        ));
    };
    if !destroy && params.bus == "unused" {
        return Ok(Plan::unchanged(facts.config, format!("Disk {disk} already detached in VM {vmid}")));
    }
    // unusedN are freed at once; drives on a running VM only with disk hotplug, scsi/virtio (§11).
    let pending = params.bus != "unused"
        && facts.running
        && hotplug::drive_plug_waits(&facts.config.hotplug(), params.bus)
        && facts.config.current.contains_key(disk);
    let mut after = facts.config.with_change(disk, None, pending);
    if pending && destroy {
        after.pending_delete.insert(disk.to_string(), true);
    }
    let mut unused = None;
    if !destroy && !pending {
        if let Some(vol) = facts
            .config
            .current
            .get(disk)
            .map(|t| parse_drive(disk, t))
            .transpose()?
            .and_then(|d| becomes_unused(&d, vmid))
        {
            unused = add_unused(&mut after, &vol)?;
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
    })
}

/// The lines of a config a disk task shows in `--diff`: the drive and every `unusedN`.
pub fn diff_view(config: &VmConfig, disk: &str) -> BTreeMap<String, String> {
    config.effective().into_iter().filter(|(k, _)| k == disk || k.starts_with("unused")).collect()
}
