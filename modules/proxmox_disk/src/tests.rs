//! Golden tests of proxmox_disk's plan: (VM config, power state, task) → write and predicted
//! config, without a network.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use module_utils::pve::storage::StorageConfig;
use serde_json::{json, Map, Value};

use super::*;

fn storages() -> Vec<StorageConfig> {
    [("local-lvm", "lvmthin"), ("nvme-pool", "lvmthin"), ("vmdata", "dir"), ("isos", "dir")]
        .iter()
        .filter_map(|(s, t)| StorageConfig::from_json(&json!({"storage": s, "type": t, "content": "images"})))
        .collect()
}

fn params(args: Value) -> Params {
    let mut map: Map<String, Value> = serde_json::from_value(args).unwrap();
    for (k, v) in [("api_host", "h"), ("api_user", "u@pve"), ("api_token_id", "t"), ("api_token_secret", "s")] {
        map.insert(k.into(), json!(v));
    }
    if !map.contains_key("name") {
        map.entry("vmid").or_insert(json!(100));
    }
    let p = module_utils::ansible::validate::validate(&SPEC, &map, &|_| None).unwrap();
    Params::from_spec(&p).unwrap()
}

/// No storage listing: the plan tests predict from the config alone.
static NO_VOLUMES: BTreeMap<String, Option<u64>> = BTreeMap::new();

const SCSI0: &str = "local-lvm:vm-100-disk-0,discard=on,size=32G";
const SCSI1: &str = "local-lvm:vm-100-disk-1,discard=on,size=10G";

struct Case {
    name: &'static str,
    config: VmConfig,
    running: bool,
    args: Value,
    action: Action,
    /// The drive after the plan (None: gone).
    drive: Option<&'static str>,
    unused: Option<(&'static str, &'static str)>,
    pending: bool,
    msg: &'static str,
}

