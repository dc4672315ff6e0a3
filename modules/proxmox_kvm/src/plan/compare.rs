//! The pure part of converging an existing VM: compare the keys the task names with the live
//! config semantically, decide the value to write for each differing key (NICs keep their MAC,
//! disks keep their volume), refuse what only proxmox_disk can do safely, and predict which
//! writes PVE will leave pending on a running VM.

use std::collections::BTreeMap;

use module_utils::pve::cipassword;
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{format_for_key, is_nic_key, parse_new_cloudinit, parse_new_disk, volume_storage};
use module_utils::pve::hotplug::{delete_waits, is_cdrom, stays_pending, Hotplug};
use module_utils::pve::propstring::{parse_boolean, parse_gib_or_size, parse_size, PropertyString, AGENT, MEMORY, NET};
use module_utils::{Error, Result};

use crate::params::{is_drive_key, url_decode};

use module_utils::pve::request::Form;

/// One key the task will write.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub key: String,
    /// The effective value now (`None`: not set).
    pub before: Option<String>,
    /// The value to send; empty: the key is removed (sent in `delete`).
    pub after: String,
}

impl Change {
    /// The task gave the key an empty value: PVE would take `key=` as the empty string (§74), so
    /// the key is removed with the `delete` parameter instead (docs/pve-semantics.md §34.4).
    pub fn removes(&self) -> bool {
        self.after.is_empty()
    }
}

/// One key the task asks for that this module will not change.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub key: String,
    pub before: Option<String>,
    pub wanted: String,
    pub reason: String,
}

/// The comparison of a VM with the task.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Converge {
    pub changes: Vec<Change>,
    pub refused: Vec<Refusal>,
}

impl Converge {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.refused.is_empty()
    }

    /// Fail with every refusal's reason, when there is any: `what` says what was not done.
    pub fn check_refusals(&self, what: &str) -> Result<()> {
        if self.refused.is_empty() {
            return Ok(());
        }
        let reasons: Vec<&str> = self.refused.iter().map(|r| r.reason.as_str()).collect();
        Err(Error::failed(format!("{what}: {}", reasons.join("; "))))
    }
}

const BOOL_KEYS: &[&str] = &[
    "acpi",
    "autostart",
    "ciupgrade",
    "freeze",
    "kvm",
    "localtime",
    "numa",
    "onboot",
    "protection",
    "reboot",
    "tablet",
    "tdf",
    "template",
];
const NUMBER_KEYS: &[&str] =
    &["balloon", "cores", "cpulimit", "cpuunits", "migrate_downtime", "migrate_speed", "shares", "sockets", "vcpus"];

/// What PVE assumes for a key that is not in the config (qemu-server's schema defaults), so a
/// task asking for the default on a VM without the key is not a change.
fn default_of(key: &str) -> Option<&'static str> {
    Some(match key {
        "acpi" | "kvm" | "tablet" | "reboot" | "ciupgrade" => "1",
        "autostart" | "freeze" | "numa" | "onboot" | "protection" | "template" | "tdf" => "0",
        "cores" | "sockets" => "1",
        "cpulimit" | "migrate_speed" => "0",
        "migrate_downtime" => "0.1",
        "shares" => "1000",
        "bios" => "seabios",
        "ostype" => "other",
        "scsihw" => "lsi",
        _ => return None,
    })
}

