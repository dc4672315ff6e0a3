//! Unit tests of `devices`.

use super::*;

#[test]
fn config_text_is_sorted_naturally_without_digest() {
    let m: serde_json::Map<String, Value> = serde_json::from_value(serde_json::json!({
        "net10": "virtio=BC:24:11:00:00:0A", "net2": "e1000", "cores": 2, "digest": "abc", "description": "a\nb"
    }))
    .unwrap();
    assert_eq!(config_text(&m), "cores: 2\ndescription: a\\nb\nnet2: e1000\nnet10: virtio=BC:24:11:00:00:0A\n");
}

use serde_json::json;

#[test]
fn key_classification() {
    let nics = ["net0", "net9", "net10", "net31"];
    let not_nics = ["net", "net32", "net-1", "net01", "netx", "NET0", "net0a", "ipconfig0", ""];
    for k in nics {
        assert!(is_nic_key(k), "{k}");
        assert!(std::ptr::eq(format_for_key(k).unwrap(), &NET));
    }
    for k in not_nics {
        assert!(!is_nic_key(k), "{k}");
    }
    let disks: &[(&str, &str)] = &[
        ("ide0", "ide"),
        ("ide3", "ide"),
        ("sata5", "sata"),
        ("scsi0", "scsi"),
        ("scsi30", "scsi"),
        ("virtio15", "virtio"),
        ("efidisk0", "efidisk"),
        ("tpmstate0", "tpmstate"),
        ("unused0", "unused"),
        ("unused255", "unused"),
    ];
    for (k, bus) in disks {
        assert_eq!(disk_bus(k), Some(*bus), "{k}");
        assert!(is_disk_key(k));
    }
    for k in [
        "ide4",
        "sata6",
        "scsi31",
        "virtio16",
        "efidisk1",
        "tpmstate1",
        "unused256",
        "scsi",
        "scsi00",
        "net0",
        "scsihw",
        "99999999999999",
    ] {
        assert!(!is_disk_key(k), "{k}");
    }
    assert!(std::ptr::eq(format_for_key("scsi0").unwrap(), &DRIVE));
    assert!(std::ptr::eq(format_for_key("efidisk0").unwrap(), &EFIDISK));
    assert!(std::ptr::eq(format_for_key("tpmstate0").unwrap(), &TPMSTATE));
    assert!(std::ptr::eq(format_for_key("unused7").unwrap(), &UNUSED));
    assert!(std::ptr::eq(format_for_key("agent").unwrap(), &AGENT));
    assert!(format_for_key("name").is_none());
}

#[test]
fn natural_order() {
    let mut keys = vec!["net10", "net2", "net1", "scsi10", "ide2", "scsi9", "efidisk0"];
    keys.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(keys, ["efidisk0", "ide2", "net1", "net2", "net10", "scsi9", "scsi10"]);
}

#[test]
fn nic_from_canonical_and_long_forms() {
    let n = Nic::parse("net0", "virtio=BC:24:11:5A:8E:BE,bridge=vmbr0,firewall=1,tag=10");
    assert_eq!(
        n.to_json(),
        json!({
            "interface": "net0", "model": "virtio", "mac": "BC:24:11:5A:8E:BE",
            "bridge": "vmbr0", "tag": 10, "trunks": null, "firewall": true,
            "link_down": false, "mtu": null, "queues": null, "rate": null, "other": {}
        })
    );
    let keys: Vec<String> = n.to_json().as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "interface",
            "model",
            "mac",
            "bridge",
            "tag",
            "trunks",
            "firewall",
            "link_down",
            "mtu",
            "queues",
            "rate",
            "other"
        ]
    );
    let long = Nic::parse(
        "net1",
        "model=e1000,macaddr=bc:24:11:00:00:01,link_down=yes,rate=10.0,trunks=10;20-30,mtu=1500,queues=4,host-tunnel=1",
    );
    assert_eq!(long.model.as_deref(), Some("e1000"));
    assert_eq!(long.mac.as_deref(), Some("BC:24:11:00:00:01"));
    assert!(long.link_down);
    assert!(!long.firewall);
    assert_eq!(long.rate, Some(10.0));
    assert_eq!(long.trunks.as_deref(), Some("10;20-30"));
    assert_eq!((long.mtu, long.queues), (Some(1500), Some(4)));
    assert_eq!(long.other.get("host-tunnel").map(String::as_str), Some("1"));
    // A value that does not fit its field is kept in `other`, not lost.
    let odd = Nic::parse("net2", "virtio,tag=x,newkey=1");
    assert_eq!(odd.tag, None);
    assert_eq!(odd.other.get("tag").map(String::as_str), Some("x"));
    assert_eq!(odd.other.get("newkey").map(String::as_str), Some("1"));
    let broken = Nic::parse("net3", "virtio,virtio");
    assert_eq!(broken.model, None);
    assert_eq!(broken.other.get("unparsed").map(String::as_str), Some("virtio,virtio"));
    assert!(Nic::parse_strict("net0", "virtio,tag=x").is_err());
    assert!(Nic::parse_strict("net0", "virtio,tag=5").is_ok());
}

