//! Machine.pm's versions and `config_to_command`'s machine check over the class (docs/pve-semantics.md §73).

use std::collections::BTreeMap;

use super::*;

fn config(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Machine.pm `extract_version_parts`, for every form the `machine` format takes.
#[test]
fn a_machine_type_s_version_is_read_as_machine_pm_does() {
    let cases = [
        ("pc-i440fx-9.2+pve1", Some((9, 2, 1))),
        ("pc-q35-8.1", Some((8, 1, 0))),
        ("pc-8.1.pxe", Some((8, 1, 0))),
        ("pc-q35-10.0+pve1.pxe", Some((10, 0, 1))),
        ("pc-i440fx-2.12.1+pve3", Some((2, 12, 3))),
        ("virt-9.0", Some((9, 0, 0))),
        ("virt-10.1+pve2", Some((10, 1, 2))),
        ("pc", None),
        ("q35", None),
        ("virt", None),
        ("pc-q35-9", None),
    ];
    for (machine, parts) in cases {
        assert_eq!(version(machine), parts, "{machine}");
    }
    assert_eq!(pinned(&config(&[("machine", "type=pc-q35-9.2+pve1,viommu=intel")])), Some((9, 2, 1)));
    assert_eq!(pinned(&config(&[("machine", "viommu=virtio")])), None);
    assert_eq!(pinned(&config(&[("machine", "q35,viommu=virtio")])), None);
}

/// `get_vm_machine`: a pinned type without `+pveN` gets `+pve0` (before `.pxe`); an unpinned one and a
/// Windows `ostype` are never pinned here; a resumed VM runs its `runningmachine`.
#[test]
fn the_machine_a_start_pins_is_named_as_get_vm_machine_names_it() {
    let start = |pairs: &[(&str, &str)]| start_machine(&config(pairs));
    assert_eq!(start(&[("machine", "pc-i440fx-8.1")]).as_deref(), Some("pc-i440fx-8.1+pve0"));
    assert_eq!(start(&[("machine", "pc-q35-9.2.pxe")]).as_deref(), Some("pc-q35-9.2+pve0.pxe"));
    assert_eq!(start(&[("machine", "type=pc-q35-9.2+pve1,viommu=intel")]).as_deref(), Some("pc-q35-9.2+pve1"));
    assert_eq!(start(&[("machine", "q35")]), None);
    assert_eq!(start(&[("ostype", "win11")]), None);
    assert_eq!(start(&[("machine", "pc"), ("ostype", "win10")]), None);
    let hibernated =
        [("machine", "q35"), ("vmstate", "local:100/vm-100-state.raw"), ("runningmachine", "pc-q35-11.0+pve2")];
    assert_eq!(start(&hibernated).as_deref(), Some("pc-q35-11.0+pve2"));
    // not resumed: the running machine of a snapshot's config is not what a start runs
    assert_eq!(start(&[("machine", "q35"), ("runningmachine", "pc-q35-11.0+pve2")]), None);
}

fn node(machines: &[Version], kvmver: Option<&str>) -> NodeQemu {
    NodeQemu { machines: machines.to_vec(), kvmver: kvmver.map(str::to_string) }
}

/// `config_to_command`: a version above QEMU's, then a `+pveN` above qemu-server's highest; a release
/// candidate skips both; the micro part of the QEMU version is `x` when the package is not read.
#[test]
fn a_pinned_machine_the_node_cannot_run_is_refused_in_pve_s_words() {
    let list = [(9, 2, 0), (9, 2, 1), (9, 1, 0), (8, 1, 0), (4, 1, 0), (4, 1, 1), (4, 1, 2)];
    let known = node(&list, Some("9.2.0"));
    let too_old = |m: &str, v: &str| {
        Some(format!("Installed QEMU version '{v}' is too old to run machine type '{m}', please upgrade node 'pve1'"))
    };
    let feature = |m: &str, x: &str, n: u64| {
        Some(format!("Installed qemu-server (max feature level for {x} is pve{n}) is too old to run machine type '{m}', please upgrade node 'pve1'"))
    };
    let cases = [
        ("pc-q35-10.0+pve0", too_old("pc-q35-10.0+pve0", "9.2.0")),
        ("pc-q35-9.3+pve0", too_old("pc-q35-9.3+pve0", "9.2.0")),
        ("pc-q35-9.2+pve0", None),
        ("pc-i440fx-9.2+pve1", None),
        ("pc-i440fx-9.2+pve2", feature("pc-i440fx-9.2+pve2", "9.2", 1)),
        ("pc-i440fx-8.1+pve0", None),
        ("pc-i440fx-8.1+pve1", feature("pc-i440fx-8.1+pve1", "8.1", 0)),
        ("pc-q35-4.1+pve2", None),
        ("pc-q35-4.1+pve3", feature("pc-q35-4.1+pve3", "4.1", 2)),
        // a version the list lacks: qemu-server's highest for it is not shown
        ("pc-q35-7.0+pve1", None),
        ("pc-q35-10.0+pve0.pxe", too_old("pc-q35-10.0+pve0.pxe", "9.2.0")),
    ];
    for (machine, words) in &cases {
        assert_eq!(refusal(machine, &known, "pve1"), *words, "{machine}");
    }
    let hidden = too_old("pc-q35-10.0+pve0", "9.2.x")
        .map(|w| w + " (x: the micro version, shown only with Sys.Audit on /nodes/pve1)");
    assert_eq!(refusal("pc-q35-10.0+pve0", &node(&list, None), "pve1"), hidden);
    for candidate in ["9.2.90", "9.2.93", "10.1.0~rc2"] {
        assert_eq!(refusal("pc-q35-11.0+pve0", &node(&list, Some(candidate)), "pve1"), None, "{candidate}");
    }
    assert_eq!(refusal("pc-q35-9.2+pve0", &node(&[], None), "pve1"), None, "nothing read: not known");
    assert_eq!(kvm_version("9.2.0-5").as_deref(), Some("9.2.0"));
    assert_eq!(kvm_version("1:10.1.2-1").as_deref(), Some("10.1.2"));
    assert_eq!(kvm_version("unknown"), None);
}
