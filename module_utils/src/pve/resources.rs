//! Finding VMs: one `GET /cluster/resources?type=vm` read, then lookups by vmid or name.
//!
//! PVE names are not unique, so a name that matches several VMs is an error listing their
//! vmids; every module resolves its VM through here so the wording is the same everywhere.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::pveformat::{lenient_bool, lenient_u64};
use crate::pve::request::{form, ApiPath};

/// One entry of `/cluster/resources?type=vm`, with the fields modules decide on typed.
#[derive(Debug, Clone, PartialEq)]
pub struct VmResource {
    pub vmid: u64,
    pub name: Option<String>,
    pub node: String,
    /// `qemu` or `lxc`.
    pub kind: String,
    pub status: String,
    pub template: bool,
    pub lock: Option<String>,
    /// The entry as PVE sent it.
    pub raw: Map<String, Value>,
}

impl VmResource {
    pub fn from_json(v: &Value) -> Option<VmResource> {
        let raw = v.as_object()?.clone();
        Some(VmResource {
            vmid: lenient_u64(raw.get("vmid"))?,
            name: raw.get("name").and_then(Value::as_str).map(str::to_string),
            node: raw.get("node").and_then(Value::as_str)?.to_string(),
            kind: raw.get("type").and_then(Value::as_str).unwrap_or("qemu").to_string(),
            status: raw.get("status").and_then(Value::as_str).unwrap_or("unknown").to_string(),
            template: lenient_bool(raw.get("template")),
            lock: raw.get("lock").and_then(Value::as_str).map(str::to_string),
            raw,
        })
    }

    /// These modules act on QEMU configs only: a container with the task's vmid is refused.
    pub fn require_qemu(&self) -> Result<()> {
        if self.kind != "qemu" {
            return Err(Error::failed(format!(
                "VM with vmid {} is a container ({}), not a QEMU VM",
                self.vmid, self.kind
            )));
        }
        Ok(())
    }

    /// The API path of this VM, `/nodes/<node>/<qemu|lxc>/<vmid>`.
    pub fn path(&self) -> ApiPath {
        ApiPath::new(["nodes", &self.node, &self.kind, &self.vmid.to_string()])
    }
}

/// Sorts VMs by vmid (stable); one function, so that the binary holds one copy of the sort for
/// every caller (ARCHITECTURE.md "Release size").
pub fn sort_by_vmid(vms: &mut [VmResource]) {
    vms.sort_by_key(|v| v.vmid);
}

/// All VMs and containers of the cluster, sorted by vmid.
pub fn cluster_vms(api: &dyn Api) -> Result<Vec<VmResource>> {
    cluster_vms_and_nodes(api).map(|(vms, _)| vms)
}

/// All VMs and containers of the cluster, sorted by vmid, and the node entries, from one
/// `/cluster/resources` read without `type` (docs/pve-semantics.md §66): pve-manager
/// `API2/Cluster.pm` `resources` lists every node of the nodelist with
/// `API2Tools.pm` `extract_node_stats`, as `GET /nodes` (`API2/Nodes.pm` `index`) does, with the
/// same `Sys.Audit` rule for its figures, so the checks need no `GET /nodes` of their own.
pub fn cluster_vms_and_nodes(api: &dyn Api) -> Result<(Vec<VmResource>, Vec<Value>)> {
    let data = api
        .get(&ApiPath::new(["cluster", "resources"]), &Vec::new())
        .map_err(|e| e.context("Failed to retrieve VMs information from cluster resources"))?;
    let items = data.as_array().cloned().unwrap_or_default();
    let kind = |i: &Value| i.get("type").and_then(Value::as_str).map(str::to_string);
    let mut vms: Vec<VmResource> = items
        .iter()
        .filter(|i| matches!(kind(i).as_deref(), Some("qemu" | "lxc")))
        .filter_map(VmResource::from_json)
        .collect();
    sort_by_vmid(&mut vms);
    let nodes = items.into_iter().filter(|i| kind(i).as_deref() == Some("node")).collect();
    Ok((vms, nodes))
}