#[test]
fn disks_from_every_form() {
    struct Case {
        key: &'static str,
        value: &'static str,
        storage: Option<&'static str>,
        size: Option<&'static str>,
        bytes: Option<u64>,
        format: Option<&'static str>,
        media: &'static str,
        other: &'static [(&'static str, &'static str)],
    }
    let cases = [
        Case {
            key: "scsi0",
            value: "local-lvm:vm-100-disk-0,discard=on,iothread=1,size=32G",
            storage: Some("local-lvm"),
            size: Some("32G"),
            bytes: Some(32 << 30),
            format: None,
            media: "disk",
            other: &[("discard", "on"), ("iothread", "1")],
        },
        Case {
            key: "ide2",
            value: "local:iso/debian.iso,media=cdrom,size=650M",
            storage: Some("local"),
            size: Some("650M"),
            bytes: Some(650 << 20),
            format: None,
            media: "cdrom",
            other: &[],
        },
        Case {
            key: "ide2",
            value: "none,media=cdrom",
            storage: None,
            size: None,
            bytes: None,
            format: None,
            media: "cdrom",
            other: &[],
        },
        Case {
            key: "sata0",
            value: "cdrom,media=cdrom",
            storage: None,
            size: None,
            bytes: None,
            format: None,
            media: "cdrom",
            other: &[],
        },
        Case {
            key: "virtio0",
            value: "vmdata:100/vm-100-disk-0.qcow2,size=10G",
            storage: Some("vmdata"),
            size: Some("10G"),
            bytes: Some(10 << 30),
            format: Some("qcow2"),
            media: "disk",
            other: &[],
        },
        // a qcow2 LV of an LVM storage with snapshot-as-volume-chain (LVMPlugin.pm parse_volname)
        Case {
            key: "scsi2",
            value: "san:vm-100-disk-2.qcow2,size=1G",
            storage: Some("san"),
            size: Some("1G"),
            bytes: Some(1 << 30),
            format: Some("qcow2"),
            media: "disk",
            other: &[],
        },
        Case {
            key: "virtio1",
            value: "vmdata:100/vm-100-disk-1.raw,format=raw",
            storage: Some("vmdata"),
            size: None,
            bytes: None,
            format: Some("raw"),
            media: "disk",
            other: &[],
        },
        Case {
            key: "sata1",
            value: "/dev/disk/by-id/ata-X,backup=0",
            storage: None,
            size: None,
            bytes: None,
            format: None,
            media: "disk",
            other: &[("backup", "0")],
        },
        Case {
            key: "scsi1",
            value: "local-lvm:32",
            storage: Some("local-lvm"),
            size: None,
            bytes: None,
            format: None,
            media: "disk",
            other: &[],
        },
        Case {
            key: "scsi2",
            value: "local-lvm:0,import-from=local:import/debian.qcow2",
            storage: Some("local-lvm"),
            size: None,
            bytes: None,
            format: None,
            media: "disk",
            other: &[("import-from", "local:import/debian.qcow2")],
        },
        Case {
            key: "efidisk0",
            value: "local-lvm:vm-100-disk-0,efitype=4m,pre-enrolled-keys=1,size=4M",
            storage: Some("local-lvm"),
            size: Some("4M"),
            bytes: Some(4 << 20),
            format: None,
            media: "disk",
            other: &[("efitype", "4m"), ("pre-enrolled-keys", "1")],
        },
        Case {
            key: "tpmstate0",
            value: "local-lvm:vm-100-disk-2,size=4M,version=v2.0",
            storage: Some("local-lvm"),
            size: Some("4M"),
            bytes: Some(4 << 20),
            format: None,
            media: "disk",
            other: &[("version", "v2.0")],
        },
        Case {
            key: "unused0",
            value: "vmdata:100/vm-100-disk-3.vmdk",
            storage: Some("vmdata"),
            size: None,
            bytes: None,
            format: Some("vmdk"),
            media: "disk",
            other: &[],
        },
    ];
    for c in cases {
        let d = Disk::parse(c.key, c.value).unwrap();
        let want_volume = c.value.split(',').next().unwrap();
        assert_eq!(d.volume.as_deref(), Some(want_volume), "{}", c.value);
        assert_eq!(d.storage.as_deref(), c.storage, "{}", c.value);
        assert_eq!(d.size.as_deref(), c.size, "{}", c.value);
        assert_eq!(d.size_bytes, c.bytes, "{}", c.value);
        assert_eq!(d.format.as_deref(), c.format, "{}", c.value);
        assert_eq!(d.media, c.media, "{}", c.value);
        let other: Vec<(&str, &str)> = d.other.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(other, c.other, "{}", c.value);
    }
    let d = Disk::parse("scsi0", "local-lvm:vm-100-disk-0,size=32G").unwrap();
    assert_eq!(
        d.to_json(),
        json!({
            "key": "scsi0", "bus": "scsi", "storage": "local-lvm",
            "volume": "local-lvm:vm-100-disk-0", "size": "32G", "size_bytes": 34359738368u64,
            "format": null, "media": "disk", "other": {}
        })
    );
    assert!(Disk::parse("net0", "virtio").is_none());
}

