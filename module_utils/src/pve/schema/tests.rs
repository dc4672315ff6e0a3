//! The schema checker's table tests: each kind of rule, with PVE's words (pve-common
//! JSONSchema.pm `check_prop`, `check_type`, `parse_property_string`; qemu-server API2/Qemu.pm
//! `update_vm_api` for the rules in code).

use super::*;

fn put_config() -> ApiPath {
    ApiPath::new(["nodes", "pve1", "qemu", "100", "config"])
}

fn check(method: Method, path: &ApiPath, pairs: &[(&str, &str)]) -> std::result::Result<(), String> {
    let form: Form = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    check_write(method, path, &form).map_err(|e| e.to_string())
}

#[test]
fn the_table_parses_and_every_pattern_compiles() {
    assert!(endpoints().len() >= 18, "{}", endpoints().len());
    let mut patterns = 0;
    let mut walk = |schema: &Value| {
        if let Some(p) = str_field(schema, "pattern") {
            patterns += 1;
            assert!(crate::pve::pattern::compile(&anchored(p)).is_ok(), "{p}");
        }
    };
    for endpoint in endpoints().values() {
        for schema in endpoint["params"].as_object().into_iter().flat_map(|m| m.values()) {
            walk(schema);
            for sub in schema.get("keys").and_then(Value::as_object).into_iter().flat_map(|m| m.values()) {
                walk(sub);
            }
        }
    }
    assert!(patterns > 10, "{patterns}");
}

#[test]
fn paths_match_their_templates() {
    let stop = ApiPath::new(["nodes", "pve1", "qemu", "100", "status", "stop"]);
    assert_eq!(
        Endpoint::for_path(Method::Post, &stop).map(|e| e.name),
        Some("POST /nodes/{node}/qemu/{vmid}/status/stop")
    );
    assert_eq!(
        Endpoint::for_path(Method::Put, &put_config()).map(|e| e.name),
        Some("PUT /nodes/{node}/qemu/{vmid}/config")
    );
    assert_eq!(
        Endpoint::for_path(Method::Post, &ApiPath::new(["nodes", "pve1", "qemu"])).map(|e| e.name),
        Some("POST /nodes/{node}/qemu")
    );
    // Not a write of ours: nothing to check.
    assert!(Endpoint::for_path(Method::Post, &ApiPath::new(["nodes", "pve1", "lxc"])).is_none());
    assert!(Endpoint::for_path(Method::Get, &put_config()).is_none());
    let endpoint = Endpoint::by_template(Method::Put, "/nodes/{node}/qemu/{vmid}/config").expect("known");
    assert!(endpoint.param("net31").is_some());
    assert!(endpoint.param("net32").is_none(), "net has 32 keys, net0 to net31");
    assert!(endpoint.param("net01").is_none());
    assert!(endpoint.param("scsi30").is_some() && endpoint.param("scsi31").is_none());
    assert!(endpoint.param("cores").is_some() && endpoint.param("cores1").is_none());
    // numa (a boolean) and numa0 ... numa7 (the topology) are different parameters.
    assert_eq!(endpoint.param("numa").and_then(|s| s.get("type")), Some(&Value::from("boolean")));
    assert!(endpoint.param("numa0").and_then(|s| s.get("keys")).is_some());
}

