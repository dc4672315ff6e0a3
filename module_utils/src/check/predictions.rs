//! The run-wide predictions of check mode: what earlier tasks of the same `ansible-playbook --check` run predicted.
//!
//! Without it, a dry run of a build playbook reasons about a world without the VM its first task
//! would create: every later task fails ("VM does not exist") or predicts the wrong change. So in
//! check mode a module that predicts a change records the VM as it would be afterwards, and every
//! module reads VMs through this plan: a predicted VM counts as existing with its predicted config,
//! a VM predicted removed counts as gone.
//!
//! Where: the module never touches a file for it. The action plugin (plugins/plugin_utils/native.py)
//! keeps the run's predictions on the controller, in a directory of ansible-core's per-run local
//! temp dir, hands every one of them to the task in its arguments (`_ferro_check_plan`, only in
//! check mode) and stores what the task records, which the module returns as
//! `_ferro_check_plan_recorded` (`protocol.rs`). So the predictions reach the module however
//! Ansible runs it: directly, as another user (`become`), or copied through the connection to
//! another host, and only the controller's own user ever reads or writes the directory.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// The key that marks, in a listed resource's raw fields, a VM an earlier task of a check run would
/// create: internal to check mode, never part of a module's result.
pub const PREDICTED_MARK: &str = "_predicted";

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::config::VmConfig;
use crate::pve::resources::VmResource;

/// One VM as a check-mode task predicted it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictedVm {
    pub vmid: u64,
    pub name: Option<String>,
    pub node: String,
    pub status: String,
    pub template: bool,
    /// Predicted removed: later tasks see no VM with this id.
    pub removed: bool,
    /// Whether the VM exists in Proxmox VE (false: only an earlier task's prediction).
    pub exists: bool,
    pub current: BTreeMap<String, String>,
    pub pending: BTreeMap<String, String>,
    pub pending_delete: BTreeMap<String, bool>,
    /// The power state `status/current` would report after the predicted tasks (`running`,
    /// `stopped`, `paused`, `hibernated`), where `status` alone cannot say it: a paused VM is
    /// listed as running, a hibernated one as stopped (docs/pve-semantics.md §37.1). `None`: as
    /// `status` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<String>,
    /// The space the run's predicted tasks allocate for this VM where the storage reserves it
    /// (`pve::preflight::Reserved::key` -> bytes), which a later task's space check subtracts
    /// from what PVE reports free (docs/pve-semantics.md §37.3).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reserved: BTreeMap<String, u64>,
    /// The space the run's predicted removals of this VM's existing volumes hand back where the
    /// storage reserves it (same keys -> volume id -> bytes: a volume freed twice counts once),
    /// which a later task's space check adds to what PVE reports free (docs/pve-semantics.md
    /// §40.1). Kept when the VM is predicted removed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub freed: BTreeMap<String, BTreeMap<String, u64>>,
    /// The pool a predicted pool move puts the VM in (`None`: the pool PVE lists), which later
    /// tasks see in `/cluster/resources` (`overlay`), so that they plan from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
}

impl PredictedVm {
    pub fn config(&self) -> VmConfig {
        VmConfig {
            current: self.current.clone(),
            pending: self.pending.clone(),
            pending_delete: self.pending_delete.clone(),
            digest: None,
        }
    }

    /// The power state as `GET .../status/current` would answer it (`status`, `qmpstatus` and
    /// the config's `lock`; a hibernated VM is stopped with `lock: suspended`, qemu-server
    /// RunState.pm `vm_suspend`), for the tasks that read it.
    pub fn status_current(&self) -> Value {
        let power = self.power.as_deref().unwrap_or(&self.status);
        let (status, qmpstatus) = match power {
            "running" => ("running", "running"),
            "paused" => ("running", "paused"),
            _ => ("stopped", "stopped"),
        };
        let mut out = Map::new();
        out.insert("status".into(), Value::from(status));
        out.insert("qmpstatus".into(), Value::from(qmpstatus));
        // a hibernation's prediction holds `lock: suspended` in its config (proxmox_kvm's plan)
        if let Some(lock) = self.current.get("lock") {
            out.insert("lock".into(), Value::from(lock.as_str()));
        }
        Value::Object(out)
    }

