//! PVE's volume ids (`storage:volname`) taken apart once: storage, owner vmid, linked-clone base, the format a file name carries.
//!
//! PVE's own rule, followed here: pve-storage `PVE/Storage.pm` `parse_volume_id` splits
//! `storage:volname` (a storage id is `[a-z][a-z0-9-_.]*[a-z0-9]`, case-insensitive);
//! `PVE/Storage/Plugin.pm` `parse_volname` reads a file storage's `<vmid>/<file>` and a linked
//! clone's `<base vmid>/<base file>/<vmid>/<file>` (each file as `parse_name_dir`:
//! `[base-]<name>.<raw|qcow2|vmdk|subvol>`), `iso/<file>` and the other content dirs;
//! `PVE/Storage/LvmThinPlugin.pm` (and the ZFS and RBD plugins alike) `parse_volname` reads a
//! block storage's `vm-<vmid>-...` / `base-<vmid>-...` and a linked clone's `base-.../vm-...`.
//! A cloud-init volume is qemu-server `QemuServer/Drive.pm` `drive_is_cloudinit`'s
//! `[vm-<vmid>-]cloudinit[.<format>]`.

use crate::pve::pveformat::storage_id_ok;

/// What a volume holds, as far as its name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolumeKind {
    /// A VM disk image (`images` content), its own or a template's base.
    Image,
    /// A VM's cloud-init drive.
    CloudInit,
    /// An ISO image (`iso/...`).
    Iso,
    /// Anything else (other content, or a name PVE's parsers would refuse).
    Other,
}

/// A volume id taken apart. Borrowed from the text it was parsed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume<'a> {
    pub storage: &'a str,
    /// Everything after `storage:`.
    pub volname: &'a str,
    pub kind: VolumeKind,
    /// The VM that owns the volume (`vm_is_volid_owner`): the `<vmid>/` directory on a file
    /// storage, the `vm-<vmid>-` / `base-<vmid>-` name on a block storage.
    pub owner: Option<u64>,
    /// The volume's own file name (a linked clone's last part).
    pub file: &'a str,
    /// A linked clone's base volume, as its volname names it (`base-9000-disk-0`, or
    /// `9000/base-9000-disk-0.qcow2` on a file storage).
    pub base: Option<&'a str>,
    /// Whether this volume is itself a template's base (`base-...`).
    pub is_base: bool,
    /// The format a file storage's name carries (`raw`, `qcow2`, `vmdk`, `subvol`), or an LVM
    /// volume's `.qcow2`; `None` on a block storage otherwise, whose volumes are raw (`format()`).
    pub name_format: Option<&'a str>,
}

/// The formats `parse_name_dir` accepts as a file name's extension.
const NAME_FORMATS: [&str; 4] = ["raw", "qcow2", "vmdk", "subvol"];

impl<'a> Volume<'a> {
    /// Take a volume id apart; `None` when it is not one (`none`, `cdrom`, an absolute path,
    /// a bare size, a storage id PVE would refuse).
    pub fn parse(volid: &'a str) -> Option<Volume<'a>> {
        let (storage, volname) = volid.split_once(':')?;
        if !storage_id_ok(storage) || volname.is_empty() {
            return None;
        }
        let mut v = Volume {
            storage,
            volname,
            kind: VolumeKind::Other,
            owner: None,
            file: volname,
            base: None,
            is_base: false,
            name_format: None,
        };
        let parts: Vec<&str> = volname.split('/').collect();
        let dir_vmid =
            |p: &str| (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())).then(|| p.parse().ok()).flatten();
        match parts.as_slice() {
            // File storage: `<vmid>/<file>`, a linked clone `<base vmid>/<base file>/<vmid>/<file>`.
            [vmid, file] | [_, _, vmid, file] if dir_vmid(vmid).is_some() && dir_vmid(parts[0]).is_some() => {
                let Some((is_base, format)) = name_dir(file) else { return Some(v) };
                if parts.len() == 4 && name_dir(parts[1]).is_none() {
                    return Some(v);
                }
                v.owner = dir_vmid(vmid);
                v.file = file;
                v.is_base = is_base;
                v.name_format = Some(format);
                v.base = (parts.len() == 4).then(|| &volname[..parts[0].len() + 1 + parts[1].len()]);
            }
            ["iso", file] if !file.is_empty() => {
                v.kind = VolumeKind::Iso;
                v.file = file;
                return Some(v);
            }
            // Block storage: `vm-<vmid>-...` / `base-<vmid>-...`, a linked clone `base-.../vm-...`.
            [file] | [_, file] => {
                let Some((is_base, owner)) = block_name(file) else { return Some(v) };
                if parts.len() == 2 && !block_name(parts[0]).is_some_and(|(base, _)| base) {
                    return Some(v);
                }
                v.owner = Some(owner);
                v.file = file;
                v.is_base = is_base;
                v.base = (parts.len() == 2).then_some(parts[0]);
                // LVMPlugin.pm parse_volname: a `.qcow2` LV (volume chains, §42.1) holds qcow2
                v.name_format = file.ends_with(".qcow2").then_some("qcow2");
            }
            _ => return Some(v),
        }
        v.kind = if is_cloudinit(v.file) { VolumeKind::CloudInit } else { VolumeKind::Image };
        Some(v)
    }

