//! Golden tests of proxmox_kvm's planner, without a network: (live config, task) → writes,
//! refusals and pending prediction; the power transition table; params, migration refusals.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use module_utils::pve::hotplug::stays_pending;
use module_utils::pve::resources::StorageResource;
use module_utils::pve::storage::StorageConfig;

use super::*;

const MAC: &str = "BC:24:11:0A:01:00";

fn desired(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn writes(c: &Converge) -> Vec<(String, String)> {
    c.changes.iter().map(|c| (c.key.clone(), c.after.clone())).collect()
}

fn params_from(args: Value) -> Result<Params> {
    let Value::Object(mut raw) = args else { panic!("args must be an object") };
    raw.entry("api_host").or_insert(json!("pve.example.org"));
    raw.entry("api_user").or_insert(json!("ansible@pve"));
    raw.entry("api_token_id").or_insert(json!("automation"));
    raw.entry("api_token_secret").or_insert(json!("s3cret"));
    let p = module_utils::ansible::validate::validate(&SPEC, &raw, &|_| None)?;
    Params::from_spec(&p, &mut |_| {})
}

struct Case {
    name: &'static str,
    config: VmConfig,
    desired: BTreeMap<String, String>,
    writes: Vec<(&'static str, String)>,
    refused: Vec<&'static str>,
}

fn cases() -> Vec<Case> {
    let nic = format!("virtio={MAC},bridge=vmbr0,firewall=1");
    let disk = "local-lvm:vm-100-disk-0,iothread=1,size=32G";
    vec![
        Case {
            name: "equal values in other spellings are no change",
            config: VmConfig::from_pairs(&[
                ("cores", "2"),
                ("memory", "2048"),
                ("onboot", "1"),
                ("agent", "enabled=1"),
                ("tags", "prod;web"),
                ("net0", &nic),
                ("scsi0", disk),
                ("hotplug", "disk,network,usb"),
                ("nameserver", "1.1.1.1  9.9.9.9"),
            ]),
            desired: desired(&[
                ("cores", "2"),
                ("memory", "2048"),
                ("onboot", "1"),
                ("agent", "1"),
                ("tags", "Web;prod"),
                ("net0", "virtio,bridge=vmbr0,firewall=yes"),
                ("scsi0", "local-lvm:32,iothread=on"),
                ("hotplug", "network,disk,usb"),
                ("nameserver", "1.1.1.1 9.9.9.9"),
            ]),
            writes: vec![],
            refused: vec![],
        },
        Case {
            name: "defaults of absent keys are no change",
            config: VmConfig::from_pairs(&[("name", "web")]),
            desired: desired(&[
                ("acpi", "1"),
                ("cores", "1"),
                ("sockets", "1"),
                ("kvm", "1"),
                ("memory", "512"),
                ("agent", "0"),
            ]),
            writes: vec![],
            refused: vec![],
        },
        Case {
            name: "memory and cores differ: exactly those are written",
            config: VmConfig::from_pairs(&[("cores", "2"), ("memory", "2048"), ("name", "web")]),
            desired: desired(&[("cores", "4"), ("memory", "4096"), ("name", "web")]),
            writes: vec![("cores", "4".into()), ("memory", "4096".into())],
            refused: vec![],
        },
        Case {
            name: "a NIC retag keeps the MAC",
            config: VmConfig::from_pairs(&[("net0", &nic)]),
            desired: desired(&[("net0", "virtio,bridge=vmbr0,firewall=1,tag=30")]),
            writes: vec![("net0", format!("virtio={MAC},bridge=vmbr0,firewall=1,tag=30"))],
            refused: vec![],
        },
        Case {
            name: "a given MAC replaces the current one; case does not matter",
            config: VmConfig::from_pairs(&[("net0", &nic)]),
            desired: desired(&[("net0", "virtio=bc:24:11:0a:01:00,bridge=vmbr0,firewall=1")]),
            writes: vec![],
            refused: vec![],
        },
        Case {
            name: "a new NIC and a new disk are created as given",
            config: VmConfig::from_pairs(&[("net0", &nic), ("scsi0", disk)]),
            desired: desired(&[("net1", "virtio,bridge=vmbr1"), ("scsi1", "local-lvm:4")]),
            writes: vec![("net1", "virtio,bridge=vmbr1".into()), ("scsi1", "local-lvm:4".into())],
            refused: vec![],
        },
        Case {
            name: "disk options change with the volume and size kept",
            config: VmConfig::from_pairs(&[("scsi0", disk)]),
            desired: desired(&[("scsi0", "local-lvm:32,discard=on,iothread=1")]),
            writes: vec![("scsi0", "local-lvm:vm-100-disk-0,discard=on,iothread=1,size=32G".into())],
            refused: vec![],
        },
        Case {
            name: "an option the task leaves out is removed (the task describes the drive)",
            config: VmConfig::from_pairs(&[("scsi0", disk)]),
            desired: desired(&[("scsi0", "local-lvm:32")]),
            writes: vec![("scsi0", "local-lvm:vm-100-disk-0,size=32G".into())],
            refused: vec![],
        },
        Case {
            name: "a size change is refused, pointing to proxmox_disk",
            config: VmConfig::from_pairs(&[("scsi0", disk)]),
            desired: desired(&[("scsi0", "local-lvm:64,iothread=1")]),
            writes: vec![],
            refused: vec!["scsi0"],
        },
        Case {
            name: "a storage change is refused",
            config: VmConfig::from_pairs(&[("scsi0", disk)]),
            desired: desired(&[("scsi0", "vmdata:32,iothread=1")]),
            writes: vec![],
            refused: vec!["scsi0"],
        },
        Case {
            name: "the same size in another unit is no change",
            config: VmConfig::from_pairs(&[("scsi0", "local-lvm:vm-100-disk-0,size=32768M")]),
            desired: desired(&[("scsi0", "local-lvm:32")]),
            writes: vec![],
            refused: vec![],
        },
        Case {
            name: "a cloud-init drive matches its STORAGE:cloudinit request",
            config: VmConfig::from_pairs(&[("ide2", "local-lvm:vm-100-cloudinit,media=cdrom,size=4M")]),
            desired: desired(&[("ide2", "local-lvm:cloudinit")]),
            writes: vec![],
            refused: vec![],
        },
        Case {
            name: "a CD-ROM medium change is an ordinary change",
            config: VmConfig::from_pairs(&[("ide2", "none,media=cdrom")]),
            desired: desired(&[("ide2", "isos:iso/debian-13-netinst.iso,media=cdrom")]),
            writes: vec![("ide2", "isos:iso/debian-13-netinst.iso,media=cdrom".into())],
            refused: vec![],
        },
        Case {
            name: "sshkeys are compared decoded, tags as a set, description without trailing newline",
            config: VmConfig::from_pairs(&[
                ("sshkeys", "ssh-ed25519%20AAAA%20me%40host%0A"),
                ("tags", "a;b"),
                ("description", "hello\n"),
            ]),
            desired: desired(&[
                ("sshkeys", &module_utils::pve::request::percent_encode("ssh-ed25519 AAAA me@host")),
                ("tags", "b;a"),
                ("description", "hello"),
            ]),
            writes: vec![],
            refused: vec![],
        },
        Case {
            name: "a cipassword is only written when none is set",
            config: VmConfig::from_pairs(&[("cipassword", "**********")]),
            desired: desired(&[("cipassword", "new")]),
            writes: vec![],
            refused: vec![],
        },
        Case {
            name: "a pending value counts: it is not asked for again",
            config: VmConfig {
                current: desired(&[("cores", "2")]),
                pending: desired(&[("cores", "4")]),
                ..Default::default()
            },
            desired: desired(&[("cores", "4")]),
            writes: vec![],
            refused: vec![],
        },
        Case {
            name: "tpmstate0 version cannot change",
            config: VmConfig::from_pairs(&[("tpmstate0", "local-lvm:vm-100-disk-1,size=4M,version=v1.2")]),
            desired: desired(&[("tpmstate0", "local-lvm:1,version=v2.0")]),
            writes: vec![],
            refused: vec!["tpmstate0"],
        },
        Case {
            name: "efidisk0 with the same storage and type is no change (its size is fixed)",
            config: VmConfig::from_pairs(&[(
                "efidisk0",
                "local-lvm:vm-100-disk-1,efitype=4m,pre-enrolled-keys=1,size=4M",
            )]),
            desired: desired(&[("efidisk0", "local-lvm:1,efitype=4m,pre-enrolled-keys=1")]),
            writes: vec![],
            refused: vec![],
        },
    ]
}

#[test]
fn golden_converge_cases() {
    for case in cases() {
        let c = converge(&case.config, &case.desired);
        let want: Vec<(String, String)> = case.writes.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        assert_eq!(writes(&c), want, "{}: writes", case.name);
        let refused: Vec<&str> = c.refused.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(refused, case.refused, "{}: refused", case.name);
    }
}

#[test]
fn refusals_name_the_proxmox_disk_state() {
    let c = converge(
        &VmConfig::from_pairs(&[("scsi0", "local-lvm:vm-100-disk-0,size=32G")]),
        &desired(&[("scsi0", "local-lvm:64")]),
    );
    assert!(c.refused[0].reason.contains("proxmox_disk (state: resized"), "{}", c.refused[0].reason);
    let c = converge(
        &VmConfig::from_pairs(&[("scsi0", "local-lvm:vm-100-disk-0,size=32G")]),
        &desired(&[("scsi0", "vmdata:32")]),
    );
    assert!(c.refused[0].reason.contains("(state: moved)"), "{}", c.refused[0].reason);
}

#[test]
fn pending_prediction_follows_hotplug() {
    let running = VmConfig::from_pairs(&[
        ("net0", "virtio=BC:24:11:0A:01:00,bridge=vmbr0"),
        ("scsi0", "local-lvm:vm-100-disk-0,size=32G"),
    ]);
    let no_hotplug = VmConfig::from_pairs(&[("hotplug", "0"), ("net0", "virtio=BC:24:11:0A:01:00,bridge=vmbr0")]);
    // (name, config, key, before, after, running, pending)
    type PendingCase<'a> = (&'a str, &'a VmConfig, &'a str, Option<&'a str>, &'a str, bool, bool);
    let cases: Vec<PendingCase> = vec![
        ("cores needs a restart", &running, "cores", Some("2"), "4", true, true),
        ("cores on a stopped VM applies", &running, "cores", Some("2"), "4", false, false),
        ("memory without memory hotplug", &running, "memory", Some("2048"), "4096", true, true),
        ("name is fast-plugged", &running, "name", Some("a"), "b", true, false),
        ("ciuser is fast-plugged", &running, "ciuser", None, "debian", true, false),
        ("ipconfig0 is fast-plugged", &running, "ipconfig0", None, "ip=dhcp", true, false),
        (
            "retag applies live",
            &running,
            "net0",
            Some("virtio=BC:24:11:0A:01:00,bridge=vmbr0"),
            "virtio=BC:24:11:0A:01:00,bridge=vmbr0,tag=5",
            true,
            false,
        ),
        ("new NIC with network hotplug", &running, "net1", None, "virtio,bridge=vmbr0", true, false),
        ("new NIC without hotplug", &no_hotplug, "net1", None, "virtio,bridge=vmbr0", true, true),
        ("new scsi disk hot-plugged", &running, "scsi1", None, "local-lvm:4", true, false),
        ("new sata disk is pending", &running, "sata1", None, "local-lvm:4", true, true),
        (
            "iothread change is cold",
            &running,
            "scsi0",
            Some("local-lvm:vm-100-disk-0,size=32G"),
            "local-lvm:vm-100-disk-0,iothread=1,size=32G",
            true,
            true,
        ),
        (
            "backup=0 applies live",
            &running,
            "scsi0",
            Some("local-lvm:vm-100-disk-0,size=32G"),
            "local-lvm:vm-100-disk-0,backup=0,size=32G",
            true,
            false,
        ),
        ("cloud-init drive is pending", &running, "ide2", None, "local-lvm:cloudinit", true, true),
        ("cpulimit is live", &running, "cpulimit", None, "2", true, false),
    ];
    for (name, cfg, key, before, after, is_running, want) in cases {
        assert_eq!(stays_pending(key, before, after, is_running, cfg), want, "{name}");
    }
}

#[test]
fn predicted_config_shows_pending() {
    let cfg = VmConfig::from_pairs(&[("cores", "2"), ("name", "web")]);
    let changes = vec![
        Change { key: "cores".into(), before: Some("2".into()), after: "4".into() },
        Change { key: "name".into(), before: Some("web".into()), after: "www".into() },
    ];
    let next = predict(&cfg, &changes, true);
    assert_eq!(next.pending_keys().into_iter().collect::<Vec<_>>(), vec!["cores".to_string()]);
    assert_eq!(next.current.get("name").map(String::as_str), Some("www"));
    let next = predict(&cfg, &changes, false);
    assert!(next.pending_keys().is_empty());
}

#[test]
fn clone_base_drops_what_pve_does_not_copy() {
    let source = VmConfig::from_pairs(&[
        ("name", "debian-13-template"),
        ("template", "1"),
        ("net0", "virtio=BC:24:11:0A:01:00,bridge=vmbr0"),
        ("unused0", "vmdata:9000/vm-9000-disk-1.qcow2"),
        ("cores", "1"),
    ]);
    let opts = CloneOpts { full: true, ..CloneOpts::default() };
    let base = clone_base(&source, "app01", 120, &opts, &storages(), &[]);
    // PVE draws a new MAC and smbios1 uuid for every clone (Qemu.pm clone_vm): known after apply.
    let want: BTreeMap<String, String> = desired(&[
        ("name", "app01"),
        ("net0", "virtio=(known after apply),bridge=vmbr0"),
        ("cores", "1"),
        ("smbios1", "uuid=(known after apply)"),
    ]);
    assert_eq!(base.current, want);
}

/// A source's pending values are not the clone's: Qemu.pm `clone_vm` copies the config's top
/// level and discards its pending part ("found pending changes ..., discarding for clone"), so
/// a pending memory, a pending deletion and a pending new disk are not in the clone.
#[test]
fn clone_base_takes_the_sources_applied_config_not_its_pending_values() {
    let mut source = VmConfig::from_pairs(&[("name", "src"), ("memory", "512"), ("description", "notes")]);
    source.pending.insert("memory".into(), "8192".into());
    source.pending.insert("scsi1".into(), "local-lvm:vm-207-disk-1,size=1G".into());
    source.pending_delete.insert("description".into(), false);
    let opts = CloneOpts { full: true, ..CloneOpts::default() };
    let base = clone_base(&source, "c", 120, &opts, &storages(), &[]);
    let want: BTreeMap<String, String> =
        desired(&[("name", "c"), ("memory", "512"), ("description", "notes"), ("smbios1", "uuid=(known after apply)")]);
    assert_eq!(base.current, want);
}

/// The clone's node, which apply reads its config on without looking it up: `target`, unless
/// that is `localhost` or the source's own node (Qemu.pm `clone_vm`).
#[test]
fn a_clone_is_planned_on_the_node_pve_puts_it_on() {
    use plan::Write;
    let source = plan::resource(9000, Some("tmpl"), "pve1", "stopped");
    let source_config = VmConfig::from_pairs(&[("name", "tmpl"), ("template", "1"), ("cores", "1")]);
    for (target, node) in [(None, "pve1"), (Some("pve2"), "pve2"), (Some("localhost"), "pve1"), (Some("pve1"), "pve1")]
    {
        let mut args = json!({"node": "pve1", "clone": "tmpl", "name": "c"});
        if let Some(t) = target {
            args["target"] = json!(t);
        }
        let p = params_from(args).unwrap();
        let c = p.clone.clone().unwrap();
        let plan = plan::clone(&source, &source_config, &c, "c", &p, vec![9000], (&storages(), &[])).unwrap();
        let Write::Clone { node: planned, .. } = &plan.write else { panic!("a clone") };
        assert_eq!((planned.as_str(), plan.vm.node.as_str()), (node, node), "target {target:?}");
    }
}

fn storages() -> Vec<StorageConfig> {
    [
        json!({"storage": "local-lvm", "type": "lvmthin", "content": "images"}),
        json!({"storage": "vmdata", "type": "dir", "content": "images", "format": "qcow2"}),
        json!({"storage": "isos", "type": "dir", "content": "iso"}),
        json!({"storage": "ceph", "type": "rbd", "content": "images"}),
    ]
    .iter()
    .filter_map(StorageConfig::from_json)
    .collect()
}

/// docs/pve-semantics.md §8.4-8.6: drives in sorted key order, the lowest free number per
/// storage, fixed sizes for EFI vars and cloud-init, options sorted; a NIC's MAC known after apply.
#[test]
fn create_names_volumes_as_pve_allocates_them() {
    let p = params_from(json!({
        "node": "pve1", "vmid": 211, "bios": "ovmf", "efidisk0": {"storage": "local-lvm", "efitype": "4m"},
        "scsi": {"scsi0": "local-lvm:4,iothread=1,discard=on", "scsi1": "vmdata:0.5"},
        "ide": {"ide2": "vmdata:cloudinit"}, "net": {"net0": "virtio,bridge=vmbr0"},
    }))
    .unwrap();
    let plan = plan::create("pve1", &p, vec![], &storages(), &[]);
    let got = |k: &str| plan.after.get(k).unwrap_or_default().to_string();
    assert_eq!(got("efidisk0"), "local-lvm:vm-211-disk-0,efitype=4m,size=4M");
    assert_eq!(got("scsi0"), "local-lvm:vm-211-disk-1,discard=on,iothread=1,size=4G");
    assert_eq!(got("scsi1"), "vmdata:211/vm-211-disk-0.qcow2,size=512M");
    assert_eq!(got("ide2"), "vmdata:211/vm-211-cloudinit.qcow2,media=cdrom,size=4M");
    assert_eq!(got("net0"), "virtio=(known after apply),bridge=vmbr0");
    // What is sent is the task's value: PVE allocates.
    let plan::Write::Create { form, .. } = &plan.write else { panic!("a create") };
    assert!(form.contains(&("scsi0".to_string(), "local-lvm:4,iothread=1,discard=on".to_string())), "{form:?}");
    // Without a vmid the names wait for it: known after apply, then named once it is predicted.
    let p = params_from(json!({"node": "pve1", "name": "n", "scsi": {"scsi0": "local-lvm:4"}})).unwrap();
    let mut plan = plan::create("pve1", &p, vec![], &storages(), &[]);
    assert_eq!(plan.after.get("scsi0"), Some("local-lvm:(known after apply),size=4G"));
    plan.set_vmid(130);
    assert_eq!(plan.after.get("scsi0"), Some("local-lvm:vm-130-disk-0,size=4G"));
    assert_eq!(plan.prediction.current.get("scsi0").map(String::as_str), Some("local-lvm:vm-130-disk-0,size=4G"));
}

/// docs/pve-semantics.md §40.2: find_free_diskname skips the numbers the storage's listing holds
/// for the vmid (a leftover of a VM destroyed without destroy-unreferenced-disks), on a file
/// storage those of the same directory; other VMs' volumes do not count. Same for a clone and a
/// disk added to an existing VM.
#[test]
fn new_volumes_skip_the_numbers_the_storage_lists_for_the_vmid() {
    let listed: Vec<String> = [
        "local-lvm:vm-150-disk-0",
        "local-lvm:vm-150-disk-2",
        "local-lvm:vm-151-disk-1",
        "vmdata:150/vm-150-disk-0.qcow2",
    ]
    .map(String::from)
    .into();
    let p = params_from(json!({
        "node": "pve1", "vmid": 150, "scsi": {"scsi0": "local-lvm:4", "scsi1": "local-lvm:1", "scsi2": "vmdata:1"},
    }))
    .unwrap();
    let plan = plan::create("pve1", &p, vec![], &storages(), &listed);
    let got = |k: &str| plan.after.get(k).unwrap_or_default().split(',').next().unwrap_or_default().to_string();
    assert_eq!(
        [got("scsi0"), got("scsi1"), got("scsi2")],
        ["local-lvm:vm-150-disk-1", "local-lvm:vm-150-disk-3", "vmdata:150/vm-150-disk-1.qcow2"]
    );
    // the vmid predicted later: named then, with the same listing
    let p = params_from(json!({"node": "pve1", "name": "n", "scsi": {"scsi0": "local-lvm:4"}})).unwrap();
    let mut plan = plan::create("pve1", &p, vec![], &storages(), &listed);
    plan.set_vmid(151);
    assert_eq!(plan.after.get("scsi0"), Some("local-lvm:vm-151-disk-0,size=4G"));
    assert_eq!(plan::allocating_on(&p.desired, Some("vmdata"), false), ["local-lvm".to_string()].into());
}

/// docs/pve-semantics.md §35.2: what create_vm adds to every new VM is known after apply, in the
/// value's place; what the task sets itself is kept; nothing of it is sent.
#[test]
fn create_marks_what_pve_adds_known_after_apply() {
    let p = params_from(json!({"node": "pve1", "vmid": 211, "cores": 2})).unwrap();
    let plan = plan::create("pve1", &p, vec![], &[], &[]);
    let got = |plan: &plan::Plan, k: &str| plan.after.get(k).map(str::to_string);
    assert_eq!(got(&plan, "meta").as_deref(), Some("creation-qemu=(known after apply),ctime=(known after apply)"));
    assert_eq!(got(&plan, "smbios1").as_deref(), Some("uuid=(known after apply)"));
    assert_eq!(got(&plan, "vmgenid").as_deref(), Some("(known after apply)"));
    assert_eq!(plan.prediction.current.get("vmgenid").map(String::as_str), Some("(known after apply)"));
    let plan::Write::Create { form, .. } = &plan.write else { panic!("a create") };
    assert!(!form.iter().any(|(k, _)| ["meta", "smbios1", "vmgenid"].contains(&k.as_str())), "{form:?}");

    // A CD-ROM's medium sets its size (§35.3): an ISO's is read from its storage, none has none.
    let p = params_from(json!({"node": "pve1", "vmid": 213, "ide": {
        "ide0": "isos:iso/debian-13-netinst.iso,media=cdrom", "ide1": "none,media=cdrom,size=754M"}}))
    .unwrap();
    let plan = plan::create("pve1", &p, vec![], &[], &[]);
    assert_eq!(
        got(&plan, "ide0").as_deref(),
        Some("isos:iso/debian-13-netinst.iso,media=cdrom,size=(known after apply)")
    );
    assert_eq!(got(&plan, "ide1").as_deref(), Some("none,media=cdrom"));

    // The task's own smbios1 stays (PVE adds a uuid only when there is none).
    let p = params_from(json!({"node": "pve1", "vmid": 212, "smbios": "manufacturer=ferro"})).unwrap();
    assert_eq!(got(&plan::create("pve1", &p, vec![], &[], &[]), "smbios1").as_deref(), Some("manufacturer=ferro"));
}

/// docs/pve-semantics.md §22.3: a full clone's disks are new volumes of the clone, a linked
/// clone's name its base on a file storage and not on LVM-thin.
#[test]
fn clone_names_volumes_by_storage_and_kind() {
    let source = VmConfig::from_pairs(&[
        ("scsi0", "vmdata:9000/base-9000-disk-0.qcow2,discard=on,size=8G"),
        ("scsi1", "local-lvm:base-9000-disk-0,size=2G"),
        ("ide2", "vmdata:9000/vm-9000-cloudinit.qcow2,media=cdrom,size=4M"),
    ]);
    let linked = CloneOpts { full: false, ..CloneOpts::default() };
    let base = clone_base(&source, "c", 213, &linked, &storages(), &[]);
    assert_eq!(
        base.get("scsi0"),
        Some("vmdata:9000/base-9000-disk-0.qcow2/213/vm-213-disk-0.qcow2,discard=on,size=8G")
    );
    assert_eq!(base.get("scsi1"), Some("local-lvm:vm-213-disk-0,size=2G"));
    assert_eq!(base.get("ide2"), Some("vmdata:213/vm-213-cloudinit.qcow2,media=cdrom,size=4M"));
    let full = CloneOpts { full: true, storage: Some("local-lvm".into()), ..CloneOpts::default() };
    let base = clone_base(&source, "c", 212, &full, &storages(), &[]);
    assert_eq!(base.get("scsi0"), Some("local-lvm:vm-212-disk-0,discard=on,size=8G"));
    assert_eq!(base.get("scsi1"), Some("local-lvm:vm-212-disk-1,size=2G"));
    // QemuServer.pm clone_disk: the clone's cloud-init volume is made on the target storage
    assert_eq!(base.get("ide2"), Some("local-lvm:vm-212-cloudinit,media=cdrom,size=4M"));
    // RBDPlugin.pm clone_image: the base's name, then the clone's own
    let on_rbd =
        VmConfig::from_pairs(&[("scsi0", "ceph:base-9000-disk-0,size=8G"), ("scsi1", "ceph:base-9000-disk-1,size=2G")]);
    let base = clone_base(&on_rbd, "c", 300, &linked, &storages(), &[]);
    assert_eq!(base.get("scsi0"), Some("ceph:base-9000-disk-0/vm-300-disk-0,size=8G"));
    assert_eq!(base.get("scsi1"), Some("ceph:base-9000-disk-1/vm-300-disk-1,size=2G"));
    // a storage type whose clone_image naming is not known here: marked, never the base's own name
    let mut with_drbd = storages();
    with_drbd.extend(StorageConfig::from_json(&json!({"storage": "drbd1", "type": "drbd", "content": "images"})));
    let on_drbd = VmConfig::from_pairs(&[("scsi0", "drbd1:base-9000-disk-0,size=8G")]);
    let base = clone_base(&on_drbd, "c", 301, &linked, &with_drbd, &[]);
    assert_eq!(base.get("scsi0"), Some("drbd1:(known after apply),size=8G"));
}

/// docs/pve-semantics.md §8.5, §15: a linked clone links `efidisk0` but copies `tpmstate0` in full
/// (Qemu.pm clone_vm), and a full copy allocates EFI vars at the OVMF vars' size on the target
/// (QemuServer.pm clone_disk `efisize`), not at the source's.
#[test]
fn clone_copies_tpm_state_and_sizes_efi_vars_for_the_target() {
    let source = VmConfig::from_pairs(&[
        ("efidisk0", "ceph:base-9000-disk-0,efitype=4m,size=1M"),
        ("scsi0", "ceph:base-9000-disk-1,size=8G"),
        ("tpmstate0", "ceph:base-9000-disk-2,size=4M,version=v2.0"),
    ]);
    let linked = CloneOpts { full: false, ..CloneOpts::default() };
    let base = clone_base(&source, "c", 300, &linked, &storages(), &[]);
    assert_eq!(base.get("efidisk0"), Some("ceph:base-9000-disk-0/vm-300-disk-0,efitype=4m,size=1M"));
    assert_eq!(base.get("scsi0"), Some("ceph:base-9000-disk-1/vm-300-disk-1,size=8G"));
    assert_eq!(base.get("tpmstate0"), Some("ceph:vm-300-disk-2,size=4M,version=v2.0"));
    let to_dir = CloneOpts { full: true, storage: Some("vmdata".into()), ..CloneOpts::default() };
    let base = clone_base(&source, "c", 301, &to_dir, &storages(), &[]);
    assert_eq!(base.get("efidisk0"), Some("vmdata:301/vm-301-disk-0.raw,efitype=4m,size=528K"));
    let to_thin = CloneOpts { full: true, storage: Some("local-lvm".into()), ..CloneOpts::default() };
    let base = clone_base(&source, "c", 302, &to_thin, &storages(), &[]);
    assert_eq!(base.get("efidisk0"), Some("local-lvm:vm-302-disk-0,efitype=4m,size=4M"));
}

/// docs/pve-semantics.md §22.6: a full copy keeps its source's format where the target storage
/// takes it (QemuServer.pm clone_disk → resolve_dst_disk_format), cloud-init included, and nfs
/// numbers each format apart (Plugin.pm $get_vm_disk_number).
#[test]
fn a_full_clone_keeps_each_source_format_where_the_target_takes_it() {
    let mut with_nfs = storages();
    with_nfs.extend(StorageConfig::from_json(
        &json!({"storage": "truenas", "type": "nfs", "content": "images", "format": "qcow2"}),
    ));
    let source = VmConfig::from_pairs(&[
        ("ide2", "ceph:vm-9000-cloudinit,media=cdrom,size=4M"),
        ("scsi0", "ceph:base-9000-disk-1,size=8G"),
        ("scsi1", "vmdata:9000/base-9000-disk-2.qcow2,size=2G"),
    ]);
    let to_nfs = CloneOpts { full: true, storage: Some("truenas".into()), ..CloneOpts::default() };
    let base = clone_base(&source, "c", 303, &to_nfs, &with_nfs, &[]);
    assert_eq!(base.get("ide2"), Some("truenas:303/vm-303-cloudinit.raw,media=cdrom,size=4M"));
    assert_eq!(base.get("scsi0"), Some("truenas:303/vm-303-disk-0.raw,size=8G"));
    assert_eq!(base.get("scsi1"), Some("truenas:303/vm-303-disk-0.qcow2,size=2G"));
    // a format asked for wins where the target takes it
    let as_qcow2 = CloneOpts { format: Some("qcow2".into()), ..to_nfs };
    let base = clone_base(&source, "c", 303, &as_qcow2, &with_nfs, &[]);
    assert_eq!(base.get("ide2"), Some("truenas:303/vm-303-cloudinit.qcow2,media=cdrom,size=4M"));
    assert_eq!(base.get("scsi0"), Some("truenas:303/vm-303-disk-0.qcow2,size=8G"));
    assert_eq!(base.get("scsi1"), Some("truenas:303/vm-303-disk-1.qcow2,size=2G"));
}

/// A real run's diff shows the volumes PVE made (read back), a check run's the predicted ones.
#[test]
fn real_diffs_name_the_volumes_pve_made() {
    let planned = VmConfig::from_pairs(&[
        ("scsi0", "ceph:vm-300-disk-0,discard=on,size=8G"),
        ("ide2", "none,media=cdrom"),
        ("net0", "virtio=(known after apply),bridge=vmbr0"),
    ]);
    let after = VmConfig::from_pairs(&[
        ("scsi0", "ceph:base-9000-disk-0/vm-300-disk-0,discard=on,size=8G"),
        ("ide2", "none,media=cdrom"),
        ("net0", "virtio=BC:24:11:0A:01:00,bridge=vmbr0"),
    ]);
    assert_eq!(resolved(&planned, &after), after);
    assert_eq!(resolved(&planned, &planned), planned);
}

#[test]
fn params_map_options_to_config_keys() {
    let p = params_from(json!({
        "node": "pve1", "name": "web01", "cores": 2, "memory": 4096, "onboot": true, "agent": "yes",
        "numa_enabled": false, "smbios": "uuid=x", "nameservers": ["1.1.1.1", "9.9.9.9"], "searchdomains": ["example.org"],
        "tags": ["web", "prod"], "sshkeys": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyForTheE2eTestsExampleKeyForTheE2e me@host",
        "net": {"net0": "model=virtio,bridge=vmbr0,firewall=yes"}, "scsi": {"scsi0": "local-lvm:32"},
        "bios": "ovmf", "efidisk0": {"storage": "local-lvm", "efitype": "4m", "pre_enrolled_keys": true},
        "tpmstate0": {"storage": "local-lvm"}, "update_unsafe": true,
    }))
    .unwrap();
    let want = desired(&[
        ("agent", "1"),
        ("bios", "ovmf"),
        ("cores", "2"),
        ("efidisk0", "local-lvm:1,efitype=4m,pre-enrolled-keys=1"),
        ("memory", "4096"),
        ("name", "web01"),
        ("nameserver", "1.1.1.1 9.9.9.9"),
        ("net0", "virtio,bridge=vmbr0,firewall=1"),
        ("numa", "0"),
        ("onboot", "1"),
        ("scsi0", "local-lvm:32"),
        ("searchdomain", "example.org"),
        ("smbios1", "uuid=x"),
        ("sshkeys", "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyForTheE2eTestsExampleKeyForTheE2e%20me%40host"),
        ("tags", "web;prod"),
        ("tpmstate0", "local-lvm:1,version=v2.0"),
    ]);
    assert_eq!(p.desired, want);
    assert_eq!(p.timeout, 300);
    assert_eq!(p.state, State::Present);
}

#[test]
fn params_reject_what_pve_would_reject() {
    let cases = [
        (json!({"node": "pve1", "vmid": 100, "tags": ["ok", "not ok"]}), "tags: `not ok` is not a valid tag"),
        (json!({"node": "pve1", "vmid": 100, "net": {"net32": "virtio"}}), "net: 'net32' is not a valid key"),
        (json!({"node": "pve1", "vmid": 100, "net": {"net0": "virtio,tag=5000"}}), "net.net0:"),
        (
            json!({"node": "pve1", "vmid": 100, "efidisk0": {"storage": "local-lvm"}}),
            "efidisk0 cannot be used if bios is not set to ovmf",
        ),
        (json!({"node": "pve1", "vmid": 100, "args": "-foo"}), "args parameter require root@pam user"),
        // an API token of root@pam is not root@pam (Qemu.pm: `$authuser ne 'root@pam'`)
        (
            json!({"node": "pve1", "vmid": 100, "skiplock": true, "api_user": "root@pam", "api_token_id": "ci"}),
            "The API token root@pam!ci is not root@pam to Proxmox VE, which refuses it: Only root may use this option.",
        ),
        (
            json!({"node": "pve1", "vmid": 100, "tpmstate0": {"version": "2.0"}}),
            "missing required arguments: storage found in tpmstate0",
        ),
        (json!({"vmid": 100}), "state is present but all of the following are missing: node"),
        // docs/pve-semantics.md §29: 0 is refused like any vmid outside PVE's range.
        (json!({"vmid": 0, "name": "x", "state": "absent"}), "vmid must be between 100 and 999999999, got 0"),
        (json!({"vmid": 99, "state": "started"}), "vmid must be between 100 and 999999999, got 99"),
        (
            json!({"vmid": 100, "node": "pve1", "clone": "x", "newid": 0}),
            "newid must be between 100 and 999999999, got 0",
        ),
        // Issue 15: values that are path segments or name objects, in PVE's formats.
        (
            json!({"vmid": 100, "node": "pve1/qemu/100/status/stop#"}),
            "node: value does not look like a valid node name, got 'pve1/qemu/100/status/stop#'",
        ),
        (json!({"vmid": 100, "node": "pve1/../../access"}), "node: value does not look like a valid node name"),
        (json!({"vmid": 100, "node": "pve1?x=1"}), "node: value does not look like a valid node name"),
        (json!({"vmid": 100, "node": "pve1", "clone": "t", "target": "pve2/x"}), "target: value does not look"),
        (json!({"vmid": 100, "node": "pve1", "storage": "local,ro=1"}), "storage: storage ID 'local,ro=1'"),
        (
            json!({"node": "pve1", "vmid": 100, "bios": "ovmf", "efidisk0": {"storage": "x:1,ro=1"}}),
            "efidisk0.storage: storage ID 'x:1,ro=1' contains illegal characters",
        ),
        (
            json!({"node": "pve1", "vmid": 100, "tpmstate0": {"storage": "a/b"}}),
            "tpmstate0.storage: storage ID 'a/b' contains illegal characters",
        ),
        // §43.7: each line must be a key `ssh-keygen -l` reads (pve-common Tools.pm validate_ssh_public_keys)
        (
            json!({"vmid": 100, "node": "pve1", "sshkeys": "ssh-ed25519 AAAA me@host"}),
            "sshkeys: SSH public key validation error",
        ),
    ];
    for (args, want) in cases {
        let e = params_from(args.clone()).unwrap_err().to_string();
        assert!(e.contains(want), "{args}: {e}");
    }
    // root@pam itself, logged in with its password, may skip locks
    let root = json!({"node": "pve1", "vmid": 100, "skiplock": true, "api_user": "root@pam", "api_password": "pw"});
    assert!(params_from(root).unwrap().skiplock);
}

#[test]
fn url_encoding_round_trips() {
    let keys = "ssh-ed25519 AAAA+/= me@host\nssh-rsa BBBB you@there";
    assert_eq!(params::url_decode(&module_utils::pve::request::percent_encode(keys)), keys);
    assert_eq!(module_utils::pve::request::percent_encode("a b/c"), "a%20b%2Fc");
}

#[test]
fn power_from_status() {
    assert_eq!(Power::from_status("running", Some("paused"), None), Power::Paused);
    assert_eq!(Power::from_status("running", Some("running"), None), Power::Running);
    assert_eq!(Power::from_status("stopped", None, Some("suspended")), Power::Hibernated);
    assert_eq!(Power::from_status("stopped", None, None), Power::Stopped);
}

#[test]
fn mac_and_devices_maps() {
    let cfg = desired(&[
        ("net0", "virtio=BC:24:11:0A:01:00,bridge=vmbr0"),
        ("net10", "e1000=BC:24:11:0A:01:0A"),
        ("net2", "virtio,bridge=vmbr0"),
        ("scsi0", "local-lvm:vm-100-disk-0,size=32G"),
        ("ide2", "local-lvm:vm-100-cloudinit,media=cdrom"),
        ("unused0", "local-lvm:vm-100-disk-1"),
    ]);
    let m: Map<String, Value> = macs(&cfg);
    assert_eq!(Value::Object(m), json!({"net0": "BC:24:11:0A:01:00", "net10": "BC:24:11:0A:01:0A"}));
    assert_eq!(
        Value::Object(devices(&cfg)),
        json!({"ide2": "local-lvm:vm-100-cloudinit", "scsi0": "local-lvm:vm-100-disk-0"})
    );
}

#[test]
fn drift_lines_read_like_the_issue() {
    assert_eq!(plan::drift_line("memory", Some("2048"), "4096"), "memory: 2048 -> 4096");
    assert_eq!(plan::drift_line("net1", None, "virtio,bridge=vmbr1"), "net1: (unset) -> virtio,bridge=vmbr1");
}

module_utils::stub_test!(SPEC);

#[test]
fn template_renames_disk_volumes_to_base() {
    let cfg = VmConfig::from_pairs(&[
        ("scsi0", "local-lvm:vm-150-disk-0,size=1G"),
        ("virtio1", "vmdata:150/vm-150-disk-1.qcow2"),
        ("ide2", "local-lvm:vm-150-cloudinit,media=cdrom"),
    ]);
    let t = template_config(&cfg, 150, &storages());
    assert_eq!(t.get("scsi0"), Some("local-lvm:base-150-disk-0,size=1G"));
    assert_eq!(t.get("virtio1"), Some("vmdata:150/base-150-disk-1.qcow2"));
    assert_eq!(t.get("ide2"), Some("local-lvm:vm-150-cloudinit,media=cdrom"));
    assert_eq!(t.get("template"), Some("1"));
}

#[test]
fn template_leaves_volumes_without_the_template_feature() {
    // QemuServer.pm template_create skips a disk whose storage lacks volume_has_feature 'template'
    // (LVMPlugin.pm: thick LVM never has it), converting the others; no error
    let mut with_lvm = storages();
    with_lvm.extend(StorageConfig::from_json(&json!({"storage": "san-lvm", "type": "lvm", "content": "images"})));
    let cfg = VmConfig::from_pairs(&[
        ("scsi0", "san-lvm:vm-121-disk-0,size=64G"),
        ("scsi1", "local-lvm:vm-121-disk-1,size=1G"),
    ]);
    let t = template_config(&cfg, 121, &with_lvm);
    assert_eq!(t.get("scsi0"), Some("san-lvm:vm-121-disk-0,size=64G"));
    assert_eq!(t.get("scsi1"), Some("local-lvm:base-121-disk-1,size=1G"));
    assert_eq!(t.get("template"), Some("1"));
}

#[test]
fn template_leaves_the_name_to_pve_on_a_storage_it_cannot_see() {
    // a token without Datastore.Audit there does not see san-lvm in storage.cfg: whether PVE converts
    // the volume is not known, so its name is known after apply (not guessed either way)
    let cfg = VmConfig::from_pairs(&[
        ("scsi0", "san-lvm:vm-121-disk-0,size=64G"),
        ("scsi1", "local-lvm:vm-121-disk-1,size=1G"),
    ]);
    let t = template_config(&cfg, 121, &storages());
    assert_eq!(t.get("scsi0"), Some("san-lvm:(known after apply),size=64G"));
    assert_eq!(t.get("scsi1"), Some("local-lvm:base-121-disk-1,size=1G"));
}

#[test]
fn template_keeps_pending_values_pending() {
    let mut cfg = VmConfig::from_pairs(&[("scsi0", "local-lvm:vm-150-disk-0,size=1G"), ("onboot", "0")]);
    cfg.pending.insert("onboot".into(), "1".into());
    let t = template_config(&cfg, 150, &storages());
    assert_eq!(t.current.get("onboot").map(String::as_str), Some("0"));
    assert!(t.is_pending("onboot"), "the pending onboot stays pending: {t:?}");
    assert_eq!(t.current.get("scsi0").map(String::as_str), Some("local-lvm:base-150-disk-0,size=1G"));
}

fn storage(name: &str, node: &str, shared: bool) -> StorageResource {
    StorageResource {
        storage: name.into(),
        node: node.into(),
        plugintype: if shared { "nfs" } else { "lvmthin" }.into(),
        content: vec!["images".into(), "iso".into()],
        shared,
    }
}

/// (name, config, running, with_local_disks, the refusal's text, or None for none)
type MigrationCase<'a> = (&'a str, Vec<(&'a str, &'a str)>, bool, bool, Option<&'a str>);

#[test]
fn migration_refusals_follow_pves_scan_of_local_volumes() {
    let storages =
        [storage("local-lvm", "pve1", false), storage("local", "pve1", false), storage("shared-nfs", "pve1", true)];
    let disk = ("scsi0", "local-lvm:vm-100-disk-0,size=8G");
    let cases: &[MigrationCase] = &[
        ("stopped VM with a local disk: offline copy", vec![disk], false, false, None),
        (
            "running VM with a local disk",
            vec![disk],
            true,
            false,
            Some("without with-local-disks option (local-lvm:vm-100-disk-0)"),
        ),
        ("running VM with a local disk and with_local_disks", vec![disk], true, true, None),
        (
            "running VM on shared storage",
            vec![("scsi0", "shared-nfs:100/vm-100-disk-0.qcow2,size=8G")],
            true,
            false,
            None,
        ),
        ("a local unused volume is copied offline", vec![("unused0", "local-lvm:vm-100-disk-1")], true, false, None),
        (
            "a local ISO",
            vec![("ide2", "local:iso/debian.iso,media=cdrom")],
            false,
            false,
            Some("local cdrom image local:iso/debian.iso"),
        ),
        (
            "the host's CD-ROM drive",
            vec![("ide2", "cdrom,media=cdrom")],
            false,
            false,
            Some("can't migrate local cdrom drive"),
        ),
        (
            "a local cloud-init drive is regenerated",
            vec![("ide2", "local-lvm:vm-100-cloudinit,media=cdrom")],
            true,
            true,
            None,
        ),
        ("an empty CD-ROM drive", vec![("ide2", "none,media=cdrom")], true, false, None),
        (
            "a storage unknown to /cluster/resources is left to PVE",
            vec![("scsi0", "other:vm-100-disk-0")],
            true,
            false,
            None,
        ),
    ];
    for (name, pairs, running, with_local, want) in cases {
        let got = migration_refusal(&VmConfig::from_pairs(pairs), &storages, "pve1", *running, *with_local);
        match (want, &got) {
            (None, None) => {}
            (Some(w), Some(g)) => assert!(g.contains(w), "{name}: got {g:?}, want {w:?}"),
            _ => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
    // The same storage id on another node does not count: a VM's volumes are on its own node.
    let elsewhere = [storage("local-lvm", "pve2", false)];
    assert_eq!(migration_refusal(&VmConfig::from_pairs(&[disk]), &elsewhere, "pve1", true, false), None);
}

/// (current, wanted, force, the transition, why: PVE's behaviour for that call, docs/pve-semantics.md §16)
type TransitionRow = (Power, Wanted, bool, Transition, &'static str);

#[test]
fn power_transition_table() {
    use Power::{Hibernated as H, Paused as P, Running as R, Stopped as S};
    use PowerCall::*;
    use Transition::{Call, Nothing, Refuse};
    let shutdown = |force_stop| Call(Shutdown { force_stop }, S);
    const PAUSED: &str = "is paused: VM is paused - cannot shutdown (with force: true it is stopped, or reset)";
    #[rustfmt::skip]
    let rows: &[TransitionRow] = &[
        (R, Wanted::Started, false, Nothing("is already running"), "§16 start: `VM <vmid> already running` fails the task; no call"),
        (R, Wanted::Started, true, Nothing("is already running"), "force does not matter"),
        (P, Wanted::Started, false, Call(Resume, R), "a paused VM runs: start would fail as already running; resume continues it"),
        (P, Wanted::Started, true, Call(Resume, R), "force does not matter"),
        (S, Wanted::Started, false, Call(Start, R), "§16 start: pending changes are applied, then QEMU starts"),
        (S, Wanted::Started, true, Call(Start, R), "force does not matter"),
        (H, Wanted::Started, false, Call(Start, R), "§16 start: the `suspended` lock is the one start accepts; it resumes the saved state"),
        (H, Wanted::Started, true, Call(Start, R), "force does not matter"),
        (R, Wanted::Stopped, false, shutdown(false), "§16 shutdown: after `timeout` the task fails (`VM quit/powerdown failed - got timeout`)"),
        (R, Wanted::Stopped, true, shutdown(true), "§16 shutdown with forceStop: stopped hard after `timeout`"),
        (P, Wanted::Stopped, false, Refuse(PAUSED), "§16 shutdown: PVE refuses a paused VM (`VM is paused - cannot shutdown`) before its task; refused before the call"),
        (P, Wanted::Stopped, true, shutdown(true), "§16 shutdown with forceStop on a paused VM: a stop instead"),
        (S, Wanted::Stopped, false, Nothing("is already stopped"), "§16 shutdown of a stopped VM: OK, nothing done; no call"),
        (S, Wanted::Stopped, true, Nothing("is already stopped"), "force does not matter"),
        (H, Wanted::Stopped, false, Nothing("is already stopped"), "a hibernated VM has no QEMU process: stopped as PVE lists it"),
        (H, Wanted::Stopped, true, Nothing("is already stopped"), "force does not matter"),
        (R, Wanted::Restarted, false, Call(Reboot, R), "§16 reboot: a shutdown then a start, which applies pending changes"),
        (R, Wanted::Restarted, true, Call(Reset, R), "force: a hard reset (§16 reset), the guest is not asked"),
        (P, Wanted::Restarted, false, Refuse(PAUSED), "§16 reboot of a paused VM: refused as shutdown, before the call"),
        (P, Wanted::Restarted, true, Call(Reset, R), "§16 reset only needs QEMU running"),
        (S, Wanted::Restarted, false, Nothing("is not running"), "§16 reboot: `VM <vmid> not running`; upstream reports it unchanged, no call"),
        (S, Wanted::Restarted, true, Nothing("is not running"), "force does not matter (§16 reset: not running either)"),
        (H, Wanted::Restarted, false, Nothing("is not running"), "as stopped"),
        (H, Wanted::Restarted, true, Nothing("is not running"), "as stopped"),
        (R, Wanted::Paused, false, Call(Pause, P), "§16 suspend without todisk: QEMU paused in memory"),
        (R, Wanted::Paused, true, Call(Pause, P), "force does not matter"),
        (P, Wanted::Paused, false, Nothing("is already paused"), "no call"),
        (P, Wanted::Paused, true, Nothing("is already paused"), "force does not matter"),
        (S, Wanted::Paused, false, Refuse("is not running, so it cannot be paused"), "§16 suspend: `VM <vmid> not running`; refused before the call"),
        (S, Wanted::Paused, true, Refuse("is not running, so it cannot be paused"), "force does not matter"),
        (H, Wanted::Paused, false, Refuse("is not running, so it cannot be paused"), "no QEMU process to pause"),
        (H, Wanted::Paused, true, Refuse("is not running, so it cannot be paused"), "force does not matter"),
        (R, Wanted::Hibernated, false, Call(Hibernate, H), "§16 suspend with todisk: the state saved, `lock: suspended` left on the config"),
        (R, Wanted::Hibernated, true, Call(Hibernate, H), "force does not matter"),
        (P, Wanted::Hibernated, false, Call(Hibernate, H), "a paused VM runs: it can be saved to disk"),
        (P, Wanted::Hibernated, true, Call(Hibernate, H), "force does not matter"),
        (H, Wanted::Hibernated, false, Nothing("is already hibernated"), "no call"),
        (H, Wanted::Hibernated, true, Nothing("is already hibernated"), "force does not matter"),
        (S, Wanted::Hibernated, false, Refuse("is not running, so it cannot be hibernated"), "§16 suspend: `VM <vmid> not running`; refused before the call"),
        (S, Wanted::Hibernated, true, Refuse("is not running, so it cannot be hibernated"), "force does not matter"),
    ];
    for current in Power::ALL {
        for wanted in Wanted::ALL {
            for force in [false, true] {
                let matching: Vec<&TransitionRow> =
                    rows.iter().filter(|r| r.0 == current && r.1 == wanted && r.2 == force).collect();
                assert_eq!(matching.len(), 1, "{current:?} -> {wanted:?} (force {force}): one row each");
                let (_, _, _, want, why) = matching[0];
                assert_eq!(
                    transition(current, wanted, force),
                    *want,
                    "{current:?} -> {wanted:?} (force {force}): {why}"
                );
            }
        }
    }
    assert_eq!(rows.len(), 40);
}

#[test]
fn power_calls_send_what_pve_takes() {
    let body = |call: PowerCall| call.body(120);
    assert_eq!(
        body(PowerCall::Shutdown { force_stop: true }),
        vec![("forceStop".to_string(), "1".to_string()), ("timeout".into(), "120".into())]
    );
    assert_eq!(body(PowerCall::Shutdown { force_stop: false })[0], ("forceStop".to_string(), "0".to_string()));
    assert_eq!(body(PowerCall::Reboot), vec![("timeout".to_string(), "120".to_string())]);
    assert_eq!(body(PowerCall::Hibernate), vec![("todisk".to_string(), "1".to_string())]);
    assert!(
        body(PowerCall::Start).is_empty() && body(PowerCall::Reset).is_empty() && body(PowerCall::Pause).is_empty()
    );
    assert_eq!((PowerCall::Pause.verb(), PowerCall::Hibernate.verb()), ("suspend", "suspend"));
    assert_eq!(transition(Power::Running, Wanted::Stopped, false).message(7), "VM 7 is shutting down");
    assert_eq!(
        PowerCall::Shutdown { force_stop: false }.failure(7),
        "stopping of VM 7 failed (with force: true it is stopped hard after the timeout)"
    );
}

#[test]
fn plans_carry_the_writes_and_what_check_mode_predicts() {
    use plan::Write;
    let vm = plan::resource(100, Some("web"), "pve1", "running");
    let cfg = VmConfig {
        current: desired(&[("cores", "2"), ("name", "web")]),
        pending: desired(&[("cores", "4")]),
        ..Default::default()
    };
    // A shutdown: the body as PVE takes it; pending changes apply at the stop (§6, §16).
    let p = params_from(json!({"vmid": 100, "state": "stopped", "force": true, "timeout": 60})).unwrap();
    let Transition::Call(call, next) = transition(Power::Running, Wanted::Stopped, p.force) else { panic!("a call") };
    let plan = plan::power(&vm, &cfg, call, next, &p);
    let body = vec![("forceStop".to_string(), "1".to_string()), ("timeout".into(), "60".into())];
    assert_eq!(plan.write, Write::Power { vm: vm.clone(), call, body, read_back: true });
    assert_eq!((plan.after.get("cores"), plan.after.pending_keys().len()), (Some("4"), 0));
    assert_eq!((plan.prediction.status.as_str(), plan.prediction.pending.len()), ("stopped", 0));
    // With nothing pending, the call leaves the config as read: it is not read back.
    let settled = VmConfig { current: cfg.effective(), ..Default::default() };
    let plan = plan::power(&vm, &settled, PowerCall::Start, Power::Running, &p);
    assert!(matches!(plan.write, Write::Power { read_back: false, .. }), "{:?}", plan.write);
    assert_eq!(plan.after, settled);
    // A hibernation writes `lock: suspended` and `vmstate` (RunState.pm vm_suspend); starting a
    // hibernated VM removes them (QemuServer.pm vm_start_nolock): both are read back.
    let plan = plan::power(&vm, &settled, PowerCall::Hibernate, Power::Hibernated, &p);
    assert!(matches!(plan.write, Write::Power { read_back: true, .. }), "{:?}", plan.write);
    let mut hibernated = settled.clone();
    hibernated.current.insert("lock".into(), "suspended".into());
    hibernated.current.insert("vmstate".into(), "local-lvm:vm-100-state-suspend-2026-12-03".into());
    // ... and a check run's later tasks read the hibernation, its lock included (§37.1)
    assert_eq!(plan.prediction.power.as_deref(), Some("hibernated"));
    assert_eq!(plan.prediction.status_current()["lock"], "suspended");
    assert_eq!(plan.prediction.current.get("lock").map(String::as_str), Some("suspended"));
    let plan = plan::power(&vm, &hibernated, PowerCall::Start, Power::Running, &p);
    assert!(matches!(plan.write, Write::Power { read_back: true, .. }), "{:?}", plan.write);
    assert_eq!(plan.prediction.power.as_deref(), Some("running"));
    assert!(!plan.prediction.current.contains_key("lock") && !plan.prediction.current.contains_key("vmstate"));
    let plan = plan::power(&vm, &settled, PowerCall::Pause, Power::Paused, &p);
    assert_eq!(plan.prediction.status_current(), json!({"status": "running", "qmpstatus": "paused"}));
    // A resume keeps the pending change.
    let plan = plan::power(&vm, &cfg, PowerCall::Resume, Power::Running, &p);
    assert_eq!(plan.after, cfg);

    // Removal: refused while running without force, or while locked (a hibernated VM's lock aside).
    let keep = params_from(json!({"vmid": 100, "state": "absent"})).unwrap();
    let e = plan::remove(&vm, &cfg, Power::Running, &keep).unwrap_err().to_string();
    assert!(e.contains("Stop it before deletion or use force=true"), "{e}");
    let locked = VmConfig { current: desired(&[("lock", "backup")]), ..Default::default() };
    assert!(plan::refuse_locked(&vm, &locked).unwrap_err().to_string().contains("is locked (backup)"));
    let suspended = VmConfig { current: desired(&[("lock", "suspended")]), ..Default::default() };
    assert!(plan::refuse_locked(&vm, &suspended).is_ok());
    let force = params_from(json!({"vmid": 100, "state": "absent", "force": true, "purge": true})).unwrap();
    let plan = plan::remove(&vm, &cfg, Power::Paused, &force).unwrap();
    let query = vec![("purge".to_string(), "1".to_string())];
    assert_eq!(plan.write, Write::Remove { vm: vm.clone(), stop: Some(Vec::new()), query });
    assert!(plan.prediction.removed);

    // A template: a running VM only with force, stopped first.
    let e = plan::template(&vm, &cfg, Power::Running, &keep, &[]).unwrap_err().to_string();
    assert!(e.contains("stop it first or set force: true"), "{e}");
    let plan = plan::template(&vm, &cfg, Power::Running, &force, &[]).unwrap();
    assert_eq!(plan.write, Write::Template { vm: vm.clone(), stop_first: true });
    assert!(plan.prediction.template && plan.after.get("template") == Some("1"));

    // A create without vmid: PVE picks it; check mode predicts it past the ids taken.
    let p = params_from(json!({"node": "pve1", "name": "web02", "cores": 2})).unwrap();
    let plan = plan::create("pve1", &p, vec![100, 101], &[], &[]);
    assert_eq!(plan.auto_vmid, Some(vec![100, 101]));
    let Write::Create { vmid, form, .. } = &plan.write else { panic!("a create") };
    assert_eq!(
        (*vmid, form.clone()),
        (None, vec![("cores".to_string(), "2".to_string()), ("name".into(), "web02".into())])
    );

    // The cloud-init password is sent as given, and predicted masked, as PVE shows it.
    let p = params_from(json!({"vmid": 100, "node": "pve1", "cipassword": "s3cret", "update": true})).unwrap();
    let conv = converge(&VmConfig::from_pairs(&[("name", "web")]), &p.desired);
    let plan = plan::update(&vm, &VmConfig::from_pairs(&[("name", "web")]), &conv.changes, &p, &[], &[]);
    let Write::Config { body, .. } = &plan.write else { panic!("a config write") };
    assert_eq!(body, &vec![("cipassword".to_string(), "s3cret".to_string())]);
    assert_eq!(plan.prediction.current.get("cipassword").map(String::as_str), Some(plan::MASKED));
}

/// A clone's configuring write with a boot order is checked before the clone against the
/// devices the clone will have: the source's applied config (`clone_vm` copies no pending part)
/// and what the write sets (Qemu.pm `update_vm_api`, docs/pve-semantics.md §34.3, §37.2).
#[test]
fn a_clones_boot_order_names_only_devices_the_clone_will_have() {
    use plan::Write;
    let mut source =
        VmConfig::from_pairs(&[("scsi0", "local-lvm:vm-178-disk-0,size=4G"), ("net0", "virtio=BC:24:11:00:00:01")]);
    source.pending.insert("scsi1".into(), "local-lvm:vm-178-disk-1,size=1G".into());
    let clone = |boot: &str| Write::Clone {
        source: plan::resource(178, Some("src"), "pve1", "stopped"),
        newid: Some(252),
        name: "c".into(),
        node: "pve1".into(),
        body: Vec::new(),
        configure: vec![("boot".into(), boot.into()), ("ide2".into(), "none,media=cdrom".into())],
    };
    let ok = |boot: &str| checks::while_writing(&clone(boot), Some(&source));
    assert!(ok("order=scsi0;net0;ide2").is_ok());
    assert_eq!(
        ok("order=scsi0;virtio5").unwrap_err().to_string(),
        "the clone of VM 178 cannot be configured as the task asks (nothing was cloned): boot: invalid bootorder: device 'virtio5' does not exist'"
    );
    // the source's pending disk is not copied
    assert!(ok("order=scsi1").unwrap_err().to_string().contains("device 'scsi1' does not exist"));
}

/// An empty value removes the key (docs/pve-semantics.md §34.4): PVE reads `key=` as the empty
/// string, a value, and removes a key only through `delete`, so the write sends `delete`, the prediction drops the key (pending on a running VM where a
/// delete waits), a VM without the key is no change, and a create does not send it.
#[test]
fn an_empty_value_removes_the_key_with_delete() {
    let vm = plan::resource(100, Some("web"), "pve1", "stopped");
    let live = VmConfig::from_pairs(&[("name", "web"), ("description", "old notes"), ("tags", "a;b"), ("cores", "2")]);
    let p = params_from(json!({"vmid": 100, "node": "pve1", "update": true, "description": "", "tags": [],
                               "cpu": "", "cores": 2}))
    .unwrap();
    let conv = converge(&live, &p.desired);
    assert_eq!(writes(&conv), vec![("description".to_string(), String::new()), ("tags".into(), String::new())]);
    let plan = plan::update(&vm, &live, &conv.changes, &p, &[], &[]);
    let plan::Write::Config { body, .. } = &plan.write else { panic!("a config write") };
    assert_eq!(body, &vec![("delete".to_string(), "description,tags".to_string())]);
    assert_eq!(plan.after.get("description"), None);
    assert_eq!(plan.after.get("name"), Some("web"));
    assert!(plan::drift_line("description", Some("old notes"), "").ends_with("-> (unset)"));

    // On a running VM a removal PVE cannot make live waits, as a `delete` does.
    let running = plan::resource(100, Some("web"), "pve1", "running");
    let p = params_from(json!({"vmid": 100, "node": "pve1", "update": true, "hotplug": ""})).unwrap();
    let hot = VmConfig::from_pairs(&[("hotplug", "network"), ("cores", "2")]);
    let conv = converge(&hot, &p.desired);
    let plan = plan::update(&running, &hot, &conv.changes, &p, &[], &[]);
    assert!(plan.after.pending_delete.contains_key("hotplug"), "{:?}", plan.after);

    // Nothing to remove: no change; a create sends no empty value.
    let p = params_from(json!({"vmid": 100, "node": "pve1", "name": "web", "description": ""})).unwrap();
    assert!(converge(&VmConfig::from_pairs(&[("name", "web")]), &p.desired).is_empty());
    let plan = plan::create("pve1", &p, vec![], &[], &[]);
    let plan::Write::Create { form, .. } = &plan.write else { panic!("a create") };
    assert_eq!(form, &vec![("name".to_string(), "web".to_string())]);
    assert_eq!(plan.after.get("description"), None);
}

/// docs/pve-semantics.md §29: every state × {match, mismatch, vmid only, name only, out of range}
/// at the lookup level. Every state finds its VM with `resolve` (a clone: `clone_source`, then
/// `clone_target`), after `Params` has refused a vmid outside PVE's range.
#[test]
fn identity_table_over_every_state() {
    use module_utils::pve::resources::{resolve, NameOf, VmResource};
    // configs that agree with the listing (a lagging listing: module_utils' resources tests)
    let listed: NameOf = &|vm| Ok(vm.name.clone());
    let vms: Vec<VmResource> = [
        json!({"vmid": 100, "name": "web", "node": "pve1", "type": "qemu", "status": "running"}),
        json!({"vmid": 150, "name": "data-vm", "node": "pve1", "type": "qemu", "status": "stopped"}),
        json!({"vmid": 9000, "name": "tmpl", "node": "pve1", "type": "qemu", "status": "stopped", "template": 1}),
    ]
    .iter()
    .filter_map(VmResource::from_json)
    .collect();
    let refused = "; refusing to act on another VM";
    // (vmid, name) → the VM found, or the message
    type Found = std::result::Result<Option<u64>, String>;
    let cases: [(Option<i64>, Option<&str>, Found); 7] = [
        (Some(150), Some("data-vm"), Ok(Some(150))),
        (Some(150), Some("web"), Err(format!("vmid 150 is VM 'data-vm', not 'web' (name){refused}"))),
        (
            Some(1500),
            Some("data-vm"),
            Err(format!("vmid 1500 does not exist, but 'data-vm' (name) is vmid 150{refused}")),
        ),
        (Some(150), None, Ok(Some(150))),
        (None, Some("data-vm"), Ok(Some(150))),
        (Some(0), Some("data-vm"), Err("vmid must be between 100 and 999999999, got 0".into())),
        (Some(1_000_000_000), None, Err("vmid must be between 100 and 999999999, got 1000000000".into())),
    ];
    let states =
        ["present", "absent", "stopped", "started", "restarted", "current", "template", "paused", "hibernated"];
    for state in states {
        for (vmid, name, want) in &cases {
            let mut args = json!({"state": state, "node": "pve1"});
            if let Some(v) = vmid {
                args["vmid"] = json!(v);
            }
            if let Some(n) = name {
                args["name"] = json!(n);
            }
            let got = params_from(args).map_err(|e| e.to_string()).and_then(|p| {
                resolve(&vms, p.vmid, p.name.as_deref(), listed).map(|vm| vm.map(|v| v.vmid)).map_err(|e| e.to_string())
            });
            assert_eq!(&got, want, "{state} {vmid:?} {name:?}");
        }
    }
    // A clone: the source (vmid, clone) and the target (newid, name).
    let source = |vmid: Option<u64>, clone: &str| plan::clone_source(&vms, vmid, clone, listed).map(|v| v.vmid);
    assert_eq!(source(Some(9000), "tmpl").unwrap(), 9000);
    assert_eq!(source(Some(9000), "arbitrary_name").unwrap(), 9000, "community.proxmox's placeholder");
    assert_eq!(source(None, "tmpl").unwrap(), 9000);
    assert_eq!(
        source(Some(9000), "data-vm").unwrap_err().to_string(),
        format!("vmid 9000 is VM 'tmpl', not 'data-vm' (clone){refused}")
    );
    let tmpl = &vms[2];
    let target = |newid, name| plan::clone_target(&vms, tmpl, newid, name, listed).map(|t| t.map(|t| t.vmid));
    assert_eq!(target(Some(150), Some("data-vm")).unwrap(), Some(150));
    assert_eq!(target(Some(120), Some("new")).unwrap(), None);
    assert_eq!(target(None, Some("web")).unwrap(), Some(100));
    assert_eq!(
        target(Some(150), Some("c2")).unwrap_err().to_string(),
        format!("newid 150 is VM 'data-vm', not 'c2' (name){refused}")
    );
    assert_eq!(
        target(Some(122), Some("web")).unwrap_err().to_string(),
        format!("newid 122 does not exist, but 'web' (name) is vmid 100{refused}")
    );
    // the source is never the target
    assert_eq!(target(None, Some("tmpl")).unwrap(), None);
    for (opt, v) in [("newid", 0), ("newid", 99)] {
        let args = json!({"clone": "tmpl", "node": "pve1", "name": "c", opt: v});
        assert_eq!(
            params_from(args).unwrap_err().to_string(),
            format!("{opt} must be between 100 and 999999999, got {v}")
        );
    }
}

/// docs/pve-semantics.md §29.5: `cipassword` is compared with what PVE stores, put in place of
/// its `**********` by `with_stored_password`; what cannot be compared is not rewritten.
#[test]
fn cipassword_compares_with_the_stored_hash() {
    let stored = module_utils::pve::cipassword::sha256_crypt("old", "$5$abcdefgh").unwrap();
    assert!(scalar_equal("cipassword", Some(&stored), "old"));
    assert!(!scalar_equal("cipassword", Some(&stored), "new"));
    assert!(!scalar_equal("cipassword", None, "new"));
    assert!(scalar_equal("cipassword", Some("**********"), "new"));
    let config = VmConfig { current: desired(&[("cipassword", &stored)]), ..VmConfig::default() };
    let conv = converge(&config, &desired(&[("cipassword", "new")]));
    assert_eq!(writes(&conv), [("cipassword".to_string(), "new".to_string())]);
    assert!(converge(&config, &desired(&[("cipassword", "old")])).changes.is_empty());
}

/// A CD-ROM drive and a boot order in one task: `boot` goes in a second write, after the drive,
/// so the order asked for is stored whatever order PVE walks the keys in; a CD-ROM alone predicts
/// PVE's append to the applied order (Qemu.pm `update_vm_api`, docs/pve-semantics.md §46).
#[test]
fn a_cdrom_with_a_boot_order_sends_boot_last_and_a_cdrom_alone_predicts_the_append() {
    let vm = plan::resource(160, Some("cd"), "pve1", "stopped");
    let live = VmConfig::from_pairs(&[("boot", "order=scsi0;net0"), ("scsi0", "local-lvm:vm-160-disk-0,size=1G")]);
    let cd = "isos:iso/debian-13-netinst.iso,media=cdrom";
    let p = params_from(json!({"vmid": 160, "node": "pve1", "update": true, "ide": {"ide3": cd},
                               "boot": "order=ide3;scsi0;net0"}))
    .unwrap();
    let plan = plan::update(&vm, &live, &converge(&live, &p.desired).changes, &p, &[], &[]);
    let plan::Write::Config { body, boot_after, .. } = &plan.write else { panic!("a config write") };
    assert!(*boot_after);
    let (first, second) = plan::boot_last(body, *boot_after);
    assert!(first.iter().all(|(k, _)| k != "boot") && first.iter().any(|(k, _)| k == "ide3"));
    assert_eq!(second, Some(vec![("boot".to_string(), "order=ide3;scsi0;net0".to_string())]));
    assert_eq!(plan.after.get("boot"), Some("order=ide3;scsi0;net0"));
    let requests = checks::requests(&plan.write, 160);
    assert_eq!(requests.len(), 2, "two PUTs, the boot order last");
    // the drive alone: PVE appends it, predicted
    let p = params_from(json!({"vmid": 160, "node": "pve1", "update": true, "ide": {"ide3": cd}})).unwrap();
    let plan = plan::update(&vm, &live, &converge(&live, &p.desired).changes, &p, &[], &[]);
    let plan::Write::Config { boot_after, .. } = &plan.write else { panic!("a config write") };
    assert!(!*boot_after);
    assert_eq!(plan.after.get("boot"), Some("order=scsi0;net0;ide3"));
}

/// A config write to a stopped VM applies the pending changes it finds too (Qemu.pm
/// `update_vm_api` ends with `vmconfig_apply_pending` while a pending section remains), whether
/// the write sets a key, deletes one or reverts one; a running VM keeps them pending.
#[test]
fn a_write_to_a_stopped_vm_applies_the_pending_changes_it_finds() {
    let mut config = VmConfig::from_pairs(&[("memory", "1024"), ("tags", "web"), ("onboot", "1")]);
    config.pending.insert("memory".into(), "8192".into());
    config.pending_delete.insert("onboot".into(), false);
    let tags = vec![Change { key: "tags".into(), before: Some("web".into()), after: "db".into() }];
    let stopped = predict(&config, &tags, false);
    assert!(stopped.pending_keys().is_empty());
    assert_eq!(stopped.current.get("memory").map(String::as_str), Some("8192"));
    assert_eq!(stopped.current.get("onboot"), None);
    let running = predict(&config, &tags, true);
    assert_eq!(running.pending_keys().into_iter().collect::<Vec<_>>(), vec!["memory", "onboot"]);
    for task in [
        json!({"vmid": 100, "node": "pve1", "delete": "tags"}),
        json!({"vmid": 100, "node": "pve1", "revert": "memory"}),
    ] {
        let vm = plan::resource(100, Some("web"), "pve1", "stopped");
        let p = params_from(task).unwrap();
        let plan = plan::delete_or_revert(&vm, &config, &p).plan.unwrap();
        assert!(plan.after.pending_keys().is_empty(), "{:?}", plan.after);
    }
}
