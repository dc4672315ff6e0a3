//! The one task waiter: every UPID a module starts is waited for here until it has really ended,
//! and its exit status decides success.
//!
//! PVE semantics (docs/pve-semantics.md §17; pve-common UPID.pm, pve-manager Tasks.pm): a task is
//! `running` until its worker exits, then `stopped` with `exitstatus` from its last log line:
//! `OK` and `WARNINGS: n` are success, anything else is the error text. Right after creation the
//! status endpoint may briefly answer 400, so that is polled through for a short grace period.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::request::{form, ApiPath};

/// A task that ended successfully; `warnings` are its `WARN:` log lines when it ended with
/// `WARNINGS: n`.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSuccess {
    pub upid: String,
    pub warnings: Vec<String>,
}

/// Polling: the first poll after `first_poll` (PVE answers the write with the UPID as soon as
/// `fork_worker` has forked the task's worker, so a poll at once finds it running: a wasted
/// request), then a pause as long as the task has run so far, at most `max_poll`: the polls double
/// the time waited (a task of T seconds costs about log2(T / first_poll) + 1 polls, one when it
/// ends within `first_poll`, and at most one a `max_poll` once it runs long), and the wait ends
/// within one poll of the task's end, never more than its run time so far (or `first_poll`) after
/// it (docs/pve-semantics.md §17, §66).
#[derive(Debug, Clone, Copy)]
pub struct Waiter {
    pub timeout: Duration,
    pub first_poll: Duration,
    pub max_poll: Duration,
    /// How long a 400 from the status endpoint is taken for "not visible yet".
    pub not_visible_grace: Duration,
}

impl Waiter {
    pub fn new(timeout: Duration) -> Self {
        Waiter {
            timeout,
            first_poll: Duration::from_millis(100),
            max_poll: Duration::from_millis(1000),
            not_visible_grace: Duration::from_secs(5),
        }
    }

    /// Wait for `upid` to stop; success for `OK`/`WARNINGS: n`, `Error::TaskFailed` otherwise,
    /// `Error::TaskTimeout` (naming the UPID) when it is still running after `timeout`.
    pub fn wait(&self, api: &dyn Api, upid: &str) -> Result<TaskSuccess> {
        let node = upid_node(upid)?;
        let base = ApiPath::new(["nodes", node, "tasks", upid]);
        let started = Instant::now();
        std::thread::sleep(self.first_poll.min(self.timeout));
        loop {
            match api.get(&base.join(["status"]), &Vec::new()) {
                Ok(status) => {
                    if status.get("status").and_then(Value::as_str) == Some("stopped") {
                        let exitstatus =
                            status.get("exitstatus").and_then(Value::as_str).unwrap_or("unexpected status").to_string();
                        if let Some(journal) = api.journal() {
                            journal.task_ended(upid, &exitstatus);
                        }
                        let ended = self.finish(api, &base, upid, exitstatus);
                        if let (Err(Error::TaskFailed { .. }), Some(journal)) = (&ended, api.journal()) {
                            // Did the failed task change the VM? (pve::footprint, §31)
                            journal.settle(&|p, q| api.get(p, q), upid);
                        }
                        return ended;
                    }
                }
                Err(e) if e.api_status() == Some(400) && started.elapsed() < self.not_visible_grace => {}
                Err(e) => return Err(e.context(&format!("reading the status of task {upid}"))),
            }
            let elapsed = started.elapsed();
            if elapsed >= self.timeout {
                return Err(Error::TaskTimeout {
                    upid: upid.to_string(),
                    seconds: self.timeout.as_secs(),
                    context: String::new(),
                });
            }
            std::thread::sleep(self.pause(elapsed).min(self.timeout - elapsed));
        }
    }

    /// The pause after a poll that found the task running `elapsed` after the wait began.
    fn pause(&self, elapsed: Duration) -> Duration {
        elapsed.max(self.first_poll).min(self.max_poll)
    }

