//! The checks before any write, the same in check and real runs: nodes, storages, volumes and the targets of clone, migrate and move, each refused with PVE's own words.
//!
//! PVE accepts some writes and fails later (a create whose ISO is missing fails inside its task,
//! a NIC on a missing bridge fails at hot-plug), and a check run makes no write at all, so without
//! these checks `--check` would say "changed" where the real run fails. Each check follows the
//! PVE function that refuses the same input and words its message as that function does,
//! prefixed with the task option it is about (docs/pve-semantics.md §26). The reads are made once
//! per `Preflight` (one per module run) however many checks use them: `GET /nodes`, `GET /storage`
//! and one `GET /nodes/{node}/storage/{storage}/content` per storage whose volumes are checked.
//! Bridges are checked by `pve::resources::require_bridge`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::devices::{is_disk_key, volume_storage, Disk};
use crate::pve::pveformat::lenient_u64;
use crate::pve::request::ApiPath;
use crate::pve::resources::clone_other_node;
use crate::pve::storage::StorageConfig;
use crate::pve::volume::{content_and_owner, Volume};

/// The content a task needs a storage to hold (pve-storage `content` types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// Disk images of VMs (`images`).
    Images,
    /// ISO images (`iso`).
    Iso,
    /// Disk images to import from (`import`).
    Import,
    /// Cloud-init and hook snippets (`snippets`).
    Snippets,
}

impl Content {
    pub fn as_str(self) -> &'static str {
        match self {
            Content::Images => "images",
            Content::Iso => "iso",
            Content::Import => "import",
            Content::Snippets => "snippets",
        }
    }
}

/// One node of the cluster, from `GET /nodes` or a node entry of `/cluster/resources` (the same
/// fields, docs/pve-semantics.md §66).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeState {
    pub node: String,
    pub online: bool,
    /// Its CPU count (`maxcpu`, shown only with `Sys.Audit` on the node; docs/pve-semantics.md §43).
    pub maxcpu: Option<u64>,
}

impl NodeState {
    pub fn from_json(i: &Value) -> Option<NodeState> {
        Some(NodeState {
            node: i.get("node").and_then(Value::as_str)?.to_string(),
            online: i.get("status").and_then(Value::as_str) == Some("online"),
            maxcpu: i.get("maxcpu").and_then(Value::as_u64),
        })
    }
}

/// The cluster's nodes once read, shared by the reads of one run (`Preflight::sharing_nodes`): a
/// `/cluster/resources` read fills it, and the checks then read no `GET /nodes`.
pub type KnownNodes = Rc<RefCell<Option<Rc<Vec<NodeState>>>>>;

/// The volumes listed on one storage of one node: volume id -> size in bytes (when listed).
pub type VolumeList = Rc<BTreeMap<String, Option<u64>>>;

/// The checks of one module run, with the reads they share.
/// A volume one task makes, for `Preflight::allocations`: its storage, its volume id as PVE will
/// name it, its size, the task option it comes from and the words PVE puts before a failed
/// allocation in the call that makes it (`unable to create VM 230 - `, `clone failed: `).
#[derive(Clone, Debug, PartialEq)]
pub struct NewVolume {
    pub storage: String,
    pub volid: String,
    pub bytes: u64,
    pub option: String,
    pub during: String,
    /// The format a new disk asks for (`format=`), which its storage may refuse (`new_volume`);
    /// `None` for a copy, whose format PVE resolves to one the storage takes.
    pub format: Option<String>,
    /// A new disk or cloud-init drive `create_disks` allocates (in `format`, else storage.cfg's
    /// default: `new_volume`, §57.3), not a copy.
    pub new_disk: bool,
}

pub struct Preflight<'a> {
    api: &'a dyn Api,
    nodes: KnownNodes,
    storages: RefCell<Option<Rc<Vec<StorageConfig>>>>,
    /// (node, storage) -> the volume ids listed there.
    volumes: RefCell<BTreeMap<(String, String), VolumeList>>,
    /// In a check run (`reserving`): the space earlier tasks of the run are predicted to take
    /// (negative: to free), by `space_key`, which `avail` subtracts from what PVE reports free;
    /// `None` in a real run.
    reserved: Option<BTreeMap<String, i64>>,
    /// In a check run: the space the allocations checked here take (`space_key`, bytes), for the
    /// caller to record with its prediction (`reserved_here`).
    reserved_here: RefCell<Vec<(String, u64)>>,
}

