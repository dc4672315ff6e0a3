//! The volume names and `unusedN` keys PVE will give, predicted from a config, storage.cfg and (in check mode) the storage's volumes (docs/pve-semantics.md §8, §11, §22).

use std::collections::{BTreeMap, BTreeSet};

use module_utils::check::unknown::KNOWN_AFTER_APPLY;
use module_utils::error::{Error, Result};
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::parse_new_disk;
use module_utils::pve::propstring::PropertyString;
use module_utils::pve::storage::{has_template_feature, StorageConfig};
use module_utils::pve::volume::{Volume, VolumeKind};

use super::GIB;

/// `vm-<vmid>-disk-<n>` / `base-<vmid>-disk-<n>` numbers of `storage` that the config refers to
/// (only those in `format`, when given: nfs and cifs number each format apart, §22.2).
pub(super) fn disk_numbers(config: &VmConfig, storage: &str, vmid: u64, format: Option<&str>) -> BTreeSet<u32> {
    let volumes =
        config.current.values().chain(config.pending.values()).map(|value| value.split(',').next().unwrap_or(""));
    numbers(volumes, storage, vmid, format)
}

/// The disk numbers of `vmid` that `volumes` hold on `storage` (in `format` only, when given).
fn numbers<'v>(
    volumes: impl Iterator<Item = &'v str>,
    storage: &str,
    vmid: u64,
    format: Option<&str>,
) -> BTreeSet<u32> {
    volumes
        .filter_map(Volume::parse)
        .filter(|volume| volume.storage == storage && format.is_none_or(|f| volume.format() == f))
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
/// (qemu-server `create_disks`). Its format (a file storage's extension) is the one `requested`,
/// else for a copy the `source`'s when the storage takes it, else the storage's default
/// (`StorageConfig::new_volume_format`). `None` for a storage storage.cfg does not show us.
pub fn predict_volume(
    config: &VmConfig,
    storages: &[StorageConfig],
    listed: &BTreeMap<String, Option<u64>>,
    storage: &str,
    vmid: u64,
    requested: Option<&str>,
    source: Option<&str>,
) -> Option<String> {
    let scfg = storages.iter().find(|s| s.storage == storage)?;
    let format = scfg.new_volume_format(requested, source);
    Some(named(config, scfg, listed, vmid, &format))
}

/// The volume PVE will allocate on `storage` for a new disk of `vmid` (`predict_volume`): in the
/// format `requested` as it is, else the storage's default (API2/Qemu.pm `create_disks` hands it
/// to `vdisk_alloc` without the fallback of a copy; the plugin may refuse it: §42.1).
pub fn predict_new_disk(
    config: &VmConfig,
    storages: &[StorageConfig],
    listed: &BTreeMap<String, Option<u64>>,
    storage: &str,
    vmid: u64,
    requested: Option<&str>,
) -> Option<String> {
    let scfg = storages.iter().find(|s| s.storage == storage)?;
    let format = requested.map_or_else(|| scfg.formats().1, str::to_string);
    Some(named(config, scfg, listed, vmid, &format))
}

/// The name `find_free_diskname` gives a new volume of `vmid` in `format` on `scfg`
/// (`predict_volume`).
fn named(
    config: &VmConfig,
    scfg: &StorageConfig,
    listed: &BTreeMap<String, Option<u64>>,
    vmid: u64,
    format: &str,
) -> String {
    let storage = scfg.storage.as_str();
    let by_format = scfg.numbers_by_format(format).then_some(format);
    let mut used = disk_numbers(config, storage, vmid, by_format);
    used.extend(numbers(listed.keys().map(String::as_str), storage, vmid, by_format));
    let n = (0..).filter(|n| !used.contains(n)).nth(unallocated(config, storage)).unwrap_or(0);
    scfg.volume_name(vmid, n, format)
}

/// The name a new volume of a template ends with: its base volume, `base-<vmid>-disk-<n>` for
/// `vm-<vmid>-disk-<n>` (qemu-server API2/Qemu.pm `create_disks` calls `vdisk_create_base` on a
/// disk it creates or imports when the VM is a template, `move_vm_disk` `template_create` on a
/// disk it moved). A volume without the `template` feature (`storage::has_template_feature`:
/// thick LVM's, where a template keeps its `vm-` volumes) keeps the name.
pub fn on_template(config: &VmConfig, storages: &[StorageConfig], volume: String, vmid: u64) -> String {
    let kept = Volume::parse(&volume).is_some_and(|vol| {
        storages.iter().any(|s| s.storage == vol.storage && has_template_feature(&s.plugintype, &vol) == Some(false))
    });
    if config.get("template") != Some("1") || kept {
        return volume;
    }
    volume.replacen(&format!("vm-{vmid}-disk-"), &format!("base-{vmid}-disk-"), 1)
}

/// The lowest free `unusedN` of a config (AbstractConfig.pm `add_unused_volume`): `None` when
/// all 256 are taken.
pub(super) fn next_unused(config: &VmConfig) -> Option<String> {
    let effective = config.effective();
    (0..256)
        .find(|n| !effective.contains_key(&format!("unused{n}")) && !config.current.contains_key(&format!("unused{n}")))
        .map(|n| format!("unused{n}"))
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

/// Add `volume` as an unused entry of `config` (if not listed already); returns the key. With
/// every `unusedN` taken PVE refuses the write that would leave the volume unused
/// (AbstractConfig.pm `add_unused_volume`, docs/pve-semantics.md §63.5).
pub(super) fn add_unused(config: &mut VmConfig, volume: &str) -> Result<Option<String>> {
    if config.effective().iter().any(|(k, v)| k.starts_with("unused") && v == volume) {
        return Ok(None);
    }
    let key =
        next_unused(config).ok_or_else(|| Error::failed("Too many unused volumes - please delete them first."))?;
    config.current.insert(key.clone(), volume.to_string());
    Ok(Some(key))
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
