//! The saved plan's comparisons: what a real run finds moved since the plan, in the user's words.
#![allow(clippy::unwrap_used)]
use super::*;
use serde_json::json;

fn vm() -> VmResource {
    VmResource::from_json(&json!({"vmid": 100, "name": "web", "node": "pve1", "type": "qemu", "status": "stopped"}))
        .unwrap()
}

fn config(scsi1: &str, digest: &str) -> VmConfig {
    let mut c = VmConfig::default();
    c.current.insert("scsi1".into(), format!("local-lvm:vm-100-disk-1,size={scsi1}"));
    c.current.insert("cipassword".into(), "secret-hash".into());
    c.digest = Some(digest.into());
    c
}

fn saved_then_applied(saved: &SavedTask) -> SavedTask {
    let mut planned = serde_json::to_value(saved.recorded()).unwrap();
    planned["mode"] = json!("apply");
    SavedTask::from_json(&planned).unwrap()
}

#[test]
fn a_plan_holds_the_reads_without_secrets_and_the_writes_in_order() {
    let saved = SavedTask::from_json(&json!({"mode": "save"})).unwrap();
    assert!(!saved.applying());
    saved.read(&vm(), &config("10G", "d1"), false).unwrap();
    let path = ApiPath::new(["nodes", "pve1", "qemu", "100", "resize"]);
    let form: Form = vec![("disk".into(), "scsi1".into()), ("size".into(), "20G".into())];
    saved.writes([(Method::Put, &path, &form)]).unwrap();
    let record = saved.recorded();
    assert_eq!(record.reads[0].digest.as_deref(), Some("d1"));
    assert!(!record.reads[0].config.contains_key("cipassword"));
    assert_eq!(record.writes[0].path, "/nodes/pve1/qemu/100/resize");
    assert_eq!(record.writes[0].params, form);
}

#[test]
fn applying_refuses_a_config_changed_since_the_plan_naming_what_moved() {
    let saved = SavedTask::from_json(&json!({"mode": "save"})).unwrap();
    saved.read(&vm(), &config("10G", "d1"), false).unwrap();
    let apply = saved_then_applied(&saved);
    assert!(apply.applying());
    apply.read(&vm(), &config("10G", "d1"), false).unwrap();
    let e = apply.read(&vm(), &config("20G", "d2"), false).unwrap_err().to_string();
    assert!(e.contains("VM 100's config changed since the plan: scsi1 size=10G → size=20G"), "{e}");
    let mut other = vm();
    other.node = "pve2".into();
    let e = apply.read(&other, &config("10G", "d1"), false).unwrap_err().to_string();
    assert!(e.contains("planned web on node pve1, now web on node pve2"), "{e}");
}

#[test]
fn applying_refuses_other_writes_and_a_retry_after_a_digest_conflict_is_drift() {
    let saved = SavedTask::from_json(&json!({"mode": "save"})).unwrap();
    let path = ApiPath::new(["nodes", "pve1", "qemu", "100", "config"]);
    let form: Form = vec![("net1".into(), "virtio,bridge=vmbr0".into()), ("digest".into(), "d1".into())];
    saved.writes([(Method::Post, &path, &form)]).unwrap();
    let apply = saved_then_applied(&saved);
    apply.writes([(Method::Post, &path, &form)]).unwrap();
    let moved: Form = vec![("net1".into(), "virtio,bridge=vmbr0".into()), ("digest".into(), "d2".into())];
    let e = apply.writes([(Method::Post, &path, &moved)]).unwrap_err().to_string();
    assert!(e.contains("refused the planned write"), "{e}");
    assert!(e.contains("digest d1 → d2"), "{e}");
    let fresh = saved_then_applied(&saved);
    let e = fresh.writes([]).unwrap_err().to_string();
    assert!(e.contains("planned POST /nodes/pve1/qemu/100/config, now no such write"), "{e}");
}

#[test]
fn a_read_only_task_records_who_it_read_and_applying_names_a_vm_that_moved() {
    let saved = SavedTask::from_json(&json!({"mode": "save"})).unwrap();
    saved.identities(&[&vm()]).unwrap();
    let apply = saved_then_applied(&saved);
    apply.identities(&[&vm()]).unwrap();
    let mut renamed = vm();
    renamed.name = Some("db".into());
    let e = apply.identities(&[&renamed]).unwrap_err().to_string();
    assert!(e.contains("planned VM 100 (web) on pve1; now VM 100 (db) on pve1"), "{e}");
}

