//! proxmox_kvm: create, clone, converge, power and remove QEMU VMs, with a check mode that
//! predicts the real run.
//!
//! Pipeline: `Params::from_spec` (validation, the task's config as PVE keys) → per state, a
//! read of what exists → the pure comparison in `compare.rs` (what to write, what is refused,
//! what stays pending) → in check mode the prediction (recorded in the check-mode plan for the
//! later tasks of the run), otherwise the writes, each task waited for through `task::Waiter`.
//! Diffs are computed from the plan, not from the read-back, so check and real runs show the
//! same diff by construction.

mod compare;
mod params;
mod spec;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use module_utils::checkplan::{self, CheckPlan, PredictedVm};
use module_utils::client::{connect, form, Api, Form};
use module_utils::diff::Diff;
use module_utils::propstring::{PropertyString, NET};
use module_utils::protocol::{Context, Outcome};
use module_utils::pveconfig::{format_for_key, is_nic_key};
use module_utils::task::{as_upid, Waiter};
use module_utils::vm::{require, resolve, VmResource};
use module_utils::vmconfig::{self, VmConfig};
use module_utils::{Error, Result};
use serde_json::{json, Map, Value};

pub use compare::{converge, drive_value, nic_value, predict, scalar_equal, stays_pending, Change, Converge, DriveOutcome, Refusal};
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
    let api = connect(ctx)?;
    let plan = ctx.check_plan.clone();
    let mut run = Run {
        ctx,
        api: &api,
        p: &params,
        plan: plan.as_ref(),
    };
    run.dispatch()
}

struct Run<'a> {
    ctx: &'a mut Context,
    api: &'a dyn Api,
    p: &'a Params,
    plan: Option<&'a CheckPlan>,
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
    keys.sort_by(|a, b| module_utils::pveconfig::natural_cmp(a, b));
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
    keys.sort_by(|a, b| module_utils::pveconfig::natural_cmp(a, b));
    keys.into_iter()
        .filter_map(|k| {
            let ps = PropertyString::parse_lenient(format_for_key(k)?, &config[k]).ok()?;
            Some((k.clone(), Value::String(ps.get("file")?.to_string())))
        })
        .collect()
}

