//! PVE's named value formats (node names, storage and bridge ids, volume ids, urlencoded text): the one place that knows what each may hold.
//!
//! Every value a task puts into a request path or a property string is checked here before
//! any call, with PVE's own rule and wording, so that no value can name another object, add a
//! path segment or add a key: `,` `=` `/` `?` `#` `%`, spaces and newlines are outside every
//! format below but `urlencoded` (which allows `%` and nothing that splits a property string).
//! Sources: pve-common `src/PVE/JSONSchema.pm` (`pve_verify_node_name`, `parse_id`,
//! `parse_bridge_id`, `pve_verify_vmid`, `pve_verify_urlencoded`), pve-storage
//! `src/PVE/Storage/Plugin.pm` (`parse_volume_id`), qemu-server `src/PVE/QemuServer.pm`
//! (`verify_volume_id_or_qm_path`, `verify_volume_id_or_absolute_path`). `verify_named` answers
//! for a format by the name the API schema gives it, for `pve::schema`.

use serde_json::Value;

use crate::error::{clip, Error, Result};

pub mod qemu;

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

/// PVE's named formats by the name the API schema gives them (`format => 'pve-node'`), for
/// `pve::schema`: `None` for a name not known here (its values are not checked). A `-list`
/// name checks each item of the value split as PVE's `split_list` does, an `-opt` name only a
/// non-empty value (JSONSchema.pm `check_format`). The validators and their words are pve-common
/// JSONSchema.pm's (`pve_verify_mac_addr`, `pve_verify_configid`, `pve_verify_dns_name`,
/// `pve_verify_address`, `pve_verify_tag`, `pve_verify_disk_size`, `pve_verify_startup_order`,
/// `pve_verify_ipv4`/`ipv6`/`cidr`, `pve_verify_ipv4_config`/`ipv6_config`); those qemu-server
/// and pve-access-control define in code are `qemu`'s (docs/pve-semantics.md §34).
pub fn verify_named(name: &str, value: &str) -> Option<std::result::Result<(), String>> {
    // Whether a format is known does not depend on the value: ask with an empty one.
    if let Some(base) = name.strip_suffix("-list").filter(|b| verify_one(b, "").is_some()) {
        return Some(split_list(value).try_for_each(|item| verify_one(base, item).unwrap_or(Ok(()))));
    }
    if let Some(base) = name.strip_suffix("-opt").filter(|b| verify_one(b, "").is_some()) {
        return if value.is_empty() { Some(Ok(())) } else { verify_one(base, value) };
    }
    verify_one(name, value)
}

