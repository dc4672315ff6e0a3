//! Tests of proxmox_vm_info's plan and result: the selection of cluster entries and the merged return shape, without a network.
#![allow(clippy::unwrap_used)]

use module_utils::pve::resources::VmResource;
use serde_json::{json, Map, Value};

use super::*;

fn cluster() -> Vec<VmResource> {
    [
        json!({"vmid": 100, "name": "web", "node": "pve1", "type": "qemu", "status": "running", "template": 0, "id": "qemu/100"}),
        json!({"vmid": 9000, "name": "tmpl", "node": "pve1", "type": "qemu", "status": "stopped", "template": 1, "id": "qemu/9000"}),
        json!({"vmid": 101, "node": "pve2", "type": "qemu", "status": "stopped", "id": "qemu/101"}),
        json!({"vmid": 200, "name": "web", "node": "pve2", "type": "lxc", "status": "running", "id": "lxc/200"}),
    ]
    .iter()
    .filter_map(VmResource::from_json)
    .collect()
}

fn params() -> Params {
    Params { node: None, kind: None, vmid: None, name: None, config: ConfigMode::None, network: false }
}

fn ids(sel: Vec<&VmResource>) -> Vec<u64> {
    sel.iter().map(|v| v.vmid).collect()
}

#[test]
fn selection_table() {
    let c = cluster();
    let cases: Vec<(Params, Vec<u64>)> = vec![
        (params(), vec![100, 101, 200, 9000]),
        (Params { kind: Some("qemu".into()), ..params() }, vec![100, 101, 9000]),
        (Params { node: Some("pve2".into()), ..params() }, vec![101, 200]),
        (Params { vmid: Some(9000), ..params() }, vec![9000]),
        (Params { vmid: Some(4242), ..params() }, vec![]),
        (Params { name: Some("web".into()), ..params() }, vec![100, 200]),
        (Params { name: Some("".into()), ..params() }, vec![101]),
    ];
    let mut sorted = c.clone();
    sorted.sort_by_key(|v| v.vmid);
    for (p, want) in cases {
        assert_eq!(ids(select(&sorted, &p)), want, "params {p:?}");
    }
}

#[test]
fn merged_entry_types_vmid_and_template() {
    let c = cluster();
    let node_entry: Map<String, Value> =
        serde_json::from_value(json!({"vmid": "9000", "pid": 1234, "template": "1"})).unwrap();
    let e = merge_entry(&c[1], Some(&node_entry));
    assert_eq!(e["vmid"], json!(9000));
    assert_eq!(e["template"], json!(true));
    assert_eq!(e["pid"], json!(1234));
    assert_eq!(merge_entry(&c[0], None)["template"], json!(false));
}

#[test]
fn a_predicted_config_shows_what_is_known_after_apply_where_the_value_will_stand() {
    // A VM an earlier task of the check run creates: its NIC's MAC is drawn by PVE at apply. The
    // config and the parsed NIC show the marker in the MAC's place (the first seed's playbook
    // reads `net0.split(',')[0].split('=')[1]`), and the disk's name is the predicted one.
    let predicted = module_utils::pve::config::VmConfig::from_current(
        [("net0", "virtio=(known after apply),bridge=vmbr0"), ("scsi1", "local-lvm:vm-301-disk-2,size=8G")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    let mut entry = Map::new();
    result::add_config(&mut entry, "qemu", result::predicted_config_view(&predicted, ConfigMode::Current));
    assert_eq!(entry["config"]["net0"], json!("virtio=(known after apply),bridge=vmbr0"));
    assert_eq!(entry["nics"][0]["mac"], json!(module_utils::check::unknown::KNOWN_AFTER_APPLY));
    assert_eq!(entry["nics"][0]["bridge"], json!("vmbr0"));
    assert_eq!(entry["disks"][0]["volume"], json!("local-lvm:vm-301-disk-2"));
}

module_utils::stub_test!(SPEC);
