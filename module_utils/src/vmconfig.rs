//! A VM's configuration as PVE holds it: the applied values, the pending ones, and what applies
//! when, read in one call (`GET .../pending`) and written with `PUT .../config`.
//!
//! Why `/pending` and not `/config`: `GET .../config` overlays pending values, so a module that
//! reads only that view cannot tell "applied" from "waiting for a reboot" (docs/pve-semantics.md §7).
//! `/pending` gives both in one read, plus the `digest` we send back with a write so a concurrent
//! change fails with PVE's checksum error instead of being overwritten.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::client::{Api, Form};
use crate::error::{Error, Result};
use crate::pveconfig::config_value_text;
use crate::vm::VmResource;

/// The config of one VM with its pending section.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VmConfig {
    /// Applied values (`GET .../config?current=1`).
    pub current: BTreeMap<String, String>,
    /// Values waiting to be applied.
    pub pending: BTreeMap<String, String>,
    /// Keys waiting to be deleted (`true` when forced: the volume will be freed).
    pub pending_delete: BTreeMap<String, bool>,
    pub digest: Option<String>,
}

impl VmConfig {
    /// Parse the answer of `GET .../pending` (GuestHelpers.pm `config_with_pending_array`).
    pub fn from_pending(data: &Value) -> Result<VmConfig> {
        let items = data.as_array().ok_or_else(|| Error::Internal("GET .../pending did not answer a list".into()))?;
        let mut cfg = VmConfig::default();
        for item in items {
            let Some(key) = item.get("key").and_then(Value::as_str) else { continue };
            let value = item.get("value").and_then(config_value_text);
            if key == "digest" {
                cfg.digest = value;
                continue;
            }
            if let Some(v) = value {
                cfg.current.insert(key.to_string(), v);
            }
            if let Some(p) = item.get("pending").and_then(config_value_text) {
                cfg.pending.insert(key.to_string(), p);
            }
            match item.get("delete").and_then(|d| d.as_u64().or_else(|| d.as_str()?.parse().ok())) {
                Some(1) => {
                    cfg.pending_delete.insert(key.to_string(), false);
                }
                Some(2) => {
                    cfg.pending_delete.insert(key.to_string(), true);
                }
                _ => {}
            }
        }
        Ok(cfg)
    }

    /// A config with no pending section (a plan's prediction of a stopped VM, a test).
    pub fn from_current(current: BTreeMap<String, String>) -> VmConfig {
        VmConfig { current, ..Default::default() }
    }

    /// The config as it will be once pending changes apply (what `GET .../config` shows).
    pub fn effective(&self) -> BTreeMap<String, String> {
        let mut out = self.current.clone();
        for (k, v) in &self.pending {
            out.insert(k.clone(), v.clone());
        }
        for k in self.pending_delete.keys() {
            out.remove(k);
        }
        out
    }

    /// The effective value of one key.
    pub fn get(&self, key: &str) -> Option<&str> {
        if self.pending_delete.contains_key(key) {
            return None;
        }
        self.pending.get(key).or_else(|| self.current.get(key)).map(String::as_str)
    }

    /// Whether `key` has a change waiting for the next start (a value or a delete).
    pub fn is_pending(&self, key: &str) -> bool {
        self.pending_delete.contains_key(key) || self.pending.get(key).is_some_and(|p| self.current.get(key) != Some(p))
    }

    /// Keys with a change waiting for the next start.
    pub fn pending_keys(&self) -> BTreeSet<String> {
        self.pending.keys().chain(self.pending_delete.keys()).filter(|k| self.is_pending(k)).cloned().collect()
    }

    /// What the VM hot-plugs when running (`hotplug`; unset = `network,disk,usb`, §6).
    pub fn hotplug(&self) -> Hotplug {
        Hotplug::parse(self.current.get("hotplug").map(String::as_str))
    }

    /// This config after setting (`Some`) or deleting (`None`) one key, applied at once or left
    /// pending: what a check-mode run predicts PVE will hold after the write.
    pub fn with_change(&self, key: &str, value: Option<&str>, pending: bool) -> VmConfig {
        let mut next = self.clone();
        match (value, pending) {
            (Some(v), false) => {
                next.current.insert(key.to_string(), v.to_string());
                next.pending.remove(key);
                next.pending_delete.remove(key);
            }
            (Some(v), true) => {
                next.pending.insert(key.to_string(), v.to_string());
                next.pending_delete.remove(key);
            }
            (None, false) => {
                next.current.remove(key);
                next.pending.remove(key);
                next.pending_delete.remove(key);
            }
            (None, true) => {
                next.pending.remove(key);
                if next.current.contains_key(key) {
                    next.pending_delete.insert(key.to_string(), false);
                }
            }
        }
        next
    }

