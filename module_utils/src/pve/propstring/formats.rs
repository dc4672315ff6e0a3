//! The property-string formats of the VM config keys this crate reads and writes (net, drives,
//! efidisk, tpmstate, unused, agent, memory), transcribed from qemu-server's schema (`pve-apidoc.json`).

use super::{Format, KeyAlias, KeyDef, ValueType};
use crate::pve::pveformat::PveFormat;

/// The NIC models of `net[n]`; each is also a keyAlias key.
pub const NET_MODELS: &[&str] = &[
    "e1000",
    "e1000-82540em",
    "e1000-82544gc",
    "e1000-82545em",
    "e1000e",
    "i82551",
    "i82557b",
    "i82559er",
    "ne2k_isa",
    "ne2k_pci",
    "pcnet",
    "rtl8139",
    "virtio",
    "vmxnet3",
];

/// Trunks: VLAN ids or ranges separated by `;` (schema pattern, with ASCII digits).
const TRUNKS_RE: &str = r"^[0-9]+(?:-[0-9]+)?(?:;[0-9]+(?:-[0-9]+)?)*$";

/// `net[n]` (qemu-server Network.pm `$net_fmt`).
pub static NET: Format = Format {
    name: "net",
    default_key: Some("model"),
    keys: &[
        KeyDef::enumeration("model", NET_MODELS),
        KeyDef::new("macaddr", ValueType::Mac),
        KeyDef::new("bridge", ValueType::Named(PveFormat::BridgeId, None)),
        KeyDef::boolean("firewall").with_default("0"),
        KeyDef::boolean("link_down").with_default("0"),
        // PVE 9.2 only (§20.7); known here so configs of newer nodes parse strictly.
        KeyDef::boolean("host-tunnel"),
        KeyDef::int_range("mtu", Some(1), Some(65520)),
        KeyDef::int_range("queues", Some(0), Some(64)),
        KeyDef::new("rate", ValueType::Number { min: Some(0) }),
        KeyDef::int_range("tag", Some(1), Some(4094)),
        KeyDef::pattern("trunks", TRUNKS_RE),
    ],
    aliases: &[],
    key_alias: Some(KeyAlias { keys: NET_MODELS, key: "model", value_key: "macaddr" }),
};

const DRIVE_FORMATS: &[&str] = &["raw", "qcow", "qed", "qcow2", "vmdk", "cloop"];

/// A drive's `file`: `pve-volume-id-or-qm-path`.
const FILE: ValueType = ValueType::Named(PveFormat::VolumeIdOrQmPath, None);
/// `import-from`: `pve-volume-id-or-absolute-path`.
const IMPORT_FROM: ValueType = ValueType::Named(PveFormat::VolumeIdOrAbsolutePath, None);

/// The aliases every volume-backed format shares.
const VOLUME_ALIAS: &[(&str, &str)] = &[("volume", "file")];

