//! Golden tests of proxmox_nic's plan: (current config, power state, task) → change, no network.
#![allow(clippy::unwrap_used)]

use module_utils::pve::config::VmConfig;
use module_utils::pve::propstring::normalize_mac;
use serde_json::{json, Map, Value};

use super::*;

const MAC: &str = "BC:24:11:0A:01:00";

fn params() -> Params {
    Params {
        vmid: Some(103),
        name: None,
        node: None,
        interface: "net0".into(),
        state: State::Present,
        model: "virtio".into(),
        mac: None,
        bridge: Some("vmbr0".into()),
        tag: None,
        trunks: None,
        firewall: false,
        link_down: false,
        mtu: None,
        queues: None,
        rate: None,
    }
}

struct Case {
    name: &'static str,
    config: VmConfig,
    running: bool,
    params: Params,
    action: Action,
    after: Option<&'static str>,
    pending: bool,
}

fn cases() -> Vec<Case> {
    let existing = format!("virtio={MAC},bridge=vmbr0");
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let existing: &'static str = leak(existing);
    vec![
        Case {
            name: "add a NIC to a stopped VM: PVE will draw the MAC",
            config: VmConfig::from_pairs(&[("cores", "2")]),
            running: false,
            params: params(),
            action: Action::Set("virtio,bridge=vmbr0".into()),
            // sent without a MAC: the one PVE draws is marked in the prediction
            after: Some("virtio=(known after apply),bridge=vmbr0"),
            pending: false,
        },
        Case {
            name: "rerun of the same task is unchanged (the MAC is kept, not compared)",
            config: VmConfig::from_pairs(&[("net0", existing)]),
            running: false,
            params: params(),
            action: Action::None,
            after: Some(existing),
            pending: false,
        },
        Case {
            name: "change bridge and tag keeps the MAC",
            config: VmConfig::from_pairs(&[("net0", existing)]),
            running: true,
            params: Params { bridge: Some("vmbr1".into()), tag: Some(20), ..params() },
            action: Action::Set(format!("virtio={MAC},bridge=vmbr1,tag=20")),
            after: Some(leak(format!("virtio={MAC},bridge=vmbr1,tag=20"))),
            pending: false,
        },
        Case {
            name: "a lower-case mac equal to the current one is unchanged",
            config: VmConfig::from_pairs(&[("net0", existing)]),
            running: false,
            params: Params { mac: normalize_mac(&MAC.to_lowercase()), ..params() },
            action: Action::None,
            after: Some(existing),
            pending: false,
        },
        Case {
            name: "rate 10 against rate=10.0 is unchanged",
            config: VmConfig::from_pairs(&[("net0", leak(format!("{existing},rate=10.0")))]),
            running: false,
            params: Params { rate: Some(10.0), ..params() },
            action: Action::None,
            after: Some(leak(format!("{existing},rate=10.0"))),
            pending: false,
        },
        Case {
            name: "rate 10 is written without a fraction",
            config: VmConfig::from_pairs(&[("net0", existing)]),
            running: false,
            params: Params { rate: Some(10.0), ..params() },
            action: Action::Set(format!("{existing},rate=10")),
            after: Some(leak(format!("{existing},rate=10"))),
            pending: false,
        },
        Case {
            name: "link_down on a running VM applies live",
            config: VmConfig::from_pairs(&[("net0", existing)]),
            running: true,
            params: Params { link_down: true, ..params() },
            action: Action::Set(format!("{existing},link_down=1")),
            after: Some(leak(format!("{existing},link_down=1"))),
            pending: false,
        },
        Case {
            name: "firewall false (the default) turns an existing firewall off",
            config: VmConfig::from_pairs(&[("net0", leak(format!("{existing},firewall=1")))]),
            running: false,
            params: params(),
            action: Action::Set(existing.to_string()),
            after: Some(existing),
            pending: false,
        },
        Case {
            name: "firewall=1 in any spelling is firewall true",
            config: VmConfig::from_pairs(&[("net0", leak(format!("{existing},firewall=1")))]),
            running: false,
            params: Params { firewall: true, ..params() },
            action: Action::None,
            after: Some(leak(format!("{existing},firewall=1"))),
            pending: false,
        },
        Case {
            name: "options the module does not manage are kept",
            config: VmConfig::from_pairs(&[("net0", leak(format!("{existing},host-tunnel=1")))]),
            running: false,
            params: Params { tag: Some(5), ..params() },
            action: Action::Set(format!("{existing},host-tunnel=1,tag=5")),
            after: Some(leak(format!("{existing},host-tunnel=1,tag=5"))),
            pending: false,
        },
        Case {
            name: "a model change on a running VM without network hotplug stays pending, MAC kept",
            config: VmConfig::from_pairs(&[("net0", existing), ("hotplug", "disk,usb")]),
            running: true,
            params: Params { model: "e1000".into(), ..params() },
            action: Action::Set(format!("e1000={MAC},bridge=vmbr0")),
            after: Some(leak(format!("e1000={MAC},bridge=vmbr0"))),
            pending: true,
        },
        Case {
            name: "a model change on a running VM with network hotplug applies",
            config: VmConfig::from_pairs(&[("net0", existing)]),
            running: true,
            params: Params { model: "e1000".into(), ..params() },
            action: Action::Set(format!("e1000={MAC},bridge=vmbr0")),
            after: Some(leak(format!("e1000={MAC},bridge=vmbr0"))),
            pending: false,
        },
        Case {
            name: "a new NIC on a running VM with hotplug 0 stays pending",
            config: VmConfig::from_pairs(&[("hotplug", "0")]),
            running: true,
            params: params(),
            action: Action::Set("virtio,bridge=vmbr0".into()),
            after: Some("virtio=(known after apply),bridge=vmbr0"),
            pending: true,
        },
        Case {
            name: "a tag change with hotplug 0 still applies live",
            config: VmConfig::from_pairs(&[("net0", existing), ("hotplug", "0")]),
            running: true,
            params: Params { tag: Some(7), ..params() },
            action: Action::Set(format!("{existing},tag=7")),
            after: Some(leak(format!("{existing},tag=7"))),
            pending: false,
        },
        Case {
            name: "an explicit different mac is a change (asked for)",
            config: VmConfig::from_pairs(&[("net0", existing)]),
            running: false,
            params: Params { mac: Some("BC:24:11:0A:01:FF".into()), ..params() },
            action: Action::Set("virtio=BC:24:11:0A:01:FF,bridge=vmbr0".into()),
            after: Some("virtio=BC:24:11:0A:01:FF,bridge=vmbr0"),
            pending: false,
        },
        Case {
            name: "remove",
            config: VmConfig::from_pairs(&[("net0", existing)]),
            running: false,
            params: Params { state: State::Absent, ..params() },
            action: Action::Delete,
            after: None,
            pending: false,
        },
        Case {
            name: "remove again is unchanged",
            config: VmConfig::from_pairs(&[("cores", "1")]),
            running: false,
            params: Params { state: State::Absent, ..params() },
            action: Action::None,
            after: None,
            pending: false,
        },
        Case {
            name: "remove from a running VM without network hotplug stays pending",
            config: VmConfig::from_pairs(&[("net0", existing), ("hotplug", "disk")]),
            running: true,
            params: Params { state: State::Absent, ..params() },
            action: Action::Delete,
            after: None,
            pending: true,
        },
    ]
}

