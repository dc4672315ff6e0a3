//! What PVE refuses from a VM's config values and the cluster's facts (the node's CPUs, HA): a balloon above the memory, a VNC clipboard on a display that cannot take it, a start the node cannot hold, a hibernation or removal that HA or the VM's devices forbid (docs/pve-semantics.md §43).
//!
//! Each rule is decided from what a task reads before it writes: the VM's config (with its
//! pending values), the request, `/cluster/resources` (`hastate` of a VM entry) and `GET /nodes`
//! (a node's `maxcpu`, shown to users with `Sys.Audit` on the node). Each returns PVE's words,
//! `None` when PVE accepts.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::pve::config::VmConfig;
use crate::pve::machine;
use crate::pve::mappings;
use crate::pve::request::Form;
use crate::pve::resources::VmResource;
use crate::pve::schema::current_memory;
use crate::pve::state::Op;
use crate::pve::storage::StorageConfig;
use crate::pve::volume::{Volume, VolumeKind};
use command_cpu::StartFacts;

/// qemu-server API2/Qemu.pm `update_vm_api` (`$load_and_check_config`).
pub const BALLOON_TOO_LARGE: &str = "balloon value too large (must be smaller than assigned memory)";

fn value<'f>(form: &'f Form, key: &str) -> Option<&'f str> {
    form.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// A value Perl takes as true: set, not empty, not `0`.
fn truthy(v: Option<&str>) -> Option<&str> {
    v.filter(|v| !v.is_empty() && *v != "0")
}

/// Qemu.pm `update_vm_api`, `$load_and_check_config`, when the request sets `memory` or
/// `balloon`: the memory is the request's, else the pending one, else the applied one (512 MiB
/// when none, Memory.pm `get_current_memory`); the balloon is the request's, else the pending
/// one, else the applied one; a balloon above that memory is refused. `config`: the VM's config
/// as read (a clone's: the source's applied config, which `clone_vm` copies); `set`: what the
/// config write sets.
pub fn balloon(config: &VmConfig, set: &Form) -> Option<&'static str> {
    let requested = truthy(value(set, "memory"));
    if requested.is_none() && value(set, "balloon").is_none() {
        return None;
    }
    let stored =
        |k: &str| truthy(config.pending.get(k).map(String::as_str)).or(config.current.get(k).map(String::as_str));
    let memory = requested.or_else(|| stored("memory")).filter(|m| !m.is_empty());
    let max = memory.map_or(Some(512.0), current_memory)?;
    let balloon: f64 = value(set, "balloon").or_else(|| stored("balloon"))?.parse().ok()?;
    (balloon != 0.0 && balloon > max).then_some(BALLOON_TOO_LARGE)
}

/// QemuServer.pm `assert_clipboard_config`: `clipboard=vnc` only with a display type that
/// begins with `std`, `cirrus`, `vmware`, `virtio` or `qxl` (a `vga` without a type is the
/// default, and passes). Checked by `create_vm` (in its task, after the disks are allocated),
/// by `update_vm_api` when it reaches `vga`, and by `vm_start` (`config_to_command`).
pub fn vga_clipboard(vga: &str) -> Option<String> {
    let (mut kind, mut clipboard) = (None, None);
    for part in vga.split(',') {
        match part.split_once('=') {
            Some(("type", v)) => kind = Some(v),
            Some(("clipboard", v)) => clipboard = Some(v),
            Some(_) => {}
            None => kind = Some(part),
        }
    }
    let kind = kind.filter(|k| !k.is_empty())?;
    let fits = ["std", "cirrus", "vmware", "virtio", "qxl"].iter().any(|p| kind.starts_with(p));
    (clipboard == Some("vnc") && !fits).then(|| format!("vga type {kind} is not compatible with VNC clipboard"))
}

/// The `vga` values of a request that `vga_clipboard` refuses, as `vga: <PVE's words>`.
pub fn request_clipboard(form: &Form) -> Option<String> {
    value(form, "vga").and_then(vga_clipboard).map(|words| format!("vga: {words}"))
}

