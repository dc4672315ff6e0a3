//! proxmox_kvm's planner, pure: from what was read (the VM, its config, its power state, the
//! cluster's storages) and the task's params, what the task does: the writes (`Write`), in order,
//! that apply.rs makes, and the prediction (`Plan`) that check mode records and returns instead.
//! `compare.rs` compares a config with the task; `power.rs` holds the power transitions.

mod clone;
mod compare;
mod power;
mod volumes;

use std::collections::BTreeMap;

use module_utils::check::predictions::PredictedVm;
use module_utils::check::unknown::KNOWN_AFTER_APPLY;
use module_utils::pve::bootorder;
use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{is_nic_key, Disk};
use module_utils::pve::propstring::{PropertyString, NET};
use module_utils::pve::resources::clone_other_node;
use module_utils::pve::resources::{StorageResource, VmResource};
use module_utils::pve::storage::{has_template_feature, StorageConfig};
use module_utils::pve::volume::Volume;
use module_utils::{Error, Result};
use serde_json::Map;

use clone::clone_config;
pub use clone::{clone, clone_base, clone_source, clone_target};
pub use compare::{
    converge, drift_line, drive_value, nic_value, predict, scalar_equal, Change, Converge, DriveOutcome, Refusal,
};
pub use power::{transition, Power, PowerCall, Transition, Wanted};
pub use volumes::allocating_on;
pub use volumes::is_marked;
use volumes::{add_create_values, clone_smbios1, mark_new_mac, Allocator};

use module_utils::pve::request::{form, Form};

use crate::params::{is_drive_key, CloneOpts, Params};

/// What PVE shows instead of the cloud-init password.
pub const MASKED: &str = "**********";

/// The writes of one task, as apply.rs makes them; check mode makes none.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// `PUT .../config` guarded by `digest`, then the config read back. `boot_after`: `body` sets a
    /// boot order and a CD-ROM drive PVE would append to it, so `boot` is sent in a second `PUT`
    /// after the rest (guarded by the digest of the read between them), which makes the order the
    /// one asked for whatever order PVE walks the keys in (docs/pve-semantics.md §46).
    Config { vm: VmResource, body: Form, digest: Option<String>, context: String, boot_after: bool },
    /// `POST /nodes/{node}/qemu` with `vmid` first (`None`: the next free id, taken again after a
    /// collision with another run), then the config read back.
    Create { node: String, vmid: Option<u64>, name: Option<String>, label: String, form: Form },
    /// `POST .../clone` with `newid` first (`None`: as `Create`), the wait for the clone's lock
    /// to go, then the clone converged to the task (planned from the clone as PVE made it).
    /// `node`: where PVE puts the clone, `target` or else the source's node. `configure`: what the
    /// configuring write sets, planned from the predicted clone, for the guard (apply re-plans it).
    Clone { source: VmResource, newid: Option<u64>, name: String, node: String, body: Form, configure: Form },
    /// `POST .../status/<verb>`, then, when `read_back`, the config read back.
    Power { vm: VmResource, call: PowerCall, body: Form, read_back: bool },
    /// A stop first when `stop` is set (its body), then `DELETE` the VM and a check that it is gone.
    Remove { vm: VmResource, stop: Option<Form>, query: Form },
    /// A stop first when `stop_first`, then `POST .../template`, then the config read back.
    Template { vm: VmResource, stop_first: bool },
    /// `POST .../migrate`.
    Migrate { vm: VmResource, body: Form, context: String },
}

/// What one task changes: the writes, and the world after them as predicted.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub write: Write,
    /// What check mode records for the later tasks of its run.
    pub prediction: PredictedVm,
    /// The VM after the task (for a new VM whose id PVE picks: vmid 0 until it is known).
    pub vm: VmResource,
    /// Its config after the task.
    pub after: VmConfig,
    /// A new VM without a vmid: the ids the cluster (with this run's predictions) holds, so check
    /// mode predicts the next free one that is not among them.
    pub auto_vmid: Option<Vec<u64>>,
    /// A new VM's config as a function of its vmid (its volume names hold it), to plan again
    /// once a check run has predicted the vmid.
    pub new_config: Option<NewConfig>,
}