#[test]
fn new_disk_allocation_form() {
    assert_eq!(parse_new_disk("local-lvm:32"), Some((Some("local-lvm"), "32")));
    assert_eq!(parse_new_disk("local-lvm:0.5"), Some((Some("local-lvm"), "0.5")));
    assert_eq!(parse_new_disk("local-lvm:0"), Some((Some("local-lvm"), "0")));
    assert_eq!(parse_new_disk("32"), Some((None, "32")));
    for no in [
        "local-lvm:vm-100-disk-0",
        "local:iso/x.iso",
        "none",
        "/dev/sdb",
        ":32",
        "a/b:32",
        "local-lvm:32G",
        "local-lvm:.5",
        "local-lvm:5.",
        "",
    ] {
        assert_eq!(parse_new_disk(no), None, "{no}");
    }
}

/// qemu-server `API2/Qemu.pm` `create_disks`: a volume id whose volume name is `cloudinit`
/// allocates a cloud-init drive; an existing cloud-init volume, a bare `cloudinit` or a storage id
/// `parse_volume_id` refuses is none.
#[test]
fn new_cloudinit_allocation_form() {
    assert_eq!(parse_new_cloudinit("local-lvm:cloudinit"), Some("local-lvm"));
    for no in [
        "cloudinit",
        "local-lvm:vm-100-cloudinit",
        "local:100/vm-100-cloudinit.qcow2",
        ":cloudinit",
        "a b:cloudinit",
        "1x:cloudinit",
        "local-lvm:cloudinit.qcow2",
        "local-lvm:32",
        "",
    ] {
        assert_eq!(parse_new_cloudinit(no), None, "{no}");
    }
}

