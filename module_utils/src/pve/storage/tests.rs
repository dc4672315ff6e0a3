//! Tests of the storage-type rules: formats, names, space, growth, EFI and TPM sizes.

use super::*;

const GIB: u64 = 1 << 30;
use serde_json::json;

fn scfg(v: serde_json::Value) -> StorageConfig {
    StorageConfig::from_json(&v).unwrap()
}

#[test]
fn format_of_a_new_or_moved_volume() {
    let nfs = scfg(json!({"storage": "truenas", "type": "nfs", "format": "qcow2"}));
    assert_eq!(nfs.new_volume_format(None, None), "qcow2");
    assert_eq!(nfs.new_volume_format(Some("raw"), None), "raw");
    // a move keeps a raw source raw where the target takes it
    assert_eq!(nfs.new_volume_format(None, Some("raw")), "raw");
    let dir = scfg(json!({"storage": "local", "type": "dir"}));
    assert_eq!(dir.new_volume_format(None, None), "raw");
    let rbd = scfg(json!({"storage": "ceph", "type": "rbd"}));
    assert_eq!(rbd.new_volume_format(None, Some("qcow2")), "raw");
    assert_eq!(nfs.volume_name(210, 1, "qcow2"), "truenas:210/vm-210-disk-1.qcow2");
    assert_eq!(rbd.volume_name(210, 2, "raw"), "ceph:vm-210-disk-2");
}

#[test]
fn formats_a_new_disk_may_have_on_each_storage_type() {
    // LVMPlugin.pm get_formats / alloc_lvm_image, LvmThinPlugin.pm and ZFSPoolPlugin.pm
    // alloc_image; RBDPlugin.pm alloc_image ignores the format; Plugin.pm makes any file (§42.1)
    let lvm = scfg(json!({"storage": "san-lvm", "type": "lvm", "vgname": "san"}));
    let chain = scfg(json!({"storage": "c", "type": "lvm", "vgname": "c", "snapshot-as-volume-chain": 1}));
    let thin = scfg(json!({"storage": "local-lvm", "type": "lvmthin"}));
    let zfs = scfg(json!({"storage": "z", "type": "zfspool"}));
    let rbd = scfg(json!({"storage": "ceph", "type": "rbd"}));
    let dir = scfg(json!({"storage": "local", "type": "dir"}));
    let chain_words = "snapshot-as-volume-chain option need to be enabled to use qcow2 format";
    assert_eq!(lvm.refuses_format("qcow2").as_deref(), Some(chain_words));
    assert_eq!(lvm.refuses_format("raw"), None);
    assert_eq!(lvm.refuses_format("vmdk").as_deref(), Some("unsupported format 'vmdk'"));
    assert_eq!(chain.refuses_format("qcow2"), None);
    assert_eq!(thin.refuses_format("qcow2").as_deref(), Some("unsupported format 'qcow2'"));
    assert_eq!(zfs.refuses_format("qcow2").as_deref(), Some("unsupported format 'qcow2'"));
    assert_eq!(zfs.refuses_format("subvol"), None);
    // ZFS over iSCSI: raw LUNs only (ZFSPlugin.pm alloc_image)
    let zsan = scfg(json!({"storage": "zsan", "type": "zfs"}));
    assert_eq!(zsan.refuses_format("qcow2").as_deref(), Some("unsupported format 'qcow2'"));
    assert_eq!(zsan.refuses_format("raw"), None);
    assert_eq!((rbd.refuses_format("qcow2"), dir.refuses_format("vmdk")), (None, None));
    // a volume chain: qcow2 by default, named with its extension, numbered among the qcow2 LVs
    assert_eq!(chain.formats().1, "qcow2");
    assert_eq!(chain.new_volume_format(None, None), "qcow2");
    assert_eq!(chain.new_volume_format(Some("raw"), None), "raw");
    assert_eq!(chain.volume_name(300, 1, "qcow2"), "c:vm-300-disk-1.qcow2");
    assert_eq!(chain.volume_name(300, 1, "raw"), "c:vm-300-disk-1");
    assert!(chain.numbers_by_format("qcow2") && !chain.numbers_by_format("raw"));
    assert_eq!(cloudinit_volume_name("lvm", 300, "qcow2"), "vm-300-cloudinit.qcow2");
    assert_eq!((chain.new_cloudinit_format(None), lvm.new_cloudinit_format(None)), ("qcow2".into(), "raw".into()));
    assert_eq!(
        (dir.new_cloudinit_format(None), thin.new_cloudinit_format(Some("qcow2"))),
        ("qcow2".into(), "qcow2".into())
    );
    assert_eq!(lvm.new_volume_format(None, None), "raw");
}

