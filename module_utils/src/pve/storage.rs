//! What a storage type does with a volume: the format a new one gets, how it is named and numbered (a new disk, a linked clone, cloud-init), whether it can be linked, the size of EFI and TPM volumes on it, and when allocation itself needs the space (thick types, preallocated files).
//!
//! One rule per question, shared by every module that predicts volumes (docs/pve-semantics.md
//! §8.5, §22). Sources: pve-storage `PVE/Storage.pm` `storage_default_format`, `Plugin.pm`
//! `get_formats` and `$get_vm_disk_number`, each plugin's `plugindata` and `alloc_image`
//! (`LVMPlugin.pm` `alloc_lvm_image`, `ZFSPoolPlugin.pm` `zfs_create_zvol`); qemu-server
//! `QemuServer.pm` `resolve_dst_disk_format` (a move) and `create_disks` (a new disk), and
//! `QemuServer/Drive.pm` (the EFI vars and TPM state sizes).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::pve::pveformat::lenient_bool;
use crate::pve::volume::Volume;

mod features;
mod volname;
pub use features::{volume_has_feature, Feature};

/// Storage types PVE always marks shared, whatever storage.cfg says (pve-storage
/// `PVE/Storage/Plugin.pm` `@SHARED_STORAGE`, applied in `parse_config`).
const ALWAYS_SHARED: &[&str] = &["iscsi", "nfs", "cifs", "rbd", "cephfs", "iscsidirect", "zfs", "drbd", "pbs"];

/// One storage of storage.cfg, from `GET /storage` (the storages this user may see: PVE lists
/// those with `Datastore.Audit` or `Datastore.AllocateSpace` on `/storage/{storage}`).
#[derive(Clone, Debug, PartialEq)]
pub struct StorageConfig {
    pub storage: String,
    /// `dir`, `lvmthin`, `nfs`, ...
    pub plugintype: String,
    pub content: BTreeSet<String>,
    pub shared: bool,
    pub disabled: bool,
    /// The nodes it is restricted to; `None`: every node.
    pub nodes: Option<BTreeSet<String>>,
    /// Its `format` option (the default format of new disks on dir, nfs and cifs), if set.
    pub format: Option<String>,
    /// The volume group of an lvm storage (`vgname`), named in `lvcreate`'s errors.
    pub vgname: Option<String>,
    /// The ZFS pool of a zfspool storage (`pool`), named in `zfs create`'s errors.
    pub pool: Option<String>,
    /// A zfspool storage's `sparse` option: its zvols reserve no space.
    pub sparse: bool,
    /// The directory of a file storage (`path`), where its images are (`<path>/images/<volname>`).
    pub path: Option<String>,
    /// A file storage's `preallocation` option (off, metadata, falloc, full), if set.
    pub preallocation: Option<String>,
    /// An lvm storage's `saferemove` option: a freed LV is renamed and zeroed by a worker, its
    /// space back only when that worker removes it.
    pub saferemove: bool,
    /// An lvm storage's `snapshot-as-volume-chain` option (PVE 9): qcow2 volumes on its LVs,
    /// named `vm-<vmid>-disk-<n>.qcow2`, and qcow2 the default of a new one (§42).
    pub volume_chain: bool,
    /// An rbd storage's `krbd` and a btrfs storage's `nocow`: what QemuServer.pm
    /// `storage_allows_io_uring_default` and Drive.pm `drive_uses_cache_direct` ask (§71.1).
    pub krbd: bool,
    pub nocow: bool,
}

