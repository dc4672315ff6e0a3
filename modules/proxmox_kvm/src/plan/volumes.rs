//! The values of a planned config that PVE decides only when it applies it: the volumes it allocates, named as PVE will name them, and what nobody can know beforehand (a new NIC's MAC, a clone's new uuid), marked `(known after apply)`.
//!
//! Naming follows docs/pve-semantics.md §8 (create_disks: drives in sorted key order, the lowest
//! free `vm-<vmid>-disk-<n>` per storage, the drive printed with its options sorted and `size=`),
//! §8.5 (EFI, TPM and cloud-init volumes), §9 (MACs), §15 and §22.3 (a clone's volumes: full
//! copies named as new disks, linked clones by the storage's `clone_image`).

use std::collections::{BTreeMap, BTreeSet};

use module_utils::check::unknown::KNOWN_AFTER_APPLY;
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{disk_bus, is_disk_key, is_nic_key, parse_new_cloudinit, parse_new_disk};
use module_utils::pve::propstring::{format_size, PropertyString, NET};
use module_utils::pve::storage::StorageConfig;
use module_utils::pve::storage::{cloudinit_volume_name, fixed_volume_size, linked_clone_name, new_volume_name};
use module_utils::pve::volume::{Volume, VolumeKind};

use super::compare::Change;
use crate::params::is_drive_key;

/// The storages of the cluster as naming needs them, and the disk numbers a VM already uses on
/// each (`find_free_diskname` takes the lowest free one): those its config names and those the
/// storage lists (a volume of the vmid no config names: left by a VM destroyed without
/// `destroy-unreferenced-disks`, or by a failed create; docs/pve-semantics.md §40.2).
pub struct Allocator<'s> {
    vmid: u64,
    storages: &'s [StorageConfig],
    taken: BTreeMap<String, BTreeSet<u32>>,
}