fn base() -> VmConfig {
    VmConfig::from_pairs(&[("scsi0", SCSI0)])
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "create a 200 GiB disk (bare number = GiB)",
            config: base(),
            running: false,
            args: json!({"disk": "scsi1", "storage": "local-lvm", "size": "200"}),
            action: Action::SetDrive("local-lvm:200".into()),
            drive: Some("local-lvm:vm-100-disk-1,size=200G"),
            unused: None,
            pending: false,
            msg: "Disk scsi1 created in VM 100",
        },
        Case {
            name: "create 10G with options on a running VM (scsi + disk hotplug: applied)",
            config: base(),
            running: true,
            args: json!({"disk": "scsi1", "storage": "local-lvm", "size": "10G", "discard": "on", "iothread": true}),
            action: Action::SetDrive("local-lvm:10,discard=on,iothread=1".into()),
            drive: Some("local-lvm:vm-100-disk-1,discard=on,iothread=1,size=10G"),
            unused: None,
            pending: false,
            msg: "Disk scsi1 created in VM 100",
        },
        Case {
            name: "rerun: the disk exists with those options",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: false,
            args: json!({"disk": "scsi1", "storage": "local-lvm", "size": "10", "discard": "on"}),
            action: Action::None,
            drive: Some(SCSI1),
            unused: None,
            pending: false,
            msg: "Disk scsi1 is up to date in VM 100",
        },
        Case {
            name: "change cache and iothread: volume and other options kept",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: false,
            args: json!({"disk": "scsi1", "cache": "writeback", "iothread": true}),
            action: Action::SetDrive("local-lvm:vm-100-disk-1,cache=writeback,discard=on,iothread=1,size=10G".into()),
            drive: Some("local-lvm:vm-100-disk-1,cache=writeback,discard=on,iothread=1,size=10G"),
            unused: None,
            pending: false,
            msg: "Disk scsi1 updated in VM 100",
        },
        Case {
            name: "a cache change on a running VM waits for the next start",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: true,
            args: json!({"disk": "scsi1", "cache": "writeback"}),
            action: Action::SetDrive("local-lvm:vm-100-disk-1,cache=writeback,discard=on,size=10G".into()),
            drive: Some("local-lvm:vm-100-disk-1,cache=writeback,discard=on,size=10G"),
            unused: None,
            pending: true,
            msg: "Disk scsi1 updated in VM 100",
        },
        Case {
            name: "a throttle change on a running VM applies live",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: true,
            args: json!({"disk": "scsi1", "mbps": 100}),
            action: Action::SetDrive("local-lvm:vm-100-disk-1,discard=on,mbps=100,size=10G".into()),
            drive: Some("local-lvm:vm-100-disk-1,discard=on,mbps=100,size=10G"),
            unused: None,
            pending: false,
            msg: "Disk scsi1 updated in VM 100",
        },
        Case {
            name: "create: disabled on a missing disk does nothing",
            config: base(),
            running: false,
            args: json!({"disk": "scsi1", "create": "disabled", "cache": "none"}),
            action: Action::None,
            drive: None,
            unused: None,
            pending: false,
            msg: "Disk scsi1 not found in VM 100 and creation was disabled in parameters.",
        },
        Case {
            name: "create: forced replaces the disk and keeps the old volume as unused0",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: false,
            args: json!({"disk": "scsi1", "create": "forced", "storage": "local-lvm", "size": "20G"}),
            action: Action::SetDrive("local-lvm:20".into()),
            drive: Some("local-lvm:vm-100-disk-2,size=20G"),
            unused: Some(("unused0", "local-lvm:vm-100-disk-1")),
            pending: false,
            msg: "Disk scsi1 created in VM 100",
        },
        Case {
            name: "resize to a bigger absolute size",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: true,
            args: json!({"disk": "scsi1", "state": "resized", "size": "20G"}),
            action: Action::Resize("20G".into()),
            drive: Some("local-lvm:vm-100-disk-1,discard=on,size=20G"),
            unused: None,
            pending: false,
            msg: "Disk scsi1 resized in VM 100",
        },
        Case {
            name: "resize to the current size is unchanged (bare 10 = 10G)",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: false,
            args: json!({"disk": "scsi1", "state": "resized", "size": "10"}),
            action: Action::None,
            drive: Some(SCSI1),
            unused: None,
            pending: false,
            msg: "Disk scsi1 is already 10G size",
        },
        Case {
            name: "resize +1G always grows",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: false,
            args: json!({"disk": "scsi1", "state": "resized", "size": "+1G"}),
            action: Action::Resize("+1G".into()),
            drive: Some("local-lvm:vm-100-disk-1,discard=on,size=11G"),
            unused: None,
            pending: false,
            msg: "Disk scsi1 resized in VM 100",
        },
        Case {
            name: "resize +0G grows nothing (issue 15)",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: true,
            args: json!({"disk": "scsi1", "state": "resized", "size": "+0G"}),
            action: Action::None,
            drive: Some(SCSI1),
            unused: None,
            pending: false,
            msg: "Disk scsi1 stays 10G size: size +0G grows nothing",
        },
        Case {
            name: "detach keeps the volume as unused0",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: false,
            args: json!({"disk": "scsi1", "state": "detached"}),
            action: Action::Unlink { force: false },
            drive: None,
            unused: Some(("unused0", "local-lvm:vm-100-disk-1")),
            pending: false,
            msg: "Disk scsi1 detached from VM 100",
        },
        Case {
            name: "detach of a sata disk on a running VM waits for the next start",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("sata1", SCSI1)]),
            running: true,
            args: json!({"disk": "sata1", "state": "detached"}),
            action: Action::Unlink { force: false },
            drive: None,
            unused: None,
            pending: true,
            msg: "Disk sata1 detached from VM 100",
        },
        Case {
            name: "move to nvme-pool keeps the source as unused0",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: false,
            args: json!({"disk": "scsi1", "state": "moved", "target_storage": "nvme-pool"}),
            action: Action::Move(vec![
                ("disk".into(), "scsi1".into()),
                ("storage".into(), "nvme-pool".into()),
                ("delete".into(), "0".into()),
            ]),
            drive: Some("nvme-pool:vm-100-disk-0,discard=on,size=10G"),
            unused: Some(("unused0", "local-lvm:vm-100-disk-1")),
            pending: false,
            msg: "Disk scsi1 moved from VM 100 storage local-lvm",
        },
        Case {
            name: "move with delete_moved leaves nothing unused",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: false,
            args: json!({"disk": "scsi1", "state": "moved", "target_storage": "nvme-pool", "delete_moved": true}),
            action: Action::Move(vec![
                ("disk".into(), "scsi1".into()),
                ("storage".into(), "nvme-pool".into()),
                ("delete".into(), "1".into()),
            ]),
            drive: Some("nvme-pool:vm-100-disk-0,discard=on,size=10G"),
            unused: None,
            pending: false,
            msg: "Disk scsi1 moved from VM 100 storage local-lvm",
        },
        Case {
            name: "move to the storage it is on is unchanged",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: false,
            args: json!({"disk": "scsi1", "state": "moved", "target_storage": "local-lvm"}),
            action: Action::None,
            drive: Some(SCSI1),
            unused: None,
            pending: false,
            msg: "Disk scsi1 already at local-lvm storage",
        },
        Case {
            name: "import from a volume",
            config: base(),
            running: false,
            args: json!({"disk": "scsi1", "storage": "local-lvm", "import_from": "vmdata:9000/base-9000-disk-0.qcow2"}),
            action: Action::SetDrive("local-lvm:0,import-from=vmdata:9000/base-9000-disk-0.qcow2".into()),
            // The imported size is the source's: known after apply.
            drive: Some("local-lvm:vm-100-disk-1,size=(known after apply)"),
            unused: None,
            pending: false,
            msg: "Disk scsi1 imported into VM 100",
        },
        Case {
            name: "a CD-ROM with an ISO",
            config: base(),
            running: false,
            args: json!({"disk": "ide2", "iso_image": "isos:iso/debian-13-netinst.iso", "media": "cdrom"}),
            action: Action::SetDrive("isos:iso/debian-13-netinst.iso,media=cdrom".into()),
            // PVE fills in the ISO's size from its storage, which only a check run lists
            drive: Some("isos:iso/debian-13-netinst.iso,media=cdrom,size=(known after apply)"),
            unused: None,
            pending: false,
            msg: "CD-ROM was created on ide2 bus in VM 100",
        },
        Case {
            name: "efidisk0 on lvmthin: size given is ignored, 4M allocated",
            config: base(),
            running: false,
            args: json!({"disk": "efidisk0", "storage": "local-lvm"}),
            action: Action::SetDrive("local-lvm:1".into()),
            drive: Some("local-lvm:vm-100-disk-1,size=4M"),
            unused: None,
            pending: false,
            msg: "Disk efidisk0 created in VM 100",
        },
        Case {
            name: "absent destroys the volume",
            config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
            running: false,
            args: json!({"disk": "scsi1", "state": "absent"}),
            action: Action::Unlink { force: true },
            drive: None,
            unused: None,
            pending: false,
            msg: "Disk scsi1 removed from VM 100",
        },
        Case {
            name: "absent again is unchanged",
            config: base(),
            running: false,
            args: json!({"disk": "scsi1", "state": "absent"}),
            action: Action::None,
            drive: None,
            unused: None,
            pending: false,
            msg: "Disk scsi1 is already absent in VM 100",
        },
        Case {
            name: "a new ide disk on a running VM is allocated but waits",
            config: base(),
            running: true,
            args: json!({"disk": "ide1", "storage": "local-lvm", "size": "1"}),
            action: Action::SetDrive("local-lvm:1".into()),
            drive: Some("local-lvm:vm-100-disk-1,size=1G"),
            unused: None,
            pending: true,
            msg: "Disk ide1 created in VM 100",
        },
    ]
}

