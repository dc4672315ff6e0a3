//! What a start refuses of a VM's drives and passed-through PCI devices as its config and storage.cfg tell: a volume on a storage without its content type, a drive's `format` other than its volume's, a volume chain or more than 14 SCSI disks on an older machine, `hostpciN` option combinations (docs/pve-semantics.md §62).
//!
//! Each rule follows qemu-server 9.2.6 at the place it is checked there: QemuServer.pm
//! `vm_start_nolock` (`get_current_vm_volumes`, `check_volume_storage_type`) before the command
//! line, then `config_to_command`: PCI.pm `parse_hostpci_devices` before the USB devices, the
//! drive loop (`scsihw_infos`' SCSI guard, Drive.pm `get_path_and_format` and
//! `checked_parse_volname`, QemuServer.pm `print_drive_commandline_full`, or Blockdev.pm
//! `generate_format_blockdev` from machine version 10.0) after the VNC clipboard and before the
//! NICs. What PVE looks at on the host before one of these (a PCI device's functions, a
//! directory mapping) is the host's to tell (docs/refusals.md R-power-91).

use std::collections::BTreeMap;

use super::command::{prop, set};
use crate::pve::machine::pinned;
use crate::pve::storage::StorageConfig;
use crate::pve::volume::{content_and_owner, Volume};

/// The drive keys in `valid_drive_names`' order (`foreach_volume`), with each bus's count.
const DRIVES: &[(&str, u32)] =
    &[("ide", 4), ("sata", 6), ("scsi", 31), ("virtio", 16), ("efidisk", 1), ("tpmstate", 1)];

/// Drive.pm `$QEMU_FORMAT_RE`: the formats `checked_parse_volname` takes.
const QEMU_FORMATS: &[&str] = &["raw", "qcow", "qcow2", "qed", "vmdk", "cloop"];

/// Each drive of `config` in `foreach_volume`'s order, as (key, value).
fn drives(config: &BTreeMap<String, String>) -> impl Iterator<Item = (String, &String)> {
    DRIVES
        .iter()
        .flat_map(|(bus, n)| (0..*n).map(move |i| format!("{bus}{i}")))
        .filter_map(|k| config.get(&k).map(|v| (k, v)))
}

/// A drive's volume id (its first part, or `file=`), when it names a volume of a storage in
/// `storages` (not `none`, `cdrom`, a path or a new disk's size).
fn volume<'v>(value: &'v str, storages: &'v [StorageConfig]) -> Option<(&'v str, &'v StorageConfig)> {
    let file = prop(value, "file", Some("file"))?;
    let sid = Volume::parse(file)?.storage;
    let storage = storages.iter().find(|s| s.storage == sid)?;
    Some((file, storage))
}

/// QemuServer.pm `check_volume_storage_type`, for each volume of the config and its `vmstate`
/// (`get_current_vm_volumes`, in `vm_start_nolock` before the command line): the storage's
/// `content` must hold the volume's type (`images`, `iso`).
pub fn content(config: &BTreeMap<String, String>, storages: &[StorageConfig]) -> Option<String> {
    let state = config.get("vmstate").map(|v| ("vmstate".to_string(), v));
    drives(config).chain(state).find_map(|(_, value)| {
        let (file, storage) = volume(value, storages)?;
        let (vtype, _) = content_and_owner(file);
        (!storage.content.contains(vtype))
            .then(|| format!("storage '{}' does not support content-type '{vtype}'", storage.storage))
    })
}

/// `config_to_command`'s drive loop, for each drive (not the EFI disk or TPM state, printed
/// before) in order: a `scsiN` above 13 needs machine version 4.1+pve2 (`$version_guard`);
/// a volume's format as its storage says it (Drive.pm `checked_parse_volname`: the name's
/// format, raw on a block storage, `subvol` a container's volume) must be a QEMU format, and a
/// drive's `format` option must be that one; before machine version 10.0,
/// `print_drive_commandline_full` refuses a qcow2 volume on a storage with
/// `snapshot-as-volume-chain`.
pub fn drive(config: &BTreeMap<String, String>, storages: &[StorageConfig]) -> Option<String> {
    // the pinned `machine`'s version; without one the node's QEMU, 10.0 or later on every PVE 9 node
    let version = pinned(config);
    let older = |v: (u64, u64, u64)| version.is_some_and(|m| m < v);
    drives(config).filter(|(k, _)| !k.starts_with("efidisk") && !k.starts_with("tpmstate")).find_map(|(key, value)| {
        if key.strip_prefix("scsi").and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n > 13) && older((4, 1, 2)) {
            return Some(format!(
                "{key}: machine version 4.1~pve2 or higher is required to use more than 14 SCSI disks"
            ));
        }
        let (file, storage) = volume(value, storages)?;
        let format = volume_format(file, storage, false)?;
        if let Some(words) = not_qemu_format(file, format) {
            return Some(words);
        }
        if let Some(asked) = prop(value, "format", None).filter(|f| *f != format) {
            return Some(format!(
                "drive '{key}' - volume '{file}' - 'format={asked}' option different from storage format '{format}'"
            ));
        }
        (storage.volume_chain && format == "qcow2" && older((10, 0, 0))).then(|| {
            format!(
                "storage for '{file}' is configured for snapshots as a volume chain - this requires QEMU machine version >= 10.0. See https://pve.proxmox.com/wiki/QEMU_Machine_Version_Upgrade"
            )
        })
    })
}

