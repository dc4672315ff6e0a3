//! Tests of the migration task's refusals: each in PVE's words (QemuMigrate.pm `prepare`, `scan_local_volumes`), and what PVE lets through.

use super::*;
use serde_json::json;

fn cfg(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn storages() -> Vec<StorageConfig> {
    [
        json!({"storage": "local-zfs", "type": "zfspool", "content": "images", "pool": "rpool/data"}),
        json!({"storage": "local-lvm", "type": "lvmthin", "content": "images", "vgname": "pve"}),
        json!({"storage": "local", "type": "dir", "content": "images,iso", "path": "/var/lib/vz"}),
        json!({"storage": "chain", "type": "lvm", "content": "images", "vgname": "vg", "snapshot-as-volume-chain": 1}),
        json!({"storage": "ceph", "type": "rbd", "content": "images", "shared": 1}),
    ]
    .iter()
    .filter_map(StorageConfig::from_json)
    .collect()
}

#[test]
fn a_job_marked_for_removal_stops_a_migration_to_its_target() {
    let job = |target: &str, remove: Option<&str>| {
        let mut v = json!({"id": "700-0", "guest": 700, "type": "local", "target": target});
        if let Some(r) = remove {
            v["remove_job"] = json!(r);
        }
        Job::from_json(&v).unwrap()
    };
    let words = Some("refusing to migrate replicated VM whose replication job is marked for removal");
    assert_eq!(job_marked_for_removal(&[job("pve2", Some("local"))], 700, "pve2"), words);
    assert_eq!(job_marked_for_removal(&[job("pve2", Some("full"))], 700, "pve2"), words);
    assert_eq!(job_marked_for_removal(&[job("pve2", Some("local"))], 700, "pve3"), None);
    assert_eq!(job_marked_for_removal(&[job("pve2", None)], 700, "pve2"), None);
}

#[test]
fn local_devices_are_listed_but_mapped_devices_spice_and_sockets_are_not() {
    let config = cfg(&[
        ("usb0", "host=1234:5678"),
        ("usb1", "spice"),
        ("usb2", "mapping=stick"),
        ("hostpci0", "0000:01:00.0"),
        ("hostpci1", "mapping=gpu"),
        ("serial0", "socket"),
        ("serial1", "/dev/ttyS0"),
        ("parallel0", "/dev/parport0"),
        ("virtiofs0", "dirid=share"),
    ]);
    assert_eq!(
        local_devices(&config, false).as_deref(),
        Some("can't migrate VM which uses local devices: hostpci0, parallel0, serial1, usb0")
    );
    assert_eq!(
        local_devices(&config, true).as_deref(),
        Some("can't migrate VM which uses local devices: virtiofs, hostpci0, parallel0, serial1, usb0")
    );
    let fine = cfg(&[("usb1", "host=spice,usb3=1"), ("serial0", "socket"), ("hostpci0", "mapping=gpu")]);
    assert_eq!(local_devices(&fine, true), None);
}

#[test]
fn snapshots_of_local_volumes_go_along_only_where_the_storage_carries_them() {
    let snap =
        |volid: &str| vec![cfg(&[("scsi0", &format!("{volid},size=4G")), ("vmstate", "local-lvm:vm-700-state-s1")])];
    let refuse = |volid: &str, words: &str| Some(format!("can't migrate local disk '{volid}': {words}"));
    let non = "non-migratable snapshot exists";
    let online = "online storage migration not possible if non-replicated snapshot exists";
    let s = storages();
    // stopped: lvm-thin and a volume chain cannot carry snapshots; zfs and qcow2 on a directory can
    assert_eq!(
        snapshot_volumes(700, &snap("local-lvm:vm-700-disk-0"), &s, false, false),
        refuse("local-lvm:vm-700-disk-0", non)
    );
    assert_eq!(
        snapshot_volumes(700, &snap("chain:vm-700-disk-0.qcow2"), &s, false, false),
        refuse("chain:vm-700-disk-0.qcow2", non)
    );
    assert_eq!(snapshot_volumes(700, &snap("local-zfs:vm-700-disk-0"), &s, false, false), None);
    assert_eq!(snapshot_volumes(700, &snap("local:700/vm-700-disk-0.qcow2"), &s, false, false), None);
    // running: only a replicated volume goes along
    assert_eq!(
        snapshot_volumes(700, &snap("local:700/vm-700-disk-0.qcow2"), &s, true, false),
        refuse("local:700/vm-700-disk-0.qcow2", online)
    );
    assert_eq!(
        snapshot_volumes(700, &snap("local-zfs:vm-700-disk-0"), &s, true, false),
        refuse("local-zfs:vm-700-disk-0", online)
    );
    assert_eq!(snapshot_volumes(700, &snap("local-zfs:vm-700-disk-0"), &s, true, true), None);
    // shared storage, another VM's volume: not the migration's to copy
    assert_eq!(snapshot_volumes(700, &snap("ceph:vm-700-disk-0"), &s, true, false), None);
    assert_eq!(snapshot_volumes(700, &snap("local-lvm:vm-701-disk-0"), &s, false, false), None);
    assert_eq!(snapshot_volumes(700, &[], &s, true, false), None);
}

#[test]
fn two_storages_on_one_path_alias_a_volume() {
    let mut all = storages();
    let alias = json!({"storage": "alias", "type": "dir", "content": "images", "path": "/var/lib/vz"});
    all.extend(StorageConfig::from_json(&alias));
    let lvm = json!({"storage": "thin2", "type": "lvmthin", "content": "images", "vgname": "pve"});
    all.extend(StorageConfig::from_json(&lvm));
    let current = cfg(&[("scsi0", "local:700/vm-700-disk-0.qcow2,size=1G"), ("scsi1", "local-lvm:vm-700-disk-1")]);
    assert_eq!(aliased_volumes(700, &[&current], &all), None);
    let snapshot = cfg(&[("scsi2", "alias:700/vm-700-disk-0.qcow2,size=1G")]);
    assert_eq!(
        aliased_volumes(700, &[&current, &snapshot], &all).as_deref(),
        Some(
            "detected not supported aliased volumes: 'alias:700/vm-700-disk-0.qcow2', 'local:700/vm-700-disk-0.qcow2'"
        )
    );
    let pending = cfg(&[("unused0", "thin2:vm-700-disk-1")]);
    assert!(aliased_volumes(700, &[&current, &pending], &all).is_some(), "one volume group under two names");
    // another VM's volume, or a CD-ROM, is refused before; a shared storage is not scanned
    let other = cfg(&[("scsi2", "alias:701/vm-701-disk-0.qcow2")]);
    assert_eq!(aliased_volumes(700, &[&current, &other], &all), None);
}

#[test]
fn the_scan_takes_drives_unused_volumes_and_vmstate_on_local_storage_sorted() {
    let snapshot = cfg(&[
        ("scsi1", "local:700/vm-700-disk-1.qcow2,size=1G"),
        ("unused0", "local-lvm:vm-700-disk-2"),
        ("vmstate", "local:700/vm-700-state-s1.raw"),
        ("scsi2", "ceph:vm-700-disk-3,size=1G"),
        ("ide2", "none,media=cdrom"),
        ("scsi3", "/dev/sdb"),
        ("name", "web"),
    ]);
    let current = cfg(&[("scsi1", "local:700/vm-700-disk-1.qcow2,size=1G")]);
    assert_eq!(
        scanned_volumes(&[&current, &snapshot], &storages()),
        ["local-lvm:vm-700-disk-2", "local:700/vm-700-disk-1.qcow2", "local:700/vm-700-state-s1.raw"]
    );
    assert!(scanned_volumes(&[&cfg(&[("scsi2", "ceph:vm-700-disk-3,size=1G")])], &storages()).is_empty());
}