impl Plan {
    /// Set the vmid of a new VM, once known, and name its volumes with it.
    pub fn set_vmid(&mut self, vmid: u64) {
        self.vm.vmid = vmid;
        self.prediction.vmid = vmid;
        if let Some(new) = &self.new_config {
            self.after = new.config(vmid);
            self.prediction.current = masked_map(self.after.current.clone());
        }
    }
}

/// The inputs of a new VM's predicted config: a create's task config, or a clone's source.
#[derive(Debug, Clone, PartialEq)]
pub enum NewConfig {
    Create {
        desired: BTreeMap<String, String>,
        default_storage: Option<String>,
        storages: Vec<StorageConfig>,
        /// The volumes listed on the storages the new disks go to (`Allocator::new`).
        listed: Vec<String>,
    },
    Clone {
        source: Box<VmConfig>,
        name: String,
        opts: Box<CloneOpts>,
        changes: Vec<Change>,
        storages: Vec<StorageConfig>,
        listed: Vec<String>,
    },
}

impl NewConfig {
    /// The config PVE will hold for new VM `vmid` (0: not known, its volume names then known
    /// only after apply).
    pub fn config(&self, vmid: u64) -> VmConfig {
        match self {
            NewConfig::Create { desired, default_storage, storages, listed } => {
                let mut alloc = Allocator::new(vmid, storages, std::iter::empty(), listed);
                let mut config = desired
                    .iter()
                    .filter(|(_, v)| !v.is_empty())
                    .map(|(k, v)| {
                        let value = if is_drive_key(k) {
                            alloc.allocate(k, v, default_storage.as_deref())
                        } else {
                            mark_new_mac(k, v)
                        };
                        (k.clone(), value)
                    })
                    .collect();
                add_create_values(&mut config);
                VmConfig::from_current(config)
            }
            NewConfig::Clone { source, name, opts, changes, storages, listed } => {
                clone_config(&clone_base(source, name, vmid, opts, storages, listed), vmid, changes, storages, listed)
            }
        }
    }
}

fn masked_map(mut current: BTreeMap<String, String>) -> BTreeMap<String, String> {
    if current.contains_key("cipassword") {
        current.insert("cipassword".into(), MASKED.into());
    }
    current
}

/// A prediction with the cloud-init password masked, as PVE shows it.
fn masked(mut vm: PredictedVm) -> PredictedVm {
    if vm.current.contains_key("cipassword") {
        vm.current.insert("cipassword".into(), MASKED.into());
    }
    vm
}

fn skiplock(p: &Params, f: &mut Form) {
    if p.skiplock {
        f.push(("skiplock".into(), "1".into()));
    }
}

