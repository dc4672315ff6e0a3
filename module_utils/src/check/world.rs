//! The world a module reads: the cluster's VMs and storages and a VM's config, through the run's predictions in check mode.
//!
//! Every module reads VMs and configs here rather than from `pve::resources` / `pve::config`
//! directly, so that in `--check` a later task plans against what the earlier tasks of the run
//! predicted (a VM they would create exists, one they would remove is gone, a config they would
//! change reads as changed), and outside check mode it reads PVE as it is. Whether a run
//! predicts is decided once, when the world is made: `Context::predictions` is set only in
//! check mode (`protocol.rs`), so a module never asks again.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use serde_json::Value;

use crate::check::predictions::{self, PredictedVm, Predictions};
use crate::check::saved::{Input, Request, SavedTask};
use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::config::VmConfig;
use crate::pve::inflight::InFlight;
use crate::pve::permissions::{Held, Privileges};
use crate::pve::pools::PoolMove;
use crate::pve::preflight::{KnownNodes, NodeState};
use crate::pve::request::{ApiPath, Form, Method};
use crate::pve::resources::{self, StorageResource, VmResource};
use crate::pve::snapshots;

/// How long a module without a `timeout` option waits for the create or clone of the VM it
/// addresses (docs/pve-semantics.md §30): proxmox_kvm's default `timeout`.
pub const DEFAULT_IN_FLIGHT_WAIT: Duration = Duration::from_secs(300);

/// PVE as this task sees it: read through the predictions of the run's earlier check-mode
/// tasks when there are any, straight from PVE otherwise.
pub struct World<'a> {
    api: &'a dyn Api,
    /// `Some` only in check mode (the run's predictions the action plugin handed in).
    predictions: Option<Predictions>,
    /// How long `vms_for` waits for a VM in flight (the task's `timeout`).
    wait: Duration,
    /// `Some` when the run saves a plan (check mode) or applies one (`check::saved`).
    saved: Option<SavedTask>,
    /// The privileges of the user the run authenticates as, when known (`seen_by`): whether it
    /// sees every task of a node tells a stale lock from another user's create (§38).
    privileges: Option<Privileges<'a>>,
    /// The config `on_node` read, handed to the next `config` of that VM on that node (so the
    /// fallback after a one-read task that plans a write reads it once, not twice).
    read_on_node: RefCell<Option<(VmResource, VmConfig)>>,
    /// The nodes the last `/cluster/resources` read listed, for the checks (`known_nodes`).
    nodes: KnownNodes,
}

mod on_node;

impl<'a> World<'a> {
    /// `predictions`: the run's predictions in check mode (`Context::predictions`), else `None`.
    pub fn new(api: &'a dyn Api, predictions: Option<Predictions>) -> World<'a> {
        World {
            api,
            predictions,
            wait: DEFAULT_IN_FLIGHT_WAIT,
            saved: None,
            privileges: None,
            read_on_node: RefCell::new(None),
            nodes: KnownNodes::default(),
        }
    }

    /// The same world, waiting at most `wait` for a VM in flight (the task's `timeout` option).
    pub fn waiting_up_to(self, wait: Duration) -> World<'a> {
        World { wait, ..self }
    }

