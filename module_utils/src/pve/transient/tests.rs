//! The classes of a failed write and the reconciliation of a lost answer, with PVE's words.

use std::cell::RefCell;

use serde_json::json;

use super::*;
use crate::error::Result;

fn api(status: u16, message: &str) -> Error {
    Error::Api { method: "POST".into(), path: "/x".into(), status, message: message.into() }
}

fn transport(may_have_applied: bool) -> Error {
    let detail =
        if may_have_applied { "Connection reset by peer".into() } else { format!("Connection refused{NOT_SENT}") };
    Error::Transport { method: "POST".into(), path: "/x".into(), detail, may_have_applied }
}

#[test]
fn pves_transient_words_are_sent_again_and_only_those() {
    // pve-cluster Cluster.pm cfs_lock; pve-common Tools.pm lock_file_full.
    let cfs = "cfs-lock 'storage-nas' error: got lock request timeout";
    let flock = "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout";
    assert!(is_lock_timeout(cfs) && is_lock_timeout(flock));
    assert!(!is_lock_timeout("VM is locked (backup)"));
    assert!(!is_lock_timeout("'storage-nas'-locked command timed out - aborting"));
    assert!(matches!(classify(&api(500, cfs)), Class::Again(w) if w.contains("lock timeout")));
    assert!(matches!(classify(&api(500, flock)), Class::Again(_)));
    assert!(matches!(classify(&api(595, "Connection refused")), Class::Again(w) if w.contains("proxy hop")));
    assert!(matches!(classify(&transport(false)), Class::Again(w) if w.contains("before the request was sent")));
    assert_eq!(classify(&transport(true)), Class::Lost);
    // A 596 may have reached the daemon, a 500 of another kind is PVE's answer: never sent again.
    assert_eq!(classify(&api(596, "Connection reset by peer")), Class::Final);
    assert_eq!(classify(&api(500, "VM 100 already exists on node 'pve1'")), Class::Final);
    assert_eq!(classify(&api(403, "Permission check failed")), Class::Final);
}

#[test]
fn backoff_doubles_and_ends_within_the_budget() {
    let mut b = Backoff::new(Duration::from_millis(1000));
    assert_eq!(b.pause(), Some(Duration::from_millis(250)));
    assert_eq!(b.pause(), Some(Duration::from_millis(500)));
    assert_eq!(b.pause(), None);
}

#[test]
fn the_task_a_write_starts() {
    let p = |s: &[&str]| ApiPath::new(s.iter().copied());
    let create = task_of(Method::Post, &p(&["nodes", "pve1", "qemu"]), &form([("vmid", "120")]));
    assert_eq!(create, Some(("qmcreate", "120".to_string())));
    let clone = task_of(Method::Post, &p(&["nodes", "pve1", "qemu", "9000", "clone"]), &form([("newid", "121")]));
    assert_eq!(clone, Some(("qmclone", "9000".to_string())));
    let start = task_of(Method::Post, &p(&["nodes", "pve1", "qemu", "100", "status", "start"]), &Vec::new());
    assert_eq!(start, Some(("qmstart", "100".to_string())));
    assert_eq!(task_of(Method::Put, &p(&["nodes", "pve1", "qemu", "100", "config"]), &Vec::new()), None);
    assert_eq!(
        task_of(Method::Delete, &p(&["nodes", "pve1", "qemu", "100"]), &Vec::new()),
        Some(("qmdestroy", "100".into()))
    );
}

/// A read closure answering the task list and the config with fixed values.
fn reader(tasks: Value, config: Value) -> (RefCell<Vec<String>>, Value, Value) {
    (RefCell::new(Vec::new()), tasks, config)
}