/// The VM resource of a VM this run creates (not yet read from `/cluster/resources`).
pub fn resource(vmid: u64, name: Option<&str>, node: &str, status: &str) -> VmResource {
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

/// The power state of a VM as `/cluster/resources` lists it, for the paths that do not read
/// `status/current` (a paused VM is listed as running).
pub fn listed_power(vm: &VmResource) -> Power {
    Power::from_status(&vm.status, None, vm.lock.as_deref())
}

// ------------------------------------------------------------------- changes

/// Write `changes` to an existing VM in one digest-guarded `PUT .../config`. `storages`: the
/// cluster's, to name the volumes of new disks as PVE will (unknown storages: left as sent), with
/// `listed`, the volumes on the storages they go to.
pub fn update(
    vm: &VmResource,
    config: &VmConfig,
    changes: &[Change],
    p: &Params,
    storages: &[StorageConfig],
    listed: &[String],
) -> Plan {
    let running = vm.status == "running";
    let mut predicted = predict(config, changes, running);
    Allocator::new(vm.vmid, storages, config.current.iter().chain(config.pending.iter()), listed)
        .name_changes(&mut predicted, changes);
    let body = compare::config_body(changes);
    predicted = with_appended_boot(config, &body, predicted, running);
    let context = format!("Unable to update vm {} with vmid {}", vm.name.as_deref().unwrap_or(""), vm.vmid);
    config_write(p, vm, config, body, context, predicted)
}

/// The plan of one config write (`PUT .../config`, with skiplock and the digest of the read it
/// was planned from) and the config it leaves.
fn config_write(
    p: &Params,
    vm: &VmResource,
    config: &VmConfig,
    mut body: Form,
    context: String,
    predicted: VmConfig,
) -> Plan {
    skiplock(p, &mut body);
    let digest = p.digest.clone().or_else(|| config.digest.clone());
    let boot_after = bootorder::depends_on_key_order(config.current.get("boot").map(String::as_str), &body);
    Plan {
        write: Write::Config { vm: vm.clone(), body, digest, context, boot_after },
        prediction: masked(PredictedVm::of(vm, &predicted)),
        vm: vm.clone(),
        after: predicted,
        auto_vmid: None,
        new_config: None,
    }
}

/// `predicted` with the boot order PVE's config update leaves when `body` sets a CD-ROM drive the
/// applied order lacks and no `boot` (one with `boot` is sent in two writes, `boot` last, and
/// ends with the order asked for): each such drive appended to the order read before the write,
/// as the pending `boot` PVE writes, applied like any other on a stopped VM. Two or more drives
/// join in PVE's key order: the tail is known after apply (docs/pve-semantics.md §46).
fn with_appended_boot(config: &VmConfig, body: &Form, predicted: VmConfig, running: bool) -> VmConfig {
    let applied = config.current.get("boot").map(String::as_str);
    let added = bootorder::appended(applied, body);
    if added.is_empty() || body.iter().any(|(k, _)| k == "boot") {
        return predicted;
    }
    let mut order = bootorder::order(applied);
    let boot = if added.len() == 1 {
        order.extend(added);
        bootorder::print(&order)
    } else {
        order.push(KNOWN_AFTER_APPLY.to_string());
        bootorder::print(&order)
    };
    let before = config.current.get("boot").map(String::as_str);
    let pending = module_utils::pve::hotplug::stays_pending("boot", before, &boot, running, config);
    predicted.with_change("boot", Some(&boot), pending)
}

/// A config write's requests: `body` whole, or with `boot_after` the body without `boot` (and
/// the `skiplock` it carries) and then `boot` alone, with the same `skiplock`.
pub fn boot_last(body: &Form, boot_after: bool) -> (Form, Option<Form>) {
    if !boot_after {
        return (body.clone(), None);
    }
    let first: Form = body.iter().filter(|(k, _)| k != "boot").cloned().collect();
    let second: Form = body.iter().filter(|(k, _)| k == "boot" || k == "skiplock").cloned().collect();
    (first, Some(second))
}

/// The warning for the `changes` that `after` holds pending: PVE applies them at the next start.
pub fn pending_warning(vmid: u64, changes: &[Change], after: &VmConfig) -> Option<String> {
    let pending: Vec<&str> = changes.iter().map(|c| c.key.as_str()).filter(|k| after.is_pending(k)).collect();
    (!pending.is_empty()).then(|| {
        format!(
            "the change of {} on VM {vmid} is pending: Proxmox VE applies it when the VM is next started (it could not be hot-plugged)",
            pending.join(", ")
        )
    })
}

/// What `delete` or `revert` does: the message, and the plan when there is anything to do.
pub struct DeleteOrRevert {
    pub msg: String,
    pub plan: Option<Plan>,
}

/// Remove the keys `delete` names that the config has, or revert the pending changes `revert`
/// names; a running VM keeps a removal pending when it cannot take it live (docs/pve-semantics.md §6).
pub fn delete_or_revert(vm: &VmResource, config: &VmConfig, p: &Params) -> DeleteOrRevert {
    let running = vm.status == "running";
    let label = config.get("name").map(str::to_string).or_else(|| vm.name.clone()).unwrap_or_default();
    let (param, keys, msg): (&str, Vec<String>, String) = if !p.delete.is_empty() {
        let keys = p.delete.iter().filter(|k| config.get(k).is_some()).cloned().collect();
        ("delete", keys, format!("Settings has deleted on VM {label} with vmid {}", vm.vmid))
    } else {
        let keys = p.revert.iter().filter(|k| config.is_pending(k)).cloned().collect();
        ("revert", keys, format!("Settings has reverted on VM {label} with vmid {}", vm.vmid))
    };
    if keys.is_empty() {
        return DeleteOrRevert { msg: format!("Nothing to {param} on VM {label} with vmid {}", vm.vmid), plan: None };
    }
    let mut predicted = config.clone();
    for k in &keys {
        if param == "delete" {
            let pending = running && module_utils::pve::hotplug::delete_waits(&config.hotplug(), k);
            predicted = predicted.with_change(k, None, pending);
        } else {
            predicted.pending.remove(k);
            predicted.pending_delete.remove(k);
        }
    }
    let predicted = compare::applied_if_stopped(predicted, running);
    let body = form([(param, keys.join(","))]);
    let context = format!("Unable to {param} settings on VM {label} with vmid {}", vm.vmid);
    DeleteOrRevert { msg, plan: Some(config_write(p, vm, config, body, context, predicted)) }
}

// ------------------------------------------------------------ create, clone

/// Create a VM on `node` with the task's config; `taken`: the vmids in the cluster now;
/// `storages`: the cluster's, to name the new volumes as PVE will, with `listed`, the volumes
/// on the storages they go to.
pub fn create(node: &str, p: &Params, taken: Vec<u64>, storages: &[StorageConfig], listed: &[String]) -> Plan {
    let new_config = NewConfig::Create {
        desired: p.desired.clone(),
        default_storage: p.storage.clone(),
        storages: storages.to_vec(),
        listed: listed.to_vec(),
    };
    let vmid = p.vmid.unwrap_or(0);
    let planned = new_config.config(vmid);
    // A new VM has no value to remove: an empty one is not sent (docs/pve-semantics.md §34.4).
    let mut f: Form = p.desired.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| (k.clone(), v.clone())).collect();
    for (k, v) in [("pool", &p.pool), ("storage", &p.storage), ("archive", &p.archive)] {
        if let Some(v) = v {
            f.push((k.into(), v.clone()));
        }
    }
    if p.archive.is_some() && p.force {
        f.push(("force".into(), "1".into()));
    }
    Plan {
        write: Write::Create { node: node.to_string(), vmid: p.vmid, name: p.name.clone(), label: p.label(), form: f },
        prediction: masked(PredictedVm::created(vmid, p.name.clone(), node, &planned)),
        vm: resource(vmid, p.name.as_deref(), node, "stopped"),
        after: planned,
        auto_vmid: p.vmid.is_none().then_some(taken),
        new_config: Some(new_config),
    }
}

