//! Typed views of a VM config (`GET .../config`): which keys are NICs and disks, and their values as `Nic` / `Disk`.
//!
//! Modules read a config as a JSON map of strings and numbers (docs/pve-semantics.md §3); this file turns
//! the property-string keys that matter for NICs and disks into structs with a fixed JSON shape
//! (the documented `nics` / `disks` returns of proxmox_vm_info). Values read back from PVE are
//! parsed leniently (`PropertyString::parse_lenient`) so that a key a newer node added never
//! makes a config unreadable; such keys land in `other`.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::pve::propstring::{
    parse_size, Format, PropertyString, AGENT, DRIVE, EFIDISK, MEMORY, NET, TPMSTATE, UNUSED,
};
use crate::pve::volume::{path_format, Volume, VolumeKind};

/// `(prefix, highest index)` of the indexed disk keys (qemu-server Drive.pm `MAX_*_DISKS`).
const DISK_BUSES: &[(&str, u32)] = &[("ide", 3), ("sata", 5), ("scsi", 30), ("virtio", 15), ("unused", 255)];

/// Splits `net10` into `("net", 10)`. The index must be canonical decimal (no sign, no leading
/// zero), as PVE writes it.
fn split_index(key: &str) -> Option<(&str, u32)> {
    let pos = key.find(|c: char| c.is_ascii_digit())?;
    let (prefix, digits) = key.split_at(pos);
    if prefix.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
        || digits.len() > 5
    {
        return None;
    }
    Some((prefix, digits.parse().ok()?))
}

/// `net0` .. `net31`.
pub fn is_nic_key(key: &str) -> bool {
    matches!(split_index(key), Some(("net", n)) if n <= 31)
}

/// The bus of a disk key: `ide`, `sata`, `scsi`, `virtio`, `efidisk`, `tpmstate` or `unused`.
pub fn disk_bus(key: &str) -> Option<&'static str> {
    match key {
        "efidisk0" => return Some("efidisk"),
        "tpmstate0" => return Some("tpmstate"),
        _ => {}
    }
    let (prefix, n) = split_index(key)?;
    DISK_BUSES.iter().find(|(bus, max)| *bus == prefix && n <= *max).map(|(bus, _)| *bus)
}

/// ide0-3, sata0-5, scsi0-30, virtio0-15, efidisk0, tpmstate0, unused0-255.
pub fn is_disk_key(key: &str) -> bool {
    disk_bus(key).is_some()
}

/// The property-string format of a config key, for the keys this crate knows.
pub fn format_for_key(key: &str) -> Option<&'static Format> {
    if is_nic_key(key) {
        return Some(&NET);
    }
    match (key, disk_bus(key)) {
        (_, Some("efidisk")) => Some(&EFIDISK),
        (_, Some("tpmstate")) => Some(&TPMSTATE),
        (_, Some("unused")) => Some(&UNUSED),
        (_, Some(_)) => Some(&DRIVE),
        ("agent", None) => Some(&AGENT),
        ("memory", None) => Some(&MEMORY),
        _ => None,
    }
}

/// Orders config keys naturally: by prefix, then by index (`net2` before `net10`).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    match (split_index(a), split_index(b)) {
        (Some((pa, na)), Some((pb, nb))) => pa.cmp(pb).then(na.cmp(&nb)),
        _ => a.cmp(b),
    }
}

/// The text of a config value, which may arrive as a JSON string, number or boolean (§3).
pub fn config_value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "1" } else { "0" }.to_string()),
        _ => None,
    }
}

/// A `new cloud-init drive` value, `STORAGE:cloudinit`: its storage. qemu-server `API2/Qemu.pm`
/// `create_disks` (and `$check_storage_access`) take a drive whose `parse_volume_id` volume name
/// is `cloudinit` as one to allocate; a bare `cloudinit` is no volume id, so none.
pub fn parse_new_cloudinit(file: &str) -> Option<&str> {
    Volume::parse(file).filter(|v| v.volname == "cloudinit").map(|v| v.storage)
}

/// Whether a drive value is a cloud-init drive, as QemuServer/Drive.pm `drive_is_cloudinit`
/// reads its file: a new one (`STORAGE:cloudinit`) or a `vm-<vmid>-cloudinit` volume.
pub fn is_cloudinit_drive(key: &str, value: &str) -> bool {
    let file = Disk::parse(key, value).and_then(|d| d.volume).unwrap_or_default();
    parse_new_cloudinit(&file).is_some() || Volume::parse(&file).is_some_and(|v| v.kind == VolumeKind::CloudInit)
}