/// QemuServer.pm `config_to_command`, when `vm_start` builds QEMU's command line from the config
/// (pending values applied first): OVMF's checks (`command_cpu`, §61), `usb5` and above without qemu-xhci (`command::usb`), more
/// CPUs (`sockets` × `cores`, not `vcpus`) than the node has (`MAX <n> vcpus allowed per VM on this node`, `n` the node's CPU count, `/nodes`' `maxcpu`;
/// unknown without `Sys.Audit` on the node, then not checked), then memory hot-plug (`memory`:
/// Memory.pm `config`, `NUMA needs to be enabled for memory hotplug` ...), then hugepages and a
/// custom NUMA topology, the VNC clipboard, a NIC's MTU and virtio-fs ACLs (`command`, §59), with
/// CPU hot-plug, DIMM alignment and the vIOMMU options (`command_cpu`, §61) in their places.
/// `config`: the config the VM starts with.
pub fn start(config: &BTreeMap<String, String>, node_cpus: Option<u64>) -> Option<String> {
    start_with(config, &StartFacts { cpus: node_cpus, ..StartFacts::default() })
}

/// `start` with what `Preflight::start_facts` read: a pinned machine the node's QEMU cannot run is
/// refused first (§73), a custom `cpu` stands for the model it reports, and a `cpu` type the
/// node's models for the VM's architecture lack is refused after CPU hot-plug (§61).
pub fn start_with(config: &BTreeMap<String, String>, facts: &StartFacts) -> Option<String> {
    let resolved = command_cpu::resolve_custom(config, facts.reported.as_deref());
    let config = resolved.as_ref().unwrap_or(config);
    let (node_cpus, models) = (facts.cpus, facts.models.as_deref());
    if let Some(words) = devices::content(config, &facts.storages) {
        return Some(words);
    }
    // config_to_command's first check: the pinned machine against the node's QEMU (§73)
    let qemu = |m: String| machine::refusal(&m, facts.qemu.as_ref()?, &facts.node);
    if let Some(words) = machine::start_machine(config).and_then(qemu) {
        return Some(words);
    }
    let (sockets, cores) = sockets_and_cores(config);
    // the mapped devices in their places (§64, §70): each PCI one's checks with its `hostpciN`, then USB
    let visible = |kind: &str, id: &str| !facts.hidden.iter().any(|(k, i)| *k == kind && i == id);
    let mapped = |id: &str| mappings::pci_on_node(id, &facts.node, &facts.mappings, &visible);
    let usb = || mappings::start_usb(config, &facts.node, &facts.mappings, &visible);
    let firmware = || {
        command_cpu::firmware(config).or_else(|| devices::hostpci(config, &mapped, facts.pci.as_deref())).or_else(usb)
    };
    if let Some(words) = firmware().or_else(|| command::usb(config)) {
        return Some(words);
    }
    if let Some(cpus) = node_cpus.filter(|n| *n < sockets * cores) {
        return Some(format!("MAX {cpus} vcpus allowed per VM on this node"));
    }
    let cpu = || command_cpu::cpu_hotplug(config, sockets * cores).or_else(|| command_cpu::cpu_model(config, models));
    if let Some(words) = cpu().or_else(|| memory(config, sockets)) {
        return Some(words);
    }
    let hotplug = hotplug_memory(config.get("hotplug").map(String::as_str));
    command::numa(config, hotplug)
        .or_else(|| command_cpu::dimm(config))
        .or_else(|| config.get("vga").and_then(|v| vga_clipboard(v)))
        .or_else(|| devices::drive(config, &facts.storages))
        .or_else(|| command::mtu(config))
        .or_else(|| config.get("machine").and_then(|m| command_cpu::machine(m)))
        .or_else(|| command::virtiofs(config))
}

