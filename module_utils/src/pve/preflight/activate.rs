//! Plugin.pm `activate_volume` on a file storage: a volume the VM's config names must still be there, which the storage's content listing tells before a write that activates it (docs/pve-semantics.md §65.3).

use std::collections::BTreeMap;

use super::Preflight;
use crate::error::{Error, Result};
use crate::pve::devices::{is_disk_key, Disk};
use crate::pve::permissions::{lists_volume, Privileges};
use crate::pve::volume::{content_and_owner, Volume, VolumeKind};

/// The storage types whose `activate_volume` is Plugin.pm's, which dies when the file is gone
/// (`-e $path`): the directory, NFS, CIFS, CephFS, BTRFS and GlusterFS plugins (pve-storage
/// 9.1.7: the others override it, and LVM, ZFS, RBD and iSCSI volumes are no files).
pub(super) const FILE_TYPES: &[&str] = &["dir", "nfs", "cifs", "cephfs", "btrfs", "glusterfs"];

/// QemuServer.pm `get_current_vm_volumes`, what `vm_start` activates: every drive's volume id
/// (an ISO's too; `none`, `cdrom` and paths are no volume ids), and a hibernated VM's `vmstate`;
/// not a cloud-init volume, which the start makes again when it is gone (Cloudinit.pm
/// `commit_cloudinit_disk`).
pub fn current_volumes(config: &BTreeMap<String, String>) -> Vec<String> {
    let drives = config.iter().filter(|(k, _)| is_disk_key(k) && !k.starts_with("unused"));
    let mut out: Vec<String> = drives.filter_map(|(k, v)| Disk::parse(k, v)?.volume).collect();
    out.extend(config.get("vmstate").cloned());
    out.retain(|v| Volume::parse(v).is_some_and(|v| v.kind != VolumeKind::CloudInit));
    out
}

impl Preflight<'_> {
    /// Storage.pm `activate_volumes` of `volids` on `node`, for each volume on a file storage:
    /// one the storage's listing (`volumes_on`, one read per storage, shared with the task's other
    /// checks) lacks is refused with PVE's words, `volume '<volid>' does not exist`, after
    /// `context` (the words of the call that activates it). Left to PVE: a volume on a storage
    /// that is not a file storage or not enabled on `node`, or one this user's listing would not
    /// show (`permissions::lists_volume`).
    pub fn activated(&self, privileges: &Privileges, node: &str, volids: &[String], context: &str) -> Result<()> {
        match self.gone(privileges, node, volids)? {
            Some(volid) => Err(Error::failed(format!("{context}volume '{volid}' does not exist"))),
            None => Ok(()),
        }
    }

    /// The first of `volids` that `activated` refuses, for a caller that words the refusal itself.
    pub fn gone<'v>(&self, privileges: &Privileges, node: &str, volids: &'v [String]) -> Result<Option<&'v String>> {
        let storages = self.storages()?;
        for volid in volids {
            let Some(volume) = Volume::parse(volid) else { continue };
            let Some(scfg) = storages.iter().find(|s| s.storage == volume.storage) else { continue };
            let (vtype, owner) = content_and_owner(volid);
            if !FILE_TYPES.contains(&scfg.plugintype.as_str())
                || super::enabled(&storages, &scfg.storage, node, "").is_err()
                || !lists_volume(privileges, volume.storage, vtype, owner)?
            {
                continue;
            }
            if !self.volumes_on(node, volume.storage)?.contains_key(volid) {
                return Ok(Some(volid));
            }
        }
        Ok(None)
    }
}