/// The config a new clone starts from, as far as it can be known before the clone: the source's
/// effective config without what PVE does not copy (§15), NICs without their MAC (the clone
/// draws new ones), and its name.
pub fn clone_base(source: &VmConfig, name: &str) -> VmConfig {
    let mut base = BTreeMap::new();
    for (k, v) in source.effective() {
        if matches!(k.as_str(), "template" | "lock" | "parent" | "vmstate" | "runningmachine" | "runningcpu" | "snaptime")
            || k.starts_with("unused")
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

    fn post_and_wait(&mut self, path: &str, body: Form, extra: u64) -> Result<()> {
        let answer = self.api.post(path, &body)?;
        self.wait(&answer, extra)
    }

    fn vms(&self) -> Result<Vec<VmResource>> {
        checkplan::cluster_vms(self.api, self.plan)
    }

    fn read_config(&self, vm: &VmResource) -> Result<VmConfig> {
        checkplan::read_config(self.api, vm, self.plan)
    }

    fn skiplock(&self, f: &mut Form) {
        if self.p.skiplock {
            f.push(("skiplock".into(), "1".into()));
        }
    }

    /// The power state: from the check-mode plan when an earlier task predicted it, else from
    /// `status/current` (`/cluster/resources` can lag behind; upstream reads it for the same reason).
    fn power(&self, vm: &VmResource) -> Result<Power> {
        if checkplan::is_predicted(vm) || self.plan.and_then(|p| p.get(vm.vmid)).is_some() {
            return Ok(if vm.status == "running" { Power::Running } else { Power::Stopped });
        }
        let s = self.api.get(&format!("{}/status/current", vm.path()), &Vec::new())?;
        Ok(Power::from_status(
            s.get("status").and_then(Value::as_str).unwrap_or("stopped"),
            s.get("qmpstatus").and_then(Value::as_str),
            s.get("lock").and_then(Value::as_str),
        ))
    }

    fn nextid(&self) -> Result<u64> {
        let v = self
            .api
            .get("/cluster/nextid", &Vec::new())
            .map_err(|e| e.context("Unable to retrieve next free vmid"))?;
        module_utils::vm::lenient_u64(Some(&v)).ok_or_else(|| Error::Internal(format!("/cluster/nextid answered {v}")))
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
    fn outcome(&self, changed: bool, msg: String, vm: &VmResource, config: Option<&VmConfig>, status: Option<&str>) -> Outcome {
        let effective = config.map(VmConfig::effective).unwrap_or_default();
        let pending: Vec<String> = config.map(|c| c.pending_keys().into_iter().collect()).unwrap_or_default();
        let name = effective.get("name").cloned().or_else(|| vm.name.clone());
        Outcome::new(changed, msg)
            .with("vmid", vm.vmid)
            .with("name", name.map(Value::String).unwrap_or(Value::Null))
            .with("node", vm.node.clone())
            .with("status", status.map(|s| Value::String(s.to_string())).unwrap_or(Value::Null))
            .with("mac", Value::Object(macs(&effective)))
            .with("devices", Value::Object(devices(&effective)))
            .with("reboot_required", !pending.is_empty())
            .with("pending", json!(pending))
    }

    fn diff(&self, vmid: u64, before: Option<&VmConfig>, after: Option<&VmConfig>) -> Diff {
        let b = before.map(|c| config_map(&c.effective()));
        let a = after.map(|c| config_map(&c.effective()));
        Diff::config(b.as_ref(), a.as_ref(), &format!("VM {vmid}"))
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
                Self::require_qemu(&vm)?;
                self.existing(&vm, self.p.update)
            }
            None => self.create(&vms),
        }
    }

    /// Compare an existing VM with the task; write the differences when `apply`.
    fn existing(&mut self, vm: &VmResource, apply: bool) -> Result<Outcome> {
        let config = self.read_config(vm)?;
        let conv = converge(&config, &self.p.desired);
        let label = config.get("name").map(str::to_string).or_else(|| vm.name.clone()).unwrap_or_else(|| vm.vmid.to_string());
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
                .outcome(false, msg, vm, Some(&config), Some(&status))
                .with("drift", Value::Object(drift))
                .with_diff(Some(self.diff(vm.vmid, Some(&config), Some(&config)))));
        }
        let (changed, after) = self.apply_changes(vm, &config, &conv)?;
        let msg = if changed {
            format!("VM {label} with vmid {} updated", vm.vmid)
        } else {
            format!("VM {label} with vmid {} already exists", vm.vmid)
        };
        let predicted = predict(&config, &conv.changes, vm.status == "running");
        Ok(self
            .outcome(changed, msg, vm, Some(&after), Some(&status))
            .with("drift", Value::Object(Map::new()))
            .with_diff(Some(self.diff(vm.vmid, Some(&config), Some(&predicted)))))
    }

    /// Write the changes in one `PUT .../config` guarded by the digest, or predict them in check
    /// mode. Refusals fail the task before any write. Returns (changed, config after).
    fn apply_changes(&mut self, vm: &VmResource, config: &VmConfig, conv: &Converge) -> Result<(bool, VmConfig)> {
        if !conv.refused.is_empty() {
            let reasons: Vec<String> = conv.refused.iter().map(|r| r.reason.clone()).collect();
            return Err(Error::failed(format!(
                "VM {} cannot be changed as the task asks (nothing was changed): {}",
                vm.vmid,
                reasons.join("; ")
            )));
        }
        if conv.changes.is_empty() {
            return Ok((false, config.clone()));
        }
        let running = vm.status == "running";
        let predicted = predict(config, &conv.changes, running);
        let after = if self.check() {
            self.record(PredictedVm::of(vm, &predicted))?;
            predicted
        } else {
            let mut body: Form = conv.changes.iter().map(|c| (c.key.clone(), c.after.clone())).collect();
            self.skiplock(&mut body);
            let digest = self.p.digest.clone().or_else(|| config.digest.clone());
            vmconfig::write(self.api, vm, body, digest.as_deref())
                .map_err(|e| e.context(&format!("Unable to update vm {} with vmid {}", vm.name.as_deref().unwrap_or(""), vm.vmid)))?;
            vmconfig::read(self.api, vm)?
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
        let node = self
            .p
            .node
            .clone()
            .ok_or_else(|| Error::args("node is mandatory for creating/updating VM"))?;
        let name = self.p.name.clone();
        let label = self.p.label();
        let planned = VmConfig::from_current(self.p.desired.clone());
        let (vmid, after) = if self.check() {
            let vmid = match self.p.vmid {
                Some(v) => v,
                None => self.predicted_nextid(vms)?,
            };
            self.record(PredictedVm {
                vmid,
                name: name.clone(),
                node: node.clone(),
                status: "stopped".into(),
                template: planned.get("template").is_some_and(|t| t == "1"),
                removed: false,
                exists: false,
                current: planned.current.clone(),
                pending: BTreeMap::new(),
                pending_delete: BTreeMap::new(),
            })?;
            (vmid, planned.clone())
        } else {
            let vmid = self.create_with_retry(&node)?;
            let vm = resource(vmid, name.as_deref(), &node, "stopped");
            (vmid, vmconfig::read(self.api, &vm)?)
        };
        let label = if label.is_empty() { vmid.to_string() } else { label };
        let vm = resource(vmid, name.as_deref(), &node, "stopped");
        Ok(self
            .outcome(true, format!("VM {label} with vmid {vmid} deployed"), &vm, Some(&after), Some("stopped"))
            .with("drift", Value::Object(Map::new()))
            .with_diff(Some(self.diff(vmid, None, Some(&planned)))))
    }

    /// `POST /nodes/{node}/qemu` and wait. Without an explicit vmid, a collision with another
    /// run (PVE: `... already exists on node ...`, before the task starts) takes the next id.
    fn create_with_retry(&mut self, node: &str) -> Result<u64> {
        let path = format!("/nodes/{node}/qemu");
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

    fn clone_vm(&mut self) -> Result<Outcome> {
        let Some(c) = self.p.clone.clone() else { return self.present() };
        let vms = self.vms()?;
        let source = match self.p.vmid {
            Some(id) => require(&vms, Some(id), None)?.clone(),
            None => resolve(&vms, None, Some(&c.source))?
                .cloned()
                .ok_or_else(|| Error::failed(format!("VM with name = {} does not exist in cluster", c.source)))?,
        };
        Self::require_qemu(&source)?;
        // The target: newid when given, else a VM with the task's name (other than the source).
        let others: Vec<VmResource> = vms.iter().filter(|v| v.vmid != source.vmid).cloned().collect();
        let target = match (c.newid, self.p.name.as_deref()) {
            (Some(id), _) => others.iter().find(|v| v.vmid == id).cloned(),
            (None, Some(name)) => resolve(&others, None, Some(name))?.cloned(),
            (None, None) => None,
        };
        if let Some(t) = target {
            Self::require_qemu(&t)?;
            // The task asks for this VM to be a configured clone: converge it (update is
            // mutually exclusive with clone, as upstream, so it cannot be asked for).
            return self.existing(&t, true);
        }
        let source_config = self.read_config(&source)?;
        let name = self
            .p
            .name
            .clone()
            .unwrap_or_else(|| format!("Copy-of-VM-{}", source.name.clone().unwrap_or_else(|| source.vmid.to_string())));
        let base = clone_base(&source_config, &name);
        let conv = converge(&base, &self.p.desired);
        if !conv.refused.is_empty() {
            let reasons: Vec<String> = conv.refused.iter().map(|r| r.reason.clone()).collect();
            return Err(Error::failed(format!(
                "the clone of VM {} cannot be configured as the task asks (nothing was cloned): {}",
                source.vmid,
                reasons.join("; ")
            )));
        }
        let planned = predict(&base, &conv.changes, false);
        let node = c.target.clone().unwrap_or_else(|| source.node.clone());
        let (newid, vm, after) = if self.check() {
            let newid = match c.newid {
                Some(v) => v,
                None => self.predicted_nextid(&vms)?,
            };
            self.record(PredictedVm {
                vmid: newid,
                name: Some(name.clone()),
                node: node.clone(),
                status: "stopped".into(),
                template: false,
                removed: false,
                exists: false,
                current: planned.current.clone(),
                pending: BTreeMap::new(),
                pending_delete: BTreeMap::new(),
            })?;
            (newid, resource(newid, Some(&name), &node, "stopped"), planned.clone())
        } else {
            let newid = self.clone_with_retry(&source, &c, &name)?;
            let vm = self.wait_unlocked(newid)?;
            let config = vmconfig::read(self.api, &vm)?;
            let conv = converge(&config, &self.p.desired);
            let (_, after) = self.apply_changes(&vm, &config, &conv)?;
            (newid, vm, after)
        };
        Ok(self
            .outcome(
                true,
                format!("VM {name} with newid {newid} cloned from vm with vmid {}", source.vmid),
                &vm,
                Some(&after),
                Some("stopped"),
            )
            .with("drift", Value::Object(Map::new()))
            .with_diff(Some(self.diff(newid, None, Some(&planned)))))
    }

    fn clone_with_retry(&mut self, source: &VmResource, c: &CloneOpts, name: &str) -> Result<u64> {
        let path = format!("{}/clone", source.path());
        let mut attempt = 0;
        loop {
            attempt += 1;
            let newid = match c.newid {
                Some(v) => v,
                None => self.nextid()?,
            };
            let mut body: Form = vec![
                ("newid".into(), newid.to_string()),
                ("name".into(), name.to_string()),
                ("full".into(), if c.full { "1" } else { "0" }.into()),
            ];
            for (k, v) in [("format", &c.format), ("storage", &c.storage), ("target", &c.target), ("snapname", &c.snapname), ("pool", &self.p.pool)] {
                if let Some(v) = v {
                    body.push((k.into(), v.clone()));
                }
            }
            let context = format!("Unable to clone vm {name} from vmid {}", source.vmid);
            let result = self.api.post(&path, &body).and_then(|answer| self.wait(&answer, 0));
            match result {
                Err(e) if c.newid.is_none() && already_exists(&e) && attempt < MAX_VMID_ATTEMPTS => continue,
                Err(e) => return Err(e.context(&context)),
                Ok(()) => return Ok(newid),
            }
        }
    }

    /// After the clone task: find the clone (it may be on the target node) and wait until its
    /// `lock: clone` is gone, so the configuration that follows is not refused as locked.
    fn wait_unlocked(&self, vmid: u64) -> Result<VmResource> {
        let deadline = Instant::now() + Duration::from_secs(self.p.timeout);
        let mut pause = Duration::from_millis(50);
        loop {
            let vms = module_utils::vm::cluster_vms(self.api)?;
            if let Some(vm) = vms.into_iter().find(|v| v.vmid == vmid) {
                let config = vmconfig::read(self.api, &vm)?;
                if !config.current.contains_key("lock") {
                    return Ok(vm);
                }
            }
            if Instant::now() >= deadline {
                return Err(Error::failed(format!(
                    "the clone task ended, but VM {vmid} is still missing or locked after {}s",
                    self.p.timeout
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    // ------------------------------------------------------------------- absent

    fn absent(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let Some(vm) = resolve(&vms, self.p.vmid, self.p.name.as_deref())?.cloned() else {
            let label = self.p.label();
            return Ok(Outcome::new(false, format!("VM {label} is already absent"))
                .with("vmid", self.p.vmid.map(Value::from).unwrap_or(Value::Null))
                .with("status", Value::Null)
                .with("mac", json!({}))
                .with("devices", json!({}))
                .with("pending", json!([]))
                .with("reboot_required", false)
                .with_diff(Some(self.diff(self.p.vmid.unwrap_or(0), None, None))));
        };
        Self::require_qemu(&vm)?;
        let config = self.read_config(&vm)?;
        let lock = config.current.get("lock").cloned().or_else(|| vm.lock.clone());
        if let Some(lock) = lock.filter(|l| l != "suspended") {
            return Err(Error::failed(format!(
                "VM {} is locked ({lock}) and cannot be removed now{}; nothing was changed",
                vm.vmid,
                if lock == "clone" { ": a clone task is still running" } else { "" }
            )));
        }
        let power = self.power(&vm)?;
        let running = matches!(power, Power::Running | Power::Paused);
        if running && !self.p.force {
            return Err(Error::failed(format!(
                "VM {} is running. Stop it before deletion or use force=true.",
                vm.vmid
            )));
        }
        if self.check() {
            let mut gone = PredictedVm::of(&vm, &config);
            gone.removed = true;
            self.record(gone)?;
        } else {
            if running {
                let mut body = Vec::new();
                self.skiplock(&mut body);
                self.post_and_wait(&format!("{}/status/stop", vm.path()), body, 30)
                    .map_err(|e| e.context(&format!("stopping of VM {} before its removal failed", vm.vmid)))?;
            }
            let mut query: Form = Vec::new();
            if self.p.purge {
                query.push(("purge".into(), "1".into()));
            }
            if self.p.destroy_unreferenced_disks {
                query.push(("destroy-unreferenced-disks".into(), "1".into()));
            }
            self.skiplock(&mut query);
            let context = format!("deletion of VM {} failed", vm.vmid);
            let answer = self.api.delete(&vm.path(), &query).map_err(|e| e.context(&context))?;
            self.wait(&answer, 0).map_err(|e| e.context(&context))?;
            // The task ended OK: make sure the VM is really gone before saying so.
            let still = module_utils::vm::cluster_vms(self.api)?.into_iter().any(|v| v.vmid == vm.vmid);
            if still {
                return Err(Error::failed(format!(
                    "the removal task of VM {} ended, but the VM still exists",
                    vm.vmid
                )));
            }
        }
        Ok(Outcome::new(true, format!("VM {} removed", vm.vmid))
            .with("vmid", vm.vmid)
            .with("name", vm.name.clone().map(Value::String).unwrap_or(Value::Null))
            .with("node", vm.node.clone())
            .with("status", Value::Null)
            .with("mac", json!({}))
            .with("devices", json!({}))
            .with("pending", json!([]))
            .with("reboot_required", false)
            .with_diff(Some(self.diff(vm.vmid, Some(&config), None))))
    }

    // -------------------------------------------------------------------- power

    fn find(&self, vms: &[VmResource]) -> Result<VmResource> {
        let vm = match resolve(vms, self.p.vmid, self.p.name.as_deref())? {
            Some(vm) => vm.clone(),
            None => {
                return Err(Error::failed(match self.p.vmid {
                    Some(id) => format!("VM with vmid {id} does not exist in cluster"),
                    None => format!("VM with name = {} does not exist in cluster", self.p.label()),
                }))
            }
        };
        Self::require_qemu(&vm)?;
        Ok(vm)
    }

    /// Record a predicted power change for the later tasks of a check run.
    fn record_power(&self, vm: &VmResource, config: &VmConfig, power: Power, template: bool) -> Result<()> {
        let mut p = PredictedVm::of(vm, config);
        p.status = power.resource_status().to_string();
        p.template = template;
        if power == Power::Stopped || power == Power::Running {
            // Pending changes apply at a start or stop (§6).
            p.current = config.effective();
            p.pending.clear();
            p.pending_delete.clear();
        }
        self.record(p)
    }

    fn power_state(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let now = self.power(&vm)?;
        let id = vm.vmid;
        let path = vm.path();
        let timeout = self.p.timeout.to_string();
        // (action, body, new state, message, extra seconds to wait)
        type Action = (&'static str, Form, Power, String);
        let action: std::result::Result<Action, String> = match (self.p.state, now) {
            (State::Started, Power::Running) => Err(format!("VM {id} is already running")),
            (State::Started, Power::Paused) => Ok(("resume", Vec::new(), Power::Running, format!("VM {id} resumed"))),
            (State::Started, _) => Ok(("start", Vec::new(), Power::Running, format!("VM {id} started"))),
            (State::Stopped, Power::Stopped | Power::Hibernated) => Err(format!("VM {id} is already stopped")),
            (State::Stopped, _) => Ok((
                "shutdown",
                form([("forceStop", if self.p.force { "1" } else { "0" }), ("timeout", timeout.as_str())]),
                Power::Stopped,
                format!("VM {id} stopped"),
            )),
            (State::Restarted, Power::Stopped | Power::Hibernated) => Err(format!("VM {id} is not running")),
            (State::Restarted, _) if self.p.force => Ok(("reset", Vec::new(), Power::Running, format!("VM {id} is restarted"))),
            (State::Restarted, _) => Ok(("reboot", form([("timeout", timeout.as_str())]), Power::Running, format!("VM {id} is restarted"))),
            (State::Paused, Power::Paused) => Err(format!("VM {id} is already paused")),
            (State::Paused, Power::Running) => Ok(("suspend", Vec::new(), Power::Paused, format!("VM {id} paused"))),
            (State::Hibernated, Power::Hibernated) => Err(format!("VM {id} is already hibernated")),
            (State::Hibernated, Power::Running | Power::Paused) => {
                Ok(("suspend", form([("todisk", "1")]), Power::Hibernated, format!("VM {id} hibernated")))
            }
            (State::Paused | State::Hibernated, _) => {
                return Err(Error::failed(format!(
                    "VM {id} is not running, so it cannot be {}",
                    if self.p.state == State::Paused { "paused" } else { "hibernated" }
                )))
            }
            _ => Err(format!("VM {id} is {}", now.as_str())),
        };
        let config = self.read_config(&vm)?;
        match action {
            Err(msg) => Ok(self.outcome(false, msg, &vm, Some(&config), Some(now.as_str()))),
            Ok((verb, mut body, next, msg)) => {
                let after = if self.check() {
                    self.record_power(&vm, &config, next, vm.template)?;
                    if matches!(next, Power::Stopped | Power::Running) && verb != "resume" {
                        VmConfig::from_current(config.effective())
                    } else {
                        config.clone()
                    }
                } else {
                    self.skiplock(&mut body);
                    // A shutdown may take the whole timeout before PVE gives up or stops hard.
                    let extra = if matches!(verb, "shutdown" | "reboot") { 30 } else { 0 };
                    let what = match verb {
                        "start" | "resume" => "starting",
                        "shutdown" => "stopping",
                        "reboot" | "reset" => "restarting",
                        _ => "suspending",
                    };
                    let mut context = format!("{what} of VM {id} failed");
                    if verb == "shutdown" && !self.p.force {
                        context.push_str(" (with force: true it is stopped hard after the timeout)");
                    }
                    self.post_and_wait(&format!("{path}/status/{verb}"), body, extra)
                        .map_err(|e| e.context(&context))?;
                    vmconfig::read(self.api, &vm)?
                };
                Ok(self.outcome(true, msg, &vm, Some(&after), Some(next.as_str())))
            }
        }
    }

    fn current(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let now = self.power(&vm)?;
        let config = self.read_config(&vm)?;
        let name = config.get("name").map(str::to_string).or_else(|| vm.name.clone()).unwrap_or_else(|| "(unnamed)".into());
        Ok(self.outcome(false, format!("VM {name} with vmid = {} is {}", vm.vmid, now.as_str()), &vm, Some(&config), Some(now.as_str())))
    }

    fn template(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let config = self.read_config(&vm)?;
        if vm.template {
            return Ok(self.outcome(false, format!("VM {} is already a template", vm.vmid), &vm, Some(&config), Some("stopped")));
        }
        let now = self.power(&vm)?;
        let running = matches!(now, Power::Running | Power::Paused);
        if running && !self.p.force {
            return Err(Error::failed(format!(
                "VM {} is running: a running VM cannot be converted to a template; stop it first or set force: true",
                vm.vmid
            )));
        }
        let planned = template_config(&config, vm.vmid);
        let mut after = planned.clone();
        if self.check() {
            self.record_power(&vm, &after, Power::Stopped, true)?;
        } else {
            if running {
                self.post_and_wait(&format!("{}/status/stop", vm.path()), Vec::new(), 30)
                    .map_err(|e| e.context(&format!("stopping of VM {} failed", vm.vmid)))?;
            }
            self.post_and_wait(&format!("{}/template", vm.path()), Vec::new(), 0)
                .map_err(|e| e.context(&format!("conversion of VM {} to template failed", vm.vmid)))?;
            after = vmconfig::read(self.api, &vm)?;
        }
        Ok(self
            .outcome(true, format!("VM {} converted to template", vm.vmid), &vm, Some(&after), Some("stopped"))
            .with_diff(Some(self.diff(vm.vmid, Some(&config), Some(&planned)))))
    }

    // ------------------------------------------------------ delete, revert, migrate

    fn delete_or_revert(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let config = self.read_config(&vm)?;
        let running = vm.status == "running";
        let label = config.get("name").map(str::to_string).or_else(|| vm.name.clone()).unwrap_or_default();
        let (param, keys, msg): (&str, Vec<String>, String) = if !self.p.delete.is_empty() {
            let keys = self.p.delete.iter().filter(|k| config.get(k).is_some()).cloned().collect();
            ("delete", keys, format!("Settings has deleted on VM {label} with vmid {}", vm.vmid))
        } else {
            let keys = self.p.revert.iter().filter(|k| config.is_pending(k)).cloned().collect();
            ("revert", keys, format!("Settings has reverted on VM {label} with vmid {}", vm.vmid))
        };
        if keys.is_empty() {
            let msg = format!("Nothing to {param} on VM {label} with vmid {}", vm.vmid);
            return Ok(self
                .outcome(false, msg, &vm, Some(&config), Some(&vm.status))
                .with_diff(Some(self.diff(vm.vmid, Some(&config), Some(&config)))));
        }
        let mut predicted = config.clone();
        for k in &keys {
            if param == "delete" {
                let pending = running && stays_pending_delete(k, &config);
                predicted = predicted.with_change(k, None, pending);
            } else {
                predicted.pending.remove(k);
                predicted.pending_delete.remove(k);
            }
        }
        let after = if self.check() {
            self.record(PredictedVm::of(&vm, &predicted))?;
            predicted.clone()
        } else {
            let mut body = form([(param, keys.join(","))]);
            self.skiplock(&mut body);
            let digest = self.p.digest.clone().or_else(|| config.digest.clone());
            vmconfig::write(self.api, &vm, body, digest.as_deref())
                .map_err(|e| e.context(&format!("Unable to {param} settings on VM {label} with vmid {}", vm.vmid)))?;
            vmconfig::read(self.api, &vm)?
        };
        Ok(self
            .outcome(true, msg, &vm, Some(&after), Some(&vm.status))
            .with_diff(Some(self.diff(vm.vmid, Some(&config), Some(&predicted)))))
    }

    fn migrate(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let node = self.p.node.clone().ok_or_else(|| Error::args("migrate needs node: the node to migrate the VM to"))?;
        let config = self.read_config(&vm)?;
        if vm.node == node {
            return Ok(self.outcome(false, format!("VM {} is already on {node}", vm.vmid), &vm, Some(&config), Some(&vm.status)));
        }
        let from = vm.node.clone();
        let mut moved = vm.clone();
        moved.node = node.clone();
        if self.check() {
            self.record(PredictedVm::of(&moved, &config))?;
        } else {
            let body = form([
                ("target", node.as_str()),
                ("online", if vm.status == "running" { "1" } else { "0" }),
                ("with-local-disks", if self.p.with_local_disks { "1" } else { "0" }),
            ]);
            self.post_and_wait(&format!("{}/migrate", vm.path()), body, 0)
                .map_err(|e| e.context(&format!("Unable to migrate VM {} from {from} to {node}", vm.vmid)))?;
        }
        Ok(self.outcome(true, format!("VM {} has been migrated from {from} to {node}", vm.vmid), &moved, Some(&config), Some(&vm.status)))
    }
}

/// Whether deleting `key` on a running VM waits for the next start (§6; deletions hot-unplug
/// like additions).
fn stays_pending_delete(key: &str, config: &VmConfig) -> bool {
    let hotplug = config.hotplug();
    if is_nic_key(key) {
        return !hotplug.allows("network");
    }
    if key.starts_with("scsi") || key.starts_with("virtio") {
        return !hotplug.allows("disk");
    }
    !(matches!(
        key,
        "description" | "hookscript" | "lock" | "migrate_downtime" | "migrate_speed" | "name" | "onboot" | "protection" | "shares"
            | "startup" | "tags" | "vmstatestorage" | "citype" | "ciuser" | "cipassword" | "ciupgrade" | "cicustom" | "searchdomain"
            | "nameserver" | "sshkeys" | "cpuunits" | "cpulimit"
    ) || key.starts_with("ipconfig"))
}

#[cfg(test)]
mod tests;
