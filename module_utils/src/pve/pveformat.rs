//! PVE's named value formats (node names, storage and bridge ids, volume ids, urlencoded text): the one place that knows what each may hold.
//!
//! Every value a task puts into a request path or a property string is checked here before
//! any call, with PVE's own rule and wording, so that no value can name another object, add a
//! path segment or add a key: `,` `=` `/` `?` `#` `%`, spaces and newlines are outside every
//! format below but `urlencoded` (which allows `%` and nothing that splits a property string).
//! Sources: pve-common `src/PVE/JSONSchema.pm` (`pve_verify_node_name`, `parse_id`,
//! `parse_bridge_id`, `pve_verify_vmid`, `pve_verify_urlencoded`), pve-storage
//! `src/PVE/Storage/Plugin.pm` (`parse_volume_id`), qemu-server `src/PVE/QemuServer.pm`
//! (`verify_volume_id_or_qm_path`, `verify_volume_id_or_absolute_path`).

use crate::error::{clip, Error, Result};

/// A format PVE registers by name (`format => 'pve-node'` in the API schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PveFormat {
    /// `pve-node`: `^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$`.
    Node,
    /// `pve-storage-id`: 2 or more of `[a-z0-9._-]`, a letter first, no `.`/`-`/`_` last
    /// (case-insensitive).
    StorageId,
    /// `pve-bridge-id`: `^[-_.\w]+$` (ASCII here: Linux interface names are).
    BridgeId,
    /// `pve-vmid`: 100 to 999999999 without leading zeros.
    Vmid,
    /// `pve-volume-id`: `<storage id>:<volume name>`.
    VolumeId,
    /// `pve-volume-id-or-qm-path` (a drive's `file`): a volume id, an absolute path, `none`
    /// or `cdrom`.
    VolumeIdOrQmPath,
    /// `pve-volume-id-or-absolute-path` (`import-from`).
    VolumeIdOrAbsolutePath,
    /// `urlencoded`: `^[-%a-zA-Z0-9_.!~*'()]*$` (a drive's `serial`, an IDE `model`).
    Urlencoded,
}

/// How much of a rejected value a message quotes.
pub const QUOTE_MAX: usize = 120;

