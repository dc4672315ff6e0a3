//! A VM's snapshots, read only for a write PVE refuses because of them (a template conversion, a disk moved with `delete` or to another VM, a volume freed), and those refusals in PVE's words, with the reassign's other checks of the drive.
//!
//! PVE keeps each snapshot as a section of the VM's config file, which `GET .../config` and
//! `GET .../pending` leave out (QemuServer.pm `vm_config` drops `snapshots`); `GET .../snapshot`
//! (Qemu.pm `snapshot_list`) names them, with a last entry `current` that is not one, and
//! `GET .../config?snapshot=<name>` gives one's config (docs/pve-semantics.md §45). The refusals
//! follow the handlers they name; the caller adds what it was doing before PVE's words, as its
//! real failure would.

use serde_json::Value;

use crate::error::Result;
use crate::pve::client::Api;
use crate::pve::config::{self, VmConfig};
use crate::pve::devices::{is_disk_key, Disk};
use crate::pve::resources::VmResource;
use crate::pve::state::{self, Facts, Op};
use crate::pve::volume::{Volume, VolumeKind};

/// Qemu.pm `template`: a VM with snapshots is not converted.
pub const TEMPLATE_WITH_SNAPSHOTS: &str = "unable to create template, because VM contains snapshots";

/// Qemu.pm `move_vm_disk` to a storage with `delete`: the source volume a snapshot uses stays.
pub const MOVE_SNAPSHOTTED_WITH_DELETE: &str = "you can't move a disk with snapshots and delete the source";

/// Qemu.pm `move_vm_disk` to another VM: a volume a snapshot uses is not reassigned.
pub const REASSIGN_SNAPSHOTTED: &str = "Can't move disk used by a snapshot to another VM";

/// Qemu.pm `template`, after the config lock (`pve::state::refusal`, which the caller's checks
/// apply, comes first): a VM with snapshots (`names` is read only for an unlocked VM).
pub fn template_refusal(config: &VmConfig, names: impl FnOnce() -> Result<Vec<String>>) -> Result<Option<String>> {
    let facts = Facts { vmid: 0, config, running: false, skiplock: false };
    if state::refusal(Op::Template, &facts).is_some() {
        return Ok(None);
    }
    Ok((!names()?.is_empty()).then(|| TEMPLATE_WITH_SNAPSHOTS.to_string()))
}

/// The names of `vm`'s snapshots (`GET .../snapshot`, without its `current` entry).
pub fn names(api: &dyn Api, vm: &VmResource) -> Result<Vec<String>> {
    let data = api
        .get(&vm.path().join(["snapshot"]), &Vec::new())
        .map_err(|e| e.context(&format!("reading the snapshots of VM {}", vm.vmid)))?;
    let listed = data.as_array().map(Vec::as_slice).unwrap_or_default();
    Ok(listed
        .iter()
        .filter_map(|s| s.get("name").and_then(Value::as_str))
        .filter(|name| *name != "current")
        .map(str::to_string)
        .collect())
}

/// The config of each of `vm`'s snapshots: one read of the list, then one per snapshot (none
/// for a VM without any, the common case).
pub fn configs(api: &dyn Api, vm: &VmResource) -> Result<Vec<VmConfig>> {
    names(api, vm)?.iter().map(|name| config::read_snapshot(api, vm, name)).collect()
}

/// QemuServer/Drive.pm `is_volume_in_use`: whether a drive of `config` other than `skip`, or any
/// drive of a snapshot (`snapshots`), uses volume `volid` (CD-ROMs and `unusedN` aside, which
/// are not drives there). Volumes are compared by id; PVE also compares their paths, which
/// tells apart only two ids of one file, which the modules never write.
pub fn volume_in_use(config: &VmConfig, skip: &str, volid: &str, snapshots: &[VmConfig]) -> bool {
    let uses = |key: &str, value: &str| {
        is_disk_key(key)
            && !key.starts_with("unused")
            && Disk::parse(key, value).is_some_and(|d| d.media != "cdrom" && d.volume.as_deref() == Some(volid))
    };
    config.current.iter().any(|(k, v)| k != skip && uses(k, v))
        || snapshots.iter().any(|s| s.current.iter().any(|(k, v)| uses(k, v)))
}

