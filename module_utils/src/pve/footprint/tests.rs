//! The decision rule for a failed task: what it could touch, read before and after (§31).

use super::*;
use crate::pve::client::testing::ScriptedApi;
use crate::pve::client::Api;
use serde_json::json;

fn path(p: &str) -> ApiPath {
    ApiPath::new(p.trim_start_matches('/').split('/'))
}

fn pending(scsi0: &str, lock: Option<&str>) -> Value {
    let mut items = vec![
        json!({"key": "cores", "value": 2}),
        json!({"key": "digest", "value": format!("{:?}", lock)}),
        json!({"key": "scsi0", "value": scsi0}),
    ];
    if let Some(l) = lock {
        items.push(json!({"key": "lock", "value": l}));
    }
    Value::Array(items)
}

fn status(s: &str) -> Value {
    json!({"status": s, "qmpstatus": s})
}

fn volumes(size: u64) -> Value {
    json!([
        {"volid": "local-lvm:vm-100-disk-0", "size": size, "vmid": 100},
        {"volid": "local-lvm:vm-101-disk-0", "size": 1, "vmid": 101},
    ])
}

fn absent() -> Error {
    Error::Api {
        method: "GET".into(),
        path: "/x".into(),
        status: 500,
        message: "Configuration file 'nodes/pve1/qemu-server/100.conf' does not exist".into(),
    }
}

const SCSI0: &str = "local-lvm:vm-100-disk-0,size=4G";
const START: &str = "/nodes/pve1/qemu/100/status/start";
const RESIZE: &str = "/nodes/pve1/qemu/100/resize";

/// A footprint read from scripted answers for `method path`.
fn before(api: Read<'_>, method: Method, p: &str, params: &Form) -> Footprint {
    Footprint::before(api, method, &path(p), params).expect("a footprint")
}

#[test]
fn each_vm_task_touches_its_part_of_the_vm() {
    let none = Vec::new();
    let t = |m, p: &str| touches(m, &path(p), &none);
    assert_eq!(t(Method::Post, START), Some(("pve1".into(), 100, POWER)));
    assert_eq!(t(Method::Post, "/nodes/pve1/qemu/100/status/shutdown").unwrap().2, POWER);
    assert_eq!(t(Method::Put, RESIZE).unwrap().2, DISK);
    assert_eq!(t(Method::Post, "/nodes/pve1/qemu/100/move_disk").unwrap().2, DISK);
    assert_eq!(t(Method::Post, "/nodes/pve1/qemu/100/config").unwrap().2, DISK);
    assert_eq!(t(Method::Delete, "/nodes/pve1/qemu/100").unwrap().2, DESTROY);
    assert_eq!(t(Method::Post, "/nodes/pve1/qemu/100/migrate").unwrap().2, MIGRATE);
    // Not read back: a new VM, a synchronous write, a disk moved to another VM.
    assert_eq!(t(Method::Post, "/nodes/pve1/qemu"), None);
    assert_eq!(t(Method::Post, "/nodes/pve1/qemu/100/clone"), None);
    assert_eq!(t(Method::Put, "/nodes/pve1/qemu/100/config"), None);
    let reassign = form([("disk", "scsi1"), ("target-vmid", "101")]);
    assert_eq!(touches(Method::Post, &path("/nodes/pve1/qemu/100/move_disk"), &reassign), None);
}

/// A stopped VM read before a start and again after it, with a `lock: backup` another job took meanwhile.
fn locked_meanwhile() -> ScriptedApi {
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, Some("backup"))))
        .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")));
    api
}

#[test]
fn a_start_refused_by_a_lock_taken_meanwhile_changed_nothing() {
    let api = locked_meanwhile();
    let fp = before(&|p, q| api.get(p, q), Method::Post, START, &Vec::new());
    assert!(fp.unchanged(&|p, q| api.get(p, q)));
}

#[test]
fn a_start_that_applied_pending_changes_then_failed_changed_the_vm() {
    let api = ScriptedApi::default();
    let with_pending = json!([{"key": "cores", "value": 2, "pending": 4}]);
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(with_pending))
        .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(json!([{"key": "cores", "value": 4}])))
        .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")));
    let fp = before(&|p, q| api.get(p, q), Method::Post, START, &Vec::new());
    assert!(!fp.unchanged(&|p, q| api.get(p, q)));
}

#[test]
fn a_vm_started_or_stopped_is_a_change() {
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("running")))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")));
    let fp = before(&|p, q| api.get(p, q), Method::Post, "/nodes/pve1/qemu/100/status/stop", &Vec::new());
    assert!(!fp.unchanged(&|p, q| api.get(p, q)));
}