/// The key of a storage's free space: the storage itself where it is shared (every node sees
/// the same space), else `<node>/<storage>`.
pub fn space_key(scfg: &StorageConfig, node: &str) -> String {
    if scfg.shared {
        scfg.storage.clone()
    } else {
        format!("{node}/{}", scfg.storage)
    }
}

/// `storage`'s config where allocating there reserves the size (`StorageConfig::reserves_space`).
fn reserving<'s>(storages: &'s [StorageConfig], storage: &str) -> Option<&'s StorageConfig> {
    storages.iter().find(|s| s.storage == storage).filter(|s| s.reserves_space())
}

/// Volume `volid` of `bytes` fits in `avail` on `scfg`, else PVE's refusal, after `during` (the
/// words of the call that allocates it), as `option`'s error.
fn fits(scfg: &StorageConfig, volid: &str, bytes: u64, avail: u64, option: &str, during: &str) -> Result<()> {
    let volname = Volume::parse(volid).map_or(volid, |v| v.volname);
    match scfg.refuses_allocation(volname, bytes, avail) {
        Some(why) => Err(refuse(option, format!("{during}{why}"))),
        None => Ok(()),
    }
}

fn refuse(option: &str, message: impl AsRef<str>) -> Error {
    Error::failed(format!("{option}: {}", message.as_ref()))
}

/// PVE's words for a node or storage that does not exist, then what does (as the bridges are listed).
fn missing<'n>(option: &str, words: String, what: &str, known: impl Iterator<Item = &'n str>) -> Error {
    let known: Vec<&str> = known.collect();
    refuse(option, format!("{words}; {what}: {}", if known.is_empty() { "none".to_string() } else { known.join(", ") }))
}

impl<'a> Preflight<'a> {
    pub fn new(api: &'a dyn Api) -> Preflight<'a> {
        Preflight {
            api,
            nodes: KnownNodes::default(),
            storages: RefCell::new(None),
            volumes: RefCell::new(BTreeMap::new()),
            reserved: None,
            reserved_here: RefCell::new(Vec::new()),
        }
    }

    /// These checks in a check run: `reserved` is the space earlier tasks of the run are
    /// predicted to take, less what their predicted removals free (by `space_key`), which PVE
    /// does not know yet, so the space checks count it as taken (or free), and what the
    /// allocations checked here take is kept (`reserved_here`). `None`: a real run, PVE's free
    /// space as it is (docs/pve-semantics.md §37.3, §40.1).
    pub fn reserving(self, reserved: Option<BTreeMap<String, i64>>) -> Preflight<'a> {
        Preflight { reserved, ..self }
    }