#[test]
fn config_lists_sorted_and_lenient_about_json_types() {
    let config = json!({
        "name": "web", "cores": 2, "memory": "2048",
        "net10": "e1000=BC:24:11:00:00:0A,bridge=vmbr1",
        "net2": "virtio=BC:24:11:00:00:02,bridge=vmbr0",
        "net0": "virtio=BC:24:11:00:00:00,bridge=vmbr0,firewall=1",
        "scsi10": "local-lvm:vm-100-disk-2,size=1G",
        "scsi2": "local-lvm:vm-100-disk-1,size=2G",
        "ide2": "none,media=cdrom",
        "unused0": "local-lvm:vm-100-disk-9",
        "efidisk0": "local-lvm:vm-100-disk-0,efitype=4m,size=4M",
        "scsihw": "virtio-scsi-single",
        "digest": "abc",
        "virtio0": 5,
        "sata0": null
    });
    let config = config.as_object().unwrap();
    let nics: Vec<String> = parse_config_nics(config).into_iter().map(|n| n.interface).collect();
    assert_eq!(nics, ["net0", "net2", "net10"]);
    let disks: Vec<Disk> = parse_config_disks(config);
    let keys: Vec<&str> = disks.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(keys, ["efidisk0", "ide2", "scsi2", "scsi10", "unused0", "virtio0"]);
    // A number where a string was expected is read as its text.
    assert_eq!(disks[5].volume.as_deref(), Some("5"));
    assert_eq!(config_value_text(&json!(1.5)).as_deref(), Some("1.5"));
    assert_eq!(config_value_text(&json!(true)).as_deref(), Some("1"));
    assert_eq!(config_value_text(&json!(null)), None);
}

#[test]
fn numeric_keys_become_numbers_others_stay_strings() {
    assert_eq!(config_json_value("cores", "2"), Value::from(2));
    assert_eq!(config_json_value("onboot", "1"), Value::from(1));
    assert_eq!(config_json_value("memory", "2048"), Value::from("2048"));
    assert_eq!(config_json_value("name", "123"), Value::from("123"));
}

#[test]
fn a_second_cloud_init_drive_is_refused_as_create_disks_refuses_it() {
    // Qemu.pm create_disks with QemuConfig.pm has_cloudinit (docs/pve-semantics.md §42.2)
    let config = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    let current = config(&[("ide2", "local-lvm:vm-100-cloudinit,media=cdrom"), ("scsi0", "local-lvm:vm-100-disk-0")]);
    let none = BTreeMap::new();
    assert_eq!(
        second_cloudinit([("ide3", "local-lvm:cloudinit")], &current, &none).as_deref(),
        Some("ide3 - cloud-init drive is already attached at 'ide2'")
    );
    // an existing cloud-init volume attached at another key
    assert_eq!(
        second_cloudinit([("sata1", "local-lvm:vm-100-cloudinit,media=cdrom")], &current, &none).as_deref(),
        Some("sata1 - cloud-init drive is already attached at 'ide2'")
    );
    // the same key again, another drive, or the first one: accepted
    assert_eq!(second_cloudinit([("ide2", "local-lvm:cloudinit")], &current, &none), None);
    assert_eq!(second_cloudinit([("scsi1", "local-lvm:4")], &current, &none), None);
    assert_eq!(second_cloudinit([("ide2", "local-lvm:cloudinit")], &none, &none), None);
    // pending, and two in one request (the later key in sorted order is refused)
    let pending = config(&[("ide0", "local-lvm:vm-100-cloudinit.qcow2,media=cdrom")]);
    assert_eq!(
        second_cloudinit([("ide3", "local-lvm:cloudinit")], &none, &pending).as_deref(),
        Some("ide3 - cloud-init drive is already attached at 'ide0'")
    );
    assert_eq!(
        second_cloudinit([("scsi5", "local-lvm:cloudinit"), ("ide3", "nfs:cloudinit")], &none, &none).as_deref(),
        Some("scsi5 - cloud-init drive is already attached at 'ide3'")
    );
}