#[test]
fn a_resize_is_read_back_in_the_config_and_in_the_volume_itself() {
    // The volume grew but the config was not written: still a change.
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(volumes(4 << 30)))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(volumes(5 << 30)));
    let fp = before(&|p, q| api.get(p, q), Method::Put, RESIZE, &Vec::new());
    let own: Vec<&String> = fp.before.volumes["local-lvm"].keys().collect();
    assert_eq!(own, ["local-lvm:vm-100-disk-0"], "only the VM's own volumes count");
    let listing = api.calls.borrow().iter().find(|c| c.1.ends_with("/content")).cloned().unwrap();
    assert_eq!(listing.2, form([("vmid", "100")]), "only the VM's own volumes are listed");
    assert!(!fp.unchanged(&|p, q| api.get(p, q)));
}

#[test]
fn the_reads_the_module_made_since_the_last_write_are_the_state_before_the_next() {
    let api = ScriptedApi::default();
    let recent = RecentReads::default();
    recent.keep(&path("/nodes/pve1/qemu/100/pending"), &Vec::new(), &pending(SCSI0, None));
    recent.keep(&path("/cluster/resources"), &Vec::new(), &json!([]));
    api.answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(volumes(4 << 30)));
    let fp = before(&recent.over(&|p, q| api.get(p, q)), Method::Put, RESIZE, &Vec::new());
    let asked: Vec<String> = api.calls.borrow().iter().map(|c| c.1.clone()).collect();
    assert_eq!(asked, ["/nodes/pve1/storage/local-lvm/content"], "the config came from the module's own read");
    assert_eq!(fp.before.config, Some(config_map(&pending(SCSI0, None), None)));
    // A write forgets them: the next footprint reads again.
    recent.forget();
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None))).answer(
        Method::Get,
        "/nodes/pve1/storage/local-lvm/content",
        Ok(volumes(4 << 30)),
    );
    before(&recent.over(&|p, q| api.get(p, q)), Method::Put, RESIZE, &Vec::new());
    assert_eq!(api.calls.borrow().len(), 3);
}

#[test]
fn a_resize_refused_after_the_vm_migrated_away_is_compared_where_the_vm_now_is() {
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(volumes(4 << 30)))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Err(absent()))
        .answer(
            Method::Get,
            "/cluster/resources",
            Ok(json!([{"vmid": 100, "type": "qemu", "node": "pve2"}, {"vmid": 100, "type": "lxc", "node": "pve1"}])),
        )
        .answer(Method::Get, "/nodes/pve2/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve2/storage/local-lvm/content", Ok(volumes(4 << 30)));
    let fp = before(&|p, q| api.get(p, q), Method::Put, RESIZE, &Vec::new());
    assert!(fp.unchanged(&|p, q| api.get(p, q)), "a resize does not move a VM: where it is is not its footprint");

    // The same VM found resized where it went: the task (or another) changed it.
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(volumes(4 << 30)))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Err(absent()))
        .answer(Method::Get, "/cluster/resources", Ok(json!([{"vmid": 100, "type": "qemu", "node": "pve2"}])))
        .answer(Method::Get, "/nodes/pve2/qemu/100/pending", Ok(pending("local-lvm:vm-100-disk-0,size=5G", None)))
        .answer(Method::Get, "/nodes/pve2/storage/local-lvm/content", Ok(volumes(5 << 30)));
    let fp = before(&|p, q| api.get(p, q), Method::Put, RESIZE, &Vec::new());
    assert!(!fp.unchanged(&|p, q| api.get(p, q)));
}

#[test]
fn a_migration_that_moved_the_vm_or_left_its_lock_is_a_change_and_one_refused_is_not() {
    let script = |after_node: &str| {
        let api = ScriptedApi::default();
        api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None))).answer(
            Method::Get,
            "/nodes/pve1/qemu/100/status/current",
            Ok(status("stopped")),
        );
        if after_node == "pve1" {
            api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, Some("migrate"))));
            api.answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")));
        } else {
            api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Err(absent()))
                .answer(Method::Get, "/cluster/resources", Ok(json!([{"vmid": 100, "type": "qemu", "node": "pve2"}])))
                .answer(Method::Get, "/nodes/pve2/qemu/100/pending", Ok(pending(SCSI0, None)))
                .answer(Method::Get, "/nodes/pve2/qemu/100/status/current", Ok(status("stopped")));
        }
        api
    };
    let api = script("pve2");
    assert!(!before(&|p, q| api.get(p, q), Method::Post, "/nodes/pve1/qemu/100/migrate", &Vec::new())
        .unchanged(&|p, q| api.get(p, q)));
    let api = script("pve1");
    assert!(
        !before(&|p, q| api.get(p, q), Method::Post, "/nodes/pve1/qemu/100/migrate", &Vec::new())
            .unchanged(&|p, q| api.get(p, q)),
        "its own lock left"
    );
    // Refused before phase 1 (another job's lock): nothing changed.
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, Some("backup"))))
        .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")));
    assert!(before(&|p, q| api.get(p, q), Method::Post, "/nodes/pve1/qemu/100/migrate", &Vec::new())
        .unchanged(&|p, q| api.get(p, q)));
}

