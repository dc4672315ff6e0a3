//! Which operations a storage type offers on a volume (pve-storage's `volume_has_feature`): copy, rename, snapshot, linked clone, template, per storage type, volume state and format.
//!
//! Sources: pve-storage 9.1.7 `PVE/Storage.pm` `volume_has_feature` (a volume id without a
//! storage has no feature) and each plugin's `volume_has_feature` table: `Plugin.pm` (dir, nfs,
//! cifs, cephfs: every plugin that keeps the base class's table), `BTRFSPlugin.pm`,
//! `LVMPlugin.pm`, `LvmThinPlugin.pm`, `RBDPlugin.pm`, `ZFSPoolPlugin.pm`, `ZFSPlugin.pm` (ZFS
//! over iSCSI), `ISCSIPlugin.pm`, `ISCSIDirectPlugin.pm`, `ESXiPlugin.pm`, `PBSPlugin.pm`. Each
//! table is keyed by the volume's state, as every plugin computes it from `parse_volname`: `snap`
//! when a snapshot is named, else `base` for a template's base volume, else `current`; the
//! file-based tables and LVM's also by the volume's format (docs/pve-semantics.md §51.1).

use crate::pve::volume::{Volume, VolumeKind};

/// An operation `volume_has_feature` is asked about (the names of PVE's tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// A snapshot of the volume (`snapshot`).
    Snapshot,
    /// A linked clone of it (`clone`), what Qemu.pm `clone_vm` asks of a drive it links.
    Clone,
    /// Turning it into a template's base volume (`template`).
    Template,
    /// A full copy of it (`copy`), what Qemu.pm `clone_vm` asks of a drive it copies.
    Copy,
    /// Renaming it for another VM (`rename`), what Qemu.pm `move_vm_disk` asks of a reassign.
    Rename,
}

/// The state a plugin's table is keyed by.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Current,
    Base,
    Snap,
}

use Feature::*;
use State::*;

/// Plugin.pm's table (the file storages that keep it): which formats offer `feature` in `state`.
fn plugin_formats(feature: Feature, state: State) -> &'static [&'static str] {
    match (feature, state) {
        (Snapshot, Current | Snap) => &["qcow2"],
        (Clone, Base) => &["qcow2", "raw", "vmdk"],
        (Template, Current) => &["qcow2", "raw", "vmdk", "subvol"],
        (Copy, Base | Current) => &["qcow2", "raw", "vmdk"],
        (Copy, Snap) => &["qcow2"],
        (Rename, Current) => &["qcow2", "raw", "vmdk"],
        _ => &[],
    }
}

/// BTRFSPlugin.pm's table: raw volumes are subvolumes, which it can snapshot and link.
fn btrfs_formats(feature: Feature, state: State) -> &'static [&'static str] {
    match (feature, state) {
        (Snapshot, Current | Snap) => &["qcow2", "raw", "subvol"],
        (Clone, Base) => &["qcow2", "raw", "subvol", "vmdk"],
        (Clone, Current | Snap) => &["raw"],
        (Template, Current) => &["qcow2", "raw", "vmdk", "subvol"],
        (Copy, Base | Current) => &["qcow2", "raw", "subvol", "vmdk"],
        (Copy, Snap) => &["qcow2", "raw", "subvol"],
        (Rename, Current) => &["qcow2", "raw", "vmdk"],
        _ => &[],
    }
}

/// LVMPlugin.pm's table (thick LVM): no template, no linked clone; snapshots, and copies of a
/// snapshot, only of qcow2 volumes (volume chains, §42).
fn lvm_formats(feature: Feature, state: State) -> &'static [&'static str] {
    match (feature, state) {
        (Copy, Base | Current) | (Rename, Current) => &["qcow2", "raw"],
        (Copy, Snap) | (Snapshot, Current | Snap) => &["qcow2"],
        _ => &[],
    }
}