impl StorageConfig {
    pub fn from_json(v: &Value) -> Option<StorageConfig> {
        let list = |key: &str| -> BTreeSet<String> {
            v.get(key)
                .and_then(Value::as_str)
                .map(|s| s.split([',', ';', ' ']).filter(|p| !p.is_empty()).map(str::to_string).collect())
                .unwrap_or_default()
        };
        let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        let plugintype = v.get("type").and_then(Value::as_str).unwrap_or("").to_string();
        let nodes = list("nodes");
        Some(StorageConfig {
            storage: v.get("storage").and_then(Value::as_str)?.to_string(),
            shared: lenient_bool(v.get("shared")) || ALWAYS_SHARED.contains(&plugintype.as_str()),
            plugintype,
            content: list("content"),
            disabled: lenient_bool(v.get("disable")),
            nodes: (!nodes.is_empty()).then_some(nodes),
            format: text("format"),
            vgname: text("vgname"),
            pool: text("pool"),
            sparse: lenient_bool(v.get("sparse")),
            path: text("path"),
            preallocation: text("preallocation"),
            saferemove: lenient_bool(v.get("saferemove")),
            volume_chain: lenient_bool(v.get("snapshot-as-volume-chain")),
            krbd: lenient_bool(v.get("krbd")),
            nocow: lenient_bool(v.get("nocow")),
        })
    }
}

const MIB: u64 = 1 << 20;
/// LVM's default physical extent, the unit `lvcreate` allocates in.
const LVM_EXTENT: u64 = 4 * MIB;

/// Storage types whose volumes are files in `<vmid>/` directories, named `vm-<vmid>-disk-<n>.<format>`
/// (pve-storage `PVE/Storage/Plugin.pm` and the plugins that inherit its `alloc_image` and
/// `clone_image`: Dir, NFS, CIFS, GlusterFS, CephFS, BTRFS, ESXi).
const FILE_STORAGE_TYPES: &[&str] = &["dir", "nfs", "cifs", "glusterfs", "cephfs", "btrfs", "esxi"];

/// Whether a storage of `plugintype` holds its volumes as files in `<vmid>/` directories.
pub fn is_file_storage(plugintype: &str) -> bool {
    FILE_STORAGE_TYPES.contains(&plugintype)
}

/// Whether a storage of `plugintype` names its `format` volumes with the format's extension
/// although it is a block storage: LVM's qcow2 volumes (LVMPlugin.pm `find_free_diskname` and
/// `create_disks` add `.qcow2`, which `parse_volname` reads back as the format; only a storage with
/// `snapshot-as-volume-chain` makes them).
fn block_suffix(plugintype: &str, format: &str) -> &'static str {
    if plugintype == "lvm" && format == "qcow2" {
        ".qcow2"
    } else {
        ""
    }
}

/// The name (after `storage:`) of disk `n` of VM `vmid` that a storage of `plugintype` allocates
/// in `format`: `<vmid>/vm-<vmid>-disk-<n>.<format>` on a file storage (Plugin.pm `alloc_image`),
/// `vm-<vmid>-disk-<n>` on a block storage (LVM, LVM-thin, RBD, ZFS `alloc_image`), whose
/// volumes are raw, except LVM's qcow2 ones, `vm-<vmid>-disk-<n>.qcow2` (`block_suffix`).
pub fn new_volume_name(plugintype: &str, vmid: u64, n: u32, format: &str) -> String {
    if is_file_storage(plugintype) {
        format!("{vmid}/vm-{vmid}-disk-{n}.{format}")
    } else {
        format!("vm-{vmid}-disk-{n}{}", block_suffix(plugintype, format))
    }
}

/// Whether a storage of `plugintype` can make a linked clone of `base` (`volume_has_feature`
/// 'clone', `features::volume_has_feature`): Plugin.pm, LvmThinPlugin.pm, RBDPlugin.pm and
/// ZFSPoolPlugin.pm offer it on a template's base volume; LVMPlugin.pm (thick LVM) and the iSCSI
/// plugins never. `None`: a storage type whose features are not known here (left to PVE).
pub fn has_linked_clone_feature(plugintype: &str, base: &Volume) -> Option<bool> {
    volume_has_feature(plugintype, Feature::Clone, base, false)
}

