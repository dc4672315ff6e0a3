//! What a VM task could have touched, read just before the write that starts it and read again
//! when it fails: the one rule that decides whether a failed task changed the VM
//! (docs/pve-semantics.md §31).
//!
//! A PVE task can fail before its effect (a config lock, a lock timeout, a linked clone still on
//! a template's base volume, a VM no longer on the node) or after part of it (a start that
//! applied the pending changes, then QEMU failed). Its exit status does not say which; the VM
//! does. So for each write that starts a VM task, `Footprint::before` reads what that task could
//! touch (`Touches`: the config with its pending section, the power state, the VM's owned volumes
//! and their sizes, the node it is on), and `Footprint::unchanged` reads the same again after a
//! failure and compares. Only an equal read is "nothing was changed"; a read that fails is not.
//! The reads before a write reuse what the module itself read since the run's last write
//! (`RecentReads`), so a write planned from a fresh config costs no second read of it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::pve::devices::is_disk_key;
use crate::pve::request::{form, ApiPath, Form, Method, Read};
use crate::pve::volume::Volume;

/// What one VM task could change: its part of the VM's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Touches {
    pub config: bool,
    pub power: bool,
    pub volumes: bool,
    /// Which node holds the VM, and whether it exists at all (migrate, destroy).
    pub placement: bool,
    /// The `lock` this task itself sets while it works (and leaves if it fails midway): that lock
    /// is compared; any other is another job's.
    pub own_lock: Option<&'static str>,
    /// A create or clone: the VM did not exist before, so "as before" is no config anywhere in
    /// the cluster and the same volumes of its vmid on the storages the write names.
    pub new_vm: bool,
}

const POWER: Touches =
    Touches { config: true, power: true, volumes: false, placement: false, own_lock: None, new_vm: false };
const DISK: Touches =
    Touches { config: true, power: false, volumes: true, placement: false, own_lock: None, new_vm: false };
// QemuServer.pm destroy_vm writes `lock: destroyed` before it removes the config; QemuMigrate.pm
// phase1 sets `lock: migrate` (§31).
const DESTROY: Touches =
    Touches { config: true, power: true, volumes: true, placement: true, own_lock: Some("destroyed"), new_vm: false };
const MIGRATE: Touches =
    Touches { config: true, power: true, volumes: false, placement: true, own_lock: Some("migrate"), new_vm: false };
// Qemu.pm create_vm and clone_vm: a worker that fails removes the VM it made and its volumes
// (docs/pve-semantics.md §46.4); what is left, if anything, is a change.
const NEW_VM: Touches =
    Touches { config: true, power: false, volumes: true, placement: true, own_lock: None, new_vm: true };

/// The VM a write acts on and what its task could touch, from the write's method, path and form
/// (qemu-server's handlers, §31). A create or clone acts on the VM its `vmid` / `newid` names.
/// `None` for a write whose effect this does not read back: a disk moved to another VM (two VMs),
/// any other.
pub fn touches(method: Method, path: &ApiPath, params: &Form) -> Option<(String, u64, Touches)> {
    let s = path.segments();
    let param = |name: &str| params.iter().find(|(k, _)| k == name).and_then(|(_, v)| v.parse::<u64>().ok());
    match (method, s) {
        (Method::Post, [nodes, node, qemu]) if nodes == "nodes" && qemu == "qemu" => {
            return Some((node.clone(), param("vmid")?, NEW_VM))
        }
        (Method::Post, [nodes, node, qemu, _, clone]) if nodes == "nodes" && qemu == "qemu" && clone == "clone" => {
            return Some((node.clone(), param("newid")?, NEW_VM))
        }
        _ => {}
    }
    let (node, vmid) = match s {
        [nodes, node, qemu, vmid, ..] if nodes == "nodes" && qemu == "qemu" => (node, vmid.parse::<u64>().ok()?),
        _ => return None,
    };
    let rest: Vec<&str> = s[4..].iter().map(String::as_str).collect();
    let t = match (method, rest.as_slice()) {
        (Method::Post, ["status", "start" | "stop" | "shutdown" | "reboot" | "reset" | "suspend" | "resume"]) => POWER,
        (Method::Put, ["resize"]) | (Method::Post, ["config" | "template"]) => DISK,
        (Method::Post, ["move_disk"]) if !params.iter().any(|(k, _)| k == "target-vmid") => DISK,
        (Method::Delete, []) => DESTROY,
        (Method::Post, ["migrate"]) => MIGRATE,
        _ => return None,
    };
    Some((node.clone(), vmid, t))
}

