//! Device and directory mappings (`GET /cluster/mapping/pci`, `/usb`, `/dir`) and what PVE refuses of a VM that names one: a start on a node the mapping does not cover, a migration to a node it does not cover, a running VM's mapped device that cannot migrate live (docs/pve-semantics.md §64).
//!
//! pve-guest-common Mapping/PCI.pm, USB.pm and Dir.pm keep the mappings (`mapping/*.cfg`), each
//! an id with one `node=<node>,...` entry per node; pve-manager API2/Cluster/Mapping/*.pm `index`
//! lists those the user holds `Mapping.Modify`, `Mapping.Use` or `Mapping.Audit` on, and with
//! `check-node` adds that node's validity checks (`checks`, `severity` `error`). A task reads
//! a kind only when the config it writes or starts names a mapping of that kind. Each rule
//! returns PVE's words, `None` when PVE goes on or when this user cannot see the mapping.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::Result;
use crate::pve::client::Api;
use crate::pve::request::ApiPath;

/// One mapping as the list gives it: its entries (`node=...,path=...`), whether a PCI mapping is
/// `live-migration-capable`, and the `Invalid configuration: ` errors of `check-node`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapping {
    pub map: Vec<String>,
    pub live: bool,
    pub errors: Vec<String>,
}

/// The mappings read, by (kind, id).
pub type Mappings = BTreeMap<(&'static str, String), Mapping>;

fn prop<'v>(value: &'v str, key: &str, default_key: bool) -> Option<&'v str> {
    value.split(',').enumerate().find_map(|(i, part)| match part.split_once('=') {
        Some((k, v)) => (k == key).then_some(v),
        None => (i == 0 && default_key).then_some(part),
    })
}

fn numbered(key: &str, prefix: &str) -> bool {
    key.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// What `key: value` names, as QemuMigrate/Helpers.pm `check_local_resources` reads a config:
/// the kind and id of a mapped `usbN` (not a SPICE port), `hostpciN` or `virtiofsN` (`dirid`).
pub fn named(key: &str, value: &str) -> Option<(&'static str, String)> {
    let (kind, id) = if numbered(key, "usb") {
        let host = prop(value, "host", true);
        if host.is_some_and(|h| h.eq_ignore_ascii_case("spice")) {
            return None;
        }
        ("usb", prop(value, "mapping", false))
    } else if numbered(key, "hostpci") {
        ("pci", prop(value, "mapping", false))
    } else if numbered(key, "virtiofs") {
        ("dir", prop(value, "dirid", true))
    } else {
        return None;
    };
    Some((kind, id?.to_string()))
}

/// The mappings of the kinds `config` names, read once per kind (`check_node`: the node whose
/// validity checks to add, a start's); nothing is read for a config that names none.
pub fn read(api: &dyn Api, config: &BTreeMap<String, String>, check_node: Option<&str>) -> Result<Mappings> {
    let mut kinds: Vec<&str> = config.iter().filter_map(|(k, v)| named(k, v)).map(|(kind, _)| kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let query: Vec<(String, String)> = check_node.map(|n| ("check-node".into(), n.into())).into_iter().collect();
    let mut out = Mappings::new();
    for kind in ["pci", "usb", "dir"].into_iter().filter(|k| kinds.contains(k)) {
        let path = ApiPath::new(["cluster", "mapping", kind]);
        let data = api.get(&path, &query).map_err(|e| e.context(&format!("reading the {kind} mappings")))?;
        for entry in data.as_array().into_iter().flatten() {
            let Some(id) = entry.get("id").and_then(Value::as_str) else { continue };
            let strings = |k: &str| -> Vec<String> {
                let list = entry.get(k).and_then(Value::as_array);
                list.into_iter().flatten().filter_map(|v| v.as_str().map(String::from)).collect()
            };
            let live = entry.get("live-migration-capable").is_some_and(|v| v.as_u64() == Some(1) || v == "1");
            // PCI.pm and Dir.pm call the list `checks`, USB.pm `errors`
            let checks = entry.get("checks").or_else(|| entry.get("errors"));
            let errors = checks.and_then(Value::as_array).into_iter().flatten();
            let errors = errors
                .filter(|c| c.get("severity").and_then(Value::as_str) == Some("error"))
                .filter_map(|c| c.get("message").and_then(Value::as_str))
                .map(|m| m.strip_prefix("Invalid configuration: ").unwrap_or(m).trim_end().to_string())
                .collect();
            out.insert((kind, id.to_string()), Mapping { map: strings("map"), live, errors });
        }
    }
    Ok(out)
}

/// The entries of `mapping` for `node` (Mapping/*.pm `get_node_mapping`).
fn on_node<'m>(mapping: &'m Mapping, node: &str) -> Vec<&'m String> {
    mapping.map.iter().filter(|e| prop(e, "node", false) == Some(node)).collect()
}

/// PCI.pm `parse_hostpci` of `hostpciN`'s `mapping` `id` on `node` (`find_on_current_node`, then
/// `assert_valid` of each entry through `check-node`'s errors): the `path` of each entry, one
/// alternative each, or PVE's words; `None` when the user cannot see the mapping (`visible`).
/// `values::devices::hostpci` checks the alternatives in their place (§70).
pub fn pci_on_node(
    id: &str,
    node: &str,
    maps: &Mappings,
    visible: &dyn Fn(&str, &str) -> bool,
) -> Option<Result<Vec<String>, String>> {
    let not_found = || Some(Err(format!("PCI device mapping not found for '{id}'")));
    let Some(m) = maps.get(&("pci", id.to_string())) else {
        return if visible("pci", id) { not_found() } else { None };
    };
    let entries = on_node(m, node);
    if entries.is_empty() {
        return not_found();
    }
    if let Some(err) = m.errors.first() {
        return Some(Err(format!("PCI device mapping invalid (hardware probably changed): {err}")));
    }
    Some(Ok(entries.iter().map(|e| prop(e, "path", false).unwrap_or_default().to_string()).collect()))
}

