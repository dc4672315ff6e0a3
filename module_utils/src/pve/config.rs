//! A VM's configuration as PVE holds it: the applied values, the pending ones, and what applies
//! when, read in one call (`GET .../pending`) and written with `PUT .../config`.
//!
//! Why `/pending` and not `/config`: `GET .../config` overlays pending values, so a module that
//! reads only that view cannot tell "applied" from "waiting for a reboot" (docs/pve-semantics.md §7).
//! `/pending` gives both in one read, plus the `digest` we send back with a write so a concurrent
//! change fails with PVE's checksum error instead of being overwritten.
//!
//! Concurrent writers (two playbooks changing different disks of one VM): a write refused for a
//! digest conflict changed nothing, so `retry_on_conflict` reads the config again, plans again from
//! that fresh read and writes again, a bounded number of times with jittered pauses. A write is
//! never sent with a digest other than the one of the config its plan was made from.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::devices::config_value_text;
use crate::pve::request::{form, Form};
use crate::pve::resources::VmResource;

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

    /// A config with no pending section from `key: value` pairs (tests and benches write configs so).
    pub fn from_pairs(pairs: &[(&str, &str)]) -> VmConfig {
        VmConfig::from_current(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
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

/// Read a VM's config with its pending section: one `GET .../pending`.
pub fn read(api: &dyn Api, vm: &VmResource) -> Result<VmConfig> {
    let data = api
        .get(&vm.path().join(["pending"]), &Vec::new())
        .map_err(|e| e.context(&format!("reading the configuration of VM {}", vm.vmid)))?;
    VmConfig::from_pending(&data)
}

/// The config of `vm`'s snapshot `snapname` (`GET .../config?snapshot=`, Qemu.pm `vm_config`),
/// which is what `clone_vm` copies when a clone names a snapshot (§37.2): a snapshot has no
/// pending section.
pub fn read_snapshot(api: &dyn Api, vm: &VmResource, snapname: &str) -> Result<VmConfig> {
    let data = api
        .get(&vm.path().join(["config"]), &form([("snapshot", snapname)]))
        .map_err(|e| e.context(&format!("reading snapshot {snapname} of VM {}", vm.vmid)))?;
    let object = data.as_object().ok_or_else(|| Error::Internal("GET .../config did not answer an object".into()))?;
    let mut cfg = VmConfig::default();
    for (key, value) in object {
        let Some(text) = config_value_text(value) else { continue };
        if key == "digest" {
            cfg.digest = Some(text);
        } else {
            cfg.current.insert(key.clone(), text);
        }
    }
    Ok(cfg)
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

/// PVE's words for "the config changed since you read it": `checksum mismatch (file change by
/// other user?)` from qemu-server Qemu.pm `update_vm_api` (PUT and POST config, also inside the
/// `qmconfig` task) and `resize_vm`; `detected modified configuration - file changed by other
/// user? Try again.` from pve-common Tools.pm `assert_if_modified` (move_disk).
const DIGEST_CONFLICT: [&str; 2] = ["checksum mismatch (file change by other user?)", "file changed by other user?"];

/// How many times one write is tried when each try meets a digest conflict.
pub const CONFLICT_ATTEMPTS: u32 = 8;

/// Whether PVE refused a write because the config changed after it was read. Both checks run
/// before qemu-server changes anything, so such a write changed nothing.
pub fn is_digest_conflict(e: &Error) -> bool {
    let text = match e {
        Error::Api { status: 500, message, .. } => message,
        Error::TaskFailed { exitstatus, .. } => exitstatus,
        _ => return false,
    };
    DIGEST_CONFLICT.iter().any(|w| text.contains(w))
}

/// Plan and write from `first`; while PVE answers a digest conflict, read the config again and
/// plan and write again from that fresh read (at most `CONFLICT_ATTEMPTS` tries, with growing,
/// jittered pauses so that two writers fall out of step). A conflict that persists fails with
/// PVE's message. `attempt` gets the config to plan from and must send its digest.
pub fn retry_on_conflict<T>(
    api: &dyn Api,
    vm: &VmResource,
    first: VmConfig,
    attempt: impl FnMut(&VmConfig) -> Result<T>,
) -> Result<T> {
    retry_with_pauses(api, vm, first, conflict_pause, attempt)
}

fn retry_with_pauses<T>(
    api: &dyn Api,
    vm: &VmResource,
    first: VmConfig,
    pause: fn(u32) -> Duration,
    mut attempt: impl FnMut(&VmConfig) -> Result<T>,
) -> Result<T> {
    let mut config = first;
    let mut tries = 1;
    loop {
        match attempt(&config) {
            Err(e) if is_digest_conflict(&e) => {
                // The refused task wrote nothing: it is not a change of this run.
                if let (Error::TaskFailed { upid, .. }, Some(journal)) = (&e, api.journal()) {
                    journal.changed_nothing(upid);
                }
                if tries >= CONFLICT_ATTEMPTS {
                    return Err(e.context(&format!(
                        "the configuration of VM {} kept changing while this task wrote it ({tries} tries)",
                        vm.vmid
                    )));
                }
                std::thread::sleep(pause(tries));
                config = read(api, vm)?;
                tries += 1;
            }
            other => return other,
        }
    }
}

/// The pause before try `n + 1`: 50 ms doubling up to 800 ms, plus up to as much again at random.
fn conflict_pause(n: u32) -> Duration {
    let base = 50u64 << n.saturating_sub(1).min(4);
    let mut h = RandomState::new().build_hasher();
    h.write_u32(n);
    Duration::from_millis(base + h.finish() % base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pve::client::testing::ScriptedApi;
    use crate::pve::request::Method;
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

    fn vm100() -> VmResource {
        VmResource::from_json(&json!({"vmid": 100, "node": "pve1", "type": "qemu", "status": "running"})).unwrap()
    }

    fn no_pause(_: u32) -> Duration {
        Duration::ZERO
    }

    #[test]
    fn conflict_pauses_grow_and_stay_bounded() {
        for n in 1..CONFLICT_ATTEMPTS {
            let base = 50u64 << n.saturating_sub(1).min(4);
            let p = conflict_pause(n).as_millis() as u64;
            assert!((base..2 * base).contains(&p), "try {n}: {p} ms");
        }
    }

    fn conflict() -> Error {
        Error::Api {
            method: "PUT".into(),
            path: "/nodes/pve1/qemu/100/config".into(),
            status: 500,
            message: "checksum mismatch (file change by other user?)".into(),
        }
    }

    #[test]
    fn digest_conflicts_are_recognised_in_every_wording() {
        assert!(is_digest_conflict(&conflict()));
        assert!(is_digest_conflict(&conflict().context("Unable to change nic net1")));
        let task = Error::TaskFailed {
            upid: "UPID:x".into(),
            exitstatus: "checksum mismatch (file change by other user?)".into(),
            log_tail: vec![],
            context: String::new(),
        };
        assert!(is_digest_conflict(&task));
        let moved = Error::Api {
            method: "POST".into(),
            path: "/nodes/pve1/qemu/100/move_disk".into(),
            status: 500,
            message: "detected modified configuration - file changed by other user? Try again.".into(),
        };
        assert!(is_digest_conflict(&moved));
        assert!(!is_digest_conflict(&Error::failed("checksum mismatch (file change by other user?)")));
        assert!(!is_digest_conflict(&Error::Api {
            method: "PUT".into(),
            path: "/x".into(),
            status: 500,
            message: "VM is locked (backup)".into()
        }));
    }

    #[test]
    fn a_conflict_replans_from_a_fresh_read() {
        let api = ScriptedApi::default();
        api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(json!([{"key": "digest", "value": "d2"}])));
        let mut seen = Vec::new();
        let first = VmConfig { digest: Some("d1".into()), ..Default::default() };
        let result = retry_with_pauses(&api, &vm100(), first, no_pause, |c| {
            seen.push(c.digest.clone().unwrap_or_default());
            if seen.len() == 1 {
                Err(conflict())
            } else {
                Ok(seen.len())
            }
        });
        assert_eq!(result, Ok(2));
        assert_eq!(seen, ["d1", "d2"]);
    }

    #[test]
    fn a_task_refused_for_a_conflict_is_no_change_of_the_run() {
        let api = ScriptedApi::default();
        api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(json!([{"key": "digest", "value": "d2"}])));
        let upid = "UPID:pve1:00000001:00000007:65F00000:qmconfig:100:u@pve:";
        let mut tries = 0;
        let result = retry_with_pauses(&api, &vm100(), VmConfig::default(), no_pause, |_| {
            tries += 1;
            if tries == 1 {
                api.journal.accepted("POST", "/nodes/pve1/qemu/100/config", &["scsi1"], &json!(upid));
                return Err(Error::TaskFailed {
                    upid: upid.into(),
                    exitstatus: "checksum mismatch (file change by other user?)".into(),
                    log_tail: vec![],
                    context: String::new(),
                });
            }
            Ok(())
        });
        assert_eq!(result, Ok(()));
        assert!(!api.journal.changed(), "{:?}", api.journal.lines());
    }

    #[test]
    fn a_persistent_conflict_fails_with_pves_message_and_other_errors_are_not_retried() {
        let api = ScriptedApi::default();
        for _ in 0..CONFLICT_ATTEMPTS {
            api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(json!([{"key": "digest", "value": "d"}])));
        }
        let mut tries = 0;
        let e = retry_with_pauses(&api, &vm100(), VmConfig::default(), no_pause, |_| -> Result<()> {
            tries += 1;
            Err(conflict())
        })
        .unwrap_err();
        assert_eq!(tries, CONFLICT_ATTEMPTS);
        assert!(e.to_string().contains("checksum mismatch (file change by other user?)"), "{e}");
        assert!(e.to_string().contains("kept changing"), "{e}");
        let mut tries = 0;
        let e = retry_with_pauses(&api, &vm100(), VmConfig::default(), no_pause, |_| -> Result<()> {
            tries += 1;
            Err(Error::failed("no"))
        });
        assert_eq!((tries, e), (1, Err(Error::failed("no"))));
    }
}