/// The tables that do not look at the format: which states offer `feature`.
fn block_states(plugintype: &str, feature: Feature) -> Option<&'static [State]> {
    Some(match (plugintype, feature) {
        // LvmThinPlugin.pm
        ("lvmthin", Snapshot) => &[Current],
        ("lvmthin", Clone) => &[Base, Snap],
        ("lvmthin", Template | Rename) => &[Current],
        ("lvmthin", Copy) => &[Base, Current, Snap],
        // RBDPlugin.pm
        ("rbd", Snapshot) => &[Current, Snap],
        ("rbd", Clone) => &[Base, Snap],
        ("rbd", Template | Rename) => &[Current],
        ("rbd", Copy) => &[Base, Current, Snap],
        // ZFSPoolPlugin.pm, and ZFSPlugin.pm (over iSCSI) without `rename`; neither copies a snapshot
        ("zfspool" | "zfs", Snapshot) => &[Current, Snap],
        ("zfspool" | "zfs", Clone) => &[Base],
        ("zfspool" | "zfs", Template) => &[Current],
        ("zfspool" | "zfs", Copy) => &[Base, Current],
        ("zfspool", Rename) => &[Current],
        // ISCSIPlugin.pm, ISCSIDirectPlugin.pm: a LUN is copied, nothing else
        ("iscsi" | "iscsidirect", Copy) => &[Current],
        ("zfs" | "iscsi" | "iscsidirect", _) => &[],
        // PBSPlugin.pm: backups, no feature at all
        ("pbs", _) => &[],
        _ => return None,
    })
}

/// Whether a storage of `plugintype` offers `feature` on `volume` (`snap`: of a snapshot of it),
/// as the plugin's `volume_has_feature` answers. `None`: a storage type whose table is not known
/// here (a third-party plugin), or a name whose format the table needs and the name does not
/// tell (left to PVE).
pub fn volume_has_feature(plugintype: &str, feature: Feature, volume: &Volume, snap: bool) -> Option<bool> {
    let state = match (snap, volume.is_base) {
        (true, _) => Snap,
        (false, true) => Base,
        (false, false) => Current,
    };
    let formats = match plugintype {
        // ESXiPlugin.pm: a disk of an ESXi VM is copied (an import), never a snapshot of it
        "esxi" => return Some(feature == Copy && !snap && !volume.volname.ends_with(".vmx")),
        "btrfs" => btrfs_formats(feature, state),
        "lvm" => lvm_formats(feature, state),
        t if super::is_file_storage(t) => plugin_formats(feature, state),
        t => return block_states(t, feature).map(|states| states.contains(&state)),
    };
    let format = match volume.kind {
        VolumeKind::Other => import_format(volume.volname)?,
        _ => volume.format(),
    };
    Some(formats.contains(&format))
}