    /// These checks with the nodes `known` holds once a read of the run filled it (`KnownNodes`).
    pub fn sharing_nodes(self, known: &KnownNodes) -> Preflight<'a> {
        Preflight { nodes: known.clone(), ..self }
    }

    /// In a check run, what a predicted removal of `volids` on `node` frees (`space_key`, volume
    /// id, bytes), for the task to record with its prediction: each volume the storage's listing
    /// holds (an existing one; a volume only predicted has its reservation dropped with its VM,
    /// or kept), with the bytes it hands back at once (`StorageConfig::freed_by` of its listed
    /// size: nothing where the storage does not reserve space). Empty in a real run. The caller
    /// names only the volumes PVE really frees (docs/pve-semantics.md §40.1); the later tasks'
    /// volume names no longer count them (§40.2).
    pub fn freeing<'v>(
        &self,
        node: &str,
        volids: impl IntoIterator<Item = &'v str>,
    ) -> Result<Vec<(String, String, u64)>> {
        let mut out = Vec::new();
        if self.reserved.is_none() {
            return Ok(out);
        }
        let storages = self.storages()?;
        for volid in volids {
            let Some(volume) = Volume::parse(volid) else { continue };
            let Some(scfg) = storages.iter().find(|s| s.storage == volume.storage) else { continue };
            let Some(size) = self.volumes_on(node, volume.storage)?.get(volid).copied() else { continue };
            let bytes = size.unwrap_or(0);
            out.push((space_key(scfg, node), volid.to_string(), scfg.freed_by(volume.volname, bytes)));
        }
        Ok(out)
    }

    /// In a check run, the volumes of `vmid` listed on `node`'s storages that hold images (those
    /// enabled there): what a removal with `destroy-unreferenced-disks` frees besides the
    /// config's, as QemuServer.pm `destroy_vm` lists them (`vdisk_list` of the VM's images).
    /// Empty in a real run.
    pub fn listed_of(&self, node: &str, vmid: u64) -> Result<Vec<String>> {
        let mut out = Vec::new();
        if self.reserved.is_none() {
            return Ok(out);
        }
        for scfg in self.storages()?.iter().filter(|s| s.content.contains("images")) {
            if enabled(std::slice::from_ref(scfg), &scfg.storage, node, "").is_err() {
                continue;
            }
            let listed = self.volumes_on(node, &scfg.storage)?;
            out.extend(listed.keys().filter(|v| Volume::parse(v).is_some_and(|v| v.owner == Some(vmid))).cloned());
        }
        Ok(out)
    }

    /// In a check run, the space the allocations checked so far take (`space_key`, bytes), taken
    /// out: what the task records with its prediction for the later tasks of the run.
    pub fn reserved_here(&self) -> Vec<(String, u64)> {
        self.reserved_here.take()
    }

    /// The cluster's nodes, read once (`GET /nodes`) unless a `/cluster/resources` read of the run
    /// gave them (`sharing_nodes`).
    pub fn nodes(&self) -> Result<Rc<Vec<NodeState>>> {
        if let Some(nodes) = self.nodes.borrow().as_ref() {
            return Ok(nodes.clone());
        }
        let data = self.api.get(&ApiPath::new(["nodes"]), &Vec::new()).map_err(|e| e.context("reading the nodes"))?;
        let nodes: Vec<NodeState> =
            data.as_array().map(|items| items.iter().filter_map(NodeState::from_json).collect()).unwrap_or_default();
        let nodes = Rc::new(nodes);
        *self.nodes.borrow_mut() = Some(nodes.clone());
        Ok(nodes)
    }

    /// storage.cfg as this user sees it, read once (`GET /storage`).
    pub fn storages(&self) -> Result<Rc<Vec<StorageConfig>>> {
        if let Some(storages) = self.storages.borrow().as_ref() {
            return Ok(storages.clone());
        }
        let data =
            self.api.get(&ApiPath::new(["storage"]), &Vec::new()).map_err(|e| e.context("reading the storages"))?;
        let storages: Vec<StorageConfig> = data
            .as_array()
            .map(|items| items.iter().filter_map(StorageConfig::from_json).collect())
            .unwrap_or_default();
        let storages = Rc::new(storages);
        *self.storages.borrow_mut() = Some(storages.clone());
        Ok(storages)
    }

    /// The node exists and is online. A node the cluster does not know fails PVE's proxy with the
    /// address lookup (pve-manager `PVE/HTTPServer.pm` proxies every `/nodes/{node}` call,
    /// pve-common `PVE/Network.pm` `get_ip_from_hostname`); a known node that is offline cannot
    /// be reached (`No route to host`). `localhost` is the node answering. §26.1.
    pub fn node(&self, node: &str, option: &str) -> Result<()> {
        if node == "localhost" {
            return Ok(());
        }
        let nodes = self.nodes()?;
        match nodes.iter().find(|n| n.node == node) {
            None => Err(missing(
                option,
                format!("hostname lookup '{node}' failed - failed to get address info for: {node}: Name or service not known"),
                "the cluster's nodes",
                nodes.iter().map(|n| n.node.as_str()),
            )),
            Some(n) if !n.online => Err(refuse(option, format!("node '{node}' is offline: No route to host"))),
            Some(_) => Ok(()),
        }
    }

    /// The storage exists, is enabled on `node` and holds `content`: pve-storage `PVE/Storage.pm`
    /// `storage_config` and `storage_check_enabled` (in that order: exists, not disabled, not
    /// restricted to other nodes), then the content check of qemu-server `API2/Qemu.pm`
    /// (`$check_storage_access`, `move_vm_disk`: `does not support vm images`) or of pve-storage
    /// `API2/Storage/Status.pm` `upload` for the other types. §26.2.
    pub fn storage(&self, node: &str, storage: &str, content: Content, option: &str) -> Result<()> {
        let storages = self.storages()?;
        let scfg = enabled(&storages, storage, node, option)?;
        if !scfg.content.contains(content.as_str()) {
            return Err(refuse(
                option,
                match content {
                    Content::Images => format!("storage '{storage}' does not support vm images"),
                    other => format!("storage '{storage}' does not support '{}' content", other.as_str()),
                },
            ));
        }
        Ok(())
    }

    /// A volume a task refers to (an ISO, an import source) exists on its storage: PVE's create
    /// and config update fail with `volume <volid> does not exist` (qemu-server `API2/Qemu.pm`
    /// `create_disks`, after `volume_size_info`). A value that is not a `storage:volume` id
    /// (`none`, `cdrom`, a path, a new-disk size) is not a volume to look for. One listing per
    /// storage and node serves every volume on it. §26.3.
    pub fn volume(&self, node: &str, volid: &str, option: &str) -> Result<()> {
        self.look_up(node, volid, option, false)
    }

    /// `volume` of a volume a drive attaches as it is (an ISO): `create_disks` activates it before
    /// it asks its size, so on a file storage PVE's words are Plugin.pm `activate_volume`'s (§68).
    pub fn attached(&self, node: &str, volid: &str, option: &str) -> Result<()> {
        self.look_up(node, volid, option, true)
    }

    fn look_up(&self, node: &str, volid: &str, option: &str, activates: bool) -> Result<()> {
        let Some(storage) = volume_storage(volid) else {
            return Ok(());
        };
        let storages = self.storages()?;
        let scfg = enabled(&storages, storage, node, option)?;
        let file = activates && activate::FILE_TYPES.contains(&scfg.plugintype.as_str());
        self.volname(volid, option)?;
        match self.volumes_on(node, storage)?.contains_key(volid) {
            true => Ok(()),
            // a file storage: create_disks activates it first, Plugin.pm activate_volume's words (§68)
            false if file => Err(refuse(option, format!("volume '{volid}' does not exist"))),
            false => Err(refuse(option, format!("volume {volid} does not exist"))),
        }
    }

    /// The volumes listed on `storage` of `node`, with their sizes (one `GET .../content` per
    /// storage and node per run): what `volume` looks in, the names PVE's `find_free_diskname`
    /// will not give, and the `size=` PVE fills in for a drive naming an existing volume.
    pub fn volumes_on(&self, node: &str, storage: &str) -> Result<VolumeList> {
        let key = (node.to_string(), storage.to_string());
        if let Some(v) = self.volumes.borrow().get(&key) {
            return Ok(v.clone());
        }
        let data = self
            .api
            .get(&ApiPath::new(["nodes", node, "storage", storage, "content"]), &Vec::new())
            .map_err(|e| e.context(&format!("listing the volumes of storage '{storage}' on node {node}")))?;
        let list: BTreeMap<String, Option<u64>> = data
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| {
                        let volid = i.get("volid").and_then(Value::as_str)?.to_string();
                        Some((volid, lenient_u64(i.get("size"))))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let list = Rc::new(list);
        self.volumes.borrow_mut().insert(key, list.clone());
        Ok(list)
    }

    /// Growing existing volume `volid` on `node` by `delta` bytes fits where its storage
    /// reserves the size (`StorageConfig::refuses_growth`: thick LVM, a non-sparse zfspool; the
    /// free space read as `allocation` reads it), else PVE's words after `context` (§42.3).
    pub fn growth(&self, node: &str, volid: &str, delta: u64, context: &str) -> Result<()> {
        self.resizable(volid, context)?;
        let Some(volume) = Volume::parse(volid) else { return Ok(()) };
        let storages = self.storages()?;
        let Some(scfg) = storages.iter().find(|s| s.storage == volume.storage) else { return Ok(()) };
        // a storage that grows the volume even with nothing free needs no status read
        if scfg.refuses_growth(volume.volname, delta, 0).is_none() {
            return Ok(());
        }
        let Some(avail) = self.avail(node, scfg)? else { return Ok(()) };
        match scfg.refuses_growth(volume.volname, delta, avail) {
            Some(why) => Err(refuse(context, why)),
            None => Ok(()),
        }
    }

    /// Allocating `bytes` on `storage` of `node` fits where the storage reserves the size (thick
    /// LVM, a non-sparse zfspool, a preallocating file storage); elsewhere allocation
    /// over-provisions and never fails for space (§22.4). The free space is the storage's `avail`
    /// (`GET /nodes/{node}/storage/{storage}/status`, read only for those types); `volname` names
    /// the volume PVE would create, asked only to word a refusal as PVE does; `during` is what PVE
    /// prefixes the plugin's error with (a move's task says `storage migration failed: `).
    pub fn allocation(
        &self,
        node: &str,
        storage: &str,
        bytes: u64,
        option: &str,
        during: &str,
        volname: &dyn Fn() -> Result<String>,
    ) -> Result<()> {
        let storages = self.storages()?;
        let Some(scfg) = reserving(&storages, storage) else {
            return Ok(());
        };
        let Some(avail) = self.avail(node, scfg)? else {
            return Ok(());
        };
        if scfg.refuses_allocation("", bytes, avail).is_none() {
            if self.reserved.is_some() {
                self.reserved_here.borrow_mut().push((space_key(scfg, node), scfg.reserved_by(&volname()?, bytes)));
            }
            return Ok(());
        }
        fits(scfg, &volname()?, bytes, avail, option, during)
    }

    /// Each of one task's new volumes (in the order PVE allocates them) fits, as `allocation`
    /// checks one: the free space of each storage that reserves sizes is read once and goes down
    /// by what the earlier volumes reserved, so a VM's second disk can be the one that fails, as
    /// in PVE, where each `vdisk_alloc` of `create_disks` or `clone_disk` takes its space.
    pub fn allocations(&self, node: &str, volumes: &[NewVolume]) -> Result<()> {
        if volumes.is_empty() {
            return Ok(());
        }
        let storages = self.storages()?;
        let mut free: BTreeMap<&str, Option<u64>> = BTreeMap::new();
        for v in volumes {
            if v.new_disk {
                self.new_volume(&v.storage, Some(&v.volid), v.format.as_deref(), v.bytes, &v.option, &v.during)?;
            }
            let Some(scfg) = reserving(&storages, &v.storage) else {
                continue;
            };
            let avail = match free.get(v.storage.as_str()) {
                Some(known) => *known,
                None => self.avail(node, scfg)?,
            };
            let Some(avail) = avail else {
                free.insert(&v.storage, None);
                continue;
            };
            fits(scfg, &v.volid, v.bytes, avail, &v.option, &v.during)?;
            let volname = Volume::parse(&v.volid).map_or(v.volid.as_str(), |x| x.volname);
            let taken = scfg.reserved_by(volname, v.bytes);
            free.insert(&v.storage, Some(avail.saturating_sub(taken)));
            if self.reserved.is_some() {
                self.reserved_here.borrow_mut().push((space_key(scfg, node), taken));
            }
        }
        Ok(())
    }

    /// A storage's free bytes on `node` (`avail` of its status), less what earlier tasks of a
    /// check run are predicted to take there (`reserving`); `None` when PVE does not say.
    fn avail(&self, node: &str, scfg: &StorageConfig) -> Result<Option<u64>> {
        let storage = scfg.storage.as_str();
        let status = self
            .api
            .get(&ApiPath::new(["nodes", node, "storage", storage, "status"]), &Vec::new())
            .map_err(|e| e.context(&format!("reading the status of storage '{storage}' on node {node}")))?;
        let taken = self.reserved.as_ref().and_then(|r| r.get(&space_key(scfg, node))).copied().unwrap_or(0);
        Ok(lenient_u64(status.get("avail")).map(|avail| {
            let free = i128::from(avail) - i128::from(taken);
            u64::try_from(free.max(0)).unwrap_or(u64::MAX)
        }))
    }

    /// A clone of a VM on `node` (whose config is `source`) to `target` node and `storage`, as
    /// qemu-server `API2/Qemu.pm` `clone_vm` checks it before it starts: the target node exists
    /// (`PVE::Cluster::check_node_exists`); the storage is enabled on the source node and holds
    /// images, and for another node it is enabled there too and shared; a clone to another node
    /// needs every volume of the source on shared storage (`$check_storage_access_clone`). A
    /// target of `node` itself or `localhost` is no other node. §26.4.
    pub fn clone_target(
        &self,
        node: &str,
        target: Option<&str>,
        storage: Option<&str>,
        source: &BTreeMap<String, String>,
    ) -> Result<()> {
        let target = clone_other_node(node, target);
        if target.is_none() && storage.is_none() {
            return Ok(());
        }
        if let Some(t) = target {
            self.node_exists(t, "target")?;
        }
        let storages = self.storages()?;
        if let Some(sid) = storage {
            self.storage(node, sid, Content::Images, "storage")?;
            if let Some(t) = target {
                let scfg = enabled(&storages, sid, t, "storage")?;
                if !scfg.shared {
                    return Err(refuse("storage", format!("can't clone to non-shared storage '{sid}'")));
                }
            }
        }
        if let Some(t) = target {
            let local = drive_storages(source).into_iter().any(|sid| {
                // a storage this user cannot see is not known to be shared: PVE would refuse too
                !storages.iter().any(|s| s.storage == sid && s.shared)
            });
            if local {
                return Err(refuse("target", format!("can't clone VM to node '{t}' (VM uses local storage)")));
            }
        }
        Ok(())
    }

    /// A migration of the VM on `node` with config `config` to `target`, as qemu-server
    /// `API2/Qemu.pm` `migrate_vm` checks it before its task: not the node itself
    /// (`target is local node.`), a node of the cluster, online (the migration reaches it over
    /// SSH); with `targetstorage`, that storage enabled on the target and holding images
    /// (`$check_storage_access_migrate`); without, every volume's storage enabled on both nodes
    /// and holding that content (`PVE::QemuServer::check_storage_availability`). §26.5.
    pub fn migrate_target(
        &self,
        node: &str,
        target: &str,
        config: &BTreeMap<String, String>,
        targetstorage: Option<&str>,
    ) -> Result<()> {
        if target == node {
            return Err(refuse("target", "target is local node."));
        }
        self.node_exists(target, "target")?;
        self.node(target, "target")?;
        let storages = self.storages()?;
        if let Some(sid) = targetstorage {
            let scfg = enabled(&storages, sid, target, "targetstorage")?;
            if !scfg.content.contains("images") {
                return Err(refuse("targetstorage", format!("storage '{sid}' does not support vm images")));
            }
            return Ok(());
        }
        for (key, value) in config.iter().filter(|(k, _)| is_disk_key(k) && !k.starts_with("unused")) {
            let Some(disk) = Disk::parse(key, value) else { continue };
            let (Some(sid), Some(volid)) = (disk.storage.as_deref(), disk.volume.as_deref()) else { continue };
            let scfg = enabled(&storages, sid, node, key)?;
            enabled(&storages, sid, target, key)?;
            let (vtype, _) = content_and_owner(volid);
            if !scfg.content.contains(vtype) {
                return Err(refuse(
                    key,
                    format!("{volid}: content type '{vtype}' is not available on storage '{sid}'"),
                ));
            }
        }
        Ok(())
    }

    /// A disk moved to `storage` on the VM's `node`: qemu-server `API2/Qemu.pm` `move_vm_disk`
    /// (`storage_check_enabled`, then `does not support vm images`), refused under the task's
    /// `option` (proxmox_disk calls it `target_storage`). §26.6.
    pub fn move_target(&self, node: &str, storage: &str, option: &str) -> Result<()> {
        self.storage(node, storage, Content::Images, option)
    }

    /// `PVE::Cluster::check_node_exists`: `no such cluster node '<node>'`.
    fn node_exists(&self, node: &str, option: &str) -> Result<()> {
        let nodes = self.nodes()?;
        if nodes.iter().any(|n| n.node == node) {
            return Ok(());
        }
        let words = format!("no such cluster node '{node}'");
        Err(missing(option, words, "the cluster's nodes", nodes.iter().map(|n| n.node.as_str())))
    }
}