/// PVE's `pve-storage-id`: `[a-z][a-z0-9\-\_\.]*[a-z0-9]`, case-insensitive.
pub(crate) fn storage_id_ok(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A volume id's storage part is a storage id; its name is anything on one line.
fn volume_id_ok(v: &str) -> bool {
    match v.split_once(':') {
        Some((storage, name)) => storage_id_ok(storage) && !name.is_empty() && !name.contains('\n'),
        None => false,
    }
}

/// PVE's check for `format`, with PVE's message when `value` fails it.
pub fn verify(format: PveFormat, value: &str) -> std::result::Result<(), String> {
    let shown = clip(value, QUOTE_MAX);
    let ok = match format {
        PveFormat::Node => {
            let b = value.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        }
        PveFormat::StorageId => {
            if value.chars().count() < 2 {
                return Err(format!("storage ID '{shown}' cannot be shorter than 2 characters"));
            }
            if !storage_id_ok(value) {
                return Err(format!("storage ID '{shown}' contains illegal characters"));
            }
            true
        }
        PveFormat::BridgeId => {
            if value.is_empty() || !value.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
            {
                return Err(format!("invalid bridge ID '{shown}'"));
            }
            true
        }
        PveFormat::Vmid => {
            let b = value.as_bytes();
            (3..=9).contains(&b.len()) && b[0] != b'0' && b.iter().all(u8::is_ascii_digit)
        }
        PveFormat::VolumeId => {
            if !volume_id_ok(value) {
                return Err(format!("unable to parse volume ID '{shown}'"));
            }
            true
        }
        PveFormat::VolumeIdOrQmPath | PveFormat::VolumeIdOrAbsolutePath => {
            let special = format == PveFormat::VolumeIdOrQmPath && matches!(value, "none" | "cdrom");
            let path = value.starts_with('/') && !value.contains('\n');
            if !(special || path || volume_id_ok(value)) {
                return Err(format!("unable to parse volume ID '{shown}'"));
            }
            true
        }
        PveFormat::Urlencoded => {
            if !value.bytes().all(|c| c.is_ascii_alphanumeric() || b"-%_.!~*'()".contains(&c)) {
                return Err(format!("invalid urlencoded string: {shown}"));
            }
            true
        }
    };
    if ok {
        return Ok(());
    }
    // PVE's two messages that do not quote the value: it is added, for the user to find it.
    let what = if format == PveFormat::Node { "node name" } else { "VM ID" };
    Err(format!("value does not look like a valid {what}, got '{shown}'"))
}

/// Check a task's option against `format` before any call: an `Args` error naming the option
/// and quoting (at most `QUOTE_MAX` characters of) the value.
pub fn check_option(option: &str, format: PveFormat, value: &str) -> Result<()> {
    verify(format, value).map_err(|msg| Error::args(format!("{option}: {msg}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_accept_what_pve_accepts() {
        let table: &[(PveFormat, &str, bool)] = &[
            (PveFormat::Node, "pve1", true),
            (PveFormat::Node, "a", true),
            (PveFormat::Node, "node-01", true),
            (PveFormat::Node, "-pve", false),
            (PveFormat::Node, "pve-", false),
            (PveFormat::Node, "pve1/qemu/100/status/stop#", false),
            (PveFormat::Node, "pve1/../../access", false),
            (PveFormat::Node, "pve1?x=1", false),
            (PveFormat::Node, "pve.example", false),
            (PveFormat::Node, "", false),
            (PveFormat::StorageId, "local-lvm", true),
            (PveFormat::StorageId, "Ceph.pool_1", true),
            (PveFormat::StorageId, "l", false),
            (PveFormat::StorageId, "1local", false),
            (PveFormat::StorageId, "local-", false),
            (PveFormat::StorageId, "local:lvm", false),
            (PveFormat::StorageId, "local,ro=1", false),
            (PveFormat::BridgeId, "vmbr0", true),
            (PveFormat::BridgeId, "vmbr0.100", true),
            (PveFormat::BridgeId, "vmbr0,tag=99,firewall=0", false),
            (PveFormat::BridgeId, "", false),
            (PveFormat::Vmid, "100", true),
            (PveFormat::Vmid, "999999999", true),
            (PveFormat::Vmid, "99", false),
            (PveFormat::Vmid, "0100", false),
            (PveFormat::Vmid, "1000000000", false),
            (PveFormat::VolumeId, "local-lvm:vm-100-disk-0", true),
            (PveFormat::VolumeId, "local:iso/debian.iso", true),
            (PveFormat::VolumeId, "local-lvm:", false),
            (PveFormat::VolumeId, "/dev/sdb", false),
            (PveFormat::VolumeIdOrQmPath, "none", true),
            (PveFormat::VolumeIdOrQmPath, "cdrom", true),
            (PveFormat::VolumeIdOrQmPath, "/dev/sdb", true),
            (PveFormat::VolumeIdOrQmPath, "local-lvm:10", true),
            (PveFormat::VolumeIdOrQmPath, "nothing", false),
            (PveFormat::VolumeIdOrAbsolutePath, "none", false),
            (PveFormat::VolumeIdOrAbsolutePath, "local:import/disk.qcow2", true),
            (PveFormat::Urlencoded, "abc123", true),
            (PveFormat::Urlencoded, "a%20b", true),
            (PveFormat::Urlencoded, "", true),
            (PveFormat::Urlencoded, "abc,cache=unsafe", false),
            (PveFormat::Urlencoded, "a b", false),
        ];
        for (format, value, ok) in table {
            assert_eq!(verify(*format, value).is_ok(), *ok, "{format:?} {value:?}");
        }
    }

    #[test]
    fn messages_name_the_option_and_cut_the_value() {
        let e = check_option("node", PveFormat::Node, "pve1/x").unwrap_err().to_string();
        assert_eq!(e, "node: value does not look like a valid node name, got 'pve1/x'");
        let e = check_option("bridge", PveFormat::BridgeId, "vmbr0,tag=99").unwrap_err().to_string();
        assert_eq!(e, "bridge: invalid bridge ID 'vmbr0,tag=99'");
        let huge = "x,".repeat(50_000);
        let e = check_option("storage", PveFormat::StorageId, &huge).unwrap_err().to_string();
        assert!(e.len() < 200, "{}", e.len());
        assert!(e.starts_with("storage: storage ID 'x,x,"), "{e}");
    }
}