// -------------------------------------------------------------------- power

/// The prediction after a power change: pending changes apply at a start or a stop
/// (docs/pve-semantics.md §6).
/// The power state itself is recorded for the later tasks of the run, which read it as
/// `status/current` would answer (a paused VM is listed as running, §37.1). A hibernation locks the
/// config (`lock: suspended`, RunState.pm `vm_suspend`), and the start of a hibernated VM removes
/// the lock with the saved state's keys (QemuServer.pm `vm_start_nolock`).
fn power_prediction(vm: &VmResource, config: &VmConfig, power: Power, template: bool) -> PredictedVm {
    let mut p = PredictedVm::of(vm, config);
    p.status = power.resource_status().to_string();
    p.power = Some(power.as_str().to_string());
    p.template = template;
    if power == Power::Stopped || power == Power::Running {
        p.current = config.effective();
        p.pending.clear();
        p.pending_delete.clear();
    }
    if power == Power::Hibernated {
        p.current.insert("lock".into(), "suspended".into());
    } else if p.current.get("lock").is_some_and(|l| l == "suspended") {
        for key in ["lock", "vmstate", "runningmachine", "runningcpu", "running-nets-host-mtu"] {
            p.current.remove(key);
        }
    }
    masked(p)
}

/// Make the power call `transition` chose; `next`: the power state after it.
pub fn power(vm: &VmResource, config: &VmConfig, call: PowerCall, next: Power, p: &Params) -> Plan {
    let mut body = call.body(p.timeout);
    skiplock(p, &mut body);
    let after = if matches!(next, Power::Stopped | Power::Running) && call != PowerCall::Resume {
        VmConfig::from_current(config.effective())
    } else {
        config.clone()
    };
    let read_back = call.changes_config(config);
    Plan {
        write: Write::Power { vm: vm.clone(), call, body, read_back },
        prediction: power_prediction(vm, config, next, vm.template),
        vm: vm.clone(),
        after,
        auto_vmid: None,
        new_config: None,
    }
}