    /// The same world, for the user `authid` (whose privileges a wait for a VM in flight reads
    /// when no running task of it is visible), read into `held`, the run's one read of them.
    pub fn seen_by(self, authid: &str, held: &Held) -> World<'a> {
        let privileges = Some(Privileges::new(self.api, authid).sharing(held));
        World { privileges, ..self }
    }

    /// The wait for VMs in flight of this world: at most its `wait`, by its user.
    pub fn in_flight(&self) -> InFlight<'_> {
        InFlight::new(self.api, self.wait).seen_by(self.privileges.as_ref())
    }

    /// The cluster's VMs (as predicted) once no VM that `addressed` selects is being created or
    /// cloned: such a VM is half made (its config holds only `lock: create` / `lock: clone`), so
    /// its task is waited for, at most the world's `wait`, and the VMs read again; a task that
    /// does not end in time is an error naming it, before any write, and so is a stale lock (no
    /// task holds it, §38). Check mode waits too: a wait writes nothing, and the check run then
    /// predicts what the real run will find (docs/pve-semantics.md §30).
    pub fn vms_for(&self, addressed: &dyn Fn(&VmResource) -> bool) -> Result<Vec<VmResource>> {
        self.in_flight().settle(addressed, &|| self.vms()).map_err(|e| match e {
            Error::Failed(m) => Error::failed(format!("{m}; nothing was changed")),
            other => other,
        })
    }

    /// `vms_for` the VM a task names by `vmid`, else by `name` (one that may bear it).
    pub fn vms_for_task(&self, vmid: Option<u64>, name: Option<&str>) -> Result<Vec<VmResource>> {
        self.vms_for(&|v| addressed_by(v, vmid, name))
    }

    /// How long this world waits for a VM in flight.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// This world with the run's saved plan (`Context::saved`): every config read is then
    /// recorded in it, and when applying compared with it.
    pub fn saving(mut self, saved: Option<SavedTask>) -> World<'a> {
        self.saved = saved;
        self
    }

    /// The VMs a read-only task selected: recorded in a saved plan, compared with it when
    /// applying (`SavedTask::identities`); nothing otherwise.
    pub fn identities(&self, vms: &[&VmResource]) -> Result<()> {
        match &self.saved {
            Some(saved) => saved.identities(vms),
            None => Ok(()),
        }
    }

    /// Every request the task is about to send, in order, before the first is sent: recorded
    /// when the run saves a plan, compared with the plan's when it applies one
    /// (`SavedTask::writes`); nothing otherwise.
    pub fn writes<'p>(&self, requests: impl IntoIterator<Item = (Method, &'p ApiPath, &'p Form)>) -> Result<()> {
        match &self.saved {
            Some(saved) => saved.writes(requests),
            None => Ok(()),
        }
    }

    /// A pool move the task makes (`pve::pools`), through the saved plan like every write:
    /// reported alone when the task writes nothing else (`alone`), else after the config writes
    /// it follows, compared and recorded with them.
    pub fn pool_move(&self, vm: &VmResource, config: &VmConfig, mv: &PoolMove, alone: bool) -> Result<()> {
        // In a check run the later tasks see the VM in its new pool (and plan from it).
        if let Some(p) = &self.predictions {
            p.record(&PredictedVm { pool: Some(mv.to.clone()), ..PredictedVm::of(vm, config) });
        }
        let (path, form) = (PoolMove::path(), mv.form());
        match &self.saved {
            Some(_) if alone => self.writes([(Method::Put, &path, &form)]),
            Some(saved) => {
                saved.then_writes(vec![Request { method: "PUT".into(), path: path.to_string(), params: form }]);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// A create or clone without a vmid, planned with `vmid`: PVE chooses it when the real run
    /// makes it, so a saved plan holds it as known after apply (`SavedTask::bound_at_apply`).
    pub fn bound_at_apply(&self, vmid: u64) {
        if let Some(saved) = &self.saved {
            saved.bound_at_apply(vmid);
        }
    }

    /// The config of `vm`'s snapshot `snapname` (`config::read_snapshot`), recorded in a saved
    /// plan as an input of the task and compared with it when applying.
    pub fn snapshot_config(&self, vm: &VmResource, snapname: &str) -> Result<VmConfig> {
        let config = crate::pve::config::read_snapshot(self.api, vm, snapname)?;
        if let Some(saved) = &self.saved {
            saved.input(Input::snapshot(vm, snapname, &config))?;
        }
        Ok(config)
    }

    /// A volume the task reads (an import source) as its storage on `node` lists it
    /// (`listed`: volume id -> size), recorded in a saved plan and compared when applying.
    pub fn volume_input(&self, node: &str, volid: &str, listed: &BTreeMap<String, Option<u64>>) -> Result<()> {
        match &self.saved {
            Some(saved) => saved.input(Input::volume(node, volid, listed.get(volid).copied())),
            None => Ok(()),
        }
    }

    /// The client, for the writes and the reads that only `apply` makes.
    pub fn api(&self) -> &'a dyn Api {
        self.api
    }

    /// The cluster's VMs (QEMU and containers), as predicted; the nodes the same read lists go to
    /// `known_nodes` (§66).
    pub fn vms(&self) -> Result<Vec<VmResource>> {
        let (vms, nodes) = resources::cluster_vms_and_nodes(self.api)?;
        if !nodes.is_empty() {
            *self.nodes.borrow_mut() = Some(Rc::new(nodes.iter().filter_map(NodeState::from_json).collect()));
        }
        Ok(match &self.predictions {
            Some(p) => p.overlay(vms),
            None => vms,
        })
    }

    /// The cluster's nodes as this run's `/cluster/resources` read listed them, for
    /// `Preflight::sharing_nodes`: its checks then read no `GET /nodes`.
    pub fn known_nodes(&self) -> &KnownNodes {
        &self.nodes
    }

    /// The cluster's VMs (as predicted) and storages, in one `/cluster/resources` read.
    pub fn vms_and_storages(&self) -> Result<(Vec<VmResource>, Vec<StorageResource>)> {
        predictions::cluster_vms_and_storages(self.api, self.predictions.as_ref())
    }

    /// A VM's config with its pending section: an earlier task's prediction if there is one,
    /// else PVE's (`GET .../pending`).
    pub fn config(&self, vm: &VmResource) -> Result<VmConfig> {
        if let Some(config) = self.take_read_on_node(vm) {
            return Ok(config);
        }
        let config = predictions::read_config(self.api, vm, self.predictions.as_ref())?;
        if let Some(saved) = &self.saved {
            saved.read(vm, &config, self.is_predicted(vm))?;
        }
        Ok(config)
    }

    /// A VM's power state as `GET .../status/current` answers it: as an earlier task of this
    /// check run predicted it (paused, hibernated, stopped, running) if one did, else PVE's.
    pub fn status(&self, vm: &VmResource) -> Result<Value> {
        let read = || self.api.get(&vm.path().join(["status", "current"]), &Vec::new());
        match self.prediction(vm.vmid) {
            // No earlier task predicted a power change of a VM PVE has: PVE's answer (it tells a
            // paused VM from a running one), as long as it agrees with the predicted status.
            Some(p) if p.power.is_none() && p.exists => {
                let pve = read()?;
                Ok(if pve.get("status").and_then(Value::as_str) == Some(p.status.as_str()) {
                    pve
                } else {
                    p.status_current()
                })
            }
            Some(p) => Ok(p.status_current()),
            None if predictions::is_predicted(vm) => {
                Err(Error::Internal(format!("VM {} is predicted but its plan entry is gone", vm.vmid)))
            }
            None => read(),
        }
    }

    /// The space this check run's earlier predictions take (less what their removals free) on
    /// each storage that reserves it, for `pve::preflight::Preflight::reserving`; `None` outside
    /// check mode.
    pub fn reserved(&self) -> Option<BTreeMap<String, i64>> {
        self.predictions.as_ref().map(Predictions::reserved)
    }

    /// Record, in check mode, the space a task's new volumes take (`Preflight::reserved_here`)
    /// with the prediction of `vmid` the task recorded; outside check mode nothing.
    pub fn reserve(&self, vmid: u64, reserved: &[(String, u64)]) {
        if let Some(p) = &self.predictions {
            p.reserve(vmid, reserved);
        }
    }

    /// Record, in check mode, the space a task's predicted removal of existing volumes hands back
    /// (`Preflight::freeing`) with the prediction of `vmid` the task recorded; outside check
    /// mode nothing.
    pub fn free(&self, vmid: u64, freed: &[(String, String, u64)]) {
        if let Some(p) = &self.predictions {
            p.free(vmid, freed);
        }
    }

    /// A storage listing (volume id -> size) as this check run predicts it: without the
    /// volumes its earlier removals free (`Predictions::freed_volumes`); PVE's outside check mode.
    pub fn listed(&self, listed: &BTreeMap<String, Option<u64>>) -> BTreeMap<String, Option<u64>> {
        let freed = self.predictions.as_ref().map(Predictions::freed_volumes).unwrap_or_default();
        listed.iter().filter(|(v, _)| !freed.contains(*v)).map(|(v, s)| (v.clone(), *s)).collect()
    }

    /// The config an earlier task of this check run predicted for `vmid`, if any.
    pub fn predicted_config(&self, vmid: u64) -> Option<VmConfig> {
        self.prediction(vmid).map(|p| p.config())
    }

    /// What an earlier task of this check run predicted for `vmid`, if any.
    pub fn prediction(&self, vmid: u64) -> Option<PredictedVm> {
        self.predictions.as_ref().and_then(|p| p.get(vmid))
    }

    /// Whether `vm` is known here only from a prediction, or predicted changed: its state is
    /// then the prediction's, never PVE's (which does not hold it yet).
    pub fn is_predicted(&self, vm: &VmResource) -> bool {
        predictions::is_predicted(vm) || self.prediction(vm.vmid).is_some()
    }

    /// Whether `vm` exists only as a prediction (PVE does not know it).
    pub fn exists_only_as_prediction(vm: &VmResource) -> bool {
        predictions::is_predicted(vm)
    }

    /// The names of `vm`'s snapshots (`pve::snapshots::names`), read only when a write is refused
    /// for them; none for a VM that exists only as a prediction (a create or clone makes none).
    pub fn snapshot_names(api: &dyn Api, vm: &VmResource) -> Result<Vec<String>> {
        if predictions::is_predicted(vm) {
            return Ok(Vec::new());
        }
        snapshots::names(api, vm)
    }

    /// The configs of `vm`'s snapshots (`pve::snapshots::configs`), as `snapshot_names` reads them.
    pub fn snapshots(api: &dyn Api, vm: &VmResource) -> Result<Vec<VmConfig>> {
        if predictions::is_predicted(vm) {
            return Ok(Vec::new());
        }
        snapshots::configs(api, vm)
    }

    /// A VM's name as its config holds it (as predicted in check mode): what the identity rule
    /// trusts when `/cluster/resources`, which lags, shows another (`resources::NameOf`, §29).
    pub fn name_of(&self, vm: &VmResource) -> Result<Option<String>> {
        Ok(self.config(vm)?.get("name").map(str::to_string))
    }

    /// The VM a task names by `vmid` and/or `name` (`resources::resolve`, with the config's name
    /// where the listing disagrees), `None` when there is none.
    pub fn resolve<'v>(
        &self,
        vms: &'v [VmResource],
        vmid: Option<u64>,
        name: Option<&str>,
    ) -> Result<Option<&'v VmResource>> {
        resources::resolve(vms, vmid, name, &|vm| self.name_of(vm))
    }

    /// The QEMU VM a task addresses (by `vmid`, else by `name`; both: they must agree), with
    /// community.proxmox's words when none matches; a container with that vmid is refused,
    /// since these modules act on QEMU configs only.
    pub fn qemu_vm<'v>(&self, vms: &'v [VmResource], vmid: Option<u64>, name: Option<&str>) -> Result<&'v VmResource> {
        let vm = resources::require(vms, vmid, name, &|vm| self.name_of(vm))?;
        vm.require_qemu()?;
        Ok(vm)
    }

    /// Record, in check mode, the config a task predicts for `vm`; outside check mode nothing.
    pub fn record_config(&self, vm: &VmResource, config: &VmConfig) -> Result<()> {
        self.record(PredictedVm::of(vm, config))
    }

    /// Record, in check mode, a whole predicted VM (created, removed, powered); outside check
    /// mode nothing.
    pub fn record(&self, vm: PredictedVm) -> Result<()> {
        if let Some(p) = &self.predictions {
            p.record(&vm);
        }
        Ok(())
    }
}