/// Plugin.pm `parse_volname` of an `import/` volume: its format is its name's extension (`ova`,
/// `ovf`, `qcow2`, `raw`, `vmdk`); a disk inside an OVA is `ova+<format>`, in no table.
fn import_format(volname: &str) -> Option<&str> {
    let name = volname.strip_prefix("import/")?;
    let ext = name.rsplit_once('.')?.1;
    let ova = name.split_once(".ova/").is_some_and(|(a, d)| !a.is_empty() && !d.contains('/'));
    if ova {
        return Some("ova+");
    }
    (!name.contains('/') && ["ova", "ovf", "qcow2", "raw", "vmdk"].contains(&ext)).then_some(ext)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(plugintype: &str, feature: Feature, volid: &str, snap: bool) -> Option<bool> {
        volume_has_feature(plugintype, feature, &Volume::parse(volid).expect(volid), snap)
    }

    #[test]
    fn a_full_copy_of_a_snapshot_needs_a_storage_that_copies_snapshots() {
        // ZFSPoolPlugin.pm: copy of base and current, not of a snapshot
        assert_eq!(has("zfspool", Copy, "szx:vm-100-disk-0", false), Some(true));
        assert_eq!(has("zfspool", Copy, "szx:vm-100-disk-0", true), Some(false));
        // LVMPlugin.pm: a snapshot copies only as qcow2
        assert_eq!(has("lvm", Copy, "slx:vm-100-disk-0", true), Some(false));
        assert_eq!(has("lvm", Copy, "slx:vm-100-disk-0.qcow2", true), Some(true));
        // Plugin.pm: a file storage copies a snapshot of a qcow2 file, not of a raw one
        assert_eq!(has("dir", Copy, "sdx:100/vm-100-disk-0.qcow2", true), Some(true));
        assert_eq!(has("nfs", Copy, "sdx:100/vm-100-disk-0.raw", true), Some(false));
        // the thin and Ceph storages copy every state
        assert_eq!(has("lvmthin", Copy, "stx:vm-100-disk-0", true), Some(true));
        assert_eq!(has("rbd", Copy, "srx:base-100-disk-0", false), Some(true));
        // ISCSIPlugin.pm: a LUN, its current state only
        assert_eq!(has("iscsi", Copy, "ssx:0.0.1.scsi-36001405abcd", false), Some(true));
        assert_eq!(has("iscsi", Copy, "ssx:0.0.1.scsi-36001405abcd", true), Some(false));
        assert_eq!(has("pbs", Copy, "sbx:vm-100-disk-0", false), Some(false));
        assert_eq!(has("custom", Copy, "scx:vm-100-disk-0", false), None);
    }

    #[test]
    fn rename_is_for_current_volumes_of_the_storages_that_have_it() {
        assert_eq!(has("lvmthin", Rename, "stx:vm-100-disk-0", false), Some(true));
        assert_eq!(has("lvm", Rename, "slx:vm-100-disk-0", false), Some(true));
        assert_eq!(has("dir", Rename, "sdx:100/vm-100-disk-0.qcow2", false), Some(true));
        // ZFS over iSCSI and iSCSI do not rename; nothing renames a base volume
        assert_eq!(has("zfs", Rename, "szx:vm-100-disk-0", false), Some(false));
        assert_eq!(has("iscsi", Rename, "ssx:0.0.1.scsi-36001405abcd", false), Some(false));
        assert_eq!(has("rbd", Rename, "srx:base-100-disk-0", false), Some(false));
    }

    #[test]
    fn linked_clones_and_templates_follow_the_same_tables() {
        assert_eq!(has("dir", Clone, "sdx:100/base-100-disk-0.qcow2", false), Some(true));
        assert_eq!(has("dir", Clone, "sdx:100/base-100-disk-0.qcow2", true), Some(false));
        assert_eq!(has("lvmthin", Clone, "stx:vm-100-disk-0", true), Some(true));
        assert_eq!(has("lvm", Clone, "slx:vm-100-disk-0", false), Some(false));
        assert_eq!(has("btrfs", Clone, "sbx:100/vm-100-disk-0.raw", false), Some(true));
        assert_eq!(has("lvm", Template, "slx:vm-100-disk-0", false), Some(false));
        assert_eq!(has("dir", Template, "sdx:100/vm-100-disk-0.subvol", false), Some(true));
        assert_eq!(has("dir", Snapshot, "sdx:100/vm-100-disk-0.raw", false), Some(false));
    }

    #[test]
    fn every_import_source_pve_lets_through_has_the_copy_feature() {
        // Qemu.pm `$import_from_volid` asks 'copy' of a source `$check_storage_access` took: content
        // `images` or `import`, a QEMU format (`checked_parse_volname`; `.ova`, `.ovf`, `.vmx` and
        // `subvol` refused before), an OVA's disk extracted first. Every storage type PVE ships
        // offers it there, so the refusal is left to a third-party plugin (docs/refusals.md, §67.3).
        let files = ["sx:100/vm-100-disk-0.raw", "sx:100/vm-100-disk-0.qcow2", "sx:100/base-100-disk-0.vmdk"];
        let imports = ["sx:import/a.raw", "sx:import/a.qcow2", "sx:import/a.vmdk"];
        for t in ["dir", "nfs", "cifs", "cephfs", "btrfs", "glusterfs"] {
            for volid in files.iter().chain(imports.iter()) {
                assert_eq!(has(t, Copy, volid, false), Some(true), "{t} {volid}");
            }
        }
        let blocks = [
            ("lvm", "sx:vm-100-disk-0"),
            ("lvm", "sx:vm-100-disk-0.qcow2"),
            ("iscsi", "sx:0.0.1.scsi-36001"),
            ("iscsidirect", "sx:lun0"),
            ("esxi", "sx:dc/ds/vm/disk.vmdk"),
        ];
        let thin = ["lvmthin", "rbd", "zfspool", "zfs"]
            .into_iter()
            .flat_map(|t| [(t, "sx:vm-100-disk-0"), (t, "sx:base-100-disk-0")]);
        for (t, volid) in blocks.into_iter().chain(thin) {
            assert_eq!(has(t, Copy, volid, false), Some(true), "{t} {volid}");
        }
        // what the table refuses is refused before: not QEMU formats, or extracted first
        for volid in ["sx:import/a.ova", "sx:import/a.ovf", "sx:import/a.ova/disk1.vmdk", "sx:100/vm-100-disk-0.subvol"]
        {
            assert_eq!(has("dir", Copy, volid, false), Some(false), "{volid}");
        }
        assert_eq!(has("dir", Copy, "sx:snippets/a.pl", false), None, "not an import source");
    }
}