    fn finish(&self, api: &dyn Api, base: &ApiPath, upid: &str, exitstatus: String) -> Result<TaskSuccess> {
        if exitstatus == "OK" {
            return Ok(TaskSuccess { upid: upid.to_string(), warnings: Vec::new() });
        }
        let log = read_log(api, base).unwrap_or_default();
        if is_warnings_status(&exitstatus) {
            let warnings =
                log.iter().filter_map(|l| l.strip_prefix("WARN: ")).map(|l| format!("task {upid}: {l}")).collect();
            return Ok(TaskSuccess { upid: upid.to_string(), warnings });
        }
        let useful: Vec<&String> =
            log.iter().filter(|l| !l.starts_with("TASK ERROR:") && !l.trim().is_empty()).collect();
        let tail: Vec<String> = useful[useful.len().saturating_sub(5)..].iter().map(|l| l.to_string()).collect();
        Err(Error::TaskFailed { upid: upid.to_string(), exitstatus, log_tail: tail, context: String::new() })
    }
}

/// `WARNINGS: <n>` counts as success (pve-manager Tasks.pm).
fn is_warnings_status(s: &str) -> bool {
    s.strip_prefix("WARNINGS: ").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The node a task runs on, from `UPID:<node>:...`.
pub fn upid_node(upid: &str) -> Result<&str> {
    let mut parts = upid.split(':');
    match (parts.next(), parts.next()) {
        (Some("UPID"), Some(node)) if !node.is_empty() && upid.split(':').count() >= 9 => Ok(node),
        _ => Err(Error::Internal(format!("unexpected task id from Proxmox: {upid:?}"))),
    }
}

fn read_log(api: &dyn Api, base: &ApiPath) -> Result<Vec<String>> {
    let first = api.get(&base.join(["log"]), &form([("start", "0"), ("limit", "500")]))?;
    let mut lines = log_lines(&first);
    // A long log: fetch its end, which is where the error is.
    if lines.len() >= 500 {
        let tail = api.get(&base.join(["log"]), &form([("start", "0"), ("limit", "100000")]))?;
        lines = log_lines(&tail);
    }
    Ok(lines)
}

fn log_lines(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|items| items.iter().filter_map(|i| i.get("t").and_then(Value::as_str).map(str::to_string)).collect())
        .unwrap_or_default()
}

