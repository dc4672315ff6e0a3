//! Transient refusals of a busy cluster, told from final ones, and a write whose answer was lost
//! reconciled with what PVE did before anything is sent again (docs/pve-semantics.md §55).
//!
//! Three classes are sent again, with backoff, within the task's `timeout`: a lock that PVE could
//! not take in time before it changed anything (pve-cluster `Cluster.pm` `cfs_lock`: `cfs-lock
//! '<id>' error: got lock request timeout`; pve-common `Tools.pm` `lock_file_full`: `can't lock
//! file '<file>' - got timeout`), as a 500 of a synchronous call or as a task's exit status; a
//! connection that failed before the request was sent (refused, no route); and pveproxy's 595, a
//! proxy hop (pve-http-server `AnyEvent.pm` `proxy_request`, AnyEvent::HTTP's status for a failed
//! connection) that never reached the daemon or node that does the work. A write whose answer was
//! lost after it was sent (a reset, a timeout) is never sent blindly: the node's task list, the
//! config's digest and the write's footprint (`pve::footprint`) tell whether PVE did it.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::pve::footprint::{touches, Footprint};
use crate::pve::journal::WriteJournal;
use crate::pve::request::{form, ApiPath, Form, Method, Read};

/// How long a module without a `timeout` of its own keeps sending a transient refusal again.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(30);

/// What to do with a write that failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Class {
    /// PVE did nothing, and said why in words that pass: send it again (the reason, for the result).
    Again(String),
    /// The request left and its answer did not come back: PVE may have done it.
    Lost,
    /// An answer to act on as it is.
    Final,
}

/// What the client adds to a transport error's detail when no byte of the request left this
/// machine (the connection was refused, the name did not resolve, TLS did not verify).
pub const NOT_SENT: &str = " (nothing was sent)";

/// Whether `e` is a connection that failed before the request was sent, and may be tried again:
/// not a certificate that does not verify, which never will.
pub fn refused_before_sending(e: &Error) -> bool {
    matches!(e, Error::Transport { detail, .. } if detail.ends_with(NOT_SENT) && !detail.contains("could not be verified"))
}

/// The class of a write's failure.
pub fn classify(e: &Error) -> Class {
    match e {
        Error::Transport { detail, .. } if refused_before_sending(e) => {
            Class::Again(format!("connection failed before the request was sent ({})", first_line(detail)))
        }
        Error::Transport { may_have_applied: false, .. } => Class::Final,
        Error::Transport { may_have_applied: true, .. } => Class::Lost,
        Error::Api { status: 595, message, .. } => {
            Class::Again(format!("a proxy hop could not connect (HTTP 595: {})", first_line(message)))
        }
        Error::Api { status: 500, message, .. } if is_lock_timeout(message) => {
            Class::Again(format!("lock timeout before any change ({})", first_line(message)))
        }
        _ => Class::Final,
    }
}

/// Whether PVE's words are a lock it could not take in time (cfs_lock or lock_file_full), which
/// both raise before the locked code runs.
pub fn is_lock_timeout(text: &str) -> bool {
    (text.contains("cfs-lock '") && text.contains("got lock request timeout"))
        || (text.contains("can't lock file '") && text.contains("got timeout"))
}

fn first_line(text: &str) -> String {
    crate::error::clip(text.lines().next().unwrap_or_default().trim(), 200)
}

/// Pauses between tries: 250 ms doubling to 4 s, while the budget lasts.
#[derive(Debug, Clone)]
pub struct Backoff {
    deadline: Instant,
    next: Duration,
}

impl Backoff {
    pub fn new(budget: Duration) -> Backoff {
        Backoff { deadline: Instant::now() + budget, next: Duration::from_millis(250) }
    }

    /// The pause before the next try, `None` once it would end past the budget.
    pub fn pause(&mut self) -> Option<Duration> {
        let pause = self.next;
        if Instant::now() + pause > self.deadline {
            return None;
        }
        self.next = (self.next * 2).min(Duration::from_secs(4));
        Some(pause)
    }
}

