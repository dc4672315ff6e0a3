//! The drive and PCI device rules as tables: each config with what a start says of it (docs/pve-semantics.md §62).

use serde_json::json;

use super::*;
use crate::pve::values::{command_cpu::StartFacts, start_with};

fn start_on(config: &BTreeMap<String, String>, cpus: Option<u64>, storages: &[StorageConfig]) -> Option<String> {
    start_with(config, &StartFacts { cpus, storages: storages.to_vec().into(), ..StartFacts::default() })
}

/// A config as `(key, value)` pairs, with what a rule says of it.
type Cases<'a> = &'a [(&'a [(&'a str, &'a str)], Option<&'a str>)];

fn cfg(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn storages() -> Vec<StorageConfig> {
    [
        json!({"storage": "local", "type": "dir", "content": "iso,import", "path": "/var/lib/vz"}),
        json!({"storage": "local-lvm", "type": "lvmthin", "content": "images,rootdir"}),
        json!({"storage": "vmdata", "type": "dir", "content": "images", "path": "/mnt/vmdata"}),
        json!({"storage": "zfs", "type": "zfspool", "content": "images,rootdir", "pool": "rpool"}),
        json!({"storage": "chain", "type": "lvm", "content": "images", "vgname": "vg", "snapshot-as-volume-chain": 1}),
    ]
    .iter()
    .filter_map(StorageConfig::from_json)
    .collect()
}

#[test]
fn a_volume_on_a_storage_without_its_content_type_is_refused_before_the_command_line() {
    let s = storages();
    let cases: Cases = &[
        (
            &[("scsi0", "local:100/vm-100-disk-0.raw,size=4G")],
            Some("storage 'local' does not support content-type 'images'"),
        ),
        (
            &[("ide2", "vmdata:iso/debian.iso,media=cdrom")],
            Some("storage 'vmdata' does not support content-type 'iso'"),
        ),
        (
            &[("vmstate", "local:100/vm-100-state-s1.raw")],
            Some("storage 'local' does not support content-type 'images'"),
        ),
        (&[("ide2", "local:iso/debian.iso,media=cdrom"), ("scsi0", "local-lvm:vm-100-disk-0")], None),
        // a storage this user does not see, `none`, a path: PVE's to tell, or nothing to check
        (&[("scsi0", "hidden:vm-100-disk-0"), ("ide2", "none,media=cdrom"), ("sata0", "/dev/sdb")], None),
    ];
    for (config, words) in cases {
        assert_eq!(content(&cfg(config), &s).as_deref(), *words, "{config:?}");
    }
}

#[test]
fn drive_formats_scsi_count_and_volume_chains_follow_the_drive_loop() {
    let s = storages();
    let chain = "storage for 'chain:vm-100-disk-0.qcow2' is configured for snapshots as a volume chain - this requires QEMU machine version >= 10.0. See https://pve.proxmox.com/wiki/QEMU_Machine_Version_Upgrade";
    let cases: Cases = &[
        (&[("scsi14", "local-lvm:vm-100-disk-1"), ("machine", "pc-i440fx-4.0")],
            Some("scsi14: machine version 4.1~pve2 or higher is required to use more than 14 SCSI disks")),
        (&[("scsi14", "local-lvm:vm-100-disk-1"), ("machine", "type=pc-q35-4.1")],
            Some("scsi14: machine version 4.1~pve2 or higher is required to use more than 14 SCSI disks")),
        (&[("scsi14", "local-lvm:vm-100-disk-1"), ("machine", "pc-i440fx-4.1+pve2")], None),
        (&[("scsi14", "local-lvm:vm-100-disk-1"), ("machine", "q35")], None),
        (&[("scsi13", "local-lvm:vm-100-disk-1"), ("machine", "pc-i440fx-2.0")], None),
        (&[("scsi0", "local-lvm:vm-100-disk-0,format=qcow2")],
            Some("drive 'scsi0' - volume 'local-lvm:vm-100-disk-0' - 'format=qcow2' option different from storage format 'raw'")),
        (&[("virtio1", "vmdata:100/vm-100-disk-1.qcow2,format=qcow2")], None),
        (&[("ide2", "local:iso/debian.iso,media=cdrom,format=raw")], None),
        (&[("scsi1", "zfs:subvol-100-disk-0")], Some("volume 'zfs:subvol-100-disk-0' - not a QEMU image format 'subvol'")),
        (&[("scsi1", "vmdata:100/subvol-100-disk-0.subvol")],
            Some("volume 'vmdata:100/subvol-100-disk-0.subvol' - not a QEMU image format 'subvol'")),
        (&[("scsi0", "chain:vm-100-disk-0.qcow2"), ("machine", "pc-q35-9.2+pve1")], Some(chain)),
        (&[("scsi0", "chain:vm-100-disk-0.qcow2"), ("machine", "pc-q35-10.0")], None),
        (&[("scsi0", "chain:vm-100-disk-0.qcow2")], None),
        // the EFI disk and TPM state are printed before the loop, by other rules
        (&[("efidisk0", "local-lvm:vm-100-disk-2,format=qcow2")], None),
    ];
    for (config, words) in cases {
        assert_eq!(drive(&cfg(config), &s).as_deref(), *words, "{config:?}");
    }
}

#[test]
fn hostpci_option_combinations_are_refused_from_the_config() {
    let igd = |v: &str| cfg(&[("hostpci0", v), ("vga", "none")]);
    let cases: Vec<(BTreeMap<String, String>, Option<&str>)> = vec![
        (
            cfg(&[("hostpci0", "01:00.0;01:00.1,mdev=i915-GVTg_V5_4")]),
            Some("cannot use mediated device with multifunction device"),
        ),
        (cfg(&[("hostpci0", "01:00.0,pcie=1")]), Some("q35 machine model is not enabled")),
        (cfg(&[("hostpci0", "01:00.0,pcie=1"), ("machine", "q35")]), None),
        (cfg(&[("hostpci0", "00:02.0,legacy-igd=1")]), Some("legacy IGD assignment requires VGA mode to be 'none'")),
        (igd("00:02.0,legacy-igd=1,rombar=0"), Some("legacy IGD assignment requires rombar to be enabled")),
        (igd("00:02.0,legacy-igd=1,x-vga=1"), Some("legacy IGD assignment is not compatible with x-vga")),
        (igd("00:02.0,legacy-igd=1,mdev=i915-GVTg_V5_4"), Some("legacy IGD assignment is not compatible with mdev")),
        (
            igd("00:02.0;00:02.1,legacy-igd=1"),
            Some("legacy IGD assignment is not compatible with multifunction devices"),
        ),
        (igd("00:03.0,legacy-igd=1"), Some("legacy IGD assignment only works for devices on host bus 00:02.0")),
        (igd("00:02.0,legacy-igd=1"), None),
        (igd("00:02,legacy-igd=1"), None),
        (
            cfg(&[("hostpci0", "00:02.0,legacy-igd=1"), ("hostpci1", "00:02.0,legacy-igd=1"), ("vga", "none")]),
            Some("only one device can be assigned in legacy-igd mode"),
        ),
        (
            cfg(&[("hostpci0", "00:02.0,legacy-igd=1"), ("vga", "none"), ("machine", "pc-q35-9.0")]),
            Some("legacy IGD assignment is not compatible with q35"),
        ),
        // a mapping this user cannot see ends what the config decides (§64)
        (cfg(&[("hostpci0", "mapping=gpu"), ("hostpci1", "01:00.0,pcie=1")]), None),
        (igd("01:00,mdev=i915-GVTg_V5_4"), None),
    ];
    for (config, words) in &cases {
        assert_eq!(hostpci(config, &|_| None, None).as_deref(), *words, "{config:?}");
    }
}

/// PCI.pm `parse_hostpci` (a mapping's entries on the node, one alternative each) and
/// `parse_hostpci_devices` (`legacy IGD assignment is not compatible with alternate devices`,
/// after the multifunction check, before the `02.0` one), per device in `hostpciN` order (§70).
#[test]
fn a_legacy_igd_mapping_with_several_devices_on_the_node_is_refused_in_its_place() {
    let paths = |p: &[&str]| Some(Ok(p.iter().map(|s| s.to_string()).collect()));
    let two = |_: &str| paths(&["0000:00:02.0", "0000:00:02.1"]);
    let igd = |v: &str| cfg(&[("hostpci0", v), ("vga", "none")]);
    let alternate = Some("legacy IGD assignment is not compatible with alternate devices");
    assert_eq!(hostpci(&igd("mapping=gpu,legacy-igd=1"), &two, None).as_deref(), alternate);
    assert_eq!(hostpci(&igd("mapping=gpu"), &two, None), None);
    let one = |_: &str| paths(&["0000:00:02.0"]);
    assert_eq!(hostpci(&igd("mapping=gpu,legacy-igd=1"), &one, None), None);
    // a multifunction entry is refused first; an entry without a function is the host's to tell
    let multi = |_: &str| paths(&["0000:00:02.0", "0000:00:02.0;0000:00:02.1"]);
    let words = hostpci(&igd("mapping=gpu,legacy-igd=1"), &multi, None);
    assert_eq!(words.as_deref(), Some("legacy IGD assignment is not compatible with multifunction devices"));
    let whole = |_: &str| paths(&["0000:00:02", "0000:00:03.0"]);
    assert_eq!(hostpci(&igd("mapping=gpu,legacy-igd=1"), &whole, None), None);
    // the VGA rule comes before the devices; the mapping's own checks before both
    let vga = cfg(&[("hostpci0", "mapping=gpu,legacy-igd=1")]);
    assert_eq!(hostpci(&vga, &two, None).as_deref(), Some("legacy IGD assignment requires VGA mode to be 'none'"));
    let gone = |id: &str| Some(Err(format!("PCI device mapping not found for '{id}'")));
    assert_eq!(hostpci(&vga, &gone, None).as_deref(), Some("PCI device mapping not found for 'gpu'"));
    // each device in its turn: hostpci0's refusal before hostpci1's mapping
    let first = cfg(&[("hostpci0", "01:00.0,pcie=1"), ("hostpci1", "mapping=gpu")]);
    assert_eq!(hostpci(&first, &gone, None).as_deref(), Some("q35 machine model is not enabled"));
    // a mapping this user cannot read: a `pcie` device without q35 is refused whatever the mapping holds
    // (differential seed 43: DIFF_ONLY=1725); without `pcie`, or on q35, not known
    let hidden = |_: &str| None;
    let pcie = cfg(&[("hostpci0", "mapping=gpu,pcie=1")]);
    assert_eq!(hostpci(&pcie, &hidden, None).as_deref(), Some("q35 machine model is not enabled"));
    assert_eq!(hostpci(&cfg(&[("hostpci0", "mapping=gpu")]), &hidden, None), None);
    let q35 = cfg(&[("hostpci0", "mapping=gpu,pcie=1"), ("machine", "q35")]);
    assert_eq!(hostpci(&q35, &hidden, None), None);
}

#[test]
fn a_start_checks_the_volumes_first_then_the_pci_devices_then_the_drives_after_the_clipboard() {
    let s = storages();
    let both = cfg(&[("scsi0", "local:100/vm-100-disk-0.raw"), ("hostpci0", "01:00.0,pcie=1")]);
    assert_eq!(start_on(&both, None, &s).as_deref(), Some("storage 'local' does not support content-type 'images'"));
    let clip = cfg(&[("scsi0", "local-lvm:vm-100-disk-0,format=qcow2"), ("vga", "serial0,clipboard=vnc")]);
    assert_eq!(start_on(&clip, None, &s).as_deref(), Some("vga type serial0 is not compatible with VNC clipboard"));
    let mtu = cfg(&[
        ("scsi0", "local-lvm:vm-100-disk-0,format=qcow2"),
        ("net0", "virtio=BC:24:11:00:00:02,bridge=vmbr0,mtu=500"),
    ]);
    assert!(start_on(&mtu, None, &s).is_some_and(|w| w.starts_with("drive 'scsi0'")));
}

/// PCI.pm `parse_hostpci`: each `host` id is looked up with SysFSTools.pm `lspci` (a prefix of the
/// full id, its `0000:` domain optional) before the option rules; a node without it refuses.
#[test]
fn a_host_id_the_node_lacks_is_refused_first() {
    let node: Vec<String> = ["0000:01:00.0", "0000:01:00.1", "0001:02:00.0"].map(String::from).to_vec();
    assert_eq!((lspci(&node, "01:00"), lspci(&node, "0000:01:00.1"), lspci(&node, "0001:02:00")), (2, 1, 1));
    assert_eq!(lspci(&node, "02:00.0"), 0);
    let config = |v: &str| BTreeMap::from([("hostpci0".to_string(), v.to_string())]);
    let words = |v: &str| hostpci(&config(v), &|_| None, Some(&node));
    assert_eq!(words("01:00;03:00.0,pcie=1").as_deref(), Some("no PCI device found for '03:00.0'"));
    assert_eq!(words("01:00,pcie=1").as_deref(), Some("q35 machine model is not enabled"));
    assert_eq!(hostpci(&config("03:00.0"), &|_| None, None), None, "not read: not known");
    assert_eq!(host_ids(&config("host=01:00.0;01:00.1")), ["01:00.0", "01:00.1"]);
}