/// pve-storage `storage_check_enabled` on a storage list: exists, not disabled, on `node`.
fn enabled<'s>(storages: &'s [StorageConfig], storage: &str, node: &str, option: &str) -> Result<&'s StorageConfig> {
    let Some(scfg) = storages.iter().find(|s| s.storage == storage) else {
        let on = |s: &&StorageConfig| {
            !s.disabled && (node == "localhost" || s.nodes.as_ref().is_none_or(|n| n.contains(node)))
        };
        let what = format!("the storages enabled on {node}");
        let known = storages.iter().filter(on).map(|s| s.storage.as_str());
        return Err(missing(option, format!("storage '{storage}' does not exist"), &what, known));
    };
    if scfg.disabled {
        return Err(refuse(option, format!("storage '{storage}' is disabled")));
    }
    if let Some(nodes) = &scfg.nodes {
        if node != "localhost" && !nodes.contains(node) {
            return Err(refuse(option, format!("storage '{storage}' is not available on node '{node}'")));
        }
    }
    Ok(scfg)
}

/// The storages the volumes of a config's drives are on (`none`, `cdrom` and paths have none).
fn drive_storages(config: &BTreeMap<String, String>) -> BTreeSet<String> {
    config
        .iter()
        .filter(|(k, _)| is_disk_key(k) && !k.starts_with("unused"))
        .filter_map(|(k, v)| Disk::parse(k, v)?.storage)
        .collect()
}

mod activate;
mod cpu_models;
mod features;
mod handler_values;
mod imports;
mod mirror;
mod node_pci;
mod node_qemu;
pub use self::{activate::current_volumes, mirror::mirror_refusal, node_pci::*, node_qemu::APT_VERSIONS};
#[cfg(test)]
mod tests;
mod volnames;