fn facts<'a>(case: &'a Case, storages: &'a [StorageConfig]) -> Facts<'a> {
    Facts { vmid: 100, running: case.running, config: &case.config, storages, listed: &NO_VOLUMES, target: None }
}

#[test]
fn grow_warnings_name_the_unit_the_task_used() {
    let storages = storages();
    let case = Case {
        name: "+N",
        config: VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]),
        running: false,
        args: Value::Null,
        action: Action::None,
        drive: None,
        unused: None,
        pending: false,
        msg: "",
    };
    for (size, sent, named) in [("+1024M", "+1G", "+1024M"), ("+2", "+2G", "+2"), ("+0.5T", "+512G", "+0.5T")] {
        let p = params(json!({"disk": "scsi1", "state": "resized", "size": size}));
        let plan = plan(&p, &facts(&case, &storages)).unwrap();
        assert_eq!(plan.action, Action::Resize(sent.into()), "{size}");
        assert_eq!(
            plan.warnings,
            [format!("size {named} grows scsi1 every time the task runs; give an absolute size to make it idempotent")],
            "{size}"
        );
    }
}

#[test]
fn plan_golden_cases() {
    let storages = storages();
    for case in cases() {
        let p = params(case.args.clone());
        let plan = plan(&p, &facts(&case, &storages)).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(plan.action, case.action, "{}", case.name);
        assert_eq!(plan.after.get(&p.disk), case.drive, "{}", case.name);
        assert_eq!(plan.msg, case.msg, "{}", case.name);
        assert_eq!(plan.pending, case.pending, "{}", case.name);
        match case.unused {
            Some((key, volume)) => {
                assert_eq!(plan.unused.as_deref(), Some(key), "{}", case.name);
                assert_eq!(plan.after.get(key), Some(volume), "{}", case.name);
            }
            None => assert_eq!(plan.unused, None, "{}", case.name),
        }
    }
}

