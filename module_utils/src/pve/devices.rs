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
                "macaddr" => set(&mut nic.mac, Some(v.to_ascii_uppercase())),
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
        if let Some(volume) = &disk.volume {
            disk.storage = volume_storage(volume).map(str::to_string);
            if disk.format.is_none() {
                disk.format = format_from_name(volume).map(str::to_string);
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
/// and bare sizes.
pub fn volume_storage(volume: &str) -> Option<&str> {
    if volume.starts_with('/') {
        return None;
    }
    let (storage, _) = volume.split_once(':')?;
    (!storage.is_empty()).then_some(storage)
}

/// The image format implied by a volume name's extension.
fn format_from_name(volume: &str) -> Option<&'static str> {
    let ext = volume.rsplit_once('.')?.1;
    ["qcow2", "raw", "vmdk"].into_iter().find(|f| *f == ext)
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

/// A config as `key: value` lines (what `--diff` shows) in natural key order (`net2` before `net10`), `digest` left out.
pub fn config_text(config: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = config.keys().filter(|k| k.as_str() != "digest").collect();
    keys.sort_by(|a, b| natural_cmp(a, b));
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn config_text_is_sorted_naturally_without_digest() {
        let m: serde_json::Map<String, Value> = serde_json::from_value(serde_json::json!({
            "net10": "virtio=BC:24:11:00:00:0A", "net2": "e1000", "cores": 2, "digest": "abc", "description": "a\nb"
        }))
        .unwrap();
        assert_eq!(config_text(&m), "cores: 2\ndescription: a\\nb\nnet2: e1000\nnet10: virtio=BC:24:11:00:00:0A\n");
    }

    use serde_json::json;

    #[test]
    fn key_classification() {
        let nics = ["net0", "net9", "net10", "net31"];
        let not_nics = ["net", "net32", "net-1", "net01", "netx", "NET0", "net0a", "ipconfig0", ""];
        for k in nics {
            assert!(is_nic_key(k), "{k}");
            assert!(std::ptr::eq(format_for_key(k).unwrap(), &NET));
        }
        for k in not_nics {
            assert!(!is_nic_key(k), "{k}");
        }
        let disks: &[(&str, &str)] = &[
            ("ide0", "ide"),
            ("ide3", "ide"),
            ("sata5", "sata"),
            ("scsi0", "scsi"),
            ("scsi30", "scsi"),
            ("virtio15", "virtio"),
            ("efidisk0", "efidisk"),
            ("tpmstate0", "tpmstate"),
            ("unused0", "unused"),
            ("unused255", "unused"),
        ];
        for (k, bus) in disks {
            assert_eq!(disk_bus(k), Some(*bus), "{k}");
            assert!(is_disk_key(k));
        }
        for k in [
            "ide4",
            "sata6",
            "scsi31",
            "virtio16",
            "efidisk1",
            "tpmstate1",
            "unused256",
            "scsi",
            "scsi00",
            "net0",
            "scsihw",
            "99999999999999",
        ] {
            assert!(!is_disk_key(k), "{k}");
        }
        assert!(std::ptr::eq(format_for_key("scsi0").unwrap(), &DRIVE));
        assert!(std::ptr::eq(format_for_key("efidisk0").unwrap(), &EFIDISK));
        assert!(std::ptr::eq(format_for_key("tpmstate0").unwrap(), &TPMSTATE));
        assert!(std::ptr::eq(format_for_key("unused7").unwrap(), &UNUSED));
        assert!(std::ptr::eq(format_for_key("agent").unwrap(), &AGENT));
        assert!(format_for_key("name").is_none());
    }

    #[test]
    fn natural_order() {
        let mut keys = vec!["net10", "net2", "net1", "scsi10", "ide2", "scsi9", "efidisk0"];
        keys.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(keys, ["efidisk0", "ide2", "net1", "net2", "net10", "scsi9", "scsi10"]);
    }

    #[test]
    fn nic_from_canonical_and_long_forms() {
        let n = Nic::parse("net0", "virtio=BC:24:11:5A:8E:BE,bridge=vmbr0,firewall=1,tag=10");
        assert_eq!(
            n.to_json(),
            json!({
                "interface": "net0", "model": "virtio", "mac": "BC:24:11:5A:8E:BE",
                "bridge": "vmbr0", "tag": 10, "trunks": null, "firewall": true,
                "link_down": false, "mtu": null, "queues": null, "rate": null, "other": {}
            })
        );
        let keys: Vec<String> = n.to_json().as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "interface",
                "model",
                "mac",
                "bridge",
                "tag",
                "trunks",
                "firewall",
                "link_down",
                "mtu",
                "queues",
                "rate",
                "other"
            ]
        );
        let long = Nic::parse(
            "net1",
            "model=e1000,macaddr=bc:24:11:00:00:01,link_down=yes,rate=10.0,trunks=10;20-30,mtu=1500,queues=4,host-tunnel=1",
        );
        assert_eq!(long.model.as_deref(), Some("e1000"));
        assert_eq!(long.mac.as_deref(), Some("BC:24:11:00:00:01"));
        assert!(long.link_down);
        assert!(!long.firewall);
        assert_eq!(long.rate, Some(10.0));
        assert_eq!(long.trunks.as_deref(), Some("10;20-30"));
        assert_eq!((long.mtu, long.queues), (Some(1500), Some(4)));
        assert_eq!(long.other.get("host-tunnel").map(String::as_str), Some("1"));
        // A value that does not fit its field is kept in `other`, not lost.
        let odd = Nic::parse("net2", "virtio,tag=x,newkey=1");
        assert_eq!(odd.tag, None);
        assert_eq!(odd.other.get("tag").map(String::as_str), Some("x"));
        assert_eq!(odd.other.get("newkey").map(String::as_str), Some("1"));
        let broken = Nic::parse("net3", "virtio,virtio");
        assert_eq!(broken.model, None);
        assert_eq!(broken.other.get("unparsed").map(String::as_str), Some("virtio,virtio"));
        assert!(Nic::parse_strict("net0", "virtio,tag=x").is_err());
        assert!(Nic::parse_strict("net0", "virtio,tag=5").is_ok());
    }

    #[test]
    fn disks_from_every_form() {
        struct Case {
            key: &'static str,
            value: &'static str,
            storage: Option<&'static str>,
            size: Option<&'static str>,
            bytes: Option<u64>,
            format: Option<&'static str>,
            media: &'static str,
            other: &'static [(&'static str, &'static str)],
        }
        let cases = [
            Case {
                key: "scsi0",
                value: "local-lvm:vm-100-disk-0,discard=on,iothread=1,size=32G",
                storage: Some("local-lvm"),
                size: Some("32G"),
                bytes: Some(32 << 30),
                format: None,
                media: "disk",
                other: &[("discard", "on"), ("iothread", "1")],
            },
            Case {
                key: "ide2",
                value: "local:iso/debian.iso,media=cdrom,size=650M",
                storage: Some("local"),
                size: Some("650M"),
                bytes: Some(650 << 20),
                format: None,
                media: "cdrom",
                other: &[],
            },
            Case {
                key: "ide2",
                value: "none,media=cdrom",
                storage: None,
                size: None,
                bytes: None,
                format: None,
                media: "cdrom",
                other: &[],
            },
            Case {
                key: "sata0",
                value: "cdrom,media=cdrom",
                storage: None,
                size: None,
                bytes: None,
                format: None,
                media: "cdrom",
                other: &[],
            },
            Case {
                key: "virtio0",
                value: "vmdata:100/vm-100-disk-0.qcow2,size=10G",
                storage: Some("vmdata"),
                size: Some("10G"),
                bytes: Some(10 << 30),
                format: Some("qcow2"),
                media: "disk",
                other: &[],
            },
            Case {
                key: "virtio1",
                value: "vmdata:100/vm-100-disk-1.raw,format=raw",
                storage: Some("vmdata"),
                size: None,
                bytes: None,
                format: Some("raw"),
                media: "disk",
                other: &[],
            },
            Case {
                key: "sata1",
                value: "/dev/disk/by-id/ata-X,backup=0",
                storage: None,
                size: None,
                bytes: None,
                format: None,
                media: "disk",
                other: &[("backup", "0")],
            },
            Case {
                key: "scsi1",
                value: "local-lvm:32",
                storage: Some("local-lvm"),
                size: None,
                bytes: None,
                format: None,
                media: "disk",
                other: &[],
            },
            Case {
                key: "scsi2",
                value: "local-lvm:0,import-from=local:import/debian.qcow2",
                storage: Some("local-lvm"),
                size: None,
                bytes: None,
                format: None,
                media: "disk",
                other: &[("import-from", "local:import/debian.qcow2")],
            },
            Case {
                key: "efidisk0",
                value: "local-lvm:vm-100-disk-0,efitype=4m,pre-enrolled-keys=1,size=4M",
                storage: Some("local-lvm"),
                size: Some("4M"),
                bytes: Some(4 << 20),
                format: None,
                media: "disk",
                other: &[("efitype", "4m"), ("pre-enrolled-keys", "1")],
            },
            Case {
                key: "tpmstate0",
                value: "local-lvm:vm-100-disk-2,size=4M,version=v2.0",
                storage: Some("local-lvm"),
                size: Some("4M"),
                bytes: Some(4 << 20),
                format: None,
                media: "disk",
                other: &[("version", "v2.0")],
            },
            Case {
                key: "unused0",
                value: "vmdata:100/vm-100-disk-3.vmdk",
                storage: Some("vmdata"),
                size: None,
                bytes: None,
                format: Some("vmdk"),
                media: "disk",
                other: &[],
            },
        ];
        for c in cases {
            let d = Disk::parse(c.key, c.value).unwrap();
            let want_volume = c.value.split(',').next().unwrap();
            assert_eq!(d.volume.as_deref(), Some(want_volume), "{}", c.value);
            assert_eq!(d.storage.as_deref(), c.storage, "{}", c.value);
            assert_eq!(d.size.as_deref(), c.size, "{}", c.value);
            assert_eq!(d.size_bytes, c.bytes, "{}", c.value);
            assert_eq!(d.format.as_deref(), c.format, "{}", c.value);
            assert_eq!(d.media, c.media, "{}", c.value);
            let other: Vec<(&str, &str)> = d.other.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            assert_eq!(other, c.other, "{}", c.value);
        }
        let d = Disk::parse("scsi0", "local-lvm:vm-100-disk-0,size=32G").unwrap();
        assert_eq!(
            d.to_json(),
            json!({
                "key": "scsi0", "bus": "scsi", "storage": "local-lvm",
                "volume": "local-lvm:vm-100-disk-0", "size": "32G", "size_bytes": 34359738368u64,
                "format": null, "media": "disk", "other": {}
            })
        );
        assert!(Disk::parse("net0", "virtio").is_none());
    }

    #[test]
    fn new_disk_allocation_form() {
        assert_eq!(parse_new_disk("local-lvm:32"), Some((Some("local-lvm"), "32")));
        assert_eq!(parse_new_disk("local-lvm:0.5"), Some((Some("local-lvm"), "0.5")));
        assert_eq!(parse_new_disk("local-lvm:0"), Some((Some("local-lvm"), "0")));
        assert_eq!(parse_new_disk("32"), Some((None, "32")));
        for no in [
            "local-lvm:vm-100-disk-0",
            "local:iso/x.iso",
            "none",
            "/dev/sdb",
            ":32",
            "a/b:32",
            "local-lvm:32G",
            "local-lvm:.5",
            "local-lvm:5.",
            "",
        ] {
            assert_eq!(parse_new_disk(no), None, "{no}");
        }
    }

    #[test]
    fn config_lists_sorted_and_lenient_about_json_types() {
        let config = json!({
            "name": "web", "cores": 2, "memory": "2048",
            "net10": "e1000=BC:24:11:00:00:0A,bridge=vmbr1",
            "net2": "virtio=BC:24:11:00:00:02,bridge=vmbr0",
            "net0": "virtio=BC:24:11:00:00:00,bridge=vmbr0,firewall=1",
            "scsi10": "local-lvm:vm-100-disk-2,size=1G",
            "scsi2": "local-lvm:vm-100-disk-1,size=2G",
            "ide2": "none,media=cdrom",
            "unused0": "local-lvm:vm-100-disk-9",
            "efidisk0": "local-lvm:vm-100-disk-0,efitype=4m,size=4M",
            "scsihw": "virtio-scsi-single",
            "digest": "abc",
            "virtio0": 5,
            "sata0": null
        });
        let config = config.as_object().unwrap();
        let nics: Vec<String> = parse_config_nics(config).into_iter().map(|n| n.interface).collect();
        assert_eq!(nics, ["net0", "net2", "net10"]);
        let disks: Vec<Disk> = parse_config_disks(config);
        let keys: Vec<&str> = disks.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(keys, ["efidisk0", "ide2", "scsi2", "scsi10", "unused0", "virtio0"]);
        // A number where a string was expected is read as its text.
        assert_eq!(disks[5].volume.as_deref(), Some("5"));
        assert_eq!(config_value_text(&json!(1.5)).as_deref(), Some("1.5"));
        assert_eq!(config_value_text(&json!(true)).as_deref(), Some("1"));
        assert_eq!(config_value_text(&json!(null)), None);
    }
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
mod json_value_tests {
    use super::*;

    #[test]
    fn numeric_keys_become_numbers_others_stay_strings() {
        assert_eq!(config_json_value("cores", "2"), Value::from(2));
        assert_eq!(config_json_value("onboot", "1"), Value::from(1));
        assert_eq!(config_json_value("memory", "2048"), Value::from("2048"));
        assert_eq!(config_json_value("name", "123"), Value::from("123"));
    }
}
