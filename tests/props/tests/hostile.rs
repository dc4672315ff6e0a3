//! The property tests of issue 15: generated hostile values for every option that becomes a path segment or a property-string value, against the modules' own code.
//!
//! - **path segments**: whatever a task gives as `node`, `target`, `storage`, `target_storage`,
//!   a disk or NIC key, or a vmid, the module either refuses it before any call (the message
//!   naming the option) or the value is in PVE's format for it (checked here against a pattern
//!   of our own, not the code under test); and any value at all, put in an `ApiPath`, is sent as
//!   exactly one segment that decodes back to itself.
//! - **property-string values**: whatever a task gives for a value that the module writes into
//!   a property string (NIC options; every drive option, `storage`, `import_from`, `iso_image`;
//!   the efidisk0/tpmstate0 storage), the module either refuses it or the string it would send
//!   parses back to exactly the keys the task set, each with the value the task gave.

use std::collections::BTreeMap;
use std::io::Write;

use ferro_props::gen::Rng;
use ferro_props::seed;
use module_utils::pve::config::VmConfig;
use module_utils::pve::propstring::{PropertyString, DRIVE, EFIDISK, NET, TPMSTATE};
use module_utils::pve::request::ApiPath;
use serde_json::{json, Map, Value};

fn report(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Fail with the first violations and the seed that replays them.
fn fail_on(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} violations (seed {:#x}):\n{}",
        failures.len(),
        seed(),
        failures[..failures.len().min(8)].join("\n")
    );
}

fn cases() -> u64 {
    std::env::var("FERRO_PROP_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1500) / 3
}

/// Values built to escape: separators of paths, queries, fragments and property strings,
/// encodings, dot segments, whitespace, unicode, long values, next to valid names.
fn hostile(rng: &mut Rng) -> String {
    const BASES: &[&str] = &[
        "pve1",
        "pve2",
        "local-lvm",
        "vmbr0",
        "local:iso/debian.iso",
        "local:import/a.qcow2",
        "abc123",
        "100",
        "scsi1",
        "net0",
        "a",
        "",
    ];
    const TAILS: &[&str] = &[
        "/qemu/100/status/stop#",
        "/../../access",
        "?x=1",
        "#frag",
        "%2F..%2Faccess",
        ",tag=99,firewall=0",
        ",cache=unsafe",
        ",ro=1",
        "=1",
        " ",
        "\n",
        "\t",
        "\0",
        "/",
        "..",
        ".",
        ":",
        ";",
        "é",
        "\u{202e}",
        "%",
        "%00",
        "-",
        "_x",
        ".1",
        "0",
    ];
    let base = rng.pick(BASES).to_string();
    let mut v = match rng.below(6) {
        0 => base,
        1 => format!("{}{base}", rng.pick(TAILS)),
        2 => {
            let long = "n".repeat(rng.below(300) + 60);
            format!("{base}{long}")
        }
        _ => format!("{base}{}", rng.pick(TAILS)),
    };
    if rng.chance(20) {
        let tail = rng.pick(TAILS).to_string();
        v.push_str(&tail);
    }
    v
}

// The oracles below are written here on purpose, from PVE's patterns (pve-common JSONSchema.pm
// `pve_verify_node_name`, `parse_id`), rather than calling `pveformat`: the code under test.
fn is_node(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

fn is_storage(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// What no accepted value may hold: it would end a path segment or a property-string item.
fn splits(v: &str) -> bool {
    v.contains(['/', '?', '#', ',', '\n', '\0'])
}

fn args(base: Value, option: &str, value: &str) -> Map<String, Value> {
    let Value::Object(mut m) = base else { unreachable!() };
    for (k, v) in [
        ("api_host", "pve1.example.org"),
        ("api_user", "ansible@pve"),
        ("api_token_id", "automation"),
        ("api_token_secret", "s"),
    ] {
        m.insert(k.into(), json!(v));
    }
    match option.split_once('.') {
        Some((dict, sub)) => {
            let entry = m.entry(dict.to_string()).or_insert_with(|| json!({}));
            entry[sub] = json!(value);
        }
        None => {
            m.insert(option.into(), json!(value));
        }
    }
    m
}

/// The module's own argument checking: `Ok(Some(params))` accepted, `Ok(None)` refused by the
/// spec (ansible-core's checks: choices, types), `Err(msg)` refused by the module.
fn validate(
    spec: &module_utils::ansible::spec::ModuleSpec,
    m: &Map<String, Value>,
) -> Option<module_utils::ansible::spec::Args> {
    module_utils::ansible::validate::validate(spec, m, &|_| None).ok()
}

fn named(msg: &str, option: &str) -> bool {
    let top = option.split('.').next().unwrap_or(option);
    msg.contains(option) || msg.contains(top)
}

#[test]
fn path_segment_options_are_refused_or_in_pves_format() {
    let mut rng = Rng::new(seed() ^ 0x15_0001);
    let n = cases();
    let mut failures = Vec::new();
    let (mut tried, mut refused) = (0u64, 0u64);
    // (module, base args, option, PVE's format as an independent check)
    type Oracle = fn(&str) -> bool;
    let table: Vec<(&str, Value, &str, Oracle)> = vec![
        ("proxmox_kvm", json!({"vmid": 150, "name": "h"}), "node", is_node),
        ("proxmox_kvm", json!({"vmid": 150, "name": "h", "node": "pve1", "clone": "t"}), "target", is_node),
        ("proxmox_kvm", json!({"vmid": 150, "name": "h", "node": "pve1"}), "storage", is_storage),
        ("proxmox_vm_info", json!({}), "node", is_node),
        ("proxmox_disk", json!({"vmid": 100, "disk": "scsi1"}), "storage", is_storage),
        ("proxmox_disk", json!({"vmid": 100, "disk": "scsi1", "state": "moved"}), "target_storage", is_storage),
        ("proxmox_disk", json!({"vmid": 100}), "disk", |v| !splits(v) && !v.is_empty()),
        ("proxmox_nic", json!({"vmid": 100}), "interface", |v| !splits(v) && v.starts_with("net")),
    ];
    for (module, base, option, oracle) in &table {
        for case in 0..n {
            let value = hostile(&mut rng);
            tried += 1;
            let m = args(base.clone(), option, &value);
            let outcome: Result<(), String> = match *module {
                "proxmox_kvm" => match validate(&proxmox_kvm::SPEC, &m) {
                    Some(p) => proxmox_kvm::Params::from_spec(&p, &mut |_| {}).map(|_| ()).map_err(|e| e.to_string()),
                    None => Err(option.to_string()),
                },
                "proxmox_vm_info" => match validate(&proxmox_vm_info::SPEC, &m) {
                    Some(p) => proxmox_vm_info::Params::from_spec(&p).map(|_| ()).map_err(|e| e.to_string()),
                    None => Err(option.to_string()),
                },
                "proxmox_disk" => match validate(&proxmox_disk::SPEC, &m) {
                    Some(p) => proxmox_disk::Params::from_spec(&p).map(|_| ()).map_err(|e| e.to_string()),
                    None => Err(option.to_string()),
                },
                _ => match validate(&proxmox_nic::SPEC, &m) {
                    Some(p) => proxmox_nic::Params::from_spec(&p, &mut |_| {}).map(|_| ()).map_err(|e| e.to_string()),
                    None => Err(option.to_string()),
                },
            };
            match outcome {
                Ok(()) if !oracle(&value) => {
                    failures.push(format!("{module} case {case}: {option}={value:?} accepted, outside PVE's format"))
                }
                Ok(()) => {}
                Err(msg) if !named(&msg, option) && !msg.contains("disk") && !msg.contains("interface") => {
                    failures.push(format!("{module} case {case}: {option}={value:?} refused without naming it: {msg}"))
                }
                Err(_) => refused += 1,
            }
            // Whatever the value, as a path segment it is one segment that decodes to itself.
            let path = ApiPath::new(["nodes", value.as_str(), "qemu"]);
            let encoded = path.encoded();
            let parts: Vec<&str> = encoded.split('/').collect();
            if parts.len() != 4 || parts[1] != "nodes" || parts[3] != "qemu" || decode(parts[2]) != value.as_bytes() {
                failures.push(format!("segment {value:?} encoded as {encoded}"));
            }
            if encoded.contains(['?', '#', ' ', '\n']) {
                failures.push(format!("segment {value:?} encoded with a raw separator: {encoded}"));
            }
        }
    }
    report(&format!(
        "property: path segments: {tried} hostile values for {} options ({refused} refused before any call, {} accepted, all in PVE's format)",
        table.len(),
        tried - refused
    ));
    fail_on(&failures);
}

fn decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz");
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// The keys and values of a property string as PVE's parser splits it (keys as written).
fn split_items(text: &str, default_key: &str) -> BTreeMap<String, String> {
    text.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (default_key.to_string(), p.to_string()),
        })
        .collect()
}

#[test]
fn property_string_values_cannot_add_remove_or_change_keys() {
    let mut rng = Rng::new(seed() ^ 0x15_0002);
    let n = cases();
    let mut failures = Vec::new();
    let (mut tried, mut refused) = (0u64, 0u64);

    // proxmox_nic: every string option the NIC string is built from, through desired_nic.
    let nic_options = ["bridge", "model", "mac"];
    for option in nic_options {
        for case in 0..n {
            let value = hostile(&mut rng);
            tried += 1;
            let m = args(json!({"vmid": 100, "interface": "net0", "bridge": "vmbr0"}), option, &value);
            let Some(p) = validate(&proxmox_nic::SPEC, &m) else {
                refused += 1;
                continue;
            };
            let params = match proxmox_nic::Params::from_spec(&p, &mut |_| {}) {
                Ok(p) => p,
                Err(e) => {
                    refused += 1;
                    if !named(&e.to_string(), option) {
                        failures.push(format!("nic {option}={value:?} refused without naming it: {e}"));
                    }
                    continue;
                }
            };
            let config = VmConfig::from_current(BTreeMap::new());
            match proxmox_nic::plan(&config, false, &params) {
                Ok(plan) => {
                    let proxmox_nic::Action::Set(text) = &plan.action else { continue };
                    let items = split_items(text, "model");
                    let want: Vec<&str> = if params.mac.is_some() {
                        vec!["bridge", params.model.as_str()]
                    } else {
                        vec!["bridge", "model"]
                    };
                    let got: Vec<&str> = items.keys().map(String::as_str).collect();
                    let mut want_sorted = want.clone();
                    want_sorted.sort_unstable();
                    if got != want_sorted || PropertyString::parse(&NET, text).is_err() {
                        failures.push(format!("nic case {case} {option}={value:?}: sends {text:?}, keys {got:?}"));
                    }
                }
                Err(e) => {
                    refused += 1;
                    if !named(&e.to_string(), option) {
                        failures.push(format!("nic {option}={value:?} refused at plan without naming it: {e}"));
                    }
                }
            }
        }
    }

    // proxmox_disk: every string drive option, and the values the drive string is built from.
    let mut disk_options: Vec<&str> = vec!["storage", "import_from", "iso_image"];
    for (name, _, kind) in proxmox_disk_drive_options() {
        if kind == "str" {
            disk_options.push(name);
        }
    }
    let storages = Vec::new();
    let config = VmConfig::from_current(BTreeMap::new());
    for option in &disk_options {
        for case in 0..n {
            let value = hostile(&mut rng);
            tried += 1;
            let mut base = json!({"vmid": 100, "disk": "scsi1", "storage": "local-lvm", "size": "1G"});
            if *option == "import_from" {
                base = json!({"vmid": 100, "disk": "scsi1", "storage": "local-lvm"});
            }
            if *option == "iso_image" {
                base = json!({"vmid": 100, "disk": "ide2", "media": "cdrom"});
            }
            let m = args(base, option, &value);
            let Some(p) = validate(&proxmox_disk::SPEC, &m) else {
                refused += 1;
                continue;
            };
            let params = match proxmox_disk::Params::from_spec(&p) {
                Ok(p) => p,
                Err(e) => {
                    refused += 1;
                    if !named(&e.to_string(), option) {
                        failures.push(format!("disk {option}={value:?} refused without naming it: {e}"));
                    }
                    continue;
                }
            };
            let listed = std::collections::BTreeMap::new();
            let facts = proxmox_disk::Facts {
                vmid: 100,
                running: false,
                config: &config,
                storages: &storages,
                listed: &listed,
                target: None,
            };
            let plan = match proxmox_disk::plan(&params, &facts) {
                Ok(plan) => plan,
                Err(e) => {
                    refused += 1;
                    let msg = e.to_string();
                    if !named(&msg, option) && !named(&msg, &option.replace('_', "-")) {
                        failures.push(format!("disk {option}={value:?} refused at plan without naming it: {msg}"));
                    }
                    continue;
                }
            };
            let proxmox_disk::Action::SetDrive(text) = &plan.action else { continue };
            // The keys the task set: the volume (or ISO), and each option it named.
            let mut want: Vec<String> = vec!["file".into()];
            if params.import_from.is_some() {
                want.push("import-from".into());
            }
            if params.iso_image.is_some() {
                want.push("media".into());
            }
            for (k, _) in &params.options {
                want.push(k.clone());
            }
            want.sort();
            want.dedup();
            let items = split_items(text, "file");
            let got: Vec<String> = items.keys().cloned().collect();
            let values_kept = params.options.iter().all(|(k, v)| items.get(k) == Some(v))
                && params.import_from.as_ref().is_none_or(|v| items.get("import-from") == Some(v))
                && params.iso_image.as_ref().is_none_or(|v| items.get("file") == Some(v));
            if got != want || !values_kept || PropertyString::parse(&DRIVE, text).is_err() {
                failures
                    .push(format!("disk case {case} {option}={value:?}: sends {text:?}, keys {got:?}, want {want:?}"));
            }
        }
    }

    // proxmox_kvm: the efidisk0 / tpmstate0 storage, written as `<storage>:1`.
    for (option, key, format) in
        [("efidisk0.storage", "efidisk0", &EFIDISK), ("tpmstate0.storage", "tpmstate0", &TPMSTATE)]
    {
        for case in 0..n {
            let value = hostile(&mut rng);
            tried += 1;
            let m = args(json!({"vmid": 150, "name": "h", "node": "pve1", "bios": "ovmf"}), option, &value);
            let Some(p) = validate(&proxmox_kvm::SPEC, &m) else {
                refused += 1;
                continue;
            };
            match proxmox_kvm::Params::from_spec(&p, &mut |_| {}) {
                Err(e) => {
                    refused += 1;
                    if !named(&e.to_string(), option) {
                        failures.push(format!("kvm {option}={value:?} refused without naming it: {e}"));
                    }
                }
                Ok(params) => {
                    let text = params.desired.get(key).cloned().unwrap_or_default();
                    let items = split_items(&text, "file");
                    let ok = items.get("file") == Some(&format!("{value}:1"))
                        && PropertyString::parse(format, &text).is_ok()
                        && is_storage(&value);
                    if !ok {
                        failures.push(format!("kvm case {case} {option}={value:?}: {key}={text:?}"));
                    }
                }
            }
        }
    }
    report(&format!(
        "property: property-string values: {tried} hostile values for {} options ({refused} refused before any call, {} written with exactly the keys the task set)",
        nic_options.len() + disk_options.len() + 2,
        tried - refused
    ));
    fail_on(&failures);
}

/// proxmox_disk's drive options as (option, PVE key, kind name), from its spec.
fn proxmox_disk_drive_options() -> Vec<(&'static str, &'static str, &'static str)> {
    proxmox_disk::SPEC
        .options
        .iter()
        .filter(|o| DRIVE.key(o.name).is_some() && o.kind == module_utils::ansible::spec::Kind::Str)
        // `format` and `size` are the module's own options, not drive options it copies.
        .filter(|o| !matches!(o.name, "format" | "size"))
        .map(|o| (o.name, o.name, "str"))
        .collect()
}
