//! Every write read back: after a task's last write, the config PVE stored compared, key by key, with the config the task predicted; a difference fails the task naming each key (docs/pve-semantics.md §46).
//!
//! Only the keys the task touched are compared (those whose predicted value differs from the
//! config it was planned from; every predicted key of a new VM): a key PVE adds on its own (a
//! create's `boot`, `digest`) is not the task's. A value marked `(known after apply)`, whole or
//! in a property-string field, matches whatever PVE stored; property strings are compared
//! semantically (`PropertyString::differences`), and a drive's volume name and `size=` are PVE's
//! to choose (the volume must still be on the predicted storage).

use std::collections::{BTreeMap, BTreeSet};

use crate::check::unknown::KNOWN_AFTER_APPLY;
use crate::error::{Error, Result};
use crate::pve::config::VmConfig;
use crate::pve::devices::{format_for_key, is_disk_key, parse_new_disk, volume_storage};
use crate::pve::propstring::{parse_boolean, PropertyString};

/// Keys never compared: `digest` and `lock` follow any write, and PVE shows `cipassword` masked
/// (§29.5).
const NOT_COMPARED: &[&str] = &["digest", "lock", "cipassword"];

/// One key PVE stored otherwise than the task predicted (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub key: String,
    pub predicted: Option<String>,
    pub stored: Option<String>,
}

/// The keys the task touched whose stored value (pending included) is not the predicted one.
/// `before`: the config the task was planned from (`None`: a new VM).
pub fn mismatches(before: Option<&VmConfig>, predicted: &VmConfig, stored: &VmConfig) -> Vec<Mismatch> {
    let before: BTreeMap<String, String> = before.map(VmConfig::effective).unwrap_or_default();
    let (p, s) = (predicted.effective(), stored.effective());
    let touched: BTreeSet<&String> = p.keys().chain(before.keys()).filter(|k| p.get(*k) != before.get(*k)).collect();
    touched
        .into_iter()
        .filter(|k| !NOT_COMPARED.contains(&k.as_str()))
        .filter(|k| !value_matches(k, p.get(*k), s.get(*k)))
        .map(|k| Mismatch { key: k.clone(), predicted: p.get(k).cloned(), stored: s.get(k).cloned() })
        .collect()
}

/// `Ok` when PVE stored what the task predicted; else the task's failure, naming each key with
/// its predicted and stored value (`what`: the VM, `VM 100`). The writes stay made: the protocol
/// lists them as accepted, and the task is changed.
pub fn verify(what: &str, before: Option<&VmConfig>, predicted: &VmConfig, stored: &VmConfig) -> Result<()> {
    let found = mismatches(before, predicted, stored);
    if found.is_empty() {
        return Ok(());
    }
    let show = |v: &Option<String>| v.as_ref().map_or_else(|| "(absent)".to_string(), |v| format!("'{v}'"));
    let keys: Vec<String> = found
        .iter()
        .map(|m| format!("{}: predicted {}, stored {}", m.key, show(&m.predicted), show(&m.stored)))
        .collect();
    Err(Error::failed(format!(
        "Proxmox VE stored a config for {what} other than this task predicted (inconsistent result after apply): {}. \
         The writes were made (accepted_writes lists them); the prediction, its --check and its diff are wrong for these keys",
        keys.join("; ")
    )))
}

/// Whether a stored value is the predicted one.
fn value_matches(key: &str, predicted: Option<&String>, stored: Option<&String>) -> bool {
    match (predicted, stored) {
        (None, None) => true,
        (Some(p), Some(s)) => p == s || same_value(key, p, s),
        _ => false,
    }
}

fn same_value(key: &str, p: &str, s: &str) -> bool {
    if let Some(format) = format_for_key(key) {
        if let (Ok(pp), Ok(sp)) = (PropertyString::parse_lenient(format, p), PropertyString::parse_lenient(format, s)) {
            return pp.differences(&sp).iter().all(|field| field_is_pves(key, field, &pp, &sp));
        }
    }
    if key == "tags" {
        // lower-cased and sorted unless the datacenter's `tag-style` says otherwise (§20.6), which
        // the modules do not read
        let set = |v: &str| {
            v.split([';', ',', ' ']).filter(|t| !t.is_empty()).map(str::to_lowercase).collect::<BTreeSet<_>>()
        };
        return set(p) == set(s);
    }
    wildcard(p, s) || scalar_equal(p, s)
}

/// A property-string field that differs but is not the task's to decide: marked known after
/// apply, or a drive's volume name on the predicted storage, or the `size=` PVE sets.
fn field_is_pves(key: &str, field: &str, p: &PropertyString, s: &PropertyString) -> bool {
    let (pv, sv) = (p.get(field), s.get(field));
    if let (Some(pv), Some(sv)) = (pv, sv) {
        if wildcard(pv, sv) {
            return true;
        }
    }
    if !is_disk_key(key) {
        return false;
    }
    match field {
        "file" => {
            let predicted_storage = pv.and_then(|v| volume_storage(v).or_else(|| parse_new_disk(v)?.0));
            predicted_storage.is_some() && predicted_storage == sv.and_then(volume_storage)
        }
        "size" => pv.is_none() || pv.is_some_and(|v| v.contains(KNOWN_AFTER_APPLY)),
        _ => false,
    }
}

/// `pattern` with each `(known after apply)` matching any text.
fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split(KNOWN_AFTER_APPLY).collect();
    if parts.len() < 2 {
        return false;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) || text.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// Two scalars PVE reads the same: numbers (`2` / `2.0`), booleans (`1` / `true`).
fn scalar_equal(p: &str, s: &str) -> bool {
    if let (Ok(a), Ok(b)) = (p.trim().parse::<f64>(), s.trim().parse::<f64>()) {
        return a == b;
    }
    matches!((parse_boolean(p), parse_boolean(s)), (Some(a), Some(b)) if a == b) || p.trim_end() == s.trim_end()
}

#[cfg(test)]
mod tests;
