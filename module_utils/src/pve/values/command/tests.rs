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