/// What a start on `node` refuses of the mapped USB devices of `config` (the config it starts
/// with), after the PCI devices (`config_to_command`: USB.pm `parse_usb_device`); `visible(kind,
/// id)`: whether the user would see the mapping if it existed. The directories of `virtiofsN`
/// come at the end of the command line: `start_dirs`.
pub fn start_usb(
    config: &BTreeMap<String, String>,
    node: &str,
    maps: &Mappings,
    visible: &dyn Fn(&str, &str) -> bool,
) -> Option<String> {
    let found = |kind: &'static str, id: &str| maps.get(&(kind, id.to_string())).map(|m| (on_node(m, node), m));
    for i in 0..20 {
        let Some(value) = config.get(&format!("usb{i}")) else { continue };
        let (host, mapping) = (prop(value, "host", true), prop(value, "mapping", false));
        let Some(id) = mapping.filter(|_| host.is_none()) else { continue };
        let words = match found("usb", id) {
            Some((entries, _)) if entries.len() > 1 => "More than one USB mapping per host not supported".into(),
            Some((entries, m)) if !entries.is_empty() => match m.errors.first() {
                Some(err) => format!("USB Mapping invalid (hardware probably changed): {err}"),
                None => continue,
            },
            None if !visible("usb", id) => continue,
            _ => format!("USB device mapping not found for '{id}'"),
        };
        return Some(words);
    }
    None
}

/// Virtiofs.pm `assert_virtiofs_config` for each `virtiofsN` (Dir.pm `find_on_current_node`,
/// then `assert_valid` through `check-node`'s errors); the Windows ACL check between them is
/// `values::command::virtiofs`'s.
pub fn start_dirs(
    config: &BTreeMap<String, String>,
    node: &str,
    maps: &Mappings,
    visible: &dyn Fn(&str, &str) -> bool,
) -> Option<String> {
    for i in 0..10 {
        let Some(id) = config.get(&format!("virtiofs{i}")).and_then(|v| prop(v, "dirid", true)) else { continue };
        let Some(m) = maps.get(&("dir", id.to_string())) else {
            if visible("dir", id) {
                return Some(format!("Directory ID {id} does not exist."));
            }
            continue;
        };
        let entries = on_node(m, node);
        if entries.len() > 1 {
            return Some(format!("More than than one directory mapping for node {node}."));
        } else if entries.is_empty() {
            return Some(format!("No directory mapping for node {node}."));
        } else if let Some(err) = m.errors.first() {
            return Some(format!("directory mapping invalid: {err}"));
        }
    }
    None
}

/// PVE's words when a start on `node` finds no entry of mapping `id` of `kind` for it: PCI.pm
/// `parse_hostpci` and USB.pm `parse_usb_device` say the same of a mapping that does not exist;
/// Dir.pm `find_on_current_node` tells the two apart, and a directory a config names (written
/// with `Mapping.Use` on it, API2/Qemu.pm `check_dir_perm`) is taken to exist. A check run that cannot
/// see the mapping names these words as the refusal PVE may give (§52).
pub fn start_not_found(kind: &str, id: &str, node: &str) -> String {
    match kind {
        "pci" => format!("PCI device mapping not found for '{id}'"),
        "usb" => format!("USB device mapping not found for '{id}'"),
        _ => format!("No directory mapping for node {node}."),
    }
}

/// PVE's words when mapping `id` of `kind` has no entry for `target` (QemuMigrate.pm `prepare`):
/// each key of `config` that names it is missing there. A check run that cannot see the mapping
/// names these words as the refusal PVE may give (§52).
pub fn migrate_not_found(config: &BTreeMap<String, String>, kind: &str, id: &str, target: &str) -> String {
    let keys: Vec<&str> = config
        .iter()
        .filter(|(k, v)| named(k, v).is_some_and(|(nk, nid)| nk == kind && nid == id))
        .map(|(k, _)| k.as_str())
        .collect();
    format!("can't migrate to '{target}': missing mapped devices {}", keys.join(", "))
}

/// QemuMigrate.pm `prepare` after the local devices (`migration::local_devices`): each mapped
/// device with no entry for `target` (`check_local_resources`' `$missing_mappings_by_node`),
/// then, for a running VM, each mapped device but a `live-migration-capable` PCI mapping, as
/// `<key>:<id>` in the keys' order. A mapping that does not exist makes Perl die on its missing
/// entry list; one this user cannot see (`visible`) is left out.
pub fn migrate(
    config: &BTreeMap<String, String>,
    target: &str,
    running: bool,
    maps: &Mappings,
    visible: &dyn Fn(&str, &str) -> bool,
) -> Option<String> {
    let mut missing = Vec::new();
    let mut not_live = Vec::new();
    for (key, value) in config {
        let Some((kind, id)) = named(key, value) else { continue };
        let Some(m) = maps.get(&(kind, id.clone())) else {
            if visible(kind, &id) {
                return Some("Can't use an undefined value as an ARRAY reference".into());
            }
            continue;
        };
        if on_node(m, target).is_empty() {
            missing.push(key.clone());
        }
        if !(kind == "pci" && m.live) {
            not_live.push(format!("{key}:{id}"));
        }
    }
    if !missing.is_empty() {
        return Some(format!("can't migrate to '{target}': missing mapped devices {}", missing.join(", ")));
    }
    (running && !not_live.is_empty())
        .then(|| format!("can't live migrate running VM which uses following mapped devices: {}", not_live.join(", ")))
}

#[cfg(test)]
mod tests;
