//! What a result shows of a config: its NICs' MACs, its drives' volumes, the config with `cipassword` masked, and the planned config with what PVE resolved.

use std::collections::BTreeMap;

use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{format_for_key, is_nic_key, natural_cmp};
use module_utils::pve::propstring::PropertyString;
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
    field_by_key(config, is_nic_key, "macaddr")
}

/// Disk key → volume of every drive.
pub fn devices(config: &BTreeMap<String, String>) -> Map<String, Value> {
    field_by_key(config, is_drive_key, "file")
}

/// Key → `field` of the property string of every key `is_key` selects that has it, in natural
/// key order (`net2` before `net10`).
fn field_by_key(config: &BTreeMap<String, String>, is_key: fn(&str) -> bool, field: &str) -> Map<String, Value> {
    let mut keys: Vec<&String> = config.keys().filter(|k| is_key(k)).collect();
    keys.sort_by(|a, b| natural_cmp(a, b));
    keys.into_iter()
        .filter_map(|k| {
            let ps = PropertyString::parse_lenient(format_for_key(k)?, &config[k]).ok()?;
            Some((k.clone(), Value::String(ps.get(field)?.to_string())))
        })
        .collect()
}

/// The planned config the diff shows: in a real run, each value the plan could only mark
/// `(known after apply)` is the value PVE gave it (`after`, as read back), and each drive names
/// the volume PVE made, so a real run's diff never shows a volume that does not exist; in a
/// check run `after` is the plan itself, and the marks and predicted names stay.
pub fn resolved(planned: &VmConfig, after: &VmConfig) -> VmConfig {
    let real = after.effective();
    let mut out = planned.clone();
    for side in [&mut out.current, &mut out.pending] {
        for (key, value) in side.iter_mut() {
            let Some(v) = real.get(key) else { continue };
            if super::is_marked(value) {
                *value = v.clone();
            } else if let (Some(predicted), Some(made)) = (drive_volume(key, value), drive_volume(key, v)) {
                if predicted != made {
                    *value = value.replacen(&predicted, &made, 1);
                }
            }
        }
    }
    out
}

/// The volume a drive value names (`None`: not a drive, or no volume: `none`, `cdrom`, a path).
fn drive_volume(key: &str, value: &str) -> Option<String> {
    let ps = PropertyString::parse_lenient(format_for_key(key)?, value).ok()?;
    let file = ps.get("file")?;
    module_utils::pve::volume::Volume::parse(file).map(|_| file.to_string())
}