/// The config after a conversion to a template: `template: 1` and every disk volume of the
/// applied config renamed to its base volume where its storage has the 'template' feature
/// (`storage::has_template_feature`; `template_create` skips the others, a thick-LVM disk stays
/// `vm-`; a storage not in `storages` is assumed to have it); pending changes stay pending, as a
/// stopped VM keeps them until its next start (qemu-server API2/Qemu.pm `template` writes
/// `template: 1` into the loaded config and `template_create` walks its volumes, neither applies
/// pending values; CD-ROM and cloud-init drives are not converted).
pub fn template_config(config: &VmConfig, vmid: u64, storages: &[StorageConfig]) -> VmConfig {
    let mut whole = config.clone();
    let out = &mut whole.current;
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
        if !file.contains(&from) {
            continue;
        }
        // converted where its storage has the template feature, kept where it has not; a storage
        // this user cannot see (or of a type not known here) leaves the name to PVE
        let feature = Volume::parse(&file).and_then(|vol| {
            let scfg = storages.iter().find(|s| s.storage == vol.storage)?;
            has_template_feature(&scfg.plugintype, &vol)
        });
        *v = match feature {
            Some(true) => format!("{}{rest}", file.replace(&from, &to)),
            Some(false) => continue,
            None => match file.split_once(':') {
                Some((sid, _)) => format!("{sid}:{KNOWN_AFTER_APPLY}{rest}"),
                None => continue,
            },
        };
    }
    whole
}

/// Convert a VM that is not a template yet; a running one only with `force` (stopped first).
pub fn template(
    vm: &VmResource,
    config: &VmConfig,
    now: Power,
    p: &Params,
    storages: &[StorageConfig],
) -> Result<Plan> {
    let running = now.is_running();
    if running && !p.force {
        return Err(Error::failed(format!(
            "VM {} is running: a running VM cannot be converted to a template; stop it first or set force: true",
            vm.vmid
        )));
    }
    let planned = template_config(config, vm.vmid, storages);
    Ok(Plan {
        write: Write::Template { vm: vm.clone(), stop_first: running },
        prediction: power_prediction(vm, &planned, Power::Stopped, true),
        vm: vm.clone(),
        after: planned,
        auto_vmid: None,
        new_config: None,
    })
}

/// Refuse to remove a locked VM (a hibernated VM's `suspended` lock aside), before its power
/// state is even read.
pub fn refuse_locked(vm: &VmResource, config: &VmConfig) -> Result<()> {
    let lock = config.current.get("lock").cloned().or_else(|| vm.lock.clone());
    match lock.filter(|l| l != "suspended") {
        Some(lock) => Err(Error::failed(format!(
            "VM {} is locked ({lock}) and cannot be removed now{}; nothing was changed",
            vm.vmid,
            if lock == "clone" { ": a clone task is still running" } else { "" }
        ))),
        None => Ok(()),
    }
}

