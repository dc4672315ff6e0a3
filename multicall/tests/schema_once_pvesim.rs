//! One schema check per write (issue 28): a real run of each writing module against a running pvesim checks each write it sends against PVE's API schema exactly once, the login's POST included.
//!
//! The modules check their planned writes before the first of them (`Api::check_write`, in
//! check and real runs alike) and the client sends a write it saw checked without checking it
//! again; `pve::schema::checked_writes` lists every check made on this thread, which is compared
//! with the writes PVE accepted (the run's journal). Needs a simulator, so it is `#[ignore]`d in
//! `cargo test`; run it with
//! `.venv/bin/python tests/tools/with_pvesim.py -- cargo test --locked -q -p ferro_proxmox --test schema_once_pvesim -- --ignored`
//! (the connection comes from the `PROXMOX_*` variables that script exports).
// A test's helpers may panic: a panic is its failure.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use module_utils::ansible::spec::ModuleSpec;
use module_utils::ansible::validate::validate;
use module_utils::protocol::{Context, ModuleMain};
use module_utils::pve::schema::checked_writes;
use serde_json::{json, Value};

/// What one real run did: whether it changed the VM, the writes PVE accepted and the schema
/// checks made, each as `METHOD /path`, sorted.
struct Run {
    changed: bool,
    sent: Vec<String>,
    checked: Vec<String>,
}

/// Run `main` for real, in-process, with `args` and the connection from the environment (without
/// the API token's variables when `password`: the task logs in with root@pam's password).
fn run(spec: &'static ModuleSpec, main: ModuleMain, args: Value, password: bool) -> Run {
    let env = |k: &str| {
        if password && k.starts_with("PROXMOX_TOKEN") {
            return None;
        }
        std::env::var(k).ok()
    };
    let Value::Object(user) = args else { panic!("args are an object") };
    let params = validate(spec, &user, &env).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
    let mut ctx = Context::new(params, false, false);
    let before = checked_writes().len();
    let outcome = main(&mut ctx).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
    let mut checked = checked_writes().split_off(before);
    // a journal line: `PUT /nodes/pve1/qemu/100/config (net5) ...`
    let mut sent: Vec<String> =
        ctx.journal.lines().iter().map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" ")).collect();
    checked.sort();
    sent.sort();
    Run { changed: outcome.changed, sent, checked }
}

#[test]
#[ignore = "needs pvesim: tests/tools/with_pvesim.py -- cargo test -p ferro_proxmox --test schema_once_pvesim -- --ignored"]
fn a_real_run_checks_each_write_once() {
    if std::env::var("PROXMOX_HOST").is_err() {
        panic!("PROXMOX_HOST is not set: run this test through tests/tools/with_pvesim.py");
    }
    let vm = "/nodes/pve1/qemu/100";
    let nic = run(
        &proxmox_nic::SPEC,
        proxmox_nic::main,
        json!({"vmid": 100, "interface": "net5", "model": "virtio", "bridge": "vmbr1"}),
        false,
    );
    assert!(nic.changed);
    assert_eq!(nic.sent, vec![format!("PUT {vm}/config")]);
    assert_eq!(nic.checked, nic.sent, "proxmox_nic: one check per write");

    let disk = run(
        &proxmox_disk::SPEC,
        proxmox_disk::main,
        json!({"vmid": 100, "disk": "scsi5", "storage": "local-lvm", "size": "1"}),
        false,
    );
    assert!(disk.changed);
    assert_eq!(disk.sent, vec![format!("POST {vm}/config")]);
    assert_eq!(disk.checked, disk.sent, "proxmox_disk: one check per write");

    let kvm = |args: Value| run(&proxmox_kvm::SPEC, proxmox_kvm::main, args, false);
    let create = kvm(json!({"vmid": 4321, "name": "schema-once", "node": "pve1", "cores": 1, "memory": 512}));
    assert!(create.changed);
    assert_eq!(create.sent, vec!["POST /nodes/pve1/qemu".to_string()]);
    assert_eq!(create.checked, create.sent, "proxmox_kvm create: one check per write");
    let update = kvm(json!({"vmid": 4321, "name": "schema-once", "node": "pve1", "cores": 2, "update": true}));
    assert!(update.changed);
    assert_eq!(update.sent, vec!["PUT /nodes/pve1/qemu/4321/config".to_string()]);
    assert_eq!(update.checked, update.sent, "proxmox_kvm update: one check per write");
    let start = kvm(json!({"vmid": 4321, "state": "started"}));
    assert_eq!(start.sent, vec!["POST /nodes/pve1/qemu/4321/status/start".to_string()]);
    assert_eq!(start.checked, start.sent, "proxmox_kvm start: one check per write");
    let remove = kvm(json!({"vmid": 4321, "state": "absent", "force": true}));
    assert_eq!(remove.sent.len(), 2, "a stop, then the removal: {:?}", remove.sent);
    assert_eq!(remove.checked, remove.sent, "proxmox_kvm removal: one check per write");

    // The login's POST is a write too: checked once, as it is sent (nothing checks it before).
    let login = run(
        &proxmox_vm_info::SPEC,
        proxmox_vm_info::main,
        json!({"api_user": "root@pam", "api_password": "secret", "vmid": 100}),
        true,
    );
    assert!(login.sent.is_empty());
    assert_eq!(login.checked, vec!["POST /access/ticket".to_string()]);
}
