//! The validated task: identity, state, the action options, and the VM config the task asks for
//! as PVE config keys with the values that would be sent (`desired`).
//!
//! Everything PVE would reject for a reason we can see without a call (bad dict keys, bad
//! property strings, bad tags, root-only options) is rejected here, before any request.

use std::collections::BTreeMap;

use module_utils::error::clip;
use module_utils::pve::devices::{disk_bus, format_for_key};
use module_utils::pve::propstring::{PropertyString, EFIDISK, NET, TPMSTATE};
use module_utils::pve::pveformat::{check_option, PveFormat};
use module_utils::pve::request::percent_encode;
use module_utils::pve::resources::vmid_option;
use module_utils::{Error, Result};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Present,
    Absent,
    Stopped,
    Started,
    Restarted,
    Current,
    Template,
    Paused,
    Hibernated,
}

impl State {
    fn parse(s: &str) -> State {
        match s {
            "absent" => State::Absent,
            "stopped" => State::Stopped,
            "started" => State::Started,
            "restarted" => State::Restarted,
            "current" => State::Current,
            "template" => State::Template,
            "paused" => State::Paused,
            "hibernated" => State::Hibernated,
            _ => State::Present,
        }
    }
}

/// The clone options.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CloneOpts {
    /// The source's name (any value when `vmid` names the source).
    pub source: String,
    pub newid: Option<u64>,
    pub full: bool,
    pub format: Option<String>,
    pub storage: Option<String>,
    pub target: Option<String>,
    pub snapname: Option<String>,
}

/// The validated options of one task.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub vmid: Option<u64>,
    pub name: Option<String>,
    pub node: Option<String>,
    pub state: State,
    /// PVE config key → value as sent on create/update (sshkeys URL-encoded).
    pub desired: BTreeMap<String, String>,
    pub clone: Option<CloneOpts>,
    pub pool: Option<String>,
    pub storage: Option<String>,
    pub archive: Option<String>,
    pub update: bool,
    pub force: bool,
    pub purge: bool,
    pub destroy_unreferenced_disks: bool,
    pub timeout: u64,
    pub delete: Vec<String>,
    pub revert: Vec<String>,
    pub digest: Option<String>,
    pub skiplock: bool,
    pub migrate: bool,
    pub with_local_disks: bool,
}

/// Scalar options → config key.
const BOOL_OPTIONS: &[(&str, &str)] = &[
    ("acpi", "acpi"),
    ("autostart", "autostart"),
    ("ciupgrade", "ciupgrade"),
    ("freeze", "freeze"),
    ("kvm", "kvm"),
    ("localtime", "localtime"),
    ("numa_enabled", "numa"),
    ("onboot", "onboot"),
    ("protection", "protection"),
    ("reboot", "reboot"),
    ("tablet", "tablet"),
    ("tdf", "tdf"),
    ("template", "template"),
];
const INT_OPTIONS: &[&str] = &[
    "balloon",
    "cores",
    "cpulimit",
    "cpuunits",
    "memory",
    "migrate_downtime",
    "migrate_speed",
    "shares",
    "sockets",
    "vcpus",
];
const STR_OPTIONS: &[(&str, &str)] = &[
    ("args", "args"),
    ("bios", "bios"),
    ("boot", "boot"),
    ("bootdisk", "bootdisk"),
    ("cicustom", "cicustom"),
    ("cipassword", "cipassword"),
    ("citype", "citype"),
    ("ciuser", "ciuser"),
    ("cpu", "cpu"),
    ("description", "description"),
    ("hookscript", "hookscript"),
    ("hotplug", "hotplug"),
    ("hugepages", "hugepages"),
    ("keyboard", "keyboard"),
    ("lock", "lock"),
    ("machine", "machine"),
    ("name", "name"),
    ("ostype", "ostype"),
    ("rng0", "rng0"),
    ("scsihw", "scsihw"),
    ("smbios", "smbios1"),
    ("spice_enhancements", "spice_enhancements"),
    ("startdate", "startdate"),
    ("startup", "startup"),
    ("vga", "vga"),
    ("watchdog", "watchdog"),
];
/// Dict options: `(option, key prefix, highest index)` (qemu-server's MAX_* constants).
const DICT_OPTIONS: &[(&str, &str, u32)] = &[
    ("audio", "audio", 0),
    ("hostpci", "hostpci", 15),
    ("ide", "ide", 3),
    ("ipconfig", "ipconfig", 31),
    ("net", "net", 31),
    ("numa", "numa", 7),
    ("parallel", "parallel", 2),
    ("sata", "sata", 5),
    ("scsi", "scsi", 30),
    ("serial", "serial", 3),
    ("usb", "usb", 13),
    ("virtio", "virtio", 15),
    ("virtiofs", "virtiofs", 9),
];