/// The bridges a NIC of a VM on `node` can be plugged into, from one
/// `GET /nodes/{node}/network?type=any_bridge`: pve-manager PVE/API2/Network.pm `index` lists the
/// node's Linux and OVS bridges and, with SDN installed, its VNets (`get_local_vnets`), and drops
/// every bridge the user may not use (SDN.Audit or SDN.Use on `/sdn/zones/localnetwork/<bridge>`),
/// which qemu-server's `check_bridge_access` would refuse in the write anyway.
pub fn node_bridges(api: &dyn Api, node: &str) -> Result<Vec<String>> {
    let data = api
        .get(&ApiPath::new(["nodes", node, "network"]), &form([("type", "any_bridge")]))
        .map_err(|e| e.context(&format!("reading the bridges of node {node}")))?;
    let mut names: Vec<String> = data
        .as_array()
        .map(|items| items.iter().filter_map(|i| i.get("iface").and_then(Value::as_str).map(str::to_string)).collect())
        .unwrap_or_default();
    names.sort_unstable();
    Ok(names)
}

/// Refuse, before any write, a NIC on a bridge the VM's node does not have (or this user may not
/// use): PVE would accept the config and then fail to plug it (`hotplug problem - bridge ... does
/// not exist`), leaving the change pending, or fail the next start.
pub fn require_bridge(bridges: &[String], bridge: &str, node: &str, option: &str) -> Result<()> {
    if bridges.iter().any(|b| b == bridge) {
        return Ok(());
    }
    let known = if bridges.is_empty() { "none".to_string() } else { bridges.join(", ") };
    Err(Error::failed(format!(
        "{option}: bridge '{bridge}' does not exist on node {node}, or this user may not use it (SDN.Use); the node's bridges: {known}; nothing was changed"
    )))
}

/// One storage of one node, from `/cluster/resources` (`type: storage`).
#[derive(Debug, Clone, PartialEq)]
pub struct StorageResource {
    pub storage: String,
    pub node: String,
    /// `dir`, `lvmthin`, `zfspool`, `rbd`, `nfs`, ...
    pub plugintype: String,
    pub content: Vec<String>,
    pub shared: bool,
}

impl StorageResource {
    pub fn from_json(v: &Value) -> Option<StorageResource> {
        if v.get("type").and_then(Value::as_str) != Some("storage") {
            return None;
        }
        Some(StorageResource {
            storage: v.get("storage").and_then(Value::as_str)?.to_string(),
            node: v.get("node").and_then(Value::as_str)?.to_string(),
            plugintype: v.get("plugintype").and_then(Value::as_str).unwrap_or("").to_string(),
            content: v
                .get("content")
                .and_then(Value::as_str)
                .map(|c| c.split(',').map(str::to_string).collect())
                .unwrap_or_default(),
            shared: lenient_bool(v.get("shared")),
        })
    }

    /// Whether volumes are files (`<vmid>/vm-<vmid>-disk-<n>.<fmt>`) rather than block devices
    /// (`vm-<vmid>-disk-<n>`) (pve-storage Plugin.pm, docs/pve-semantics.md §8).
    pub fn is_file_based(&self) -> bool {
        crate::pve::storage::is_file_storage(&self.plugintype)
    }
}

/// VMs and storages in one unfiltered `/cluster/resources` read.
pub fn cluster_vms_and_storages(api: &dyn Api) -> Result<(Vec<VmResource>, Vec<StorageResource>)> {
    let data = api
        .get(&ApiPath::new(["cluster", "resources"]), &Vec::new())
        .map_err(|e| e.context("Failed to retrieve cluster resources"))?;
    let items = data.as_array().cloned().unwrap_or_default();
    let mut vms: Vec<VmResource> = items
        .iter()
        .filter(|i| matches!(i.get("type").and_then(Value::as_str), Some("qemu" | "lxc")))
        .filter_map(VmResource::from_json)
        .collect();
    sort_by_vmid(&mut vms);
    let storages = items.iter().filter_map(StorageResource::from_json).collect();
    Ok((vms, storages))
}