#[test]
fn every_kind_of_rule_with_pves_words() {
    let put = Method::Put;
    let table: &[(&[(&str, &str)], &str)] = &[
        // minimum / maximum
        (&[("cores", "0")], "cores: value must have a minimum value of 1"),
        (&[("cpulimit", "200")], "cpulimit: value must have a maximum value of 128"),
        // type
        (&[("cores", "two")], "cores: type check ('integer') failed - got 'two'"),
        (&[("onboot", "maybe")], "onboot: type check ('boolean') failed - got 'maybe'"),
        (&[("cpulimit", "1.5.1")], "cpulimit: type check ('number') failed - got '1.5.1'"),
        // enum
        (
            &[("bios", "uefi")],
            "bios: value 'uefi' does not have a value in the enumeration 'seabios, ovmf'",
        ),
        // maxLength
        (&[("digest", &"a".repeat(41))], "digest: value may only be 40 characters long"),
        // unknown key
        (
            &[("corez", "2")],
            "corez: property is not defined in schema and the schema does not allow additional properties",
        ),
        // inline property string: a sub-key's limit, an unknown sub-key, an alias twice
        (
            &[("net0", "virtio,bridge=vmbr0,tag=5000")],
            "net0: invalid format - format error net0.tag: value must have a maximum value of 4094",
        ),
        (&[("net0", "virtio,bridge=vmbr0,colour=red")], "net0: invalid format - invalid key in comma-separated list property: colour"),
        (&[("net0", "virtio=BC:24:11:00:00:01,e1000=BC:24:11:00:00:02")], "net0: invalid format - key alias 'model' is already defined"),
        (&[("net0", "virtio,bridge=vmbr0,firewall=maybe")], "net0: invalid format - format error net0.firewall: type check ('boolean') failed - got 'maybe'"),
        (&[("net0", "bridge=vmbr0")], "net0: invalid format - format error net0.model: property is missing and it is not optional"),
        (&[("net0", "virtio,tag=")], "net0: invalid format - missing key in comma-separated list property"),
        (&[("net0", "virtio,tag")], "net0: invalid format - duplicate key in comma-separated list property: model"),
        (&[("net0", "virtio,e1000")], "net0: invalid format - duplicate key in comma-separated list property: model"),
        // a named format inside a property string
        (
            &[("net0", "virtio=01:00:00:00:00:01,bridge=vmbr0")],
            "net0: invalid format - format error net0.macaddr: invalid format - value does not look like a valid unicast MAC address",
        ),
        (
            &[("scsi0", "local-lvm:vm-100-disk-0,size=10X")],
            "scsi0: invalid format - format error scsi0.size: invalid format - value does not look like a valid disk size: 10X",
        ),
        // the memory property string
        (&[("memory", "1")], "memory: invalid format - format error memory.current: value must have a minimum value of 16"),
        // named formats
        (
            &[("ipconfig0", "ip=10.0.0.300/24")],
            "ipconfig0: invalid format - format error ipconfig0.ip: invalid format - value does not look like a valid ipv4 network configuration",
        ),
        (
            &[("ipconfig0", "gw=10.0.0.1")],
            "ipconfig0: invalid format - format error ipconfig0.ip: missing property required by 'ipconfig0.gw'",
        ),
        (&[("tags", "web;db ok;b@d")], "tags: invalid format - invalid characters in tag"),
        (&[("delete", "net0,9x")], "delete: invalid format - invalid configuration ID '9x'"),
        (&[("startup", "order=first")], "startup: invalid format - unable to parse startup options"),
        (&[("name", "web_01")], "name: invalid format - value does not look like a valid DNS name"),
        // cross-field rules of update_vm_api
        (&[("memory", "1024"), ("balloon", "2048")], "balloon: balloon value too large (must be smaller than assigned memory)"),
        (&[("memory", "current=1024"), ("balloon", "1025")], "balloon: balloon value too large (must be smaller than assigned memory)"),
        (&[("cores", "2"), ("delete", "cores")], "delete: you can't use '-cores' and -delete cores' at the same time"),
        (&[("delete", "nosuchkey")], "delete: unknown option 'nosuchkey'"),
        (&[("revert", "cores"), ("delete", "cores")], "revert: you can't use '-delete cores' and '-revert cores' at the same time"),
    ];
    for (pairs, want) in table {
        let got = check(put, &put_config(), pairs).expect_err(want);
        let want =
            format!("{want} (Proxmox VE's API schema for PUT /nodes/{{node}}/qemu/{{vmid}}/config; nothing was sent)");
        assert_eq!(got, want, "{pairs:?}");
    }
}

