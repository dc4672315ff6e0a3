//! Tests of the preflight checks against a scripted cluster: each refusal in PVE's words, and
//! one read per kind however many checks use it.

use super::*;
use crate::pve::client::testing::ScriptedApi;
use crate::pve::request::Method;
use serde_json::json;

/// pve1 and pve2 online, pve3 offline; storages as a small cluster has them.
fn cluster() -> ScriptedApi {
    let api = ScriptedApi::default();
    script_cluster(&api);
    api
}

/// The answers of `cluster` (after any the test queued first: answers match by path prefix, so
/// a `/nodes/...` answer must come before the one for `/nodes`).
fn script_cluster(api: &ScriptedApi) {
    api.answer(
        Method::Get,
        "/nodes",
        Ok(json!([
            {"node": "pve1", "status": "online"},
            {"node": "pve2", "status": "online"},
            {"node": "pve3", "status": "offline"},
        ])),
    );
    api.answer(
        Method::Get,
        "/storage",
        Ok(json!([
            {"storage": "local", "type": "dir", "content": "iso,vztmpl,backup,import"},
            {"storage": "local-lvm", "type": "lvmthin", "content": "images,rootdir", "nodes": "pve1,pve2"},
            {"storage": "only1", "type": "zfspool", "content": "images", "nodes": "pve1"},
            {"storage": "nfs", "type": "nfs", "content": "images,iso"},
            {"storage": "ceph", "type": "rbd", "content": "images", "shared": 0},
            {"storage": "off", "type": "dir", "content": "images", "disable": 1},
            {"storage": "isos", "type": "dir", "content": "iso"},
            {"storage": "san", "type": "lvm", "content": "images", "shared": 1},
        ])),
    );
}

fn text(r: Result<()>) -> String {
    r.unwrap_err().to_string()
}

fn calls(api: &ScriptedApi) -> Vec<String> {
    api.calls.borrow().iter().map(|(m, p, _)| format!("{} {p}", m.as_str())).collect()
}

#[test]
fn nodes_missing_or_offline_are_refused_with_one_read() {
    let api = cluster();
    let pf = Preflight::new(&api);
    assert!(pf.node("pve1", "node").is_ok());
    assert!(pf.node("localhost", "node").is_ok());
    assert_eq!(
        text(pf.node("pve9", "node")),
        "node: hostname lookup 'pve9' failed - failed to get address info for: pve9: Name or service not known; the cluster's nodes: pve1, pve2, pve3"
    );
    assert_eq!(text(pf.node("pve3", "node")), "node: node 'pve3' is offline: No route to host");
    assert_eq!(calls(&api), ["GET /nodes"]);
}

#[test]
fn storages_are_checked_as_storage_check_enabled_then_content() {
    let api = cluster();
    let pf = Preflight::new(&api);
    assert!(pf.storage("pve1", "local-lvm", Content::Images, "storage").is_ok());
    assert!(pf.storage("pve2", "local", Content::Iso, "iso").is_ok());
    assert!(pf.storage("localhost", "only1", Content::Images, "storage").is_ok());
    for (node, sid, content, message) in [
        ("pve1", "nosuch", Content::Images, "storage 'nosuch' does not exist; the storages enabled on pve1: local, local-lvm, only1, nfs, ceph, isos, san"),
        ("pve1", "off", Content::Images, "storage 'off' is disabled"),
        ("pve2", "only1", Content::Images, "storage 'only1' is not available on node 'pve2'"),
        ("pve1", "isos", Content::Images, "storage 'isos' does not support vm images"),
        ("pve1", "local", Content::Images, "storage 'local' does not support vm images"),
        ("pve1", "local-lvm", Content::Iso, "storage 'local-lvm' does not support 'iso' content"),
        ("pve1", "isos", Content::Import, "storage 'isos' does not support 'import' content"),
        ("pve1", "nfs", Content::Snippets, "storage 'nfs' does not support 'snippets' content"),
    ] {
        assert_eq!(text(pf.storage(node, sid, content, "scsi1")), format!("scsi1: {message}"), "{sid} on {node}");
    }
    assert_eq!(calls(&api), ["GET /storage"]);
}