#[test]
fn a_destroy_refused_for_a_linked_clone_keeps_the_template_and_one_that_removed_it_does_not() {
    let base = "local-lvm:base-100-disk-0,size=4G";
    let base_volume = json!([{"volid": "local-lvm:base-100-disk-0", "size": 4u64 << 30, "vmid": 100}]);
    let script = |gone: bool| {
        let api = ScriptedApi::default();
        api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(base, None)))
            .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")))
            .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(base_volume.clone()));
        if gone {
            api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Err(absent())).answer(
                Method::Get,
                "/cluster/resources",
                Ok(json!([])),
            );
        } else {
            api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(base, None)))
                .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")))
                .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(base_volume.clone()));
        }
        api
    };
    let api = script(false);
    assert!(before(&|p, q| api.get(p, q), Method::Delete, "/nodes/pve1/qemu/100", &Vec::new())
        .unchanged(&|p, q| api.get(p, q)));
    let api = script(true);
    assert!(!before(&|p, q| api.get(p, q), Method::Delete, "/nodes/pve1/qemu/100", &Vec::new())
        .unchanged(&|p, q| api.get(p, q)));
}

#[test]
fn a_move_lists_its_target_storage_too() {
    let api = ScriptedApi::default();
    let params = form([("disk", "scsi0"), ("storage", "local")]);
    let moved = json!([{"volid": "local:100/vm-100-disk-0.qcow2", "size": 4u64 << 30, "vmid": 100}]);
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/storage/local/content", Ok(json!([])))
        .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(volumes(4 << 30)))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/storage/local/content", Ok(moved))
        .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(volumes(4 << 30)));
    let fp = before(&|p, q| api.get(p, q), Method::Post, "/nodes/pve1/qemu/100/move_disk", &params);
    assert!(!fp.unchanged(&|p, q| api.get(p, q)), "a copy left on the target storage is a change");
}

#[test]
fn what_cannot_be_read_counts_as_a_change() {
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, None)))
        .answer(Method::Get, "/nodes/pve1/qemu/100/status/current", Ok(status("stopped")))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Err(Error::failed("proxy gone")));
    assert!(!before(&|p, q| api.get(p, q), Method::Post, START, &Vec::new()).unchanged(&|p, q| api.get(p, q)));
    // No footprint at all when the read before the write fails.
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Err(Error::failed("proxy gone")));
    assert_eq!(Footprint::before(&|p, q| api.get(p, q), Method::Post, &path(START), &Vec::new()), None);
}

#[test]
fn the_journal_settles_a_failed_task_by_its_footprint() {
    let api = locked_meanwhile();
    let fp = before(&|p, q| api.get(p, q), Method::Post, START, &Vec::new());
    let upid = "UPID:pve1:00000001:00000007:65F00000:qmstart:100:root@pam:";
    let config = "UPID:pve1:00000002:0000000E:65F00000:qmconfig:100:root@pam:";
    api.journal.accepted("POST", "/nodes/pve1/qemu/100/config", &["cores"], &json!(config));
    api.journal.task_ended(config, "OK");
    api.journal.accepted_with("POST", START, &[], &json!(upid), Some(fp));
    api.journal.task_ended(upid, "VM is locked (backup)");
    api.journal.settle(&|p, q| api.get(p, q), upid);
    assert!(api.journal.changed(), "the config write before it was applied");
    assert_eq!(api.journal.lines(), [format!("POST /nodes/pve1/qemu/100/config (cores) (task {config} ended OK)")]);
    assert_eq!(api.journal.refused_lines(), [format!("POST {START} (task {upid} ended: VM is locked (backup))")]);
    // Without a footprint the failed task stays a change: its effect is unknown.
    let other = "UPID:pve1:00000003:00000015:65F00000:qmclone:100:root@pam:";
    api.journal.accepted("POST", "/nodes/pve1/qemu/100/clone", &["newid"], &json!(other));
    api.journal.settle(&|p, q| api.get(p, q), other);
    assert_eq!(api.journal.lines().len(), 2);
}