/// Decode `%XX` (and leave anything malformed as it is).
pub fn url_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "1" } else { "0" }.to_string()),
        _ => None,
    }
}

fn valid_tag(tag: &str) -> bool {
    let mut chars = tag.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphanumeric() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '.'))
}

fn split_list(text: &str) -> Vec<String> {
    text.split([',', ';', ' ']).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

impl Params {
    /// The node a task on an existing VM may be read on alone (`World::on_node`): the task's,
    /// unless the task needs what only the cluster read or a second read gives (the VM's pool,
    /// its stored cloud-init password).
    pub fn one_read_node(&self) -> Option<&str> {
        let plain = self.pool.is_none() && !self.desired.contains_key("cipassword");
        self.node.as_deref().filter(|_| plain)
    }

    /// Check and convert the spec-validated options. `warn` receives warnings.
    pub fn from_spec(p: &module_utils::ansible::spec::Args, warn: &mut dyn FnMut(String)) -> Result<Params> {
        // Upstream reads vmid 0 (and newid 0) as unset; here it is refused like any value
        // outside PVE's range (docs/pve-semantics.md §29).
        let vmid = vmid_option("vmid", p.int("vmid"))?;
        let newid = vmid_option("newid", p.int("newid"))?;
        // PVE compares the auth id (`$authuser eq 'root@pam'`): an API token of root@pam,
        // `root@pam!<id>`, is not root@pam (docs/pve-semantics.md §44.1).
        let authid = module_utils::connect::connection(p)
            .map(|c| c.authid())
            .unwrap_or_else(|_| p.str("api_user").unwrap_or_default().to_string());
        let root_only = |opt: &str| -> Result<()> {
            match authid.as_str() {
                "root@pam" => Ok(()),
                token if token.starts_with("root@pam!") => Err(Error::args(format!(
                    "{opt} parameter require root@pam user. The API token {token} is not root@pam to Proxmox VE, \
                     which refuses it: Only root may use this option."
                ))),
                _ => Err(Error::args(format!("{opt} parameter require root@pam user. "))),
            }
        };
        if p.is_set("args") {
            root_only("args")?;
        }
        let skiplock = p.bool("skiplock").unwrap_or(false);
        if skiplock {
            root_only("skiplock")?;
        }

        let mut desired = BTreeMap::new();
        for (opt, key) in BOOL_OPTIONS {
            if let Some(b) = p.bool(opt) {
                desired.insert(key.to_string(), if b { "1" } else { "0" }.to_string());
            }
        }
        for opt in INT_OPTIONS {
            if let Some(i) = p.int(opt) {
                desired.insert(opt.to_string(), i.to_string());
            }
        }
        for (opt, key) in STR_OPTIONS {
            if let Some(s) = p.str(opt) {
                desired.insert(key.to_string(), s.to_string());
            }
        }
        if let Some(agent) = p.str("agent") {
            // Upstream: a boolean-looking value is sent as 0/1, anything else verbatim.
            let value = match module_utils::ansible::validate::parse_ansible_bool(&Value::String(agent.to_string())) {
                Some(b) if !agent.contains('=') => if b { "1" } else { "0" }.to_string(),
                _ => agent.to_string(),
            };
            desired.insert("agent".into(), value);
        }
        if let Some(keys) = p.str("sshkeys") {
            // pve-common Tools.pm validate_ssh_public_keys, which create_vm and update_vm_api call (§43.7)
            if let Some(words) = module_utils::pve::sshkeys::validate(keys) {
                return Err(Error::args(format!("sshkeys: {words}")));
            }
            desired.insert("sshkeys".into(), percent_encode(keys));
        }
        for (opt, key) in [("nameservers", "nameserver"), ("searchdomains", "searchdomain")] {
            if let Some(items) = p.list(opt) {
                let words: Vec<String> = items.iter().filter_map(scalar).collect();
                desired.insert(key.to_string(), words.join(" "));
            }
        }
        if let Some(items) = p.list("tags") {
            let mut tags = Vec::new();
            for item in items {
                let tag = scalar(item).unwrap_or_default();
                if !valid_tag(&tag) {
                    return Err(Error::args(format!("tags: `{tag}` is not a valid tag")));
                }
                tags.push(tag);
            }
            desired.insert("tags".into(), tags.join(";"));
        }
        for (opt, prefix, max) in DICT_OPTIONS {
            let Some(map) = p.dict(opt) else { continue };
            for (key, value) in map {
                let index_ok = key
                    .strip_prefix(prefix)
                    .filter(|n| {
                        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (*n == "0" || !n.starts_with('0'))
                    })
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_some_and(|n| n <= *max);
                if !index_ok {
                    return Err(Error::args(format!(
                        "{opt}: '{key}' is not a valid key, expected {prefix}0 to {prefix}{max}"
                    )));
                }
                let Some(text) = scalar(value) else {
                    return Err(Error::args(format!("{opt}: the value of {key} must be a string")));
                };
                // Property strings we know are checked like PVE checks them, before any call.
                if let Some(format) = format_for_key(key) {
                    PropertyString::parse(format, &text).map_err(|e| Error::args(format!("{opt}.{key}: {e}")))?;
                }
                desired.insert(key.clone(), text);
            }
        }
        // efidisk0 and tpmstate0 arrive validated by ansible::validate against their sub-options
        // (storage required, choices, types; unset sub-options are null).
        if let Some(efi) = p.dict("efidisk0") {
            if p.str("bios") != Some("ovmf") {
                return Err(Error::args("efidisk0 cannot be used if bios is not set to ovmf. "));
            }
            let sub = |key: &str| efi.get(key).and_then(Value::as_str);
            let storage = sub("storage").unwrap_or_default();
            check_option("efidisk0.storage", PveFormat::StorageId, storage)?;
            let mut ps = PropertyString::new(&EFIDISK);
            ps.set("file", &format!("{storage}:1"));
            if let Some(f) = sub("format") {
                ps.set("format", f);
            }
            if let Some(t) = sub("efitype") {
                ps.set("efitype", t);
            }
            if let Some(b) = efi.get("pre_enrolled_keys").and_then(Value::as_bool) {
                ps.set("pre-enrolled-keys", if b { "1" } else { "0" });
            }
            desired.insert("efidisk0".into(), ps.to_checked_string()?);
        }
        if let Some(tpm) = p.dict("tpmstate0") {
            let sub = |key: &str| tpm.get(key).and_then(Value::as_str).unwrap_or_default();
            let storage = sub("storage");
            check_option("tpmstate0.storage", PveFormat::StorageId, storage)?;
            let mut ps = PropertyString::new(&TPMSTATE);
            ps.set("file", &format!("{storage}:1"));
            ps.set("version", &format!("v{}", sub("version")));
            desired.insert("tpmstate0".into(), ps.to_checked_string()?);
        }
        // NICs are sent in PVE's canonical form so that what the diff shows is what PVE stores.
        for (key, value) in desired.iter_mut() {
            if key.starts_with("net") {
                if let Ok(ps) = PropertyString::parse(&NET, value) {
                    *value = ps.to_string();
                }
            }
        }

        if p.bool("update_unsafe") == Some(true) {
            warn("update_unsafe has no effect in ferro.proxmox: update: true already changes NICs (keeping their MAC) and disks (keeping their volume) safely, and this module never recreates a disk".into());
        }
        // Upstream's mutually_exclusive groups with update, for an update that is really asked
        // for (see spec.rs).
        if p.bool("update") == Some(true) {
            // Not clone: update: true is what changes a clone made by an earlier run (§29).
            for other in ["delete", "revert"] {
                if p.is_set(other) {
                    return Err(Error::args(format!("parameters are mutually exclusive: {other}|update")));
                }
            }
        }
        let state = State::parse(p.str("state").unwrap_or("present"));
        let clone = p.str("clone").map(|source| CloneOpts {
            source: source.to_string(),
            newid,
            full: p.bool("full").unwrap_or(true),
            format: p.str("format").filter(|f| *f != "unspecified").map(str::to_string),
            storage: p.str("storage").map(str::to_string),
            target: p.str("target").map(str::to_string),
            snapname: p.str("snapname").map(str::to_string),
        });
        if let Some(name) = p.str("name") {
            check_dns_name(name)?;
        }
        // Values that name a node or a storage (`node` is a path segment of create): PVE's
        // formats, before any call.
        for (option, format) in
            [("node", PveFormat::Node), ("target", PveFormat::Node), ("storage", PveFormat::StorageId)]
        {
            if let Some(v) = p.str(option) {
                check_option(option, format, v)?;
            }
        }
        let timeout = p.int("timeout").unwrap_or(300);
        if timeout <= 0 {
            return Err(Error::args(format!("timeout must be a number of seconds above 0, got {timeout}")));
        }
        Ok(Params {
            vmid,
            name: p.str("name").map(str::to_string),
            node: p.str("node").map(str::to_string),
            state,
            desired,
            clone,
            pool: p.str("pool").map(str::to_string),
            storage: p.str("storage").map(str::to_string),
            archive: p.str("archive").map(str::to_string),
            update: p.bool("update").unwrap_or(false),
            force: p.bool("force").unwrap_or(false),
            purge: p.bool("purge").unwrap_or(false),
            destroy_unreferenced_disks: p.bool("destroy_unreferenced_disks").unwrap_or(false),
            timeout: timeout as u64,
            delete: p.str("delete").map(split_list).unwrap_or_default(),
            revert: p.str("revert").map(split_list).unwrap_or_default(),
            digest: p.str("digest").map(str::to_string),
            skiplock,
            migrate: p.bool("migrate").unwrap_or(false),
            with_local_disks: p.bool("with_local_disks").unwrap_or(false),
        })
    }

    /// How the task names the VM in messages.
    pub fn label(&self) -> String {
        self.name.clone().or_else(|| self.vmid.map(|v| v.to_string())).unwrap_or_default()
    }
}

/// Whether a config key holds a disk-backed drive (not `unusedN`).
pub fn is_drive_key(key: &str) -> bool {
    matches!(disk_bus(key), Some(b) if b != "unused")
}

/// PVE's `dns-name` format for a VM name (pve-common JSONSchema.pm `pve_verify_dns_name`):
/// dot-separated labels of letters, digits and inner hyphens. Checked before any call, since a
/// create would otherwise only fail inside Proxmox VE.
fn check_dns_name(name: &str) -> Result<()> {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if name.len() <= 253 && name.split('.').all(label_ok) {
        Ok(())
    } else {
        Err(Error::args(format!(
            "name must be a valid DNS name (letters, digits, inner hyphens, dot-separated labels), got '{}'",
            clip(name, 80)
        )))
    }
}

impl module_utils::connect::Task for Params {
    fn vmid(&self) -> Option<u64> {
        self.vmid
    }
    fn wait(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_secs(self.timeout))
    }
}

#[cfg(test)]
mod name_tests {
    use super::check_dns_name;

    #[test]
    fn dns_names() {
        for ok in ["web01", "web-01", "a.b-c.d", "x"] {
            assert!(check_dns_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-web", "web-", "web_01", "web 01", "a..b", "wéb"] {
            assert_eq!(
                check_dns_name(bad).unwrap_err().to_string(),
                format!(
                    "name must be a valid DNS name (letters, digits, inner hyphens, dot-separated labels), got '{bad}'"
                )
            );
        }
    }
}