/// The refusal of a second cloud-init drive, in PVE's words (`None`: none): Qemu.pm
/// `create_disks` refuses a cloud-init drive set at a key while another drive is one in the
/// config (`current`), its pending part, or the drives the same request set before it (QemuConfig.pm
/// `has_cloudinit`, each excluding the key itself); `sets` is the request's values, taken in PVE's
/// order (sorted keys). A drive being deleted by the same request still counts: deletions are
/// only pending then. docs/pve-semantics.md §42.2.
pub fn second_cloudinit<'a>(
    sets: impl IntoIterator<Item = (&'a str, &'a str)>,
    current: &BTreeMap<String, String>,
    pending: &BTreeMap<String, String>,
) -> Option<String> {
    let mut sets: Vec<(&str, &str)> = sets.into_iter().filter(|(k, _)| is_disk_key(k)).collect();
    sets.sort_unstable();
    let mut earlier: Vec<&str> = Vec::new();
    for (key, value) in sets {
        if !is_cloudinit_drive(key, value) {
            continue;
        }
        let attached = |config: &BTreeMap<String, String>| {
            config
                .iter()
                .find(|(k, v)| k.as_str() != key && is_disk_key(k) && is_cloudinit_drive(k, v))
                .map(|(k, _)| k.clone())
        };
        let other = attached(current)
            .or_else(|| attached(pending))
            .or_else(|| earlier.iter().find(|k| **k != key).map(|k| k.to_string()));
        if let Some(other) = other {
            return Some(format!("{key} - cloud-init drive is already attached at '{other}'"));
        }
        earlier.push(key);
    }
    None
}

/// A `new disk` drive value (§8): `STORAGE:N` or bare `N`, N GiB, maybe fractional. Returns the
/// storage (if given) and N as written.
pub fn parse_new_disk(file: &str) -> Option<(Option<&str>, &str)> {
    let (storage, size) = match file.rsplit_once(':') {
        Some((s, n)) => (Some(s), n),
        None => (None, file),
    };
    // Drive.pm NEW_DISK_RE: `^(?:([^/:\s]+):)?(\d+(\.\d+)?)$`.
    if let Some(s) = storage {
        if s.is_empty() || s.contains(['/', ':']) || s.chars().any(char::is_whitespace) {
            return None;
        }
    }
    let (int, frac) = match size.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (size, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) {
        return None;
    }
    Some((storage, size))
}

/// A lenient parse of a value PVE returned, or an empty one plus the raw text when even that
/// failed (a view must show what is there rather than fail).
fn parse_for_view(format: &'static Format, value: &str) -> (PropertyString, Option<String>) {
    match PropertyString::parse_lenient(format, value) {
        Ok(ps) => (ps, None),
        Err(_) => (PropertyString::new(format), Some(value.to_string())),
    }
}

/// One network device of a VM (`netN`).
#[derive(Debug, Clone, PartialEq)]
pub struct Nic {
    /// The config key, e.g. `net0`.
    pub interface: String,
    pub model: Option<String>,
    /// Upper case.
    pub mac: Option<String>,
    pub bridge: Option<String>,
    pub tag: Option<u16>,
    pub trunks: Option<String>,
    pub firewall: bool,
    pub link_down: bool,
    pub mtu: Option<u32>,
    pub queues: Option<u32>,
    /// MB/s; PVE keeps the text as sent, this is its numeric value.
    pub rate: Option<f64>,
    /// Every other option, and any option whose value did not parse, as PVE wrote it. A value
    /// that is not a property string at all is kept whole under `unparsed`.
    pub other: BTreeMap<String, String>,
}