#[test]
fn a_create_or_clone_that_pve_cleaned_up_changed_nothing_and_one_that_left_a_volume_did() {
    let create = form([("vmid", "100"), ("scsi0", "local-lvm:4"), ("ide2", "none,media=cdrom"), ("name", "a:b")]);
    assert_eq!(touches(Method::Post, &path("/nodes/pve1/qemu"), &create), Some(("pve1".into(), 100, NEW_VM)));
    let listing = |vols: Value| {
        let api = ScriptedApi::default();
        api.answer(Method::Get, "/nodes/pve1/qemu/100/pending", Err(absent()))
            .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(json!([])))
            .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Err(absent()))
            .answer(Method::Get, "/cluster/resources", Ok(json!([])))
            .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(vols));
        api
    };
    // create_vm's worker removed the VM and freed its volume: as before
    let api = listing(json!([]));
    let fp = before(&|p, q| api.get(p, q), Method::Post, "/nodes/pve1/qemu", &create);
    assert!(fp.unchanged(&|p, q| api.get(p, q)), "a create cleaned up by PVE changed nothing");
    // a volume of the new vmid left behind is a change
    let api = listing(json!([{"volid": "local-lvm:vm-100-disk-0", "size": 4u64 << 30, "vmid": 100}]));
    let fp = before(&|p, q| api.get(p, q), Method::Post, "/nodes/pve1/qemu", &create);
    assert!(!fp.unchanged(&|p, q| api.get(p, q)), "a volume left behind is a change");
    // a clone: the new id, the storages of the source's drives
    let clone = form([("newid", "100"), ("name", "c")]);
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/9000/pending", Ok(pending("local-lvm:base-9000-disk-0,size=4G", None)))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Err(absent()))
        .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(json!([])))
        .answer(Method::Get, "/nodes/pve1/qemu/100/pending", Ok(pending(SCSI0, Some("clone"))))
        .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(volumes(4 << 30)));
    let fp = before(&|p, q| api.get(p, q), Method::Post, "/nodes/pve1/qemu/9000/clone", &clone);
    assert!(!fp.unchanged(&|p, q| api.get(p, q)), "a clone whose config is still there changed the cluster");
}

#[test]
fn a_create_after_the_modules_own_reads_reads_nothing_more() {
    // the module's reads: the vmid found free, the whole listing of the storage it allocates on
    let api = ScriptedApi::default();
    let recent = RecentReads::default();
    recent.keep(&path("/cluster/nextid"), &form([("vmid", "150")]), &json!(150));
    let listing = json!([
        {"volid": "local-lvm:vm-150-disk-0", "vmid": 150, "size": 1024},
        {"volid": "local-lvm:vm-100-disk-0", "vmid": 100, "size": 4096},
    ]);
    recent.keep(&path("/nodes/pve1/storage/local-lvm/content"), &Vec::new(), &listing);
    let create = form([("vmid", "150"), ("scsi0", "local-lvm:8")]);
    let fp = before(&recent.over(&|p, q| api.get(p, q)), Method::Post, "/nodes/pve1/qemu", &create);
    assert!(api.calls.borrow().is_empty(), "{:?}", api.calls.borrow());
    assert_eq!(fp.before.config, None);
    let left = BTreeMap::from([("local-lvm:vm-150-disk-0".to_string(), 1024)]);
    assert_eq!(fp.before.volumes, BTreeMap::from([("local-lvm".to_string(), left)]));
    // without the vmid's check, its config is read (and found absent)
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/150/pending", Err(absent()));
    let recent = RecentReads::default();
    recent.keep(&path("/nodes/pve1/storage/local-lvm/content"), &Vec::new(), &listing);
    before(&recent.over(&|p, q| api.get(p, q)), Method::Post, "/nodes/pve1/qemu", &create);
    let asked: Vec<String> = api.calls.borrow().iter().map(|c| c.1.clone()).collect();
    assert_eq!(asked, ["/nodes/pve1/qemu/150/pending"]);
}

