//! What a storage's plugin refuses of a volume by its name or format alone: a name its `parse_volname` cannot parse, a resize of a format it cannot resize, a new subvolume with a size.
//!
//! Sources (pve-storage 9.1.7, docs/pve-semantics.md §57): each plugin's `parse_volname`, which
//! `Storage.pm` `check_volume_access` (qemu-server's `$check_storage_access`, on every drive
//! naming an existing volume) and qemu-server `QemuServer/Drive.pm` `checked_parse_volname` (an
//! `import-from` source) call before anything else looks at the volume: `Plugin.pm`
//! `parse_volname` and `parse_name_dir` (the file storages: dir, nfs, cifs, cephfs, btrfs),
//! `LVMPlugin.pm` and `LvmThinPlugin.pm` (both first `Plugin.pm` `parse_lvm_name`),
//! `RBDPlugin.pm`, `ZFSPoolPlugin.pm`, `ISCSIPlugin.pm`, `ISCSIDirectPlugin.pm`, `PBSPlugin.pm`;
//! and each plugin's `volume_resize`: `Plugin.pm` (a file that is not `.raw` or `.qcow2`),
//! `BTRFSPlugin.pm` (a subvolume); `Plugin.pm` and `BTRFSPlugin.pm` `alloc_image` (a `subvol` with a
//! size: no quotas), which `Storage.pm` `vdisk_alloc` reaches with storage.cfg's default `format`.

use crate::pve::pattern::compile;

use super::StorageConfig;

/// The storage types whose volumes are files under the storage's path (`Plugin.pm`'s
/// `parse_volname` and `volume_resize`; BTRFSPlugin.pm keeps the first).
const FILE_TYPES: &[&str] = &["dir", "nfs", "cifs", "cephfs", "glusterfs", "btrfs"];

/// Whether `text` matches `pattern` (each pattern here is a constant that pve::pattern compiles:
/// no `(?i)`; `pattern/tests.rs` compiles each).
fn is(pattern: &str, text: &str) -> bool {
    compile(pattern).is_ok_and(|re| re.is_match(text))
}

/// The groups of `pattern` in `text`, when it matches.
fn groups(pattern: &str, text: &str) -> Option<Vec<String>> {
    let re = compile(pattern).ok()?;
    let c = re.captures(text)?;
    Some(c.iter().skip(1).map(|m| m.map_or(String::new(), |m| m.as_str().to_string())).collect())
}

/// `Plugin.pm` `parse_lvm_name`: an LV name of safe characters.
fn lvm_name_ok(name: &str) -> bool {
    is(r"^[a-zA-Z0-9][a-zA-Z0-9\-_.]*[a-zA-Z0-9]$", name)
}

/// `Plugin.pm` `parse_name_dir`: a file name with a format PVE knows, or its words.
fn name_dir_refusal(name: &str) -> Option<String> {
    if is(r"^(?:vm-|base-|subvol-)\d+-[^/\s]+\.(?:raw|qcow2|vmdk|subvol)$", name) {
        return None;
    }
    if is(r"^snap-.*\.qcow2$", name) {
        return Some(format!("'{name}' is a snapshot filename, not a volume!"));
    }
    if is(r"^(?:base-)?[^/\s]+\.(?:raw|qcow2|vmdk|subvol)$", name) {
        return None;
    }
    Some(format!("unable to parse volume filename '{name}'"))
}