/// The seconds since the epoch, as PVE's `starttime`.
pub fn now_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// What PVE did with a write whose answer was lost.
#[derive(Debug, Clone, PartialEq)]
pub enum Reconciled {
    /// It started this task: its answer would have been this UPID.
    Task(String),
    /// A synchronous config write that PVE applied (the config's digest moved on).
    Applied,
    /// Nothing: no task of it, and what it writes reads as before. It may be sent again.
    Nothing,
    /// Cannot be told: the error stands.
    Unknown,
}

/// The task type a write starts (qemu-server `API2/Qemu.pm`, the `fork_worker` of each handler),
/// and the id the UPID carries (a clone's is its source); `None` for a write that starts none.
fn task_of(method: Method, path: &ApiPath, params: &Form) -> Option<(&'static str, String)> {
    let s = path.segments();
    let vmid = s.get(3).cloned();
    let param = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let rest: Vec<&str> = s.iter().skip(4).map(String::as_str).collect();
    let kind = match (method, s.len(), rest.as_slice()) {
        (Method::Post, 3, _) => return Some(("qmcreate", param("vmid")?)),
        (Method::Post, _, ["clone"]) => "qmclone",
        (Method::Post, _, ["status", verb]) => match *verb {
            "start" => "qmstart",
            "stop" => "qmstop",
            "shutdown" => "qmshutdown",
            "reboot" => "qmreboot",
            "reset" => "qmreset",
            "suspend" => "qmsuspend",
            "resume" => "qmresume",
            _ => return None,
        },
        (Method::Post, _, ["config"]) => "qmconfig",
        (Method::Put, _, ["resize"]) => "qmresize",
        (Method::Post, _, ["move_disk"]) => "qmmove",
        (Method::Post, _, ["migrate"]) => "qmigrate",
        (Method::Post, _, ["template"]) => "qmtemplate",
        (Method::Delete, 4, _) => "qmdestroy",
        _ => return None,
    };
    Some((kind, vmid?))
}

/// Read what PVE did with `method path params`, sent at `sent_at` (seconds) by `authid`, whose
/// answer was lost; `footprint` is what its task could touch as read before it was sent.
pub fn reconcile(
    api: Read<'_>,
    method: Method,
    path: &ApiPath,
    params: &Form,
    authid: &str,
    sent_at: i64,
    footprint: Option<&Footprint>,
) -> Reconciled {
    let s = path.segments();
    let Some(node) = s.get(1).filter(|_| s.first().map(String::as_str) == Some("nodes")) else {
        return Reconciled::Unknown;
    };
    let task = task_of(method, path, params);
    let newid = params.iter().find(|(k, _)| k == "newid").map(|(_, v)| v.as_str());
    let clone_to = newid.filter(|_| task.as_ref().is_some_and(|(kind, _)| *kind == "qmclone"));
    if let Some((kind, id)) = &task {
        let Some(ours) = our_tasks(api, node, kind, id, authid, sent_at) else { return Reconciled::Unknown };
        match clone_to {
            // A clone's UPID carries its source: clones of one template by one user at once are
            // told apart by the line the worker prints first, `creating a clone of VM <vmid>
            // with ID <newid>` (qemu-server `API2/Qemu.pm` clone_vm, `$clonefn`); a task that has
            // not printed it yet could be ours, so nothing can be told (never sent again). Runs
            // that took the same next free id at once clone to the same newid: the caller tells
            // them apart by the clone's name once the task ended (proxmox_kvm `clone_with_retry`).
            Some(newid) => match clone_task(api, node, &ours, newid) {
                Some(Some(upid)) => return Reconciled::Task(upid),
                Some(None) => {}
                None => return Reconciled::Unknown,
            },
            None => {
                if let Some(upid) = ours.first() {
                    return Reconciled::Task(upid.to_string());
                }
            }
        }
    }
    let digest = params.iter().find(|(k, _)| k == "digest").map(|(_, v)| v.as_str());
    if let (Some(sent), Some("config")) = (digest, s.last().map(String::as_str)) {
        let now = api(&path.clone(), &Vec::new()).ok();
        return match now.as_ref().and_then(|c| c.get("digest")).and_then(Value::as_str) {
            Some(d) if d == sent => Reconciled::Nothing,
            Some(_) if task.is_none() => Reconciled::Applied,
            _ => Reconciled::Unknown,
        };
    }
    match footprint {
        Some(f) if task.is_some() && touches(method, path, params).is_some() && f.unchanged(api) => Reconciled::Nothing,
        _ => match (&task, clone_to) {
            // the new VM appeared since the task list was read: the clone task to that newid,
            // which may be another run's (the caller's name check tells)
            (Some((kind, id)), Some(newid)) => our_tasks(api, node, kind, id, authid, sent_at)
                .and_then(|ours| clone_task(api, node, &ours, newid).flatten())
                .map_or(Reconciled::Unknown, Reconciled::Task),
            _ => Reconciled::Unknown,
        },
    }
}