/// Where the identity rule reads a VM's name when `/cluster/resources` shows another or none:
/// the VM's config (`check::world::World::name_of`). `/cluster/resources` takes `name`, `status`
/// and `template` from the status each node broadcasts every few seconds (pve-manager
/// API2Tools.pm `extract_vm_stats`, from the RRD data pvestatd sends), so they lag behind a
/// create, a clone or a rename, and a VM too new for it has no name there; `lock` and the vmid
/// list are current (API2/Cluster.pm `resources`: `get_guest_config_properties`, `.vmlist`).
pub type NameOf<'f> = &'f dyn Fn(&VmResource) -> Result<Option<String>>;

/// The QEMU VM a task addresses, by `vmid` if given, else by `name`. `Ok(None)` when nothing
/// matches; an error when a name matches several VMs or neither is given, and when a vmid and a
/// name are both given and name different VMs (`agree`, which reads names it doubts by `name_of`).
pub fn resolve<'a>(
    vms: &'a [VmResource],
    vmid: Option<u64>,
    name: Option<&str>,
    name_of: NameOf,
) -> Result<Option<&'a VmResource>> {
    resolve_as(vms, (VMID, vmid), (NAME, name), name_of)
}

/// The options that name a VM in most tasks, for the messages of `resolve_as`.
pub const VMID: &str = "vmid";
pub const NAME: &str = "name";

/// `resolve` with the options' own names in its messages (a clone's source is `vmid` and
/// `clone`, its target `newid` and `name`).
pub fn resolve_as<'a>(
    vms: &'a [VmResource],
    (vmid_option, vmid): (&str, Option<u64>),
    (name_option, name): (&str, Option<&str>),
    name_of: NameOf,
) -> Result<Option<&'a VmResource>> {
    if let Some(id) = vmid {
        let found = vms.iter().find(|v| v.vmid == id);
        if let Some(name) = name {
            agree(vms, (vmid_option, id, found), (name_option, name), name_of)?;
        }
        return Ok(found);
    }
    let Some(name) = name else {
        return Err(Error::args("one of the following is required: vmid, name"));
    };
    let matches = named(vms, name);
    match matches.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => Err(Error::failed(format!(
            "Multiple VMs with name {name} found (vmids {}), provide vmid instead",
            vmid_list(many)
        ))),
    }
}

/// The QEMU VMs named `name` (containers are not these modules' VMs).
fn named<'a>(vms: &'a [VmResource], name: &str) -> Vec<&'a VmResource> {
    vms.iter().filter(|v| v.kind == "qemu" && v.name.as_deref() == Some(name)).collect()
}

fn vmid_list(vms: &[&VmResource]) -> String {
    vms.iter().map(|v| v.vmid.to_string()).collect::<Vec<_>>().join(", ")
}