/// Memory.pm `config` with memory hot-plug, in its order (the maximum memory aside, which depends
/// on the host's CPU): NUMA on, no custom NUMA topology (`numaN`), at least 1024 MiB
/// (`$STATICMEM`, times the sockets with 1 GiB hugepages), no virtio-fs.
fn memory(config: &BTreeMap<String, String>, sockets: u64) -> Option<String> {
    if !hotplug_memory(config.get("hotplug").map(String::as_str)) {
        return None;
    }
    if truthy(config.get("numa").map(String::as_str)).is_none() {
        return Some("NUMA needs to be enabled for memory hotplug".into());
    }
    if (0..8).any(|i| config.contains_key(&format!("numa{i}"))) {
        return Some("cannot enable memory hotplugging with custom NUMA topology".into());
    }
    let staticmem = if config.get("hugepages").is_some_and(|h| h == "1024") { 1024 * sockets } else { 1024 };
    let memory = config.get("memory").map_or(Some(512.0), |m| current_memory(m)).unwrap_or(512.0);
    if memory < staticmem as f64 {
        return Some(format!("minimum memory must be {staticmem}MB"));
    }
    let virtiofs = config.keys().any(|k| k.starts_with("virtiofs"));
    virtiofs.then(|| "Memory hotplug does not work in combination with virtio-fs.".into())
}

/// QemuServer.pm `parse_hotplug_features`: `0` is none, `1` (the default) is
/// `network,disk,usb`; else the listed features.
fn hotplug_memory(hotplug: Option<&str>) -> bool {
    command_cpu::hotplug_has(hotplug, "memory")
}