/// Whether a storage of `plugintype` turns `volume` into a template's base volume
/// (`volume_has_feature` 'template', which qemu-server QemuServer.pm `template_create` asks of
/// every disk before `vdisk_create_base`, and skips the disk, unconverted and without an error,
/// when it is missing): Plugin.pm and BTRFSPlugin.pm (every file format), LvmThinPlugin.pm,
/// RBDPlugin.pm and ZFSPoolPlugin.pm offer it on a volume that is not a base yet; LVMPlugin.pm
/// (thick LVM, its table leaves 'template' commented out) and the iSCSI plugins never. `None`: a
/// storage type whose features are not known here.
pub fn has_template_feature(plugintype: &str, volume: &Volume) -> Option<bool> {
    volume_has_feature(plugintype, Feature::Template, volume, false)
}

/// The name (after `storage:`) that a storage of `plugintype` gives the linked clone of
/// `base` for VM `vmid`, as disk `n` (each plugin's `clone_image`): a file storage
/// `<base vmid>/<base file>/<vmid>/vm-<vmid>-disk-<n>.qcow2` (Plugin.pm: always a qcow2 overlay),
/// RBD and ZFS `<base name>/vm-<vmid>-disk-<n>` (RBDPlugin.pm, ZFSPoolPlugin.pm), LVM-thin a
/// thin snapshot named as a new disk, `vm-<vmid>-disk-<n>` (LvmThinPlugin.pm). `None` where
/// `has_linked_clone_feature` is not `Some(true)`.
pub fn linked_clone_name(plugintype: &str, base: &Volume, vmid: u64, n: u32) -> Option<String> {
    if has_linked_clone_feature(plugintype, base) != Some(true) {
        return None;
    }
    let own = new_volume_name(plugintype, vmid, n, "qcow2");
    Some(match plugintype {
        t if is_file_storage(t) => format!("{}/{}/{own}", base.owner?, base.file),
        "rbd" | "zfspool" | "zfs" => format!("{}/{own}", base.file),
        _ => own,
    })
}

/// The name (after `storage:`) of VM `vmid`'s cloud-init volume on a storage of `plugintype`
/// (qemu-server `API2/Qemu.pm` `create_disks` and `QemuServer.pm` `clone_disk`:
/// `vm-<vmid>-cloudinit`, in the `<vmid>/` directory with the `format` extension on a file
/// storage: qcow2 for a new one, a clone's in its source's format where the storage takes it;
/// `.qcow2` on an LVM storage with volume chains, whose new cloud-init volume is qcow2).
pub fn cloudinit_volume_name(plugintype: &str, vmid: u64, format: &str) -> String {
    if is_file_storage(plugintype) {
        format!("{vmid}/vm-{vmid}-cloudinit.{format}")
    } else {
        format!("vm-{vmid}-cloudinit{}", block_suffix(plugintype, format))
    }
}

impl StorageConfig {
    /// Whether its volumes are files named `<vmid>/vm-<vmid>-disk-<n>.<fmt>`.
    pub fn is_file(&self) -> bool {
        is_file_storage(&self.plugintype)
    }

