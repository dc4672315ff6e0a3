//! What qemu-server's `clone_disk` refuses of a drive it mirrors (a full copy of a running VM's drive, by a clone or a disk move): the TPM state, and `aio=io_uring` towards a storage known to break it.

use std::collections::BTreeMap;

use super::Preflight;
use crate::error::Result;
use crate::pve::devices::{is_disk_key, Disk};
use crate::pve::storage::StorageConfig;
use crate::pve::volume::{Volume, VolumeKind};

/// QemuServer.pm `storage_allows_io_uring_default`, for the storage types it names by storage.cfg
/// alone: `lvm` and `cifs` never. (An `rbd` storage with `krbd` refuses it too unless the drive's
/// cache is direct, `drive_uses_cache_direct`; `krbd` is not among what `StorageConfig` reads, so
/// that case is left to PVE.)
fn refuses_io_uring(scfg: &StorageConfig) -> bool {
    matches!(scfg.plugintype.as_str(), "lvm" | "cifs")
}

/// QemuServer.pm `clone_disk` for the drive `key` (value `value`) of a running VM copied in full
/// to `target` (QEMU mirrors it: `$use_drive_mirror`, no snapshot, not `unusedN`), before it
/// allocates: `tpmstate0` cannot be mirrored; then `clone_disk_check_io_uring`: a drive whose own
/// `aio` is `io_uring`, moved to another storage that does not allow io_uring, is refused. (A drive
/// without `aio` is checked only when the running QEMU's machine is older than 10.0, which only
/// QMP tells: docs/refusals.md says so.) PVE's words, without the caller's prefix.
pub fn mirror_refusal(key: &str, value: &str, target: &str, storages: &[StorageConfig]) -> Option<&'static str> {
    if key.starts_with("unused") || !is_disk_key(key) {
        return None;
    }
    if key == "tpmstate0" {
        return Some("cannot move TPM state while VM is running");
    }
    let disk = Disk::parse(key, value)?;
    let source = disk.storage.as_deref()?;
    // an EFI disk, a TPM state and a cloud-init drive are allocated by their own branch, unchecked
    let cloudinit = Volume::parse(disk.volume.as_deref()?).is_some_and(|v| v.kind == VolumeKind::CloudInit);
    if source == target
        || key == "efidisk0"
        || cloudinit
        || disk.other.get("aio").map(String::as_str) != Some("io_uring")
    {
        return None;
    }
    let dst = storages.iter().find(|s| s.storage == target)?;
    refuses_io_uring(dst).then_some("target storage is known to cause issues with aio=io_uring (used by current drive)")
}

impl Preflight<'_> {
    /// `mirror_refusal` for the drive `key` of a running VM moved to `target`.
    pub fn mirrored_drive(&self, key: &str, value: &str, target: &str) -> Result<Option<&'static str>> {
        Ok(mirror_refusal(key, value, target, &self.storages()?))
    }

    /// A full clone of a running VM whose config is `source` to `storage` (each drive's own
    /// storage without it), as `clone_vm`'s worker meets each drive in `clone_disk`: the first
    /// refusal, in the keys' order. CD-ROMs are not copied.
    pub fn mirrored_clone(
        &self,
        source: &BTreeMap<String, String>,
        storage: Option<&str>,
    ) -> Result<Option<&'static str>> {
        let storages = self.storages()?;
        Ok(source.iter().filter(|(k, _)| k.as_str() != "tpmstate0").find_map(|(key, value)| {
            let disk = Disk::parse(key, value).filter(|d| d.media != "cdrom")?;
            mirror_refusal(key, value, storage.or(disk.storage.as_deref())?, &storages)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn storages() -> Vec<StorageConfig> {
        [("local-lvm", "lvmthin"), ("thick", "lvm"), ("share", "cifs"), ("vmdata", "dir")]
            .iter()
            .filter_map(|(sid, t)| StorageConfig::from_json(&json!({"storage": sid, "type": t, "content": "images"})))
            .collect()
    }

    #[test]
    fn a_mirrored_tpm_state_and_io_uring_towards_lvm_or_cifs_are_refused() {
        let s = storages();
        let io = "local-lvm:vm-100-disk-1,aio=io_uring,size=4G";
        assert_eq!(
            mirror_refusal("tpmstate0", "local-lvm:vm-100-disk-2,size=4M", "vmdata", &s),
            Some("cannot move TPM state while VM is running")
        );
        let words = Some("target storage is known to cause issues with aio=io_uring (used by current drive)");
        assert_eq!(mirror_refusal("scsi1", io, "thick", &s), words);
        assert_eq!(mirror_refusal("scsi1", io, "share", &s), words);
        // another storage that takes io_uring, the same storage, no explicit aio, an unused volume: not refused
        assert_eq!(mirror_refusal("scsi1", io, "vmdata", &s), None);
        assert_eq!(mirror_refusal("scsi1", "thick:vm-100-disk-1,aio=io_uring", "thick", &s), None);
        assert_eq!(mirror_refusal("scsi1", "local-lvm:vm-100-disk-1,size=4G", "thick", &s), None);
        assert_eq!(mirror_refusal("unused0", "local-lvm:vm-100-disk-1", "thick", &s), None);
    }
}
