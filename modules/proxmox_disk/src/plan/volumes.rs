//! The volume names and `unusedN` keys PVE will give, predicted from a config without reading the storage (docs/pve-semantics.md §8, §11).

use std::collections::{BTreeMap, BTreeSet};

use module_utils::check::unknown::KNOWN_AFTER_APPLY;
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::parse_new_disk;
use module_utils::pve::propstring::PropertyString;
use module_utils::pve::resources::StorageResource;
use module_utils::pve::volume::{Volume, VolumeKind};

use super::GIB;

/// `vm-<vmid>-disk-<n>` / `base-<vmid>-disk-<n>` numbers of `storage` that the config refers to.
pub(super) fn disk_numbers(config: &VmConfig, storage: &str, vmid: u64) -> BTreeSet<u32> {
    config
        .current
        .values()
        .chain(config.pending.values())
        .filter_map(|value| Volume::parse(value.split(',').next().unwrap_or("")))
        .filter(|volume| volume.storage == storage)
        .filter_map(|volume| volume.disk_number(vmid))
        .collect()
}

/// How many new disks `config` still asks PVE to allocate on `storage`: drives written as
/// `STORAGE:N` or with the volume marked known after apply (a VM an earlier task of this check
/// run creates). Cloud-init drives are not counted: their volume is `vm-<vmid>-cloudinit`.
fn unallocated(config: &VmConfig, storage: &str) -> usize {
    config
        .effective()
        .values()
        .filter_map(|value| value.split(',').next())
        .filter(|file| {
            let new_disk = parse_new_disk(file).is_some_and(|(s, _)| s == Some(storage));
            let marked = file.strip_prefix(storage).and_then(|r| r.strip_prefix(':')) == Some(KNOWN_AFTER_APPLY);
            new_disk || marked
        })
        .count()
}

/// The volume PVE will allocate on `storage` for `vmid`: pve-storage `Plugin.pm`
/// `find_free_diskname` gives the lowest `vm-<vmid>-disk-<n>` that no volume on the storage has
/// (`listed`: its content as read, empty outside check mode) and that no drive of the config
/// names; the new disks the config still waits to allocate there take theirs first, in order
/// (qemu-server `create_disks`). `None` when it cannot be known without reading the storage (a
/// file storage whose default format we cannot see).
pub fn predict_volume(
    config: &VmConfig,
    storages: &[StorageResource],
    listed: &BTreeMap<String, Option<u64>>,
    storage: &str,
    vmid: u64,
    format: Option<&str>,
) -> Option<String> {
    let info = storages.iter().find(|s| s.storage == storage)?;
    let mut used = disk_numbers(config, storage, vmid);
    used.extend(
        listed
            .keys()
            .filter_map(|volid| Volume::parse(volid))
            .filter(|volume| volume.storage == storage)
            .filter_map(|volume| volume.disk_number(vmid)),
    );
    let n = (0..).filter(|n| !used.contains(n)).nth(unallocated(config, storage))?;
    if info.is_file_based() {
        let ext = format?;
        Some(format!("{storage}:{vmid}/vm-{vmid}-disk-{n}.{ext}"))
    } else {
        Some(format!("{storage}:vm-{vmid}-disk-{n}"))
    }
}

/// The lowest free `unusedN` of a config (AbstractConfig.pm `add_unused_volume`).
pub(super) fn next_unused(config: &VmConfig) -> String {
    let effective = config.effective();
    let n = (0..256)
        .find(|n| !effective.contains_key(&format!("unused{n}")) && !config.current.contains_key(&format!("unused{n}")))
        .unwrap_or(255);
    format!("unused{n}")
}

/// Whether PVE registers this drive's volume as `unusedN` when it leaves the drive: only a
/// volume the VM owns, never a CD-ROM or a cloud-init drive (QemuServer.pm
/// `vmconfig_register_unused_drive`, docs/pve-semantics.md §11).
pub(super) fn becomes_unused(drive: &PropertyString, vmid: u64) -> Option<String> {
    if drive.get("media") == Some("cdrom") {
        return None;
    }
    let volume = drive.get("file")?;
    let parsed = Volume::parse(volume)?;
    (parsed.owner == Some(vmid) && parsed.kind != VolumeKind::CloudInit).then(|| volume.to_string())
}

/// Add `volume` as an unused entry of `config` (if not listed already); returns the key.
pub(super) fn add_unused(config: &mut VmConfig, volume: &str) -> Option<String> {
    if config.effective().iter().any(|(k, v)| k.starts_with("unused") && v == volume) {
        return None;
    }
    let key = next_unused(config);
    config.current.insert(key.clone(), volume.to_string());
    Some(key)
}

/// The size text PVE allocates from `STORAGE:N` (N GiB, fractions allowed).
pub(super) fn gib_text(bytes: u64) -> String {
    if bytes % GIB == 0 {
        (bytes / GIB).to_string()
    } else {
        format!("{}", bytes as f64 / GIB as f64)
    }
}

/// The format of a drive's volume: its `format=`, else what the volume's name says (PVE reads
/// block storages' volumes as raw).
pub(super) fn volume_format(drive: &PropertyString) -> Option<String> {
    if let Some(f) = drive.get("format") {
        return Some(f.to_string());
    }
    Volume::parse(drive.get("file")?).map(|v| v.format().to_string())
}