#[test]
fn what_pve_accepts_passes() {
    let ok: &[&[(&str, &str)]] = &[
        &[("cores", "4"), ("sockets", "1"), ("memory", "2048"), ("balloon", "1024"), ("onboot", "1")],
        &[("balloon", "2048"), ("memory", "2048")],
        &[("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=yes,tag=20")],
        &[("net1", "model=e1000,bridge=vmbr1")],
        &[("scsi0", "local-lvm:32,iothread=1,discard=on"), ("scsihw", "virtio-scsi-single")],
        &[("ide2", "local:iso/debian.iso,media=cdrom")],
        &[("efidisk0", "local-lvm:1,efitype=4m,pre-enrolled-keys=1")],
        &[("ipconfig0", "ip=10.0.0.5/24,gw=10.0.0.1"), ("ipconfig1", "ip=dhcp,ip6=auto")],
        &[("tags", "web;db"), ("nameserver", "1.1.1.1 8.8.8.8"), ("searchdomain", "example.com")],
        &[("delete", "net1,scsi2"), ("digest", &"a".repeat(40))],
        &[("sshkeys", "ssh-ed25519%20AAAA%20me"), ("cipassword", "secret")],
        &[("cpulimit", "0.5"), ("startup", "order=1,up=30")],
        // QemuServer.pm option_exists knows the keys json_config_properties leaves out of the schema
        &[("delete", "vmstate")],
    ];
    for pairs in ok {
        assert_eq!(check(Method::Put, &put_config(), pairs), Ok(()), "{pairs:?}");
    }
    let create = ApiPath::new(["nodes", "pve1", "qemu"]);
    assert_eq!(check(Method::Post, &create, &[("vmid", "100"), ("name", "web01"), ("cores", "2")]), Ok(()));
    let resize = ApiPath::new(["nodes", "pve1", "qemu", "100", "resize"]);
    assert_eq!(check(Method::Put, &resize, &[("disk", "scsi0"), ("size", "+1G")]), Ok(()));
}

#[test]
fn patterns_follow_perl() {
    let scsi = Endpoint::by_template(Method::Put, "/nodes/{node}/qemu/{vmid}/config").expect("known");
    let schema = scsi.param("scsi0").expect("scsi0");
    let vendor = &schema["keys"]["vendor"];
    assert_eq!(check_prop(vendor, "scsi0.vendor", "ACME"), Ok(()));
    assert_eq!(
        check_prop(vendor, "scsi0.vendor", "ACME-VENDOR-X"),
        Err("value does not match the regex pattern".into())
    );
    let wwn = &schema["keys"]["wwn"];
    assert_eq!(check_prop(wwn, "scsi0.wwn", "0x5000c500a1b2c3d4"), Ok(()));
    assert!(check_prop(wwn, "scsi0.wwn", "5000c500a1b2c3d4").is_err());
}

#[test]
fn required_parameters_and_path_variables_are_checked() {
    let create = ApiPath::new(["nodes", "pve1", "qemu"]);
    let e = check(Method::Post, &create, &[("name", "web01")]).unwrap_err();
    assert!(e.starts_with("vmid: property is missing and it is not optional"), "{e}");
    let e = check(Method::Post, &create, &[("vmid", "99")]).unwrap_err();
    // PVE checks the format before the minimum.
    assert!(e.starts_with("vmid: invalid format - value does not look like a valid VM ID"), "{e}");
    let e = check(Method::Post, &create, &[("vmid", "100"), ("cores", "0")]).unwrap_err();
    assert!(e.starts_with("cores: value must have a minimum value of 1"), "{e}");
    let bad_node = ApiPath::new(["nodes", "pve_1", "qemu", "100", "config"]);
    let e = check(Method::Put, &bad_node, &[("cores", "1")]).unwrap_err();
    assert!(e.starts_with("node: invalid format - value does not look like a valid node name"), "{e}");
}