#[test]
fn a_saved_record_holds_each_whole_secret_as_the_hash_handed_in() {
    let saved = SavedTask::from_json(
        &json!({"mode": "save", "tokens": [["web", "hmac-sha256:aa"], ["s3cret-long", "hmac-sha256:bb"]]}),
    )
    .unwrap();
    let path = ApiPath::new(["nodes", "pve1", "qemu", "100", "config"]);
    let form: Form = vec![("cipassword".into(), "s3cret-long".into()), ("name".into(), "existing-web".into())];
    saved.writes([(Method::Post, &path, &form)]).unwrap();
    let text = saved.recorded_json().to_string();
    assert!(!text.contains("s3cret-long") && text.contains("hmac-sha256:bb"), "{text}");
    // `web` inside a name is not the secret `web` (issue 33): hashing it there would show it
    assert!(text.contains("existing-web") && !text.contains("hmac-sha256:aa"), "{text}");
}

#[test]
fn a_vm_started_since_the_plan_is_named_and_a_vmid_pve_chooses_is_known_after_apply() {
    let saved = SavedTask::from_json(&json!({"mode": "save"})).unwrap();
    saved.read(&vm(), &config("10G", "d1"), false).unwrap();
    saved.bound_at_apply(101);
    let path = ApiPath::new(["nodes", "pve1", "qemu"]);
    let form: Form = vec![("vmid".into(), "101".into()), ("name".into(), "new".into())];
    saved.writes([(Method::Post, &path, &form)]).unwrap();
    assert_eq!(saved.recorded().writes[0].params[0].1, KNOWN_AFTER_APPLY);
    let apply = saved_then_applied(&saved);
    let mut running = vm();
    running.status = "running".into();
    let e = apply.read(&running, &config("10G", "d1"), false).unwrap_err().to_string();
    assert!(e.contains("VM 100 was stopped when the plan was made and is running now"), "{e}");
    // another run took 101 meanwhile: PVE gives 102, which the plan binds
    let taken: Form = vec![("vmid".into(), "102".into()), ("name".into(), "new".into())];
    apply.writes([(Method::Post, &path, &taken)]).unwrap();
}

#[test]
fn a_planned_write_the_task_found_nothing_to_do_for_is_named() {
    let saved = SavedTask::from_json(&json!({"mode": "save"})).unwrap();
    let path = ApiPath::new(["nodes", "pve1", "qemu", "100", "status", "reboot"]);
    saved.writes([(Method::Post, &path, &Form::new())]).unwrap();
    let apply = saved_then_applied(&saved);
    assert_eq!(apply.unmade().as_deref(), Some("POST /nodes/pve1/qemu/100/status/reboot"));
    apply.writes([(Method::Post, &path, &Form::new())]).unwrap();
    assert_eq!(apply.unmade(), None);
}

#[test]
fn a_pool_move_follows_the_config_write_and_a_snapshot_taken_again_differs() {
    let saved = SavedTask::from_json(&json!({"mode": "save"})).unwrap();
    let pools = ApiPath::new(["pools"]);
    let form: Form = vec![("poolid".into(), "web".into()), ("vms".into(), "100".into())];
    saved.then_writes(vec![Request { method: "PUT".into(), path: pools.to_string(), params: form }]);
    let path = ApiPath::new(["nodes", "pve1", "qemu", "100", "config"]);
    saved.writes([(Method::Post, &path, &vec![("cores".into(), "2".into())])]).unwrap();
    assert_eq!(
        saved.recorded().writes.iter().map(|w| w.path.as_str()).collect::<Vec<_>>(),
        ["/nodes/pve1/qemu/100/config", "/pools"]
    );
    let mut snap = VmConfig::default();
    snap.current.insert("snaptime".into(), "1".into());
    saved.input(Input::snapshot(&vm(), "s1", &snap)).unwrap();
    let apply = saved_then_applied(&saved);
    snap.current.insert("snaptime".into(), "2".into());
    let e = apply.input(Input::snapshot(&vm(), "s1", &snap)).unwrap_err().to_string();
    assert!(e.contains("the snapshot pve1/100/s1 the task copies changed since the plan: snaptime 1 → 2"), "{e}");
}
