//! The state rules as a table: each write against each lock value, protection and power state,
//! with PVE's words (docs/pve-semantics.md §33; docs/refusals.md names each row's source).

use super::*;

fn refused(op: Op, c: &VmConfig, running: bool, skiplock: bool) -> Option<String> {
    refusal(op, &Facts { vmid: 170, config: c, running, skiplock })
}

const NO_DELETES: Op = Op::Config { deletes: &[], force: false };

#[test]
fn every_write_that_checks_the_lock_refuses_a_backup_lock() {
    let c = VmConfig::from_pairs(&[("lock", "backup")]);
    for op in [
        NO_DELETES,
        Op::Resize,
        Op::MoveDisk,
        Op::Clone { full: true, storage: false, format: false },
        Op::Template,
        Op::Migrate,
        Op::Reset,
    ] {
        assert_eq!(refused(op, &c, false, false).as_deref(), Some("VM is locked (backup)"), "{op:?}");
    }
    // a stopped VM under backup cannot be started; a running one is resumed in its QEMU
    assert_eq!(refused(Op::Start, &c, false, false).as_deref(), Some("VM is locked (backup)"));
    assert_eq!(refused(Op::Start, &c, true, false), None);
    // stop and reboot check the lock only when QEMU runs
    assert_eq!(refused(Op::Stop, &c, true, false).as_deref(), Some("VM is locked (backup)"));
    assert_eq!(refused(Op::Stop, &c, false, false), None);
    assert_eq!(refused(Op::Reboot, &c, true, false).as_deref(), Some("VM is locked (backup)"));
    // suspend and resume let a backup through; hibernating during one is refused
    assert_eq!(refused(Op::Suspend { to_disk: false }, &c, true, false), None);
    assert_eq!(refused(Op::Resume, &c, true, false), None);
    assert_eq!(
        refused(Op::Suspend { to_disk: true }, &c, true, false).as_deref(),
        Some("cannot suspend to disk during backup")
    );
    assert_eq!(refused(Op::Destroy, &c, false, false).as_deref(), Some("VM is locked (backup)"));
}

#[test]
fn every_lock_value_is_refused_as_check_lock_words_it() {
    for lock in ["backup", "migrate", "snapshot", "snapshot-delete", "rollback", "disk", "suspending", "destroyed"] {
        let c = VmConfig::from_pairs(&[("lock", lock)]);
        assert_eq!(refused(NO_DELETES, &c, false, false), Some(format!("VM is locked ({lock})")));
    }
}

#[test]
fn create_and_clone_locks_are_left_to_the_waiting_code() {
    for lock in WAITED_LOCKS {
        let c = VmConfig::from_pairs(&[("lock", lock)]);
        for op in [NO_DELETES, Op::Start, Op::Destroy, Op::Clone { full: false, storage: false, format: false }] {
            assert_eq!(refused(op, &c, false, false), None, "{lock} {op:?}");
        }
    }
}

#[test]
fn skiplock_skips_the_lock_only_where_the_handler_takes_it() {
    let c = VmConfig::from_pairs(&[("lock", "migrate")]);
    for op in [NO_DELETES, Op::Start, Op::Resize, Op::Destroy, Op::Reset] {
        assert_eq!(refused(op, &c, false, true), None, "{op:?}");
    }
    // reboot, clone, template, migrate and move_disk have no skiplock
    for op in
        [Op::Reboot, Op::Clone { full: true, storage: false, format: false }, Op::Template, Op::Migrate, Op::MoveDisk]
    {
        assert!(refused(op, &c, true, true).is_some(), "{op:?}");
    }
}

#[test]
fn a_hibernated_vm_may_be_started_resumed_destroyed_and_its_state_deleted() {
    let c = VmConfig::from_pairs(&[("lock", "suspended"), ("vmstate", "local-lvm:vm-170-state-x")]);
    assert_eq!(refused(Op::Start, &c, false, false), None);
    assert_eq!(refused(Op::Resume, &c, false, false), None);
    assert_eq!(refused(Op::Destroy, &c, false, false), None);
    let vmstate = ["vmstate".to_string()];
    assert_eq!(refused(Op::Config { deletes: &vmstate, force: false }, &c, false, false), None);
    assert_eq!(refused(NO_DELETES, &c, false, false).as_deref(), Some("VM is locked (suspended)"));
}