/// A volume's format as its storage's `parse_volname` gives it: the name's (raw on a block
/// storage, a file's extension, `.qcow2` on LVM), `subvol` for a ZFS container volume; with
/// `source`, an `import/` volume's too (an OVA member `ova+<ext>`, else its extension; an ESXi
/// volume's `vmx`). `None` for an import volume otherwise.
fn volume_format<'v>(volid: &'v str, storage: &StorageConfig, source: bool) -> Option<&'v str> {
    let parsed = Volume::parse(volid)?;
    let import = match storage.plugintype.as_str() {
        "esxi" => volid.ends_with(".vmx").then_some("vmx"),
        _ => parsed.volname.strip_prefix("import/").map(|name| match name.contains(".ova/") {
            true => "ova+", // ova+<member's extension>, which pve-storage's parser limits to QEMU's
            false => name.rsplit_once('.').map_or(name, |(_, ext)| ext),
        }),
    };
    if import.is_some() {
        return import.filter(|_| source); // as a drive's volume: its content type is refused first
    }
    let subvol = storage.plugintype == "zfspool" && parsed.file.starts_with("subvol-");
    Some(if subvol { "subvol" } else { parsed.format() })
}

/// Drive.pm `checked_parse_volname`: an OVA member is taken (its extension is one of QEMU's,
/// as pve-storage's parser allows), any other format must be one of QEMU's.
fn not_qemu_format(volid: &str, format: &str) -> Option<String> {
    (!format.starts_with("ova+") && !QEMU_FORMATS.contains(&format))
        .then(|| format!("volume '{volid}' - not a QEMU image format '{format}'"))
}

/// `checked_parse_volname` of a volume a create or config update attaches (Qemu.pm
/// `create_disks`) or takes as an `import-from` source (`source`, `$check_storage_access`), on
/// `storage`: its words when the volume's format is not one QEMU takes.
pub fn attached_format(volid: &str, storage: &StorageConfig, source: bool) -> Option<String> {
    not_qemu_format(volid, volume_format(volid, storage, source)?)
}

/// Perl's truth of a parsed boolean option (`1`, `on`, `yes`, `true`).
fn on(value: &str, key: &str) -> Option<bool> {
    prop(value, key, None).map(|v| matches!(v, "1" | "on" | "yes" | "true"))
}

/// pve-common SysFSTools.pm `lspci` with an id as its filter: how many of the node's devices
/// (`devices`: their full ids, `<domain>:<bus>:<slot>.<function>`, as `GET
/// /nodes/<node>/hardware/pci` lists them) start with it, the `0000:` domain optional (an id
/// without a function stands for all its functions).
pub fn lspci(devices: &[String], id: &str) -> usize {
    let matches = |d: &String| d.starts_with(id) || d.strip_prefix("0000:").is_some_and(|d| d.starts_with(id));
    devices.iter().filter(|d| matches(d)).count()
}

/// The `host` ids of the config's `hostpciN` (each `;`-separated one, in `hostpci0`..15's
/// order), which `parse_hostpci` looks up with `lspci`; a `mapping`'s are the mapping's.
pub fn host_ids(config: &BTreeMap<String, String>) -> Vec<&str> {
    let hosts = (0..16).filter_map(|i| set(config, &format!("hostpci{i}")));
    hosts
        .filter_map(|v| prop(v, "host", Some("host")).filter(|_| prop(v, "mapping", None).is_none()))
        .flat_map(|h| h.split(';'))
        .collect()
}