/// The touched part of a VM as read at one moment. `config: None` is "no config on that node".
#[derive(Debug, Clone, PartialEq)]
struct VmState {
    node: String,
    config: Option<BTreeMap<String, Entry>>,
    power: Option<String>,
    /// Per storage, the VM's own volumes there and their sizes.
    volumes: BTreeMap<String, BTreeMap<String, u64>>,
}

/// One key of `GET .../pending`: its value, its pending value, whether its deletion is pending.
type Entry = (Option<String>, Option<String>, bool);

/// A write's footprint: what its task could touch, as read before the write.
#[derive(Debug, Clone, PartialEq)]
pub struct Footprint {
    vmid: u64,
    touches: Touches,
    /// Storages to list besides those the config names (a move's target).
    extra_storages: Vec<String>,
    before: VmState,
}

impl Footprint {
    /// Read, before `method path` is sent, what its task could touch. `None` when the write
    /// starts no VM task this knows, or a read fails (then a failure of its task counts as a
    /// change, as an unknown effect must).
    pub fn before(api: Read<'_>, method: Method, path: &ApiPath, params: &Form) -> Option<Footprint> {
        let (node, vmid, touches) = touches(method, path, params)?;
        let extra_storages = match path.segments().last().map(String::as_str) {
            Some("move_disk") => params.iter().filter(|(k, _)| k == "storage").map(|(_, v)| v.clone()).collect(),
            _ if touches.new_vm => new_vm_storages(api, path, params),
            _ => Vec::new(),
        };
        let mut fp = Footprint { vmid, touches, extra_storages, before: VmState::empty(node) };
        fp.before = fp.read(api, &fp.before.node).ok()?;
        Some(fp)
    }