#[test]
fn growing_a_volume_on_thick_lvm_or_a_zvol_needs_the_space() {
    // LVMPlugin.pm volume_resize (lvextend), ZFSPoolPlugin.pm volume_resize (zfs set volsize)
    let lvm = scfg(json!({"storage": "san-lvm", "type": "lvm", "vgname": "san"}));
    assert_eq!(
        lvm.refuses_growth("vm-121-disk-0", 10 * GIB, 4 * GIB).as_deref(),
        Some("error resizing volume '/dev/san/vm-121-disk-0':   Insufficient free space: 2560 extents needed, but only 1024 available")
    );
    assert_eq!(lvm.refuses_growth("vm-121-disk-0", 4 * GIB, 4 * GIB), None);
    let zfs = scfg(json!({"storage": "z", "type": "zfspool", "pool": "tank"}));
    assert_eq!(
        zfs.refuses_growth("vm-1-disk-0", 2 * GIB, GIB).as_deref(),
        Some("zfs error: cannot set property for 'tank/vm-1-disk-0': size is greater than available space")
    );
    let sparse = scfg(json!({"storage": "z", "type": "zfspool", "pool": "tank", "sparse": 1}));
    let thin = scfg(json!({"storage": "t", "type": "lvmthin"}));
    assert_eq!((sparse.refuses_growth("v", 2 * GIB, 0), thin.refuses_growth("v", 2 * GIB, 0)), (None, None));
}