fn verify_one(name: &str, value: &str) -> Option<std::result::Result<(), String>> {
    let known = |format: PveFormat| Some(verify(format, value));
    let check = |ok: bool, msg: String| Some(if ok { Ok(()) } else { Err(msg) });
    let shown = clip(value, QUOTE_MAX);
    match name {
        "pve-node" => known(PveFormat::Node),
        "pve-storage-id" => known(PveFormat::StorageId),
        "pve-bridge-id" => known(PveFormat::BridgeId),
        "pve-vmid" => known(PveFormat::Vmid),
        "pve-volume-id" => known(PveFormat::VolumeId),
        "pve-volume-id-or-qm-path" => known(PveFormat::VolumeIdOrQmPath),
        "pve-volume-id-or-absolute-path" => known(PveFormat::VolumeIdOrAbsolutePath),
        "urlencoded" => known(PveFormat::Urlencoded),
        "string" => Some(Ok(())),
        "pve-configid" => check(configid_ok(value), format!("invalid configuration ID '{shown}'")),
        "mac-addr" => check(mac_ok(value), "value does not look like a valid unicast MAC address".into()),
        "dns-name" => check(dns_name_ok(value), "value does not look like a valid DNS name".into()),
        "address" => {
            check(dns_name_ok(value) || ip_ok(value), format!("value does not look like a valid address: {shown}"))
        }
        "ip" => check(ip_ok(value), "value does not look like a valid IP address".into()),
        "ipv4" => {
            check(value.parse::<std::net::Ipv4Addr>().is_ok(), "value does not look like a valid IPv4 address".into())
        }
        "ipv6" => {
            check(value.parse::<std::net::Ipv6Addr>().is_ok(), "value does not look like a valid IPv6 address".into())
        }
        "CIDR" => check(cidr_ok(value, 4) || cidr_ok(value, 6), "value does not look like a valid CIDR network".into()),
        "pve-ipv4-config" => check(
            matches!(value, "dhcp" | "manual") || cidr_ok(value, 4),
            "value does not look like a valid ipv4 network configuration".into(),
        ),
        "pve-ipv6-config" => check(
            matches!(value, "auto" | "dhcp" | "manual") || cidr_ok(value, 6),
            "value does not look like a valid ipv6 network configuration".into(),
        ),
        "pve-tag" => check(tag_ok(value), "invalid characters in tag".into()),
        "disk-size" => check(disk_size_ok(value), format!("value does not look like a valid disk size: {shown}")),
        "pve-startup-order" => check(startup_order_ok(value), "unable to parse startup options".into()),
        "pve-qm-bootdev" => Some(qemu::bootdev(value)),
        "pve-qm-bootdisk" => Some(qemu::bootdisk(value)),
        "pve-hotplug-features" => Some(qemu::hotplug(value)),
        "pve-cpuset" => Some(qemu::cpuset(value)),
        "pve-phys-bits" => Some(qemu::phys_bits(value)),
        "pve-poolid" => Some(qemu::poolid(value)),
        "pve-realm" => Some(qemu::realm(value)),
        "storage-pair" => Some(qemu::storage_pair(value)),
        _ => None,
    }
}