impl<'s> Allocator<'s> {
    /// For VM `vmid`, whose config (applied and pending values) is `config`, on storages whose
    /// volumes include `listed` (volume ids, as `GET .../content` lists them): the numbers its
    /// volumes there already hold, named in the config or listed, count as taken.
    pub fn new<'c>(
        vmid: u64,
        storages: &'s [StorageConfig],
        config: impl IntoIterator<Item = (&'c String, &'c String)>,
        listed: &[String],
    ) -> Allocator<'s> {
        let mut taken: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
        let named = config.into_iter().filter(|(key, _)| is_disk_key(key)).map(|(_, value)| split_drive(value).0);
        for file in named.chain(listed.iter().cloned()) {
            if let Some((v, n)) = Volume::parse(&file).and_then(|v| v.disk_number(vmid).map(|n| (v, n))) {
                for set in numberings(storages, v.storage, v.format()) {
                    taken.entry(set).or_default().insert(n);
                }
            }
        }
        Allocator { vmid, storages, taken }
    }

    fn storage(&self, sid: &str) -> Option<&'s StorageConfig> {
        self.storages.iter().find(|s| s.storage == sid)
    }

    fn plugintype(&self, sid: &str) -> &'s str {
        self.storage(sid).map_or("", |s| s.plugintype.as_str())
    }

    /// The format of a new disk on `sid` without `format=` (`StorageConfig::new_volume_format`).
    fn default_format(&self, sid: &str) -> String {
        self.storage(sid).map_or_else(|| "raw".into(), |s| s.new_volume_format(None, None))
    }

    /// The lowest disk number of this VM still free on `sid` for a volume in `format`
    /// (`find_free_diskname`), taken.
    fn take_number(&mut self, sid: &str, format: &str) -> u32 {
        let used = self.taken.entry(numbering(self.storages, sid, format)).or_default();
        let n = (0..).find(|n| !used.contains(n)).unwrap_or(0);
        for set in numberings(self.storages, sid, format) {
            self.taken.entry(set).or_default().insert(n);
        }
        n
    }

    /// The next volume of this VM on `sid` (`None`: a storage we do not know, left to PVE):
    /// a new disk in `format`, or with `linked`, the linked clone of that base volume as the
    /// storage's `clone_image` names it (known after apply where the storage type's naming is
    /// not known here; one that cannot link at all is refused by the preflight).
    fn next(&mut self, sid: &str, format: &str, linked: Option<&Volume>) -> Option<String> {
        self.storage(sid)?;
        if self.vmid == 0 {
            // the vmid PVE will give the VM is not known: nor is the name
            return Some(format!("{sid}:{KNOWN_AFTER_APPLY}"));
        }
        // a linked clone on a file storage is a qcow2 overlay, numbered as one
        let n = self.take_number(sid, if linked.is_some() { "qcow2" } else { format });
        let plugintype = self.plugintype(sid);
        let name = match linked {
            Some(base) => linked_clone_name(plugintype, base, self.vmid, n).unwrap_or_else(|| KNOWN_AFTER_APPLY.into()),
            None => new_volume_name(plugintype, self.vmid, n, format),
        };
        Some(format!("{sid}:{name}"))
    }

    /// The cloud-init volume of this VM on `sid`, in `format` where the storage names it so.
    fn cloudinit(&self, sid: &str, format: &str) -> String {
        if self.vmid == 0 {
            format!("{sid}:{KNOWN_AFTER_APPLY}")
        } else {
            format!("{sid}:{}", cloudinit_volume_name(self.plugintype(sid), self.vmid, format))
        }
    }

    /// The format of a copy on `sid` (`resolve_dst_disk_format`, §22.6): `requested` where the
    /// storage takes it, else the source's, else the storage's default.
    fn copy_format(&self, sid: &str, requested: Option<&str>, source: &str) -> String {
        self.storage(sid).map_or_else(|| source.to_string(), |s| s.new_volume_format(requested, Some(source)))
    }

    /// The size PVE records for a new `key` of `size` on `sid`: EFI vars and TPM state have a
    /// fixed size (§8.5), a disk the GiB asked for.
    fn new_size(&self, key: &str, sid: &str, size: &str, props: &BTreeMap<String, String>) -> Option<String> {
        let efitype = props.get("efitype").map(String::as_str);
        let fixed = disk_bus(key).and_then(|bus| fixed_volume_size(bus, self.plugintype(sid), efitype));
        Some(format_size(match fixed {
            Some(bytes) => bytes,
            None => (size.parse::<f64>().ok()? * (1u64 << 30) as f64).round() as u64,
        }))
    }

    /// A drive value as PVE writes it once create_disks has run on it: a new disk
    /// (`STORAGE:N`, or `N` on `default_storage`) or cloud-init drive (`STORAGE:cloudinit`)
    /// gets its volume; a CD-ROM's medium sets its size (`cdrom_size`); anything else is kept.
    pub fn allocate(&mut self, key: &str, value: &str, default_storage: Option<&str>) -> String {
        let (file, mut props) = split_drive(value);
        if let Some(sid) = parse_new_cloudinit(&file) {
            let Some(scfg) = self.storage(sid) else {
                return value.to_string();
            };
            let format = scfg.new_cloudinit_format(props.remove("format").as_deref());
            props.insert("media".into(), "cdrom".into());
            props.insert("size".into(), "4M".into());
            return join_drive(&self.cloudinit(sid, &format), &props);
        }
        let cdrom = props.get("media").is_some_and(|m| m == "cdrom");
        if cdrom {
            return cdrom_size(&file, props).unwrap_or_else(|| value.to_string());
        }
        let Some((storage, size)) = parse_new_disk(&file) else { return value.to_string() };
        let Some(sid) = storage.or(default_storage) else { return value.to_string() };
        let format = props.remove("format").unwrap_or_else(|| self.default_format(sid));
        let (Some(volume), Some(size)) = (self.next(sid, &format, None), self.new_size(key, sid, size, &props)) else {
            return value.to_string();
        };
        props.insert("size".into(), size);
        join_drive(&volume, &props)
    }

    /// Name what `changes` make PVE decide in `predicted`, the config after them (where a new
    /// disk still shows as the task asked for it, applied or pending): each new disk's volume,
    /// in the order PVE allocates them, and each new NIC's MAC (marked).
    pub fn name_changes(&mut self, predicted: &mut VmConfig, changes: &[Change]) {
        for c in changes {
            let value = if is_drive_key(&c.key) {
                self.allocate(&c.key, &c.after, None)
            } else {
                mark_new_mac(&c.key, &c.after)
            };
            for side in [&mut predicted.current, &mut predicted.pending] {
                if side.get(&c.key) == Some(&c.after) {
                    side.insert(c.key.clone(), value.clone());
                }
            }
        }
    }

    /// The drive `key` of a clone's source as the clone gets it (`clone_disk`): a cloud-init
    /// drive as the clone's own cloud-init volume (§15); other CD-ROMs and drives without a
    /// volume as they are; a full copy as a new disk on `storage` (else the same
    /// storage) in the format `resolve_dst_disk_format` gives (`format`, else the source's,
    /// where the target takes it, else its default), EFI vars and TPM state at their fixed size there (§8.5); a linked clone as
    /// the storage's `clone_image` names it (§22.3), except `tpmstate0`, which `clone_vm` always
    /// copies in full.
    pub fn clone_drive(
        &mut self,
        key: &str,
        value: &str,
        full: bool,
        storage: Option<&str>,
        format: Option<&str>,
    ) -> String {
        let (file, mut props) = split_drive(value);
        let cdrom = props.get("media").is_some_and(|m| m == "cdrom") || file == "cdrom";
        let Some(source) = Volume::parse(&file) else { return value.to_string() };
        let dest = storage.unwrap_or(source.storage);
        if source.kind == VolumeKind::CloudInit {
            // always copied (`clone_disk`), as the clone's own cloud-init volume on the target storage
            let format = self.copy_format(dest, format, source.format());
            return join_drive(&self.cloudinit(dest, &format), &props);
        }
        if cdrom {
            return value.to_string();
        }
        let full = full || key == "tpmstate0";
        let volume = if full {
            let format = self.copy_format(dest, format, source.format());
            self.next(dest, &format, None)
        } else {
            self.next(dest, source.format(), Some(&source))
        };
        let efitype = props.get("efitype").map(String::as_str);
        if let Some(bytes) =
            disk_bus(key).filter(|_| full).and_then(|bus| fixed_volume_size(bus, self.plugintype(dest), efitype))
        {
            props.insert("size".into(), format_size(bytes));
        }
        volume.map_or_else(|| value.to_string(), |v| join_drive(&v, &props))
    }
}

