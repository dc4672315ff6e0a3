//! What qemu-server's `clone_disk` refuses of a drive it mirrors (a full copy of a running VM's drive, by a clone or a disk move): the TPM state, and io_uring (explicit, or the default of a machine older than 10.0) towards a storage known to break it.

use std::collections::BTreeMap;

use super::Preflight;
use crate::error::Result;
use crate::pve::devices::{is_disk_key, Disk};
use crate::pve::machine::version;
use crate::pve::resources::VmResource;
use crate::pve::storage::StorageConfig;
use crate::pve::volume::{Volume, VolumeKind};

/// Drive.pm `storage_allows_io_uring_default`: never on `lvm` or `cifs`, not on `rbd` with `krbd`
/// unless the drive's cache is direct (`direct`).
fn allows_io_uring(scfg: &StorageConfig, direct: bool) -> bool {
    !(matches!(scfg.plugintype.as_str(), "lvm" | "cifs") || scfg.plugintype == "rbd" && scfg.krbd && !direct)
}

/// Drive.pm `drive_uses_cache_direct` for a drive (not a CD-ROM: those are not mirrored) with
/// `cache` on its source storage `src`.
fn cache_direct(cache: Option<&str>, src: &StorageConfig) -> bool {
    cache.map_or(src.plugintype != "btrfs" || src.nocow, |c| matches!(c, "off" | "none" | "directsync"))
}

/// QemuServer.pm `clone_disk` for the drive `key` (value `value`) of a running VM copied in full
/// to `target` (QEMU mirrors it: `$use_drive_mirror`, no snapshot, not `unusedN`), before it
/// allocates: `tpmstate0` cannot be mirrored; then `clone_disk_check_io_uring`: a drive that uses
/// io_uring, moved to another storage that does not allow io_uring, is refused. A drive uses it
/// when its `aio` is `io_uring`; without `aio`, when the running QEMU's machine is older than
/// 10.0 (`get_current_qemu_machine`, which `status/current` shows as `running-machine`: `machine`
/// is asked for it, only then) and the source storage allows io_uring by default
/// (`storage_allows_io_uring_default` with `drive_uses_cache_direct`).
/// PVE's words, without the caller's prefix.
pub fn mirror_refusal(
    key: &str,
    value: &str,
    target: &str,
    storages: &[StorageConfig],
    machine: &mut dyn FnMut() -> Result<Option<String>>,
) -> Result<Option<&'static str>> {
    if key.starts_with("unused") || !is_disk_key(key) {
        return Ok(None);
    }
    if key == "tpmstate0" {
        return Ok(Some("cannot move TPM state while VM is running"));
    }
    let Some(disk) = Disk::parse(key, value) else { return Ok(None) };
    let (Some(source), Some(volume)) = (disk.storage.as_deref(), disk.volume.as_deref()) else { return Ok(None) };
    // an EFI disk, a TPM state and a cloud-init drive are allocated by their own branch, unchecked
    let cloudinit = Volume::parse(volume).is_some_and(|v| v.kind == VolumeKind::CloudInit);
    let (Some(src), Some(dst)) =
        (storages.iter().find(|s| s.storage == source), storages.iter().find(|s| s.storage == target))
    else {
        return Ok(None);
    };
    let direct = cache_direct(disk.other.get("cache").map(String::as_str), src);
    if source == target || key == "efidisk0" || cloudinit || allows_io_uring(dst, direct) {
        return Ok(None);
    }
    let uses = match disk.other.get("aio").map(String::as_str) {
        Some(aio) => aio == "io_uring",
        None => {
            allows_io_uring(src, direct)
                && machine()?.as_deref().and_then(version).is_some_and(|(major, minor, _)| (major, minor) < (10, 0))
        }
    };
    Ok(uses.then_some("target storage is known to cause issues with aio=io_uring (used by current drive)"))
}

