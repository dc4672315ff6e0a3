//! Tests of the replication rules: each refusal in PVE's words, and what PVE lets through.

use super::*;
use serde_json::json;

fn job(id: &str, guest: u64, target: &str) -> Job {
    Job::from_json(&json!({"id": id, "guest": guest, "type": "local", "target": target})).unwrap()
}

fn storages() -> Vec<StorageConfig> {
    [
        json!({"storage": "local-zfs", "type": "zfspool", "content": "images,rootdir", "pool": "rpool/data"}),
        json!({"storage": "local-lvm", "type": "lvmthin", "content": "images,rootdir", "vgname": "pve"}),
        json!({"storage": "local", "type": "dir", "content": "images,iso", "path": "/var/lib/vz"}),
        json!({"storage": "ceph", "type": "rbd", "content": "images", "shared": 1}),
    ]
    .iter()
    .map(|v| StorageConfig::from_json(v).unwrap())
    .collect()
}

#[test]
fn a_job_is_read_from_the_api_with_its_guest_as_integer_or_text() {
    assert_eq!(job("100-0", 100, "pve2").guest, 100);
    let j = Job::from_json(&json!({"id": "101-1", "guest": "101", "type": "local", "target": "pve3"})).unwrap();
    assert_eq!((j.guest, j.target.as_str()), (101, "pve3"));
    assert!(Job::from_json(&json!({"id": "x"})).is_none());
}

#[test]
fn a_destroy_without_purge_names_the_job_and_purge_passes() {
    let jobs = [job("100-0", 100, "pve2")];
    assert_eq!(
        destroy(&jobs, 100, false).as_deref(),
        Some("There is a replication job '100-0' for guest '100' - Please remove that first.")
    );
    assert_eq!(destroy(&jobs, 100, true), None);
    assert_eq!(destroy(&[], 100, false), None);
}

#[test]
fn a_live_migration_goes_only_to_a_replication_target_unless_forced() {
    let jobs = [job("100-0", 100, "pve2")];
    assert_eq!(migrate(&jobs, 100, "pve2", false), None);
    assert_eq!(
        migrate(&jobs, 100, "pve3", false).as_deref(),
        Some("Cannot live-migrate replicated VM to node 'pve3' - not a replication target. Use 'force' to override.")
    );
    assert_eq!(migrate(&jobs, 100, "pve3", true), None);
    assert_eq!(migrate(&[], 100, "pve3", false), None);
}

#[test]
fn only_a_zfs_pool_replicates_raw_and_subvol() {
    assert!(can_replicate("zfspool", "raw"));
    assert!(can_replicate("zfspool", "subvol"));
    assert!(!can_replicate("zfspool", "qcow2"));
    assert!(!can_replicate("lvmthin", "raw"));
    assert!(!can_replicate("dir", "raw"));
}

#[test]
fn a_drive_on_a_replicated_vm_must_replicate_or_be_shared() {
    let s = storages();
    let refused = Some("cannot add non-replicatable volume to a replicated VM");
    assert_eq!(config_drive(true, "local-lvm:8", &s), refused);
    assert_eq!(config_drive(true, "local:8,format=qcow2", &s), refused);
    assert_eq!(config_drive(true, "local-lvm:vm-100-disk-1,size=8G", &s), refused);
    assert_eq!(config_drive(true, "local-zfs:8", &s), None);
    assert_eq!(config_drive(true, "local-zfs:vm-100-disk-1,size=8G", &s), None);
    assert_eq!(config_drive(true, "ceph:8", &s), None);
    assert_eq!(config_drive(true, "local-lvm:8,replicate=0", &s), None);
    assert_eq!(config_drive(true, "local:iso/a.iso,media=cdrom", &s), None);
    assert_eq!(config_drive(true, "local-lvm:cloudinit", &s), None);
    assert_eq!(
        config_drive(true, "/dev/sdb", &s),
        Some("cannot add non-managed/pass-through volume to a replicated VM")
    );
    assert_eq!(config_drive(false, "local-lvm:8", &s), None);
}

#[test]
fn a_disk_reassigned_to_a_replicated_vm_must_be_on_a_zfs_pool() {
    let s = storages();
    assert_eq!(
        reassign("local-lvm:vm-101-disk-0", &s),
        Some("Cannot move disk to a replicated VM. Storage does not support replication!")
    );
    assert_eq!(
        reassign("ceph:vm-101-disk-0", &s),
        Some("Cannot move disk to a replicated VM. Storage does not support replication!")
    );
    assert_eq!(reassign("local-zfs:vm-101-disk-0", &s), None);
    assert_eq!(reassign("/dev/sdb", &s), None);
}