/// The storages on which drive values `(key, value)` allocate new volumes whose names
/// `find_free_diskname` picks (`STORAGE:N`, or `N` on `default_storage`): those whose volumes
/// `Allocator::new` must know. With `copied`, also the storage of each existing volume, which a
/// full clone copies to the same storage.
pub fn allocating_on<'v>(
    values: impl IntoIterator<Item = (&'v String, &'v String)>,
    default_storage: Option<&str>,
    copied: bool,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (key, value) in values.into_iter().filter(|(k, _)| is_drive_key(k)) {
        let (file, _) = split_drive(value);
        let sid = match parse_new_disk(&file) {
            Some((storage, _)) => storage.or(default_storage),
            None if copied => Volume::parse(&file).map(|v| v.storage),
            None => None,
        };
        out.extend(sid.map(str::to_string).filter(|_| !key.starts_with("unused")));
    }
    out
}

/// The set of disk numbers a volume in `format` on `sid` is numbered among: the storage's, or on
/// nfs and cifs the storage's of that format (`StorageConfig::numbers_by_format`, §22.2).
fn numbering(storages: &[StorageConfig], sid: &str, format: &str) -> String {
    match storages.iter().find(|s| s.storage == sid) {
        Some(s) if s.numbers_by_format(format) => format!("{sid}.{format}"),
        _ => sid.to_string(),
    }
}

/// The sets a volume in `format` on `sid` takes its number in: its own (`numbering`), and on
/// LVM a qcow2 LV's number in the storage's too, which a raw LV's unsuffixed pattern counts
/// (Plugin.pm `$get_vm_disk_number`, §42.1).
fn numberings(storages: &[StorageConfig], sid: &str, format: &str) -> Vec<String> {
    let own = numbering(storages, sid, format);
    if own == sid || !storages.iter().any(|s| s.storage == sid && s.plugintype == "lvm") {
        return vec![own];
    }
    vec![own, sid.to_string()]
}