#[test]
fn thick_lvm_and_zvols_refuse_what_does_not_fit() {
    let lvm = scfg(json!({"storage": "san-lvm", "type": "lvm", "vgname": "san"}));
    let avail = 34560 * LVM_EXTENT;
    assert_eq!(
        lvm.refuses_allocation("vm-121-disk-1", 150 * GIB, avail).as_deref(),
        Some("lvcreate 'san/vm-121-disk-1' error:   Volume group \"san\" has insufficient free space (34560 extents): 38400 required.")
    );
    assert_eq!(lvm.refuses_allocation("vm-121-disk-1", 100 * GIB, avail), None);
    let zfs = scfg(json!({"storage": "z", "type": "zfspool", "pool": "tank"}));
    assert!(zfs.refuses_allocation("vm-1-disk-0", 2 * GIB, GIB).is_some());
    let sparse = scfg(json!({"storage": "z", "type": "zfspool", "pool": "tank", "sparse": 1}));
    assert_eq!(sparse.refuses_allocation("vm-1-disk-0", 2 * GIB, GIB), None);
    let thin = scfg(json!({"storage": "t", "type": "lvmthin"}));
    assert_eq!(thin.refuses_allocation("vm-1-disk-0", 2 * GIB, 0), None);
    // Plugin.pm alloc_image → qemu_img_create with preallocation_cmd_opt: falloc and full files
    // take their size at once; sparse ones (the default) never fail for space
    let falloc = scfg(json!({"storage": "f", "type": "nfs", "path": "/mnt/pve/f", "preallocation": "falloc"}));
    assert!(falloc.reserves_space());
    assert_eq!(
        falloc.refuses_allocation("102/vm-102-disk-0.raw", 9 * GIB, 8 * GIB).as_deref(),
        Some("unable to create image: qemu-img: /mnt/pve/f/images/102/vm-102-disk-0.raw: Could not preallocate new data: No space left on device")
    );
    assert_eq!(falloc.refuses_allocation("102/vm-102-disk-0.raw", 8 * GIB, 8 * GIB), None);
    assert_eq!(falloc.refuses_allocation("102/vm-102-disk-0.vmdk", 9 * GIB, 8 * GIB), None);
    let full = scfg(json!({"storage": "d", "type": "dir", "path": "/d", "preallocation": "full"}));
    assert!(full.refuses_allocation("1/vm-1-disk-0.qcow2", 2 * GIB, GIB).unwrap().ends_with(
        "/d/images/1/vm-1-disk-0.qcow2: Could not resize image: Failed to resize underlying file: Could not write \
         zeros for preallocation: No space left on device"
    ));
    assert!(full
        .refuses_allocation("1/vm-1-disk-0.raw", 2 * GIB, GIB)
        .unwrap()
        .ends_with("/d/images/1/vm-1-disk-0.raw: Could not write zeros for preallocation: No space left on device"));
    assert!(falloc.refuses_allocation("102/vm-102-disk-0.qcow2", 9 * GIB, 8 * GIB).unwrap().ends_with(
        "vm-102-disk-0.qcow2: Could not resize image: Failed to resize underlying file: Could not preallocate new \
         data: No space left on device"
    ));
    // BTRFSPlugin.pm alloc_image: truncate, never preallocated
    let btrfs = scfg(json!({"storage": "b", "type": "btrfs", "path": "/b", "preallocation": "falloc"}));
    assert!(!btrfs.reserves_space());
    assert_eq!(btrfs.refuses_allocation("1/vm-1-disk-0.raw", 2 * GIB, GIB), None);
    let sparse_files = scfg(json!({"storage": "s", "type": "dir", "path": "/s", "preallocation": "metadata"}));
    assert!(!sparse_files.reserves_space());
    assert_eq!(sparse_files.refuses_allocation("1/vm-1-disk-0.raw", 2 * GIB, 0), None);
    // freeing hands back what allocating took, except an LV that saferemove leaves to a
    // zeroing worker (LVMPlugin.pm free_lvm_volumes_locked)
    assert_eq!(lvm.freed_by("vm-1-disk-0", GIB + 1), GIB + 4 * MIB);
    assert_eq!(thin.freed_by("vm-1-disk-0", GIB), 0);
    let safe = scfg(json!({"storage": "s", "type": "lvm", "vgname": "s", "saferemove": 1}));
    assert_eq!(safe.freed_by("vm-1-disk-0", GIB), 0);
    assert_eq!(safe.reserved_by("vm-1-disk-0", GIB), GIB);
}

#[test]
fn efi_and_tpm_sizes() {
    assert_eq!(fixed_volume_size("efidisk", "lvm", Some("4m")), Some(4 * MIB));
    assert_eq!(fixed_volume_size("efidisk", "lvmthin", None), Some(4 * MIB));
    assert_eq!(fixed_volume_size("efidisk", "nfs", Some("4m")), Some(528 * 1024));
    assert_eq!(fixed_volume_size("efidisk", "dir", None), Some(128 * 1024));
    // RBDPlugin.pm alloc_image and ZFSPoolPlugin.pm zfs_create_zvol: whole MiB
    assert_eq!(fixed_volume_size("efidisk", "rbd", None), Some(MIB));
    assert_eq!(fixed_volume_size("efidisk", "zfspool", Some("4m")), Some(MIB));
    assert_eq!(fixed_volume_size("tpmstate", "dir", None), Some(4 * MIB));
    assert_eq!(fixed_volume_size("tpmstate", "rbd", None), Some(4 * MIB));
    assert_eq!(allocated_size("lvm", 4 * MIB + 1), 8 * MIB);
    assert_eq!(allocated_size("nfs", 528 * 1024), 528 * 1024);
    assert_eq!(fixed_volume_size("scsi", "dir", None), None);
}