    /// After the task failed: whether what it could touch reads as before, apart from the
    /// config's `lock` (another holder's, §31). The VM is looked for on the task's node and, if
    /// it left that node, where it is now: a VM someone else moved is still compared.
    pub fn unchanged(&self, api: Read<'_>) -> bool {
        let Ok(mut after) = self.read(api, &self.before.node) else { return false };
        if after.config.is_none() && (self.before.config.is_some() || self.touches.new_vm) {
            match locate(api, self.vmid) {
                Ok(Some(node)) if node != self.before.node => match self.read(api, &node) {
                    Ok(state) => after = state,
                    Err(_) => return false,
                },
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        let placed = !self.touches.placement || after.node == self.before.node;
        placed
            && after.config == self.before.config
            && after.power == self.before.power
            && after.volumes == self.before.volumes
    }

    fn read(&self, api: Read<'_>, node: &str) -> Result<VmState> {
        let vm = ApiPath::new(["nodes", node, "qemu", &self.vmid.to_string()]);
        let mut state = VmState::empty(node.to_string());
        // The config is always read: it says whether the VM is on this node, and names its volumes.
        state.config =
            absent_is_none(api(&vm.join(["pending"]), &Vec::new()))?.map(|v| config_map(&v, self.touches.own_lock));
        if state.config.is_none() && !self.touches.new_vm {
            return Ok(state);
        }
        if !self.touches.config {
            state.config = Some(BTreeMap::new());
        }
        if self.touches.power {
            let status = absent_is_none(api(&vm.join(["status", "current"]), &Vec::new()))?;
            state.power = status.map(|s| {
                let field = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
                format!("{}/{}", field("status"), field("qmpstatus"))
            });
        }
        if self.touches.volumes {
            let mut storages = owned_storages(state.config.as_ref().into_iter().flatten(), self.vmid);
            storages.extend(self.extra_storages.iter().cloned());
            storages.sort_unstable();
            storages.dedup();
            for storage in storages {
                // Only the VM's volumes: pve-storage's `vdisk_list` passes `vmid` to the plugin's
                // `list_images` (a file storage then reads only `images/<vmid>/`).
                let content = ApiPath::new(["nodes", node, "storage", &storage, "content"]);
                let listed = api(&content, &form([("vmid", self.vmid.to_string())]))?;
                state.volumes.insert(storage, volume_sizes(&listed, self.vmid));
            }
        }
        Ok(state)
    }
}

impl VmState {
    fn empty(node: String) -> VmState {
        VmState { node, config: None, power: None, volumes: BTreeMap::new() }
    }
}

/// The storages a create or clone could leave volumes of the new VM on: each storage a value of
/// the create names (`<storage>:<size>`, `<storage>:<volume>`, its `storage`), or for a clone
/// its target `storage` and every storage the source's config names. A read that fails names none.
fn new_vm_storages(api: Read<'_>, path: &ApiPath, params: &Form) -> Vec<String> {
    let storage_of = |value: &str| {
        let first = value.split(',').next().unwrap_or_default();
        let sid = first.split_once(':')?.0;
        let ok = !sid.is_empty() && sid.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        ok.then(|| sid.to_string())
    };
    let mut out: Vec<String> = params.iter().filter(|(k, _)| k == "storage").map(|(_, v)| v.clone()).collect();
    if path.segments().last().map(String::as_str) == Some("clone") {
        let source = ApiPath::new(path.segments()[..4].iter().map(String::as_str));
        if let Ok(config) = api(&source.join(["pending"]), &Vec::new()) {
            let map = config_map(&config, None);
            let drives = map.iter().filter(|(k, _)| is_disk_key(k));
            out.extend(drives.flat_map(|(_, (v, p, _))| [v, p]).flatten().filter_map(|v| storage_of(v)));
        }
    } else {
        out.extend(params.iter().filter(|(k, _)| is_disk_key(k)).filter_map(|(_, v)| storage_of(v)));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// PVE's answer to `GET /nodes/<node>/qemu/<vmid>/pending` where that config is not on the node.
fn absent(pending: &ApiPath) -> Error {
    let s = pending.segments();
    let (node, vmid) = (s.get(1).map_or("", String::as_str), s.get(3).map_or("", String::as_str));
    Error::Api {
        method: "GET".into(),
        path: pending.encoded(),
        status: 500,
        message: format!("Configuration file 'nodes/{node}/qemu-server/{vmid}.conf' does not exist"),
    }
}

/// PVE's answer for a VM whose config is not on the node (`Configuration file
/// 'nodes/<node>/qemu-server/<vmid>.conf' does not exist`, AbstractConfig.pm load_config) as `None`.
fn absent_is_none(read: Result<Value>) -> Result<Option<Value>> {
    match read {
        Ok(v) => Ok(Some(v)),
        Err(Error::Api { status: 500, message, .. }) if message.contains("does not exist") => Ok(None),
        Err(e) => Err(e),
    }
}

/// `GET .../pending` as key → value, pending value and deletion, without `digest` (it follows any
/// change, the lock's too) and without a `lock` other than `own_lock` (a lock another job took says
/// nothing of this task; the task's own lock left behind is a change).
fn config_map(pending: &Value, own_lock: Option<&str>) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    for item in pending.as_array().into_iter().flatten() {
        let Some(key) = item.get("key").and_then(Value::as_str) else { continue };
        let own = own_lock.is_some() && item.get("value").and_then(Value::as_str) == own_lock;
        if key == "digest" || (key == "lock" && !own) {
            continue;
        }
        let text = |k: &str| match item.get(k) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        let delete =
            item.get("delete").is_some_and(|d| d.as_u64().unwrap_or(0) > 0 || d.as_str().is_some_and(|s| s != "0"));
        out.insert(key.to_string(), (text("value"), text("pending"), delete));
    }
    out
}

/// The storages holding volumes `vmid` owns, from the config's values (current and pending).
fn owned_storages<'a>(config: impl IntoIterator<Item = (&'a String, &'a Entry)>, vmid: u64) -> Vec<String> {
    let mut out = Vec::new();
    for (_, (value, pending, _)) in config {
        for value in [value, pending].into_iter().flatten() {
            let volid = value.split(',').next().unwrap_or_default();
            if let Some(v) = Volume::parse(volid).filter(|v| v.owner == Some(vmid)) {
                out.push(v.storage.to_string());
            }
        }
    }
    out
}

/// The volumes of a storage listing that `vmid` owns (all of a listing asked with `vmid`), with their sizes.
fn volume_sizes(listed: &Value, vmid: u64) -> BTreeMap<String, u64> {
    listed
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i.get("vmid").and_then(Value::as_u64) == Some(vmid))
        .filter_map(|i| {
            Some((i.get("volid")?.as_str()?.to_string(), i.get("size").and_then(Value::as_u64).unwrap_or(0)))
        })
        .collect()
}

/// The node `/cluster/resources` places QEMU VM `vmid` on, if any.
fn locate(api: Read<'_>, vmid: u64) -> Result<Option<String>> {
    let all = api(&ApiPath::new(["cluster", "resources"]), &form([("type", "vm")]))?;
    Ok(all.as_array().into_iter().flatten().find_map(|r| {
        let is_it = r.get("vmid").and_then(Value::as_u64) == Some(vmid)
            && r.get("type").and_then(Value::as_str) == Some("qemu");
        is_it.then(|| r.get("node").and_then(Value::as_str).map(str::to_string)).flatten()
    }))
}

/// The answers of the reads a footprint is made of (a config with its pending section, a power
/// state, a storage's content) that the client got since its last write: what the module itself
/// read before planning the write is, for the write, the state before it. Any write empties it.
#[derive(Debug, Default)]
pub struct RecentReads {
    reads: Mutex<Vec<(String, Form, Value)>>,
    /// The vmids of every guest the last `GET /cluster/resources` (all types, or `type=vm`) listed.
    listed: Mutex<Option<BTreeSet<u64>>>,
    /// The user holds `VM.Audit` on every guest (`every_guest_listed`): a listing leaves out none.
    every_guest: AtomicBool,
}

impl RecentReads {
    /// Keep the answer of a read, if it is one a footprint uses.
    pub fn keep(&self, path: &ApiPath, query: &Form, answer: &Value) {
        let s = path.segments();
        let all_guests = query.is_empty() || matches!(query.as_slice(), [(k, v)] if k == "type" && v == "vm");
        if s == ["cluster", "resources"] && all_guests {
            let guests = answer.as_array().into_iter().flatten().filter_map(|r| r.get("vmid").and_then(Value::as_u64));
            *self.listed.lock().unwrap_or_else(|p| p.into_inner()) = Some(guests.collect());
            return;
        }
        let used = matches!(s.last().map(String::as_str), Some("pending" | "content"))
            || s.ends_with(&["status".to_string(), "current".to_string()])
            || s.ends_with(&["cluster".to_string(), "nextid".to_string()]);
        if used {
            let key = path.encoded();
            let mut reads = self.reads.lock().unwrap_or_else(|p| p.into_inner());
            reads.retain(|(p, q, _)| !(*p == key && q == query));
            reads.push((key, query.clone(), answer.clone()));
        }
    }