/// A drive value as its volume (the first, or `file=`) and its options.
fn split_drive(value: &str) -> (String, BTreeMap<String, String>) {
    let mut file = String::new();
    let mut props = BTreeMap::new();
    for (i, part) in value.split(',').enumerate() {
        match part.split_once('=') {
            Some(("file", v)) => file = v.to_string(),
            Some((k, v)) => {
                props.insert(k.to_string(), v.to_string());
            }
            None if i == 0 => file = part.to_string(),
            None => {}
        }
    }
    (file, props)
}

/// A drive as PVE prints it here: the volume, then the options in alphabetical order.
fn join_drive(volume: &str, props: &BTreeMap<String, String>) -> String {
    std::iter::once(volume.to_string())
        .chain(props.iter().map(|(k, v)| format!("{k}={v}")))
        .collect::<Vec<_>>()
        .join(",")
}

/// A `netN` value as the real run will hold it: without a MAC, PVE draws one (§9), so the
/// MAC is marked known after apply where PVE prints it (`virtio=<MAC>,...`).
pub fn mark_new_mac(key: &str, value: &str) -> String {
    if !is_nic_key(key) {
        return value.to_string();
    }
    match PropertyString::parse_lenient(&NET, value) {
        Ok(mut nic) if nic.get("macaddr").is_none() => {
            nic.set("macaddr", KNOWN_AFTER_APPLY);
            nic.to_string()
        }
        _ => value.to_string(),
    }
}

/// A clone's `smbios1`: PVE gives every clone a new uuid (Qemu.pm `clone_vm`), known after apply.
pub fn clone_smbios1(source: Option<&str>) -> String {
    let mut parts: Vec<String> = source
        .unwrap_or("")
        .split(',')
        .filter(|p| !p.is_empty() && !p.starts_with("uuid="))
        .map(str::to_string)
        .collect();
    parts.push(format!("uuid={KNOWN_AFTER_APPLY}"));
    parts.sort_unstable();
    parts.join(",")
}

/// A CD-ROM drive as create_disks stores it (docs/pve-semantics.md §35.3): no medium (`none`, the
/// host's `cdrom`) carries no `size=`; an ISO volume the size PVE reads from its storage, which
/// this module does not list: known after apply. `None`: a path, kept as sent.
fn cdrom_size(file: &str, mut props: BTreeMap<String, String>) -> Option<String> {
    if matches!(file, "none" | "cdrom") {
        props.remove("size");
    } else {
        Volume::parse(file)?;
        props.insert("size".into(), KNOWN_AFTER_APPLY.into());
    }
    Some(join_drive(file, &props))
}

/// What PVE adds to a new VM's config when it creates it (Qemu.pm `create_vm`, docs/pve-semantics.md
/// §35.2), each drawn or read only then, so known after apply: `meta` (the QEMU version and the
/// creation time, `MetaInfo.pm` `new_meta_info_string`), an `smbios1` uuid unless the task sets
/// `smbios1`, and a `vmgenid` (the modules have no option that sets one).
pub fn add_create_values(config: &mut BTreeMap<String, String>) {
    config.insert("meta".into(), format!("creation-qemu={KNOWN_AFTER_APPLY},ctime={KNOWN_AFTER_APPLY}"));
    if config.get("smbios1").is_none_or(String::is_empty) {
        config.insert("smbios1".into(), format!("uuid={KNOWN_AFTER_APPLY}"));
    }
    // PVE adds none on an aarch64 node (get_vm_arch: the modules cannot set `arch`, so the
    // node's): taken as x86_64, the only architecture PVE's installer ships for.
    config.insert("vmgenid".into(), KNOWN_AFTER_APPLY.into());
}

/// Whether a planned value holds a part known only after apply.
pub fn is_marked(value: &str) -> bool {
    value.contains(KNOWN_AFTER_APPLY)
}
