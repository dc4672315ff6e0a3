//! Unit tests of `propstring`.

use super::*;

static NO_DEFAULT: Format =
    Format { name: "test", default_key: None, keys: &[KeyDef::boolean("enabled")], aliases: &[], key_alias: None };

fn p(format: &'static Format, s: &str) -> PropertyString {
    PropertyString::parse(format, s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// (format, input, canonical print): every form of docs/pve-semantics.md §8-§10 and §20.
const ROUND_TRIPS: &[(&Format, &str, &str)] = &[
    // §20.1 / §9 net
    (
        &NET,
        "virtio=BC:24:11:5A:8E:BE,bridge=vmbr0,firewall=1,tag=10",
        "virtio=BC:24:11:5A:8E:BE,bridge=vmbr0,firewall=1,tag=10",
    ),
    (&NET, "virtio=BC:24:11:00:00:01", "virtio=BC:24:11:00:00:01"),
    (&NET, "model=virtio,macaddr=bc:24:11:00:00:01,bridge=vmbr0", "virtio=BC:24:11:00:00:01,bridge=vmbr0"),
    (&NET, "virtio,bridge=vmbr0", "virtio,bridge=vmbr0"),
    (&NET, "bridge=vmbr0,model=e1000", "e1000,bridge=vmbr0"),
    (&NET, "e1000-82540em=BC:24:11:00:00:02,bridge=vmbr1", "e1000-82540em=BC:24:11:00:00:02,bridge=vmbr1"),
    (
        &NET,
        "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=yes,link_down=off",
        "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1,link_down=0",
    ),
    (&NET, "virtio=BC:24:11:00:00:01,firewall=ON,link_down=True", "virtio=BC:24:11:00:00:01,firewall=1,link_down=1"),
    (&NET, "virtio=BC:24:11:00:00:01,bridge=vmbr0,rate=10.0", "virtio=BC:24:11:00:00:01,bridge=vmbr0,rate=10.0"),
    (
        &NET,
        "virtio=BC:24:11:00:00:01,bridge=vmbr0,trunks=10;20-30",
        "virtio=BC:24:11:00:00:01,bridge=vmbr0,trunks=10;20-30",
    ),
    (
        &NET,
        "virtio=BC:24:11:00:00:01,bridge=vmbr0,mtu=1,queues=4",
        "virtio=BC:24:11:00:00:01,bridge=vmbr0,mtu=1,queues=4",
    ),
    (&NET, "vmxnet3=BC:24:11:00:00:03,host-tunnel=1", "vmxnet3=BC:24:11:00:00:03,host-tunnel=1"),
    // §20.2 drives, §8 allocation, §10 sizes
    (
        &DRIVE,
        "local-lvm:vm-100-disk-0,discard=on,iothread=1,size=32G",
        "local-lvm:vm-100-disk-0,discard=on,iothread=1,size=32G",
    ),
    (
        &DRIVE,
        "local-lvm:vm-100-disk-1,cache=writeback,discard=on,iothread=1,size=32G",
        "local-lvm:vm-100-disk-1,cache=writeback,discard=on,iothread=1,size=32G",
    ),
    (&DRIVE, "local:iso/debian.iso,media=cdrom,size=650M", "local:iso/debian.iso,media=cdrom,size=650M"),
    (&DRIVE, "none,media=cdrom", "none,media=cdrom"),
    (&DRIVE, "cdrom,media=cdrom", "cdrom,media=cdrom"),
    (&DRIVE, "/dev/disk/by-id/ata-X,backup=0", "/dev/disk/by-id/ata-X,backup=0"),
    (&DRIVE, "vmdata:100/vm-100-disk-0.qcow2,size=32768M", "vmdata:100/vm-100-disk-0.qcow2,size=32G"),
    (&DRIVE, "local-lvm:vm-100-disk-0,size=4194304K", "local-lvm:vm-100-disk-0,size=4G"),
    (&DRIVE, "local-lvm:vm-100-disk-0,size=1025K", "local-lvm:vm-100-disk-0,size=1025K"),
    (&DRIVE, "local-lvm:vm-100-disk-0,size=1T", "local-lvm:vm-100-disk-0,size=1T"),
    (&DRIVE, "local-lvm:vm-100-disk-0,size=512", "local-lvm:vm-100-disk-0,size=512"),
    (&DRIVE, "local-lvm:vm-100-disk-0,size=0.5G", "local-lvm:vm-100-disk-0,size=512M"),
    (&DRIVE, "local-lvm:32", "local-lvm:32"),
    (&DRIVE, "local-lvm:0.5,format=raw", "local-lvm:0.5,format=raw"),
    (
        &DRIVE,
        "local-lvm:10,iothread=1,discard=on,cache=writeback",
        "local-lvm:10,cache=writeback,discard=on,iothread=1",
    ),
    (&DRIVE, "local-lvm:0,import-from=local:import/debian.qcow2", "local-lvm:0,import-from=local:import/debian.qcow2"),
    (
        &DRIVE,
        "local-lvm:0,import-from=/var/lib/vz/images/disk.raw",
        "local-lvm:0,import-from=/var/lib/vz/images/disk.raw",
    ),
    (&DRIVE, "file=local-lvm:vm-100-disk-0,ssd=yes", "local-lvm:vm-100-disk-0,ssd=1"),
    (&DRIVE, "volume=local-lvm:vm-100-disk-0,bps_rd_length=5", "local-lvm:vm-100-disk-0,bps_rd_max_length=5"),
    (
        &DRIVE,
        "local-lvm:vm-100-disk-0,iops_wr_length=2,bps_wr_length=3,iops_rd_length=4",
        "local-lvm:vm-100-disk-0,bps_wr_max_length=3,iops_rd_max_length=4,iops_wr_max_length=2",
    ),
    (
        &DRIVE,
        "local-lvm:vm-100-disk-0,mbps_rd=10.5,replicate=no,shared=0",
        "local-lvm:vm-100-disk-0,mbps_rd=10.5,replicate=0,shared=0",
    ),
    (
        &DRIVE,
        "local-lvm:vm-100-disk-0,wwn=0x5000c500a0b1c2d3,serial=abc%20def",
        "local-lvm:vm-100-disk-0,serial=abc%20def,wwn=0x5000c500a0b1c2d3",
    ),
    (
        &DRIVE,
        "local-lvm:vm-100-disk-0,scsiblock=0,queues=4,product=QEMU,vendor=PVE",
        "local-lvm:vm-100-disk-0,product=QEMU,queues=4,scsiblock=0,vendor=PVE",
    ),
    (&DRIVE, "local-lvm:base-100-disk-0,size=8G", "local-lvm:base-100-disk-0,size=8G"),
    (&DRIVE, "local-lvm:vm-100-cloudinit,media=cdrom", "local-lvm:vm-100-cloudinit,media=cdrom"),
    // §20.3 / §20.4 / §20.5
    (
        &EFIDISK,
        "local-lvm:vm-100-disk-0,efitype=4m,pre-enrolled-keys=1,size=4M",
        "local-lvm:vm-100-disk-0,efitype=4m,pre-enrolled-keys=1,size=4M",
    ),
    (&EFIDISK, "local:100/vm-100-disk-0.raw,efitype=4m,size=528K", "local:100/vm-100-disk-0.raw,efitype=4m,size=528K"),
    (
        &EFIDISK,
        "local-lvm:1,efitype=4m,ms-cert=2023,pre-enrolled-keys=yes",
        "local-lvm:1,efitype=4m,ms-cert=2023,pre-enrolled-keys=1",
    ),
    (&TPMSTATE, "local-lvm:vm-100-disk-2,size=4M,version=v2.0", "local-lvm:vm-100-disk-2,size=4M,version=v2.0"),
    (&TPMSTATE, "local-lvm:1,version=v2.0", "local-lvm:1,version=v2.0"),
    (&TPMSTATE, "volume=local-lvm:0,import-from=local:100/tpm.raw", "local-lvm:0,import-from=local:100/tpm.raw"),
    (&UNUSED, "local-lvm:vm-100-disk-1", "local-lvm:vm-100-disk-1"),
    (&UNUSED, "file=vmdata:100/vm-100-disk-3.qcow2", "vmdata:100/vm-100-disk-3.qcow2"),
    // §20.6
    (&AGENT, "1", "1"),
    (&AGENT, "enabled=1,fstrim_cloned_disks=1", "1,fstrim_cloned_disks=1"),
    (&AGENT, "yes,type=isa,freeze-fs=0", "1,freeze-fs-on-backup=0,type=isa"),
    (&MEMORY, "2048", "2048"),
    (&MEMORY, "current=4096", "4096"),
];

#[test]
fn round_trips_print_canonically() {
    for (format, input, canonical) in ROUND_TRIPS {
        let a = p(format, input);
        let printed = a.to_string();
        assert_eq!(&printed, canonical, "print of {input}");
        let b = p(format, &printed);
        assert!(a.semantically_equal(&b), "{input} -> {printed}");
        assert_eq!(b.to_string(), printed, "print is a fixed point for {input}");
    }
}

#[test]
fn key_alias_expands_to_model_and_macaddr() {
    let n = p(&NET, "virtio=bc:24:11:00:00:01,bridge=vmbr0");
    assert_eq!(n.get("model"), Some("virtio"));
    assert_eq!(n.get("macaddr"), Some("BC:24:11:00:00:01"));
    assert_eq!(n.keys().collect::<Vec<_>>(), ["model", "macaddr", "bridge"]);
    let d = p(&DRIVE, "volume=local:iso/x.iso,media=cdrom");
    assert_eq!(d.get("file"), Some("local:iso/x.iso"));
    assert_eq!(d.get("volume"), Some("local:iso/x.iso"));
}

#[test]
fn errors_use_pve_wording_and_quote_the_input() {
    let cases: &[(&Format, &str, &str)] = &[
        (&NET, "virtio=BC:24:11:00:00:01,e1000=BC:24:11:00:00:02", "key alias 'model' is already defined"),
        (&NET, "model=virtio,virtio=BC:24:11:00:00:01", "key alias 'model' is already defined"),
        (&NET, "virtio,bridge=vmbr0,bridge=vmbr1", "duplicate key in comma-separated list property: bridge"),
        (&NET, "virtio,e1000", "duplicate key in comma-separated list property: model"),
        (
            &NET,
            "virtio=BC:24:11:00:00:01,macaddr=BC:24:11:00:00:02",
            "duplicate key in comma-separated list property: macaddr",
        ),
        (&NET, "macaddr=BC:24:11:00:00:02,virtio=BC:24:11:00:00:01", "key 'macaddr' is already defined (via alias)"),
        (&NET, "virtio,colour=blue", "invalid key in comma-separated list property: colour"),
        (&NET, "bridge=vmbr0", "model: property is missing and it is not optional"),
        (&NET, "virtio,firewall=maybe", "firewall: type check ('boolean') failed - got 'maybe'"),
        (&NET, "virtio,tag=0", "tag: value must have a minimum value of 1"),
        (&NET, "virtio,tag=4095", "tag: value must have a maximum value of 4094"),
        (&NET, "virtio,tag=ten", "tag: type check ('integer') failed - got 'ten'"),
        (&NET, "virtio,rate=fast", "rate: type check ('number') failed - got 'fast'"),
        (&NET, "virtio=01:00:00:00:00:00", "macaddr: value does not look like a valid unicast MAC address"),
        (&NET, "rtl8029", "model: value 'rtl8029' does not have a value in the enumeration"),
        (&NET, "virtio,trunks=10,20", "duplicate key in comma-separated list property: model"),
        (&NO_DEFAULT, "1", "value without key, but schema does not define a default key"),
        (&DRIVE, "local:x,file=local:y", "duplicate key in comma-separated list property: file"),
        (&DRIVE, "file=local:y,volume=local:x", "key 'file' is already defined (via alias)"),
        (&DRIVE, "local:x,size=32g", "size: value does not look like a valid disk size: 32g"),
        (&DRIVE, "local:x,discard=off", "discard: value 'off' does not have a value in the enumeration 'ignore, on'"),
        (&DRIVE, "local:x,size=", "missing key in comma-separated list property"),
        (&DRIVE, "local:x,=1", "missing key in comma-separated list property"),
        (&DRIVE, "", "empty value"),
        (&AGENT, "type=isa", "enabled: property is missing and it is not optional"),
        (&UNUSED, "local:x,media=cdrom", "invalid key in comma-separated list property: media"),
    ];
    for (format, input, want) in cases {
        match PropertyString::parse(format, input) {
            Err(Error::Args(msg)) => {
                assert!(msg.contains(want), "{input}: {msg}");
                assert!(msg.contains(&format!("'{input}'")), "{input}: {msg}");
            }
            other => panic!("{input}: {other:?}"),
        }
    }
}

#[test]
fn lenient_parse_keeps_unknown_keys_and_bad_values() {
    let n = PropertyString::parse_lenient(&NET, "virtio=BC:24:11:00:00:01,future-key=x,tag=abc").unwrap();
    assert_eq!(n.get("future-key"), Some("x"));
    assert_eq!(n.get("tag"), Some("abc"));
    assert_eq!(n.to_string(), "virtio=BC:24:11:00:00:01,future-key=x,tag=abc");
    // Structure is still checked.
    assert!(PropertyString::parse_lenient(&NET, "virtio,virtio").is_err());
    assert!(PropertyString::parse_lenient(&NET, "").is_err());
    // A missing default key is tolerated.
    let b = PropertyString::parse_lenient(&NET, "bridge=vmbr0").unwrap();
    assert_eq!(b.to_string(), "bridge=vmbr0");
}

#[test]
fn semantic_equality() {
    let eq: &[(&Format, &str, &str)] = &[
        (&NET, "virtio=BC:24:11:00:00:01,bridge=vmbr0", "virtio=bc:24:11:00:00:01,bridge=vmbr0"),
        (&NET, "virtio=BC:24:11:00:00:01,bridge=vmbr0", "bridge=vmbr0,model=virtio,macaddr=BC:24:11:00:00:01"),
        (&NET, "virtio,rate=10", "virtio,rate=10.0"),
        (&NET, "virtio,rate=10", "virtio,rate=1e1"),
        (&NET, "virtio,firewall=0", "virtio"),
        (&NET, "virtio,link_down=no", "virtio"),
        (&NET, "virtio,firewall=1,tag=10", "virtio,tag=10,firewall=yes"),
        (&NET, "virtio,tag=010", "virtio,tag=10"),
        (&DRIVE, "local-lvm:vm-100-disk-0,size=32G", "local-lvm:vm-100-disk-0,size=32768M"),
        (&DRIVE, "local-lvm:vm-100-disk-0,replicate=1,shared=0,media=disk", "local-lvm:vm-100-disk-0"),
        (&DRIVE, "local-lvm:vm-100-disk-0,backup=1,scsiblock=0,iothread=0", "local-lvm:vm-100-disk-0"),
        (
            &DRIVE,
            "local-lvm:vm-100-disk-0,discard=on,iothread=1",
            "iothread=on,file=local-lvm:vm-100-disk-0,discard=on",
        ),
        (&DRIVE, "local-lvm:vm-100-disk-0,mbps=100", "local-lvm:vm-100-disk-0,mbps=100.00"),
        (&EFIDISK, "local-lvm:vm-100-disk-0,efitype=2m,ms-cert=2011", "local-lvm:vm-100-disk-0"),
        (&TPMSTATE, "local-lvm:vm-100-disk-0,version=v1.2", "local-lvm:vm-100-disk-0"),
        (&AGENT, "1,type=virtio,freeze-fs-on-backup=1", "enabled=true"),
        (&MEMORY, "512", "current=512"),
    ];
    for (f, a, b) in eq {
        let (a, b) = (p(f, a), p(f, b));
        assert!(a.semantically_equal(&b), "{a} == {b}");
        assert!(b.semantically_equal(&a), "{b} == {a}");
        assert!(a.differences(&b).is_empty());
    }
    let ne: &[(&Format, &str, &str, &[&str])] = &[
        (&NET, "virtio=BC:24:11:00:00:01", "virtio=BC:24:11:00:00:02", &["macaddr"]),
        (&NET, "virtio,bridge=vmbr0", "e1000,bridge=vmbr0", &["model"]),
        (&NET, "virtio,firewall=1", "virtio", &["firewall"]),
        (&NET, "virtio,rate=10", "virtio,rate=10.5", &["rate"]),
        (&NET, "virtio,tag=10,bridge=vmbr0", "virtio,bridge=vmbr1", &["bridge", "tag"]),
        (&DRIVE, "local-lvm:vm-100-disk-0,size=32G", "local-lvm:vm-100-disk-0,size=33G", &["size"]),
        (&DRIVE, "local-lvm:vm-100-disk-0", "local-lvm:vm-100-disk-0,backup=0", &["backup"]),
        (&DRIVE, "local-lvm:vm-100-disk-0", "local-lvm:vm-100-disk-0,cache=none", &["cache"]),
        (&DRIVE, "none,media=cdrom", "none", &["media"]),
        (&EFIDISK, "local-lvm:vm-100-disk-0", "local-lvm:vm-100-disk-0,efitype=4m", &["efitype"]),
    ];
    for (f, a, b, keys) in ne {
        let (a, b) = (p(f, a), p(f, b));
        assert!(!a.semantically_equal(&b), "{a} != {b}");
        assert_eq!(a.differences(&b), *keys, "{a} vs {b}");
    }
    let a = p(&DRIVE, "local-lvm:vm-100-disk-0,discard=on,size=32G");
    let b = p(&DRIVE, "local-lvm:vm-100-disk-0,discard=on");
    assert!(a.semantically_equal_ignoring(&b, &["size"]));
    assert!(!a.semantically_equal(&b));
}

#[test]
fn set_and_remove_canonicalise() {
    let mut n = p(&NET, "virtio=BC:24:11:00:00:01,bridge=vmbr0");
    n.set("firewall", "yes");
    n.set("tag", "20");
    n.set("e1000", "bc:24:11:00:00:09");
    assert_eq!(n.to_string(), "e1000=BC:24:11:00:00:09,bridge=vmbr0,firewall=1,tag=20");
    assert_eq!(n.remove("macaddr").as_deref(), Some("BC:24:11:00:00:09"));
    assert_eq!(n.to_string(), "e1000,bridge=vmbr0,firewall=1,tag=20");
    assert_eq!(n.remove("nope"), None);
    let mut d = PropertyString::new(&DRIVE);
    d.set("size", "32768M");
    d.set("volume", "local-lvm:vm-100-disk-0");
    assert_eq!(d.to_string(), "local-lvm:vm-100-disk-0,size=32G");
    assert_eq!(d.remove("file").as_deref(), Some("local-lvm:vm-100-disk-0"));
    assert_eq!(d.len(), 1);
    assert!(!d.is_empty());
}

#[test]
fn printing_reads_back_as_the_same_value() {
    // Found by the property tests (tests/props): a default-key value with `=` or blank was
    // printed bare and read back as another key; a model the keyAlias does not know was
    // printed as `<model>=<MAC>`; only separators parsed to an empty string.
    for (format, text, printed) in [
        (&UNUSED, "file=a=b", "file=a=b"),
        (&DRIVE, "volume=a=b,size=1G", "file=a=b,size=1G"),
        (&DRIVE, "file= ,size=1G", "file= ,size=1G"),
    ] {
        // Lenient: such files are no volume ids, but a config read back may hold anything.
        let ps = PropertyString::parse_lenient(format, text).unwrap();
        assert_eq!(ps.to_string(), printed);
        assert!(PropertyString::parse_lenient(format, printed).unwrap().semantically_equal(&ps), "{text}");
    }
    let ps = p(&UNUSED, "file=local:a=b");
    assert_eq!(ps.to_string(), "file=local:a=b");
    let ps = PropertyString::parse_lenient(&NET, "model=foo,macaddr=BC:24:11:00:00:01").unwrap();
    assert_eq!(ps.to_string(), "foo,macaddr=BC:24:11:00:00:01");
    assert!(PropertyString::parse_lenient(&NET, &ps.to_string()).unwrap().semantically_equal(&ps));
    for text in [",", " , ,"] {
        let e = PropertyString::parse_lenient(&DRIVE, text).unwrap_err().to_string();
        assert!(e.starts_with("invalid format - empty value"), "{e}");
    }
}

#[test]
fn task_values_cannot_add_or_change_keys() {
    let mut nic = PropertyString::new(&NET);
    nic.set_checked("model", "virtio").unwrap();
    for (key, value, want) in [
        ("bridge", "vmbr0,tag=99,firewall=0", "bridge: a value must not contain ','"),
        ("bridge", "vmbr 0", "bridge: invalid bridge ID 'vmbr 0'"),
        ("tag", "99\nfirewall=0", "tag: a value must not contain ','"),
        ("model", "virtio=BC:24:11:00:00:01", "model: value 'virtio=BC:24:11:00:00:01' does not have a value"),
        ("trunks", "10;20,tag=5", "trunks: a value must not contain ','"),
        ("nokey", "1", "nokey: not a key of a net property string"),
    ] {
        let e = nic.set_checked(key, value).unwrap_err().to_string();
        assert!(e.starts_with(want), "{key}={value}: {e}");
    }
    nic.set_checked("bridge", "vmbr0").unwrap();
    assert_eq!(nic.to_checked_string().unwrap(), "virtio,bridge=vmbr0");

    let mut drive = PropertyString::new(&DRIVE);
    drive.set_checked("file", "local-lvm:0").unwrap();
    for (key, value) in [
        ("serial", "abc,cache=unsafe"),
        ("serial", "abc=1"),
        ("import-from", "local:import/a.qcow2,ro=1"),
        ("import-from", "relative/path"),
        ("file", "none,media=cdrom"),
    ] {
        assert!(drive.set_checked(key, value).is_err(), "{key}={value}");
    }
    drive.set_checked("serial", "abc%2Cd").unwrap();
    assert_eq!(drive.to_checked_string().unwrap(), "local-lvm:0,serial=abc%2Cd");

    // The last guard: a value that `set` let through and that would split is never sent.
    let mut unchecked = PropertyString::new(&DRIVE);
    unchecked.set("file", "local-lvm:0");
    unchecked.set("serial", "abc,cache=unsafe");
    assert!(matches!(unchecked.to_checked_string(), Err(Error::Internal(_))));
}

#[test]
fn never_panics_on_weird_input() {
    let long = "a".repeat(100_000);
    let long_kv = "k=v,".repeat(10_000);
    let weird = [
        "",
        ",",
        ",,,",
        "=",
        "==",
        "a==b",
        "=a",
        "a=",
        " ",
        " , ",
        "\n",
        "a\nb",
        "é=ü",
        "ü",
        "😀=😀,😀",
        "virtio=",
        "virtio==",
        "virtio=BC:24:11:00:00:0😀",
        "size=9999999999999T",
        "x,size=18446744073709551616",
        "x,size=1.5.5G",
        "x,size=.5G",
        "x,size=5.G",
        "x,tag=99999999999999999999999999",
        "x,rate=1e99999",
        "x,rate=NaN",
        "x,rate=inf",
        "\0",
        "a=\0",
        "file=a,file=b",
        "model=,virtio",
        long.as_str(),
        long_kv.as_str(),
    ];
    for format in [&NET, &DRIVE, &EFIDISK, &TPMSTATE, &UNUSED, &AGENT, &MEMORY] {
        for w in weird {
            for parsed in [PropertyString::parse(format, w), PropertyString::parse_lenient(format, w)] {
                if let Ok(ps) = parsed {
                    let _ = ps.to_string();
                    let _ = ps.semantically_equal(&ps);
                } else if let Err(e) = parsed {
                    assert!(e.to_string().len() < 600, "error message stays short");
                }
            }
        }
    }
}

#[test]
fn sizes_parse_and_print_like_pve() {
    let ok: &[(&str, u64)] = &[
        ("0", 0),
        ("512", 512),
        ("1K", 1024),
        ("650M", 650 << 20),
        ("32G", 32 << 30),
        ("2T", 2 << 40),
        ("0.5G", 512 << 20),
        ("1.5K", 1536),
        ("0.1K", 102),
        ("4.0M", 4 << 20),
    ];
    for (s, n) in ok {
        assert_eq!(parse_size(s).unwrap(), *n, "{s}");
    }
    for bad in ["", "G", "32g", "32 G", "32GB", "-1G", "+1G", ".5G", "5.G", "1e3", "32KiB", "١٢"] {
        assert!(parse_size(bad).is_err(), "{bad}");
    }
    assert!(parse_size("16777216T").is_err(), "overflow");
    assert!(parse_size("99999999999999999999999").is_err());
    let printed: &[(u64, &str)] = &[
        (512, "512"),
        (1536, "1536"),
        (1024, "1K"),
        (528 << 10, "528K"),
        (4 << 20, "4M"),
        (512 << 20, "512M"),
        (32 << 30, "32G"),
        (1 << 40, "1T"),
        (1025 << 30, "1025G"),
        (0, "0T"),
    ];
    for (n, s) in printed {
        assert_eq!(format_size(*n), *s);
        assert_eq!(parse_size(s).unwrap(), *n);
    }
}

#[test]
fn module_sizes_default_to_gib() {
    assert_eq!(parse_gib_or_size("10").unwrap(), 10 << 30);
    assert_eq!(parse_gib_or_size("0.5").unwrap(), 512 << 20);
    assert_eq!(parse_gib_or_size("512M").unwrap(), 512 << 20);
    assert_eq!(parse_gib_or_size("1T").unwrap(), 1 << 40);
    for bad in ["", "10g", "+10G", "ten", "1.2.3"] {
        assert!(parse_gib_or_size(bad).is_err(), "{bad}");
    }
}

#[test]
fn macs() {
    assert_eq!(normalize_mac("bc:24:11:5a:8e:be").as_deref(), Some("BC:24:11:5A:8E:BE"));
    assert_eq!(normalize_mac("02:00:00:00:00:00").as_deref(), Some("02:00:00:00:00:00"));
    for bad in [
        "01:00:5E:00:00:01",
        "BC:24:11:5A:8E",
        "BC-24-11-5A-8E-BE",
        "BC:24:11:5A:8E:BEE",
        "GG:24:11:5A:8E:BE",
        "",
        "é:24:11:5A:8E:B",
    ] {
        assert_eq!(normalize_mac(bad), None, "{bad}");
    }
}

#[test]
fn booleans_and_numbers() {
    for t in ["1", "on", "YES", "true"] {
        assert_eq!(parse_boolean(t), Some(true));
    }
    for f in ["0", "Off", "no", "FALSE"] {
        assert_eq!(parse_boolean(f), Some(false));
    }
    assert_eq!(parse_boolean("2"), None);
    for n in ["1", "-1", "+1.5", "1.", ".5", "1e5", "1.5E-3"] {
        assert!(is_number(n), "{n}");
    }
    for n in ["", ".", "e5", "1e", "1.5.5", "NaN", "inf", "0x10"] {
        assert!(!is_number(n), "{n}");
    }
}