fn bool_of(text: &str) -> Option<bool> {
    parse_boolean(text.trim())
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

fn ssh_lines(encoded: &str) -> Vec<String> {
    url_decode(encoded)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

fn tag_set(text: &str) -> Vec<String> {
    let mut tags: Vec<String> =
        text.split([',', ';', ' ']).filter(|t| !t.is_empty()).map(str::to_ascii_lowercase).collect();
    tags.sort_unstable();
    tags.dedup();
    tags
}

fn propstring_equal(format: &'static module_utils::pve::propstring::Format, current: Option<&str>, want: &str) -> bool {
    let cur = match current {
        Some(c) => PropertyString::parse_lenient(format, c).ok(),
        None => Some(PropertyString::new(format)),
    };
    match (cur, PropertyString::parse_lenient(format, want)) {
        (Some(c), Ok(w)) => c.semantically_equal(&w),
        _ => current == Some(want),
    }
}

/// Whether a scalar (non-device) key already has the value the task wants.
pub fn scalar_equal(key: &str, current: Option<&str>, want: &str) -> bool {
    let current_or_default = current.or_else(|| default_of(key));
    match key {
        k if BOOL_KEYS.contains(&k) => current_or_default.and_then(bool_of) == bool_of(want),
        k if NUMBER_KEYS.contains(&k) => {
            match (current_or_default.and_then(|c| c.trim().parse::<f64>().ok()), want.trim().parse::<f64>().ok()) {
                (Some(a), Some(b)) => a == b,
                _ => current_or_default == Some(want),
            }
        }
        "memory" => propstring_equal(&MEMORY, current, want),
        "agent" => propstring_equal(&AGENT, current, want),
        "tags" => tag_set(current.unwrap_or("")) == tag_set(want),
        "sshkeys" => ssh_lines(current.unwrap_or("")) == ssh_lines(want),
        "nameserver" | "searchdomain" => words(current.unwrap_or("")) == words(want),
        "hotplug" => Hotplug::parse(current) == Hotplug::parse(Some(want)),
        "description" => current.unwrap_or("").trim_end() == want.trim_end(),
        // PVE returns `**********` for the password; the caller puts what PVE stores in its
        // place where it can read it (§29.5). What cannot be compared is taken as equal (the
        // caller warns), so that an unreadable password is never rewritten on every run.
        "cipassword" => current.is_some_and(|c| cipassword::matches(c, want).unwrap_or(true)),
        _ => current_or_default == Some(want),
    }
}

/// The NIC to write: the task's NIC with the current MAC unless it names one; `None` when the
/// NIC already is as described.
pub fn nic_value(current: Option<&str>, want: &str) -> Option<String> {
    let Ok(mut desired) = PropertyString::parse_lenient(&NET, want) else {
        return (current != Some(want)).then(|| want.to_string());
    };
    let existing = current.and_then(|c| PropertyString::parse_lenient(&NET, c).ok());
    if desired.get("macaddr").is_none() {
        if let Some(mac) = existing.as_ref().and_then(|e| e.get("macaddr")) {
            desired.set("macaddr", mac);
        }
    }
    match existing {
        Some(e) if e.semantically_equal(&desired) => None,
        _ => Some(desired.to_string()),
    }
}

/// The outcome for one drive key.
#[derive(Debug, Clone, PartialEq)]
pub enum DriveOutcome {
    Equal,
    Write(String),
    Refuse(String),
}

/// Compare a drive (`ideN`, `sataN`, `scsiN`, `virtioN`, `efidisk0`, `tpmstate0`).
pub fn drive_value(key: &str, current: Option<&str>, want: &str) -> DriveOutcome {
    let Some(format) = format_for_key(key) else {
        return if current == Some(want) { DriveOutcome::Equal } else { DriveOutcome::Write(want.to_string()) };
    };
    let Some(current) = current else {
        return DriveOutcome::Write(want.to_string());
    };
    let (Ok(cur), Ok(wanted)) =
        (PropertyString::parse_lenient(format, current), PropertyString::parse_lenient(format, want))
    else {
        return if current == want { DriveOutcome::Equal } else { DriveOutcome::Write(want.to_string()) };
    };
    let cur_file = cur.get("file").unwrap_or("");
    let want_file = wanted.get("file").unwrap_or("");
    let cur_storage = volume_storage(cur_file);
    let disk_tool = "ferro.proxmox.proxmox_disk";
    let mut ignore = vec!["file", "size", "format", "import-from"];
    // The volume the written value points at: the current one unless a CD-ROM medium changes.
    let mut file = cur_file.to_string();
    if let Some(storage) = parse_new_cloudinit(want_file) {
        if !cur_file.contains("-cloudinit") {
            return DriveOutcome::Refuse(format!(
                "{key} is {current}, not a cloud-init drive; remove it first (delete: {key}) or use another key"
            ));
        }
        if Some(storage) != cur_storage {
            return DriveOutcome::Refuse(format!(
                "the cloud-init drive {key} is on {}, the task asks for {storage}; remove it first (delete: {key})",
                cur_storage.unwrap_or("?"),
            ));
        }
        // PVE forces media=cdrom on cloud-init drives.
        ignore.push("media");
    } else if parse_new_disk(want_file).is_some() || wanted.get("import-from").is_some() {
        if is_cdrom(&cur) {
            return DriveOutcome::Refuse(format!(
                "{key} is a CD-ROM drive ({current}), the task asks for a disk; remove it first (delete: {key})"
            ));
        }
        let (want_storage, want_size) = parse_new_disk(want_file).unwrap_or((None, ""));
        if let Some(s) = want_storage {
            if Some(s) != cur_storage {
                return DriveOutcome::Refuse(format!(
                    "{key} is on storage {}, the task asks for {s}: move disks with {disk_tool} (state: moved), which keeps the data",
                    cur_storage.unwrap_or("?")
                ));
            }
        }
        // efidisk0 and tpmstate0 have fixed sizes: their N is ignored by PVE (§8).
        let sized = !matches!(key, "efidisk0" | "tpmstate0") && wanted.get("import-from").is_none();
        if sized {
            if let (Ok(w), Some(Ok(c))) = (parse_gib_or_size(want_size), cur.get("size").map(parse_size)) {
                if w != c {
                    return DriveOutcome::Refuse(format!(
                        "{key} has size {}, the task asks for {}: change disk sizes with {disk_tool} (state: resized; disks only grow)",
                        cur.get("size").unwrap_or("?"),
                        module_utils::pve::propstring::format_size(w)
                    ));
                }
            }
        }
    } else if want_file != cur_file {
        if is_cdrom(&cur) || wanted.get("media") == Some("cdrom") {
            // Changing the medium of a CD-ROM drive is an ordinary change.
            file = want_file.to_string();
        } else {
            return DriveOutcome::Refuse(format!(
                "{key} uses volume {cur_file}, the task names {want_file}: attach, detach and move disks with {disk_tool}"
            ));
        }
    }
    if key == "tpmstate0"
        && cur.get("version").is_some()
        && wanted.get("version").is_some()
        && cur.get("version") != wanted.get("version")
    {
        return DriveOutcome::Refuse(format!(
            "tpmstate0: {} (it has version {}, the task asks for {})",
            module_utils::pve::values::TPM_VERSION,
            cur.get("version").unwrap_or("?"),
            wanted.get("version").unwrap_or("?")
        ));
    }
    if file == cur_file && cur.semantically_equal_ignoring(&wanted, &ignore) {
        return DriveOutcome::Equal;
    }
    let mut out = PropertyString::new(format);
    out.set("file", &file);
    for (k, v) in wanted.iter() {
        if !matches!(k, "file" | "size" | "format" | "import-from") {
            out.set(k, v);
        }
    }
    if ignore.contains(&"media") {
        if let Some(m) = cur.get("media") {
            out.set("media", m);
        }
    }
    if file == cur_file {
        if let Some(size) = cur.get("size") {
            out.set("size", size);
        }
    }
    DriveOutcome::Write(out.to_string())
}

/// Compare every key the task names with the VM's effective config (pending included: a change
/// already waiting is not asked for again).
pub fn converge(config: &VmConfig, desired: &BTreeMap<String, String>) -> Converge {
    let mut out = Converge::default();
    for (key, want) in desired {
        let current = config.get(key);
        let before = current.map(str::to_string);
        if want.is_empty() && !is_nic_key(key) && !is_drive_key(key) {
            // An empty value asks for the key to be gone (docs/pve-semantics.md §34.4); a disk
            // or NIC is taken away only by `delete` or the disk and NIC modules.
            if current.is_some() {
                out.changes.push(Change { key: key.clone(), before, after: String::new() });
            }
        } else if is_nic_key(key) {
            if let Some(after) = nic_value(current, want) {
                out.changes.push(Change { key: key.clone(), before, after });
            }
        } else if is_drive_key(key) {
            match drive_value(key, current, want) {
                DriveOutcome::Equal => {}
                DriveOutcome::Write(after) => out.changes.push(Change { key: key.clone(), before, after }),
                DriveOutcome::Refuse(reason) => {
                    out.refused.push(Refusal { key: key.clone(), before, wanted: want.clone(), reason })
                }
            }
        } else if !scalar_equal(key, current, want) {
            out.changes.push(Change { key: key.clone(), before, after: want.clone() });
        }
    }
    out
}

/// The body of the config write of `changes`: each value, and the removals in one `delete`.
pub fn config_body(changes: &[Change]) -> Form {
    let mut body: Form = changes.iter().filter(|c| !c.removes()).map(|c| (c.key.clone(), c.after.clone())).collect();
    let removed: Vec<&str> = changes.iter().filter(|c| c.removes()).map(|c| c.key.as_str()).collect();
    if !removed.is_empty() {
        body.push(("delete".into(), removed.join(",")));
    }
    body
}

/// The config after the changes, as PVE will hold it: each write applied or left pending, each
/// removal (`Change::removes`) done or left pending as a `delete` is; on a stopped VM the
/// pending changes the config already had apply too (`applied_if_stopped`).
pub fn predict(config: &VmConfig, changes: &[Change], running: bool) -> VmConfig {
    let mut next = config.clone();
    for c in changes {
        next = if c.removes() {
            next.with_change(&c.key, None, running && delete_waits(&config.hotplug(), &c.key))
        } else {
            let before = config.current.get(&c.key).map(String::as_str);
            next.with_change(&c.key, Some(&c.after), stays_pending(&c.key, before, &c.after, running, config))
        };
    }
    applied_if_stopped(next, running)
}

/// A config write to a stopped VM applies every pending change, the ones it found as well as its
/// own: Qemu.pm `update_vm_api` ends, whenever the config still has a pending section, with
/// QemuServer.pm `vmconfig_apply_pending` on a VM that does not run (docs/pve-semantics.md §6).
pub fn applied_if_stopped(mut next: VmConfig, running: bool) -> VmConfig {
    if running {
        return next;
    }
    for (key, value) in next.pending.clone() {
        next = next.with_change(&key, Some(&value), false);
    }
    for key in next.pending_delete.keys().cloned().collect::<Vec<_>>() {
        next = next.with_change(&key, None, false);
    }
    next
}

/// One line of drift, for the warning.
pub fn drift_line(key: &str, before: Option<&str>, after: &str) -> String {
    let show = |v: &str| {
        let one_line = v.replace('\n', "\\n");
        if one_line.chars().count() > 80 {
            format!("{}...", one_line.chars().take(77).collect::<String>())
        } else {
            one_line
        }
    };
    let shown_after = match key {
        _ if after.is_empty() => "(unset)".to_string(),
        "sshkeys" => url_decode(after),
        _ => after.to_string(),
    };
    let shown_before = before.map(|b| if key == "sshkeys" { url_decode(b) } else { b.to_string() });
    format!(
        "{key}: {} -> {}",
        shown_before.as_deref().map(show).unwrap_or_else(|| "(unset)".into()),
        show(&shown_after)
    )
}
