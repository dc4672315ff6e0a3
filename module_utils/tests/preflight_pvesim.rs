//! The preflight and privilege checks against a running pvesim: each refusal carries the words of the refusal pvesim (following PVE) gives the same write, sent for real.
//!
//! Needs a simulator, so it is `#[ignore]`d in `cargo test`; `make test-pvesim` runs it with
//! `.venv/bin/python tests/tools/with_pvesim.py -- cargo test -p module_utils --test preflight_pvesim -- --ignored`
//! (the connection comes from the `PROXMOX_*` variables that script exports; the read-only
//! token's secret from pvesim's default seed). Every write sent here is one PVE refuses before
//! changing anything, and the test checks the VM's config is unchanged.
// A test's helpers may panic: a panic is its failure.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeMap;
use std::env;

use module_utils::error::Error;
use module_utils::pve::auth::{Connection, Credentials};
use module_utils::pve::client::{Api, PveClient};
use module_utils::pve::journal::WriteJournal;
use module_utils::pve::permissions::{self, Privileges};
use module_utils::pve::preflight::{Content, Preflight};
use module_utils::pve::request::{form, ApiPath};
use serde_json::Value;

fn var(name: &str) -> String {
    env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run this test through tests/tools/with_pvesim.py"))
}

fn connect(user: &str, token_id: &str, secret: &str) -> PveClient {
    let conn = Connection {
        host: var("PROXMOX_HOST"),
        port: var("PROXMOX_PORT").parse().unwrap(),
        user: user.to_string(),
        credentials: Credentials::Token { token_id: token_id.to_string(), secret: secret.to_string() },
        timeout_secs: 30,
        validate_certs: true,
        ca_path: Some(var("PROXMOX_CA_PATH")),
    };
    PveClient::connect(&conn, WriteJournal::default()).unwrap()
}

fn automation() -> PveClient {
    connect(&var("PROXMOX_USER"), &var("PROXMOX_TOKEN_ID"), &var("PROXMOX_TOKEN_SECRET"))
}

/// The read-only token of pvesim's default seed (`auditor@pve!readonly`: VM.Audit,
/// Datastore.Audit and Sys.Audit on `/`).
fn auditor() -> PveClient {
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/pvesim/seeds/default.json");
    let seed: Value = serde_json::from_str(&std::fs::read_to_string(seed).unwrap()).unwrap();
    let secret = seed["users"]["auditor@pve"]["tokens"]["readonly"].as_str().unwrap();
    connect("auditor@pve", "readonly", secret)
}

/// What PVE answered a write it refused.
fn refusal(result: Result<Value, Error>) -> String {
    match result {
        // a 403 names who was refused after PVE's words (client::decode)
        Err(Error::Api { message, status: 403, .. }) => match message.rsplit_once(", as ") {
            Some((words, who)) if who.ends_with("(API token)") => words.to_string(),
            _ => panic!("a 403 that does not name who was refused: {message:?}"),
        },
        Err(Error::Api { message, .. }) => message,
        other => panic!("PVE accepted the write: {other:?}"),
    }
}

/// The preflight's message without the option it names.
fn pve_words(e: Error, option: &str) -> String {
    let text = e.to_string();
    // what exists follows PVE's words (a missing node or storage)
    let text = text.split("; the cluster's nodes: ").next().unwrap_or_default();
    let text = text.split("; the storages enabled on ").next().unwrap_or_default();
    text.strip_prefix(&format!("{option}: ")).unwrap_or_else(|| panic!("{text:?} does not name {option}")).to_string()
}

fn vm100() -> ApiPath {
    ApiPath::new(["nodes", "pve1", "qemu", "100"])
}

fn config(api: &dyn Api) -> Value {
    api.get(&vm100().join(["config"]), &Vec::new()).unwrap()
}