#[test]
fn a_boolean_parameter_is_0_or_1_only() {
    // JSONSchema.pm check_type compares with `eq '1'` / `eq '0'`; parse_boolean's forms are for property
    // strings (docs/pve-semantics.md §32.1)
    for word in ["true", "yes", "on", "no"] {
        let e = check(Method::Put, &put_config(), &[("onboot", word)]).unwrap_err();
        assert!(e.starts_with(&format!("onboot: type check ('boolean') failed - got '{word}' (")), "{e}");
    }
    assert_eq!(check(Method::Put, &put_config(), &[("net0", "virtio,bridge=vmbr0,firewall=yes")]), Ok(()));
}

#[test]
fn a_parameter_that_requires_another() {
    let login = ApiPath::new(["access", "ticket"]);
    let e = check(Method::Post, &login, &[("username", "root@pam"), ("password", "x"), ("path", "/vms")]).unwrap_err();
    assert!(e.starts_with("privs: missing property required by 'path'"), "{e}");
}

#[test]
fn a_secret_is_never_quoted() {
    let login = ApiPath::new(["access", "ticket"]);
    let e =
        check(Method::Post, &login, &[("username", "root@pam"), ("password", "hunter2"), ("colour", "x")]).unwrap_err();
    assert!(e.starts_with("colour: property is not defined"), "{e}");
    let e = check(Method::Put, &put_config(), &[("cipassword", "s3cret"), ("cipasswordx", "1")]).unwrap_err();
    assert!(!e.contains("s3cret"), "{e}");
    let long = "p".repeat(5000);
    let e = check(Method::Post, &login, &[("username", "root@pam"), ("password", &long)]);
    if let Err(e) = e {
        assert!(!e.contains("pppp"), "{e}");
    }
}

/// Every parameter of every endpoint is a definition once the table is loaded: a name of the
/// `shared` section that does not resolve would leave a parameter that checks nothing.
#[test]
fn every_shared_definition_resolves() {
    let table = endpoints();
    assert!(table.len() >= 18, "the table has {} endpoints", table.len());
    for (name, schema) in table {
        let params = schema.get("params").and_then(Value::as_object).expect("params");
        for (param, entry) in params {
            assert!(entry.is_object(), "{name} {param}: {entry}");
        }
    }
}

