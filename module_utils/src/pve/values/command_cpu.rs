//! What QEMU's command line build refuses of a VM's CPU, machine, firmware and memory settings alone: OVMF on a 32-bit CPU type, an EFI disk path without a format, CPU hot-plug on aarch64, the vIOMMU machine options, a NUMA node's reversed range, hot-plugged memory's DIMM alignment (docs/pve-semantics.md §61).
//!
//! Like `command`, each rule follows qemu-server's `config_to_command` (QemuServer.pm) and stops
//! where PVE looks at the host first: hugepages, the host's physical address bits (docs/refusals.md
//! R-power-91). A custom CPU model stands for the model its definition reports, where this user may
//! read it (`resolve_custom`). The nodes are x86_64 (PVE's one architecture; `arch` in the config says otherwise).

use std::collections::BTreeMap;

use super::command::{prop, set};
use crate::pve::machine::pinned;
use crate::pve::request::Form;
use crate::pve::schema::current_memory;
use crate::pve::volume::Volume;

/// CPUConfig.pm `$cputypes_32bit`.
const CPU_32BIT: [&str; 8] = ["486", "pentium", "pentium2", "pentium3", "coreduo", "athlon", "kvm32", "qemu32"];

fn arch(config: &BTreeMap<String, String>) -> &str {
    config.get("arch").map_or("x86_64", String::as_str)
}

/// QemuServer.pm `parse_hotplug_features` (its format checked every value when it was written):
/// `0` is none, `1` (the default) `network,disk,usb`, else the features listed.
pub(super) fn hotplug_has(hotplug: Option<&str>, feature: &str) -> bool {
    match hotplug.unwrap_or("1") {
        "0" => false,
        "1" => ["network", "disk", "usb"].contains(&feature),
        list => list.split(|c: char| c == ',' || c == ';' || c.is_whitespace()).any(|f| f == feature),
    }
}

/// `config_to_command` with `bios: ovmf`, first of what the config tells: CPUConfig.pm
/// `get_cpu_bitness` (the `cpu`'s type, or `qemu64`; a built-in `x86-64-v*` reports `qemu64`; a
/// custom model the model it reports, `resolve_custom`) refuses a 32-bit type on x86_64; then
/// OVMF.pm `print_ovmf_commandline`, unless SEV-SNP or TDX boot with `-bios`: an `efidisk0` that
/// is a path, not a volume, needs a `format` (after `get_ovmf_files`, whose images every node has
/// with qemu-server's firmware dependency).
pub fn firmware(config: &BTreeMap<String, String>) -> Option<String> {
    if config.get("bios").is_none_or(|b| b != "ovmf") {
        return None;
    }
    let cputype = config.get("cpu").and_then(|c| prop(c, "cputype", Some("cputype"))).unwrap_or("qemu64");
    if arch(config) == "x86_64" && CPU_32BIT.contains(&cputype) {
        return Some("OVMF (UEFI) BIOS is not supported on 32-bit CPU types".into());
    }
    let cvm = |k: &str, t: &str| set(config, k).is_some_and(|v| prop(v, "type", Some("type")) == Some(t));
    if cvm("amd-sev", "snp") || cvm("intel-tdx", "tdx") {
        return None;
    }
    let efidisk = set(config, "efidisk0")?;
    let file = prop(efidisk, "file", Some("file"))?;
    (Volume::parse(file).is_none() && prop(efidisk, "format", None).is_none())
        .then(|| "efidisk format must be specified".into())
}

/// CPUConfig.pm `print_cpu_device`, which `config_to_command` calls after the CPU count for the
/// vCPUs from the second (`vcpus`, else sockets × cores) when `hotplug` has `cpu` and the machine
/// version is 2.7 or later: it takes only x86_64 (a `die` without a newline: PVE appends the
/// file and line, left out here).
pub fn cpu_hotplug(config: &BTreeMap<String, String>, maxcpus: u64) -> Option<String> {
    let vcpus = set(config, "vcpus").and_then(|v| v.parse().ok()).unwrap_or(maxcpus);
    let hotplug = hotplug_has(config.get("hotplug").map(String::as_str), "cpu");
    // an unpinned machine runs at the node's QEMU version (10.x on every PVE 9 node)
    let recent = pinned(config).is_none_or(|v| v >= (2, 7, 0));
    (arch(config) != "x86_64" && hotplug && recent && vcpus >= 2)
        .then(|| "Hotplug of non x86_64 CPU not yet supported".into())
}