/// `Plugin.pm` `parse_volname`: a VM's image (`<vmid>/<file>`, a linked clone's
/// `<base vmid>/<base file>/<vmid>/<file>`) or a file of another content directory.
fn file_refusal(volname: &str) -> Option<String> {
    if let Some(c) = groups(r"^\d+/(\S+)/\d+/(\S+)$", volname) {
        return name_dir_refusal(&c[0]).or_else(|| name_dir_refusal(&c[1]));
    }
    if let Some(c) = groups(r"^\d+/(\S+)$", volname) {
        return name_dir_refusal(&c[0]);
    }
    // Storage.pm's $ISO_EXT_RE_0, $VZTMPL_EXT_RE_1, $BACKUP_EXT_RE_2, $IMPORT_EXT_RE_1 and
    // $OVA_CONTENT_RE_1 after their content directory
    let other = is(
        r"^(?:iso/[^/]+\.(?:[iI][sS][oO]|[iI][mM][gG])|vztmpl/[^/]+\.[tT][aA][rR](?:\.(?:[gG][zZ]|[xX][zZ]|[zZ][sS][tT]|[bB][zZ]2))?|backup/[^/]+\.(?:tgz|(?:tar|vma)(?:\.(?:gz|lzo|zst))?)|snippets/[^/]+|import/[ a-zA-Z0-9\-.+=_]+\.ova/[ a-zA-Z0-9\-.+=_]+\.(?:qcow2|raw|vmdk)|import/[ a-zA-Z0-9\-.+=_]+\.(?:ova|ovf|qcow2|raw|vmdk))$",
        volname,
    );
    (!other).then(|| format!("unable to parse directory volume name '{volname}'"))
}

impl StorageConfig {
    /// Why this storage's plugin cannot parse volume name `volname` (what follows `storage:`),
    /// in its words; `None` when it parses it, or when this storage's type is not one whose
    /// parser is known here. PVE parses a drive's existing volume and an import source before
    /// it looks for them on the storage, so this comes before "does not exist" (§57.1).
    pub fn refuses_volname(&self, volname: &str) -> Option<String> {
        let (pattern, words) = match self.plugintype.as_str() {
            t if FILE_TYPES.contains(&t) => return file_refusal(volname),
            "lvm" | "lvmthin" if !lvm_name_ok(volname) => {
                return Some(format!("lvm name '{volname}' contains illegal characters"));
            }
            "lvm" => (r"^vm-\d+-\S+$", "lvm"),
            "lvmthin" => (r"^(?:vm|base)-\d+-\S+$", "lvm"),
            "rbd" => (r"^(?:base-\d+-\S+/)?(?:base)?(?:vm)?-\d+-\S+$", "rbd"),
            "zfspool" => (r"^(?:(?:base|basevol)-\d+-\S+/)?(?:base|basevol|vm|subvol)-\d+-\S+$", "zfs"),
            "iscsi" => (r"^\d+\.\d+\.\d+\.[^/\s]+$", "iscsi"),
            "iscsidirect" => (r"^lun\d+$", "iscsi"),
            "pbs" => (r"^backup/[^\s_]+/[^\s_]+/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", "PBS"),
            _ => return None,
        };
        (!is(pattern, volname)).then(|| format!("unable to parse {words} volume name '{volname}'"))
    }

    /// Why this storage's plugin refuses to allocate a new volume of `bytes` in `format` (the
    /// `format=` a new disk asks for; `None`: storage.cfg's default, `Plugin.pm` `get_formats`, as
    /// qemu-server `create_disks` takes it), in its words (§57.3): the format itself
    /// (`refuses_format`, §42.1), on a file storage the name `find_free_diskname` gives it
    /// (`volname`, predicted: `<vmid>/vm-<vmid>-disk-<n>.<format>`), which `Plugin.pm`
    /// `alloc_image` (BTRFSPlugin.pm's hands it every format but raw and subvol) parses with
    /// `parse_name_dir` before it makes the file, so a format without one of its extensions
    /// (qed, qcow, cloop) is refused there (§42.1), or a sized subvolume, which only ZFS makes
    /// (with a quota): `BTRFSPlugin.pm` `alloc_image` and `Plugin.pm` `alloc_image` (every other
    /// file storage).
    pub fn refuses_new_volume(&self, format: Option<&str>, bytes: u64, volname: Option<&str>) -> Option<String> {
        let format = format.map_or_else(|| self.formats().1, str::to_string);
        if let Some(why) = self.refuses_format(&format) {
            return Some(why);
        }
        if FILE_TYPES.contains(&self.plugintype.as_str()) {
            // the name as predicted; where its number is not known (a storage this user cannot
            // list), PVE refuses all the same, and the words name the disk number as `<n>`
            let suffix = format!(".{format}");
            let known = volname.and_then(|v| v.rsplit('/').next()).filter(|f| f.ends_with(&suffix));
            let file = known.map_or_else(|| format!("vm-<vmid>-disk-<n>{suffix}"), str::to_string);
            if let Some(why) = name_dir_refusal(&file) {
                return Some(why);
            }
        }
        match self.plugintype.as_str() {
            _ if format != "subvol" || bytes == 0 => None,
            "btrfs" => Some("btrfs quotas are currently not supported, use an unsized subvolume or a raw file".into()),
            t if FILE_TYPES.contains(&t) => Some("storage does not support subvol quotas".into()),
            _ => None,
        }
    }