#[test]
fn plan_golden_cases() {
    for case in cases() {
        let plan = plan(&case.config, case.running, &case.params).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(plan.action, case.action, "{}", case.name);
        assert_eq!(plan.after.as_deref(), case.after, "{}", case.name);
        assert_eq!(plan.pending, case.pending, "{}", case.name);
    }
}

#[test]
fn a_change_already_pending_is_unchanged_but_reported_pending() {
    let cfg = VmConfig::from_pending(&json!([
        {"key": "net0", "value": format!("virtio={MAC},bridge=vmbr0"), "pending": format!("e1000={MAC},bridge=vmbr0")},
    ]))
    .unwrap();
    let plan = plan(&cfg, true, &Params { model: "e1000".into(), ..params() }).unwrap();
    assert_eq!(plan.action, Action::None);
    assert!(plan.pending);
}

#[test]
fn a_nic_whose_mac_is_known_after_apply_is_as_predicted_for_the_next_task() {
    // An earlier task of the check run added net0 without a MAC: the prediction marks it, and
    // the same task again changes nothing (the MAC PVE draws is kept, as in the real run).
    let cfg = VmConfig::from_pairs(&[("net0", "virtio=(known after apply),bridge=vmbr0")]);
    let again = plan(&cfg, false, &params()).unwrap();
    assert_eq!(again.action, Action::None);
    assert_eq!(again.after.as_deref(), Some("virtio=(known after apply),bridge=vmbr0"));
    // Another bridge keeps the marked MAC too, and sends none: PVE keeps the one it drew.
    let moved = plan(&cfg, false, &Params { bridge: Some("vmbr1".into()), ..params() }).unwrap();
    assert_eq!(moved.after.as_deref(), Some("virtio=(known after apply),bridge=vmbr1"));
    assert_eq!(moved.action, Action::Set("virtio,bridge=vmbr1".into()));
}

