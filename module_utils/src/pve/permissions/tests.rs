//! Tests of the privilege rules: the key -> privilege table, the needs of each operation, and
//! their evaluation against what a fake PVE says a token holds.

use std::cell::RefCell;

use super::*;
use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::request::{form, ApiPath, Method};
use crate::pve::storage::StorageConfig;
use serde_json::{json, Map, Value};

fn vm(privilege: &'static str) -> Need {
    all("/vms/100", &[privilege])
}

#[test]
fn each_config_key_needs_the_privilege_of_its_class() {
    // qemu-server API2/Qemu.pm $check_vm_modify_config_perm, key by key
    let table: &[(&str, Vec<Need>)] = &[
        ("cores", vec![vm("VM.Config.CPU")]),
        ("sockets", vec![vm("VM.Config.CPU")]),
        ("cpu", vec![vm("VM.Config.CPU")]),
        ("numa1", vec![vm("VM.Config.CPU")]),
        ("memory", vec![vm("VM.Config.Memory")]),
        ("balloon", vec![vm("VM.Config.Memory")]),
        ("scsihw", vec![vm("VM.Config.HWType")]),
        ("machine", vec![vm("VM.Config.HWType")]),
        ("vga", vec![vm("VM.Config.HWType")]),
        ("rng0", vec![vm("VM.Config.HWType")]),
        ("name", vec![vm("VM.Config.Options")]),
        ("onboot", vec![vm("VM.Config.Options")]),
        ("agent", vec![vm("VM.Config.Options")]),
        ("template", vec![vm("VM.Config.Options")]),
        ("startup", vec![vm("VM.Config.Options"), all("/", &["Sys.Modify"])]),
        ("freeze", vec![vm("VM.PowerMgmt")]),
        ("boot", vec![vm("VM.Config.Disk")]),
        ("vmstatestorage", vec![vm("VM.Config.Disk")]),
        ("net0", vec![vm("VM.Config.Network")]),
        ("net31", vec![vm("VM.Config.Network")]),
        ("ciuser", vec![vm("VM.Config.Cloudinit")]),
        ("sshkeys", vec![vm("VM.Config.Cloudinit")]),
        (
            "ipconfig0",
            vec![Need::Privs {
                path: "/vms/100".into(),
                privs: vec!["VM.Config.Cloudinit", "VM.Config.Network"],
                any: true,
            }],
        ),
        ("vmstate", vec![all("/vms/100", &["VM.Config.Disk", "VM.PowerMgmt"])]),
        // value-dependent: checked by `drive`, `storage_access` and `device`
        ("scsi0", vec![]),
        ("efidisk0", vec![]),
        ("unused3", vec![]),
        ("cdrom", vec![]),
        ("serial0", vec![]),
        ("usb1", vec![]),
        ("hostpci0", vec![]),
        ("tags", vec![]),
        // no class: root only
        ("args", vec![Need::RootOnly("only root can set 'args' config".into())]),
        ("lock", vec![Need::RootOnly("only root can set 'lock' config".into())]),
    ];
    for (key, needs) in table {
        assert_eq!(&config_key(100, None, key), needs, "{key}");
    }
    // every key of the class table is covered, and none is in two classes
    let mut seen = BTreeSet::new();
    for (_, keys) in KEY_PRIVILEGES {
        for key in *keys {
            assert!(seen.insert(*key), "{key} in two classes");
            assert!(matches!(config_key(100, None, key)[0], Need::Privs { .. }), "{key}");
        }
    }
}

#[test]
fn a_pool_is_tried_before_the_vm() {
    assert_eq!(
        config_key(100, Some("web"), "cores"),
        [Need::OneOf {
            options: vec![all("/pool/web", &["VM.Config.CPU"]), all("/vms/100", &["VM.Config.CPU"])],
            bare: false
        }]
    );
}