    /// The formats a new volume may have here, and the default: each plugin's `plugindata`
    /// `format` (`get_formats`), the default replaced by the storage's `format` option where the
    /// type has one. A type without a list (rbd, lvmthin) is raw only; LVM overrides
    /// `get_formats`: raw only, or raw and qcow2 with `snapshot-as-volume-chain`, whose default
    /// is qcow2 whatever `format` says (LVMPlugin.pm `get_formats`).
    pub fn formats(&self) -> (&'static [&'static str], String) {
        let valid: &'static [&'static str] = match self.plugintype.as_str() {
            "dir" => &["raw", "qcow2", "vmdk", "subvol"],
            "nfs" | "cifs" | "glusterfs" => &["raw", "qcow2", "vmdk"],
            "btrfs" | "zfspool" => &["raw", "subvol"],
            "lvm" if self.volume_chain => return (&["raw", "qcow2"], "qcow2".to_string()),
            _ => &["raw"],
        };
        let default = self.format.as_deref().filter(|f| valid.contains(f)).unwrap_or("raw").to_string();
        (valid, default)
    }

    /// The format of a new cloud-init volume here (Qemu.pm `create_disks`): the drive's
    /// `format=`, else qcow2 on a storage with a path (file storages) or an LVM storage with
    /// `snapshot-as-volume-chain`, raw elsewhere; a format the storage cannot make is refused
    /// (`refuses_format`).
    pub fn new_cloudinit_format(&self, asked: Option<&str>) -> String {
        let qcow2 = self.is_file() || (self.plugintype == "lvm" && self.volume_chain);
        asked.unwrap_or(if qcow2 { "qcow2" } else { "raw" }).to_string()
    }

    /// Why PVE refuses a new volume in `format` here, in its words; `None` where it makes one.
    /// Qemu.pm `create_disks` hands a new disk's `format=` to Storage.pm `vdisk_alloc` as it is
    /// (no fallback to the default, unlike a move or a clone), and the plugin's `alloc_image`
    /// refuses what it cannot make: LVMPlugin.pm `alloc_lvm_image` (qcow2 only with
    /// `snapshot-as-volume-chain`, nothing but raw and qcow2), LvmThinPlugin.pm (raw only),
    /// ZFSPoolPlugin.pm (raw, subvol), ZFSPlugin.pm (raw). RBDPlugin.pm ignores the format (its images are raw) and
    /// file storages make a file of any format qemu-img knows (§42.1). PVE's `die` there has no
    /// newline, so Perl adds ` at <plugin file> line <n>.`, left out here.
    pub fn refuses_format(&self, format: &str) -> Option<String> {
        let unsupported = || Some(format!("unsupported format '{format}'"));
        match self.plugintype.as_str() {
            "lvm" if format == "qcow2" && !self.volume_chain => {
                Some("snapshot-as-volume-chain option need to be enabled to use qcow2 format".to_string())
            }
            "lvm" if format != "raw" && format != "qcow2" => unsupported(),
            "lvmthin" if format != "raw" => unsupported(),
            "zfspool" if format != "raw" && format != "subvol" => unsupported(),
            // ZFSPlugin.pm (ZFS over iSCSI) `alloc_image`: its LUNs are raw (§51.2)
            "zfs" if format != "raw" => unsupported(),
            _ => None,
        }
    }

    /// The format PVE gives a new volume here: the one asked for (`requested`), else, for a copy
    /// (a move), the source's format when this storage takes it (`resolve_dst_disk_format`),
    /// else the default; a format the storage does not take falls back to the default.
    pub fn new_volume_format(&self, requested: Option<&str>, source: Option<&str>) -> String {
        let (valid, default) = self.formats();
        requested.or(source).filter(|f| valid.contains(f)).map_or(default, str::to_string)
    }

    /// Whether `find_free_diskname` only counts names with the new volume's extension, for a
    /// volume in `format` (`$get_vm_disk_number` on nfs and cifs, §22.2; on LVM for a qcow2 one,
    /// whose `.qcow2` suffix its pattern asks for, §42.1): a `vm-100-disk-0.raw` leaves
    /// `vm-100-disk-0.qcow2` free.
    pub fn numbers_by_format(&self, format: &str) -> bool {
        matches!(self.plugintype.as_str(), "nfs" | "cifs") || (self.plugintype == "lvm" && format == "qcow2")
    }

    /// The name of new volume `n` of `vmid` here in `format`, as a volume id.
    pub fn volume_name(&self, vmid: u64, n: u32, format: &str) -> String {
        format!("{}:{}", self.storage, new_volume_name(&self.plugintype, vmid, n, format))
    }

    /// Whether allocating a volume here reserves its whole size (thick LVM, a non-sparse
    /// zfspool, a file storage whose `preallocation` is falloc or full), so that it fails at once
    /// when the space is missing (§22.4). Files of every format that preallocates do so alike, so
    /// a raw name stands for them.
    pub fn reserves_space(&self) -> bool {
        self.reserves("")
    }

    /// Whether allocating volume `volname` here takes its whole size at once: always on thick
    /// LVM and a non-sparse zfspool; on a file storage when its format is preallocated.
    fn reserves(&self, volname: &str) -> bool {
        match self.plugintype.as_str() {
            _ if self.is_file() => self.preallocates(name_format(volname)),
            "lvm" => true,
            "zfspool" => !self.sparse,
            _ => false,
        }
    }

    /// The bytes a new volume `volname` of `bytes` takes from the free space at once: its
    /// allocated size where it is reserved (`reserves`), else nothing (thin and sparse file
    /// storages take space as data is written).
    pub fn reserved_by(&self, volname: &str, bytes: u64) -> u64 {
        if self.reserves(volname) {
            allocated_size(&self.plugintype, bytes)
        } else {
            0
        }
    }

    /// The bytes freeing existing volume `volname` of `bytes` hands back to the free space at
    /// once, for a later allocation: what the volume reserved (`reserved_by`, the same rule), except
    /// on an lvm storage with `saferemove`, whose `free_lvm_volumes_locked` (pve-storage
    /// LVMPlugin.pm) only renames the LV to `del-<name>` in the task and leaves its removal to a
    /// zeroing worker that ends later (docs/pve-semantics.md §40.1).
    pub fn freed_by(&self, volname: &str, bytes: u64) -> u64 {
        if self.plugintype == "lvm" && self.saferemove {
            0
        } else {
            self.reserved_by(volname, bytes)
        }
    }

    /// Whether a new file of `format` here is written whole at once: Plugin.pm
    /// `preallocation_cmd_opt` gives raw and qcow2 images the storage's `preallocation`, and
    /// only falloc and full write the whole size (metadata means off on raw; §22.4).
    /// btrfs is a file storage, but its `alloc_image` makes a raw volume with `truncate` in a
    /// subvolume: no qemu-img, no preallocation (BTRFSPlugin.pm).
    fn preallocates(&self, format: &str) -> bool {
        self.is_file()
            && self.plugintype != "btrfs"
            && matches!(format, "raw" | "qcow2")
            && matches!(self.preallocation.as_deref(), Some("falloc" | "full"))
    }

    /// qemu-img's error when preallocating `volname` here runs out of space (QEMU
    /// `block/file-posix.c` `handle_aiocb_truncate`: `Could not preallocate new data` for falloc,
    /// `Could not write zeros for preallocation` for full; a qcow2 image reaches it through
    /// `qcow2_co_create` and `qcow2_co_truncate`, which prepend `Could not resize image: ` and
    /// `Failed to resize underlying file: `).
    fn preallocation_error(&self, volname: &str) -> String {
        let what = if self.preallocation.as_deref() == Some("falloc") {
            "Could not preallocate new data"
        } else {
            "Could not write zeros for preallocation"
        };
        let through = if name_format(volname) == "qcow2" {
            "Could not resize image: Failed to resize underlying file: "
        } else {
            ""
        };
        format!("{through}{what}: No space left on device")
    }

    /// Why allocating `bytes` as volume `volname` here fails when the storage has `avail` bytes
    /// free, in PVE's words; `None` where it does not fail for space. Thick LVM
    /// (`alloc_lvm_image`: free bytes against the size in KiB, then `lvcreate` in 4 MiB extents),
    /// a non-sparse zfspool (`zfs_create_zvol`, whole MiB) and a file preallocated with falloc or
    /// full (`qemu_img_create`, whose error is qemu-img's) reserve the size; thin storages and
    /// sparse files over-provision (§22.4). An empty `volname` asks whether it would fail at all.
    pub fn refuses_allocation(&self, volname: &str, bytes: u64, avail: u64) -> Option<String> {
        if !self.reserves(volname) {
            return None;
        }
        if self.is_file() {
            let path = format!("{}/images/{volname}", self.path.as_deref().unwrap_or_default());
            return (bytes > avail)
                .then(|| format!("unable to create image: qemu-img: {path}: {}", self.preallocation_error(volname)));
        }
        match self.plugintype.as_str() {
            "lvm" => {
                let kib = bytes.div_ceil(1024);
                if avail < kib {
                    return Some(format!("not enough free space ({avail} < {kib})"));
                }
                let (need, have) = (bytes.div_ceil(LVM_EXTENT), avail / LVM_EXTENT);
                let vg = self.vgname.as_deref().unwrap_or("pve");
                (need > have).then(|| {
                    format!(
                        "lvcreate '{vg}/{volname}' error:   Volume group \"{vg}\" has insufficient free space ({have} extents): {need} required."
                    )
                })
            }
            "zfspool" => {
                let pool = self.pool.as_deref().unwrap_or("rpool");
                (bytes.div_ceil(MIB) * MIB > avail)
                    .then(|| format!("zfs error: cannot create '{pool}/{volname}': out of space"))
            }
            _ => None,
        }
    }
}