    /// The VM as `/cluster/resources` would list it.
    pub fn resource(&self) -> VmResource {
        let mut raw = Map::new();
        raw.insert("vmid".into(), Value::from(self.vmid));
        raw.insert("id".into(), Value::from(format!("qemu/{}", self.vmid)));
        raw.insert("type".into(), Value::from("qemu"));
        raw.insert("node".into(), Value::from(self.node.clone()));
        raw.insert("status".into(), Value::from(self.status.clone()));
        raw.insert("template".into(), Value::from(u8::from(self.template)));
        if let Some(n) = &self.name {
            raw.insert("name".into(), Value::from(n.clone()));
        }
        VmResource {
            vmid: self.vmid,
            name: self.name.clone(),
            node: self.node.clone(),
            kind: "qemu".into(),
            status: self.status.clone(),
            template: self.template,
            lock: self.current.get("lock").cloned(),
            raw,
        }
    }

    /// A VM a check-mode task would create (or clone): stopped, not yet in Proxmox VE, with
    /// `config`'s current values and nothing pending.
    pub fn created(vmid: u64, name: Option<String>, node: &str, config: &VmConfig) -> PredictedVm {
        PredictedVm {
            vmid,
            name,
            node: node.to_string(),
            status: "stopped".into(),
            template: config.get("template").is_some_and(|t| t == "1"),
            removed: false,
            exists: false,
            current: config.current.clone(),
            pending: BTreeMap::new(),
            pending_delete: BTreeMap::new(),
            power: None,
            reserved: BTreeMap::new(),
            freed: BTreeMap::new(),
            pool: None,
        }
    }

    /// A prediction for an existing VM whose config a check-mode task changed.
    pub fn of(vm: &VmResource, config: &VmConfig) -> PredictedVm {
        PredictedVm {
            vmid: vm.vmid,
            name: vm.name.clone(),
            node: vm.node.clone(),
            status: vm.status.clone(),
            template: vm.template,
            removed: false,
            exists: !vm.raw.contains_key(PREDICTED_MARK),
            current: config.current.clone(),
            pending: config.pending.clone(),
            pending_delete: config.pending_delete.clone(),
            power: None,
            reserved: BTreeMap::new(),
            freed: BTreeMap::new(),
            pool: None,
        }
    }
}

/// The predictions of this check-mode run: those the earlier tasks made, as the action plugin
/// handed them to this task, and those this task records. Clones share one store, so what a
/// module records through its `World` is what `protocol.rs` returns.
#[derive(Debug, Clone, Default)]
pub struct Predictions {
    store: Rc<RefCell<Store>>,
}

#[derive(Debug, Default)]
struct Store {
    vms: BTreeMap<u64, PredictedVm>,
    recorded: BTreeSet<u64>,
}