#[test]
fn drives_need_disk_cdrom_or_cloudinit_privileges() {
    assert_eq!(drive(100, "scsi0", "local-lvm:vm-100-disk-0,size=8G"), vm("VM.Config.Disk"));
    assert_eq!(drive(100, "scsi1", "local-lvm:4"), vm("VM.Config.Disk"));
    assert_eq!(drive(100, "ide2", "isos:iso/debian.iso,media=cdrom"), vm("VM.Config.CDROM"));
    assert_eq!(drive(100, "ide2", "none,media=cdrom"), vm("VM.Config.CDROM"));
    let cloudinit = all("/vms/100", &["VM.Config.Cloudinit", "VM.Config.CDROM"]);
    assert_eq!(drive(100, "ide2", "vmdata:100/vm-100-cloudinit.qcow2,media=cdrom"), cloudinit);
    assert_eq!(drive(100, "scsi5", "local-lvm:vm-100-cloudinit,media=cdrom"), cloudinit);
    assert_eq!(drive(100, "ide0", "local-lvm:cloudinit"), cloudinit);
}

#[test]
fn storage_access_follows_check_storage_access_and_check_volume_access() {
    let space = |sid: &str| all(format!("/storage/{sid}"), &["Datastore.AllocateSpace"]);
    let allocate_or = |sid: &str, otherwise: Need| Need::OneOf {
        options: vec![all(format!("/storage/{sid}"), &["Datastore.Allocate"]), otherwise],
        bare: false,
    };
    assert_eq!(storage_access(100, "scsi1", "local-lvm:32,discard=on", None), [space("local-lvm")]);
    assert_eq!(storage_access(100, "scsi1", "32", Some("vmdata")), [space("vmdata")]);
    assert_eq!(
        storage_access(100, "scsi1", "32", None),
        [Need::Refused("no storage ID specified (and no default storage)".into())]
    );
    assert_eq!(
        storage_access(100, "ide2", "isos:iso/debian.iso,media=cdrom", None),
        [allocate_or(
            "isos",
            Need::Privs {
                path: "/storage/isos".into(),
                privs: vec!["Datastore.AllocateSpace", "Datastore.Audit"],
                any: true
            }
        )]
    );
    assert_eq!(storage_access(100, "ide2", "cdrom,media=cdrom", None), [all("/", &["Sys.Console"])]);
    assert!(storage_access(100, "ide2", "none,media=cdrom", None).is_empty());
    assert!(storage_access(100, "ide2", "local-lvm:cloudinit,media=cdrom", None).is_empty());
    assert!(storage_access(100, "scsi0", "local-lvm:vm-100-disk-0", None).is_empty(), "its own volume");
    assert_eq!(
        storage_access(100, "scsi1", "vmdata:200/vm-200-disk-0.qcow2", None),
        [allocate_or(
            "vmdata",
            Need::AllOf(vec![all("/storage/vmdata", &["Datastore.Audit"]), all("/vms/200", &["VM.Config.Disk"])])
        )]
    );
    assert_eq!(
        storage_access(100, "scsi1", "/dev/sdb", None),
        [Need::RootOnly("Only root can pass arbitrary filesystem paths.".into())]
    );
    // the source's own privileges are `import_from`'s, weighed after its format (§63.3)
    assert_eq!(
        storage_access(100, "scsi1", "local-lvm:0,import-from=vmdata:9000/base-9000-disk-0.qcow2", None),
        [space("local-lvm")]
    );
    assert_eq!(import_from(100, "vmdata:9000/base-9000-disk-0.qcow2"), [all("/vms/9000", &["VM.Clone"])]);
    assert_eq!(
        import_from(100, "local:import/appliance.ova/disk1.vmdk"),
        [
            space("local"),
            allocate_or(
                "local",
                Need::Privs {
                    path: "/storage/local".into(),
                    privs: vec!["Datastore.AllocateSpace", "Datastore.Audit"],
                    any: true
                }
            )
        ]
    );
    assert_eq!(
        storage_access(100, "unused0", "vmdata:200/vm-200-disk-1.qcow2", None).len(),
        1,
        "an unusedN is checked as a volume"
    );
}

