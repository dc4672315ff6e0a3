//! The plan of `state: moved`: to another storage (`move_disk`), or to another VM (a reassign, with the volume renamed for it). Pure.

use module_utils::check::unknown::KNOWN_AFTER_APPLY;
use module_utils::pve::devices::{disk_bus, volume_storage};
use module_utils::pve::propstring::{format_size, PropertyString};
use module_utils::pve::storage::fixed_volume_size;
use module_utils::pve::volume::Volume;
use module_utils::{Error, Result};

use super::volumes::{add_unused, disk_numbers, on_template, predict_volume, volume_format};
use super::{missing, Action, Facts, MoveParams, Plan};
use crate::params::Params;

pub(super) fn plan_move(params: &Params, facts: &Facts, current: Option<PropertyString>) -> Result<Plan> {
    let disk = params.disk.as_str();
    let vmid = facts.vmid;
    let current = current.ok_or_else(|| missing(params, facts))?;
    if current.get("media") == Some("cdrom") {
        return Err(Error::failed(format!("{disk} of VM {vmid} is a CD-ROM drive: it cannot be moved")));
    }
    let target = params.target_storage.as_deref().ok_or_else(|| {
        Error::args("state is moved but any of the following are missing: target_storage, target_vmid")
    })?;
    let volume = current.get("file").unwrap_or("").to_string();
    let source_storage = volume_storage(&volume).unwrap_or("").to_string();
    let source_format = volume_format(&current);
    if source_storage == target && params.format.as_deref().is_none_or(|f| Some(f) == source_format.as_deref()) {
        return Ok(Plan::unchanged(facts.config, format!("Disk {disk} already at {target} storage")));
    }
    let mut form: MoveParams = vec![("disk".into(), disk.into()), ("storage".into(), target.into())];
    if let Some(f) = &params.format {
        form.push(("format".into(), f.clone()));
    }
    form.push(("delete".into(), if params.delete_moved { "1" } else { "0" }.into()));
    if let Some(b) = params.bwlimit {
        form.push(("bwlimit".into(), b.to_string()));
    }
    // QemuServer.pm resolve_dst_disk_format: the format asked, else the source's where the
    // target takes it, else the target's default.
    let new_volume = predict_volume(
        facts.config,
        facts.storages,
        facts.listed,
        target,
        vmid,
        params.format.as_deref(),
        source_format.as_deref(),
    )
    // a template's moved disk becomes a base volume (API2/Qemu.pm `move_vm_disk` calls
    // `template_create` on it after the copy)
    .map(|v| on_template(facts.config, facts.storages, v, vmid));
    let mut moved = current.clone();
    moved.remove("format");
    // QemuServer.pm clone_disk: EFI vars and TPM state are allocated at their fixed size on the
    // target, whatever the source's was (528K on a directory becomes 4M on LVM, and back; §8.5)
    let target_type = facts.storages.iter().find(|s| s.storage == target).map(|s| s.plugintype.as_str());
    if let (Some(bus), Some(t)) = (disk_bus(disk), target_type) {
        if let Some(bytes) = fixed_volume_size(bus, t, current.get("efitype")) {
            moved.set("size", &format_size(bytes));
        }
    }
    match &new_volume {
        Some(v) => moved.set("file", v),
        None => moved.set("file", &format!("{target}:{KNOWN_AFTER_APPLY}")),
    }
    let value = moved.to_string();
    let mut after = facts.config.with_change(disk, Some(&value), facts.config.is_pending(disk));
    let unused = if params.delete_moved { None } else { add_unused(&mut after, &volume)? };
    Ok(Plan {
        action: Action::Move(form),
        msg: format!("Disk {disk} moved from VM {vmid} storage {source_storage}"),
        warnings: Vec::new(),
        after,
        target_after: None,
        pending: false,
        unused,
    })
}

pub(super) fn plan_reassign(
    params: &Params,
    facts: &Facts,
    current: Option<PropertyString>,
    target_vmid: u64,
) -> Result<Plan> {
    let disk = params.disk.as_str();
    let vmid = facts.vmid;
    let target_disk = params.target_disk.clone().unwrap_or_else(|| disk.to_string());
    let (tvmid, tconfig) =
        facts.target.ok_or_else(|| Error::failed(format!("VM with vmid {target_vmid} does not exist in cluster")))?;
    if tvmid == vmid {
        return Err(Error::args(crate::params::SAME_VMID));
    }
    let Some(current) = current else {
        if tconfig.get(&target_disk).is_some() {
            return Ok(Plan::unchanged(
                facts.config,
                format!("Disk {disk} already moved to VM {tvmid} as {target_disk}"),
            ));
        }
        return Err(missing(params, facts));
    };
    if tconfig.get(&target_disk).is_some() {
        return Err(Error::failed(format!("VM {tvmid} already has a {target_disk}: choose a free target_disk")));
    }
    let volume = current.get("file").unwrap_or("").to_string();
    let storage = volume_storage(&volume).unwrap_or("").to_string();
    let mut form: MoveParams = vec![
        ("disk".into(), disk.into()),
        ("target-vmid".into(), tvmid.to_string()),
        ("target-disk".into(), target_disk.clone()),
    ];
    if let Some(b) = params.bwlimit {
        form.push(("bwlimit".into(), b.to_string()));
    }
    // The volume is renamed for the target VM (pve-storage `rename_volume`).
    let ext = Volume::parse(&volume).and_then(|v| v.name_format);
    let used = disk_numbers(tconfig, &storage, tvmid, None);
    let n = (0..).find(|n| !used.contains(n)).unwrap_or(0);
    // a file storage's name carries its format; a block storage's has none
    let new_volume = match ext {
        Some(ext) => format!("{storage}:{tvmid}/vm-{tvmid}-disk-{n}.{ext}"),
        None => format!("{storage}:vm-{tvmid}-disk-{n}"),
    };
    let mut moved = current.clone();
    moved.set("file", &new_volume);
    let after = facts.config.with_change(disk, None, false);
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
    })
}