#[test]
fn shrink_is_refused_naming_both_sizes() {
    let storages = storages();
    let cfg = VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]);
    let w = Facts { vmid: 100, running: false, config: &cfg, storages: &storages, listed: &NO_VOLUMES, target: None };
    let e = plan(&params(json!({"disk": "scsi1", "state": "resized", "size": "5G"})), &w).unwrap_err();
    assert_eq!(e.to_string(), "shrinking disks is not supported: scsi1 of VM 100 is 10G, the task asks for 5G");
}

#[test]
fn resize_or_move_of_a_missing_disk_fails() {
    let storages = storages();
    let cfg = base();
    let w = Facts { vmid: 100, running: false, config: &cfg, storages: &storages, listed: &NO_VOLUMES, target: None };
    for args in [
        json!({"disk": "scsi1", "state": "resized", "size": "5G"}),
        json!({"disk": "scsi1", "state": "moved", "target_storage": "nvme-pool"}),
    ] {
        assert_eq!(plan(&params(args), &w).unwrap_err().to_string(), "Unable to process missing disk scsi1 in VM 100");
    }
}

#[test]
fn volume_on_a_file_storage_takes_the_task_format_else_the_storage_default() {
    // Storage.pm storage_default_format: the storage's `format` option, else the plugin's (raw).
    let mut storages = storages();
    let cfg = base();
    assert_eq!(
        predict_volume(&cfg, &storages, &NO_VOLUMES, "vmdata", 100, None, None).as_deref(),
        Some("vmdata:100/vm-100-disk-0.raw")
    );
    assert_eq!(
        predict_volume(&cfg, &storages, &NO_VOLUMES, "vmdata", 100, Some("qcow2"), None).as_deref(),
        Some("vmdata:100/vm-100-disk-0.qcow2")
    );
    storages.push(
        StorageConfig::from_json(&json!({"storage": "truenas", "type": "nfs", "format": "qcow2", "content": "images"}))
            .unwrap(),
    );
    // nfs numbers each format apart (§22.2): a raw disk-0 leaves qcow2 disk-0 free
    let listed: BTreeMap<String, Option<u64>> = [("truenas:100/vm-100-disk-0.raw".to_string(), None)].into();
    let w = Facts { vmid: 100, running: false, config: &cfg, storages: &storages, listed: &listed, target: None };
    let p = plan(&params(json!({"disk": "scsi1", "storage": "truenas", "size": "1"})), &w).unwrap();
    assert_eq!(p.after.get("scsi1"), Some("truenas:100/vm-100-disk-0.qcow2,size=1G"));
    let raw = plan(&params(json!({"disk": "scsi1", "storage": "truenas", "size": "1", "format": "raw"})), &w).unwrap();
    assert_eq!(raw.after.get("scsi1"), Some("truenas:100/vm-100-disk-1.raw,size=1G"));
    // a new disk's format goes to the storage as it is (create_disks, §42.1): a qed file name,
    // numbered among the qed ones, which the plugin then refuses
    let qed = plan(&params(json!({"disk": "scsi1", "storage": "truenas", "size": "1", "format": "qed"})), &w).unwrap();
    assert_eq!(qed.after.get("scsi1"), Some("truenas:100/vm-100-disk-0.qed,size=1G"));
    // an EFI vars volume on a file storage has its fixed size (§8.5)
    let efi = plan(&params(json!({"disk": "efidisk0", "storage": "vmdata"})), &w).unwrap();
    assert_eq!(efi.after.get("efidisk0"), Some("vmdata:100/vm-100-disk-0.raw,size=128K"));
}

#[test]
fn reassign_to_another_vm() {
    let storages = storages();
    let cfg = VmConfig::from_pairs(&[("scsi0", SCSI0), ("scsi1", SCSI1)]);
    let target = VmConfig::from_pairs(&[("scsi0", "local-lvm:vm-101-disk-0,size=8G")]);
    let w = Facts {
        vmid: 100,
        running: false,
        config: &cfg,
        storages: &storages,
        listed: &NO_VOLUMES,
        target: Some((101, &target)),
    };
    let p = params(json!({"disk": "scsi1", "state": "moved", "target_vmid": 101, "target_disk": "scsi3"}));
    let pl = plan(&p, &w).unwrap();
    assert_eq!(pl.after.get("scsi1"), None);
    assert_eq!(pl.target_after.as_ref().unwrap().get("scsi3"), Some("local-lvm:vm-101-disk-1,discard=on,size=10G"));
    assert_eq!(pl.msg, "Disk scsi1 moved from VM 100 storage local-lvm");
    // Done already: the source slot is empty and the target slot holds the disk.
    let done_src = base();
    let done_target = pl.target_after.clone().unwrap();
    let w = Facts {
        vmid: 100,
        running: false,
        config: &done_src,
        storages: &storages,
        listed: &NO_VOLUMES,
        target: Some((101, &done_target)),
    };
    let again = plan(&p, &w).unwrap();
    assert_eq!(again.action, Action::None);
    assert_eq!(again.msg, "Disk scsi1 already moved to VM 101 as scsi3");
}

