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
            assert!(regex::Regex::new(&anchored(p)).is_ok(), "{p}");
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