    /// The volume's format as PVE reads it from the name: the file's extension on a file
    /// storage, raw on a block storage.
    pub fn format(&self) -> &'a str {
        self.name_format.unwrap_or("raw")
    }

    /// `n` of a `vm-<vmid>-disk-<n>` / `base-<vmid>-disk-<n>` file name (the numbers
    /// `get_next_vm_diskname` skips).
    pub fn disk_number(&self, vmid: u64) -> Option<u32> {
        ["vm", "base"].iter().find_map(|prefix| {
            let rest = self.file.strip_prefix(&format!("{prefix}-{vmid}-disk-"))?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
    }
}

/// Whether a source is a disk inside an OVA archive of an import storage (`import/<name>.ova/<disk>`),
/// which QemuServer/Helpers.pm `needs_extraction` extracts before the copy (pve-storage Plugin.pm
/// `parse_volname`: content `import`, format `ova+<fmt>`).
pub fn in_ova(volname: &str) -> bool {
    volname
        .strip_prefix("import/")
        .and_then(|r| r.split_once(".ova/"))
        .is_some_and(|(a, d)| !a.is_empty() && !d.is_empty())
}

/// The content type and owner VM of a volume name, as pve-storage's `parse_volname` finds them.
pub fn content_and_owner(volid: &str) -> (&'static str, Option<u64>) {
    let volname = volid.split_once(':').map_or(volid, |(_, n)| n);
    for t in ["iso", "vztmpl", "import", "snippets", "backup"] {
        if volname.strip_prefix(t).is_some_and(|r| r.starts_with('/')) {
            return (t, None);
        }
    }
    let file = volname.rsplit('/').next().unwrap_or(volname);
    let owner = ["vm-", "base-"].iter().find_map(|p| {
        let rest = file.strip_prefix(p)?;
        rest.split('-').next()?.parse().ok()
    });
    ("images", owner)
}

/// The format an absolute path's extension names (`/mnt/images/a.qcow2`): a drive on a path is
/// no volume, but QEMU opens it in the format its name says (QemuServer.pm `qemu_img_format`).
pub fn path_format(path: &str) -> Option<&str> {
    let ext = path.strip_prefix('/')?.rsplit_once('.')?.1;
    ["raw", "qcow2", "vmdk"].into_iter().find(|f| *f == ext)
}

/// `parse_name_dir`: (is base, format) of `[base-]<name>.<format>`.
fn name_dir(file: &str) -> Option<(bool, &str)> {
    if file.is_empty() || file.contains(char::is_whitespace) {
        return None;
    }
    let (stem, ext) = file.rsplit_once('.')?;
    let format = NAME_FORMATS.into_iter().find(|f| *f == ext)?;
    (!stem.is_empty()).then_some((file.starts_with("base-"), format))
}

/// (is base, owner) of a block storage's `vm-<vmid>-<rest>` / `base-<vmid>-<rest>`.
fn block_name(file: &str) -> Option<(bool, u64)> {
    if file.contains(char::is_whitespace) {
        return None;
    }
    let (is_base, rest) = match (file.strip_prefix("base-"), file.strip_prefix("vm-")) {
        (Some(rest), _) => (true, rest),
        (_, Some(rest)) => (false, rest),
        _ => return None,
    };
    let (id, tail) = rest.split_once('-')?;
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) || tail.is_empty() {
        return None;
    }
    Some((is_base, id.parse().ok()?))
}

