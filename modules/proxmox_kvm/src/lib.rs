//! proxmox_kvm: create, clone, converge, power and remove QEMU VMs, with a check mode that
//! predicts the real run.
//!
//! Pipeline: `Params::from_spec` (validation, the task's config as PVE keys) → per state, a
//! read of what exists → the pure comparison in `compare.rs` (what to write, what is refused,
//! what stays pending) → in check mode the prediction (recorded in the check-mode plan for the
//! later tasks of the run), otherwise the writes, each task waited for through `tasks::Waiter`.
//! Diffs are computed from the plan, not from the read-back, so check and real runs show the
//! same diff by construction.

mod clone;
mod compare;
mod params;
mod power;
mod spec;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use module_utils::ansible::diff::Diff;
use module_utils::check::predictions::{self, PredictedVm, Predictions};
use module_utils::connect::connect;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::client::{form, Api, ApiPath, Form};
use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::devices::config_text;
use module_utils::pve::devices::Disk;
use module_utils::pve::devices::{format_for_key, is_nic_key};
use module_utils::pve::propstring::{PropertyString, NET};
use module_utils::pve::resources::{require, resolve, StorageResource, VmResource};
use module_utils::pve::tasks::{as_upid, Waiter};
use module_utils::{Error, Result};
use serde_json::{json, Map, Value};

pub use compare::{converge, drive_value, nic_value, predict, scalar_equal, Change, Converge, DriveOutcome, Refusal};
pub use params::{CloneOpts, Params, State};
pub use spec::SPEC;

use params::is_drive_key;

/// How many times a create or clone with an automatic vmid tries the next free id after
/// another run took the one it got: enough for `forks: 50` creating at the same moment.
const MAX_VMID_ATTEMPTS: usize = 64;

/// What PVE shows instead of the cloud-init password.
const MASKED: &str = "**********";

/// The power state of a VM as the module reasons about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Power {
    Running,
    Stopped,
    Paused,
    Hibernated,
}

impl Power {
    pub fn as_str(self) -> &'static str {
        match self {
            Power::Running => "running",
            Power::Stopped => "stopped",
            Power::Paused => "paused",
            Power::Hibernated => "hibernated",
        }
    }

    /// What `/cluster/resources` shows for it (a paused VM runs; a hibernated one is stopped).
    fn resource_status(self) -> &'static str {
        match self {
            Power::Running | Power::Paused => "running",
            Power::Stopped | Power::Hibernated => "stopped",
        }
    }

    /// From `status/current` (`status`, `qmpstatus`, `lock`).
    pub fn from_status(status: &str, qmpstatus: Option<&str>, lock: Option<&str>) -> Power {
        match (status, qmpstatus, lock) {
            ("running", Some("paused"), _) => Power::Paused,
            ("running", _, _) => Power::Running,
            (_, _, Some("suspended")) => Power::Hibernated,
            _ => Power::Stopped,
        }
    }
}

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let params = ctx.parse(Params::from_spec)?;
    if let Some(id) = params.vmid {
        ctx.identify("vmid", id);
    }
    let api = connect(ctx)?;
    let plan = ctx.predictions.clone();
    let mut run = Run { ctx, api: &api, p: &params, plan: plan.as_ref() };
    run.dispatch()
}

struct Run<'a> {
    ctx: &'a mut Context,
    api: &'a dyn Api,
    p: &'a Params,
    plan: Option<&'a Predictions>,
}

/// The power state of a VM as `/cluster/resources` lists it, for the paths that do not read
/// `status/current` (a paused VM is listed as running).
fn listed_power(vm: &VmResource) -> Power {
    Power::from_status(&vm.status, None, vm.lock.as_deref())
}

/// The VM resource of a VM this run just created (not yet read from `/cluster/resources`).
fn resource(vmid: u64, name: Option<&str>, node: &str, status: &str) -> VmResource {
    VmResource {
        vmid,
        name: name.map(str::to_string),
        node: node.to_string(),
        kind: "qemu".into(),
        status: status.to_string(),
        template: false,
        lock: None,
        raw: Map::new(),
    }
}

fn config_map(config: &BTreeMap<String, String>) -> Map<String, Value> {
    config
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(if k == "cipassword" { MASKED.to_string() } else { v.clone() })))
        .collect()
}