#[test]
fn shared_comes_from_the_flag_or_the_storage_type() {
    let storages: Vec<StorageConfig> = [
        json!({"storage": "a", "type": "dir", "shared": 1}),
        json!({"storage": "b", "type": "rbd"}),
        json!({"storage": "c", "type": "lvm", "shared": "0"}),
        json!({"type": "dir"}),
    ]
    .iter()
    .filter_map(StorageConfig::from_json)
    .collect();
    let shared: Vec<(&str, bool)> = storages.iter().map(|s| (s.storage.as_str(), s.shared)).collect();
    assert_eq!(shared, [("a", true), ("b", true), ("c", false)]);
}

#[test]
fn the_format_option_is_kept_for_naming_new_volumes() {
    let with = StorageConfig::from_json(&json!({"storage": "d", "type": "dir", "format": "qcow2"}));
    let without = StorageConfig::from_json(&json!({"storage": "l", "type": "lvmthin"}));
    assert_eq!(with.and_then(|s| s.format).as_deref(), Some("qcow2"));
    assert_eq!(without.and_then(|s| s.format), None);
}

#[test]
fn volumes_are_looked_up_once_per_storage_and_missing_ones_refused() {
    let api = ScriptedApi::default();
    api.answer(
        Method::Get,
        "/nodes/pve1/storage/local/content",
        Ok(json!([
            {"volid": "local:iso/debian.iso", "content": "iso"},
            {"volid": "local:import/disk.qcow2", "content": "import"},
        ])),
    );
    script_cluster(&api);
    let pf = Preflight::new(&api);
    assert!(pf.volume("pve1", "local:iso/debian.iso", "cdrom").is_ok());
    assert!(pf.volume("pve1", "local:import/disk.qcow2", "import_from").is_ok());
    assert_eq!(
        text(pf.volume("pve1", "local:iso/nope.iso", "cdrom")),
        "cdrom: volume local:iso/nope.iso does not exist"
    );
    // attached as it is: create_disks activates it first, Plugin.pm activate_volume's words (§68)
    assert_eq!(
        text(pf.attached("pve1", "local:iso/nope.iso", "cdrom")),
        "cdrom: volume 'local:iso/nope.iso' does not exist"
    );
    assert_eq!(text(pf.volume("pve1", "gone:iso/x.iso", "cdrom")), "cdrom: storage 'gone' does not exist; the storages enabled on pve1: local, local-lvm, only1, nfs, ceph, isos, san");
    for not_a_volume in ["none", "cdrom", "/dev/sdb", "4"] {
        assert!(pf.volume("pve1", not_a_volume, "cdrom").is_ok(), "{not_a_volume}");
    }
    assert_eq!(calls(&api), ["GET /storage", "GET /nodes/pve1/storage/local/content"]);
}