impl Predictions {
    /// The run's predictions from the task's `_ferro_check_plan`: a list of predicted VMs.
    /// Unreadable entries are skipped: a plan is advice for a dry run, never a reason to fail one.
    pub fn from_json(plan: &Value) -> Predictions {
        let vms = plan
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|v| serde_json::from_value::<PredictedVm>(v.clone()).ok())
                    .map(|vm| (vm.vmid, vm))
                    .collect()
            })
            .unwrap_or_default();
        Predictions { store: Rc::new(RefCell::new(Store { vms, recorded: BTreeSet::new() })) }
    }

    /// Record a prediction (replacing an earlier one for the same VM), for the later tasks. What
    /// the new one does not say it keeps from the earlier one: the power state, while the listed
    /// status agrees (a config change leaves a paused VM paused), and the space reserved for the
    /// VM, unless it is predicted removed, and the space its removals freed, always (what a
    /// removal freed stays free when a VM of the same id is created again).
    pub fn record(&self, vm: &PredictedVm) {
        let mut store = self.store.borrow_mut();
        let mut vm = vm.clone();
        if let Some(earlier) = store.vms.get(&vm.vmid).filter(|_| vm.freed.is_empty()) {
            vm.freed = earlier.freed.clone();
        }
        if let Some(earlier) = store.vms.get(&vm.vmid).filter(|_| !vm.removed) {
            if vm.power.is_none() && earlier.status == vm.status {
                vm.power = earlier.power.clone();
            }
            if vm.reserved.is_empty() {
                vm.reserved = earlier.reserved.clone();
            }
            if vm.pool.is_none() {
                vm.pool = earlier.pool.clone();
            }
        }
        store.recorded.insert(vm.vmid);
        store.vms.insert(vm.vmid, vm);
    }

    /// Add `reserved` (storage key, bytes: what a task's new volumes take where the storage
    /// reserves their size) to the prediction of `vmid`, recorded by the same task before.
    pub fn reserve(&self, vmid: u64, reserved: &[(String, u64)]) {
        let mut store = self.store.borrow_mut();
        let Some(vm) = store.vms.get_mut(&vmid) else { return };
        for (key, bytes) in reserved {
            *vm.reserved.entry(key.clone()).or_default() += bytes;
        }
        store.recorded.insert(vmid);
    }

    /// Add `freed` (storage key, volume id, bytes: what a task's predicted removal of existing
    /// volumes hands back) to the prediction of `vmid`, recorded by the same task before.
    pub fn free(&self, vmid: u64, freed: &[(String, String, u64)]) {
        let mut store = self.store.borrow_mut();
        let Some(vm) = store.vms.get_mut(&vmid) else { return };
        for (key, volid, bytes) in freed {
            vm.freed.entry(key.clone()).or_default().insert(volid.clone(), *bytes);
        }
        store.recorded.insert(vmid);
    }

    /// The space the run's predictions take, by storage key: what the predicted VMs (not those
    /// predicted removed) reserve less what the predicted removals free; negative where the
    /// run frees more than it takes.
    pub fn reserved(&self) -> BTreeMap<String, i64> {
        let mut out = BTreeMap::new();
        for vm in self.store.borrow().vms.values() {
            let taken =
                vm.reserved.iter().filter(|_| !vm.removed).map(|(k, b)| (k, i64::try_from(*b).unwrap_or(i64::MAX)));
            let freed = vm.freed.iter().map(|(k, v)| (k, -i64::try_from(v.values().sum::<u64>()).unwrap_or(i64::MAX)));
            for (key, bytes) in taken.chain(freed) {
                let sum: &mut i64 = out.entry(key.clone()).or_default();
                *sum = sum.saturating_add(bytes);
            }
        }
        out
    }

    /// The volume ids the run's predicted removals free: gone from their storages' listings
    /// once the real run has made them (docs/pve-semantics.md §40.2).
    pub fn freed_volumes(&self) -> BTreeSet<String> {
        let store = self.store.borrow();
        store.vms.values().flat_map(|vm| vm.freed.values().flat_map(|v| v.keys().cloned())).collect()
    }

    /// What this task recorded, for the action plugin to keep for the later tasks of the run.
    pub fn recorded(&self) -> Vec<PredictedVm> {
        let store = self.store.borrow();
        store.recorded.iter().filter_map(|vmid| store.vms.get(vmid).cloned()).collect()
    }

    /// Every prediction, by vmid.
    pub fn load(&self) -> BTreeMap<u64, PredictedVm> {
        self.store.borrow().vms.clone()
    }

    /// The prediction for one VM.
    pub fn get(&self, vmid: u64) -> Option<PredictedVm> {
        self.store.borrow().vms.get(&vmid).cloned()
    }

    /// The cluster as the earlier tasks of this run predicted it: predicted VMs added (marked
    /// with `_predicted` in `raw`), VMs predicted removed dropped, statuses updated.
    pub fn overlay(&self, vms: Vec<VmResource>) -> Vec<VmResource> {
        let plan = self.load();
        if plan.is_empty() {
            return vms;
        }
        let mut out: Vec<VmResource> = vms
            .into_iter()
            .filter(|v| !plan.get(&v.vmid).is_some_and(|p| p.removed))
            .map(|mut v| {
                if let Some(p) = plan.get(&v.vmid) {
                    v.status = p.status.clone();
                    v.lock = p.current.get("lock").cloned();
                    v.name = p.name.clone().or(v.name);
                    v.template = p.template;
                    if let Some(pool) = &p.pool {
                        v.raw.insert("pool".into(), Value::from(pool.clone()));
                    }
                }
                v
            })
            .collect();
        for p in plan.values().filter(|p| !p.removed && !p.exists) {
            if !out.iter().any(|v| v.vmid == p.vmid) {
                let mut r = p.resource();
                r.raw.insert(PREDICTED_MARK.into(), Value::Bool(true));
                out.push(r);
            }
        }
        crate::pve::resources::sort_by_vmid(&mut out);
        out
    }
}