/// What a start reads beyond the config for these rules (`Preflight::start_facts`), each `None`
/// when not known: the node's CPU count, the CPU models its QEMU has for the VM's architecture,
/// and the model a custom `cpu` reports (its definition, `GET /cluster/qemu/custom-cpu-models`);
/// `storages`: storage.cfg as this user sees it, for the drives' and PCI devices' rules (§62),
/// shared with the preflight's copy; `node`, `mappings`, `hidden`: the VM's node, the mappings
/// its config names as this user reads them, and those the user cannot see (§64, §70); `pci`:
/// the node's PCI device ids, read only for a config with a `hostpciN` `host` id (§72); `qemu`:
/// the machine versions the node's QEMU has (and its version when that refuses), read only for a
/// start that pins a machine (§73).
#[derive(Debug, Default)]
pub struct StartFacts {
    pub cpus: Option<u64>,
    pub models: Option<Vec<String>>,
    pub reported: Option<String>,
    pub storages: std::rc::Rc<Vec<crate::pve::storage::StorageConfig>>,
    pub node: String,
    pub mappings: crate::pve::mappings::Mappings,
    pub hidden: Vec<(&'static str, String)>,
    pub pci: Option<Vec<String>>,
    pub qemu: Option<crate::pve::machine::NodeQemu>,
}

/// The config with a custom `cpu` standing for the model it reports, as CPUConfig.pm
/// `get_cpu_bitness` and `get_cpu_options` take it (`get_custom_model`); `None` when the `cpu`
/// is not a custom model or its reported model is not known.
pub fn resolve_custom(config: &BTreeMap<String, String>, reported: Option<&str>) -> Option<BTreeMap<String, String>> {
    let cputype = set(config, "cpu").and_then(|c| prop(c, "cputype", Some("cputype")))?;
    let reported = reported.filter(|_| cputype.starts_with("custom-"))?;
    let mut resolved = config.clone();
    resolved.insert("cpu".into(), reported.into());
    Some(resolved)
}

/// The VM's architecture and the `cpu` type CPUConfig.pm `get_cpu_options` looks up, when only
/// the node's model list tells whether its QEMU has it: not without a `cpu`, not a custom model
/// (unless `resolve_custom` put the model it reports in its place), not x86_64's built-in `x86-64-v*` and generic
/// types. `Icelake-Client` stands for `Icelake-Server` (`$depreacated_cpu_map`).
pub fn model_to_check(config: &BTreeMap<String, String>) -> Option<(&str, &str)> {
    let cputype = match set(config, "cpu").and_then(|c| prop(c, "cputype", Some("cputype")))? {
        "Icelake-Client" => "Icelake-Server",
        "Icelake-Client-noTSX" => "Icelake-Server-noTSX",
        t => t,
    };
    let arch = arch(config);
    let known = arch == "x86_64"
        && (cputype.starts_with("x86-64-v")
            || ["kvm64", "qemu64", "kvm32", "qemu32", "host", "max"].contains(&cputype));
    (!known && !cputype.starts_with("custom-")).then_some((arch, cputype))
}

/// `get_cpu_options` (after CPU hot-plug, before the memory): the type must be one of the
/// models the node lists for the VM's architecture (`models`, `None` when not read).
pub fn cpu_model(config: &BTreeMap<String, String>, models: Option<&[String]>) -> Option<String> {
    let (arch, cputype) = model_to_check(config)?;
    let models = models.filter(|m| !m.is_empty())?;
    (!models.iter().any(|m| m == cputype))
        .then(|| format!("CPU model '{cputype}' does not exist for configured vCPU architecture '{arch}'"))
}

/// Machine.pm `assert_valid_machine_property` on a `machine` value: Intel's vIOMMU needs a q35
/// type and an `aw-bits` of 39 or 48; `aw-bits` needs a vIOMMU. Checked by `create_vm` (in its
/// task, after the VNC clipboard), by `update_vm_api` when it reaches `machine`, and by
/// `config_to_command` after the NICs.
pub fn machine(value: &str) -> Option<String> {
    let viommu = prop(value, "viommu", None);
    let aw = prop(value, "aw-bits", None).and_then(|a| a.parse::<f64>().ok());
    if viommu == Some("intel") {
        if !prop(value, "type", Some("type")).is_some_and(|t| t.contains("q35")) {
            return Some("to use Intel vIOMMU please set the machine type to q35".into());
        }
        if aw.is_some_and(|a| a != 39.0 && a != 48.0) {
            return Some("Intel vIOMMU supports only 39 or 48 bits as address width".into());
        }
    }
    (aw.is_some() && viommu.is_none()).then(|| "cannot set aw-bits if no vIOMMU is configured".into())
}

/// A create's or config write's `machine` that `machine` refuses, as `machine: <PVE's words>`.
pub fn request_machine(form: &Form) -> Option<String> {
    let value = form.iter().find(|(k, _)| k == "machine").map(|(_, v)| v.as_str())?;
    machine(value).map(|words| format!("machine: {words}"))
}

/// Memory.pm `parse_numa` (Helpers.pm `parse_number_sets`) on a `numaN` value, before its memory
/// is looked at: a range of `cpus`, then of `hostnodes`, whose end is below its start.
pub fn numa_ranges(node: &str) -> Option<String> {
    ["cpus", "hostnodes"].iter().find_map(|key| {
        let sets = prop(node, key, (*key == "cpus").then_some("cpus"))?;
        sets.split(';').find_map(|part| {
            let (a, b) = part.trim().split_once('-')?;
            let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
            (b < a).then(|| format!("invalid range: {part} ({b} < {a})"))
        })
    })
}

/// Memory.pm `config` with memory hot-plug, last (`foreach_dimm`): from the static 1024 MiB,
/// 32 DIMMs of 512 MiB, then 32 of each double size, are added until the memory is reached; one
/// that goes past it is refused. Not decided with hugepages (their sizes are the host's) nor above
/// 32768 MiB, where the maximum memory, from the host's address bits, is checked first.
pub fn dimm(config: &BTreeMap<String, String>) -> Option<String> {
    if !hotplug_has(config.get("hotplug").map(String::as_str), "memory") || set(config, "hugepages").is_some() {
        return None;
    }
    let memory = config.get("memory").map_or(Some(512.0), |m| current_memory(m))? as u64;
    if memory > 32768 {
        return None;
    }
    let (mut current, mut size) = (1024, 512);
    while current < memory {
        for _ in 0..32 {
            current += size;
            if current > memory {
                return Some(format!("memory size ({memory}) must be aligned to {size} for hotplugging"));
            }
            if current == memory {
                return None;
            }
        }
        size *= 2;
    }
    None
}

#[cfg(test)]
mod tests;
