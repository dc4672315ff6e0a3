//! The protocol's tests: input, validation, masking, the accepted-writes report, the panic path.

use super::*;
use crate::ansible::spec::{Kind, OptionSpec, Support};

const OPTS: &[OptionSpec] = &[
    OptionSpec::new("what", Kind::Str, &["What to do."]),
    OptionSpec::new("password", Kind::Str, &["A secret."]).no_log(),
];
static SPEC: ModuleSpec = ModuleSpec {
    name: "proto_test",
    short_description: "t",
    description: &[],
    options: OPTS,
    option_groups: &[],
    mutually_exclusive: &[],
    required_together: &[],
    required_one_of: &[],
    required_if: &[],
    required_by: &[],
    check_mode: Support::Full,
    diff_mode: Support::Full,
    notes: &[],
    examples: "",
    returns: "",
};

fn body(ctx: &mut Context) -> Result<Outcome> {
    match ctx.params.str("what") {
        Some("write-then-panic") => {
            ctx.journal.accepted("PUT", "/nodes/pve1/qemu/100/config", &["net0", "digest"], &Value::Null);
            panic!("boom with {}", ctx.params.str("password").unwrap_or(""))
        }
        Some("fail") => Err(Error::failed(format!("bad password {}", ctx.params.str("password").unwrap_or("")))),
        Some("write-then-fail") => {
            let upid = "UPID:pve1:00000001:00000007:65F00000:qmstop:100:root@pam:";
            ctx.journal.accepted("POST", "/nodes/pve1/qemu/100/status/stop", &[], &json!(upid));
            ctx.journal.task_ended(upid, "OK");
            let destroy = "UPID:pve1:00000002:0000000E:65F00000:qmdestroy:100:root@pam:";
            ctx.journal.accepted("DELETE", "/nodes/pve1/qemu/100", &["purge"], &json!(destroy));
            Err(Error::TaskFailed {
                upid: destroy.into(),
                exitstatus: "boom".into(),
                log_tail: vec![],
                context: "deletion of VM 100 failed".into(),
            })
        }
        Some("voided") => {
            let upid = "UPID:pve1:00000003:00000015:65F00000:qmconfig:100:root@pam:";
            ctx.journal.accepted("POST", "/nodes/pve1/qemu/100/config", &["scsi1", "digest"], &json!(upid));
            ctx.journal.changed_nothing(upid);
            Ok(Outcome::new(false, "unchanged"))
        }
        Some("refused") | Some("applied-then-refused") => {
            let start = "UPID:pve1:00000004:0000001C:65F00000:qmstart:100:root@pam:";
            if ctx.params.str("what") == Some("applied-then-refused") {
                ctx.journal.accepted("PUT", "/nodes/pve1/qemu/100/config", &["cores", "digest"], &Value::Null);
            }
            ctx.journal.accepted("POST", "/nodes/pve1/qemu/100/status/start", &[], &json!(start));
            ctx.journal.task_ended(start, "VM is locked (backup)");
            // what `WriteJournal::settle` does when the footprint reads as before (pve::footprint)
            ctx.journal.changed_nothing(start);
            Err(Error::TaskFailed {
                upid: start.into(),
                exitstatus: "VM is locked (backup)".into(),
                log_tail: vec![],
                context: "start of VM 100 failed".into(),
            })
        }
        Some("write-unchanged") => {
            ctx.journal.accepted("PUT", "/nodes/pve1/qemu/100/config", &["net0", "digest"], &Value::Null);
            Ok(Outcome::new(false, "module thought nothing changed"))
        }
        Some("predict") => {
            // A check-mode task that predicts: it records a VM through the context's predictions.
            if let Some(plan) = &ctx.predictions {
                let mut vm = plan.get(7).expect("the plan handed in holds VM 7");
                vm.current.insert("cores".into(), "4".into());
                plan.clone().record(&vm);
            }
            Ok(Outcome::new(true, "predicted"))
        }
        Some("echo") => Ok(Outcome::new(ctx.check_mode, "echo")
            .with("password", ctx.params.str("password").unwrap_or(""))
            .with_diff(Some(Diff::text("a\n", "b\n", "before", "after")))),
        _ => Ok(Outcome::new(false, "")),
    }
}

fn exec(text: &str) -> (Value, i32) {
    execute(&SPEC, Ok(text.to_string()), &|_| None, body)
}

