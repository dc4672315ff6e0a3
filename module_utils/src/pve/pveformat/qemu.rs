//! The named formats qemu-server and pve-access-control define in code (boot devices, hot-plug features, CPU sets and models, pools, realms, storage pairs): each with PVE's rule and words.
//!
//! The API schema names these formats only; their validators are Perl code that the schema does
//! not carry, so each is written here from its source (docs/pve-semantics.md §34):
//! qemu-server `src/PVE/QemuServer.pm` (`verify_bootdev`, `pve_verify_hotplug_features`,
//! `parse_hotplug_features`, `pve_verify_cpuset`), `src/PVE/QemuServer/Drive.pm`
//! (`verify_bootdisk`, `is_valid_drivename`), `src/PVE/QemuServer/CPUConfig.pm`
//! (`validate_vm_cpu_conf`, `parse_phys_bits`, the CPU model lists) and `CPUFlags.pm` (the
//! VM-specific flags), pve-common `src/PVE/CpuSet.pm` (`parse_cpuset`) and `src/PVE/JSONSchema.pm`
//! (`parse_idmap`, `verify_storagepair`), pve-access-control `src/PVE/AccessControl.pm`
//! (`verify_poolname`) and `src/PVE/Auth/Plugin.pm` (`pve_verify_realm`).

use super::split_list;
use crate::error::clip;

use super::QUOTE_MAX;

type Check = std::result::Result<(), String>;

/// A numbered key `<base><n>` with `n` below `count`, spelled as PVE spells it (no leading zero).
fn numbered(key: &str, base: &str, count: u32) -> bool {
    key.strip_prefix(base).is_some_and(|n| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && (n == "0" || !n.starts_with('0'))
            && n.parse::<u32>().is_ok_and(|i| i < count)
    })
}

/// Drive.pm `is_valid_drivename`: `ide0`-`ide3`, `scsi0`-`scsi30`, `virtio0`-`virtio15`,
/// `sata0`-`sata5`, `efidisk0`, `tpmstate0` (not `unusedN`).
pub(crate) fn is_drive_name(key: &str) -> bool {
    numbered(key, "ide", 4)
        || numbered(key, "scsi", 31)
        || numbered(key, "virtio", 16)
        || numbered(key, "sata", 6)
        || matches!(key, "efidisk0" | "tpmstate0")
}

/// QemuServer.pm `verify_bootdev`: a drive other than the EFI disk and the TPM state, a NIC
/// (`net0`-`net31`), a USB device (`usb0`-`usb13`) or a PCI device (`hostpci0`-`hostpci15`).
pub(crate) fn bootdev(dev: &str) -> Check {
    let drive = is_drive_name(dev) && !dev.starts_with("efidisk") && !dev.starts_with("tpmstate");
    if drive || numbered(dev, "net", 32) || numbered(dev, "usb", 14) || numbered(dev, "hostpci", 16) {
        return Ok(());
    }
    Err(format!("invalid boot device '{}'", clip(dev, QUOTE_MAX)))
}

/// Drive.pm `verify_bootdisk`.
pub(crate) fn bootdisk(value: &str) -> Check {
    if is_drive_name(value) {
        return Ok(());
    }
    Err(format!("invalid boot disk '{}'", clip(value, QUOTE_MAX)))
}

/// QemuServer.pm `parse_hotplug_features`: `0`, `1` (the default set), or a list of `network`,
/// `disk`, `cpu`, `memory`, `usb`, `cloudinit`; the first other word is named.
pub(crate) fn hotplug(value: &str) -> Check {
    if value == "0" || value == "1" {
        return Ok(());
    }
    for feature in split_list(value) {
        if !matches!(feature, "network" | "disk" | "cpu" | "memory" | "usb" | "cloudinit") {
            return Err(format!("invalid hotplug feature '{}'", clip(feature, QUOTE_MAX)));
        }
    }
    Ok(())
}