#[test]
fn bad_values_are_refused_before_any_call() {
    let cases = [
        (json!({"vmid": 100, "disk": "scsi31"}), "Disk scsi31 number not in range 0..30"),
        (json!({"vmid": 100, "disk": "nvme0"}), "Unsupported disk bus: nvme"),
        (json!({"vmid": 100, "disk": "scsi"}), "disk must be a drive key such as scsi1, virtio0, sata2, ide2, unused0, efidisk0 or tpmstate0, got 'scsi'"),
        (json!({"vmid": 100, "disk": "scsi1", "size": "10X"}), "size: invalid size '10X': expected a number of GiB or a number with a K, M, G or T suffix"),
        (json!({"vmid": 100, "disk": "scsi1", "size": "+1G"}), "size '+1G': a relative size (+N) only makes sense with state: resized"),
        (json!({"vmid": 100, "disk": "scsi1", "format": "cow"}), "format cow is not an image format Proxmox VE knows: use raw, qcow, qed, qcow2, vmdk or cloop"),
        (json!({"vmid": 100, "disk": "scsi1", "wwn": "12"}), "wwn must be 0x followed by 16 hex digits, got '12'"),
        (json!({"vmid": 100, "disk": "unused0", "state": "resized", "size": "1"}), "unused0 holds a volume no drive uses: it can only be detached (already is) or absent (destroyed); attach the volume to a drive slot instead"),
        // Issue 15: no value can add, remove or change another key of the drive.
        (json!({"vmid": 100, "disk": "scsi1", "serial": "abc,cache=unsafe"}), "serial: a value must not contain ',' or a newline (it would start another key) (got 'abc,cache=unsafe')"),
        (json!({"vmid": 100, "disk": "scsi1", "serial": "a b"}), "serial: invalid urlencoded string: a b"),
        (json!({"vmid": 100, "disk": "scsi1", "serial": "x".repeat(61)}), "serial: value may only be 60 characters long (got 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')"),
        (json!({"vmid": 100, "disk": "scsi1", "storage": "local-lvm", "import_from": "local:import/a.qcow2,ro=1"}), "import_from: a value must not contain ',' (it would start another key)"),
        (json!({"vmid": 100, "disk": "scsi1", "import_from": "nothing"}), "import_from: unable to parse volume ID 'nothing'"),
        (json!({"vmid": 100, "disk": "scsi1", "storage": "local-lvm,cache=unsafe"}), "storage: storage ID 'local-lvm,cache=unsafe' contains illegal characters"),
        (json!({"vmid": 100, "disk": "scsi1", "state": "moved", "target_storage": "../x"}), "target_storage: storage ID '../x' contains illegal characters"),
        (json!({"vmid": 100, "disk": "ide2", "media": "cdrom", "iso_image": "local:iso/a.iso,media=disk"}), "iso_image: a value must not contain ',' (it would start another key)"),
    ];
    for (args, want) in cases {
        let mut map: Map<String, Value> = serde_json::from_value(args.clone()).unwrap();
        for (k, v) in [("api_host", "h"), ("api_user", "u@pve"), ("api_token_id", "t"), ("api_token_secret", "s")] {
            map.insert(k.into(), json!(v));
        }
        let p = module_utils::ansible::validate::validate(&SPEC, &map, &|_| None).unwrap();
        let got = Params::from_spec(&p).map(|_| ()).unwrap_err().to_string();
        assert_eq!(got, want, "args {args}");
    }
}

module_utils::stub_test!(SPEC);

/// scsi1 (SCSI1, applied) with a change waiting for the next start.
fn with_pending_scsi1(pending: &str) -> VmConfig {
    VmConfig::from_pending(&json!([{"key": "scsi1", "value": SCSI1, "pending": pending}])).unwrap()
}

/// SCSI1 with a cache change (not hot-pluggable: pending on a running VM).
const PENDING_CACHE: &str = "local-lvm:vm-100-disk-1,cache=writeback,discard=on,size=10G";

