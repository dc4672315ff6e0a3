//! The result's views of a VM's config (pure): its keys for the diff, its MACs, its drives' volumes.

use std::collections::BTreeMap;

use module_utils::pve::devices::{format_for_key, is_nic_key, natural_cmp};
use module_utils::pve::propstring::{PropertyString, NET};
use serde_json::{Map, Value};

use super::MASKED;
use crate::params::is_drive_key;

/// The config as the diff shows it, `cipassword` masked.
pub fn config_map(config: &BTreeMap<String, String>) -> Map<String, Value> {
    config
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(if k == "cipassword" { MASKED.to_string() } else { v.clone() })))
        .collect()
}

/// `netN` → MAC of every NIC that has one.
pub fn macs(config: &BTreeMap<String, String>) -> Map<String, Value> {
    let mut keys: Vec<&String> = config.keys().filter(|k| is_nic_key(k)).collect();
    keys.sort_by(|a, b| natural_cmp(a, b));
    keys.into_iter()
        .filter_map(|k| {
            let nic = PropertyString::parse_lenient(&NET, &config[k]).ok()?;
            Some((k.clone(), Value::String(nic.get("macaddr")?.to_string())))
        })
        .collect()
}

/// Disk key → volume of every drive.
pub fn devices(config: &BTreeMap<String, String>) -> Map<String, Value> {
    let mut keys: Vec<&String> = config.keys().filter(|k| is_drive_key(k)).collect();
    keys.sort_by(|a, b| natural_cmp(a, b));
    keys.into_iter()
        .filter_map(|k| {
            let ps = PropertyString::parse_lenient(format_for_key(k)?, &config[k]).ok()?;
            Some((k.clone(), Value::String(ps.get("file")?.to_string())))
        })
        .collect()
}