/// PCI.pm `parse_hostpci_devices`: a `pcie` device on a machine that is not q35.
const Q35_NOT_ENABLED: &str = "q35 machine model is not enabled";

/// What `parse_hostpci` makes of a `mapping` on the start's node: the `path` of each entry (one
/// alternative each) or PVE's words, `None` when not known (`mappings::pci_on_node`).
pub type Mapped<'f> = &'f dyn Fn(&str) -> Option<Result<Vec<String>, String>>;

/// PCI.pm `parse_hostpci_devices` (from `config_to_command`, before the USB devices), for
/// `hostpci0`..`hostpci15` in order, each after `parse_hostpci`: `host` or `mapping`, not both;
/// a mapping's own checks (`mapped`); each alternative (`host`, or a mapping's entry) with
/// several ids (`;`) is a multifunction device, which `mdev` cannot use; `pcie` needs a q35
/// machine; `legacy-igd` once, with `vga: none`, `rombar` on, no `x-vga`, `mdev`, q35,
/// multifunction device or alternate devices (a mapping with several entries on the node), on an
/// id ending in `02.0`. `parse_hostpci` looks each id up on the host (`lspci`: a device not there
/// is refused first, in other words: with `pci`, the node's device ids, a `host` id it lacks,
/// §72); an id without a function (whose functions only the host
/// lists) ends what the config decides where their count matters, as does a hidden mapping.
pub fn hostpci(config: &BTreeMap<String, String>, mapped: Mapped, pci: Option<&[String]>) -> Option<String> {
    let machine = config.get("machine").map(String::as_str).unwrap_or_default();
    let kind = prop(machine, "type", Some("type")).unwrap_or_default();
    let q35 = kind == "q35" || kind.starts_with("pc-q35");
    let mut igd = false;
    for i in 0..16 {
        let Some(value) = set(config, &format!("hostpci{i}")) else { continue };
        let alternatives = match (prop(value, "host", Some("host")), prop(value, "mapping", None)) {
            (Some(_), Some(_)) => return Some("Cannot set both 'host' and 'mapping'.".into()),
            (None, None) => return Some("Either 'host' or 'mapping' must be set.".into()),
            (Some(host), None) => match pci.and_then(|p| host.split(';').find(|id| lspci(p, id) == 0)) {
                Some(id) => return Some(format!("no PCI device found for '{id}'")),
                None => vec![host.to_string()],
            },
            (None, Some(id)) => match mapped(id) {
                Some(Ok(paths)) => paths,
                Some(Err(words)) => return Some(words),
                // a mapping this user cannot read: PVE refuses with its words or, past them, with the
                // `pcie` rule, which needs no path, so a `pcie` without q35 is refused either way
                None if !q35 && on(value, "pcie") == Some(true) => return Some(Q35_NOT_ENABLED.into()),
                None => return None,
            },
        };
        let mdev = prop(value, "mdev", None).is_some();
        let multi = alternatives.iter().any(|a| a.contains(';'));
        // one id without a function: `lspci` lists its functions, one or several
        let unknown = alternatives.iter().any(|a| !a.contains(';') && !a.contains('.'));
        if multi && mdev {
            return Some("cannot use mediated device with multifunction device".into());
        } else if unknown && mdev {
            return None;
        }
        if !q35 && on(value, "pcie") == Some(true) {
            return Some(Q35_NOT_ENABLED.into());
        }
        if on(value, "legacy-igd") != Some(true) {
            continue;
        }
        let words = if igd {
            "only one device can be assigned in legacy-igd mode"
        } else if config.get("vga").is_none_or(|v| v != "none") {
            "legacy IGD assignment requires VGA mode to be 'none'"
        } else if on(value, "rombar") == Some(false) {
            "legacy IGD assignment requires rombar to be enabled"
        } else if on(value, "x-vga") == Some(true) {
            "legacy IGD assignment is not compatible with x-vga"
        } else if mdev {
            "legacy IGD assignment is not compatible with mdev"
        } else if q35 {
            "legacy IGD assignment is not compatible with q35"
        } else if multi {
            "legacy IGD assignment is not compatible with multifunction devices"
        } else if unknown {
            return None;
        } else if alternatives.len() > 1 {
            "legacy IGD assignment is not compatible with alternate devices"
        } else if !alternatives[0].ends_with("02.0") {
            "legacy IGD assignment only works for devices on host bus 00:02.0"
        } else {
            igd = true;
            continue;
        };
        return Some(words.into());
    }
    None
}

#[cfg(test)]
mod tests;