/// The named formats qemu-server defines in code (docs/pve-semantics.md §34): a valid value of
/// each passes, an invalid one fails with PVE's words, on a config write and on a create.
#[test]
fn named_formats_of_qemu_server_are_checked_with_pves_words() {
    let flags = "VM-specific CPU flags must be a subset of: aes, amd-no-ssb, amd-ssbd, hv-evmcs, hv-tlbflush, \
                 ibpb, md-clear, nested-virt, pcid, pdpe1gb, spec-ctrl, ssbd, virt-ssbd";
    let table: &[(&str, &str, Option<String>)] = &[
        ("cpu", "host,flags=+aes;-pcid", None),
        ("cpu", "x86-64-v2-AES,hidden=1,phys-bits=host", None),
        ("cpu", "host,flags=+judge", Some(format!("cpu: invalid format - {flags}"))),
        ("cpu", "Skylake", Some("cpu: invalid format - Built-in cputype 'Skylake' is not defined (missing 'custom-' prefix?)".into())),
        ("cpu", "host,flags=judge", Some("cpu: invalid format - format error cpu.flags: value does not match the regex pattern".into())),
        ("cpu", "host,phys-bits=99", Some("cpu: invalid format - format error cpu.phys-bits: invalid format - value must be an integer between 8 and 64 or 'host'".into())),
        ("cpu", "host,speed=9", Some("cpu: invalid format - invalid key in comma-separated list property: speed".into())),
        ("hostpci0", "0000:01:00.0;02:00,pcie=1", None),
        ("hostpci0", "mapping=gpu1,x-vga=1", None),
        ("hostpci0", "zz:zz.z", Some("hostpci0: invalid format - format error hostpci0.host: value does not match the regex pattern".into())),
        ("hostpci0", "01:00.0,vendor-id=8086", Some("hostpci0: invalid format - format error hostpci0.vendor-id: value does not match the regex pattern".into())),
        ("boot", "order=scsi0;ide2;net0", None),
        ("boot", "cdn", None),
        ("boot", "order=judge0", Some("boot: invalid format - format error boot.order: invalid format - invalid boot device 'judge0'".into())),
        ("boot", "cdx", Some("boot: invalid format - format error boot.legacy: value does not match the regex pattern".into())),
        ("bootdisk", "scsi0", None),
        ("bootdisk", "net0", Some("bootdisk: invalid format - invalid boot disk 'net0'".into())),
        ("smbios1", "uuid=5b0f2e4c-6a1d-4c3e-9f00-0123456789ab,manufacturer=QUNNRQ==,base64=1", None),
        ("smbios1", "uuid=judge", Some("smbios1: invalid format - format error smbios1.uuid: value does not match the regex pattern".into())),
        ("watchdog", "i6300esb,action=reset", None),
        ("watchdog", "model=judge", Some("watchdog: invalid format - format error watchdog.model: value 'judge' does not have a value in the enumeration 'i6300esb, ib700'".into())),
        ("rng0", "source=/dev/urandom,max_bytes=1024", None),
        ("rng0", "max_bytes=1024", Some("rng0: invalid format - format error rng0.source: property is missing and it is not optional".into())),
        ("cicustom", "user=local:snippets/user.yaml", None),
        ("cicustom", "user=user.yaml", Some("cicustom: invalid format - format error cicustom.user: invalid format - unable to parse volume ID 'user.yaml'".into())),
        ("hotplug", "network,disk,usb", None),
        ("hotplug", "network,floppy", Some("hotplug: invalid format - invalid hotplug feature 'floppy'".into())),
        ("affinity", "0-3,8", None),
        ("affinity", "3-1", Some("affinity: invalid format - unable to parse cpuset option".into())),
        ("amd-sev", "type=snp,allow-smt=1", None),
        ("amd-sev", "no-debug=1", Some("amd-sev: invalid format - format error amd-sev.type: property is missing and it is not optional".into())),
        ("intel-tdx", "tdx,attestation=1", None),
        ("intel-tdx", "type=sgx,attestation=1", Some("intel-tdx: invalid format - format error intel-tdx.type: value 'sgx' does not have a value in the enumeration 'tdx'".into())),
        ("cdrom", "local:iso/debian.iso", None),
        ("cdrom", "local:iso/debian.iso,cache=judge", Some("cdrom: invalid format - format error cdrom.cache: value 'judge' does not have a value in the enumeration 'none, writethrough, writeback, unsafe, directsync'".into())),
        ("numa0", "cpus=0-1,memory=1024", None),
        ("numa0", "cpus=x", Some("numa0: invalid format - format error numa0.cpus: value does not match the regex pattern".into())),
    ];
    for (key, value, want) in table {
        for (method, path, endpoint) in [
            (Method::Put, put_config(), "PUT /nodes/{node}/qemu/{vmid}/config"),
            (Method::Post, ApiPath::new(["nodes", "pve1", "qemu"]), "POST /nodes/{node}/qemu"),
        ] {
            let vmid = [("vmid", "100"), (key, value)];
            let pairs: &[(&str, &str)] = if method == Method::Post { &vmid } else { &vmid[1..] };
            let got = check(method, &path, pairs).err();
            let want = want.as_ref().map(|w| format!("{w} (Proxmox VE's API schema for {endpoint}; nothing was sent)"));
            assert_eq!(got, want, "{key}={value} on {endpoint}");
        }
    }
    let pool = check(Method::Post, &ApiPath::new(["nodes", "pve1", "qemu"]), &[("vmid", "100"), ("pool", "a b")]);
    assert_eq!(
        pool.err().as_deref(),
        Some("pool: invalid format - pool name 'a b' contains invalid characters (Proxmox VE's API schema for POST /nodes/{node}/qemu; nothing was sent)")
    );
    for name in formats::names() {
        assert!(formats::named(name).is_some_and(|(keys, _)| !keys.is_empty()), "{name}");
    }
}