fn spec_params(args: Value) -> module_utils::ansible::spec::Args {
    let mut map: Map<String, Value> = serde_json::from_value(args).unwrap();
    for (k, v) in [("api_host", "h"), ("api_user", "u@pve"), ("api_token_id", "t"), ("api_token_secret", "s")] {
        map.insert(k.into(), json!(v));
    }
    module_utils::ansible::validate::validate(&SPEC, &map, &|_| None).unwrap()
}

#[test]
fn bad_values_are_refused_before_any_call() {
    let cases = [
        (json!({"vmid": 103, "interface": "net32"}), "interface must be one of net0 to net31, got 'net32'"),
        (json!({"vmid": 103, "interface": "net01"}), "interface must be one of net0 to net31, got 'net01'"),
        (json!({"vmid": 103, "interface": "eth0"}), "interface must be one of net0 to net31, got 'eth0'"),
        (json!({"vmid": 103, "interface": "net0", "tag": 5000}), "tag must be between 1 and 4094, got 5000"),
        (json!({"vmid": 103, "interface": "net0", "tag": 0}), "tag must be between 1 and 4094, got 0"),
        (
            json!({"vmid": 103, "interface": "net0", "mtu": 100}),
            "mtu must be 1 (use the bridge's MTU) or between 576 and 65520, got 100",
        ),
        (json!({"vmid": 103, "interface": "net0", "queues": 65}), "queues must be between 0 and 64, got 65"),
        (json!({"vmid": 103, "interface": "net0", "rate": -1}), "rate must be a number of MB/s, 0 or more, got -1"),
        (
            json!({"vmid": 103, "interface": "net0", "mac": "01:00:5E:00:00:01"}),
            "mac must be a unicast MAC address like BC:24:11:00:00:01, got '01:00:5E:00:00:01'",
        ),
        (
            json!({"vmid": 103, "interface": "net0", "trunks": [10, 5000]}),
            "trunks must be VLAN ids between 1 and 4094, got 5000",
        ),
        (json!({"vmid": 5, "interface": "net0"}), "vmid must be between 100 and 999999999, got 5"),
        // Issue 15: a bridge cannot carry other keys.
        (
            json!({"vmid": 103, "interface": "net0", "bridge": "vmbr0,tag=99,firewall=0"}),
            "bridge: invalid bridge ID 'vmbr0,tag=99,firewall=0'",
        ),
        (json!({"vmid": 103, "interface": "net0", "bridge": "vmbr0 "}), "bridge: invalid bridge ID 'vmbr0 '"),
    ];
    for (args, want) in cases {
        let p = spec_params(args.clone());
        let got = Params::from_spec(&p, &mut |_| {}).map(|_| ()).unwrap_err().to_string();
        assert_eq!(got, want, "args {args}");
    }
}

#[test]
fn mtu_with_another_model_is_ignored_with_a_warning() {
    let p = spec_params(json!({"vmid": 103, "interface": "net0", "model": "e1000", "mtu": 1500}));
    let mut warnings = Vec::new();
    let params = Params::from_spec(&p, &mut |w| warnings.push(w)).unwrap();
    assert_eq!(params.mtu, None);
    assert_eq!(
        warnings,
        vec!["Ignoring MTU for nic net0 on VM with vmid 103, model should be set to 'virtio': e1000".to_string()]
    );
}

#[test]
fn trunks_are_joined_like_pve() {
    let p = spec_params(json!({"vmid": 103, "interface": "net0", "trunks": [10, "20", 30]}));
    assert_eq!(Params::from_spec(&p, &mut |_| {}).unwrap().trunks.as_deref(), Some("10;20;30"));
}

module_utils::stub_test!(SPEC);
