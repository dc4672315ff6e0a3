//! What a volume's storage type refuses before a clone or a reassign's task: the 'copy' or 'clone' feature of each drive a clone makes (Qemu.pm `clone_vm`), the 'rename' feature of a disk moved to another VM (`move_vm_disk`).

use std::collections::BTreeMap;

use super::{refuse, Preflight};
use crate::error::Result;
use crate::pve::devices::{is_disk_key, Disk};
use crate::pve::storage::{volume_has_feature, Feature};
use crate::pve::volume::{Volume, VolumeKind};

impl Preflight<'_> {
    /// A clone of a VM whose config is `source` (the snapshot's config when `snapshot`), as
    /// qemu-server `API2/Qemu.pm` `clone_vm` checks each drive in its keys' order before its
    /// task: a CD-ROM is copied as it is; a drive copied in full (every drive of a full clone,
    /// a cloud-init drive and `tpmstate0` of a linked one) needs the 'copy' feature of its
    /// volume, a linked one the 'clone' feature (pve-storage `volume_has_feature`, of the
    /// snapshot when one is named: `storage::volume_has_feature`), else
    /// `Full clone feature is not supported for [a snapshot of ]'<volid>' (<key>)` or
    /// `Linked ...`. A storage whose type or features are not known here (or that this user
    /// cannot see) is left to PVE. §15, §51.1.
    pub fn clone_features(&self, source: &BTreeMap<String, String>, full: bool, snapshot: bool) -> Result<()> {
        let storages = self.storages()?;
        for (key, value) in source.iter().filter(|(k, _)| is_disk_key(k) && !k.starts_with("unused")) {
            let Some(disk) = Disk::parse(key, value) else { continue };
            let Some(volid) = disk.volume.as_deref() else { continue };
            let volume = Volume::parse(volid);
            // drive_is_cdrom with exclude_cloudinit: a cloud-init drive is copied, not skipped
            let cloudinit = volume.as_ref().is_some_and(|v| v.kind == VolumeKind::CloudInit);
            if disk.media == "cdrom" && !cloudinit {
                continue;
            }
            let Some(volume) = volume.filter(|v| v.kind != VolumeKind::Iso) else { continue };
            let Some(scfg) = storages.iter().find(|s| s.storage == volume.storage) else { continue };
            let copy = full || cloudinit || key == "tpmstate0";
            let feature = if copy { Feature::Copy } else { Feature::Clone };
            if volume_has_feature(&scfg.plugintype, feature, &volume, snapshot) == Some(false) {
                let kind = if copy { "Full" } else { "Linked" };
                let of = if snapshot { "a snapshot of " } else { "" };
                let option = if copy && snapshot { "snapname" } else { "full" };
                return Err(refuse(option, format!("{kind} clone feature is not supported for {of}'{volid}' ({key})")));
            }
        }
        Ok(())
    }

    /// A disk on `volid` moved to another VM, as qemu-server `API2/Qemu.pm` `move_vm_disk`
    /// checks it after the snapshots' use of the volume and before the running source: its
    /// storage must rename it (pve-storage `volume_has_feature` 'rename': not ZFS over iSCSI,
    /// iSCSI, ESXi nor PBS, never a base volume), else `Storage does not support moving of this
    /// disk to another VM`. `None`: PVE moves it, or the storage's type is not known here.
    pub fn reassign_feature(&self, volid: &str) -> Result<Option<String>> {
        let Some(volume) = Volume::parse(volid) else { return Ok(None) };
        let storages = self.storages()?;
        let Some(scfg) = storages.iter().find(|s| s.storage == volume.storage) else { return Ok(None) };
        let refused = volume_has_feature(&scfg.plugintype, Feature::Rename, &volume, false) == Some(false);
        Ok(refused.then(|| "Storage does not support moving of this disk to another VM".to_string()))
    }
}