#[test]
fn protection_refuses_destroy_and_the_removal_of_drives() {
    let c = VmConfig::from_pairs(&[
        ("protection", "1"),
        ("scsi1", "local-lvm:vm-170-disk-1,size=1G"),
        ("unused0", "local-lvm:vm-170-disk-2"),
        ("name", "x"),
    ]);
    assert_eq!(
        refused(Op::Destroy, &c, false, false).as_deref(),
        Some("can't remove VM 170 - protection mode enabled")
    );
    // protection comes before the running check, as in `$early_checks`
    assert_eq!(refused(Op::Destroy, &c, true, false).as_deref(), Some("can't remove VM 170 - protection mode enabled"));
    let scsi1 = ["scsi1".to_string()];
    assert_eq!(
        refused(Op::Config { deletes: &scsi1, force: true }, &c, false, false).as_deref(),
        Some("can't remove drive 'scsi1' - protection mode enabled")
    );
    let unused = ["unused0".to_string()];
    assert_eq!(
        refused(Op::Config { deletes: &unused, force: false }, &c, false, false).as_deref(),
        Some("can't remove unused disk 'local-lvm:vm-170-disk-2' - protection mode enabled")
    );
    let state = VmConfig::from_pairs(&[("protection", "1"), ("vmstate", "local-lvm:vm-170-state-x")]);
    let vmstate = ["vmstate".to_string()];
    assert_eq!(
        refused(Op::Config { deletes: &vmstate, force: false }, &state, false, false).as_deref(),
        Some("can't remove vmstate 'local-lvm:vm-170-state-x' - protection mode enabled")
    );
    // removing a key that is not a drive, or a drive the VM lacks, is not protected
    let name = ["name".to_string(), "scsi5".to_string()];
    assert_eq!(refused(Op::Config { deletes: &name, force: false }, &c, false, false), None);
    // without protection: a running VM is refused as the early checks say
    let plain = VmConfig::from_pairs(&[]);
    assert_eq!(refused(Op::Destroy, &plain, true, false).as_deref(), Some("VM 170 is running - destroy failed"));
}

#[test]
fn templates_and_running_vms() {
    let t = VmConfig::from_pairs(&[("template", "1")]);
    assert_eq!(refused(Op::Start, &t, false, false).as_deref(), Some("you can't start a vm if it's a template"));
    let c = VmConfig::from_pairs(&[("tpmstate0", "local-lvm:vm-170-disk-1,size=4M")]);
    assert_eq!(
        refused(Op::Clone { full: true, storage: false, format: false }, &c, true, false).as_deref(),
        Some("cannot clone TPM state while VM is running")
    );
    assert_eq!(refused(Op::Clone { full: true, storage: false, format: false }, &c, false, false), None);
    assert_eq!(
        refused(Op::Template, &VmConfig::from_pairs(&[]), true, false).as_deref(),
        Some("you can't convert a VM to template if VM is running")
    );
}

#[test]
fn base_volumes_and_their_linked_clones() {
    let t = VmConfig::from_pairs(&[
        ("scsi0", "local-lvm:base-9000-disk-0,size=2G"),
        ("ide2", "local:iso/x.iso,media=cdrom"),
        ("unused0", "local:9000/base-9000-disk-1.qcow2"),
        ("scsi1", "/dev/sdb"),
    ]);
    assert_eq!(
        base_volumes(&t),
        vec![
            ("local-lvm".to_string(), "local-lvm:base-9000-disk-0".to_string()),
            ("local".to_string(), "local:9000/base-9000-disk-1.qcow2".to_string()),
        ]
    );
    let listed: Vec<String> = vec!["local-lvm:base-9000-disk-0/vm-101-disk-0".into(), "local-lvm:vm-102-disk-0".into()];
    assert!(base_in_use("local-lvm:base-9000-disk-0", &listed));
    assert!(!base_in_use("local-lvm:base-9000-disk-1", &listed));
    let files: Vec<String> = vec!["local:9000/base-9000-disk-1.qcow2/101/vm-101-disk-0.qcow2".into()];
    assert!(base_in_use("local:9000/base-9000-disk-1.qcow2", &files));
    assert!(!base_in_use("local:101/vm-101-disk-0.qcow2", &files));
    // LvmThinPlugin.pm: a thin clone is `vm-<id>-disk-<m>`, whose parse_volname names no base
    let thin: Vec<String> = vec!["local-lvm:vm-201-disk-0".into(), "local-lvm:base-200-disk-0".into()];
    assert!(!base_in_use("local-lvm:base-200-disk-0", &thin));
    assert_eq!(
        template_in_use("local-lvm:base-9000-disk-0"),
        "base volume 'local-lvm:base-9000-disk-0' is still in use by linked cloned"
    );
    assert_eq!(
        base_volume_in_use("scsi0", "local-lvm:base-9000-disk-0"),
        "unable to apply pending change scsi0 : base volume 'base-9000-disk-0' is still in use by linked clones"
    );
}