/// PVE::Tools `split_list`: items separated by commas, semicolons, NULs and white space.
pub fn split_list(value: &str) -> impl Iterator<Item = &str> {
    value.split(|c: char| matches!(c, ',' | ';' | '\0') || c.is_whitespace()).filter(|s| !s.is_empty())
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

/// `$CONFIGID_RE`: `^[a-z][a-z0-9_-]+$`, case-insensitive.
fn configid_ok(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
}

/// Unicast only: the I/G bit (lowest bit of the first octet) is not set.
fn mac_ok(v: &str) -> bool {
    let parts: Vec<&str> = v.split(':').collect();
    parts.len() == 6
        && parts.iter().all(|p| p.len() == 2 && p.bytes().all(|c| c.is_ascii_hexdigit()))
        && u8::from_str_radix(parts[0], 16).is_ok_and(|octet| octet & 1 == 0)
}

/// Labels of `[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?` joined by dots.
fn dns_name_ok(v: &str) -> bool {
    v.split('.').all(|label| verify(PveFormat::Node, label).is_ok())
}

fn ip_ok(v: &str) -> bool {
    v.parse::<std::net::IpAddr>().is_ok()
}

/// An address of that family and a prefix length above 7 (and at most 32 or 128).
fn cidr_ok(v: &str, family: u8) -> bool {
    let Some((addr, bits)) = v.split_once('/') else { return false };
    let Ok(bits) = bits.parse::<u32>() else { return false };
    let (addr_ok, max) = if family == 4 {
        (addr.parse::<std::net::Ipv4Addr>().is_ok(), 32)
    } else {
        (addr.parse::<std::net::Ipv6Addr>().is_ok(), 128)
    };
    digits(v.rsplit('/').next().unwrap_or("")) && addr_ok && bits > 7 && bits <= max
}

/// `$PVE_TAG_RE`: `^[a-z0-9_][a-z0-9_\-\+\.]*$`, case-insensitive.
fn tag_ok(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+' | b'.'))
}

/// `parse_size`: `^(\d+(\.\d+)?)([KMGT])?$`.
fn disk_size_ok(v: &str) -> bool {
    let number = v.strip_suffix(['K', 'M', 'G', 'T']).unwrap_or(v);
    match number.split_once('.') {
        Some((whole, fraction)) => digits(whole) && digits(fraction),
        None => digits(number),
    }
}

/// `pve_parse_startup_order`: comma-separated `[order=]N`, `up=N`, `down=N`; a value Perl
/// takes as false (empty, `0`) is refused.
fn startup_order_ok(v: &str) -> bool {
    !v.is_empty()
        && v != "0"
        && v.split(',').filter(|p| !p.trim().is_empty()).all(|p| {
            let n = p.strip_prefix("order=").or_else(|| p.strip_prefix("up=")).or_else(|| p.strip_prefix("down="));
            digits(n.unwrap_or(p))
        })
}

/// Check a task's option against `format` before any call: an `Args` error naming the option
/// and quoting (at most `QUOTE_MAX` characters of) the value.
pub fn check_option(option: &str, format: PveFormat, value: &str) -> Result<()> {
    verify(format, value).map_err(|msg| Error::args(format!("{option}: {msg}")))
}

/// PVE sends integers as numbers or numeric strings (docs/pve-semantics.md §3): accept both.
pub fn lenient_u64(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => {
            n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0).map(|f| f as u64))
        }
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// PVE booleans arrive as `0`/`1`, `"0"`/`"1"` or JSON booleans.
pub fn lenient_bool(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() == Some(1.0),
        Some(Value::String(s)) => matches!(s.as_str(), "1" | "true" | "on" | "yes"),
        _ => false,
    }
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
    fn named_formats_accept_what_pve_accepts() {
        let table: &[(&str, &str, Option<bool>)] = &[
            ("mac-addr", "BC:24:11:00:00:01", Some(true)),
            ("mac-addr", "bc:24:11:00:00:01", Some(true)),
            ("mac-addr", "01:24:11:00:00:01", Some(false)),
            ("mac-addr", "BC:24:11:00:00", Some(false)),
            ("pve-configid", "net0", Some(true)),
            ("pve-configid", "n", Some(false)),
            ("pve-configid-list", "net0,scsi1;ide2 virtio3", Some(true)),
            ("pve-configid-list", "", Some(true)),
            ("pve-configid-list", "net0,0net", Some(false)),
            ("dns-name", "web01.example.com", Some(true)),
            ("dns-name", "web_01", Some(false)),
            ("address-list", "1.1.1.1 2001:db8::1 dns.example", Some(true)),
            ("address-list", "1.1.1.1,bad_name", Some(false)),
            ("pve-ipv4-config", "dhcp", Some(true)),
            ("pve-ipv4-config", "10.0.0.5/24", Some(true)),
            ("pve-ipv4-config", "10.0.0.5/7", Some(false)),
            ("pve-ipv4-config", "10.0.0.5", Some(false)),
            ("pve-ipv6-config", "auto", Some(true)),
            ("pve-ipv6-config", "2001:db8::5/64", Some(true)),
            ("ipv4", "10.0.0.256", Some(false)),
            ("CIDR", "2001:db8::/32", Some(true)),
            ("pve-tag-list", "web;db;a+b.c", Some(true)),
            ("pve-tag-list", "web;-db", Some(false)),
            ("disk-size", "10G", Some(true)),
            ("disk-size", "1.5T", Some(true)),
            ("disk-size", "10GB", Some(false)),
            ("pve-startup-order", "order=1,up=30,down=60", Some(true)),
            ("pve-startup-order", "2", Some(true)),
            ("pve-startup-order", "0", Some(false)),
            ("pve-startup-order", "up=x", Some(false)),
            ("pve-node", "pve1", Some(true)),
            ("pve-qm-bootdev-list", "scsi0;net0", Some(true)),
            ("pve-qm-bootdev-list", "scsi0;judge0", Some(false)),
            ("no-such-format", "x", None),
            ("no-such-format-list", "x", None),
        ];
        for (name, value, want) in table {
            assert_eq!(verify_named(name, value).map(|r| r.is_ok()), *want, "{name} {value:?}");
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
