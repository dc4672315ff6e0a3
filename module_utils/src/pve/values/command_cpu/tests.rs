//! The CPU, machine, firmware and memory rules of a start as tables: the config PVE refuses or takes, and PVE's words (docs/pve-semantics.md §61).

use super::*;
use crate::pve::values::{start, start_with};

fn conf(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn ovmf_refuses_a_32_bit_cpu_type_and_an_efi_disk_path_without_a_format() {
    let bits32 = Some("OVMF (UEFI) BIOS is not supported on 32-bit CPU types".to_string());
    assert_eq!(firmware(&conf(&[("bios", "ovmf"), ("cpu", "kvm32")])), bits32);
    assert_eq!(firmware(&conf(&[("bios", "ovmf"), ("cpu", "cputype=pentium3,flags=+aes")])), bits32);
    // a 64-bit type, a built-in x86-64-v* (qemu64), a custom model (the host's), SeaBIOS, aarch64
    for c in [
        conf(&[("bios", "ovmf"), ("cpu", "host")]),
        conf(&[("bios", "ovmf"), ("cpu", "x86-64-v2-AES")]),
        conf(&[("bios", "ovmf"), ("cpu", "custom-old")]),
        conf(&[("bios", "seabios"), ("cpu", "kvm32")]),
        conf(&[("cpu", "kvm32")]),
        conf(&[("bios", "ovmf"), ("cpu", "kvm32"), ("arch", "aarch64")]),
    ] {
        assert_eq!(firmware(&c), None, "{c:?}");
    }
    let format = Some("efidisk format must be specified".to_string());
    assert_eq!(firmware(&conf(&[("bios", "ovmf"), ("efidisk0", "/dev/sdb,efitype=4m")])), format);
    assert_eq!(firmware(&conf(&[("bios", "ovmf"), ("efidisk0", "file=/dev/sdb")])), format);
    // a format, a volume, SEV-SNP and TDX (booted with -bios)
    for c in [
        conf(&[("bios", "ovmf"), ("efidisk0", "/dev/sdb,format=raw")]),
        conf(&[("bios", "ovmf"), ("efidisk0", "local-lvm:vm-100-disk-1,efitype=4m")]),
        conf(&[("bios", "ovmf"), ("efidisk0", "/dev/sdb"), ("amd-sev", "type=snp")]),
        conf(&[("bios", "ovmf"), ("efidisk0", "/dev/sdb"), ("intel-tdx", "tdx")]),
        conf(&[("efidisk0", "/dev/sdb")]),
    ] {
        assert_eq!(firmware(&c), None, "{c:?}");
    }
}

#[test]
fn cpu_hotplug_is_refused_on_aarch64_only_with_a_second_vcpu() {
    let refused = Some("Hotplug of non x86_64 CPU not yet supported".to_string());
    let arm = [("arch", "aarch64"), ("hotplug", "cpu,disk")];
    assert_eq!(cpu_hotplug(&conf(&arm), 2), refused);
    assert_eq!(cpu_hotplug(&conf(&[arm[0], arm[1], ("vcpus", "2")]), 4), refused);
    assert_eq!(cpu_hotplug(&conf(&[arm[0], arm[1], ("vcpus", "1")]), 4), None);
    assert_eq!(cpu_hotplug(&conf(&arm), 1), None);
    assert_eq!(cpu_hotplug(&conf(&[arm[0], ("hotplug", "1")]), 4), None);
    assert_eq!(cpu_hotplug(&conf(&[arm[0], arm[1], ("machine", "virt-2.6")]), 4), None);
    assert_eq!(cpu_hotplug(&conf(&[("hotplug", "cpu")]), 4), None);
}

#[test]
fn the_viommu_options_are_checked_as_machine_pm_does() {
    let q35 = Some("to use Intel vIOMMU please set the machine type to q35".to_string());
    assert_eq!(machine("viommu=intel"), q35);
    assert_eq!(machine("pc-i440fx-9.2,viommu=intel"), q35);
    assert_eq!(
        machine("q35,viommu=intel,aw-bits=40"),
        Some("Intel vIOMMU supports only 39 or 48 bits as address width".into())
    );
    assert_eq!(machine("q35,aw-bits=40"), Some("cannot set aw-bits if no vIOMMU is configured".into()));
    for ok in ["q35,viommu=intel,aw-bits=48", "pc-q35-9.2,viommu=intel", "viommu=virtio,aw-bits=40", "q35", ""] {
        assert_eq!(machine(ok), None, "{ok}");
    }
    let form: Form = vec![("machine".into(), "pc,viommu=intel".into())];
    assert_eq!(request_machine(&form), Some("machine: to use Intel vIOMMU please set the machine type to q35".into()));
}

#[test]
fn a_numa_range_ending_below_its_start_is_refused() {
    assert_eq!(numa_ranges("cpus=3-1,memory=512"), Some("invalid range: 3-1 (1 < 3)".into()));
    assert_eq!(numa_ranges("cpus=0;2-1,memory=512"), Some("invalid range: 2-1 (1 < 2)".into()));
    assert_eq!(numa_ranges("cpus=0-1,hostnodes=1-0,memory=512"), Some("invalid range: 1-0 (0 < 1)".into()));
    assert_eq!(numa_ranges("cpus=0-1;3,hostnodes=0,memory=512"), None);
}

#[test]
fn hot_plugged_memory_must_be_reached_by_whole_dimms() {
    let hot = |m: &str| conf(&[("hotplug", "memory,disk"), ("numa", "1"), ("memory", m)]);
    assert_eq!(dimm(&hot("1500")), Some("memory size (1500) must be aligned to 512 for hotplugging".into()));
    // 1024 + 32 x 512 = 17408; past it the DIMMs are 1024
    assert_eq!(dimm(&hot("17920")), Some("memory size (17920) must be aligned to 1024 for hotplugging".into()));
    for ok in ["1024", "1536", "4096", "17408", "18432"] {
        assert_eq!(dimm(&hot(ok)), None, "{ok}");
    }
    // above the smallest maximum (the host's address bits), with hugepages, without memory hot-plug
    assert_eq!(dimm(&hot("40000")), None);
    assert_eq!(dimm(&conf(&[("hotplug", "memory"), ("numa", "1"), ("memory", "1500"), ("hugepages", "2")])), None);
    assert_eq!(dimm(&conf(&[("memory", "1500")])), None);
}

#[test]
fn a_start_meets_them_in_config_to_command_s_order() {
    // OVMF's check comes before USB and the CPU count
    let c = conf(&[("bios", "ovmf"), ("cpu", "qemu32"), ("cores", "64")]);
    assert_eq!(start(&c, Some(4)).as_deref(), Some("OVMF (UEFI) BIOS is not supported on 32-bit CPU types"));
    // the vIOMMU after the clipboard and the NICs
    let c = conf(&[("machine", "viommu=intel"), ("vga", "serial0,clipboard=vnc")]);
    assert_eq!(start(&c, None).as_deref(), Some("vga type serial0 is not compatible with VNC clipboard"));
    assert_eq!(start(&conf(&[("machine", "viommu=intel")]), None), machine("viommu=intel"));
    // a reversed NUMA range before the node's missing memory
    let c = conf(&[("numa", "1"), ("numa0", "cpus=1-0")]);
    assert_eq!(start(&c, None).as_deref(), Some("invalid range: 1-0 (0 < 1)"));
    let c = conf(&[("hotplug", "memory"), ("numa", "1"), ("memory", "2000")]);
    assert_eq!(start(&c, None).as_deref(), Some("memory size (2000) must be aligned to 512 for hotplugging"));
}

#[test]
fn a_cpu_model_is_looked_up_in_the_list_of_the_vm_s_architecture() {
    let x86: Vec<String> =
        ["kvm64", "qemu64", "host", "Skylake-Server", "Icelake-Server", "x86-64-v2-AES"].map(String::from).to_vec();
    let arm: Vec<String> = ["cortex-a57", "max"].map(String::from).to_vec();
    // the generic and built-in x86_64 types, custom models and no `cpu` need no list
    for c in [conf(&[("cpu", "host")]), conf(&[("cpu", "x86-64-v3")]), conf(&[("cpu", "custom-mine")]), conf(&[])] {
        assert_eq!(model_to_check(&c), None, "{c:?}");
    }
    let words =
        |m: &str, a: &str| Some(format!("CPU model '{m}' does not exist for configured vCPU architecture '{a}'"));
    assert_eq!(cpu_model(&conf(&[("cpu", "cortex-a57")]), Some(&x86)), words("cortex-a57", "x86_64"));
    assert_eq!(cpu_model(&conf(&[("cpu", "cputype=Skylake-Server,flags=+aes")]), Some(&x86)), None);
    // the deprecated client type stands for the server one
    assert_eq!(cpu_model(&conf(&[("cpu", "Icelake-Client")]), Some(&x86)), None);
    let arm_vm = |cpu: &str| conf(&[("arch", "aarch64"), ("cpu", cpu)]);
    assert_eq!(cpu_model(&arm_vm("x86-64-v2-AES"), Some(&arm)), words("x86-64-v2-AES", "aarch64"));
    assert_eq!(cpu_model(&arm_vm("host"), Some(&arm)), words("host", "aarch64"));
    assert_eq!(cpu_model(&arm_vm("cortex-a57"), Some(&arm)), None);
    // not read, or nothing listed: not decided
    assert_eq!(cpu_model(&conf(&[("cpu", "cortex-a57")]), None), None);
    assert_eq!(cpu_model(&conf(&[("cpu", "cortex-a57")]), Some(&[])), None);
    // after CPU hot-plug, before the memory
    let c = conf(&[("cpu", "cortex-a57"), ("hotplug", "memory"), ("memory", "1500")]);
    let facts = StartFacts { models: Some(x86.clone()), ..StartFacts::default() };
    assert_eq!(start_with(&c, &facts), words("cortex-a57", "x86_64"));
}

#[test]
fn a_custom_model_stands_for_the_model_it_reports() {
    let ovmf = conf(&[("bios", "ovmf"), ("cpu", "custom-old,flags=+aes")]);
    let reported = |m: &str| StartFacts { reported: Some(m.into()), ..StartFacts::default() };
    assert_eq!(
        start_with(&ovmf, &reported("qemu32")).as_deref(),
        Some("OVMF (UEFI) BIOS is not supported on 32-bit CPU types")
    );
    assert_eq!(start_with(&ovmf, &reported("Skylake-Server")), None);
    // not known (a definition this user may not read): not decided
    assert_eq!(start_with(&ovmf, &StartFacts::default()), None);
    // a built-in type is never resolved
    assert_eq!(resolve_custom(&conf(&[("cpu", "kvm32")]), Some("qemu64")), None);
    let arm = StartFacts {
        reported: Some("cortex-a53".into()),
        models: Some(vec!["kvm64".into()]),
        cpus: None,
        ..Default::default()
    };
    assert_eq!(
        start_with(&conf(&[("cpu", "custom-arm")]), &arm).as_deref(),
        Some("CPU model 'cortex-a53' does not exist for configured vCPU architecture 'x86_64'")
    );
}