impl Preflight<'_> {
    /// The machine QEMU runs `vm` with: `running-machine` of `GET .../status/current` (QemuServer.pm
    /// `vmstatus`, its `$machinecb` from QMP `query-machines`), `None` when PVE shows none.
    fn running_machine(&self, vm: &VmResource) -> Result<Option<String>> {
        let status = self.api.get(&vm.path().join(["status", "current"]), &Vec::new())?;
        Ok(status.get("running-machine").and_then(|m| m.as_str()).map(str::to_string))
    }

    /// `mirror_refusal` for the drive `key` of the running VM `vm` moved to `target`.
    pub fn mirrored_drive(
        &self,
        vm: &VmResource,
        key: &str,
        value: &str,
        target: &str,
    ) -> Result<Option<&'static str>> {
        mirror_refusal(key, value, target, &self.storages()?, &mut || self.running_machine(vm))
    }

    /// A full clone of the running VM `vm` whose config is `source` to `storage` (each drive's own
    /// storage without it), as `clone_vm`'s worker meets each drive in `clone_disk`: the first
    /// refusal, in the keys' order. CD-ROMs are not copied. `status/current` is read at most once.
    pub fn mirrored_clone(
        &self,
        vm: &VmResource,
        source: &BTreeMap<String, String>,
        storage: Option<&str>,
    ) -> Result<Option<&'static str>> {
        let storages = self.storages()?;
        let mut read: Option<Option<String>> = None;
        let mut machine = || -> Result<Option<String>> {
            if read.is_none() {
                read = Some(self.running_machine(vm)?);
            }
            Ok(read.clone().flatten())
        };
        for (key, value) in source.iter().filter(|(k, _)| k.as_str() != "tpmstate0") {
            let Some(disk) = Disk::parse(key, value).filter(|d| d.media != "cdrom") else { continue };
            let Some(target) = storage.or(disk.storage.as_deref()) else { continue };
            if let Some(words) = mirror_refusal(key, value, target, &storages, &mut machine)? {
                return Ok(Some(words));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn storages() -> Vec<StorageConfig> {
        [("local-lvm", "lvmthin"), ("thick", "lvm"), ("share", "cifs"), ("vmdata", "dir"), ("ceph", "rbd")]
            .iter()
            .filter_map(|(sid, t)| StorageConfig::from_json(&json!({"storage": sid, "type": t, "content": "images"})))
            .chain(StorageConfig::from_json(&json!({"storage": "kceph", "type": "rbd", "krbd": 1})))
            .collect()
    }

    fn no_read() -> Result<Option<String>> {
        panic!("status/current read for a drive that needs no running machine")
    }

    fn refusal(key: &str, value: &str, target: &str, machine: Option<&str>) -> Option<&'static str> {
        let s = storages();
        let machine = machine.map(str::to_string);
        mirror_refusal(key, value, target, &s, &mut || Ok(machine.clone())).unwrap()
    }

    #[test]
    fn a_mirrored_tpm_state_and_io_uring_towards_lvm_or_cifs_are_refused() {
        let s = storages();
        let io = "local-lvm:vm-100-disk-1,aio=io_uring,size=4G";
        let words = Some("target storage is known to cause issues with aio=io_uring (used by current drive)");
        let explicit = |key, value, target| mirror_refusal(key, value, target, &s, &mut no_read).unwrap();
        assert_eq!(
            explicit("tpmstate0", "local-lvm:vm-100-disk-2,size=4M", "vmdata"),
            Some("cannot move TPM state while VM is running")
        );
        assert_eq!(explicit("scsi1", io, "thick"), words);
        assert_eq!(explicit("scsi1", io, "share"), words);
        // another storage that takes io_uring, the same storage, an unused volume, another aio: not refused, nothing read
        assert_eq!(explicit("scsi1", io, "vmdata"), None);
        assert_eq!(explicit("scsi1", "thick:vm-100-disk-1,aio=io_uring", "thick"), None);
        assert_eq!(explicit("unused0", "local-lvm:vm-100-disk-1", "thick"), None);
        assert_eq!(explicit("scsi1", "local-lvm:vm-100-disk-1,aio=native", "thick"), None);
    }

    #[test]
    fn without_aio_the_running_machine_decides() {
        let words = Some("target storage is known to cause issues with aio=io_uring (used by current drive)");
        let plain = "local-lvm:vm-100-disk-1,size=4G";
        assert_eq!(refusal("scsi1", plain, "thick", Some("pc-i440fx-9.2+pve1")), words);
        assert_eq!(refusal("scsi1", plain, "share", Some("pc-q35-8.1")), words);
        assert_eq!(refusal("scsi1", plain, "thick", Some("pc-i440fx-10.0+pve1")), None);
        assert_eq!(refusal("scsi1", plain, "thick", Some("pc-q35-10.1")), None);
        assert_eq!(refusal("scsi1", plain, "thick", None), None);
        // a source that does not allow io_uring by default: the drive does not use it
        assert_eq!(refusal("scsi1", "share:100/vm-100-disk-1.raw", "thick", Some("pc-i440fx-9.2")), None);
        // krbd: an rbd target refuses a cache that is not direct; an rbd source with one does not use io_uring
        assert_eq!(refusal("scsi1", "local-lvm:vm-100-disk-1,aio=io_uring,cache=writeback", "kceph", None), words);
        assert_eq!(refusal("scsi1", "local-lvm:vm-100-disk-1,aio=io_uring", "kceph", None), None);
        assert_eq!(refusal("scsi1", "local-lvm:vm-100-disk-1,aio=io_uring,cache=writeback", "ceph", None), None);
        assert_eq!(refusal("scsi1", "kceph:vm-100-disk-1,cache=writeback", "thick", Some("pc-q35-9.0")), None);
        assert_eq!(refusal("scsi1", "ceph:vm-100-disk-1,cache=writeback", "thick", Some("pc-q35-9.0")), words);
    }
}