fn config(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn clone_targets_follow_clone_vm() {
    let local = config(&[("scsi0", "local-lvm:base-9000-disk-0,size=8G"), ("ide2", "none,media=cdrom")]);
    let shared = config(&[("scsi0", "nfs:9000/base-9000-disk-0.raw,size=8G"), ("unused0", "local-lvm:vm-9000-disk-1")]);
    let api = cluster();
    let pf = Preflight::new(&api);
    assert!(pf.clone_target("pve1", None, None, &local).is_ok());
    assert!(pf.clone_target("pve1", Some("pve1"), Some("local-lvm"), &local).is_ok());
    assert!(pf.clone_target("pve1", Some("localhost"), None, &local).is_ok());
    assert!(pf.clone_target("pve1", Some("pve2"), None, &shared).is_ok());
    assert!(pf.clone_target("pve1", Some("pve2"), Some("nfs"), &local).is_err());
    assert_eq!(
        text(pf.clone_target("pve1", Some("pve9"), None, &shared)),
        "target: no such cluster node 'pve9'; the cluster's nodes: pve1, pve2, pve3"
    );
    assert_eq!(
        text(pf.clone_target("pve1", Some("pve2"), None, &local)),
        "target: can't clone VM to node 'pve2' (VM uses local storage)"
    );
    assert_eq!(
        text(pf.clone_target("pve1", Some("pve2"), Some("local-lvm"), &shared)),
        "storage: can't clone to non-shared storage 'local-lvm'"
    );
    assert_eq!(
        text(pf.clone_target("pve1", Some("pve2"), Some("only1"), &shared)),
        "storage: storage 'only1' is not available on node 'pve2'"
    );
    assert_eq!(
        text(pf.clone_target("pve1", None, Some("isos"), &local)),
        "storage: storage 'isos' does not support vm images"
    );
    assert_eq!(calls(&api), ["GET /storage", "GET /nodes"]);
}

/// Qemu.pm `clone_vm`: a linked clone needs the 'clone' feature of each linked volume's storage
/// (LVMPlugin.pm `volume_has_feature` offers none); CD-ROM, cloud-init and TPM state are copied.
#[test]
fn linked_clones_need_the_storage_clone_feature() {
    let api = cluster();
    let pf = Preflight::new(&api);
    let thin = config(&[
        ("scsi0", "local-lvm:base-9000-disk-0,size=8G"),
        ("ide2", "san:vm-9000-cloudinit,media=cdrom"),
        ("tpmstate0", "san:vm-9000-disk-2,size=4M"),
        ("unused0", "san:vm-9000-disk-3"),
    ]);
    assert!(pf.clone_features(&thin, false, false).is_ok());
    let thick = config(&[("efidisk0", "local-lvm:base-600-disk-1"), ("scsi0", "san:vm-600-disk-0,size=8G")]);
    assert_eq!(
        text(pf.clone_features(&thick, false, false)),
        "full: Linked clone feature is not supported for 'san:vm-600-disk-0' (scsi0)"
    );
    assert_eq!(calls(&api), ["GET /storage"]);
}

/// Qemu.pm `clone_vm`: a full copy needs the 'copy' feature, of the snapshot when one is cloned
/// (ZFSPoolPlugin.pm copies no snapshot, LVMPlugin.pm only a qcow2 one), in the keys' order.
#[test]
fn full_clones_need_the_storage_copy_feature_of_the_snapshot() {
    let api = cluster();
    let pf = Preflight::new(&api);
    let vm = config(&[
        ("ide2", "local:iso/debian.iso,media=cdrom"),
        ("scsi0", "only1:vm-100-disk-0,size=8G"),
        ("scsi1", "san:vm-100-disk-1,size=8G"),
        ("unused0", "only1:vm-100-disk-3"),
    ]);
    assert!(pf.clone_features(&vm, true, false).is_ok());
    assert_eq!(
        text(pf.clone_features(&vm, true, true)),
        "snapname: Full clone feature is not supported for a snapshot of 'only1:vm-100-disk-0' (scsi0)"
    );
    let lvm = config(&[("scsi1", "san:vm-100-disk-1,size=8G"), ("virtio0", "only1:vm-100-disk-0,size=8G")]);
    assert_eq!(
        text(pf.clone_features(&lvm, true, true)),
        "snapname: Full clone feature is not supported for a snapshot of 'san:vm-100-disk-1' (scsi1)"
    );
    // thin LVM and Ceph copy a snapshot; a storage this user cannot see is left to PVE
    let thin = config(&[("scsi0", "local-lvm:vm-100-disk-0,size=8G"), ("scsi1", "hidden:vm-100-disk-1")]);
    assert!(pf.clone_features(&thin, true, true).is_ok());
    // a linked clone copies its cloud-init drive: 'copy' of a snapshot on ZFS is refused as Full
    let linked = config(&[("ide2", "only1:vm-100-cloudinit,media=cdrom"), ("scsi0", "local-lvm:vm-100-disk-0")]);
    assert_eq!(
        text(pf.clone_features(&linked, false, true)),
        "snapname: Full clone feature is not supported for a snapshot of 'only1:vm-100-cloudinit' (ide2)"
    );
    assert_eq!(calls(&api), ["GET /storage"]);
}

/// Qemu.pm `move_vm_disk` to another VM: the volume's storage must rename it (LVMPlugin.pm and
/// ZFSPoolPlugin.pm do; RBDPlugin.pm not a base volume; an unknown storage is left to PVE).
#[test]
fn a_reassign_needs_the_storage_rename_feature() {
    let api = cluster();
    let pf = Preflight::new(&api);
    assert_eq!(pf.reassign_feature("san:vm-100-disk-1").unwrap(), None);
    assert_eq!(pf.reassign_feature("only1:vm-100-disk-1").unwrap(), None);
    assert_eq!(pf.reassign_feature("hidden:vm-100-disk-1").unwrap(), None);
    assert_eq!(
        pf.reassign_feature("ceph:base-100-disk-1").unwrap().as_deref(),
        Some("Storage does not support moving of this disk to another VM")
    );
}

#[test]
fn migrate_targets_follow_migrate_vm() {
    let vm = config(&[
        ("scsi0", "local-lvm:vm-100-disk-0,size=8G"),
        ("ide2", "local:iso/debian.iso,media=cdrom"),
        ("unused0", "only1:vm-100-disk-1"),
    ]);
    let api = cluster();
    let pf = Preflight::new(&api);
    assert!(pf.migrate_target("pve1", "pve2", &vm, None).is_ok());
    assert!(pf.migrate_target("pve1", "pve2", &vm, Some("nfs")).is_ok());
    assert_eq!(text(pf.migrate_target("pve1", "pve1", &vm, None)), "target: target is local node.");
    assert_eq!(
        text(pf.migrate_target("pve1", "pve9", &vm, None)),
        "target: no such cluster node 'pve9'; the cluster's nodes: pve1, pve2, pve3"
    );
    assert_eq!(text(pf.migrate_target("pve1", "pve3", &vm, None)), "target: node 'pve3' is offline: No route to host");
    let on_one_node = config(&[("virtio0", "only1:vm-100-disk-0")]);
    assert_eq!(
        text(pf.migrate_target("pve1", "pve2", &on_one_node, None)),
        "virtio0: storage 'only1' is not available on node 'pve2'"
    );
    let iso_elsewhere = config(&[("ide2", "nfs:iso/x.iso,media=cdrom"), ("sata0", "ceph:vm-100-disk-0")]);
    assert!(pf.migrate_target("pve1", "pve2", &iso_elsewhere, None).is_ok());
    let wrong_content = config(&[("sata0", "isos:vm-100-disk-0")]);
    assert_eq!(
        text(pf.migrate_target("pve1", "pve2", &wrong_content, None)),
        "sata0: isos:vm-100-disk-0: content type 'images' is not available on storage 'isos'"
    );
    assert_eq!(
        text(pf.migrate_target("pve1", "pve2", &vm, Some("isos"))),
        "targetstorage: storage 'isos' does not support vm images"
    );
    assert_eq!(text(pf.migrate_target("pve2", "pve1", &vm, Some("off"))), "targetstorage: storage 'off' is disabled");
}

#[test]
fn move_targets_follow_move_vm_disk() {
    let api = cluster();
    let pf = Preflight::new(&api);
    assert!(pf.move_target("pve1", "nfs", "storage").is_ok());
    assert_eq!(text(pf.move_target("pve1", "nosuch", "storage")), "storage: storage 'nosuch' does not exist; the storages enabled on pve1: local, local-lvm, only1, nfs, ceph, isos, san");
    assert_eq!(text(pf.move_target("pve1", "isos", "storage")), "storage: storage 'isos' does not support vm images");
    assert_eq!(
        text(pf.move_target("pve2", "only1", "storage")),
        "storage: storage 'only1' is not available on node 'pve2'"
    );
}

#[test]
fn a_failed_read_says_what_was_read_and_is_not_cached() {
    let api = ScriptedApi::default();
    api.answer(
        Method::Get,
        "/storage",
        Err(Error::Api {
            method: "GET".into(),
            path: "/storage".into(),
            status: 500,
            message: "cfs-lock timeout".into(),
        }),
    );
    api.answer(Method::Get, "/storage", Ok(json!([{"storage": "nfs", "type": "nfs", "content": "images"}])));
    let pf = Preflight::new(&api);
    let e = pf.move_target("pve1", "nfs", "storage").unwrap_err();
    assert_eq!(e.api_status(), Some(500));
    assert!(e.to_string().starts_with("reading the storages: cfs-lock timeout"), "{e}");
    assert!(pf.move_target("pve1", "nfs", "storage").is_ok());
}

/// storage.cfg with a thick LVM `san` (VG `san`) and an LVM-thin `thin`.
fn answer_thick_and_thin_storages(api: &ScriptedApi) {
    api.answer(
        Method::Get,
        "/storage",
        Ok(json!([
            {"storage": "san", "type": "lvm", "vgname": "san", "content": "images"},
            {"storage": "thin", "type": "lvmthin", "content": "images"},
        ])),
    );
}

#[test]
fn allocation_reads_the_status_only_where_the_size_is_reserved_and_refuses_in_pves_words() {
    // LVMPlugin.pm alloc_lvm_image / lvcreate (docs/pve-semantics.md §22.4, §26.7)
    let api = ScriptedApi::default();
    // one status read per allocation checked on the thick pool (three below)
    for _ in 0..3 {
        api.answer(
            Method::Get,
            "/nodes/pve1/storage/san/status",
            Ok(json!({"total": 200u64 << 30, "avail": 34560u64 << 22})),
        );
    }
    answer_thick_and_thin_storages(&api);
    let pf = Preflight::new(&api);
    let name = || Ok("san:vm-121-disk-1".to_string());
    assert!(pf.allocation("pve1", "thin", 1 << 50, "storage", "", &name).is_ok());
    assert!(pf.allocation("pve1", "san", 100 << 30, "storage", "", &name).is_ok());
    assert_eq!(
        text(pf.allocation("pve1", "san", 150 << 30, "storage", "", &name)),
        "storage: lvcreate 'san/vm-121-disk-1' error:   Volume group \"san\" has insufficient free space (34560 extents): 38400 required."
    );
    assert_eq!(
        text(pf.allocation("pve1", "san", 150 << 30, "target_storage", "storage migration failed: ", &name)),
        "target_storage: storage migration failed: lvcreate 'san/vm-121-disk-1' error:   Volume group \"san\" has insufficient free space (34560 extents): 38400 required."
    );
    // no status read for the thin pool, which over-provisions
    assert!(!calls(&api).iter().any(|c| c.contains("/storage/thin/status")));
}

#[test]
fn allocations_take_the_space_of_the_earlier_volumes_of_the_same_task() {
    // Qemu.pm create_disks / QemuServer.pm clone_disk: each vdisk_alloc reserves its extents on
    // thick LVM before the next (LVMPlugin.pm alloc_lvm_image; docs/pve-semantics.md §22.4)
    let api = ScriptedApi::default();
    // 100 GiB free (25600 extents): read once per call that reaches the thick pool (three below)
    for _ in 0..3 {
        api.answer(Method::Get, "/nodes/pve1/storage/san/status", Ok(json!({"avail": 25600u64 << 22})));
    }
    answer_thick_and_thin_storages(&api);
    let pf = Preflight::new(&api);
    let new = |storage: &str, n: u32, gib: u64, option: &str| NewVolume {
        storage: storage.into(),
        volid: format!("{storage}:vm-230-disk-{n}"),
        bytes: gib << 30,
        option: option.into(),
        during: "unable to create VM 230 - ".into(),
        format: None,
        new_disk: false,
    };
    let task = [new("san", 0, 60, "scsi.scsi0"), new("thin", 0, 5000, "scsi.scsi1"), new("san", 1, 60, "scsi.scsi2")];
    assert_eq!(
        text(pf.allocations("pve1", &task)),
        "scsi.scsi2: unable to create VM 230 - lvcreate 'san/vm-230-disk-1' error:   Volume group \"san\" has \
         insufficient free space (10240 extents): 15360 required."
    );
    // each alone fits; the status was read once, the thin pool's never
    for one in &task {
        assert!(pf.allocations("pve1", std::slice::from_ref(one)).is_ok());
    }
    let reads = calls(&api).iter().filter(|c| c.contains("/status")).count();
    assert_eq!(reads, 1 + 2, "one read per allocations call that reaches the thick pool");
}

#[test]
fn a_check_run_counts_the_space_earlier_tasks_take_and_keeps_what_its_own_take() {
    // Two volumes that fit alone but not together on thick LVM: the real run's second
    // lvcreate fails (LVMPlugin.pm alloc_lvm_image), so a check run counts the first task's
    // predicted volume as taken (docs/pve-semantics.md §37.3).
    let api = ScriptedApi::default();
    for _ in 0..4 {
        api.answer(Method::Get, "/nodes/pve1/storage/san/status", Ok(json!({"avail": 2560u64 << 22})));
    }
    // storage.cfg, read once by each of the three preflights below
    for _ in 0..3 {
        answer_thick_and_thin_storages(&api);
    }
    let name = || Ok("san:vm-121-disk-1".to_string());
    // a real run: PVE's free space as it is, nothing kept
    let real = Preflight::new(&api).reserving(None);
    assert!(real.allocation("pve1", "san", 6 << 30, "storage", "", &name).is_ok());
    assert!(real.reserved_here().is_empty());
    // a check run: an earlier task took 6 GiB of the 10 free on this node's `san`
    let earlier: BTreeMap<String, i64> = [("pve1/san".to_string(), 6i64 << 30)].into();
    let check = Preflight::new(&api).reserving(Some(earlier));
    assert_eq!(
        text(check.allocation("pve1", "san", 6 << 30, "storage", "", &name)),
        "storage: lvcreate 'san/vm-121-disk-1' error:   Volume group \"san\" has insufficient free space (1024 extents): 1536 required."
    );
    let vol = NewVolume {
        storage: "san".into(),
        volid: "san:vm-230-disk-0".into(),
        bytes: 2 << 30,
        option: "scsi.scsi0".into(),
        during: String::new(),
        format: None,
        new_disk: false,
    };
    assert!(check.allocations("pve1", std::slice::from_ref(&vol)).is_ok());
    assert!(check.allocation("pve1", "thin", 1 << 40, "storage", "", &name).is_ok());
    // what this task takes, once: the thick volume only (a thin pool reserves nothing)
    assert_eq!(check.reserved_here(), vec![("pve1/san".to_string(), 2u64 << 30)]);
    assert!(check.reserved_here().is_empty());
    // another node's `san` (not shared) is not the same space
    let elsewhere: BTreeMap<String, i64> = [("pve2/san".to_string(), 6i64 << 30)].into();
    let other = Preflight::new(&api).reserving(Some(elsewhere));
    assert!(other.allocation("pve1", "san", 6 << 30, "storage", "", &name).is_ok());
}

#[test]
fn a_check_run_credits_what_a_predicted_removal_frees_of_the_listed_volumes() {
    // LVMPlugin.pm free_image: lvremove gives the LV's extents back to the group at once; a
    // check run counts them free for the later tasks (docs/pve-semantics.md §40.1).
    let api = ScriptedApi::default();
    answer_thick_and_thin_storages(&api);
    api.answer(
        Method::Get,
        "/nodes/pve1/storage/san/content",
        Ok(json!([{"volid": "san:vm-184-disk-0", "size": 6u64 << 30}, {"volid": "san:vm-150-disk-0", "size": 1u64 << 30}])),
    );
    api.answer(
        Method::Get,
        "/nodes/pve1/storage/thin/content",
        Ok(json!([{"volid": "thin:vm-184-disk-1", "size": 1u64 << 30}])),
    );
    let check = Preflight::new(&api).reserving(Some(BTreeMap::new()));
    // a listed thick volume: its size; a thin one frees no reserved space; one not listed (only
    // predicted) and one on a storage not in storage.cfg: nothing
    let freed = check
        .freeing("pve1", ["san:vm-184-disk-0", "thin:vm-184-disk-1", "san:vm-184-disk-5", "gone:vm-184-disk-0"])
        .unwrap();
    assert_eq!(
        freed,
        vec![
            ("pve1/san".to_string(), "san:vm-184-disk-0".to_string(), 6u64 << 30),
            ("pve1/thin".to_string(), "thin:vm-184-disk-1".to_string(), 0),
        ]
    );
    assert_eq!(check.listed_of("pve1", 150).unwrap(), ["san:vm-150-disk-0"]);
    // a real run: nothing
    assert!(Preflight::new(&api).reserving(None).freeing("pve1", ["san:vm-184-disk-0"]).unwrap().is_empty());
    // the run freed 6 GiB more than it took: 4 GiB free by PVE's word, 10 GiB by the run's
    answer_thick_and_thin_storages(&api);
    api.answer(Method::Get, "/nodes/pve1/storage/san/status", Ok(json!({"avail": 4u64 << 30})));
    let credited: BTreeMap<String, i64> = [("pve1/san".to_string(), -(6i64 << 30))].into();
    let later = Preflight::new(&api).reserving(Some(credited));
    assert!(later.allocation("pve1", "san", 10 << 30, "storage", "", &|| Ok("san:vm-185-disk-0".into())).is_ok());
}

#[test]
fn a_new_disk_in_a_format_its_storage_does_not_make_is_refused_before_its_space() {
    // Qemu.pm create_disks hands `format=` to Storage.pm vdisk_alloc as it is; LvmThinPlugin.pm
    // alloc_image and LVMPlugin.pm alloc_lvm_image refuse it (docs/pve-semantics.md §42.1)
    let api = ScriptedApi::default();
    answer_thick_and_thin_storages(&api);
    let pf = Preflight::new(&api);
    let vol = |storage: &str, format: &str| NewVolume {
        storage: storage.into(),
        volid: format!("{storage}:vm-230-disk-0"),
        bytes: 1 << 30,
        option: "scsi.scsi1".into(),
        during: "unable to create VM 230 - ".into(),
        format: Some(format.into()),
        new_disk: true,
    };
    assert_eq!(
        text(pf.allocations("pve1", &[vol("thin", "qcow2")])),
        "scsi.scsi1: unable to create VM 230 - unsupported format 'qcow2'"
    );
    // refused before the thick pool's free space is read
    assert_eq!(
        text(pf.allocations("pve1", &[vol("san", "qcow2")])),
        "scsi.scsi1: unable to create VM 230 - snapshot-as-volume-chain option need to be enabled to use qcow2 format"
    );
    assert!(!calls(&api).iter().any(|c| c.contains("/status")));
    assert!(pf.new_volume("thin", None, Some("raw"), 1, "format", "").is_ok());
    assert_eq!(text(pf.new_volume("thin", None, Some("vmdk"), 1, "format", "")), "format: unsupported format 'vmdk'");
    // a storage storage.cfg does not show is left to the storage check
    assert!(pf.new_volume("gone", None, Some("qcow2"), 1, "format", "").is_ok());
}