/// `drive_is_cloudinit`: `[vm-<vmid>-]cloudinit[.<format>]`.
fn is_cloudinit(file: &str) -> bool {
    let stem = ["raw", "cow", "qcow", "qcow2", "qed", "vmdk", "cloop"]
        .iter()
        .find_map(|f| file.strip_suffix(&format!(".{f}")))
        .unwrap_or(file);
    let stem = stem
        .strip_prefix("vm-")
        .and_then(|r| r.split_once('-'))
        .filter(|(id, _)| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        .map_or(stem, |(_, rest)| rest);
    stem == "cloudinit"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_ids_taken_apart_as_pve_does() {
        use VolumeKind::*;
        // (volid, storage, kind, owner, file, base, is_base, name_format)
        type Row = (
            &'static str,
            &'static str,
            VolumeKind,
            Option<u64>,
            &'static str,
            Option<&'static str>,
            bool,
            Option<&'static str>,
        );
        let rows: &[Row] = &[
            ("local-lvm:vm-100-disk-0", "local-lvm", Image, Some(100), "vm-100-disk-0", None, false, None),
            // LVMPlugin.pm parse_volname: a qcow2 LV of a volume-chain storage
            ("san:vm-100-disk-1.qcow2", "san", Image, Some(100), "vm-100-disk-1.qcow2", None, false, Some("qcow2")),
            ("local-lvm:base-9000-disk-1", "local-lvm", Image, Some(9000), "base-9000-disk-1", None, true, None),
            (
                "local:100/vm-100-disk-2.qcow2",
                "local",
                Image,
                Some(100),
                "vm-100-disk-2.qcow2",
                None,
                false,
                Some("qcow2"),
            ),
            (
                "nfs.1:100/vm-100-disk-0.vmdk",
                "nfs.1",
                Image,
                Some(100),
                "vm-100-disk-0.vmdk",
                None,
                false,
                Some("vmdk"),
            ),
            // Linked clones: the owner is the clone, the base is named.
            (
                "local-lvm:base-9000-disk-0/vm-101-disk-0",
                "local-lvm",
                Image,
                Some(101),
                "vm-101-disk-0",
                Some("base-9000-disk-0"),
                false,
                None,
            ),
            (
                "local:9000/base-9000-disk-0.qcow2/101/vm-101-disk-0.qcow2",
                "local",
                Image,
                Some(101),
                "vm-101-disk-0.qcow2",
                Some("9000/base-9000-disk-0.qcow2"),
                false,
                Some("qcow2"),
            ),
            // Cloud-init, on block and file storages.
            ("local-lvm:vm-100-cloudinit", "local-lvm", CloudInit, Some(100), "vm-100-cloudinit", None, false, None),
            (
                "local:100/vm-100-cloudinit.qcow2",
                "local",
                CloudInit,
                Some(100),
                "vm-100-cloudinit.qcow2",
                None,
                false,
                Some("qcow2"),
            ),
            ("local:iso/debian-12.iso", "local", Iso, None, "debian-12.iso", None, false, None),
            // Names PVE's parsers would refuse: the storage is still known.
            ("local:100/vm-100-disk-0.iso", "local", Other, None, "100/vm-100-disk-0.iso", None, false, None),
            ("tank:subvol-100-disk-0", "tank", Other, None, "subvol-100-disk-0", None, false, None),
            ("local-lvm:32", "local-lvm", Other, None, "32", None, false, None),
        ];
        for (volid, storage, kind, owner, file, base, is_base, name_format) in rows {
            let v = Volume::parse(volid).unwrap_or_else(|| panic!("{volid} not parsed"));
            assert_eq!(
                (v.storage, v.kind, v.owner, v.file, v.base, v.is_base, v.name_format),
                (*storage, *kind, *owner, *file, *base, *is_base, *name_format),
                "{volid}"
            );
        }
        for not_a_volume in
            ["none", "cdrom", "/dev/sdb", "/mnt/a.qcow2", "32", ":x", "a:x", "1st:x", "bad-:x", "local:"]
        {
            assert_eq!(Volume::parse(not_a_volume), None, "{not_a_volume}");
        }
    }

    #[test]
    fn format_and_disk_numbers() {
        let v = |s| Volume::parse(s).unwrap();
        assert_eq!(v("local-lvm:vm-100-disk-0").format(), "raw");
        assert_eq!(v("local:100/vm-100-disk-2.qcow2").format(), "qcow2");
        assert_eq!(v("local:100/vm-100-disk-2.qcow2").disk_number(100), Some(2));
        assert_eq!(v("local-lvm:base-9000-disk-0/vm-101-disk-3").disk_number(101), Some(3));
        assert_eq!(v("local-lvm:base-9000-disk-0/vm-101-disk-3").disk_number(9000), None);
        assert_eq!(v("local-lvm:base-9000-disk-4").disk_number(9000), Some(4));
        assert_eq!(v("local-lvm:vm-100-cloudinit").disk_number(100), None);
        assert_eq!(path_format("/mnt/images/a.qcow2"), Some("qcow2"));
        assert_eq!(path_format("/dev/sdb"), None);
        assert_eq!(path_format("local:100/vm-100-disk-0.qcow2"), None);
    }
}