impl StorageConfig {
    /// Why growing volume `volname` here by `delta` bytes fails when the storage has `avail`
    /// bytes free, in PVE's words; `None` where it grows (§42.3). Thick LVM (LVMPlugin.pm
    /// `volume_resize`: `lvextend -L` to the new size, whose extents past the LV's must be free;
    /// `run_command`'s `error resizing volume '<path>'` before lvextend's words) and a non-sparse
    /// zfspool (ZFSPoolPlugin.pm `volume_resize`: `zfs set volsize`, whose new reservation must fit)
    /// reserve the size; thin storages and files grow without a check.
    pub fn refuses_growth(&self, volname: &str, delta: u64, avail: u64) -> Option<String> {
        match self.plugintype.as_str() {
            "lvm" => {
                let (need, have) = (delta.div_ceil(LVM_EXTENT), avail / LVM_EXTENT);
                let vg = self.vgname.as_deref().unwrap_or("pve");
                (need > have).then(|| {
                    format!(
                        "error resizing volume '/dev/{vg}/{volname}':   Insufficient free space: {need} extents \
                         needed, but only {have} available"
                    )
                })
            }
            "zfspool" if !self.sparse => {
                let pool = self.pool.as_deref().unwrap_or("rpool");
                (delta > avail).then(|| {
                    format!(
                        "zfs error: cannot set property for '{pool}/{volname}': size is greater than available space"
                    )
                })
            }
            _ => None,
        }
    }
}