/// VMs (as predicted, with a plan) and storages, in one `/cluster/resources` read.
pub fn cluster_vms_and_storages(
    api: &dyn Api,
    plan: Option<&Predictions>,
) -> Result<(Vec<VmResource>, Vec<crate::pve::resources::StorageResource>)> {
    let (vms, storages) = crate::pve::resources::cluster_vms_and_storages(api)?;
    let vms = match plan {
        Some(p) => p.overlay(vms),
        None => vms,
    };
    Ok((vms, storages))
}

/// A VM's config: the prediction of an earlier check-mode task if there is one, else PVE's.
pub fn read_config(api: &dyn Api, vm: &VmResource, plan: Option<&Predictions>) -> Result<VmConfig> {
    if let Some(p) = plan.and_then(|p| p.get(vm.vmid)) {
        return Ok(p.config());
    }
    if is_predicted(vm) {
        return Err(Error::Internal(format!("VM {} is predicted but its plan entry is gone", vm.vmid)));
    }
    crate::pve::config::read(api, vm)
}

/// Record a check-mode task's predicted config of a VM for the later tasks of the run.
pub fn record_config(plan: Option<&Predictions>, vm: &VmResource, config: &VmConfig) -> Result<()> {
    if let Some(p) = plan {
        p.record(&PredictedVm::of(vm, config));
    }
    Ok(())
}