#[test]
#[ignore = "needs pvesim: tests/tools/with_pvesim.py -- cargo test -p module_utils --test preflight_pvesim -- --ignored"]
fn preflight_refuses_with_the_words_of_the_real_write() {
    let api = automation();
    let before = config(&api);
    let pf = Preflight::new(&api);

    assert!(pf.node("pve1", "node").is_ok());
    let real = refusal(api.get(&ApiPath::new(["nodes", "pve9", "qemu", "100", "config"]), &Vec::new()));
    assert_eq!(pve_words(pf.node("pve9", "node").unwrap_err(), "node"), real);

    assert!(pf.storage("pve1", "local-lvm", Content::Images, "storage").is_ok());
    let real = refusal(api.put(&vm100().join(["config"]), &form([("scsi1", "nosuch:4")])));
    assert_eq!(pve_words(pf.storage("pve1", "nosuch", Content::Images, "scsi1").unwrap_err(), "scsi1"), real);
    let real = refusal(api.put(&vm100().join(["config"]), &form([("scsi1", "isos:4")])));
    let words = pve_words(pf.storage("pve1", "isos", Content::Images, "scsi1").unwrap_err(), "scsi1");
    assert!(real.ends_with(&words), "{real:?} / {words:?}");

    assert!(pf.volume("pve1", "isos:iso/debian-13-netinst.iso", "cdrom").is_ok());
    let real = refusal(api.put(&vm100().join(["config"]), &form([("ide2", "isos:iso/nope.iso,media=cdrom")])));
    assert_eq!(pve_words(pf.attached("pve1", "isos:iso/nope.iso", "cdrom").unwrap_err(), "cdrom"), real);

    let real = refusal(api.post(&vm100().join(["move_disk"]), &form([("disk", "scsi0"), ("storage", "isos")])));
    let words = pve_words(pf.move_target("pve1", "isos", "storage").unwrap_err(), "storage");
    assert!(real.ends_with(&words), "{real:?} / {words:?}");

    let template = ApiPath::new(["nodes", "pve1", "qemu", "9000"]);
    let real = refusal(api.post(&template.join(["clone"]), &form([("newid", "305"), ("target", "pve9")])));
    let source = BTreeMap::new();
    assert_eq!(pve_words(pf.clone_target("pve1", Some("pve9"), None, &source).unwrap_err(), "target"), real);

    assert_eq!(config(&api), before, "a refused write changed the config");
}

#[test]
#[ignore = "needs pvesim: tests/tools/with_pvesim.py -- cargo test -p module_utils --test preflight_pvesim -- --ignored"]
fn a_read_only_token_is_refused_before_the_write_with_the_403_of_the_write() {
    let api = auditor();
    let before = config(&api);
    let privileges = Privileges::new(&api, "auditor@pve!readonly");
    let current: BTreeMap<String, String> = BTreeMap::new();
    for (set, path) in [
        (form([("net1", "virtio,bridge=vmbr1")]), vm100().join(["config"])),
        (form([("memory", "4096")]), vm100().join(["config"])),
    ] {
        let ours = privileges.require(&permissions::update(100, &current, &set, &[])).unwrap_err().to_string();
        assert_eq!(ours, refusal(api.put(&path, &set)));
    }
    let ours = privileges.require(&permissions::power(100)).unwrap_err().to_string();
    assert_eq!(ours, refusal(api.post(&vm100().join(["status", "start"]), &Vec::new())));
    let ours = privileges.require(&permissions::resize(100, "local-lvm:vm-100-disk-0")).unwrap_err().to_string();
    assert_eq!(ours, refusal(api.put(&vm100().join(["resize"]), &form([("disk", "scsi0"), ("size", "+1G")]))));
    let new = form([("name", "x"), ("net0", "virtio,bridge=vmbr0")]);
    let ours = privileges.require(&permissions::create(301, None, None, false, &new)).unwrap_err().to_string();
    let mut create = new.clone();
    create.push(("vmid".into(), "301".into()));
    assert_eq!(ours, refusal(api.post(&ApiPath::new(["nodes", "pve1", "qemu"]), &create)));
    assert_eq!(config(&api), before);

    let full = automation();
    let privileges = Privileges::new(&full, &format!("{}!{}", var("PROXMOX_USER"), var("PROXMOX_TOKEN_ID")));
    let set = form([("net1", "virtio,bridge=vmbr1")]);
    assert!(privileges.require(&permissions::update(100, &current, &set, &[])).is_ok());
    assert!(privileges.require(&permissions::create(301, None, Some("local-lvm"), true, &new)).is_ok());
}