#[test]
fn moving_a_disk_with_a_pending_change_is_refused() {
    // move_vm_disk and resize_vm work on the main section and leave the pending value, which
    // still names the old volume, to be applied at the next start (Qemu.pm, 9.2.6).
    let storages = storages();
    let cfg = with_pending_scsi1(PENDING_CACHE);
    let w = Facts { vmid: 100, running: true, config: &cfg, storages: &storages, listed: &NO_VOLUMES, target: None };
    let args = json!({"disk": "scsi1", "state": "moved", "target_storage": "nvme-pool"});
    let e = plan(&params(args), &w).unwrap_err().to_string();
    assert!(e.starts_with("scsi1 of VM 100 has a change waiting for the next start"), "{e}");
    // Already where the task wants it: unchanged, pending or not.
    let p = plan(&params(json!({"disk": "scsi1", "state": "moved", "target_storage": "local-lvm"})), &w).unwrap();
    assert_eq!(p.action, Action::None);
}

#[test]
fn resizing_a_disk_with_a_pending_option_change_keeps_the_new_size_pending_too() {
    // Qemu.pm resize_vm rewrites the applied drive only; the pending value (same volume) would
    // bring the old size= back at the next start (QemuServer.pm vmconfig_apply_pending), so the
    // plan writes it again with the new size.
    let storages = storages();
    let cfg = with_pending_scsi1(PENDING_CACHE);
    let w = Facts { vmid: 100, running: true, config: &cfg, storages: &storages, listed: &NO_VOLUMES, target: None };
    let p = plan(&params(json!({"disk": "scsi1", "state": "resized", "size": "20G"})), &w).unwrap();
    assert_eq!(
        p.action,
        Action::ResizeKeepingPending {
            size: "20G".into(),
            pending: "local-lvm:vm-100-disk-1,cache=writeback,discard=on,size=20G".into()
        }
    );
    assert_eq!(p.after.current["scsi1"], "local-lvm:vm-100-disk-1,discard=on,size=20G");
    assert!(p.pending && p.after.is_pending("scsi1"));
    assert_eq!(p.msg, "Disk scsi1 resized in VM 100");
    // The same size again: unchanged.
    let p = plan(&params(json!({"disk": "scsi1", "state": "resized", "size": "10G"})), &w).unwrap();
    assert_eq!(p.action, Action::None);

    // A pending change that replaces the volume: the resized volume would leave the drive at the
    // next start, so that stays refused.
    let cfg = with_pending_scsi1("local-lvm:vm-100-disk-2,size=4G");
    let w = Facts { vmid: 100, running: true, config: &cfg, storages: &storages, listed: &NO_VOLUMES, target: None };
    let e = plan(&params(json!({"disk": "scsi1", "state": "resized", "size": "20G"})), &w).unwrap_err();
    assert!(e.to_string().starts_with("scsi1 of VM 100 has a change waiting for the next start"), "{e}");
}

#[test]
fn a_new_volume_takes_the_lowest_name_neither_the_storage_nor_the_config_holds() {
    // find_free_diskname over the storage's volumes: an orphan vm-100-disk-1 (in no config) is
    // skipped as the config's own volumes are; another VM's volumes and other storages are not.
    let storages = storages();
    let cfg = VmConfig::from_pairs(&[("scsi0", SCSI0), ("unused0", "local-lvm:vm-100-disk-2")]);
    let listed: BTreeMap<String, Option<u64>> =
        ["local-lvm:vm-100-disk-1", "local-lvm:vm-101-disk-3", "nvme-pool:vm-100-disk-3"]
            .map(|v| (v.to_string(), None))
            .into();
    assert_eq!(
        predict_volume(&cfg, &storages, &NO_VOLUMES, "local-lvm", 100, None, None).as_deref(),
        Some("local-lvm:vm-100-disk-1")
    );
    assert_eq!(
        predict_volume(&cfg, &storages, &listed, "local-lvm", 100, None, None).as_deref(),
        Some("local-lvm:vm-100-disk-3")
    );
    let w = Facts { vmid: 100, running: false, config: &cfg, storages: &storages, listed: &listed, target: None };
    let p = plan(&params(json!({"disk": "scsi1", "storage": "local-lvm", "size": "1"})), &w).unwrap();
    assert_eq!(p.after.get("scsi1"), Some("local-lvm:vm-100-disk-3,size=1G"));
    assert_eq!(p.allocates_on(), Some("local-lvm"));
}

#[test]
fn a_vm_predicted_created_in_this_run_allocates_its_own_disks_first() {
    // An earlier task of the check run creates the VM with efidisk0 and scsi0 on local-lvm (not
    // allocated yet, or marked known after apply): PVE allocates those first, so a data disk
    // added next gets vm-100-disk-2 (Qemu.pm create_disks, Plugin.pm find_free_diskname).
    let storages = storages();
    for cfg in [
        VmConfig::from_pairs(&[
            ("efidisk0", "local-lvm:1,efitype=4m"),
            ("scsi0", "local-lvm:4"),
            ("ide2", "local-lvm:cloudinit"),
        ]),
        VmConfig::from_pairs(&[
            ("efidisk0", "local-lvm:(known after apply),efitype=4m"),
            ("scsi0", "local-lvm:(known after apply)"),
        ]),
        VmConfig::from_pairs(&[
            ("efidisk0", "local-lvm:vm-100-disk-0,efitype=4m"),
            ("scsi0", "local-lvm:1"),
            ("ide0", "vmdata:4"),
        ]),
    ] {
        assert_eq!(
            predict_volume(&cfg, &storages, &NO_VOLUMES, "local-lvm", 100, None, None).as_deref(),
            Some("local-lvm:vm-100-disk-2"),
            "{cfg:?}"
        );
    }
}