#[test]
fn names_each_storage_type_gives_new_disks_clones_and_cloud_init() {
    // (plugintype, base volume, new name of disk 1 of VM 300 in qcow2, linked clone of the base as disk 1)
    let rows: &[(&str, &str, &str, Option<&str>)] = &[
        // Plugin.pm alloc_image / clone_image (a qcow2 overlay whatever the base's format)
        (
            "dir",
            "local:9000/base-9000-disk-0.raw",
            "300/vm-300-disk-1.qcow2",
            Some("9000/base-9000-disk-0.raw/300/vm-300-disk-1.qcow2"),
        ),
        (
            "nfs",
            "truenas:9000/base-9000-disk-0.qcow2",
            "300/vm-300-disk-1.qcow2",
            Some("9000/base-9000-disk-0.qcow2/300/vm-300-disk-1.qcow2"),
        ),
        // RBDPlugin.pm / ZFSPoolPlugin.pm clone_image: `<base>/<name>`
        ("rbd", "ceph:base-9000-disk-1", "vm-300-disk-1", Some("base-9000-disk-1/vm-300-disk-1")),
        ("zfspool", "local-zfs:base-500-disk-0", "vm-300-disk-1", Some("base-500-disk-0/vm-300-disk-1")),
        // LvmThinPlugin.pm clone_image: a thin snapshot under the clone's own name
        ("lvmthin", "local-lvm:base-9000-disk-0", "vm-300-disk-1", Some("vm-300-disk-1")),
        // LVMPlugin.pm volume_has_feature: no 'clone' on thick LVM, even of a template's disk;
        // a qcow2 LV (volume chains) carries its extension (find_free_diskname)
        ("lvm", "san-lvm:vm-600-disk-0", "vm-300-disk-1.qcow2", None),
        ("lvm", "san-lvm:base-600-disk-0", "vm-300-disk-1.qcow2", None),
        // 'clone' is offered on a base volume only
        ("lvmthin", "local-lvm:vm-100-disk-0", "vm-300-disk-1", None),
        ("dir", "local:100/vm-100-disk-0.qcow2", "300/vm-300-disk-1.qcow2", None),
    ];
    for (plugintype, base, new, linked) in rows {
        let base = Volume::parse(base).unwrap();
        assert_eq!(new_volume_name(plugintype, 300, 1, "qcow2"), *new, "{plugintype}");
        assert_eq!(linked_clone_name(plugintype, &base, 300, 1).as_deref(), *linked, "{plugintype} {base:?}");
    }
    // PBSPlugin.pm offers no feature at all; a type without a known table is left to PVE
    assert_eq!(has_linked_clone_feature("pbs", &Volume::parse("backup:base-1-disk-0").unwrap()), Some(false));
    assert_eq!(has_linked_clone_feature("custom", &Volume::parse("backup:base-1-disk-0").unwrap()), None);
    assert_eq!(cloudinit_volume_name("nfs", 303, "qcow2"), "303/vm-303-cloudinit.qcow2");
    assert_eq!(cloudinit_volume_name("nfs", 303, "raw"), "303/vm-303-cloudinit.raw");
    assert_eq!(cloudinit_volume_name("zfspool", 302, "raw"), "vm-302-cloudinit");
}

#[test]
fn template_feature_follows_each_plugins_table() {
    // volume_has_feature 'template' (QemuServer.pm template_create skips a disk without it):
    // 'current' volumes on Plugin.pm (any file format), LvmThinPlugin.pm, RBDPlugin.pm, ZFSPoolPlugin.pm;
    // LVMPlugin.pm leaves it commented out; a base volume is never 'current'
    let rows: &[(&str, &str, Option<bool>)] = &[
        ("dir", "vmdata:150/vm-150-disk-1.qcow2", Some(true)),
        ("nfs", "nas:150/vm-150-disk-1.raw", Some(true)),
        ("lvmthin", "local-lvm:vm-150-disk-0", Some(true)),
        ("rbd", "ceph:vm-150-disk-0", Some(true)),
        ("zfspool", "local-zfs:vm-150-disk-0", Some(true)),
        ("lvm", "san-lvm:vm-121-disk-0", Some(false)),
        ("lvm", "san-lvm:vm-121-disk-0.qcow2", Some(false)),
        ("iscsi", "san:0.0.1.scsi-36001405", Some(false)),
        ("lvmthin", "local-lvm:base-150-disk-0", Some(false)),
        ("pbs", "backup:vm-150-disk-0", Some(false)),
        ("custom", "backup:vm-150-disk-0", None),
    ];
    for (plugintype, volid, has) in rows {
        let volume = Volume::parse(volid).unwrap();
        assert_eq!(has_template_feature(plugintype, &volume), *has, "{plugintype} {volid}");
    }
}