    /// Keep PVE's answer that a VM's config is not on a node (`GET .../pending` answered `does not
    /// exist`, `absent_is_none`): for a create or clone of that vmid, the footprint's config read
    /// on that node (§66). Kept as `null`, which no `pending` answer is.
    pub fn keep_absent(&self, path: &ApiPath, query: &Form, error: &Error) {
        let pending = path.segments().last().map(String::as_str) == Some("pending") && query.is_empty();
        if pending && matches!(absent_is_none(Err(error.clone())), Ok(None)) {
            self.keep(path, query, &Value::Null);
        }
    }

    /// The user of this run holds `VM.Audit` on every guest (`Privileges::sees_every_guest`):
    /// pve-manager `API2/Cluster.pm` `resources` then lists every guest of the cluster's vmlist to
    /// it, so a vmid the kept listing leaves out has no config on any node (§66.6).
    pub fn every_guest_listed(&self) {
        self.every_guest.store(true, Ordering::Relaxed);
    }

    /// A write was sent: what was read before it may no longer be so.
    pub fn forget(&self) {
        self.reads.lock().unwrap_or_else(|p| p.into_inner()).clear();
        *self.listed.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// `api`, answering a read from what was kept when it can.
    pub fn over<'a>(&'a self, api: Read<'a>) -> impl Fn(&ApiPath, &Form) -> Result<Value> + 'a {
        move |path, query| self.get(path, query).unwrap_or_else(|| api(path, query))
    }

    /// What was kept answers `path?query`: the same read; a storage's volumes of one VM
    /// (`content?vmid=N`) from the whole listing of that storage, which holds them (pve-storage
    /// `vdisk_list` filters by `vmid` alone; `volume_sizes` keeps only that VM's); and the
    /// config of a VM whose vmid `GET /cluster/nextid?vmid=N` found free, which no node holds
    /// (pve-manager `API2/Cluster.pm` `nextid`: the vmid is in none of the cluster's configs),
    /// as PVE answers a config that does not exist (`absent_is_none` reads it so); the same for a
    /// vmid the kept `/cluster/resources` does not list, to a user it lists every guest to (§66.6),
    /// unless `GET /cluster/nextid` just offered it: an offered id is not reserved (§18), another
    /// run may be offered it too, so its config is read as late as can be, just before the write.
    fn get(&self, path: &ApiPath, query: &Form) -> Option<Result<Value>> {
        let key = path.encoded();
        let reads = self.reads.lock().unwrap_or_else(|p| p.into_inner());
        let kept = |key: &str, query: &Form| reads.iter().find(|(p, q, _)| p == key && q == query).map(|(_, _, v)| v);
        if let Some(v) = kept(&key, query) {
            return Some(match v {
                Value::Null => Err(absent(path)),
                v => Ok(v.clone()),
            });
        }
        let s = path.segments();
        let vmid_query = matches!(query.as_slice(), [(k, _)] if k == "vmid");
        if vmid_query && s.last().map(String::as_str) == Some("content") {
            return kept(&key, &Vec::new()).map(|v| Ok(v.clone()));
        }
        if let (["nodes", _, "qemu", vmid, "pending"], true) =
            (s.iter().map(String::as_str).collect::<Vec<_>>().as_slice(), query.is_empty())
        {
            let free = form([("vmid", vmid.to_string())]);
            let nextid = ApiPath::new(["cluster", "nextid"]).encoded();
            if kept(&nextid, &free).is_some() {
                return Some(Err(absent(path)));
            }
            let offered = kept(&nextid, &Vec::new()).and_then(|v| crate::pve::pveformat::lenient_u64(Some(v)));
            let listed = self.listed.lock().unwrap_or_else(|p| p.into_inner());
            let unlisted = match (listed.as_ref(), vmid.parse::<u64>()) {
                (Some(vmids), Ok(id)) => !vmids.contains(&id) && offered != Some(id),
                _ => false,
            };
            if unlisted && self.every_guest.load(Ordering::Relaxed) {
                return Some(Err(absent(path)));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests;