#[test]
fn an_iso_or_an_import_takes_the_size_its_storage_lists() {
    // qemu-server fills in `size=` of a drive naming an existing volume from its storage
    // (docs/pve-semantics.md §8.7); an imported disk takes its source's size.
    let storages = storages();
    let cfg = base();
    let listed: BTreeMap<String, Option<u64>> = [
        ("isos:iso/debian-13-netinst.iso".to_string(), Some(790626304)),
        ("vmdata:9000/base-9000-disk-0.qcow2".to_string(), Some(8 << 30)),
    ]
    .into();
    let w = Facts { vmid: 100, running: false, config: &cfg, storages: &storages, listed: &listed, target: None };
    let iso =
        plan(&params(json!({"disk": "ide2", "iso_image": "isos:iso/debian-13-netinst.iso", "media": "cdrom"})), &w);
    assert_eq!(iso.unwrap().after.get("ide2"), Some("isos:iso/debian-13-netinst.iso,media=cdrom,size=754M"));
    let import = plan(
        &params(json!({"disk": "scsi2", "storage": "local-lvm", "import_from": "vmdata:9000/base-9000-disk-0.qcow2"})),
        &w,
    );
    assert_eq!(import.unwrap().after.get("scsi2"), Some("local-lvm:vm-100-disk-1,size=8G"));
    // An empty drive carries no size.
    let empty = plan(&params(json!({"disk": "ide2", "iso_image": "none", "media": "cdrom"})), &w).unwrap();
    assert_eq!(empty.after.get("ide2"), Some("none,media=cdrom"));

    // On a drive that holds a medium, the medium's size goes with it (§35.3): an eject stores no
    // size, a swap the new ISO's (known after apply when its storage was not listed).
    let with_iso = VmConfig::from_pairs(&[("ide2", "isos:iso/old.iso,media=cdrom,size=650M")]);
    let w = Facts { config: &with_iso, ..w };
    let eject = plan(&params(json!({"disk": "ide2", "iso_image": "none", "media": "cdrom"})), &w).unwrap();
    assert_eq!(eject.after.get("ide2"), Some("none,media=cdrom"));
    let swap = |w: &Facts| {
        let p = params(json!({"disk": "ide2", "iso_image": "isos:iso/debian-13-netinst.iso", "media": "cdrom"}));
        plan(&p, w).unwrap().after.get("ide2").map(str::to_string)
    };
    assert_eq!(swap(&w).as_deref(), Some("isos:iso/debian-13-netinst.iso,media=cdrom,size=754M"));
    assert_eq!(
        swap(&Facts { listed: &NO_VOLUMES, ..w }).as_deref(),
        Some("isos:iso/debian-13-netinst.iso,media=cdrom,size=(known after apply)")
    );
}

#[test]
fn a_kept_iso_without_a_size_takes_the_size_its_storage_lists() {
    // create_disks sizes every drive it is sent again (§35.3, §48.2): an ISO stored without
    // `size=` gets it on any update of its drive; the plan names the storage to list for it.
    let storages = storages();
    let cfg = VmConfig::from_pairs(&[("ide2", "isos:iso/debian-13-netinst.iso,media=cdrom")]);
    let listed: BTreeMap<String, Option<u64>> =
        [("isos:iso/debian-13-netinst.iso".to_string(), Some(790626304))].into();
    let w = Facts { vmid: 100, running: true, config: &cfg, storages: &storages, listed: &NO_VOLUMES, target: None };
    let serial = params(json!({"disk": "ide2", "serial": "GEN0001"}));
    let unlisted = plan(&serial, &w).unwrap();
    assert_eq!(unlisted.sized_on(), Some("isos"));
    assert_eq!(
        unlisted.after.get("ide2"),
        Some("isos:iso/debian-13-netinst.iso,media=cdrom,serial=GEN0001,size=(known after apply)")
    );
    let sized = plan(&serial, &Facts { listed: &listed, ..w.clone() }).unwrap();
    assert_eq!(sized.after.get("ide2"), Some("isos:iso/debian-13-netinst.iso,media=cdrom,serial=GEN0001,size=754M"));
    // a drive that has its size keeps it, and lists nothing
    let sized_cfg = VmConfig::from_pairs(&[("ide2", "isos:iso/debian-13-netinst.iso,media=cdrom,size=700M")]);
    let kept = plan(&serial, &Facts { config: &sized_cfg, ..w }).unwrap();
    assert_eq!(
        (kept.sized_on(), kept.after.get("ide2")),
        (None, Some("isos:iso/debian-13-netinst.iso,media=cdrom,serial=GEN0001,size=700M"))
    );
}

