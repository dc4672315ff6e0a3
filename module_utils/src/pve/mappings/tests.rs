//! Tests of the mapping rules: a start on a node a mapping does not cover, a migration to one, a running VM's mapped devices (docs/pve-semantics.md §64).

use std::collections::BTreeMap;

use super::*;

fn config(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn maps(entries: &[(&'static str, &str, &[&str], bool)]) -> Mappings {
    entries
        .iter()
        .map(|(kind, id, map, live)| {
            let map = map.iter().map(|s| s.to_string()).collect();
            ((*kind, id.to_string()), Mapping { map, live: *live, errors: Vec::new() })
        })
        .collect()
}

fn sees_all(_: &str, _: &str) -> bool {
    true
}

fn sees_none(_: &str, _: &str) -> bool {
    false
}

/// A start's PCI and USB devices in their order: `values::devices::hostpci` with the mappings'
/// checks of each `hostpciN`, then `start_usb`.
fn start_devices(
    c: &BTreeMap<String, String>,
    node: &str,
    m: &Mappings,
    visible: &dyn Fn(&str, &str) -> bool,
) -> Option<String> {
    let mapped = |id: &str| pci_on_node(id, node, m, visible);
    crate::pve::values::devices::hostpci(c, &mapped, None).or_else(|| start_usb(c, node, m, visible))
}

#[test]
fn a_config_names_its_mapped_devices_but_not_spice_or_host_devices() {
    assert_eq!(named("usb0", "mapping=keys"), Some(("usb", "keys".into())));
    assert_eq!(named("usb1", "spice"), None);
    assert_eq!(named("usb2", "host=1234:5678"), None);
    assert_eq!(named("hostpci0", "mapping=gpu,pcie=1"), Some(("pci", "gpu".into())));
    assert_eq!(named("hostpci1", "0000:01:00.0"), None);
    assert_eq!(named("virtiofs0", "share,cache=auto"), Some(("dir", "share".into())));
    assert_eq!(named("net0", "virtio,bridge=vmbr0"), None);
}

#[test]
fn a_start_needs_each_mapped_device_on_its_node() {
    let m = maps(&[
        ("pci", "gpu", &["node=pve2,path=0000:01:00.0"], false),
        ("usb", "keys", &["node=pve1,id=1234:5678"], false),
    ]);
    let c = config(&[("hostpci0", "mapping=gpu"), ("usb0", "mapping=keys")]);
    assert_eq!(start_devices(&c, "pve1", &m, &sees_all).as_deref(), Some("PCI device mapping not found for 'gpu'"));
    let usb = config(&[("usb0", "mapping=keys")]);
    assert_eq!(start_devices(&usb, "pve1", &m, &sees_all), None);
    assert_eq!(start_devices(&usb, "pve2", &m, &sees_all).as_deref(), Some("USB device mapping not found for 'keys'"));
    let two = maps(&[("usb", "keys", &["node=pve1,id=1234:5678", "node=pve1,path=1-2"], false)]);
    assert_eq!(
        start_devices(&usb, "pve1", &two, &sees_all).as_deref(),
        Some("More than one USB mapping per host not supported")
    );
}

#[test]
fn a_mapping_the_user_cannot_see_is_not_predicted_missing() {
    let c = config(&[("hostpci0", "mapping=gpu"), ("virtiofs0", "share")]);
    assert_eq!(start_devices(&c, "pve1", &Mappings::new(), &sees_none), None);
    assert_eq!(start_dirs(&c, "pve1", &Mappings::new(), &sees_none), None);
    assert_eq!(
        start_dirs(&c, "pve1", &Mappings::new(), &sees_all).as_deref(),
        Some("Directory ID share does not exist.")
    );
}

#[test]
fn a_pci_device_needs_host_or_mapping_not_both() {
    let m = Mappings::new();
    let none = config(&[("hostpci0", "pcie=1")]);
    assert_eq!(start_devices(&none, "pve1", &m, &sees_all).as_deref(), Some("Either 'host' or 'mapping' must be set."));
    let both = config(&[("hostpci0", "0000:01:00.0,mapping=gpu")]);
    assert_eq!(start_devices(&both, "pve1", &m, &sees_all).as_deref(), Some("Cannot set both 'host' and 'mapping'."));
    assert_eq!(start_devices(&config(&[("hostpci0", "0000:01:00.0")]), "pve1", &m, &sees_all), None);
}

#[test]
fn a_directory_needs_exactly_one_entry_on_the_node_and_a_valid_path() {
    let mut m =
        maps(&[("dir", "share", &["node=pve1,path=/srv/a", "node=pve2,path=/srv/b", "node=pve2,path=/srv/c"], false)]);
    let c = config(&[("virtiofs0", "dirid=share")]);
    assert_eq!(start_dirs(&c, "pve1", &m, &sees_all), None);
    assert_eq!(start_dirs(&c, "pve3", &m, &sees_all).as_deref(), Some("No directory mapping for node pve3."));
    assert_eq!(
        start_dirs(&c, "pve2", &m, &sees_all).as_deref(),
        Some("More than than one directory mapping for node pve2.")
    );
    m.values_mut().for_each(|v| v.errors = vec!["Path /srv/a does not exist".into()]);
    assert_eq!(
        start_dirs(&c, "pve1", &m, &sees_all).as_deref(),
        Some("directory mapping invalid: Path /srv/a does not exist")
    );
}

#[test]
fn a_migration_needs_the_mappings_on_the_target_and_live_capable_devices_when_running() {
    let m = maps(&[
        ("pci", "gpu", &["node=pve1,path=0000:01:00.0", "node=pve2,path=0000:02:00.0"], true),
        ("usb", "keys", &["node=pve1,id=1234:5678"], false),
    ]);
    let gpu = config(&[("hostpci0", "mapping=gpu")]);
    assert_eq!(migrate(&gpu, "pve2", true, &m, &sees_all), None);
    let both = config(&[("hostpci0", "mapping=gpu"), ("usb0", "mapping=keys")]);
    assert_eq!(
        migrate(&both, "pve2", false, &m, &sees_all).as_deref(),
        Some("can't migrate to 'pve2': missing mapped devices usb0")
    );
    let on_both = maps(&[
        ("pci", "gpu", &["node=pve2,path=0000:02:00.0"], true),
        ("usb", "keys", &["node=pve1,id=1:2", "node=pve2,id=1:2"], false),
    ]);
    assert_eq!(migrate(&both, "pve2", false, &on_both, &sees_all), None);
    assert_eq!(
        migrate(&both, "pve2", true, &on_both, &sees_all).as_deref(),
        Some("can't live migrate running VM which uses following mapped devices: usb0:keys")
    );
    let gone = config(&[("usb0", "mapping=gone")]);
    assert_eq!(migrate(&gone, "pve2", false, &m, &sees_none), None);
    assert!(migrate(&gone, "pve2", false, &m, &sees_all).is_some_and(|w| w.contains("undefined value")));
}

#[test]
fn an_entry_the_node_s_check_finds_invalid_refuses_the_start() {
    let mut m =
        maps(&[("pci", "gpu", &["node=pve1,path=0000:05:00.0"], false), ("usb", "keys", &["node=pve1,id=1:2"], false)]);
    let c = config(&[("hostpci0", "mapping=gpu"), ("usb0", "mapping=keys")]);
    assert_eq!(start_devices(&c, "pve1", &m, &sees_all), None);
    for v in m.values_mut() {
        v.errors = vec!["pci device '0000:05:00.0' not found".into()];
    }
    let words = start_devices(&c, "pve1", &m, &sees_all);
    assert_eq!(
        words.as_deref(),
        Some("PCI device mapping invalid (hardware probably changed): pci device '0000:05:00.0' not found")
    );
}

/// The words a check run names for a mapping it cannot see are those each rule gives, seen, for a
/// mapping with no entry for the node: a start of each kind, and a migration with two keys naming it.
#[test]
fn hidden_mapping_words_are_the_rules_words_for_no_entry_on_the_node() {
    let m = maps(&[
        ("pci", "gpu", &["node=pve1,path=0000:01:00.0"], false),
        ("usb", "keys", &["node=pve1,id=1234:5678"], false),
        ("dir", "docs", &["node=pve1,path=/srv/docs"], false),
    ]);
    let pci = config(&[("hostpci0", "mapping=gpu")]);
    assert_eq!(start_devices(&pci, "pve2", &m, &sees_all), Some(start_not_found("pci", "gpu", "pve2")));
    let usb = config(&[("usb0", "mapping=keys")]);
    assert_eq!(start_devices(&usb, "pve2", &m, &sees_all), Some(start_not_found("usb", "keys", "pve2")));
    let dir = config(&[("virtiofs0", "dirid=docs")]);
    assert_eq!(start_dirs(&dir, "pve2", &m, &sees_all), Some(start_not_found("dir", "docs", "pve2")));
    assert_eq!(start_not_found("dir", "docs", "pve2"), "No directory mapping for node pve2.");
    let two = config(&[("hostpci0", "mapping=gpu"), ("hostpci1", "mapping=gpu,pcie=1"), ("usb0", "host=1-2")]);
    let words = migrate_not_found(&two, "pci", "gpu", "pve2");
    assert_eq!(migrate(&two, "pve2", false, &m, &sees_all), Some(words.clone()));
    assert_eq!(words, "can't migrate to 'pve2': missing mapped devices hostpci0, hostpci1");
    // hidden, the list leaves the mapping out and the rules leave it to PVE
    assert_eq!(migrate(&two, "pve2", false, &Mappings::new(), &sees_none), None);
}