#[test]
fn bridges_need_sdn_use_on_the_bridge_or_each_vlan() {
    assert_eq!(bridge("net0", "virtio,bridge=vmbr0"), [Need::Bridge { bridge: "vmbr0".into(), vlans: vec![] }]);
    assert_eq!(bridge("net0", "virtio,bridge=vmbr0,tag=5"), [Need::Bridge { bridge: "vmbr0".into(), vlans: vec![5] }]);
    assert_eq!(
        bridge("net1", "e1000,bridge=vmbr1,trunks=10;20-22"),
        [Need::Bridge { bridge: "vmbr1".into(), vlans: vec![10, 20, 21, 22] }]
    );
    assert!(bridge("net0", "virtio").is_empty());
}

#[test]
fn each_operation_lists_the_checks_of_its_api_method() {
    assert_eq!(resize(100, "/dev/sdb"), [vm("VM.Config.Disk")]);
    assert_eq!(unlink(100, "scsi1", "local-lvm:vm-100-disk-1", false), [vm("VM.Config.Disk")]);
    assert_eq!(power(100), [vm("VM.PowerMgmt")]);
    assert_eq!(destroy(100), [vm("VM.Allocate")]);
    assert_eq!(template(100), [vm("VM.Allocate")]);
    assert_eq!(migrate(100, None), [vm("VM.Migrate")]);
    assert_eq!(
        migrate(100, Some("nfs")),
        [vm("VM.Migrate"), vm("VM.Config.Disk"), all("/storage/nfs", &["Datastore.AllocateSpace"])]
    );
    assert_eq!(migrate(100, Some("1")), [vm("VM.Migrate")]);
    assert_eq!(move_disk(100, "nfs"), [vm("VM.Config.Disk"), all("/storage/nfs", &["Datastore.AllocateSpace"])]);
    assert_eq!(
        reassign_disk(100, 101, "nfs"),
        [vm("VM.Config.Disk"), all("/vms/101", &["VM.Config.Disk"]), all("/storage/nfs", &["Datastore.AllocateSpace"])]
    );
    let source: BTreeMap<String, String> = [
        ("scsi0", "vmdata:9000/base-9000-disk-0.qcow2,size=8G"),
        ("ide2", "vmdata:9000/vm-9000-cloudinit.qcow2,media=cdrom"),
        ("net0", "virtio=BC:24:11:4A:90:00,bridge=vmbr0"),
        ("unused0", "local-lvm:vm-9000-disk-1"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(
        clone(9000, 150, None, Some("local-lvm"), &source),
        [
            all("/vms/9000", &["VM.Clone"]),
            Need::OneOf { options: vec![all("/vms/150", &["VM.Allocate"])], bare: true },
            all("/storage/local-lvm", &["Datastore.AllocateSpace"]),
            Need::Bridge { bridge: "vmbr0".into(), vlans: vec![] },
        ]
    );
    assert_eq!(clone(9000, 150, Some("web"), None, &source)[2], all("/storage/vmdata", &["Datastore.AllocateSpace"]));
}

#[test]
fn create_checks_allocate_then_storages_then_keys_then_bridges() {
    let config: Form = form([
        ("name", "web"),
        ("cores", "2"),
        ("scsi0", "local-lvm:32"),
        ("ide2", "isos:iso/debian.iso,media=cdrom"),
        ("net0", "virtio,bridge=vmbr0"),
        ("pool", "web"),
    ]);
    let needs = create(150, Some("web"), None, true, &config);
    let power = vm_perm(150, Some("web"), &["VM.PowerMgmt"], false);
    assert_eq!(needs[0], power);
    assert_eq!(
        needs[1],
        Need::OneOf {
            options: vec![all("/vms/150", &["VM.Allocate"]), all("/pool/web", &["VM.Allocate"])],
            bare: true
        }
    );
    assert_eq!(needs[2], all("/storage/local-lvm", &["Datastore.AllocateSpace"]));
    assert_eq!(needs[4], vm_perm(150, Some("web"), &["VM.Config.Options"], false));
    assert_eq!(needs[5], vm_perm(150, Some("web"), &["VM.Config.CPU"], false));
    assert_eq!(needs[6], vm_perm(150, Some("web"), &["VM.Config.Network"], false));
    assert_eq!(needs[7], Need::Bridge { bridge: "vmbr0".into(), vlans: vec![] });
    assert_eq!(needs.len(), 8, "{needs:?}");
}

#[test]
fn an_update_checks_old_and_new_drives_and_deleted_devices() {
    let current: BTreeMap<String, String> = [
        ("ide2", "isos:iso/debian.iso,media=cdrom"),
        ("net1", "virtio=BC:24:11:00:00:01,bridge=vmbr1,tag=7"),
        ("unused0", "local-lvm:vm-100-disk-3"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let set = form([
        ("ide2", "none,media=cdrom"),
        ("net0", "virtio,bridge=vmbr0"),
        ("memory", "4096"),
        ("digest", "0123abcd"),
        ("delete", "net1,unused0"),
    ]);
    let delete = vec!["net1".to_string(), "unused0".to_string()];
    let needs = update(100, &current, &set, &delete);
    assert_eq!(needs[0], Need::Privs { path: "/vms/100".into(), privs: CONFIG_PRIVILEGES.to_vec(), any: true });
    assert!(needs.contains(&vm("VM.Config.Network")));
    assert!(needs.contains(&vm("VM.Config.Memory")));
    assert!(needs.contains(&Need::Bridge { bridge: "vmbr1".into(), vlans: vec![7] }), "the deleted NIC's bridge");
    assert!(needs.contains(&vm("VM.Config.Disk")), "the deleted unused disk");
    assert_eq!(needs.iter().filter(|n| **n == vm("VM.Config.CDROM")).count(), 2, "old and new CD-ROM");
    assert!(!needs.iter().any(|n| matches!(n, Need::RootOnly(_))), "digest and delete are no config keys: {needs:?}");
}

/// A PVE that answers `GET /access/permissions` (without `path`: every path) from an ACL table
/// (path -> privileges held there, none propagating), and counts the reads.
#[derive(Default)]
struct AclApi {
    acl: BTreeMap<String, Vec<(&'static str, u8)>>,
    reads: RefCell<usize>,
    /// Whether the privileges told the client that `/cluster/resources` lists every guest (§66.6).
    every_guest: RefCell<bool>,
}

impl Api for AclApi {
    fn call(&self, method: Method, path: &ApiPath, params: &Form) -> Result<Value> {
        assert_eq!((method, path.encoded().as_str()), (Method::Get, "/access/permissions"));
        assert!(params.is_empty(), "one read for every path: {params:?}");
        *self.reads.borrow_mut() += 1;
        let tree: Map<String, Value> = self
            .acl
            .iter()
            .map(|(path, privs)| (path.clone(), privs.iter().map(|(p, prop)| (p.to_string(), json!(prop))).collect()))
            .collect();
        Ok(Value::Object(tree))
    }

    fn every_guest_listed(&self) {
        *self.every_guest.borrow_mut() = true;
    }
}

fn acl(entries: &[(&str, &[&'static str])]) -> AclApi {
    let acl = entries.iter().map(|(p, v)| (p.to_string(), v.iter().map(|p| (*p, 0)).collect())).collect();
    AclApi { acl, ..Default::default() }
}

fn refusal(p: &Privileges, needs: &[Need]) -> String {
    p.require(needs).unwrap_err().to_string()
}

#[test]
fn a_read_only_token_is_refused_as_pve_refuses_it() {
    let api = acl(&[("/vms/100", &["VM.Audit"]), ("/vms/150", &["VM.Audit"]), ("/", &["VM.Audit", "Sys.Audit"])]);
    let p = Privileges::new(&api, "auditor@pve!readonly");
    let nic = form([("net1", "virtio,bridge=vmbr1")]);
    assert_eq!(
        refusal(&p, &update(100, &BTreeMap::new(), &nic, &[])),
        "Permission check failed (/vms/100, VM.Config.Disk|VM.Config.CDROM|VM.Config.CPU|VM.Config.Memory|VM.Config.Network|VM.Config.HWType|VM.Config.Options|VM.Config.Cloudinit)"
    );
    assert_eq!(refusal(&p, &create(150, None, None, false, &nic)), "Permission check failed");
    assert_eq!(refusal(&p, &power(100)), "Permission check failed (/vms/100, VM.PowerMgmt)");
    assert_eq!(refusal(&p, &config_key(100, None, "args")), "only root can set 'args' config");
    assert_eq!(*api.reads.borrow(), 1, "one read for every path");
}

#[test]
fn a_refusal_names_who_was_refused_and_for_which_request() {
    let api = acl(&[("/vms/100", &["VM.Audit"]), ("/", &["VM.Audit"])]);
    let p = Privileges::new(&api, "auditor@pve!readonly");
    let start = crate::pve::request::describe(
        crate::pve::request::Method::Post,
        &crate::pve::request::ApiPath::new(["nodes", "pve1", "qemu", "100", "status", "start"]),
        &Vec::new(),
    );
    assert_eq!(
        p.require_for(&power(100), &start).unwrap_err().to_string(),
        "Permission check failed (/vms/100, VM.PowerMgmt), as auditor@pve!readonly, for POST /nodes/pve1/qemu/100/status/start"
    );
    // PVE's bare refusal of a create names no privilege: ours names the ones any of which would do
    let new = form([("name", "x"), ("cipassword", "s3cret")]);
    let create_request = crate::pve::request::describe(
        crate::pve::request::Method::Post,
        &crate::pve::request::ApiPath::new(["nodes", "pve1", "qemu"]),
        &new,
    );
    let e = p.require_for(&create(606, Some("web"), None, false, &new), &create_request).unwrap_err().to_string();
    assert_eq!(
        e,
        "Permission check failed, as auditor@pve!readonly, for POST /nodes/pve1/qemu (name, cipassword); it needs VM.Allocate on /vms/606 or VM.Allocate on /pool/web"
    );
    assert!(!e.contains("s3cret"), "{e}");
    assert!(p.require_for(&[], "GET /version").is_ok());
}

#[test]
fn the_first_missing_privilege_is_named() {
    let api = acl(&[
        ("/vms/100", &["VM.Config.Memory", "VM.Config.Disk"]),
        ("/storage/local-lvm", &["Datastore.Audit"]),
        ("/sdn/zones/localnetwork/vmbr0", &["SDN.Use"]),
        ("/sdn/zones/vnets/vnet7/12", &["SDN.Use"]),
    ]);
    let p = Privileges::new(&api, "ansible@pve!automation")
        .with_vnet_zones([("vnet7".to_string(), "vnets".to_string())].into_iter().collect());
    let current = BTreeMap::new();
    let memory = form([("memory", "4096")]);
    assert!(p.require(&update(100, &current, &memory, &[])).is_ok());
    let nic = form([("net1", "virtio,bridge=vmbr0")]);
    assert_eq!(refusal(&p, &update(100, &current, &nic, &[])), "Permission check failed (/vms/100, VM.Config.Network)");
    let disk = form([("scsi1", "local-lvm:4")]);
    assert_eq!(
        refusal(&p, &update(100, &current, &disk, &[])),
        "Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)"
    );
    assert!(p.require(&bridge("net0", "virtio,bridge=vmbr0")).is_ok());
    assert!(p.require(&bridge("net0", "virtio,bridge=vnet7,tag=12")).is_ok());
    assert_eq!(
        refusal(&p, &bridge("net0", "virtio,bridge=vmbr1")),
        "Permission check failed (/sdn/zones/localnetwork/vmbr1, SDN.Use)"
    );
    assert_eq!(
        refusal(&p, &bridge("net0", "virtio,bridge=vnet7,trunks=12;13")),
        "Permission check failed (/sdn/zones/vnets/vnet7/13, SDN.Use)"
    );
}

#[test]
fn a_pool_grant_serves_and_root_may_do_what_only_root_may() {
    let api = acl(&[("/pool/web", &["VM.Allocate", "VM.Config.CPU"])]);
    let p = Privileges::new(&api, "ops@pve");
    assert!(p.require(&create(150, Some("web"), None, false, &form([("cores", "2")]))).is_ok());
    assert_eq!(
        refusal(&p, &create(150, Some("web"), None, false, &form([("memory", "2048")]))),
        "Permission check failed (/vms/150, VM.Config.Memory)"
    );
    let root = Privileges::new(&api, "root@pam");
    assert!(root.require(&[Need::RootOnly("only root can set 'args' config".into())]).is_ok());
    let root_token = Privileges::new(&api, "root@pam!ci");
    assert!(root_token.require(&[Need::RootOnly("only root".into())]).is_err());
}

#[test]
fn a_failed_permissions_read_is_an_error_not_a_refusal() {
    struct Down;
    impl Api for Down {
        fn call(&self, method: Method, path: &ApiPath, _: &Form) -> Result<Value> {
            Err(Error::Api {
                method: method.as_str().into(),
                path: path.encoded(),
                status: 500,
                message: "proxy loop detected".into(),
            })
        }
    }
    let p = Privileges::new(&Down, "ansible@pve!automation");
    let e = p.require(&power(100)).unwrap_err();
    assert_eq!(e.api_status(), Some(500));
    assert!(e.to_string().starts_with("reading the privileges of ansible@pve!automation: proxy loop detected"), "{e}");
}

#[test]
fn one_read_answers_every_path_with_propagation_as_pve_applies_it() {
    // RPCEnvironment.pm get_effective_permissions lists the paths with an ACL or a pool member;
    // a path it leaves out holds what propagates to it from the nearest path above that passes
    // something down (AccessControl.pm roles).
    let mut api = AclApi::default();
    let tree: &[(&str, &[(&'static str, u8)])] = &[
        ("/", &[("Sys.Audit", 0)]),
        ("/vms", &[("VM.Clone", 1), ("VM.Allocate", 1), ("VM.Audit", 0)]),
        // a privilege that stops here: /vms/9000's children (none) and nothing else get it,
        // and it hides nothing of /vms's from a sibling
        ("/vms/9000", &[("VM.Clone", 0)]),
        ("/storage", &[("Datastore.Audit", 0)]),
        ("/storage/local-lvm", &[("Datastore.AllocateSpace", 1)]),
        ("/sdn/zones/localnetwork", &[("SDN.Use", 1)]),
        // only non-propagating privileges: what propagates past it comes from above
        ("/sdn/zones/localnetwork/vmbr0", &[("SDN.Audit", 0)]),
    ];
    api.acl = tree.iter().map(|(p, v)| (p.to_string(), v.to_vec())).collect();
    let p = Privileges::new(&api, "ansible@pve!automation");
    p.read_ahead().unwrap();
    let source: BTreeMap<String, String> =
        [("scsi0", "local-lvm:base-9000-disk-0,size=8G"), ("net0", "virtio=BC:24:11:0A:01:00,bridge=vmbr0,tag=5")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    assert!(p.require(&clone(9000, 101, Some("web"), None, &source)).is_ok());
    assert_eq!(*p.held("/vms/9000").unwrap(), ["VM.Clone".to_string()].into_iter().collect());
    assert_eq!(*p.held("/vms/101").unwrap(), ["VM.Allocate", "VM.Clone"].map(String::from).into_iter().collect());
    assert_eq!(
        refusal(&p, &[all("/storage/local-zfs", &["Datastore.AllocateSpace"])]),
        "Permission check failed (/storage/local-zfs, Datastore.AllocateSpace)",
        "/storage's privilege does not propagate"
    );
    assert_eq!(refusal(&p, &power(101)), "Permission check failed (/vms/101, VM.PowerMgmt)");
    assert!(p.held("/nodes/pve1").unwrap().is_empty(), "/'s Sys.Audit does not propagate");
    assert_eq!(*api.reads.borrow(), 1, "one read for the whole run");
}

#[test]
fn a_pool_move_needs_pool_allocate_on_both_pools_and_modify_or_allocate_on_the_vm() {
    // pve-manager PVE/API2/Pool.pm update_pool: Pool.Allocate on the target, check_perm_modify on
    // /vms/<vmid>, and with allow-move Pool.Allocate on the pool the VM leaves.
    let api = acl(&[("/pool/web", &["Pool.Allocate"]), ("/vms/100", &["VM.Allocate"]), ("/pool/db", &["Pool.Audit"])]);
    let p = Privileges::new(&api, "ansible@pve!automation");
    assert!(p.require(&pool_move(100, "web", None)).is_ok());
    assert_eq!(refusal(&p, &pool_move(100, "web", Some("db"))), "Permission check failed (/pool/db, Pool.Allocate)");
    assert_eq!(refusal(&p, &pool_move(100, "db", None)), "Permission check failed (/pool/db, Pool.Allocate)");
    assert_eq!(
        refusal(&p, &pool_move(150, "web", None)),
        "Permission check failed (/vms/150, Permissions.Modify|VM.Allocate)"
    );
}

#[test]
fn a_hibernation_whose_state_storage_is_hidden_is_decided_when_every_choice_agrees() {
    // QemuConfig.pm find_vmstate_storage picks among the drives' storages with root's view of
    // storage.cfg; this user sees only storages it holds Datastore.Audit or AllocateSpace on
    // (API2/Storage/Config.pm index), so a hidden one is one it holds neither on.
    let zfs = StorageConfig::from_json(&json!({"storage": "local-zfs", "type": "zfspool", "content": "images"}));
    let config: BTreeMap<String, String> =
        [("scsi0", "local-zfs:vm-120-disk-0,size=32G"), ("scsi1", "truenas:120/vm-120-disk-0.qcow2,size=100G")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    let vm = || all("/vms/120", &["VM.PowerMgmt", "VM.Config.Disk"]);
    // neither storage seen: refused whichever PVE picks
    let api = acl(&[("/vms/120", &["VM.PowerMgmt", "VM.Config.Disk"])]);
    let p = Privileges::new(&api, "diff@pve!gen");
    let e = refusal(&p, &hibernate(120, &config, &[]));
    assert!(e.starts_with("Permission check failed (Datastore.AllocateSpace on the storage of VM 120's state, one of local-zfs, truenas"), "{e}");
    assert!(p.require(&[vm()]).is_ok());
    // local-zfs seen and held, truenas hidden: PVE may pick either, so it is not known
    let seen = [zfs.unwrap()];
    let api =
        acl(&[("/vms/120", &["VM.PowerMgmt", "VM.Config.Disk"]), ("/storage/local-zfs", &["Datastore.AllocateSpace"])]);
    let p = Privileges::new(&api, "diff@pve!gen");
    assert!(p.require(&hibernate(120, &config, &seen)).is_ok());
    let warnings = p.take_unknowns();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains(
        "PVE may refuse it: Permission check failed (/storage/(known after apply), Datastore.AllocateSpace)"
    ));
    // one storage only, hidden: refused in PVE's own words
    let one: BTreeMap<String, String> = [("scsi0".to_string(), "truenas:120/vm-120-disk-0.qcow2".to_string())].into();
    assert_eq!(
        refusal(&p, &hibernate(120, &one, &seen)),
        "Permission check failed (/storage/truenas, Datastore.AllocateSpace)"
    );
}

#[test]
fn a_storage_listing_is_complete_with_datastore_allocate_or_vm_config_disk_on_every_vm() {
    // API2/Storage/Content.pm index, Storage.pm check_volume_access without a VM
    let api = acl(&[
        ("/storage/a", &["Datastore.Allocate", "Datastore.Audit"]),
        ("/storage/e", &["Datastore.Allocate"]),
        ("/storage/b", &["Datastore.Audit"]),
        ("/storage/c", &["Datastore.AllocateSpace"]),
        ("/vms", &["VM.Config.Disk"]),
    ]);
    let p = Privileges::new(&api, "ops@pve!t");
    let listing = |sid: &str| volume_listing(&p, sid).unwrap();
    assert_eq!(listing("a"), Listing::Complete);
    // VM.Config.Disk on /vms does not propagate in this table (flag 0): a VM's images may be left out
    assert_eq!(listing("b"), Listing::Partial);
    assert_eq!(listing("c"), Listing::Partial, "images of other VMs need Datastore.Audit");
    assert_eq!(listing("d"), Listing::Refused);
    assert_eq!(listing("e"), Listing::Refused, "the listing itself needs Datastore.Audit or AllocateSpace");
    let mut api = AclApi::default();
    let tree: &[(&str, &[(&'static str, u8)])] = &[
        ("/storage/b", &[("Datastore.Audit", 0)]),
        ("/vms", &[("VM.Config.Disk", 1)]),
        ("/vms/211", &[("VM.Audit", 0)]),
    ];
    api.acl = tree.iter().map(|(p, v)| (p.to_string(), v.to_vec())).collect();
    let p = Privileges::new(&api, "ops@pve!t");
    assert_eq!(volume_listing(&p, "b").unwrap(), Listing::Partial, "VM 211 lacks VM.Config.Disk");
    api.acl.remove("/vms/211");
    let p = Privileges::new(&api, "ops@pve!t");
    assert_eq!(volume_listing(&p, "b").unwrap(), Listing::Complete);
}

#[test]
fn privileges_that_share_what_is_held_read_it_once_per_run() {
    use crate::pve::client::testing::ScriptedApi;
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/access/permissions", Ok(json!({"/vms/100": {"VM.Audit": 1}})));
    let held = Held::default();
    // the checks' and the world's wait for a VM in flight (connect::Session)
    let (checks, world) =
        (Privileges::new(&api, "u@pve").sharing(&held), Privileges::new(&api, "u@pve").sharing(&held));
    assert!(checks.held("/vms/100").unwrap().contains("VM.Audit"));
    assert!(world.held("/vms/100").unwrap().contains("VM.Audit"));
    assert_eq!(api.calls.borrow().len(), 1);
    // not shared: each reads its own
    api.answer(Method::Get, "/access/permissions", Ok(json!({})));
    assert!(Privileges::new(&api, "u@pve").held("/vms/100").unwrap().is_empty());
    assert_eq!(api.calls.borrow().len(), 2);
}

#[test]
fn a_rom_file_on_a_mapped_pci_device_is_root_at_pam_s() {
    // Qemu.pm check_hostpci_perm: Mapping.Use, VM.Config.HWType, then `romfile` a parameter error
    let needs = device(100, None, "hostpci0", "mapping=gpu,romfile=vbios.bin");
    assert_eq!(needs.len(), 3);
    assert_eq!(needs[2], Need::RootOnly("hostpci0: only root@pam can set 'romfile' option".into()));
    assert_eq!(device(100, None, "hostpci0", "mapping=gpu").len(), 2);
}

#[test]
fn a_device_with_neither_host_nor_mapping_is_refused_but_for_root_at_pam() {
    // Qemu.pm check_hostpci_perm and check_usb_perm return first for root@pam, then die on neither (§64)
    let either = Need::RootOnly("either 'host' or 'mapping' must be set.".into());
    assert_eq!(device(100, None, "hostpci0", "pcie=1"), vec![either.clone()]);
    assert_eq!(device(100, None, "usb0", "usb3=1").last(), Some(&either));
    assert!(
        matches!(&device(100, None, "hostpci0", "0000:01:00.0,pcie=1")[0], Need::RootOnly(m) if m.contains("non-mapped"))
    );
}

#[test]
fn the_client_is_told_when_the_user_sees_every_guest() {
    // VM.Audit propagating from `/` reaches every guest, those to come too (§66.2): told once read
    let mut api = acl(&[]);
    api.acl.insert("/".into(), vec![("VM.Audit", 1)]);
    let p = Privileges::new(&api, "ops@pve!ansible");
    assert!(p.sees_every_guest().unwrap());
    assert!(*api.every_guest.borrow());
    // held on some guests only, or on `/vms` but taken away below it: not told
    for entries in [vec![("/vms/100", 1)], vec![("/vms", 1), ("/vms/150", 2)]] {
        let mut api = acl(&[]);
        for (path, prop) in entries {
            let privs = if prop == 2 { vec![("VM.PowerMgmt", 1)] } else { vec![("VM.Audit", prop)] };
            api.acl.insert(path.to_string(), privs);
        }
        let p = Privileges::new(&api, "ops@pve!ansible");
        assert!(!p.sees_every_guest().unwrap());
        assert!(!*api.every_guest.borrow(), "{:?}", api.acl);
    }
}