/// Whether a call's answer is a UPID (some endpoints answer `null` when there was nothing to do).
pub fn as_upid(v: &Value) -> Option<&str> {
    v.as_str().filter(|s| s.starts_with("UPID:"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pve::client::testing::ScriptedApi;
    use crate::pve::request::Method;
    use serde_json::json;

    const UPID: &str = "UPID:pve1:00001234:00005678:65F00000:qmclone:9000:root@pam:";

    fn fast(timeout_ms: u64) -> Waiter {
        Waiter {
            timeout: Duration::from_millis(timeout_ms),
            first_poll: Duration::from_millis(1),
            max_poll: Duration::from_millis(5),
            not_visible_grace: Duration::from_millis(200),
        }
    }

    #[test]
    fn waits_through_running_until_ok() {
        let api = ScriptedApi::default();
        api.answer(Method::Get, "/nodes/pve1/tasks/", Ok(json!({"status": "running"})))
            .answer(Method::Get, "/nodes/pve1/tasks/", Ok(json!({"status": "running"})))
            .answer(Method::Get, "/nodes/pve1/tasks/", Ok(json!({"status": "stopped", "exitstatus": "OK"})));
        let ok = fast(5000).wait(&api, UPID).unwrap();
        assert_eq!(ok.warnings, Vec::<String>::new());
        assert_eq!(api.calls.borrow().len(), 3);
    }

    #[test]
    fn the_end_of_a_task_goes_into_the_runs_journal() {
        let api = ScriptedApi::default();
        api.journal.accepted("DELETE", "/nodes/pve1/qemu/9000", &[], &json!(UPID));
        api.answer(Method::Get, "/nodes/pve1/tasks/", Ok(json!({"status": "stopped", "exitstatus": "OK"})));
        fast(5000).wait(&api, UPID).unwrap();
        assert_eq!(api.journal.lines(), [format!("DELETE /nodes/pve1/qemu/9000 (task {UPID} ended OK)")]);
    }

    #[test]
    fn failed_task_reports_exit_status_and_log_tail() {
        let api = ScriptedApi::default();
        api.answer(
            Method::Get,
            "/nodes/pve1/tasks/",
            Ok(json!({"status": "stopped", "exitstatus": "VM is locked (clone)"})),
        )
        .answer(
            Method::Get,
            "/nodes/pve1/tasks/",
            Ok(json!([{"n": 1, "t": "trying to acquire lock..."}, {"n": 2, "t": "TASK ERROR: VM is locked (clone)"}])),
        );
        match fast(5000).wait(&api, UPID) {
            Err(Error::TaskFailed { exitstatus, log_tail, .. }) => {
                assert_eq!(exitstatus, "VM is locked (clone)");
                assert_eq!(log_tail, vec!["trying to acquire lock...".to_string()]);
            }
            other => panic!("expected a task failure, got {other:?}"),
        }
    }

    #[test]
    fn warnings_status_is_success_with_warn_lines() {
        let api = ScriptedApi::default();
        api.answer(Method::Get, "/nodes/pve1/tasks/", Ok(json!({"status": "stopped", "exitstatus": "WARNINGS: 1"})))
            .answer(
                Method::Get,
                "/nodes/pve1/tasks/",
                Ok(json!([{"n": 1, "t": "WARN: disk full soon"}, {"n": 2, "t": "TASK WARNINGS: 1"}])),
            );
        let ok = fast(5000).wait(&api, UPID).unwrap();
        assert_eq!(ok.warnings, vec![format!("task {UPID}: disk full soon")]);
    }

    #[test]
    fn a_400_right_after_creation_is_polled_through() {
        let api = ScriptedApi::default();
        let not_yet =
            Error::Api { method: "GET".into(), path: "/x".into(), status: 400, message: "no such task".into() };
        api.answer(Method::Get, "/nodes/pve1/tasks/", Err(not_yet)).answer(
            Method::Get,
            "/nodes/pve1/tasks/",
            Ok(json!({"status": "stopped", "exitstatus": "OK"})),
        );
        assert!(fast(5000).wait(&api, UPID).is_ok());
    }

    #[test]
    fn timeout_names_the_upid() {
        let api = ScriptedApi::default();
        for _ in 0..200 {
            api.answer(Method::Get, "/nodes/pve1/tasks/", Ok(json!({"status": "running"})));
        }
        let e = fast(30).wait(&api, UPID).unwrap_err();
        assert!(matches!(e, Error::TaskTimeout { .. }));
        assert!(e.to_string().contains(UPID));
    }

    #[test]
    fn polls_double_the_time_waited_and_end_within_one_poll_of_the_tasks_end() {
        let w = Waiter::new(Duration::from_secs(300));
        // polls at 0.1, 0.2, 0.4, 0.8, 1.6 s, then one a second: none at once (§66)
        let mut at = w.first_poll;
        let mut polls = vec![at];
        while at < Duration::from_secs(4) {
            at += w.pause(at);
            polls.push(at);
        }
        let ms: Vec<u128> = polls.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, [100, 200, 400, 800, 1600, 2600, 3600, 4600]);
        // a task that ends at T is seen at the first poll after T: at most T (and 1 s) later
        for end_ms in [50u64, 150, 390, 1000, 3000] {
            let end = Duration::from_millis(end_ms);
            let seen = polls.iter().find(|p| **p >= end).copied().unwrap();
            assert!(seen - end <= end.max(w.first_poll).min(w.max_poll), "{end_ms}: seen at {seen:?}");
        }
    }

    #[test]
    fn upid_parsing() {
        assert_eq!(upid_node(UPID).unwrap(), "pve1");
        assert!(upid_node("garbage").is_err());
        assert!(upid_node("UPID::x").is_err());
        assert!(is_warnings_status("WARNINGS: 3"));
        assert!(!is_warnings_status("WARNINGS: x"));
    }
}