/// The format a volume name ends with on a file storage (`.qcow2`), raw without one.
fn name_format(volname: &str) -> &str {
    volname.rsplit_once('.').map_or("raw", |(_, ext)| ext)
}

/// The size a new volume asked for at `bytes` gets on a storage of type `plugintype`, as its
/// `alloc_image` rounds it and `volume_size_info` then reports it: whole 4 MiB extents on LVM and
/// LVM-thin (`lvcreate`), whole MiB on RBD (`rbd create --size` in MiB) and ZFS
/// (`zfs_create_zvol` pads to 1 MiB), the exact size on file storages (§8.5, §22.5).
fn allocated_size(plugintype: &str, bytes: u64) -> u64 {
    let unit = match plugintype {
        "lvm" | "lvmthin" => LVM_EXTENT,
        "rbd" | "zfspool" => MIB,
        _ => 1,
    };
    bytes.div_ceil(unit) * unit
}

/// The size PVE gives an `efidisk` or `tpmstate` volume on a storage of type `plugintype`,
/// whether new, moved or copied by a clone (OVMF.pm `create_efidisk`, QemuServer.pm
/// `clone_disk`), whatever size was asked or the source had: TPM state 4 MiB; EFI vars 528 KiB
/// (`efitype=4m`) or 128 KiB, as the storage allocates it (`allocated_size`: 4M on LVM, 1M on RBD
/// and ZFS; §8.5). `None` for other buses.
pub fn fixed_volume_size(bus: &str, plugintype: &str, efitype: Option<&str>) -> Option<u64> {
    let asked = match bus {
        "tpmstate" => 4 * MIB,
        "efidisk" if efitype == Some("4m") => 528 * 1024,
        "efidisk" => 128 * 1024,
        _ => return None,
    };
    Some(allocated_size(plugintype, asked))
}

#[cfg(test)]
mod tests;
