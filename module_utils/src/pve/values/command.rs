//! What QEMU's command line build refuses of a VM's config alone, beyond §43's rules: hugepages without NUMA, a custom NUMA topology that does not add up, `usb5` and above without qemu-xhci, a virtio NIC's MTU below IP's minimum, virtio-fs ACLs on Windows (docs/pve-semantics.md §59).
//!
//! Each rule follows qemu-server's `config_to_command` (QemuServer.pm) at the place it is
//! checked there, and stops where the next step of PVE's check depends on the host (its
//! hugepages, NUMA nodes, bridges, directory mappings): what follows such a step is the host's
//! to tell (docs/refusals.md R-power-90, R-power-96).

use std::collections::BTreeMap;

use crate::pve::schema::current_memory;

/// Perl's truth of a config value: set, not empty, not `0`.
pub(super) fn set<'c>(config: &'c BTreeMap<String, String>, key: &str) -> Option<&'c str> {
    config.get(key).map(String::as_str).filter(|v| !v.is_empty() && *v != "0")
}

/// The value of `key` in a property string (`k=v,...`; the first part without `=` is the
/// default key's, which `default` names).
pub(super) fn prop<'v>(value: &'v str, key: &str, default: Option<&str>) -> Option<&'v str> {
    value.split(',').enumerate().find_map(|(i, part)| match part.split_once('=') {
        Some((k, v)) if k == key => Some(v),
        None if i == 0 && default == Some(key) => Some(part),
        _ => None,
    })
}

/// QemuServer/Memory.pm `config`, after the memory hot-plug checks (`values::memory`): hugepages
/// need NUMA (`numa needs to be enabled to use hugepages`); with NUMA, each custom node `numaN`
/// (N below 8, in order) needs a `memory` and `cpus`, and their memory adds up to the VM's static
/// memory (its `memory` without hot-plug). A node with `hostnodes`, or hugepages, makes PVE look
/// at the host's NUMA nodes and hugepages first: nothing more is decided from the config then.
/// `hotplug`: memory hot-plug is on (its static memory is then 1024 MiB per §43, and a custom
/// topology was refused before).
pub fn numa(config: &BTreeMap<String, String>, hotplug: bool) -> Option<String> {
    let hugepages = set(config, "hugepages").is_some();
    if hugepages && set(config, "numa").is_none() {
        return Some("numa needs to be enabled to use hugepages".into());
    }
    if set(config, "numa").is_none() || hotplug || hugepages {
        return None;
    }
    let mut total = 0u64;
    for i in 0..8 {
        let Some(node) = set(config, &format!("numa{i}")) else { continue };
        if let Some(words) = super::command_cpu::numa_ranges(node) {
            return Some(words); // parse_numa, before the node's memory (§61)
        }
        let memory = prop(node, "memory", None).and_then(|m| m.parse::<u64>().ok()).filter(|m| *m > 0);
        let Some(memory) = memory else {
            return Some(format!("missing NUMA node{i} memory value"));
        };
        total += memory;
        if prop(node, "cpus", Some("cpus")).is_none() {
            return Some(format!("missing NUMA node{i} cpus"));
        }
        if prop(node, "hostnodes", None).is_some() {
            return None; // print_numa_hostnodes: the host's NUMA nodes come next
        }
    }
    let memory = config.get("memory").map_or(Some(512.0), |m| current_memory(m)).unwrap_or(512.0);
    (total > 0 && total as f64 != memory)
        .then(|| "total memory for NUMA nodes must be equal to vm static memory".into())
}

/// QemuServer.pm `print_netdevice_full`, for each `netN` in order: a virtio NIC on a bridge with
/// an `mtu` other than 1 (the bridge's) below 576. Above the bridge's MTU is the host's to tell
/// (PVE reads the bridge's MTU from the running kernel).
pub fn mtu(config: &BTreeMap<String, String>) -> Option<String> {
    (0..32).find_map(|i| {
        let net = config.get(&format!("net{i}"))?;
        let first = net.split(',').next().unwrap_or_default();
        let model = first.split_once('=').map_or(first, |(m, _)| m);
        prop(net, "bridge", None)?;
        let mtu: u64 = prop(net, "mtu", None)?.parse().ok()?;
        (model == "virtio" && mtu != 1 && mtu < 576)
            .then(|| format!("netdev net{i}: MTU '{mtu}' is smaller than the IP minimum MTU '576'"))
    })
}

/// QemuServer/Virtiofs.pm `assert_virtiofs_config` (from `config_to_command`, after the NICs and
/// the confidential-computing objects), for each `virtiofsN` in order: `expose-acl` on a Windows
/// `ostype` (QemuServer/Helpers.pm `windows_version`: `wxp`, `w2k`, `w2k3`, `w2k8`, `wvista`,
/// `winN`). Whether the directory mapping is valid on the node is the host's to tell.
pub fn virtiofs(config: &BTreeMap<String, String>) -> Option<String> {
    let windows = windows_version(config.get("ostype").map(String::as_str).unwrap_or_default()) > 0;
    let acl = (0..10)
        .filter_map(|i| config.get(&format!("virtiofs{i}")))
        .any(|v| prop(v, "expose-acl", None).is_some_and(|a| matches!(a, "1" | "true" | "yes" | "on")));
    (windows && acl).then(|| {
        "Please disable ACLs for virtiofs on Windows VMs, otherwise the virtiofs shared directory cannot be mounted."
            .into()
    })
}

/// QemuServer/Helpers.pm `windows_version`: 5 for `wxp`, `w2k`, `w2k3`, 6 for `w2k8`, `wvista`,
/// N for `winN`, else 0.
fn windows_version(ostype: &str) -> u64 {
    match ostype {
        "wxp" | "w2k" | "w2k3" => 5,
        "w2k8" | "wvista" => 6,
        _ => ostype.strip_prefix("win").and_then(|n| n.parse().ok()).unwrap_or(0),
    }
}

/// QemuServer/USB.pm `get_usb_devices` (from `config_to_command`, after the PCI devices and
/// before the CPU count), for `usb0`..`usb13` in order: `usb5` and above need the qemu-xhci
/// controller, which a machine version from 7.1 and an `ostype` of `l26` or Windows above 7 give
/// (`assert_usb_index_is_useable`). The version is the pinned `machine`'s; without one it is the
/// node's QEMU, 7.1 or later on every PVE 9 node. A `hostpciN` makes PVE look at the host's
/// devices first: not decided here then.
pub fn usb(config: &BTreeMap<String, String>) -> Option<String> {
    if config.keys().any(|k| k.strip_prefix("hostpci").is_some_and(|n| !n.is_empty())) {
        return None;
    }
    let version = crate::pve::machine::pinned(config);
    let ostype = config.get("ostype").map(String::as_str);
    let xhci = version.is_none_or(|v| v >= (7, 1, 0)) && ostype.is_some_and(|o| o == "l26" || windows_version(o) > 7);
    (0..14)
        .filter(|i| config.get(&format!("usb{i}")).is_some_and(|v| !v.is_empty()))
        .find(|i| *i >= 5 && !xhci)
        .map(|i| format!("using usb{i} is only possible with machine type >= 7.1 and ostype l26 or windows > 7"))
}

#[cfg(test)]
mod tests;