/// A task that gives both a vmid and a name names one VM, or is refused before any read of its
/// config and any write (docs/pve-semantics.md §29): the vmid's VM must carry that name, and a
/// vmid that does not exist must not come with the name of another VM. Otherwise a stale vmid in
/// an inventory would act on another team's VM under the name the task shows. The one
/// exception is a VM still being created or cloned (`lock: create` / `lock: clone`): PVE writes
/// its name only when that task ends, so its name cannot disagree yet. A name that
/// `/cluster/resources` shows otherwise than the task is read from the config before a refusal
/// (`NameOf`: the listing lags), so only a disagreement the config confirms refuses.
fn agree(
    vms: &[VmResource],
    (vmid_option, id, found): (&str, u64, Option<&VmResource>),
    (name_option, name): (&str, &str),
    name_of: NameOf,
) -> Result<()> {
    let refuse = |what: String| Err(Error::failed(format!("{what}; refusing to act on another VM")));
    match found {
        Some(vm) if matches!(vm.lock.as_deref(), Some("create" | "clone")) => Ok(()),
        Some(vm) if vm.name.as_deref() == Some(name) => Ok(()),
        Some(vm) => match name_of(vm)? {
            Some(other) if other == name => Ok(()),
            // PVE shows a VM without a name as `VM <vmid>` (QemuServer.pm `vmstatus`)
            other => refuse(format!(
                "{vmid_option} {id} is VM '{}', not '{name}' ({name_option})",
                other.unwrap_or_else(|| format!("VM {id}"))
            )),
        },
        None => {
            let mut others = Vec::new();
            for vm in named(vms, name) {
                if name_of(vm)?.as_deref() == Some(name) {
                    others.push(vm);
                }
            }
            match others.as_slice() {
                [] => Ok(()),
                others => refuse(format!(
                    "{vmid_option} {id} does not exist, but '{name}' ({name_option}) is vmid {}",
                    vmid_list(others)
                )),
            }
        }
    }
}

/// Like `resolve`, but a missing VM is an error with community.proxmox's wording.
pub fn require<'a>(
    vms: &'a [VmResource],
    vmid: Option<u64>,
    name: Option<&str>,
    name_of: NameOf,
) -> Result<&'a VmResource> {
    match resolve(vms, vmid, name, name_of)? {
        Some(vm) => Ok(vm),
        None => Err(Error::failed(match (vmid, name) {
            (Some(id), _) => format!("VM with vmid {id} does not exist in cluster"),
            (None, Some(n)) => format!("No VM with name {n} found"),
            (None, None) => "one of the following is required: vmid, name".to_string(),
        })),
    }
}

/// A vmid-typed option (`vmid`, `newid`, `target_vmid`): PVE's `pve-vmid` range, 100 to
/// 999999999 (pve-common JSONSchema.pm `pve_verify_vmid`). A value outside it is refused by the
/// option's name, never read as unset: community.proxmox reads `vmid: 0` as "no vmid" and then
/// finds the VM by name, which widens what the task names (docs/pve-semantics.md §29).
pub fn vmid_option(option: &str, value: Option<i64>) -> Result<Option<u64>> {
    match value {
        Some(v) if !(100..=999_999_999).contains(&v) => {
            Err(Error::args(format!("{option} must be between 100 and 999999999, got {v}")))
        }
        v => Ok(v.map(|v| v as u64)),
    }
}