/// Remove a VM that `refuse_locked` let through: refused while running without `force`; a
/// running VM is stopped first.
pub fn remove(vm: &VmResource, config: &VmConfig, now: Power, p: &Params) -> Result<Plan> {
    let running = now.is_running();
    if running && !p.force {
        return Err(Error::failed(format!("VM {} is running. Stop it before deletion or use force=true.", vm.vmid)));
    }
    let stop = running.then(|| {
        let mut body = Vec::new();
        skiplock(p, &mut body);
        body
    });
    let mut query: Form = Vec::new();
    if p.purge {
        query.push(("purge".into(), "1".into()));
    }
    if p.destroy_unreferenced_disks {
        query.push(("destroy-unreferenced-disks".into(), "1".into()));
    }
    skiplock(p, &mut query);
    let mut gone = PredictedVm::of(vm, config);
    gone.removed = true;
    Ok(Plan {
        write: Write::Remove { vm: vm.clone(), stop, query },
        prediction: masked(gone),
        vm: vm.clone(),
        after: config.clone(),
        auto_vmid: None,
        new_config: None,
    })
}

// ------------------------------------------------------------------ migrate

/// Migrate a VM to `node`: `None` when it is there already; refused before any call when PVE
/// would abort the migration (`migration_refusal`).
pub fn migrate(
    vm: &VmResource,
    config: &VmConfig,
    storages: &[StorageResource],
    node: &str,
    p: &Params,
) -> Result<Option<Plan>> {
    if vm.node == node {
        return Ok(None);
    }
    let from = vm.node.clone();
    // PVE would start the qmigrate task and abort it; refusing here, before any call, lets
    // check mode predict the refusal too.
    let running = vm.status == "running";
    if let Some(problem) = migration_refusal(config, storages, &from, running, p.with_local_disks) {
        return Err(Error::failed(format!("Unable to migrate VM {} from {from} to {node}: {problem}", vm.vmid)));
    }
    let mut moved = vm.clone();
    moved.node = node.to_string();
    let body = form([
        ("target", node),
        ("online", if running { "1" } else { "0" }),
        ("with-local-disks", if p.with_local_disks { "1" } else { "0" }),
    ]);
    Ok(Some(Plan {
        write: Write::Migrate {
            vm: vm.clone(),
            body,
            context: format!("Unable to migrate VM {} from {from} to {node}", vm.vmid),
        },
        prediction: masked(PredictedVm::of(&moved, config)),
        vm: moved,
        after: config.clone(),
        auto_vmid: None,
        new_config: None,
    }))
}

/// Why PVE would abort migrating a VM with this config away from `node`, if it would
/// (QemuMigrate.pm scan_local_volumes; pvesim's migrate follows it): a CD-ROM image on storage the
/// target cannot see, or, for a live migration without `with-local-disks`, an attached disk on
/// storage that is not shared. A storage missing from `/cluster/resources` is left to PVE.
pub fn migration_refusal(
    config: &VmConfig,
    storages: &[StorageResource],
    node: &str,
    running: bool,
    with_local_disks: bool,
) -> Option<String> {
    let is_local = |storage: &str| storages.iter().any(|s| s.node == node && s.storage == storage && !s.shared);
    let effective = config.effective();
    let mut live_local = Vec::new();
    for (key, value) in &effective {
        let Some(disk) = Disk::parse(key, value) else { continue };
        if disk.bus == "unused" {
            continue; // copied offline even in a live migration
        }
        let volume = disk.volume.as_deref().unwrap_or("");
        if volume == "cdrom" {
            return Some("can't migrate local cdrom drive".into());
        }
        let Some(storage) = disk.storage.as_deref() else { continue };
        if !is_local(storage) {
            continue;
        }
        if disk.media == "cdrom" {
            if !volume.contains("cloudinit") {
                return Some(format!("local cdrom image {volume} on {storage} (remove the CD-ROM first)"));
            }
        } else if running && !with_local_disks {
            live_local.push(volume.to_string());
        }
    }
    (!live_local.is_empty()).then(|| {
        format!(
            "can't live migrate attached local disks without with-local-disks option ({}); set with_local_disks: true",
            live_local.join(", ")
        )
    })
}