/// `netN` → MAC of every NIC that has one.
pub fn macs(config: &BTreeMap<String, String>) -> Map<String, Value> {
    let mut keys: Vec<&String> = config.keys().filter(|k| is_nic_key(k)).collect();
    keys.sort_by(|a, b| module_utils::pve::devices::natural_cmp(a, b));
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
    keys.sort_by(|a, b| module_utils::pve::devices::natural_cmp(a, b));
    keys.into_iter()
        .filter_map(|k| {
            let ps = PropertyString::parse_lenient(format_for_key(k)?, &config[k]).ok()?;
            Some((k.clone(), Value::String(ps.get("file")?.to_string())))
        })
        .collect()
}

/// The config a new clone starts from, as far as it can be known before the clone: the source's
/// effective config without what PVE does not copy (docs/pve-semantics.md §15), NICs without their MAC (the clone
/// draws new ones), and its name.
pub fn clone_base(source: &VmConfig, name: &str) -> VmConfig {
    let mut base = BTreeMap::new();
    for (k, v) in source.effective() {
        if matches!(
            k.as_str(),
            "template" | "lock" | "parent" | "vmstate" | "runningmachine" | "runningcpu" | "snaptime"
        ) || k.starts_with("unused")
        {
            continue;
        }
        let value = if is_nic_key(&k) {
            match PropertyString::parse_lenient(&NET, &v) {
                Ok(mut nic) => {
                    nic.remove("macaddr");
                    nic.to_string()
                }
                Err(_) => v,
            }
        } else {
            v
        };
        base.insert(k, value);
    }
    base.insert("name".into(), name.to_string());
    VmConfig::from_current(base)
}

/// The config after a conversion to a template: `template: 1`, pending changes applied (the VM
/// is stopped) and every disk volume renamed to its base volume (qemu-server `template_create`;
/// CD-ROM and cloud-init drives are not converted).
pub fn template_config(config: &VmConfig, vmid: u64) -> VmConfig {
    let mut out = config.effective();
    out.insert("template".into(), "1".into());
    let from = format!("vm-{vmid}-disk-");
    let to = format!("base-{vmid}-disk-");
    for (k, v) in out.iter_mut() {
        if !is_drive_key(k) || v.contains("media=cdrom") {
            continue;
        }
        let (file, rest) = match v.split_once(',') {
            Some((f, r)) => (f.to_string(), format!(",{r}")),
            None => (v.clone(), String::new()),
        };
        if file.contains(&from) {
            *v = format!("{}{rest}", file.replace(&from, &to));
        }
    }
    VmConfig::from_current(out)
}

fn already_exists(e: &Error) -> bool {
    let text = match e {
        Error::TaskFailed { exitstatus, .. } => exitstatus.clone(),
        other => other.to_string(),
    };
    text.contains("already exists")
}