/// Whether this resource exists only as a check-mode prediction.
pub fn is_predicted(vm: &VmResource) -> bool {
    vm.raw.contains_key(PREDICTED_MARK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn predicted(vmid: u64) -> PredictedVm {
        PredictedVm {
            vmid,
            name: Some("new".into()),
            node: "pve1".into(),
            status: "stopped".into(),
            template: false,
            removed: false,
            exists: false,
            current: [("cores".to_string(), "2".to_string())].into_iter().collect(),
            pending: BTreeMap::new(),
            pending_delete: BTreeMap::new(),
            power: None,
            reserved: BTreeMap::new(),
            freed: BTreeMap::new(),
            pool: None,
        }
    }

    #[test]
    fn a_predicted_pool_move_is_listed_and_outlives_later_config_changes() {
        let plan = Predictions::default();
        let real = VmResource::from_json(
            &json!({"vmid": 100, "name": "web", "node": "pve1", "type": "qemu", "status": "running", "pool": "db"}),
        )
        .unwrap();
        plan.record(&PredictedVm { pool: Some("web".into()), ..PredictedVm::of(&real, &VmConfig::default()) });
        plan.record(&PredictedVm::of(&real, &VmConfig::default()));
        let vms = plan.overlay(vec![real]);
        assert_eq!(crate::pve::pools::pool_of(&vms[0]), Some("web"));
    }

    #[test]
    fn recorded_vm_appears_in_the_cluster_and_removed_one_disappears() {
        let plan = Predictions::default();
        let real = VmResource::from_json(
            &json!({"vmid": 100, "name": "web", "node": "pve1", "type": "qemu", "status": "running"}),
        )
        .unwrap();
        plan.record(&predicted(105));
        let vms = plan.overlay(vec![real.clone()]);
        assert_eq!(vms.iter().map(|v| v.vmid).collect::<Vec<_>>(), vec![100, 105]);
        assert!(is_predicted(&vms[1]) && !is_predicted(&vms[0]));
        assert_eq!(plan.get(105).unwrap().config().get("cores"), Some("2"));

        let mut gone = PredictedVm::of(&real, &VmConfig::default());
        gone.removed = true;
        plan.record(&gone);
        assert_eq!(plan.overlay(vec![real]).iter().map(|v| v.vmid).collect::<Vec<_>>(), vec![105]);
    }

    #[test]
    fn the_plan_handed_in_is_read_and_only_this_tasks_records_go_back() {
        let handed = json!([predicted(105), {"vmid": "not a prediction"}, predicted(106)]);
        let plan = Predictions::from_json(&handed);
        assert_eq!(plan.load().keys().copied().collect::<Vec<_>>(), vec![105, 106]);
        assert!(plan.recorded().is_empty());
        // A clone (the World's) records into the same store.
        let mut changed = predicted(106);
        changed.current.insert("cores".into(), "4".into());
        plan.clone().record(&changed);
        assert_eq!(plan.recorded(), vec![changed.clone()]);
        assert_eq!(plan.get(106), Some(changed));
        assert!(Predictions::from_json(&json!("junk")).load().is_empty());
        assert!(Predictions::default().get(1).is_none());
    }

    #[test]
    fn a_predicted_power_state_reads_as_status_current_and_outlives_later_config_changes() {
        let plan = Predictions::default();
        let mut paused = predicted(105);
        paused.status = "running".into();
        paused.power = Some("paused".into());
        plan.record(&paused);
        assert_eq!(plan.get(105).unwrap().status_current(), json!({"status": "running", "qmpstatus": "paused"}));
        // a later task changes the config of the VM listed as running: it stays paused
        let mut changed = predicted(105);
        changed.status = "running".into();
        changed.current.insert("cores".into(), "4".into());
        plan.record(&changed);
        assert_eq!(plan.get(105).unwrap().power.as_deref(), Some("paused"));
        // a prediction whose listed status differs does not inherit it
        plan.record(&predicted(105));
        assert_eq!(plan.get(105).unwrap().status_current(), json!({"status": "stopped", "qmpstatus": "stopped"}));
        // hibernated: stopped, with the lock vm_suspend writes (proxmox_kvm's plan puts it in
        // the predicted config)
        let mut hibernated = predicted(106);
        hibernated.power = Some("hibernated".into());
        hibernated.current.insert("lock".into(), "suspended".into());
        assert_eq!(
            hibernated.status_current(),
            json!({"status": "stopped", "qmpstatus": "stopped", "lock": "suspended"})
        );
        let mut running = predicted(107);
        running.status = "running".into();
        assert_eq!(running.status_current(), json!({"status": "running", "qmpstatus": "running"}));
    }

    #[test]
    fn the_space_a_prediction_reserves_is_summed_kept_and_freed_with_the_vm() {
        let plan = Predictions::default();
        plan.record(&predicted(105));
        plan.reserve(105, &[("pve1/san".into(), 6), ("shared".into(), 1)]);
        plan.record(&predicted(106));
        plan.reserve(106, &[("pve1/san".into(), 3)]);
        plan.reserve(999, &[("pve1/san".into(), 100)]); // no prediction: nothing
        assert_eq!(plan.reserved(), [("pve1/san".to_string(), 9), ("shared".to_string(), 1)].into());
        // a later record of the VM keeps what it reserved; the action plugin hands it on
        plan.record(&predicted(105));
        assert_eq!(plan.reserved().get("pve1/san"), Some(&9));
        let handed = Predictions::from_json(&serde_json::to_value(plan.recorded()).unwrap());
        assert_eq!(handed.reserved(), plan.reserved());
        // a VM predicted removed reserves nothing
        let mut gone = predicted(105);
        gone.removed = true;
        plan.record(&gone);
        assert_eq!(plan.reserved(), [("pve1/san".to_string(), 3)].into());
    }

    #[test]
    fn what_a_removal_frees_counts_once_is_kept_and_leaves_the_listings() {
        let plan = Predictions::default();
        plan.record(&predicted(105));
        plan.reserve(105, &[("pve1/san".into(), 3)]);
        // VM 110 exists with a 6-byte volume; its removal frees it (twice named: counted once)
        let mut gone = predicted(110);
        gone.removed = true;
        plan.record(&gone);
        plan.free(110, &[("pve1/san".into(), "san:vm-110-disk-0".into(), 6)]);
        plan.free(110, &[("pve1/san".into(), "san:vm-110-disk-0".into(), 6)]);
        assert_eq!(plan.reserved(), [("pve1/san".to_string(), -3)].into());
        // a VM of the same id created again: the space stays freed, and the handed-on plan says so
        plan.record(&predicted(110));
        plan.reserve(110, &[("pve1/san".into(), 2)]);
        assert_eq!(plan.reserved(), [("pve1/san".to_string(), -1)].into());
        let handed = Predictions::from_json(&serde_json::to_value(plan.recorded()).unwrap());
        assert_eq!(handed.reserved(), plan.reserved());
        assert_eq!(handed.freed_volumes(), ["san:vm-110-disk-0".to_string()].into());
    }
}