    /// Why this storage's plugin cannot resize volume `volname` whatever the size, in its words
    /// (§57.2): `Plugin.pm` `volume_resize` (the file storages that keep it) resizes only `.raw`
    /// and `.qcow2` files, `BTRFSPlugin.pm` `volume_resize` no subvolume (quotas are not
    /// supported). Both refuse before they look at the VM's power state.
    pub fn refuses_resize(&self, volname: &str) -> Option<String> {
        let file = volname.rsplit('/').next().unwrap_or(volname);
        match self.plugintype.as_str() {
            "btrfs" if file.ends_with(".subvol") => {
                Some("cannot resize subvolume - btrfs quotas are currently not supported".into())
            }
            "btrfs" => None,
            t if FILE_TYPES.contains(&t) && !(volname.ends_with(".raw") || volname.ends_with(".qcow2")) => {
                Some("can't resize this image format".into())
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn storage(kind: &str) -> StorageConfig {
        StorageConfig::from_json(&json!({"storage": "s", "type": kind})).unwrap()
    }

    #[test]
    fn each_plugin_parses_its_own_names_and_refuses_others_in_its_words() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("lvmthin", "vm-100-disk-0", None),
            ("lvmthin", "base-100-disk-0", None),
            ("lvmthin", "foo", Some("unable to parse lvm volume name 'foo'")),
            ("lvmthin", "a b", Some("lvm name 'a b' contains illegal characters")),
            ("lvm", "base-100-disk-0", Some("unable to parse lvm volume name 'base-100-disk-0'")),
            ("lvm", "vm-100-disk-0.qcow2", None),
            ("rbd", "base-9-disk-0/vm-100-disk-0", None),
            ("rbd", "disk0", Some("unable to parse rbd volume name 'disk0'")),
            ("zfspool", "subvol-100-disk-0", None),
            ("zfspool", "data", Some("unable to parse zfs volume name 'data'")),
            ("iscsi", "0.0.1.scsi-36001405", None),
            ("iscsidirect", "lun0", None),
            ("iscsidirect", "lunx", Some("unable to parse iscsi volume name 'lunx'")),
            ("pbs", "backup/vm/100/2025-01-01T00:00:00Z", None),
            ("dir", "100/vm-100-disk-0.qcow2", None),
            ("dir", "9000/base-9000-disk-0.raw/100/vm-100-disk-0.qcow2", None),
            ("dir", "100/disk.img", Some("unable to parse volume filename 'disk.img'")),
            (
                "dir",
                "100/snap-a-vm-100-disk-0.qcow2",
                Some("'snap-a-vm-100-disk-0.qcow2' is a snapshot filename, not a volume!"),
            ),
            ("nfs", "iso/debian.ISO", None),
            ("dir", "import/debian.qcow2", None),
            ("dir", "vm-100-disk-0", Some("unable to parse directory volume name 'vm-100-disk-0'")),
            ("btrfs", "100/vm-100-disk-0.raw", None),
            ("esxi", "anything", None),
        ];
        for (kind, volname, want) in cases {
            assert_eq!(storage(kind).refuses_volname(volname).as_deref(), *want, "{kind} {volname}");
        }
    }

    #[test]
    fn a_sized_subvolume_only_on_zfs_and_the_default_format_counts() {
        let with = |kind: &str, format: &str| {
            StorageConfig::from_json(&json!({"storage": "s", "type": kind, "format": format})).unwrap()
        };
        let quota = "storage does not support subvol quotas";
        assert_eq!(with("dir", "subvol").refuses_new_volume(None, 1 << 30, None).as_deref(), Some(quota));
        assert_eq!(with("dir", "subvol").refuses_new_volume(Some("qcow2"), 1 << 30, None), None);
        assert_eq!(with("dir", "subvol").refuses_new_volume(None, 0, None), None);
        assert_eq!(
            with("btrfs", "subvol").refuses_new_volume(None, 1 << 30, None).as_deref(),
            Some("btrfs quotas are currently not supported, use an unsized subvolume or a raw file")
        );
        assert_eq!(with("zfspool", "subvol").refuses_new_volume(None, 1 << 30, None), None);
        assert_eq!(storage("dir").refuses_new_volume(Some("subvol"), 1, None).as_deref(), Some(quota));
        assert_eq!(
            storage("lvmthin").refuses_new_volume(Some("qcow2"), 1, None).as_deref(),
            Some("unsupported format 'qcow2'")
        );
        assert_eq!(storage("lvmthin").refuses_new_volume(None, 1, None), None);
    }

    #[test]
    fn a_new_disk_in_each_schema_format_on_each_storage_type() {
        // qemu-server Drive.pm's `format` enum; create_disks hands it to vdisk_alloc as it is
        let formats = ["raw", "qcow", "qed", "qcow2", "vmdk", "cloop"];
        let chain = StorageConfig::from_json(&json!({"storage": "s", "type": "lvm", "snapshot-as-volume-chain": 1}));
        let kinds = ["dir", "nfs", "cifs", "btrfs", "rbd", "zfspool", "zfs", "lvm", "lvmthin", "chain"];
        for kind in kinds {
            let scfg = if kind == "chain" { chain.clone().unwrap() } else { storage(kind) };
            for format in formats {
                let file = format!("vm-100-disk-0.{format}");
                let volname = format!("100/{file}");
                let want = match kind {
                    // Plugin.pm alloc_image: parse_name_dir of the name find_free_diskname gives
                    "dir" | "nfs" | "cifs" | "btrfs" if ["qcow", "qed", "cloop"].contains(&format) => {
                        Some(format!("unable to parse volume filename '{file}'"))
                    }
                    "dir" | "nfs" | "cifs" | "btrfs" | "rbd" => None,
                    _ if format == "raw" => None,
                    "chain" if format == "qcow2" => None,
                    "lvm" if format == "qcow2" => {
                        Some("snapshot-as-volume-chain option need to be enabled to use qcow2 format".into())
                    }
                    _ => Some(format!("unsupported format '{format}'")),
                };
                let got = scfg.refuses_new_volume(Some(format), 1 << 30, Some(&volname));
                assert_eq!(got, want, "{kind} {format}");
                // a name not known (a storage this user cannot list): the same refusal, its number unnamed
                let unnamed = scfg.refuses_new_volume(Some(format), 1 << 30, Some("(known after apply)"));
                let want = want.map(|w| w.replace("vm-100-disk-0", "vm-<vmid>-disk-<n>"));
                assert_eq!(unnamed, want, "{kind} {format} unnamed");
            }
        }
    }

    #[test]
    fn file_storages_resize_raw_and_qcow2_only_and_btrfs_no_subvolume() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("dir", "100/vm-100-disk-0.raw", None),
            ("nfs", "100/vm-100-disk-0.qcow2", None),
            ("dir", "100/vm-100-disk-0.vmdk", Some("can't resize this image format")),
            ("cifs", "100/vm-100-disk-0.vmdk", Some("can't resize this image format")),
            ("btrfs", "100/vm-100-disk-0.raw", None),
            (
                "btrfs",
                "100/subvol-100-disk-0.subvol",
                Some("cannot resize subvolume - btrfs quotas are currently not supported"),
            ),
            ("lvmthin", "vm-100-disk-0", None),
            ("zfspool", "subvol-100-disk-0", None),
        ];
        for (kind, volname, want) in cases {
            assert_eq!(storage(kind).refuses_resize(volname).as_deref(), *want, "{kind} {volname}");
        }
    }
}