/// CpuSet.pm `parse_cpuset` (as QemuServer.pm `pve_verify_cpuset` reports it): comma-separated
/// CPU numbers and ranges `a-b` with `b >= a`.
pub(crate) fn cpuset(value: &str) -> Check {
    let ok = value.split(',').all(|part| {
        let part = part.trim();
        let (from, to) = part.split_once('-').unwrap_or((part, part));
        let number = |s: &str| (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse::<u128>().ok());
        matches!((number(from), number(to)), (Some(Some(a)), Some(Some(b))) if b >= a)
    });
    if ok {
        Ok(())
    } else {
        Err("unable to parse cpuset option".into())
    }
}

/// CPUConfig.pm `parse_phys_bits`: `host` or 8 to 64.
pub(crate) fn phys_bits(value: &str) -> Check {
    let number = value.len() <= 2 && !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    if value == "host" || (number && value.parse::<u8>().is_ok_and(|n| (8..=64).contains(&n))) {
        return Ok(());
    }
    Err("value must be an integer between 8 and 64 or 'host'".into())
}

/// AccessControl.pm `verify_poolname`: at most three levels of `[A-Za-z0-9.-_]+` joined by `/`.
pub(crate) fn poolid(value: &str) -> Check {
    let shown = clip(value, QUOTE_MAX);
    // Perl's `split` drops trailing empty fields before counting them.
    if value.trim_end_matches('/').split('/').count() > 3 {
        return Err(format!("pool name '{shown}' nested too deeply (max levels = 3)"));
    }
    let level = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b".-_".contains(&b));
    if !value.split('/').all(level) {
        return Err(format!("pool name '{shown}' contains invalid characters"));
    }
    Ok(())
}

/// Auth/Plugin.pm `pve_verify_realm`: `[A-Za-z][A-Za-z0-9.-_]+`.
pub(crate) fn realm(value: &str) -> Check {
    let b = value.as_bytes();
    let ok =
        b.len() >= 2 && b[0].is_ascii_alphabetic() && b.iter().all(|c| c.is_ascii_alphanumeric() || b".-_".contains(c));
    if ok {
        Ok(())
    } else {
        Err("value does not look like a valid realm".into())
    }
}

/// JSONSchema.pm `verify_storagepair` (`parse_idmap` with `pve-storage-id`, one entry): `1`,
/// `source:target` of two storage ids, or one storage id (the default target).
pub(crate) fn storage_pair(entry: &str) -> Check {
    if entry == "1" {
        return Ok(());
    }
    let ids: Vec<&str> = match entry.split_once(':') {
        Some((source, target)) if !source.is_empty() && !target.is_empty() && !target.contains(':') => {
            vec![source, target]
        }
        _ => vec![entry],
    };
    for id in ids {
        if let Err(why) = super::verify(super::PveFormat::StorageId, id) {
            return Err(format!("entry '{}' contains invalid ID - {why}", clip(entry, QUOTE_MAX)));
        }
    }
    Ok(())
}