#[test]
fn a_moved_efi_disk_takes_the_size_the_target_storage_gives_the_ovmf_vars() {
    // QemuServer.pm clone_disk allocates a moved efidisk0 at `efisize` (OVMF.pm get_efivars_size),
    // which LVM rounds up to one 4 MiB extent; on a directory it is 528 KiB again (§8.5).
    let storages = storages();
    let on_dir = VmConfig::from_pairs(&[("efidisk0", "vmdata:100/vm-100-disk-0.raw,efitype=4m,size=528K")]);
    let w =
        Facts { vmid: 100, running: false, config: &on_dir, storages: &storages, listed: &NO_VOLUMES, target: None };
    let p = plan(&params(json!({"disk": "efidisk0", "state": "moved", "target_storage": "local-lvm"})), &w).unwrap();
    assert_eq!(p.after.get("efidisk0"), Some("local-lvm:vm-100-disk-0,efitype=4m,size=4M"));
    let on_lvm = VmConfig::from_pairs(&[("efidisk0", "local-lvm:vm-100-disk-0,efitype=4m,size=4M")]);
    let w =
        Facts { vmid: 100, running: false, config: &on_lvm, storages: &storages, listed: &NO_VOLUMES, target: None };
    let p = plan(&params(json!({"disk": "efidisk0", "state": "moved", "target_storage": "vmdata"})), &w).unwrap();
    assert_eq!(p.after.get("efidisk0"), Some("vmdata:100/vm-100-disk-0.raw,efitype=4m,size=528K"));
}

#[test]
fn a_new_disk_of_a_template_is_named_as_its_base_volume() {
    let mut all = storages();
    all.extend(StorageConfig::from_json(&json!({"storage": "san-lvm", "type": "lvm", "content": "images"})));
    let template = VmConfig::from_pairs(&[("template", "1"), ("scsi0", "vmdata:9000/base-9000-disk-0.qcow2,size=8G")]);
    let on = |volume: &str, cfg: &VmConfig| plan::on_template(cfg, &all, volume.to_string(), 9000);
    assert_eq!(on("nvme-pool:vm-9000-disk-0", &template), "nvme-pool:base-9000-disk-0");
    assert_eq!(on("vmdata:9000/vm-9000-disk-1.qcow2", &template), "vmdata:9000/base-9000-disk-1.qcow2");
    assert_eq!(on("san-lvm:vm-9000-disk-0", &template), "san-lvm:vm-9000-disk-0", "thick LVM keeps vm- names");
    let vm = VmConfig::from_pairs(&[("scsi0", "local-lvm:vm-9000-disk-0,size=8G")]);
    assert_eq!(on("nvme-pool:vm-9000-disk-1", &vm), "nvme-pool:vm-9000-disk-1", "not a template");
}

#[test]
fn a_moved_disk_of_a_template_becomes_a_base_volume_where_the_target_storage_makes_one() {
    // API2/Qemu.pm move_vm_disk: `template_create($vmid, $conf, $disk)` after the copy when the VM
    // is a template; QemuServer.pm template_create skips a volume without the 'template' feature
    let mut all = storages();
    all.extend(StorageConfig::from_json(&json!({"storage": "san-lvm", "type": "lvm", "content": "images"})));
    let template = VmConfig::from_pairs(&[("template", "1"), ("scsi0", "vmdata:9000/base-9000-disk-0.qcow2,size=8G")]);
    let w = Facts { vmid: 9000, running: false, config: &template, storages: &all, listed: &NO_VOLUMES, target: None };
    let moved = |target: &str| {
        let args = json!({"vmid": 9000, "disk": "scsi0", "state": "moved", "target_storage": target});
        plan(&params(args), &w).unwrap().after.get("scsi0").map(str::to_string)
    };
    assert_eq!(moved("nvme-pool").as_deref(), Some("nvme-pool:base-9000-disk-0,size=8G"));
    assert_eq!(moved("san-lvm").as_deref(), Some("san-lvm:vm-9000-disk-0,size=8G"), "thick LVM keeps vm- names");
}