#[test]
fn a_config_read_found_absent_on_the_node_is_the_creates_config_read() {
    // the module's one-request read of the task's node (§60) answered `does not exist`: kept (§66)
    let recent = RecentReads::default();
    let pending = path("/nodes/pve1/qemu/150/pending");
    recent.keep_absent(&pending, &Vec::new(), &absent());
    recent.keep(&path("/nodes/pve1/storage/local-lvm/content"), &Vec::new(), &json!([]));
    let api = ScriptedApi::default();
    let create = form([("vmid", "150"), ("scsi0", "local-lvm:8")]);
    let fp = before(&recent.over(&|p, q| api.get(p, q)), Method::Post, "/nodes/pve1/qemu", &create);
    assert!(api.calls.borrow().is_empty(), "{:?}", api.calls.borrow());
    assert_eq!(fp.before.config, None);
    // any other error is not kept: the footprint reads the config itself
    let recent = RecentReads::default();
    let refused =
        Error::Api { method: "GET".into(), path: "p".into(), status: 403, message: "Permission check failed".into() };
    recent.keep_absent(&pending, &Vec::new(), &refused);
    recent.keep(&path("/nodes/pve1/storage/local-lvm/content"), &Vec::new(), &json!([]));
    let api = ScriptedApi::default();
    api.answer(Method::Get, "/nodes/pve1/qemu/150/pending", Err(absent()));
    before(&recent.over(&|p, q| api.get(p, q)), Method::Post, "/nodes/pve1/qemu", &create);
    let asked: Vec<String> = api.calls.borrow().iter().map(|c| c.1.clone()).collect();
    assert_eq!(asked, ["/nodes/pve1/qemu/150/pending"]);
}

#[test]
fn a_clone_of_a_vmid_the_listing_leaves_out_reads_no_config_when_the_user_sees_every_guest() {
    // the module's reads: `/cluster/resources` (no guest 150), the source's config, the storage's listing
    let keep_reads = |recent: &RecentReads| {
        let listing = json!([{"type": "qemu", "vmid": 9000, "node": "pve1"}, {"type": "node", "node": "pve1"}]);
        recent.keep(&path("/cluster/resources"), &Vec::new(), &listing);
        recent.keep(&path("/nodes/pve1/qemu/9000/pending"), &Vec::new(), &pending("local-lvm:base-9000-disk-0", None));
        recent.keep(&path("/nodes/pve1/storage/local-lvm/content"), &Vec::new(), &json!([]));
    };
    let clone = form([("newid", "150"), ("full", "1")]);
    let clone_of = |recent: &RecentReads, api: &ScriptedApi| {
        before(&recent.over(&|p, q| api.get(p, q)), Method::Post, "/nodes/pve1/qemu/9000/clone", &clone)
    };
    // VM.Audit on every guest (pve-manager API2/Cluster.pm `resources` lists them all): nothing read
    let (recent, api) = (RecentReads::default(), ScriptedApi::default());
    keep_reads(&recent);
    recent.every_guest_listed();
    let fp = clone_of(&recent, &api);
    assert!(api.calls.borrow().is_empty(), "{:?}", api.calls.borrow());
    assert_eq!(fp.before.config, None);
    // without it, a guest the user cannot see may hold the vmid: the config is read
    let (recent, api) = (RecentReads::default(), ScriptedApi::default());
    keep_reads(&recent);
    api.answer(Method::Get, "/nodes/pve1/qemu/150/pending", Err(absent()));
    clone_of(&recent, &api);
    let asked: Vec<String> = api.calls.borrow().iter().map(|c| c.1.clone()).collect();
    assert_eq!(asked, ["/nodes/pve1/qemu/150/pending"]);
    // a vmid the listing holds, a listing gone with a write, an id `/cluster/nextid` just offered: read
    for case in ["listed", "written", "offered"] {
        let (recent, api) = (RecentReads::default(), ScriptedApi::default());
        keep_reads(&recent);
        recent.every_guest_listed();
        match case {
            "listed" => recent.keep(&path("/cluster/resources"), &Vec::new(), &json!([{"type": "lxc", "vmid": 150}])),
            "written" => recent.forget(),
            _ => recent.keep(&path("/cluster/nextid"), &Vec::new(), &json!("150")),
        }
        api.answer(Method::Get, "/nodes/pve1/qemu/9000/pending", Ok(pending("local-lvm:base-9000-disk-0", None)))
            .answer(Method::Get, "/nodes/pve1/qemu/150/pending", Err(absent()))
            .answer(Method::Get, "/nodes/pve1/storage/local-lvm/content", Ok(json!([])));
        clone_of(&recent, &api);
        let asked: Vec<String> = api.calls.borrow().iter().map(|c| c.1.clone()).collect();
        assert!(asked.contains(&"/nodes/pve1/qemu/150/pending".to_string()), "{case}: {asked:?}");
    }
}
