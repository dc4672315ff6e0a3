//! The command-line rules as tables: each config with what PVE's `config_to_command` says of it at start (docs/pve-semantics.md §59).

use super::*;
use crate::pve::values::start;

/// A config as `(key, value)` pairs.
type Pairs<'a> = &'a [(&'a str, &'a str)];

fn cfg(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn hugepages_and_a_custom_numa_topology_are_refused_from_the_config() {
    let cases: &[(Pairs, Option<&str>)] = &[
        (&[("hugepages", "2")], Some("numa needs to be enabled to use hugepages")),
        (&[("hugepages", "any"), ("numa", "0")], Some("numa needs to be enabled to use hugepages")),
        // with hugepages and NUMA, the host's hugepages come next: not decided here
        (&[("hugepages", "2"), ("numa", "1"), ("numa0", "cpus=0")], None),
        (&[("numa", "1"), ("numa0", "cpus=0")], Some("missing NUMA node0 memory value")),
        (&[("numa", "1"), ("memory", "2048"), ("numa0", "memory=2048")], Some("missing NUMA node0 cpus")),
        (
            &[("numa", "1"), ("memory", "2048"), ("numa0", "cpus=0,memory=1024"), ("numa1", "cpus=1,memory=512")],
            Some("total memory for NUMA nodes must be equal to vm static memory"),
        ),
        (&[("numa", "1"), ("memory", "2048"), ("numa0", "cpus=0,memory=1024"), ("numa1", "cpus=1,memory=1024")], None),
        // the default memory (512 MiB) is the static memory
        (&[("numa", "1"), ("numa0", "cpus=0-1,memory=512")], None),
        // a node pinned to host nodes: the host's NUMA nodes come next
        (&[("numa", "1"), ("memory", "2048"), ("numa0", "cpus=0,memory=1,hostnodes=0,policy=bind")], None),
        // without NUMA the topology is not read
        (&[("memory", "2048"), ("numa0", "cpus=0")], None),
    ];
    for (config, words) in cases {
        assert_eq!(numa(&cfg(config), false).as_deref(), *words, "{config:?}");
        assert_eq!(start(&cfg(config), Some(64)).as_deref(), *words, "{config:?} at start");
    }
}

#[test]
fn a_virtio_nic_below_the_ip_minimum_mtu_is_refused() {
    let net = |v: &str| cfg(&[("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0"), ("net1", v)]);
    let refused = "netdev net1: MTU '500' is smaller than the IP minimum MTU '576'";
    assert_eq!(mtu(&net("virtio=BC:24:11:00:00:02,bridge=vmbr0,mtu=500")).as_deref(), Some(refused));
    assert_eq!(start(&net("virtio=BC:24:11:00:00:02,bridge=vmbr0,mtu=500"), None).as_deref(), Some(refused));
    // 1 is the bridge's MTU; another model, or no bridge, takes no host_mtu
    for value in [
        "virtio=BC:24:11:00:00:02,bridge=vmbr0,mtu=1",
        "e1000=BC:24:11:00:00:02,bridge=vmbr0,mtu=500",
        "virtio=BC:24:11:00:00:02,mtu=500",
        "virtio=BC:24:11:00:00:02,bridge=vmbr0,mtu=576",
    ] {
        assert_eq!(mtu(&net(value)), None, "{value}");
    }
}

#[test]
fn virtiofs_acls_are_refused_on_windows_only() {
    let words = Some(
        "Please disable ACLs for virtiofs on Windows VMs, otherwise the virtiofs shared directory cannot be mounted.",
    );
    let conf = |ostype: &str, fs: &str| cfg(&[("ostype", ostype), ("virtiofs0", fs)]);
    for ostype in ["win11", "win10", "w2k8", "wxp"] {
        assert_eq!(virtiofs(&conf(ostype, "share,expose-acl=1")).as_deref(), words, "{ostype}");
        assert_eq!(start(&conf(ostype, "dirid=share,expose-acl=1"), None).as_deref(), words, "{ostype} at start");
    }
    assert_eq!(virtiofs(&conf("l26", "share,expose-acl=1")), None);
    assert_eq!(virtiofs(&conf("win11", "share,expose-acl=0")), None);
    assert_eq!(virtiofs(&conf("win11", "share")), None);
}

#[test]
fn usb5_and_above_need_a_recent_machine_and_ostype() {
    let words =
        |i: u32| Some(format!("using usb{i} is only possible with machine type >= 7.1 and ostype l26 or windows > 7"));
    let conf = |pairs: Pairs| cfg(pairs);
    // an ostype other than l26 or Windows above 7, or a machine pinned below 7.1
    assert_eq!(usb(&conf(&[("ostype", "other"), ("usb5", "spice")])), words(5));
    assert_eq!(usb(&conf(&[("ostype", "win7"), ("usb0", "spice"), ("usb6", "spice")])), words(6));
    assert_eq!(usb(&conf(&[("ostype", "l26"), ("machine", "pc-i440fx-6.2"), ("usb5", "spice")])), words(5));
    assert_eq!(
        start(&conf(&[("ostype", "l26"), ("machine", "type=pc-q35-7.0+pve1"), ("usb5", "spice")]), Some(1)),
        words(5)
    );
    // qemu-xhci: the node's QEMU or a pinned 7.1 and later, l26 or Windows 8 and later
    for pairs in [
        &[("ostype", "l26"), ("usb5", "spice")][..],
        &[("ostype", "win11"), ("machine", "pc-q35-8.1"), ("usb13", "spice")],
        &[("ostype", "l26"), ("machine", "q35"), ("usb7", "spice")],
        &[("ostype", "other"), ("usb4", "spice")],
        // a PCI device is looked at on the host first
        &[("ostype", "other"), ("hostpci0", "0000:01:00.0"), ("usb5", "spice")],
    ] {
        assert_eq!(usb(&conf(pairs)), None, "{pairs:?}");
    }
}