    /// The effective config as a JSON map, for diffs and return values.
    pub fn effective_json(&self) -> Map<String, Value> {
        self.effective().into_iter().map(|(k, v)| (k, Value::String(v))).collect()
    }
}

/// The `hotplug` setting of a VM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hotplug(BTreeSet<String>);

impl Hotplug {
    pub fn parse(value: Option<&str>) -> Hotplug {
        let list = match value.map(str::trim) {
            None | Some("") | Some("1") => "network,disk,usb",
            Some("0") => "",
            Some(other) => other,
        };
        Hotplug(list.split([',', ';', ' ']).filter(|s| !s.is_empty()).map(str::to_string).collect())
    }

    pub fn allows(&self, feature: &str) -> bool {
        self.0.contains(feature)
    }
}

/// Read a VM's config with its pending section: one `GET .../pending`.
pub fn read(api: &dyn Api, vm: &VmResource) -> Result<VmConfig> {
    let data = api
        .get(&vm.path().join(["pending"]), &Vec::new())
        .map_err(|e| e.context(&format!("reading the configuration of VM {}", vm.vmid)))?;
    VmConfig::from_pending(&data)
}

/// `PUT .../config` (synchronous in PVE), guarded by the digest of the config the plan was
/// made from.
pub fn write(api: &dyn Api, vm: &VmResource, mut form: Form, digest: Option<&str>) -> Result<()> {
    if let Some(d) = digest {
        form.push(("digest".into(), d.to_string()));
    }
    api.put(&vm.path().join(["config"]), &form)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> VmConfig {
        VmConfig::from_pending(&json!([
            {"key": "digest", "value": "abc123"},
            {"key": "cores", "value": 2, "pending": 4},
            {"key": "net0", "value": "virtio=BC:24:11:00:00:01,bridge=vmbr0"},
            {"key": "net1", "value": "e1000=BC:24:11:00:00:02", "delete": 1},
            {"key": "scsi1", "pending": "local-lvm:vm-100-disk-1,size=4G"},
            {"key": "ide2", "delete": 2},
            {"key": "name", "value": "web", "pending": "web"},
        ]))
        .unwrap()
    }

    #[test]
    fn parses_pending_array_encodings() {
        let c = sample();
        assert_eq!(c.digest.as_deref(), Some("abc123"));
        assert_eq!(c.current.get("cores").map(String::as_str), Some("2"));
        assert_eq!(c.pending.get("cores").map(String::as_str), Some("4"));
        assert_eq!(c.pending_delete.get("net1"), Some(&false));
        assert_eq!(c.pending_delete.get("ide2"), Some(&true));
    }

    #[test]
    fn effective_view_overlays_pending_and_deletes() {
        let c = sample();
        let e = c.effective();
        assert_eq!(e.get("cores").map(String::as_str), Some("4"));
        assert!(!e.contains_key("net1"));
        assert_eq!(e.get("scsi1").map(String::as_str), Some("local-lvm:vm-100-disk-1,size=4G"));
        assert_eq!(c.get("net0"), Some("virtio=BC:24:11:00:00:01,bridge=vmbr0"));
    }

    #[test]
    fn pending_keys_ignore_pending_values_equal_to_current() {
        let c = sample();
        let keys: Vec<String> = c.pending_keys().into_iter().collect();
        assert_eq!(keys, vec!["cores", "ide2", "net1", "scsi1"]);
        assert!(!c.is_pending("name"));
    }

    #[test]
    fn hotplug_defaults() {
        assert!(Hotplug::parse(None).allows("network"));
        assert!(Hotplug::parse(Some("1")).allows("disk"));
        assert!(!Hotplug::parse(Some("0")).allows("network"));
        assert!(!Hotplug::parse(Some("disk,usb")).allows("network"));
        assert!(Hotplug::parse(Some("network,cpu")).allows("cpu"));
    }
}