/// Whether a task that names `vmid`, else `name`, addresses `vm` (a VM in flight by name: one
/// whose name is that name once known; a placeholder's is not, so only its vmid addresses it).
pub fn addressed_by(vm: &VmResource, vmid: Option<u64>, name: Option<&str>) -> bool {
    match (vmid, name) {
        (Some(id), _) => vm.vmid == id,
        (None, Some(n)) => vm.name.as_deref() == Some(n),
        (None, None) => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::pve::client::testing::ScriptedApi;
    use crate::pve::request::{form, ApiPath, Method};
    use serde_json::{json, Value};

    fn cluster(api: &ScriptedApi) {
        api.answer(
            Method::Get,
            "/cluster/resources",
            Ok(json!([
                {"vmid": 100, "name": "web", "node": "pve1", "type": "qemu", "status": "running", "id": "qemu/100"},
                {"vmid": 200, "name": "ct", "node": "pve1", "type": "lxc", "status": "running", "id": "lxc/200"},
            ])),
        );
    }

    #[test]
    fn outside_check_mode_it_reads_pve_and_records_nothing() {
        let api = ScriptedApi::default();
        cluster(&api);
        api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(json!([{"key": "cores", "value": 2}])));
        let world = World::new(&api, None);
        let vms = world.vms().unwrap();
        let vm = world.qemu_vm(&vms, Some(100), None).unwrap();
        let config = world.config(vm).unwrap();
        assert_eq!(config.get("cores"), Some("2"));
        world.record_config(vm, &config.with_change("cores", Some("4"), false)).unwrap();
        assert!(!world.is_predicted(vm));
        assert!(world.prediction(100).is_none());
        assert_eq!(api.calls.borrow().len(), 2);
    }

    #[test]
    fn in_check_mode_a_recorded_config_is_what_the_next_task_reads() {
        let api = ScriptedApi::default();
        cluster(&api);
        api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(json!([{"key": "cores", "value": 2}])));
        let first = World::new(&api, Some(Predictions::default()));
        let vms = first.vms().unwrap();
        let vm = first.qemu_vm(&vms, None, Some("web")).unwrap();
        let config = first.config(vm).unwrap();
        first.record_config(vm, &config.with_change("cores", Some("4"), false)).unwrap();

        // The next task of the run: one cluster read, no config read from PVE.
        cluster(&api);
        // (the action plugin hands the first task's records to the next)
        let handed = serde_json::to_value(first.predictions.as_ref().unwrap().recorded()).unwrap();
        let next = World::new(&api, Some(Predictions::from_json(&handed)));
        let vms = next.vms().unwrap();
        let vm = next.qemu_vm(&vms, Some(100), None).unwrap();
        assert!(next.is_predicted(vm) && !World::exists_only_as_prediction(vm));
        assert_eq!(next.config(vm).unwrap().get("cores"), Some("4"));
        assert_eq!(next.predicted_config(100).unwrap().get("cores"), Some("4"));
        assert_eq!(api.calls.borrow().iter().filter(|c| c.1.ends_with("/pending")).count(), 1);
    }

    #[test]
    fn a_container_or_a_missing_vm_is_refused_with_its_vmid() {
        let api = ScriptedApi::default();
        cluster(&api);
        let world = World::new(&api, None);
        let vms = world.vms().unwrap();
        assert_eq!(
            world.qemu_vm(&vms, Some(200), None).unwrap_err().to_string(),
            "VM with vmid 200 is a container (lxc), not a QEMU VM"
        );
        assert_eq!(
            world.qemu_vm(&vms, Some(7), None).unwrap_err().to_string(),
            "VM with vmid 7 does not exist in cluster"
        );
    }

    const UPID: &str = "UPID:pve1:00001234:00005678:65000000:qmcreate:101:root@pam:";

    fn creating(api: &ScriptedApi, task_status: Value) {
        api.answer(
            Method::Get,
            "/cluster/resources",
            Ok(json!([{"vmid": 101, "name": "VM 101", "node": "pve1", "type": "qemu", "status": "stopped", "lock": "create"}])),
        );
        api.answer(
            Method::Get,
            "/nodes/pve1/tasks",
            Ok(json!([{"upid": UPID, "status": "RUNNING", "type": "qmcreate"}])),
        );
        api.answer(Method::Get, &ApiPath::new(["nodes", "pve1", "tasks", UPID, "status"]).encoded(), Ok(task_status));
    }

    #[test]
    fn a_vm_being_created_is_waited_for_and_read_again() {
        let api = ScriptedApi::default();
        creating(&api, json!({"status": "stopped", "exitstatus": "OK"}));
        api.answer(
            Method::Get,
            "/cluster/resources",
            Ok(json!([{"vmid": 101, "name": "db-01", "node": "pve1", "type": "qemu", "status": "stopped"}])),
        );
        let world = World::new(&api, None);
        let vms = world.vms_for_task(Some(101), None).unwrap();
        assert_eq!((vms[0].name.as_deref(), vms[0].lock.as_deref()), (Some("db-01"), None));
        let calls = api.calls.borrow();
        assert_eq!(calls[1].2, form([("source", "active"), ("vmid", "101")]));
    }

    #[test]
    fn a_create_that_does_not_end_in_time_is_an_error_naming_its_task() {
        let api = ScriptedApi::default();
        creating(&api, json!({"status": "running"}));
        let world = World::new(&api, None).waiting_up_to(Duration::ZERO);
        let e = world.vms_for_task(Some(101), None).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("VM 101 is being created by task {UPID} (lock: create), which had not ended after 0s (timeout); nothing was changed")
        );
    }

    #[test]
    fn a_vm_in_flight_that_the_task_does_not_address_is_not_waited_for() {
        let api = ScriptedApi::default();
        creating(&api, json!({"status": "running"}));
        let world = World::new(&api, None);
        assert_eq!(world.vms_for_task(Some(100), None).unwrap().len(), 1);
        // by name: a placeholder's name is not the task's, so it is not waited for either
        creating(&api, json!({"status": "running"}));
        assert_eq!(world.vms_for_task(None, Some("db-01")).unwrap().len(), 1);
        assert!(!api.calls.borrow().iter().any(|c| c.1.contains("/tasks")));
    }

    #[test]
    fn status_current_is_the_predicted_power_state_else_pves() {
        let api = ScriptedApi::default();
        cluster(&api);
        let status = ApiPath::new(["nodes", "pve1", "qemu", "100", "status", "current"]).encoded();
        api.answer(Method::Get, &status, Ok(json!({"status": "running", "qmpstatus": "paused"})));
        let plan = Predictions::default();
        let world = World::new(&api, Some(plan.clone()));
        let vms = world.vms().unwrap();
        let vm = world.qemu_vm(&vms, Some(100), None).unwrap();
        // no prediction: PVE's answer
        assert_eq!(world.status(vm).unwrap()["qmpstatus"], "paused");
        // an earlier task changed the config only (listed running, as PVE says): PVE's answer
        api.answer(Method::Get, &status, Ok(json!({"status": "running", "qmpstatus": "paused"})));
        world.record_config(vm, &VmConfig::default()).unwrap();
        assert_eq!(world.status(vm).unwrap()["qmpstatus"], "paused");
        // an earlier task hibernated it: the prediction, PVE not asked
        let mut hibernated = world.prediction(100).unwrap();
        hibernated.status = "stopped".into();
        hibernated.power = Some("hibernated".into());
        hibernated.current.insert("lock".into(), "suspended".into());
        world.record(hibernated).unwrap();
        let reads = api.calls.borrow().len();
        assert_eq!(
            world.status(vm).unwrap(),
            json!({"status": "stopped", "qmpstatus": "stopped", "lock": "suspended"})
        );
        assert_eq!(api.calls.borrow().len(), reads);
        // outside check mode: PVE's
        api.answer(Method::Get, &status, Ok(json!({"status": "running", "qmpstatus": "running"})));
        assert_eq!(World::new(&api, None).status(vm).unwrap()["status"], "running");
        assert!(World::new(&api, None).reserved().is_none());
    }
}
