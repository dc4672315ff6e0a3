//! The code-defined named formats against PVE's rules and words, valid and invalid values alike (docs/pve-semantics.md §34).

use super::*;
use crate::pve::pveformat::verify_named;

/// (format name as the schema gives it, value, `None` when PVE accepts it, else PVE's words).
const TABLE: &[(&str, &str, Option<&str>)] = &[
    // QemuServer.pm verify_bootdev, through `-list` (split_list: `;`, `,`, spaces)
    ("pve-qm-bootdev-list", "scsi0;ide2;net0", None),
    ("pve-qm-bootdev-list", "virtio15;sata5;usb13;hostpci15;net31", None),
    ("pve-qm-bootdev-list", "scsi0;judge0", Some("invalid boot device 'judge0'")),
    ("pve-qm-bootdev-list", "efidisk0", Some("invalid boot device 'efidisk0'")),
    ("pve-qm-bootdev-list", "tpmstate0", Some("invalid boot device 'tpmstate0'")),
    ("pve-qm-bootdev-list", "scsi31", Some("invalid boot device 'scsi31'")),
    ("pve-qm-bootdev-list", "net32", Some("invalid boot device 'net32'")),
    ("pve-qm-bootdev-list", "net01", Some("invalid boot device 'net01'")),
    ("pve-qm-bootdev-list", "unused0", Some("invalid boot device 'unused0'")),
    ("pve-qm-bootdev-list", "usb14", Some("invalid boot device 'usb14'")),
    ("pve-qm-bootdev-list", "hostpci16", Some("invalid boot device 'hostpci16'")),
    // Drive.pm verify_bootdisk: any drive, the EFI disk and TPM state included
    ("pve-qm-bootdisk", "scsi0", None),
    ("pve-qm-bootdisk", "efidisk0", None),
    ("pve-qm-bootdisk", "net0", Some("invalid boot disk 'net0'")),
    ("pve-qm-bootdisk", "ide4", Some("invalid boot disk 'ide4'")),
    // QemuServer.pm parse_hotplug_features
    ("pve-hotplug-features", "0", None),
    ("pve-hotplug-features", "1", None),
    ("pve-hotplug-features", "network,disk,usb", None),
    ("pve-hotplug-features", "cpu;memory cloudinit", None),
    ("pve-hotplug-features", "network,floppy", Some("invalid hotplug feature 'floppy'")),
    ("pve-hotplug-features", "2", Some("invalid hotplug feature '2'")),
    // CpuSet.pm parse_cpuset
    ("pve-cpuset", "0-3,8", None),
    ("pve-cpuset", " 1 , 4-5 ", None),
    ("pve-cpuset", "3-1", Some("unable to parse cpuset option")),
    ("pve-cpuset", "a", Some("unable to parse cpuset option")),
    ("pve-cpuset", "1,,2", Some("unable to parse cpuset option")),
    // CPUConfig.pm parse_phys_bits
    ("pve-phys-bits", "host", None),
    ("pve-phys-bits", "40", None),
    ("pve-phys-bits", "7", Some("value must be an integer between 8 and 64 or 'host'")),
    ("pve-phys-bits", "65", Some("value must be an integer between 8 and 64 or 'host'")),
    ("pve-phys-bits", "040", Some("value must be an integer between 8 and 64 or 'host'")),
    // AccessControl.pm verify_poolname
    ("pve-poolid", "prod", None),
    ("pve-poolid", "prod/web/a-1", None),
    ("pve-poolid", "a/b/c/d", Some("pool name 'a/b/c/d' nested too deeply (max levels = 3)")),
    ("pve-poolid", "prod web", Some("pool name 'prod web' contains invalid characters")),
    ("pve-poolid", "prod//web", Some("pool name 'prod//web' contains invalid characters")),
    // Auth/Plugin.pm pve_verify_realm
    ("pve-realm", "pam", None),
    ("pve-realm", "ad-corp.1", None),
    ("pve-realm", "1pam", Some("value does not look like a valid realm")),
    ("pve-realm", "p", Some("value does not look like a valid realm")),
    // JSONSchema.pm verify_storagepair, through `-list`
    ("storage-pair-list", "1", None),
    ("storage-pair-list", "local-lvm:ceph,local:nfs", None),
    ("storage-pair-list", "ceph", None),
    (
        "storage-pair-list",
        "local-lvm:c",
        Some("entry 'local-lvm:c' contains invalid ID - storage ID 'c' cannot be shorter than 2 characters"),
    ),
    (
        "storage-pair-list",
        "a:b:c",
        Some("entry 'a:b:c' contains invalid ID - storage ID 'a:b:c' contains illegal characters"),
    ),
];

#[test]
fn code_defined_formats_accept_and_refuse_as_pve_does() {
    for (name, value, want) in TABLE {
        let got = verify_named(name, value);
        assert_eq!(got.as_ref().map(|r| r.as_ref().err().map(String::as_str)), Some(*want), "{name} {value:?}");
    }
}

#[test]
fn a_vm_cpu_is_checked_as_validate_vm_cpu_conf_does() {
    let flags = "VM-specific CPU flags must be a subset of: aes, amd-no-ssb, amd-ssbd, hv-evmcs, hv-tlbflush, \
                 ibpb, md-clear, nested-virt, pcid, pdpe1gb, spec-ctrl, ssbd, virt-ssbd";
    type Case<'a> = (&'a [(&'a str, &'a str)], Option<&'a str>);
    let table: &[Case] = &[
        (&[("cputype", "host")], None),
        (&[("cputype", "x86-64-v2-AES"), ("flags", "+aes;-pcid;+nested-virt")], None),
        (&[("cputype", "custom-mine")], None),
        (&[("cputype", "cortex-a72")], None),
        (&[("flags", "+aes")], Some("CPU is missing cputype")),
        (&[("cputype", "Skylake")], Some("Built-in cputype 'Skylake' is not defined (missing 'custom-' prefix?)")),
        (&[("cputype", "host"), ("flags", "+judge")], Some(flags)),
        (&[("cputype", "host"), ("flags", "+aes;")], Some(flags)),
        (
            &[("cputype", "host"), ("reported-model", "kvm64")],
            Some("Property 'reported-model' not allowed in VM-specific CPU config."),
        ),
    ];
    for (pairs, want) in table {
        let get = |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| v.to_string());
        assert_eq!(vm_cpu_conf(&get).err().as_deref(), *want, "{pairs:?}");
    }
}

#[test]
fn the_lists_are_sorted_as_pve_prints_them() {
    let mut flags = VM_CPU_FLAGS.to_vec();
    flags.sort_unstable();
    assert_eq!(flags, VM_CPU_FLAGS);
    assert!(CPU_MODELS.contains(&"host") && CPU_MODELS.contains(&"x86-64-v2-AES") && CPU_MODELS.contains(&"kvm64"));
}