/// The tasks of type `kind` on `id` that `authid` started since about `sent_at` (seconds), newest
/// first as the node lists them; `None` when the list cannot be read. Our own user's only, by the
/// UPID's user field (the whole authid; the list splits a token's into `user` and `tokenid`,
/// Tasks.pm); a clock a second or two apart from PVE's still finds it.
fn our_tasks(api: Read<'_>, node: &str, kind: &str, id: &str, authid: &str, sent_at: i64) -> Option<Vec<String>> {
    let query = form([("source", "all"), ("vmid", id), ("typefilter", kind)]);
    let list = api(&ApiPath::new(["nodes", node, "tasks"]), &query).ok()?;
    Some(
        list.as_array()
            .into_iter()
            .flatten()
            .filter(|t| {
                let upid = t.get("upid").and_then(Value::as_str).unwrap_or_default();
                upid.split(':').nth(7) == Some(authid)
                    && t.get("starttime").and_then(Value::as_i64).is_some_and(|st| st + 2 >= sent_at)
            })
            .filter_map(|t| t.get("upid").and_then(Value::as_str).map(str::to_string))
            .collect(),
    )
}

/// Which of `candidates` (qmclone tasks of one source by this user) clones to `newid`, by the
/// first line of its log: `Some(Some(upid))` that one, `Some(None)` none of them, `None` when a
/// candidate's log cannot be read or does not say yet.
fn clone_task(api: Read<'_>, node: &str, candidates: &[String], newid: &str) -> Option<Option<String>> {
    let wanted = format!(" with ID {newid}");
    let mut undecided = false;
    for upid in candidates {
        let log = api(&ApiPath::new(["nodes", node, "tasks", upid, "log"]), &form([("start", "0"), ("limit", "20")]));
        let lines: Vec<String> = log
            .ok()
            .and_then(|l| l.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|l| l.get("t").and_then(Value::as_str).map(str::to_string))
            .collect();
        match lines.iter().find(|t| t.starts_with("creating a clone of VM ")) {
            Some(t) if t.ends_with(&wanted) => return Some(Some(upid.to_string())),
            Some(_) => {}
            None => undecided = true,
        }
    }
    (!undecided).then_some(None)
}

/// Run `attempt` (a write and the wait for its task) again while its task fails on a lock PVE could
/// not take in time and the task changed nothing (the journal settled it against its footprint,
/// §31): with backoff, for at most `budget`. Any other outcome is `attempt`'s.
/// `journal`: the run's (`Api::journal`); without one nothing is sent again.
pub fn again_on_lock_timeout<T>(
    journal: Option<&WriteJournal>,
    budget: Duration,
    mut attempt: impl FnMut() -> Result<T>,
) -> Result<T> {
    let mut backoff = Backoff::new(budget);
    loop {
        let result = attempt();
        let Err(Error::TaskFailed { upid, exitstatus, .. }) = &result else { return result };
        let Some(journal) = journal else { return result };
        if !is_lock_timeout(exitstatus) || !journal.was_refused(upid) {
            return result;
        }
        let Some(pause) = backoff.pause() else { return result };
        journal.retried(format!(
            "task {upid} failed before any change: {}; sent again after {} ms",
            first_line(exitstatus),
            pause.as_millis()
        ));
        std::thread::sleep(pause);
    }
}

#[cfg(test)]
mod tests;