/// The other node a clone of a VM on `node` goes to: `target`, unless that is `node` itself or
/// `localhost` (qemu-server `API2/Qemu.pm` `clone_vm` then clones on the node it runs on). §26.4.
pub fn clone_other_node<'t>(node: &str, target: Option<&'t str>) -> Option<&'t str> {
    target.filter(|t| *t != node && *t != "localhost")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pve::client::testing::ScriptedApi;
    use crate::pve::request::Method;
    use serde_json::json;

    /// A config that agrees with the listing.
    const LISTED: NameOf = &|vm| Ok(vm.name.clone());

    #[test]
    fn bridges_come_from_any_bridge_and_a_missing_one_is_refused_by_name() {
        let api = ScriptedApi::default();
        api.answer(
            Method::Get,
            "/nodes/pve1/network",
            Ok(json!([{"iface": "vmbr1", "type": "bridge"}, {"iface": "vnet7", "type": "vnet"}, {"iface": "vmbr0"}])),
        );
        let bridges = node_bridges(&api, "pve1").unwrap();
        assert_eq!(bridges, ["vmbr0", "vmbr1", "vnet7"]);
        assert_eq!(api.calls.borrow()[0].2, form([("type", "any_bridge")]));
        assert!(require_bridge(&bridges, "vnet7", "pve1", "bridge").is_ok());
        assert_eq!(
            require_bridge(&bridges, "vmbr7", "pve1", "bridge").unwrap_err().to_string(),
            "bridge: bridge 'vmbr7' does not exist on node pve1, or this user may not use it (SDN.Use); the node's bridges: vmbr0, vmbr1, vnet7; nothing was changed"
        );
        assert!(require_bridge(&[], "vmbr0", "pve2", "net[0].bridge")
            .unwrap_err()
            .to_string()
            .contains("bridges: none"));
    }

    fn vms() -> Vec<VmResource> {
        [
            json!({"vmid": 100, "name": "web", "node": "pve1", "type": "qemu", "status": "running", "template": 0}),
            json!({"vmid": "101", "name": "db", "node": "pve2", "type": "qemu", "status": "stopped", "template": "1"}),
            json!({"vmid": 102, "name": "db", "node": "pve2", "type": "qemu", "status": "stopped"}),
            json!({"vmid": 200, "name": "web", "node": "pve1", "type": "lxc", "status": "running"}),
        ]
        .iter()
        .filter_map(VmResource::from_json)
        .collect()
    }

    #[test]
    fn lenient_wire_encodings() {
        let v = vms();
        assert_eq!(v[1].vmid, 101);
        assert!(v[1].template);
        assert!(!v[0].template);
    }

    #[test]
    fn resolve_by_vmid_never_acts_on_a_vm_of_another_name() {
        let v = vms();
        assert!(resolve(&v, Some(102), Some("web"), LISTED).is_err());
        assert_eq!(resolve(&v, Some(102), Some("db"), LISTED).unwrap().unwrap().vmid, 102);
        assert!(resolve(&v, Some(999), None, LISTED).unwrap().is_none());
    }

    #[test]
    fn resolve_by_name_ignores_containers_and_lists_duplicates() {
        let v = vms();
        assert_eq!(resolve(&v, None, Some("web"), LISTED).unwrap().unwrap().vmid, 100);
        let e = resolve(&v, None, Some("db"), LISTED).unwrap_err();
        assert_eq!(e.to_string(), "Multiple VMs with name db found (vmids 101, 102), provide vmid instead");
    }

    /// docs/pve-semantics.md §29: vmid and name together name one VM or the task is refused;
    /// each alone finds as before. (vmid, name) → the vmid found, or the error.
    #[test]
    fn a_vmid_and_a_name_must_name_the_same_vm() {
        let mut v = vms();
        v.extend(
            [
                json!({"vmid": 150, "name": "data-vm", "node": "pve1", "type": "qemu", "status": "running"}),
                json!({"vmid": 160, "node": "pve1", "type": "qemu", "status": "stopped"}),
                json!({"vmid": 170, "name": "VM 170", "node": "pve1", "type": "qemu", "status": "stopped", "lock": "create"}),
                json!({"vmid": 180, "name": "VM 180", "node": "pve1", "type": "qemu", "status": "stopped", "lock": "backup"}),
            ]
            .iter()
            .filter_map(VmResource::from_json),
        );
        let refused = "; refusing to act on another VM";
        type Found = std::result::Result<Option<u64>, String>;
        let cases: &[(Option<u64>, Option<&str>, Found)] = &[
            // match
            (Some(150), Some("data-vm"), Ok(Some(150))),
            // the vmid's VM has another name
            (
                Some(150),
                Some("existing-web"),
                Err(format!("vmid 150 is VM 'data-vm', not 'existing-web' (name){refused}")),
            ),
            (Some(160), Some("web"), Err(format!("vmid 160 is VM 'VM 160', not 'web' (name){refused}"))),
            // the vmid does not exist, the name is another VM's (containers are not)
            (Some(1500), Some("web"), Err(format!("vmid 1500 does not exist, but 'web' (name) is vmid 100{refused}"))),
            (
                Some(1500),
                Some("db"),
                Err(format!("vmid 1500 does not exist, but 'db' (name) is vmid 101, 102{refused}")),
            ),
            // neither exists: nothing is named twice
            (Some(1500), Some("new-vm"), Ok(None)),
            // a VM being created or cloned has no name yet; another lock does not excuse it
            (Some(170), Some("db-01"), Ok(Some(170))),
            (Some(180), Some("db-01"), Err(format!("vmid 180 is VM 'VM 180', not 'db-01' (name){refused}"))),
            // vmid only, name only
            (Some(150), None, Ok(Some(150))),
            (Some(1500), None, Ok(None)),
            (None, Some("data-vm"), Ok(Some(150))),
            (None, Some("nope"), Ok(None)),
            (None, Some("db"), Err("Multiple VMs with name db found (vmids 101, 102), provide vmid instead".into())),
        ];
        for (vmid, name, want) in cases {
            let got = resolve(&v, *vmid, *name, LISTED).map(|vm| vm.map(|vm| vm.vmid)).map_err(|e| e.to_string());
            assert_eq!(&got, want, "{vmid:?} {name:?}");
        }
        // The options' own names for a clone's target.
        assert_eq!(
            resolve_as(&v, ("newid", Some(150)), (NAME, Some("web")), LISTED).unwrap_err().to_string(),
            format!("newid 150 is VM 'data-vm', not 'web' (name){refused}")
        );
    }

    /// `/cluster/resources` lags behind a create or a rename: the config's name decides, and is
    /// read only when the listing disagrees with the task.
    #[test]
    fn a_name_the_listing_shows_otherwise_is_read_from_the_config() {
        let v: Vec<VmResource> = [
            json!({"vmid": 150, "node": "pve1", "type": "qemu", "status": "unknown"}),
            json!({"vmid": 160, "name": "old", "node": "pve1", "type": "qemu", "status": "running"}),
        ]
        .iter()
        .filter_map(VmResource::from_json)
        .collect();
        let read = std::cell::RefCell::new(Vec::new());
        let configs = |vm: &VmResource| {
            read.borrow_mut().push(vm.vmid);
            Ok(Some(if vm.vmid == 150 { "fresh" } else { "renamed" }.to_string()))
        };
        assert_eq!(resolve(&v, Some(150), Some("fresh"), &configs).unwrap().unwrap().vmid, 150);
        assert_eq!(resolve(&v, Some(160), Some("renamed"), &configs).unwrap().unwrap().vmid, 160);
        // 'old' is no longer VM 160's name: a new vmid with it names nothing else
        assert_eq!(resolve(&v, Some(170), Some("old"), &configs).unwrap(), None);
        assert_eq!(
            resolve(&v, Some(160), Some("fresh"), &configs).unwrap_err().to_string(),
            "vmid 160 is VM 'renamed', not 'fresh' (name); refusing to act on another VM"
        );
        assert_eq!(read.borrow().as_slice(), [150, 160, 160, 160]);
        // the listing agrees with the task: no read
        read.borrow_mut().clear();
        assert_eq!(resolve(&v, Some(160), Some("old"), &configs).unwrap().unwrap().vmid, 160);
        assert!(resolve(&v, None, Some("old"), &configs).unwrap().is_some());
        assert!(read.borrow().is_empty());
    }

    #[test]
    fn a_vmid_outside_pves_range_is_refused_by_its_option_never_unset() {
        for (v, ok) in [(100, true), (999_999_999, true), (0, false), (99, false), (-1, false), (1_000_000_000, false)]
        {
            let got = vmid_option("newid", Some(v));
            if ok {
                assert_eq!(got.unwrap(), Some(v as u64));
            } else {
                assert_eq!(got.unwrap_err().to_string(), format!("newid must be between 100 and 999999999, got {v}"));
            }
        }
        assert_eq!(vmid_option("vmid", None).unwrap(), None);
    }

    #[test]
    fn require_uses_upstream_wording() {
        let v = vms();
        assert_eq!(
            require(&v, Some(7), None, LISTED).unwrap_err().to_string(),
            "VM with vmid 7 does not exist in cluster"
        );
    }
}