/// The CPU models a VM may name (CPUConfig.pm: the built-in `x86-64-v*` models and the QEMU
/// models of qemu-server 9.1 and 9.2, x86_64 and aarch64, and `host`). A newer QEMU may ship more;
/// those are refused here until this list learns them.
pub const CPU_MODELS: &[&str] = &[
    "486",
    "Broadwell",
    "Broadwell-IBRS",
    "Broadwell-noTSX",
    "Broadwell-noTSX-IBRS",
    "Cascadelake-Server",
    "Cascadelake-Server-noTSX",
    "Cascadelake-Server-v2",
    "Cascadelake-Server-v4",
    "Cascadelake-Server-v5",
    "ClearwaterForest",
    "Conroe",
    "Cooperlake",
    "Cooperlake-v2",
    "EPYC",
    "EPYC-Genoa",
    "EPYC-Genoa-v2",
    "EPYC-IBPB",
    "EPYC-Milan",
    "EPYC-Milan-v2",
    "EPYC-Milan-v3",
    "EPYC-Rome",
    "EPYC-Rome-v2",
    "EPYC-Rome-v3",
    "EPYC-Rome-v4",
    "EPYC-Rome-v5",
    "EPYC-Turin",
    "EPYC-v3",
    "EPYC-v4",
    "EPYC-v5",
    "GraniteRapids",
    "GraniteRapids-v2",
    "GraniteRapids-v3",
    "Haswell",
    "Haswell-IBRS",
    "Haswell-noTSX",
    "Haswell-noTSX-IBRS",
    "Icelake-Client",
    "Icelake-Client-noTSX",
    "Icelake-Server",
    "Icelake-Server-noTSX",
    "Icelake-Server-v3",
    "Icelake-Server-v4",
    "Icelake-Server-v5",
    "Icelake-Server-v6",
    "Icelake-Server-v7",
    "IvyBridge",
    "IvyBridge-IBRS",
    "KnightsMill",
    "Nehalem",
    "Nehalem-IBRS",
    "Opteron_G1",
    "Opteron_G2",
    "Opteron_G3",
    "Opteron_G4",
    "Opteron_G5",
    "Penryn",
    "SandyBridge",
    "SandyBridge-IBRS",
    "SapphireRapids",
    "SapphireRapids-v2",
    "SapphireRapids-v3",
    "SapphireRapids-v4",
    "SierraForest",
    "SierraForest-v2",
    "SierraForest-v3",
    "Skylake-Client",
    "Skylake-Client-IBRS",
    "Skylake-Client-noTSX-IBRS",
    "Skylake-Client-v4",
    "Skylake-Server",
    "Skylake-Server-IBRS",
    "Skylake-Server-noTSX-IBRS",
    "Skylake-Server-v4",
    "Skylake-Server-v5",
    "Westmere",
    "Westmere-IBRS",
    "a64fx",
    "athlon",
    "core2duo",
    "coreduo",
    "cortex-a35",
    "cortex-a53",
    "cortex-a55",
    "cortex-a57",
    "cortex-a710",
    "cortex-a72",
    "cortex-a76",
    "host",
    "kvm32",
    "kvm64",
    "max",
    "neoverse-n1",
    "neoverse-n2",
    "neoverse-v1",
    "pentium",
    "pentium2",
    "pentium3",
    "phenom",
    "qemu32",
    "qemu64",
    "x86-64-v2",
    "x86-64-v2-AES",
    "x86-64-v3",
    "x86-64-v4",
];

/// CPUFlags.pm: the flags a VM's own CPU config may set, in PVE's (sorted) order.
pub const VM_CPU_FLAGS: &[&str] = &[
    "aes",
    "amd-no-ssb",
    "amd-ssbd",
    "hv-evmcs",
    "hv-tlbflush",
    "ibpb",
    "md-clear",
    "nested-virt",
    "pcid",
    "pdpe1gb",
    "spec-ctrl",
    "ssbd",
    "virt-ssbd",
];

/// CPUConfig.pm `validate_vm_cpu_conf` on a parsed `cpu` value (its keys already checked): a
/// `cputype` is required; a built-in one must exist (a `custom-` one lives in the cluster's
/// `cpu-models.conf`, which only PVE reads: not checked here); the flags are the VM-specific
/// ones; `reported-model` belongs to custom models only.
pub(crate) fn vm_cpu_conf(get: &dyn Fn(&str) -> Option<String>) -> Check {
    let Some(cputype) = get("cputype").filter(|t| !t.is_empty() && t != "0") else {
        return Err("CPU is missing cputype".into());
    };
    if !cputype.starts_with("custom-") && !CPU_MODELS.contains(&cputype.as_str()) {
        return Err(format!(
            "Built-in cputype '{}' is not defined (missing 'custom-' prefix?)",
            clip(&cputype, QUOTE_MAX)
        ));
    }
    if let Some(flags) = get("flags").filter(|f| !f.is_empty() && f != "0") {
        let ok = flags.split(';').all(|f| f.strip_prefix(['+', '-']).is_some_and(|name| VM_CPU_FLAGS.contains(&name)));
        if !ok {
            return Err(format!("VM-specific CPU flags must be a subset of: {}", VM_CPU_FLAGS.join(", ")));
        }
    }
    if get("reported-model").is_some() {
        return Err("Property 'reported-model' not allowed in VM-specific CPU config.".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