/// Qemu.pm `move_vm_disk` to another VM, on the drive `key` of `config`, once both VMs' locks and
/// templates pass: a CD-ROM (a cloud-init drive is none here, `drive_is_cdrom` with
/// `exclude_cloudinit`), then a volume PVE does not manage (a path), then a volume a snapshot
/// uses (`snapshots` is read only then). `None`: the drive may go.
pub fn reassign_refusal(
    config: &VmConfig,
    key: &str,
    snapshots: impl FnOnce() -> Result<Vec<VmConfig>>,
) -> Result<Option<String>> {
    let Some(drive) = config.get(key).and_then(|v| Disk::parse(key, v)) else { return Ok(None) };
    let volid = drive.volume.clone().unwrap_or_default();
    let cloudinit = Volume::parse(&volid).is_some_and(|v| v.kind == VolumeKind::CloudInit);
    if drive.media == "cdrom" && !cloudinit {
        return Ok(Some("CD drive contents can't be moved to another VM".into()));
    }
    if drive.storage.is_none() {
        return Ok(Some(format!("Volume '{volid}' not managed by PVE")));
    }
    Ok(volume_in_use(config, key, &volid, &snapshots()?).then(|| REASSIGN_SNAPSHOTTED.to_string()))
}

/// QemuServer.pm `try_deallocate_drive`: a volume freed while a snapshot (or another drive)
/// still uses it.
pub fn still_in_use(volid: &str) -> String {
    format!("unable to delete '{volid}' - volume is still in use (snapshot?)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_volume_a_snapshot_holds_is_in_use_and_the_skipped_drive_is_not() {
        let vm = VmConfig::from_pairs(&[
            ("scsi1", "local-lvm:vm-100-disk-1,size=1G"),
            ("unused0", "local-lvm:vm-100-disk-2"),
        ]);
        let snap = VmConfig::from_pairs(&[("scsi1", "local-lvm:vm-100-disk-2,size=1G")]);
        // Drive.pm is_volume_in_use skips the drive named, not the snapshots' drive of that key
        assert!(!volume_in_use(&vm, "scsi1", "local-lvm:vm-100-disk-1", &[]));
        assert!(volume_in_use(
            &vm,
            "scsi1",
            "local-lvm:vm-100-disk-1",
            &[VmConfig::from_pairs(&[("scsi1", "local-lvm:vm-100-disk-1")])]
        ));
        assert!(volume_in_use(&vm, "unused0", "local-lvm:vm-100-disk-2", &[snap]));
        // another drive of the current config
        assert!(volume_in_use(&vm, "scsi2", "local-lvm:vm-100-disk-1", &[]));
        // unusedN is no drive there, nor a CD-ROM
        assert!(!volume_in_use(&vm, "scsi1", "local-lvm:vm-100-disk-2", &[]));
        let cd = VmConfig::from_pairs(&[("ide2", "isos:iso/a.iso,media=cdrom")]);
        assert!(!volume_in_use(&cd, "scsi0", "isos:iso/a.iso", &[]));
    }

    #[test]
    fn a_reassign_refuses_a_cdrom_a_path_and_a_snapshotted_volume_in_that_order() {
        let vm = VmConfig::from_pairs(&[
            ("ide2", "isos:iso/a.iso,media=cdrom"),
            ("ide0", "local-lvm:vm-100-cloudinit,media=cdrom"),
            ("scsi1", "/dev/sdb,size=1G"),
            ("scsi2", "local-lvm:vm-100-disk-2,size=1G"),
        ]);
        let none = || Ok(Vec::new());
        let words = |key| reassign_refusal(&vm, key, none).unwrap();
        assert_eq!(words("ide2").as_deref(), Some("CD drive contents can't be moved to another VM"));
        assert_eq!(words("scsi1").as_deref(), Some("Volume '/dev/sdb' not managed by PVE"));
        assert_eq!(words("scsi2"), None);
        assert_eq!(words("ide0"), None); // a cloud-init drive is no CD-ROM here
        let snap = || Ok(vec![VmConfig::from_pairs(&[("scsi0", "local-lvm:vm-100-disk-2")])]);
        assert_eq!(reassign_refusal(&vm, "scsi2", snap).unwrap().as_deref(), Some(REASSIGN_SNAPSHOTTED));
    }

    #[test]
    fn the_words_are_pves() {
        assert_eq!(
            still_in_use("local-lvm:vm-1-disk-0"),
            "unable to delete 'local-lvm:vm-1-disk-0' - volume is still in use (snapshot?)"
        );
    }
}
