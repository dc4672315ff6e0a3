//! The read-back comparison: what counts as PVE storing the prediction, and what fails (§46).

use super::*;

#[test]
fn a_key_the_task_touched_stored_otherwise_is_named_with_both_values() {
    let before = VmConfig::from_pairs(&[("boot", "order=scsi0;net0"), ("scsi0", "local-lvm:vm-100-disk-0,size=4G")]);
    let predicted = VmConfig::from_pairs(&[
        ("boot", "order=ide2;scsi0;net0"),
        ("ide2", "local:iso/d.iso,media=cdrom,size=(known after apply)"),
        ("scsi0", "local-lvm:vm-100-disk-0,size=4G"),
    ]);
    let stored = VmConfig::from_pairs(&[
        ("boot", "order=scsi0;net0;ide2"),
        ("ide2", "local:iso/d.iso,media=cdrom,size=754M"),
        ("scsi0", "local-lvm:vm-100-disk-0,size=4G"),
    ]);
    let found = mismatches(Some(&before), &predicted, &stored);
    assert_eq!(
        found,
        [Mismatch {
            key: "boot".into(),
            predicted: Some("order=ide2;scsi0;net0".into()),
            stored: Some("order=scsi0;net0;ide2".into())
        }]
    );
    let err = verify("VM 100", Some(&before), &predicted, &stored).unwrap_err().to_string();
    assert!(err.contains("boot: predicted 'order=ide2;scsi0;net0', stored 'order=scsi0;net0;ide2'"), "{err}");
    assert!(err.contains("VM 100"), "{err}");
}

#[test]
fn what_the_task_did_not_touch_and_what_pve_chooses_are_not_compared() {
    // a create: every predicted key is the task's; `boot` and `digest` PVE added are not
    let predicted = VmConfig::from_pairs(&[
        ("meta", "creation-qemu=(known after apply),ctime=(known after apply)"),
        ("net0", "virtio=(known after apply),bridge=vmbr0"),
        ("scsi0", "local-lvm:vm-100-disk-0,size=4G"),
        ("sata0", "local-lvm:2"),
        ("onboot", "1"),
        ("tags", "a;b"),
        ("cipassword", "secret"),
    ]);
    let mut stored = VmConfig::from_pairs(&[
        ("meta", "creation-qemu=9.2.0,ctime=1700000000"),
        ("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=0"),
        ("scsi0", "local-lvm:vm-100-disk-1,size=4G"),
        ("sata0", "local-lvm:vm-100-disk-2,size=2G"),
        ("onboot", "true"),
        ("tags", "b;A"),
        ("cipassword", "**********"),
        ("boot", "order=scsi0;net0"),
    ]);
    stored.digest = Some("abc".into());
    assert_eq!(mismatches(None, &predicted, &stored), []);
    assert!(verify("VM 100", None, &predicted, &stored).is_ok());
}

#[test]
fn a_drive_on_another_storage_a_key_missing_and_a_removal_not_made_fail() {
    let predicted = VmConfig::from_pairs(&[("scsi0", "local-lvm:vm-100-disk-0,size=4G"), ("cores", "4")]);
    let stored = VmConfig::from_pairs(&[("scsi0", "other:vm-100-disk-0,size=4G"), ("memory", "512")]);
    let before = VmConfig::from_pairs(&[("cores", "2"), ("memory", "512")]);
    let keys: Vec<String> = mismatches(Some(&before), &predicted, &stored).into_iter().map(|m| m.key).collect();
    assert_eq!(keys, ["cores", "memory", "scsi0"]);
}

#[test]
fn pending_values_are_what_pve_stored() {
    let before = VmConfig::from_pairs(&[("cores", "2")]);
    let predicted = before.with_change("cores", Some("4"), true);
    let mut stored = VmConfig::from_pairs(&[("cores", "2")]);
    assert_eq!(mismatches(Some(&before), &predicted, &stored).len(), 1, "not written at all");
    stored.pending.insert("cores".into(), "4".into());
    assert_eq!(mismatches(Some(&before), &predicted, &stored), []);
}

#[test]
fn the_marker_matches_any_text_in_its_place_and_nothing_else() {
    assert!(wildcard("uuid=(known after apply)", "uuid=1234"));
    assert!(wildcard("a(known after apply)b(known after apply)c", "a1b2c"));
    assert!(!wildcard("a(known after apply)b", "xb"));
    assert!(!wildcard("plain", "plain"), "no marker: not a pattern");
    assert!(scalar_equal("2", "2.0") && !scalar_equal("2", "3") && scalar_equal("on", "1"));
}