impl Nic {
    /// Reads a `netN` value as PVE returned it. Never fails: what does not fit a field stays in
    /// `other` (see `Nic::parse_strict` to refuse a broken value instead).
    pub fn parse(key: &str, value: &str) -> Nic {
        let (ps, unparsed) = parse_for_view(&NET, value);
        let mut nic = Nic {
            interface: key.to_string(),
            model: None,
            mac: None,
            bridge: None,
            tag: None,
            trunks: None,
            firewall: false,
            link_down: false,
            mtu: None,
            queues: None,
            rate: None,
            other: BTreeMap::new(),
        };
        if let Some(raw) = unparsed {
            nic.other.insert("unparsed".into(), raw);
        }
        for (k, v) in ps.iter() {
            let taken = match k {
                "model" => set(&mut nic.model, Some(v.to_string())),
                // A MAC in PVE's upper case; anything else as written (a check run's marker
                // for the MAC PVE draws at apply must reach the user unchanged).
                "macaddr" if v.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') => {
                    set(&mut nic.mac, Some(v.to_ascii_uppercase()))
                }
                "macaddr" => set(&mut nic.mac, Some(v.to_string())),
                "bridge" => set(&mut nic.bridge, Some(v.to_string())),
                "trunks" => set(&mut nic.trunks, Some(v.to_string())),
                "tag" => set(&mut nic.tag, v.parse().ok()),
                "mtu" => set(&mut nic.mtu, v.parse().ok()),
                "queues" => set(&mut nic.queues, v.parse().ok()),
                "rate" => set(&mut nic.rate, v.parse::<f64>().ok().filter(|r| r.is_finite())),
                "firewall" => set_bool(&mut nic.firewall, v),
                "link_down" => set_bool(&mut nic.link_down, v),
                _ => false,
            };
            if !taken {
                nic.other.insert(k.to_string(), v.to_string());
            }
        }
        nic
    }

    /// Reads a `netN` value, failing (with PVE's wording) on anything PVE would refuse.
    pub fn parse_strict(key: &str, value: &str) -> Result<Nic> {
        PropertyString::parse(&NET, value)?;
        Ok(Nic::parse(key, value))
    }

    /// The documented `nics` element of proxmox_vm_info; absent values are `null`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("interface".into(), Value::from(self.interface.clone()));
        m.insert("model".into(), opt(&self.model));
        m.insert("mac".into(), opt(&self.mac));
        m.insert("bridge".into(), opt(&self.bridge));
        m.insert("tag".into(), self.tag.map_or(Value::Null, Value::from));
        m.insert("trunks".into(), opt(&self.trunks));
        m.insert("firewall".into(), Value::from(self.firewall));
        m.insert("link_down".into(), Value::from(self.link_down));
        m.insert("mtu".into(), self.mtu.map_or(Value::Null, Value::from));
        m.insert("queues".into(), self.queues.map_or(Value::Null, Value::from));
        m.insert("rate".into(), self.rate.map_or(Value::Null, Value::from));
        m.insert("other".into(), other_json(&self.other));
        Value::Object(m)
    }
}

/// One disk of a VM (a drive, `efidisk0`, `tpmstate0` or `unusedN`).
#[derive(Debug, Clone, PartialEq)]
pub struct Disk {
    /// The config key, e.g. `scsi0`.
    pub key: String,
    /// `ide`, `sata`, `scsi`, `virtio`, `efidisk`, `tpmstate` or `unused`.
    pub bus: String,
    /// The storage of a `storage:volname` (or `storage:N` allocation) value; `None` for `none`,
    /// `cdrom` and absolute paths.
    pub storage: Option<String>,
    /// The whole `file` value (`vmdata:vm-100-disk-0.qcow2`, `none`, `/dev/sdb`).
    pub volume: Option<String>,
    /// `size=` as PVE wrote it.
    pub size: Option<String>,
    pub size_bytes: Option<u64>,
    /// `format=` if given, else the volume name's extension (`qcow2`, `raw`, `vmdk`).
    pub format: Option<String>,
    /// `disk` (the default) or `cdrom`.
    pub media: String,
    /// Every other option as PVE wrote it; a value that is not a property string at all is
    /// kept whole under `unparsed`.
    pub other: BTreeMap<String, String>,
}

impl Disk {
    /// Reads a disk value; `None` when `key` is not a disk key.
    pub fn parse(key: &str, value: &str) -> Option<Disk> {
        let bus = disk_bus(key)?;
        let format = format_for_key(key)?;
        let (ps, unparsed) = parse_for_view(format, value);
        let mut disk = Disk {
            key: key.to_string(),
            bus: bus.to_string(),
            storage: None,
            volume: None,
            size: None,
            size_bytes: None,
            format: None,
            media: "disk".to_string(),
            other: BTreeMap::new(),
        };
        if let Some(raw) = unparsed {
            disk.other.insert("unparsed".into(), raw);
        }
        for (k, v) in ps.iter() {
            match k {
                "file" => disk.volume = Some(v.to_string()),
                "size" => {
                    disk.size = Some(v.to_string());
                    disk.size_bytes = parse_size(v).ok();
                }
                "format" => disk.format = Some(v.to_string()),
                "media" => disk.media = v.to_string(),
                _ => {
                    disk.other.insert(k.to_string(), v.to_string());
                }
            }
        }
        if let Some(file) = disk.volume.as_deref() {
            let volume = Volume::parse(file);
            disk.storage = volume.as_ref().map(|v| v.storage.to_string());
            if disk.format.is_none() {
                disk.format = volume.and_then(|v| v.name_format).or_else(|| path_format(file)).map(str::to_string);
            }
        }
        Some(disk)
    }