/// Whether HA manages the VM: `/cluster/resources` gives a VM entry a `hastate` when it is an HA
/// resource (pve-manager API2/Cluster.pm `resources`).
pub fn ha_managed(vm: &VmResource) -> bool {
    vm.raw.get("hastate").and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

/// Qemu.pm `destroy_vm`, `$early_checks` (after protection, before the running check): an HA
/// resource is removed only with `purge`.
pub fn destroy(vm: &VmResource, purge: bool) -> Option<String> {
    (ha_managed(vm) && !purge)
        .then(|| format!("unable to remove VM {} - used in HA resources and purge parameter not set.", vm.vmid))
}

/// A hibernation (`status/suspend` with `todisk`): Qemu.pm `vm_suspend` refuses an HA-managed VM,
/// then one with a passed-through PCI device (`hostpciN`); its task (RunState.pm `vm_suspend`,
/// QemuMigrate/Helpers.pm `check_non_migratable_resources`) one with `amd-sev`, `intel-tdx` or a
/// `virtiofsN`. `config`: the VM's applied config.
pub fn hibernate(vm: &VmResource, config: &BTreeMap<String, String>) -> Option<String> {
    if ha_managed(vm) {
        return Some("Cannot suspend HA managed VM to disk".into());
    }
    if config
        .keys()
        .any(|k| k.strip_prefix("hostpci").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
    {
        return Some(
            "cannot suspend VM to disk due to passed-through PCI device(s), which lack the possibility to save/restore their internal state"
                .into(),
        );
    }
    let mut blockers: Vec<&str> =
        ["amd-sev", "intel-tdx"].into_iter().filter(|k| truthy(config.get(*k).map(String::as_str)).is_some()).collect();
    if config.keys().any(|k| k.starts_with("virtiofs")) {
        blockers.push("virtiofs");
    }
    (!blockers.is_empty())
        .then(|| format!("Cannot live-migrate, snapshot (with RAM), or hibernate a VM with: {}", blockers.join(", ")))
}

/// Qemu.pm `move_vm_disk` to another VM (`$load_and_check_reassign_configs`, before the locks):
/// both VMs on one node, as the cluster's VM list (`/cluster/resources`) places them.
pub fn reassign_nodes(source: &VmResource, target: &VmResource) -> Option<String> {
    (source.node != target.node)
        .then(|| format!("Both VMs need to be on the same node ({} != {})", source.node, target.node))
}

/// The `sockets` (its old name `smp`) and `cores` QEMU is given (`config_to_command`), 1 each when
/// unset or not a positive number.
fn sockets_and_cores(config: &BTreeMap<String, String>) -> (u64, u64) {
    let number = |k: &str| config.get(k).and_then(|v| v.parse::<u64>().ok()).filter(|n| *n > 0);
    (number("sockets").or_else(|| number("smp")).unwrap_or(1), number("cores").unwrap_or(1))
}

/// What a start's CPU check cannot tell when the node's CPU count is hidden (`node_cpus` `None`:
/// no `Sys.Audit` on `/nodes/<node>`): a VM of more than one vCPU (`sockets` × `cores` of the
/// config it starts with, pending values applied) may be refused, in PVE's words with the count
/// known after apply; a one-vCPU VM never is (every node has a CPU).
pub fn start_unknown(vm: &VmResource, config: &VmConfig, node_cpus: Option<u64>) -> Option<String> {
    let (sockets, cores) = sockets_and_cores(&config.effective());
    let vcpus = sockets * cores;
    (node_cpus.is_none() && vcpus > 1).then(|| {
        format!(
            "whether VM {} starts is not known: it starts with {vcpus} vCPUs and the CPU count of node {} is shown only with Sys.Audit on /nodes/{}; PVE may refuse it: MAX (known after apply) vcpus allowed per VM on this node",
            vm.vmid, vm.node, vm.node
        )
    })
}

/// The rule above that `op` on `vm` meets, after `pve::state`'s (the lock, protection, power),
/// as PVE's handlers check them after those: a start (`config`'s effective values, with what
/// `facts` knows of its node and CPU model), a removal without `purge`, a hibernation (`config`'s
/// applied values).
pub fn refusal(op: Op, vm: &VmResource, config: &VmConfig, purge: bool, facts: &StartFacts) -> Option<String> {
    match op {
        Op::Start => start_with(&config.effective(), facts),
        Op::Destroy => destroy(vm, purge),
        Op::Suspend { to_disk: true } => hibernate(vm, &config.current),
        _ => None,
    }
}

pub mod command;
pub mod command_cpu;

/// Qemu.pm `prohibit_tpm_version_change`.
pub const TPM_VERSION: &str = "cannot change TPM state version after creation";

/// What `update_vm_api` refuses of a drive the request sets, against the VM's applied config
/// (`current`), as `<key>: <PVE's words>` (§63): Qemu.pm `prohibit_tpm_version_change`, a
/// `tpmstate0` on the same volume with another `version` (`v1.2` when unset); `create_disks`, a
/// new `efidisk0` (not an import) on a VM whose `amd-sev` is of type `snp`
/// (CPUConfig.pm `get_cvm_type`).
pub fn drives(current: &BTreeMap<String, String>, set: &Form) -> Option<String> {
    let opt = |v: &str, k: &str| v.split(',').find_map(|p| p.strip_prefix(k)?.strip_prefix('=')).map(str::to_string);
    let file = |v: &str| v.split(',').next().map(|f| f.strip_prefix("file=").unwrap_or(f).to_string());
    if let (Some(old), Some(new)) = (current.get("tpmstate0"), value(set, "tpmstate0")) {
        let version = |v: &str| opt(v, "version").unwrap_or_else(|| "v1.2".into());
        if file(old) == file(new) && version(old) != version(new) {
            return Some(format!("tpmstate0: {TPM_VERSION}"));
        }
    }
    let snp = current.get("amd-sev").is_some_and(|s| {
        opt(s, "type").or_else(|| s.split(',').next().filter(|t| !t.contains('=')).map(str::to_string)).as_deref()
            == Some("snp")
    });
    let efi = value(set, "efidisk0").filter(|v| opt(v, "import-from").is_none());
    if snp && efi.and_then(file).is_some_and(|f| crate::pve::devices::parse_new_disk(&f).is_some()) {
        return Some("efidisk0: SEV-SNP uses consolidated read-only firmware and does not require an EFI disk".into());
    }
    None
}

pub mod devices;
/// pve-guest-common `GuestHelpers.pm` `check_hookscript`, which `update_vm_api` (not `create_vm`)
/// runs on `hookscript`, a parameter error on the key: the volume's content type must be
/// `snippets`. Decided here for a VM image or an ISO on a storage of `storages`, whose names PVE's
/// parsers take; that a snippet exists and is executable is the node's (PVE looks at the file).
pub fn hookscript(volid: &str, storages: &[StorageConfig]) -> Option<String> {
    let volume = Volume::parse(volid)?;
    let iso = volume.kind == VolumeKind::Iso && [".iso", ".img"].iter().any(|e| volume.file.ends_with(e));
    let image = volume.kind == VolumeKind::Image && volume.owner.is_some();
    let known = storages.iter().any(|s| s.storage == volume.storage);
    (known && (iso || image)).then(|| format!("hookscript: '{volid}' is not in the snippets directory"))
}

#[cfg(test)]
mod tests;