#[test]
fn a_linked_clone_takes_neither_storage_nor_format() {
    let c = VmConfig::from_pairs(&[]);
    let linked = |storage, format| Op::Clone { full: false, storage, format };
    assert_eq!(
        refused(linked(true, true), &c, false, false).as_deref(),
        Some("parameter 'storage' not allowed for linked clones")
    );
    assert_eq!(
        refused(linked(false, true), &c, false, false).as_deref(),
        Some("parameter 'format' not allowed for linked clones")
    );
    assert_eq!(refused(Op::Clone { full: true, storage: true, format: true }, &c, false, false), None);
    // the lock comes first
    let locked = VmConfig::from_pairs(&[("lock", "backup")]);
    assert_eq!(refused(linked(true, false), &locked, false, false).as_deref(), Some("VM is locked (backup)"));
}

#[test]
fn a_disk_goes_to_another_vm_only_between_unlocked_plain_vms_from_a_stopped_one() {
    let plain = VmConfig::from_pairs(&[]);
    let scsi = Op::Reassign { unused: false };
    assert_eq!(
        refused(scsi, &plain, true, false).as_deref(),
        Some("Cannot move disk to another VM while the source VM is running - detach first")
    );
    assert_eq!(refused(Op::Reassign { unused: true }, &plain, true, false), None);
    assert_eq!(
        refused(scsi, &VmConfig::from_pairs(&[("template", "1")]), false, false).as_deref(),
        Some("Can't move disks from or to template VMs")
    );
    assert_eq!(
        refused(scsi, &VmConfig::from_pairs(&[("lock", "backup")]), false, false).as_deref(),
        Some("VM is locked (backup)")
    );
}

#[test]
fn a_removal_frees_the_volumes_the_vm_owns_once_and_a_change_what_it_no_longer_names() {
    // QemuServer.pm destroy_vm: drives, unusedN and vmstate the VM owns (cloud-init too), not a
    // CD-ROM's ISO, not another VM's volume, not a linked clone's base; pending values too.
    let mut c = VmConfig::from_pairs(&[
        ("scsi0", "lvm:vm-170-disk-0,size=6G"),
        ("scsi1", "lvm:base-9000-disk-0/vm-170-disk-1,size=2G"),
        ("ide2", "local:iso/debian.iso,media=cdrom"),
        ("ide0", "lvm:vm-170-cloudinit,media=cdrom"),
        ("unused0", "lvm:vm-170-disk-2"),
        ("scsi2", "lvm:vm-171-disk-0,size=1G"),
        ("vmstate", "lvm:vm-170-state-suspend-2026-01-01"),
    ]);
    c.pending.insert("scsi0".into(), "lvm:vm-170-disk-0,size=6G,ssd=1".into());
    c.pending.insert("scsi3".into(), "lvm:vm-170-disk-3,size=1G".into());
    assert_eq!(
        owned_volumes(&c, 170),
        [
            "lvm:vm-170-cloudinit",
            "lvm:vm-170-disk-0",
            "lvm:base-9000-disk-0/vm-170-disk-1",
            "lvm:vm-170-disk-2",
            "lvm:vm-170-state-suspend-2026-01-01",
            "lvm:vm-170-disk-3",
        ]
    );
    // a drive removed for good, one that becomes unusedN (kept)
    let mut after = c.clone();
    after.current.remove("scsi1");
    after.current.insert("scsi0".into(), "other:vm-170-disk-0,size=6G".into());
    after.pending.remove("scsi0");
    assert_eq!(freed_volumes(&c, &after, 170), ["lvm:vm-170-disk-0", "lvm:base-9000-disk-0/vm-170-disk-1"]);
    after.current.insert("unused1".into(), "lvm:vm-170-disk-0".into());
    assert_eq!(freed_volumes(&c, &after, 170), ["lvm:base-9000-disk-0/vm-170-disk-1"]);
}