#[test]
fn a_lost_answer_is_reconciled_by_reading_before_anything_is_sent_again() {
    let clone = ApiPath::new(["nodes", "pve1", "qemu", "9000", "clone"]);
    let body = form([("newid", "121")]);
    let upid = "UPID:pve1:1:1:1:qmclone:9000:ansible@pve!automation:";
    let (calls, tasks, config) = reader(
        json!([{"upid": upid, "user": "ansible@pve", "tokenid": "automation", "starttime": 1000, "type": "qmclone"},
               {"upid": "UPID:pve1:2:2:2:qmclone:9000:root@pam:", "user": "root@pam", "starttime": 1001}]),
        json!({"digest": "aaa"}),
    );
    let read = |p: &ApiPath, _q: &Form| -> Result<Value> {
        calls.borrow_mut().push(p.encoded());
        Ok(match p.encoded() {
            t if t.ends_with("/tasks") => tasks.clone(),
            l if l.ends_with("/log") => json!([{"n": 1, "t": "creating a clone of VM 9000 with ID 121"}]),
            _ => config.clone(),
        })
    };
    let got = reconcile(&read, Method::Post, &clone, &body, "ansible@pve!automation", 1000, None);
    assert_eq!(got, Reconciled::Task(upid.to_string()));
    assert_eq!(calls.borrow().len(), 2, "the task list, then the log of our one candidate");
    // Another user's task, or one older than the send, is not ours.
    let got = reconcile(&read, Method::Post, &clone, &body, "ansible@pve!automation", 1010, None);
    assert_eq!(got, Reconciled::Unknown);

    // A config write guarded by a digest: the digest tells.
    let put = ApiPath::new(["nodes", "pve1", "qemu", "100", "config"]);
    let same = reconcile(&read, Method::Put, &put, &form([("cores", "2"), ("digest", "aaa")]), "u@pve", 1000, None);
    assert_eq!(same, Reconciled::Nothing);
    let moved = reconcile(&read, Method::Put, &put, &form([("cores", "2"), ("digest", "bbb")]), "u@pve", 1000, None);
    assert_eq!(moved, Reconciled::Applied);
    // Without a digest or a footprint nothing can be told.
    assert_eq!(reconcile(&read, Method::Put, &put, &form([("cores", "2")]), "u@pve", 1000, None), Reconciled::Unknown);
}

#[test]
fn concurrent_clones_of_one_template_are_told_apart_by_their_new_id() {
    // three clones of template 9000 by one token at once: their UPIDs all carry 9000
    let clone = ApiPath::new(["nodes", "pve1", "qemu", "9000", "clone"]);
    let upid = |n: u32| format!("UPID:pve1:{n}:{n}:{n}:qmclone:9000:ansible@pve!automation:");
    let tasks = json!([
        {"upid": upid(1), "starttime": 1000}, {"upid": upid(2), "starttime": 1000}, {"upid": upid(3), "starttime": 1001}
    ]);
    let logs = RefCell::new(vec![(upid(1), "104"), (upid(2), "105"), (upid(3), "106")]);
    let read = |p: &ApiPath, _q: &Form| -> Result<Value> {
        let path = p.encoded();
        if path.ends_with("/tasks") {
            return Ok(tasks.clone());
        }
        let log =
            logs.borrow().iter().find(|(u, _)| path.contains(&ApiPath::new(["x", u]).encoded()[3..])).map(|l| l.1);
        Ok(match log {
            Some("") => json!([]),
            Some(id) => json!([{"n": 1, "t": format!("creating a clone of VM 9000 with ID {id}")}]),
            None => json!([]),
        })
    };
    let sent = |newid: &str| {
        reconcile(&read, Method::Post, &clone, &form([("newid", newid)]), "ansible@pve!automation", 1000, None)
    };
    assert_eq!(sent("105"), Reconciled::Task(upid(2)));
    // no task of ours clones to 107: PVE did not handle it (no footprint here, so unknown rather than nothing)
    assert_eq!(sent("107"), Reconciled::Unknown);
    // a task that has not said its new id yet could be ours: nothing can be told
    logs.borrow_mut()[2].1 = "";
    assert_eq!(sent("107"), Reconciled::Unknown);
}