    /// The documented `disks` element of proxmox_vm_info; absent values are `null`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("key".into(), Value::from(self.key.clone()));
        m.insert("bus".into(), Value::from(self.bus.clone()));
        m.insert("storage".into(), opt(&self.storage));
        m.insert("volume".into(), opt(&self.volume));
        m.insert("size".into(), opt(&self.size));
        m.insert("size_bytes".into(), self.size_bytes.map_or(Value::Null, Value::from));
        m.insert("format".into(), opt(&self.format));
        m.insert("media".into(), Value::from(self.media.clone()));
        m.insert("other".into(), other_json(&self.other));
        Value::Object(m)
    }
}

/// The storage of a volume id (`storage:volname`); `None` for `none`, `cdrom`, absolute paths
/// and bare sizes (`pve::volume`).
pub fn volume_storage(volume: &str) -> Option<&str> {
    Volume::parse(volume).map(|v| v.storage)
}

/// Stores `value` in `slot` and reports whether it parsed (a value that did not stays in
/// `other`, so nothing PVE wrote is lost).
fn set<T>(slot: &mut Option<T>, value: Option<T>) -> bool {
    let ok = value.is_some();
    if ok {
        *slot = value;
    }
    ok
}

fn set_bool(slot: &mut bool, value: &str) -> bool {
    match crate::pve::propstring::parse_boolean(value) {
        Some(b) => {
            *slot = b;
            true
        }
        None => false,
    }
}

fn opt(value: &Option<String>) -> Value {
    value.clone().map_or(Value::Null, Value::from)
}

fn other_json(other: &BTreeMap<String, String>) -> Value {
    Value::Object(other.iter().map(|(k, v)| (k.clone(), Value::from(v.clone()))).collect())
}

/// The config keys matching `pred`, with their text, in natural order.
fn sorted_entries(config: &Map<String, Value>, pred: fn(&str) -> bool) -> Vec<(&str, String)> {
    let mut entries: Vec<(&str, String)> =
        config.iter().filter(|(k, _)| pred(k)).filter_map(|(k, v)| Some((k.as_str(), config_value_text(v)?))).collect();
    entries.sort_by(|a, b| natural_cmp(a.0, b.0));
    entries
}

/// The NICs of a config, in natural key order.
pub fn parse_config_nics(config: &Map<String, Value>) -> Vec<Nic> {
    sorted_entries(config, is_nic_key).into_iter().map(|(k, v)| Nic::parse(k, &v)).collect()
}

/// The disks of a config (drives, `efidisk0`, `tpmstate0`, `unusedN`), in natural key order.
pub fn parse_config_disks(config: &Map<String, Value>) -> Vec<Disk> {
    sorted_entries(config, is_disk_key).into_iter().filter_map(|(k, v)| Disk::parse(k, &v)).collect()
}

/// Sorts config keys in natural order (`net2` before `net10`); one function, so that the binary
/// holds one copy of the sort for every caller (ARCHITECTURE.md "Release size").
pub fn sort_natural(keys: &mut [&String]) {
    keys.sort_by(|a, b| natural_cmp(a, b));
}

/// A config as `key: value` lines (what `--diff` shows) in natural key order (`net2` before `net10`), `digest` left out.
pub fn config_text(config: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = config.keys().filter(|k| k.as_str() != "digest").collect();
    sort_natural(&mut keys);
    let mut out = String::new();
    for key in keys {
        let value = match &config[key.as_str()] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        // A multi-line value (description) stays on one diff line per key.
        out.push_str(&format!("{key}: {}\n", value.replace('\n', "\\n")));
    }
    out
}

/// Top-level config keys PVE sends as JSON numbers (integers and booleans; docs/pve-semantics.md §3).
const NUMERIC_KEYS: &[&str] = &[
    "acpi",
    "autostart",
    "balloon",
    "cores",
    "cpuunits",
    "freeze",
    "keephugepages",
    "kvm",
    "localtime",
    "migrate_speed",
    "numa",
    "onboot",
    "protection",
    "reboot",
    "shares",
    "sockets",
    "tablet",
    "template",
    "vcpus",
    "ciupgrade",
];

/// A config value as PVE would encode it in `GET .../config`: numbers for integer and boolean
/// keys, strings for everything else. Used where we produce a config PVE has not (a check-mode
/// prediction), so it reads the same as one from PVE.
pub fn config_json_value(key: &str, text: &str) -> Value {
    if NUMERIC_KEYS.contains(&key) {
        if let Ok(n) = text.parse::<i64>() {
            return Value::from(n);
        }
    }
    Value::String(text.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