/// update_vm_api's check of a new boot order against the devices the VM has, gets or loses.
#[test]
fn a_boot_order_names_devices_the_vm_will_have() {
    let has = |k: &str| matches!(k, "scsi0" | "net0" | "ide2");
    let form = |pairs: &[(&str, &str)]| -> Form { pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect() };
    type Case<'a> = (&'a [(&'a str, &'a str)], Option<&'a str>);
    let table: &[Case] = &[
        (&[("boot", "order=scsi0;net0")], None),
        (&[("boot", "order=scsi1"), ("scsi1", "local-lvm:4")], None),
        (&[("boot", "cdn")], None),
        (&[("cores", "2")], None),
        (&[("boot", "order=scsi0;scsi5")], Some("invalid bootorder: device 'scsi5' does not exist'")),
        (&[("boot", "order=net0"), ("delete", "net0")], Some("invalid bootorder: device 'net0' does not exist'")),
        (&[("boot", "order=ide2"), ("delete", "cdrom")], Some("invalid bootorder: device 'ide2' does not exist'")),
    ];
    for (pairs, want) in table {
        assert_eq!(boot_order_devices(&has, &form(pairs)).err().as_deref(), *want, "{pairs:?}");
    }
}

/// Every named format the table uses, at any depth, is checked here, but the ones listed with
/// their reason (docs/pve-semantics.md §34.2): the test fails when a new one appears unchecked.
#[test]
fn every_named_format_of_the_table_is_checked() {
    // the login's `privs`, which no module sends
    const UNCHECKED: &[&str] = &["pve-priv-list"];
    fn walk(schema: &Value, names: &mut std::collections::BTreeSet<String>) {
        if let Some(f) = str_field(schema, "format") {
            if names.insert(f.to_string()) {
                if let Some((keys, _)) = formats::named(f) {
                    keys.values().for_each(|k| walk(k, names));
                }
            }
        }
        for sub in schema.get("keys").and_then(Value::as_object).into_iter().flat_map(|m| m.values()) {
            walk(sub, names);
        }
    }
    let mut names = std::collections::BTreeSet::new();
    for endpoint in endpoints().values() {
        for schema in endpoint["params"].as_object().into_iter().flat_map(|m| m.values()) {
            walk(schema, &mut names);
        }
    }
    let known = |n: &str| formats::named(n).is_some() || verify_named(n, "").is_some();
    let unchecked: Vec<&str> = names.iter().map(String::as_str).filter(|n| !known(n)).collect();
    assert_eq!(unchecked, UNCHECKED, "of {} named formats: {names:?}", names.len());
    // 41 with the writes of issue 24, and `PUT /pools` (issue 27) adds `pve-vmid-list`, `pve-storage-id-list`
    assert_eq!(names.len(), 43, "{names:?}");
}

#[test]
fn a_drive_on_an_iso_needs_media_cdrom_and_on_other_content_is_refused() {
    // Qemu.pm $check_drive_param (`explicit 'media=cdrom' is required for iso images`) and
    // $check_storage_access (`content type needs to be 'images' or 'iso'`), create and update
    let create = ApiPath::new(["nodes", "pve1", "qemu"]);
    let err = check(Method::Post, &create, &[("vmid", "300"), ("ide2", "local:iso/d.iso")]).unwrap_err();
    assert!(err.starts_with("ide2: explicit 'media=cdrom' is required for iso images"), "{err}");
    let err = check(Method::Put, &put_config(), &[("scsi1", "local:import/debian.qcow2")]).unwrap_err();
    assert!(err.starts_with("scsi1: content type needs to be 'images' or 'iso'"), "{err}");
    for ok in [
        ("ide2", "local:iso/d.iso,media=cdrom"),
        ("ide2", "none,media=cdrom"),
        ("scsi1", "local-lvm:vm-100-disk-1"),
        ("scsi1", "local-lvm:4"),
        ("ide3", "local-lvm:cloudinit"),
        ("scsi1", "local-lvm:0,import-from=local:import/debian.qcow2"),
        ("sata1", "/dev/disk/by-id/ata-X"),
    ] {
        assert_eq!(check(Method::Put, &put_config(), &[ok]), Ok(()), "{ok:?}");
    }
}