/// Disk drives of every bus (`ide[n]`, `sata[n]`, `scsi[n]`, `virtio[n]`): the union of the
/// buses' keys, since which keys a bus accepts is PVE's check to make, not ours.
pub static DRIVE: Format = Format {
    name: "drive",
    default_key: Some("file"),
    keys: &[
        KeyDef::new("file", FILE),
        KeyDef::enumeration("media", &["cdrom", "disk"]).with_default("disk"),
        KeyDef::enumeration("cache", &["none", "writethrough", "writeback", "unsafe", "directsync"]),
        KeyDef::enumeration("format", DRIVE_FORMATS),
        KeyDef::new("size", ValueType::Size),
        KeyDef::enumeration("aio", &["native", "threads", "io_uring"]),
        KeyDef::enumeration("discard", &["ignore", "on"]),
        // The schema gives no default, but PVE's backup code skips a drive only on an explicit
        // `backup=0`, so absence means 1.
        KeyDef::boolean("backup").with_default("1"),
        KeyDef::boolean("snapshot"),
        KeyDef::boolean("detect_zeroes"),
        KeyDef::boolean("replicate").with_default("1"),
        KeyDef::boolean("shared").with_default("0"),
        KeyDef::enumeration("rerror", &["ignore", "report", "stop"]),
        KeyDef::enumeration("werror", &["enospc", "ignore", "report", "stop"]),
        // Drive.pm: `urlencoded`, maxLength 20 * 3 ("since it's %xx url encoded").
        KeyDef::new("serial", ValueType::Named(PveFormat::Urlencoded, Some(60))),
        KeyDef::new("import-from", IMPORT_FROM),
        KeyDef::int("bps"),
        KeyDef::int("bps_rd"),
        KeyDef::int("bps_wr"),
        KeyDef::int("iops"),
        KeyDef::int("iops_rd"),
        KeyDef::int("iops_wr"),
        KeyDef::int("iops_max"),
        KeyDef::int("iops_rd_max"),
        KeyDef::int("iops_wr_max"),
        KeyDef::number("mbps"),
        KeyDef::number("mbps_rd"),
        KeyDef::number("mbps_wr"),
        KeyDef::number("mbps_max"),
        KeyDef::number("mbps_rd_max"),
        KeyDef::number("mbps_wr_max"),
        KeyDef::int_range("bps_max_length", Some(1), None),
        KeyDef::int_range("bps_rd_max_length", Some(1), None),
        KeyDef::int_range("bps_wr_max_length", Some(1), None),
        KeyDef::int_range("iops_max_length", Some(1), None),
        KeyDef::int_range("iops_rd_max_length", Some(1), None),
        KeyDef::int_range("iops_wr_max_length", Some(1), None),
        // Absent means off for these booleans (QEMU's and PVE's behaviour without the flag).
        KeyDef::boolean("iothread").with_default("0"),
        KeyDef::boolean("ro").with_default("0"),
        KeyDef::boolean("ssd").with_default("0"),
        KeyDef::pattern("wwn", r"^0x[0-9a-fA-F]{16}$"),
        KeyDef::int_range("queues", Some(2), None),
        KeyDef::pattern("product", r"^[A-Za-z0-9\-_\s]{0,16}$"),
        KeyDef::pattern("vendor", r"^[A-Za-z0-9\-_\s]{0,8}$"),
        KeyDef::boolean("scsiblock").with_default("0"),
        // ide only: urlencoded model name (unrelated to the net `model`), maxLength 40 * 3.
        KeyDef::new("model", ValueType::Named(PveFormat::Urlencoded, Some(120))),
    ],
    aliases: &[
        ("volume", "file"),
        ("bps_rd_length", "bps_rd_max_length"),
        ("bps_wr_length", "bps_wr_max_length"),
        ("iops_rd_length", "iops_rd_max_length"),
        ("iops_wr_length", "iops_wr_max_length"),
    ],
    key_alias: None,
};

/// `efidisk0`.
pub static EFIDISK: Format = Format {
    name: "efidisk",
    default_key: Some("file"),
    keys: &[
        KeyDef::new("file", FILE),
        KeyDef::enumeration("efitype", &["2m", "4m"]).with_default("2m"),
        KeyDef::enumeration("format", DRIVE_FORMATS),
        KeyDef::new("import-from", IMPORT_FROM),
        // 2023w and 2023k are PVE 9.2 additions (§20.7).
        KeyDef::enumeration("ms-cert", &["2011", "2023", "2023w", "2023k"]).with_default("2011"),
        KeyDef::boolean("pre-enrolled-keys").with_default("0"),
        KeyDef::new("size", ValueType::Size),
    ],
    aliases: VOLUME_ALIAS,
    key_alias: None,
};

/// `tpmstate0`.
pub static TPMSTATE: Format = Format {
    name: "tpmstate",
    default_key: Some("file"),
    keys: &[
        KeyDef::new("file", FILE),
        KeyDef::enumeration("format", &["raw", "qcow2", "vmdk"]),
        KeyDef::new("import-from", IMPORT_FROM),
        KeyDef::new("size", ValueType::Size),
        KeyDef::enumeration("version", &["v1.2", "v2.0"]).with_default("v1.2"),
    ],
    aliases: VOLUME_ALIAS,
    key_alias: None,
};

/// `unused[n]`.
pub static UNUSED: Format = Format {
    name: "unused",
    default_key: Some("file"),
    keys: &[KeyDef::new("file", FILE)],
    aliases: VOLUME_ALIAS,
    key_alias: None,
};

/// `agent` (9.1 keys; the 9.2 name `freeze-fs` and its alias `guest-fsfreeze` map to the 9.1
/// key so that a string printed here is accepted by both releases).
pub static AGENT: Format = Format {
    name: "agent",
    default_key: Some("enabled"),
    keys: &[
        KeyDef::boolean("enabled").with_default("0"),
        KeyDef::boolean("freeze-fs-on-backup").with_default("1"),
        KeyDef::boolean("fstrim_cloned_disks").with_default("0"),
        KeyDef::enumeration("type", &["virtio", "isa"]).with_default("virtio"),
    ],
    aliases: &[("freeze-fs", "freeze-fs-on-backup"), ("guest-fsfreeze", "freeze-fs-on-backup")],
    key_alias: None,
};

/// `memory` (PVE 9: `[current=]<MiB>`).
pub static MEMORY: Format = Format {
    name: "memory",
    default_key: Some("current"),
    keys: &[KeyDef::int_range("current", Some(16), None).with_default("512")],
    aliases: &[],
    key_alias: None,
};