impl Run<'_> {
    fn check(&self) -> bool {
        self.ctx.check_mode
    }

    fn waiter(&self, extra: u64) -> Waiter {
        Waiter::new(Duration::from_secs(self.p.timeout + extra))
    }

    /// Wait for the task a call answered with (if it answered a UPID); its warnings are ours.
    fn wait(&mut self, answer: &Value, extra: u64) -> Result<()> {
        if let Some(upid) = as_upid(answer) {
            let ok = self.waiter(extra).wait(self.api, upid)?;
            for w in ok.warnings {
                self.ctx.warn(w);
            }
        }
        Ok(())
    }

    fn post_and_wait(&mut self, path: &ApiPath, body: Form, extra: u64) -> Result<()> {
        let answer = self.api.post(path, &body)?;
        self.wait(&answer, extra)
    }

    /// Refuse, before any write and in check mode alike, a `netN` the task sets on a bridge that
    /// `node` lacks (`resources::require_bridge`); the node's bridges are read once, only when needed.
    fn require_bridges<'k>(&self, node: &str, values: impl IntoIterator<Item = (&'k str, &'k str)>) -> Result<()> {
        let mut bridges: Option<Vec<String>> = None;
        for (key, value) in values {
            if !is_nic_key(key) {
                continue;
            }
            let nic = PropertyString::parse_lenient(&NET, value).ok();
            let Some(bridge) = nic.as_ref().and_then(|n| n.get("bridge")) else { continue };
            if bridges.is_none() {
                bridges = Some(module_utils::pve::resources::node_bridges(self.api, node)?);
            }
            module_utils::pve::resources::require_bridge(
                bridges.as_deref().unwrap_or_default(),
                bridge,
                node,
                &format!("net.{key}"),
            )?;
        }
        Ok(())
    }

    fn vms(&self) -> Result<Vec<VmResource>> {
        predictions::cluster_vms(self.api, self.plan)
    }

    fn read_config(&self, vm: &VmResource) -> Result<VmConfig> {
        predictions::read_config(self.api, vm, self.plan)
    }

    fn skiplock(&self, f: &mut Form) {
        if self.p.skiplock {
            f.push(("skiplock".into(), "1".into()));
        }
    }

    /// The power state: from the check-mode plan when an earlier task predicted it, else from
    /// `status/current` (`/cluster/resources` can lag behind; upstream reads it for the same reason).
    fn power(&self, vm: &VmResource) -> Result<Power> {
        if predictions::is_predicted(vm) || self.plan.and_then(|p| p.get(vm.vmid)).is_some() {
            return Ok(if vm.status == "running" { Power::Running } else { Power::Stopped });
        }
        let s = self.api.get(&vm.path().join(["status", "current"]), &Vec::new())?;
        Ok(Power::from_status(
            s.get("status").and_then(Value::as_str).unwrap_or("stopped"),
            s.get("qmpstatus").and_then(Value::as_str),
            s.get("lock").and_then(Value::as_str),
        ))
    }

    fn nextid(&self) -> Result<u64> {
        let v = self
            .api
            .get(&ApiPath::new(["cluster", "nextid"]), &Vec::new())
            .map_err(|e| e.context("Unable to retrieve next free vmid"))?;
        module_utils::pve::resources::lenient_u64(Some(&v))
            .ok_or_else(|| Error::Internal(format!("/cluster/nextid answered {v}")))
    }

    /// The vmid a check-mode create would get: PVE's next free id, skipping ids that earlier
    /// tasks of this check run predicted for their VMs.
    fn predicted_nextid(&mut self, vms: &[VmResource]) -> Result<u64> {
        let mut id = self.nextid()?;
        while vms.iter().any(|v| v.vmid == id) {
            id += 1;
        }
        self.ctx.warn(format!(
            "vmid {id} is a prediction (the next free vmid now); the real run takes the next free vmid when it runs"
        ));
        Ok(id)
    }

    fn record(&self, vm: PredictedVm) -> Result<()> {
        match self.plan {
            Some(p) if self.check() => {
                let mut vm = vm;
                if vm.current.contains_key("cipassword") {
                    vm.current.insert("cipassword".into(), MASKED.into());
                }
                p.record(&vm)
            }
            _ => Ok(()),
        }
    }

    fn dispatch(&mut self) -> Result<Outcome> {
        if !self.p.delete.is_empty() || !self.p.revert.is_empty() {
            return self.delete_or_revert();
        }
        if self.p.migrate && self.p.clone.is_none() {
            return self.migrate();
        }
        match self.p.state {
            State::Present if self.p.clone.is_some() => self.clone_vm(),
            State::Present => self.present(),
            State::Absent => self.absent(),
            State::Current => self.current(),
            State::Template => self.template(),
            _ => self.power_state(),
        }
    }

    /// The result fields every path returns about an existing VM.
    /// The result of a run on an existing (or just created) VM. `before` is Proxmox VE's status
    /// of the VM before the task (`running` or `stopped`, as `status/current` says; `None` when it
    /// did not exist), returned as `status` with upstream's meaning; `after` its power state after
    /// the task, returned as `power_state`.
    fn outcome(
        &self,
        changed: bool,
        msg: String,
        vm: &VmResource,
        config: Option<&VmConfig>,
        before: Option<&str>,
        after: Option<Power>,
    ) -> Outcome {
        let effective = config.map(VmConfig::effective).unwrap_or_default();
        let pending: Vec<String> = config.map(|c| c.pending_keys().into_iter().collect()).unwrap_or_default();
        let name = effective.get("name").cloned().or_else(|| vm.name.clone());
        Outcome::new(changed, msg)
            .with("vmid", vm.vmid)
            .with("name", name.map(Value::String).unwrap_or(Value::Null))
            .with("node", vm.node.clone())
            .with("status", before.map(|s| Value::String(s.to_string())).unwrap_or(Value::Null))
            .with("power_state", after.map(|p| Value::String(p.as_str().to_string())).unwrap_or(Value::Null))
            .with("mac", Value::Object(macs(&effective)))
            .with("devices", Value::Object(devices(&effective)))
            .with("reboot_required", !pending.is_empty())
            .with("pending", json!(pending))
    }

    fn diff(&self, vmid: u64, before: Option<&VmConfig>, after: Option<&VmConfig>) -> Diff {
        let b = before.map(|c| config_text(&config_map(&c.effective())));
        let a = after.map(|c| config_text(&config_map(&c.effective())));
        Diff::config(b.as_deref(), a.as_deref(), &format!("VM {vmid}"))
    }

    fn require_qemu(vm: &VmResource) -> Result<()> {
        if vm.kind != "qemu" {
            return Err(Error::failed(format!("VM with vmid {} is a container ({}), not a QEMU VM", vm.vmid, vm.kind)));
        }
        Ok(())
    }

    // ------------------------------------------------------------------ present

    fn present(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        match resolve(&vms, self.p.vmid, self.p.name.as_deref())? {
            Some(vm) => {
                let vm = vm.clone();
                self.ctx.identify("vmid", vm.vmid);
                Self::require_qemu(&vm)?;
                self.existing(&vm, self.p.update)
            }
            None => self.create(&vms),
        }
    }

    /// Compare an existing VM with the task; write the differences when `apply`.
    fn existing(&mut self, vm: &VmResource, apply: bool) -> Result<Outcome> {
        let config = self.read_config(vm)?;
        self.converging(vm, config, |run, config| run.existing_from(vm, apply, config))
    }

    /// Plan and write from `config`; on a digest conflict plan again from a fresh read
    /// (`config::retry_on_conflict`), unless the task gave its own `digest`: then the conflict is
    /// the answer it asked for.
    fn converging(
        &mut self,
        vm: &VmResource,
        config: VmConfig,
        mut from: impl FnMut(&mut Self, &VmConfig) -> Result<Outcome>,
    ) -> Result<Outcome> {
        if self.p.digest.is_some() {
            return from(self, &config);
        }
        let api = self.api;
        config::retry_on_conflict(api, vm, config, |config| from(self, config))
    }

    fn existing_from(&mut self, vm: &VmResource, apply: bool, config: &VmConfig) -> Result<Outcome> {
        let conv = converge(config, &self.p.desired);
        let label =
            config.get("name").map(str::to_string).or_else(|| vm.name.clone()).unwrap_or_else(|| vm.vmid.to_string());
        let status = vm.status.clone();
        if !apply {
            let mut drift = Map::new();
            for c in &conv.changes {
                let line = compare::drift_line(&c.key, c.before.as_deref(), &c.after);
                self.ctx.warn(format!("{line}; set update: true to apply"));
                drift.insert(c.key.clone(), json!({"before": c.before, "after": c.after}));
            }
            for r in &conv.refused {
                self.ctx.warn(format!("{}: {}", r.key, r.reason));
                drift.insert(r.key.clone(), json!({"before": r.before, "after": r.wanted}));
            }
            let msg = if drift.is_empty() {
                format!("VM {label} with vmid {} already exists", vm.vmid)
            } else {
                let keys: Vec<&String> = drift.keys().collect();
                format!(
                    "VM {label} with vmid {} already exists and differs from the task in {} (not changed: update is false)",
                    vm.vmid,
                    keys.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
                )
            };
            return Ok(self
                .outcome(false, msg, vm, Some(config), Some(&status), Some(listed_power(vm)))
                .with("drift", Value::Object(drift))
                .with_diff(Some(self.diff(vm.vmid, Some(config), Some(config)))));
        }
        let (changed, after) = self.apply_changes(vm, config, &conv)?;
        let msg = if changed {
            format!("VM {label} with vmid {} updated", vm.vmid)
        } else {
            format!("VM {label} with vmid {} already exists", vm.vmid)
        };
        let predicted = predict(config, &conv.changes, vm.status == "running");
        Ok(self
            .outcome(changed, msg, vm, Some(&after), Some(&status), Some(listed_power(vm)))
            .with("drift", Value::Object(Map::new()))
            .with_diff(Some(self.diff(vm.vmid, Some(config), Some(&predicted)))))
    }

    /// Write the changes in one `PUT .../config` guarded by the digest, or predict them in check
    /// mode. Refusals fail the task before any write. Returns (changed, config after).
    fn apply_changes(&mut self, vm: &VmResource, config: &VmConfig, conv: &Converge) -> Result<(bool, VmConfig)> {
        conv.check_refusals(&format!("VM {} cannot be changed as the task asks (nothing was changed)", vm.vmid))?;
        if conv.changes.is_empty() {
            return Ok((false, config.clone()));
        }
        self.require_bridges(&vm.node, conv.changes.iter().map(|c| (c.key.as_str(), c.after.as_str())))?;
        let running = vm.status == "running";
        let predicted = predict(config, &conv.changes, running);
        let after = if self.check() {
            self.record(PredictedVm::of(vm, &predicted))?;
            predicted
        } else {
            let mut body: Form = conv.changes.iter().map(|c| (c.key.clone(), c.after.clone())).collect();
            self.skiplock(&mut body);
            let digest = self.p.digest.clone().or_else(|| config.digest.clone());
            config::write(self.api, vm, body, digest.as_deref()).map_err(|e| {
                e.context(&format!("Unable to update vm {} with vmid {}", vm.name.as_deref().unwrap_or(""), vm.vmid))
            })?;
            config::read(self.api, vm)?
        };
        let pending: Vec<&str> = conv.changes.iter().map(|c| c.key.as_str()).filter(|k| after.is_pending(k)).collect();
        if !pending.is_empty() {
            self.ctx.warn(format!(
                "the change of {} on VM {} is pending: Proxmox VE applies it when the VM is next started (it could not be hot-plugged)",
                pending.join(", "),
                vm.vmid
            ));
        }
        Ok((true, after))
    }

    /// The create request: vmid, the task's config, and the create-only options.
    fn create_form(&self, vmid: u64) -> Form {
        let mut f: Form = vec![("vmid".into(), vmid.to_string())];
        f.extend(self.p.desired.iter().map(|(k, v)| (k.clone(), v.clone())));
        for (k, v) in [("pool", &self.p.pool), ("storage", &self.p.storage), ("archive", &self.p.archive)] {
            if let Some(v) = v {
                f.push((k.into(), v.clone()));
            }
        }
        if self.p.archive.is_some() && self.p.force {
            f.push(("force".into(), "1".into()));
        }
        f
    }

    fn create(&mut self, vms: &[VmResource]) -> Result<Outcome> {
        let node = self.p.node.clone().ok_or_else(|| Error::args("node is mandatory for creating/updating VM"))?;
        let name = self.p.name.clone();
        let label = self.p.label();
        let planned = VmConfig::from_current(self.p.desired.clone());
        self.require_bridges(&node, self.p.desired.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        let (vmid, after) = if self.check() {
            let vmid = match self.p.vmid {
                Some(v) => v,
                None => self.predicted_nextid(vms)?,
            };
            self.record(PredictedVm::created(vmid, name.clone(), &node, &planned))?;
            (vmid, planned.clone())
        } else {
            let vmid = self.create_with_retry(&node)?;
            let vm = resource(vmid, name.as_deref(), &node, "stopped");
            (vmid, config::read(self.api, &vm)?)
        };
        let label = if label.is_empty() { vmid.to_string() } else { label };
        let vm = resource(vmid, name.as_deref(), &node, "stopped");
        Ok(self
            .outcome(
                true,
                format!("VM {label} with vmid {vmid} deployed"),
                &vm,
                Some(&after),
                None,
                Some(Power::Stopped),
            )
            .with("drift", Value::Object(Map::new()))
            .with_diff(Some(self.diff(vmid, None, Some(&planned)))))
    }

    /// `POST /nodes/{node}/qemu` and wait. Without an explicit vmid, a collision with another
    /// run (PVE: `... already exists on node ...`, before the task starts) takes the next id.
    fn create_with_retry(&mut self, node: &str) -> Result<u64> {
        let path = ApiPath::new(["nodes", node, "qemu"]);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let vmid = match self.p.vmid {
                Some(v) => v,
                None => self.nextid()?,
            };
            let label = self.p.label();
            let result = self.api.post(&path, &self.create_form(vmid));
            match result {
                Err(e) if self.p.vmid.is_none() && already_exists(&e) && attempt < MAX_VMID_ATTEMPTS => continue,
                Err(e) => return Err(e.context(&format!("creation of qemu VM {label} with vmid {vmid} failed"))),
                Ok(answer) => {
                    self.wait(&answer, 0)
                        .map_err(|e| e.context(&format!("creation of qemu VM {label} with vmid {vmid} failed")))?;
                    return Ok(vmid);
                }
            }
        }
    }

    // -------------------------------------------------------------------- clone
}

#[cfg(test)]
mod tests;