#[test]
fn unreadable_or_malformed_input_is_one_failure_object() {
    for input in ["", "   ", "not json", "[1,2]", "{\"what\": "] {
        let (v, code) = exec(input);
        assert_eq!(v["failed"], true, "input {input:?}");
        assert_eq!(code, 1);
        assert!(v["msg"].as_str().unwrap().contains("module arguments"), "{v}");
    }
    let (v, _) =
        execute(&SPEC, Err(Error::args("unable to read the module arguments from /x: No such file")), &|_| None, body);
    assert_eq!(v["msg"], "unable to read the module arguments from /x: No such file");
}

#[test]
fn unknown_ansible_keys_are_ignored_and_flags_read() {
    let (v, code) =
        exec(r#"{"what": "echo", "_ansible_check_mode": true, "_ansible_diff": true, "_ansible_future_thing": 1}"#);
    assert_eq!(code, 0);
    assert_eq!(v["changed"], true);
    assert_eq!(v["diff"]["before"], "a\n");
}

#[test]
fn diff_only_in_diff_mode() {
    let (v, _) = exec(r#"{"what": "echo"}"#);
    assert!(v.get("diff").is_none());
}

#[test]
fn secrets_are_masked_everywhere() {
    let (v, _) = exec(r#"{"what": "echo", "password": "hunter2"}"#);
    assert_eq!(v["password"], "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER");
    assert_eq!(v["invocation"]["module_args"]["password"], "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER");
    let (v, _) = exec(r#"{"what": "fail", "password": "hunter2"}"#);
    assert_eq!(v["msg"], "bad password ********");
    let (v, _) = exec(r#"{"what": ["x"], "password": "hunter2", "bogus": 1}"#);
    assert!(!v.to_string().contains("hunter2"));
}

/// The process's panic path, as the release binary takes it (a hook that prints and exits):
/// run in a child process of this test binary, which the hook ends.
#[test]
fn a_panic_is_one_failure_object_masked_and_keeps_accepted_writes() {
    const CHILD: &str = "FERRO_PROTOCOL_PANIC_CHILD";
    const NAME: &str = "protocol::tests::a_panic_is_one_failure_object_masked_and_keeps_accepted_writes";
    if std::env::var_os(CHILD).is_some() {
        let input = r#"{"what": "write-then-panic", "password": "hunter2"}"#.to_string();
        let _ = run_body(&SPEC, Ok(input), &|_| None, body, PanicReport::PrintAndExit);
        unreachable!("the panic hook exits");
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // libtest writes `test <name> ... ` before the object on the same line.
    let objects: Vec<&str> = stdout.lines().filter_map(|l| l.find('{').map(|at| &l[at..])).collect();
    assert_eq!(objects.len(), 1, "one JSON object: {stdout}");
    let v: Value = serde_json::from_str(objects[0]).unwrap();
    assert_eq!(v["failed"], true);
    assert_eq!(v["changed"], true, "{v}");
    let msg = v["msg"].as_str().unwrap();
    assert!(msg.contains("internal error: the module panicked: boom with ********"), "{msg}");
    assert_eq!(v["accepted_writes"], json!(["PUT /nodes/pve1/qemu/100/config (net0)"]));
    assert!(!stdout.contains("hunter2") && !String::from_utf8_lossy(&out.stderr).contains("hunter2"));
}

#[test]
fn an_accepted_write_is_a_change_whatever_fails_after_it() {
    let (v, code) = exec(r#"{"what": "write-then-fail"}"#);
    assert_eq!(code, 1);
    assert_eq!(v["failed"], true);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(
        v["msg"],
        "Proxmox VE accepted these changes before the run failed: POST /nodes/pve1/qemu/100/status/stop \
         (task UPID:pve1:00000001:00000007:65F00000:qmstop:100:root@pam: ended OK); DELETE /nodes/pve1/qemu/100 \
         (purge) (task UPID:pve1:00000002:0000000E:65F00000:qmdestroy:100:root@pam: started). Then: deletion of \
         VM 100 failed: task UPID:pve1:00000002:0000000E:65F00000:qmdestroy:100:root@pam: failed: boom"
    );
    assert_eq!(v["accepted_writes"].as_array().map(Vec::len), Some(2));
    assert_eq!(v["upid"], "UPID:pve1:00000002:0000000E:65F00000:qmdestroy:100:root@pam:");
    let (v, _) = exec(r#"{"what": "write-unchanged"}"#);
    assert_eq!(v["changed"], true, "{v}");
    let (v, _) = exec(r#"{"what": "voided"}"#);
    assert_eq!(v["changed"], false, "{v}");
    let (v, _) = exec(r#"{"what": "fail"}"#);
    assert_eq!(v["changed"], false);
    assert!(v.get("accepted_writes").is_none());
}

#[test]
fn a_task_refused_before_its_effect_is_no_change_and_says_so() {
    let start = "POST /nodes/pve1/qemu/100/status/start (task UPID:pve1:00000004:0000001C:65F00000:qmstart:100:\
                 root@pam: ended: VM is locked (backup))";
    let (v, code) = exec(r#"{"what": "refused"}"#);
    assert_eq!((code, &v["failed"], &v["changed"]), (1, &json!(true), &json!(false)), "{v}");
    let msg = v["msg"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!("Proxmox VE refused {start}; nothing was changed. start of VM 100 failed")),
        "{msg}"
    );
    assert_eq!(v["refused_writes"], json!([start]));
    assert!(v.get("accepted_writes").is_none());
    // A write applied before it keeps the run changed, and is listed apart from the refused one.
    let (v, _) = exec(r#"{"what": "applied-then-refused"}"#);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["accepted_writes"], json!(["PUT /nodes/pve1/qemu/100/config (cores)"]));
    assert_eq!(v["refused_writes"], json!([start]));
    let msg = v["msg"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!(
            "Proxmox VE applied these changes before the run failed: PUT /nodes/pve1/qemu/100/config (cores). \
             Proxmox VE refused {start}, which changed nothing. Then: start of VM 100 failed"
        )),
        "{msg}"
    );
}

#[test]
fn the_module_is_the_one_argv0_names() {
    let modules: &[Module] = &[(&SPEC, body)];
    for argv0 in ["proto_test", "/tmp/ansible-tmp-1/proto_test", "./native/x86_64-unknown-linux-musl/proto_test"] {
        assert_eq!(module_named(argv0, modules).map(|(spec, _)| spec.name), Ok("proto_test"), "{argv0}");
    }
    for argv0 in ["", "ferro_proxmox", "/x/proto_test.exe", "/proto_test/x"] {
        let e = module_named(argv0, modules).map(|(spec, _)| spec.name).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("argv[0]") && msg.contains("named proto_test"), "{argv0}: {msg}");
    }
}

#[test]
fn wrapper_form_is_accepted() {
    let (v, code) = exec(r#"{"ANSIBLE_MODULE_ARGS": {"what": "echo"}}"#);
    assert_eq!(code, 0, "{v}");
}

#[test]
fn the_check_plan_comes_in_with_the_args_and_only_this_tasks_predictions_go_back() {
    let vm = |vmid: u64| {
        json!({"vmid": vmid, "name": null, "node": "pve1", "status": "stopped", "template": false, "removed": false,
               "exists": false, "current": {"cores": "1"}, "pending": {}, "pending_delete": {}})
    };
    let input = json!({"what": "predict", "_ansible_check_mode": true, "_ferro_check_plan": [vm(7), vm(8)]});
    let (v, code) = exec(&input.to_string());
    assert_eq!(code, 0, "{v}");
    let recorded = v["_ferro_check_plan_recorded"].as_array().expect("the recorded predictions");
    assert_eq!(recorded.len(), 1, "{v}");
    assert_eq!(recorded[0]["vmid"], 7);
    assert_eq!(recorded[0]["current"]["cores"], "4");
    // Outside check mode a plan is ignored: nothing is predicted, nothing goes back.
    let mut real = input.clone();
    real["_ansible_check_mode"] = json!(false);
    let (v, _) = exec(&real.to_string());
    assert!(v.get("_ferro_check_plan_recorded").is_none(), "{v}");
}

#[test]
fn predictions_are_masked_by_whole_secrets_only() {
    // issue 33: with the password `web`, a VM named `existing-web` keeps its name for the later
    // tasks that read the prediction; a value that is the secret is still masked
    let input = json!({"what": "predict", "_ansible_check_mode": true, "password": "web", "_ferro_check_plan": [
        {"vmid": 7, "name": "existing-web", "node": "pve1", "status": "stopped", "template": false, "removed": false,
         "exists": true, "current": {"cores": "1", "cipassword": "web"}, "pending": {}, "pending_delete": {}}]});
    let (v, code) = exec(&input.to_string());
    assert_eq!(code, 0, "{v}");
    let recorded = &v["_ferro_check_plan_recorded"][0];
    assert_eq!(recorded["name"], "existing-web", "{v}");
    assert_eq!(recorded["current"]["cipassword"], "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER", "{v}");
    assert_eq!(v["invocation"]["module_args"]["password"], "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER");
}
