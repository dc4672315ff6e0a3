//! The writes Proxmox VE accepted during one run, kept so that a run that fails after a write still
//! reports the change, and a failed task that changed nothing is not one: the client records into
//! it, the task waiter settles a failed task against its footprint, the protocol runner reads it.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::pve::footprint::Footprint;
use crate::pve::request::Read;

/// The writes Proxmox VE accepted during one run, in order: every non-GET call that got a success
/// answer (a config written, a task started), with what became of its task. Shared between the
/// client that records it and the protocol layer that reports it (a clone is the same journal).
#[derive(Debug, Clone, Default)]
pub struct WriteJournal(Arc<Mutex<Vec<AcceptedWrite>>>, Arc<Mutex<Vec<String>>>);

/// One accepted write: `PUT /nodes/pve1/qemu/100/config (net0)`, and its task if it started one.
#[derive(Debug, Clone, PartialEq)]
struct AcceptedWrite {
    /// Method, path and the names (never the values) of the parameters sent.
    call: String,
    upid: Option<String>,
    /// The task's exit status once it was seen to end.
    ended: Option<String>,
    /// What its task could touch, read before the write (`Footprint::before`); none for a write
    /// that starts no VM task, or whose state could not be read.
    footprint: Option<Footprint>,
    effect: Effect,
}

/// What an accepted write left behind.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Effect {
    /// It changed, or may have changed, the VM: a change of the run (`lines`).
    Changed,
    /// Its task ended without changing anything: PVE refused it before its effect
    /// (`changed_nothing`, `settle`; `refused_lines`).
    Refused,
    /// It did change something, which this run then undid: a VM made and removed again for a
    /// name another run's VM holds (`made_nothing_since`). Neither a change nor a refusal.
    Undone,
}

impl WriteJournal {
    /// Record a write Proxmox answered with success. `answer` is its `data` (a UPID or null).
    pub fn accepted(&self, method: &str, path: &str, names: &[&str], answer: &Value) {
        self.accepted_with(method, path, names, answer, None)
    }

    /// `accepted`, with what the write's task could touch as read before it was sent.
    pub fn accepted_with(
        &self,
        method: &str,
        path: &str,
        names: &[&str],
        answer: &Value,
        footprint: Option<Footprint>,
    ) {
        let names: Vec<&str> = names.iter().copied().filter(|n| *n != "digest").collect();
        let call = if names.is_empty() {
            format!("{method} {path}")
        } else {
            format!("{method} {path} ({})", names.join(", "))
        };
        let upid = answer.as_str().filter(|s| s.starts_with("UPID:")).map(str::to_string);
        let footprint = footprint.filter(|_| upid.is_some());
        self.with(|writes| writes.push(AcceptedWrite { call, upid, ended: None, footprint, effect: Effect::Changed }));
    }

    /// The task `upid` ended with `exitstatus`.
    pub fn task_ended(&self, upid: &str, exitstatus: &str) {
        self.with(|writes| {
            for w in writes.iter_mut().filter(|w| w.upid.as_deref() == Some(upid)) {
                w.ended = Some(exitstatus.to_string());
            }
        });
    }

    /// The task `upid` is known to have failed before it wrote anything (a digest conflict,
    /// which qemu-server checks before any change): it does not count as a change.
    pub fn changed_nothing(&self, upid: &str) {
        self.with(|writes| {
            for w in writes.iter_mut().filter(|w| w.upid.as_deref() == Some(upid)) {
                w.effect = Effect::Refused;
            }
        });
    }

    /// How many writes were accepted so far: a mark for `made_nothing_since`.
    pub fn mark(&self) -> usize {
        self.with(|writes| writes.len())
    }

    /// The writes accepted since `mark` left nothing behind: a VM this run made and removed
    /// again, because an overlapping run's VM holds its name (docs/pve-semantics.md §30). They
    /// are no change of the run, and no refusal either (`refused_lines` does not list them).
    pub fn made_nothing_since(&self, mark: usize) {
        self.with(|writes| writes.iter_mut().skip(mark).for_each(|w| w.effect = Effect::Undone));
    }

    /// The task `upid` failed: read again what it could touch, and if that reads as before the
    /// write, PVE refused it before its effect and it changed nothing (docs/pve-semantics.md §31).
    /// A write without a footprint, or a read that fails, stays a change.
    pub fn settle(&self, api: Read<'_>, upid: &str) {
        let footprint = self
            .with(|writes| writes.iter().find(|w| w.upid.as_deref() == Some(upid)).and_then(|w| w.footprint.clone()));
        // Read outside the lock: the reads go through the client, which records into this journal.
        if footprint.is_some_and(|f| f.unchanged(api)) {
            self.changed_nothing(upid);
        }
    }

    /// Whether Proxmox accepted at least one write that may have changed something.
    pub fn changed(&self) -> bool {
        self.with(|writes| writes.iter().any(|w| w.effect == Effect::Changed))
    }

    /// The writes that changed or may have changed something, one line each:
    /// `POST /nodes/pve1/qemu/100/status/stop (task UPID:... ended OK)`.
    pub fn lines(&self) -> Vec<String> {
        self.lines_where(Effect::Changed)
    }

    /// The writes whose task PVE refused before its effect, one line each, as `lines`.
    pub fn refused_lines(&self) -> Vec<String> {
        self.lines_where(Effect::Refused)
    }

    /// Whether every write of `lines` is known to have ended (a write answered at once, or a task
    /// seen to stop): then they were applied; a task still running was only accepted.
    pub fn all_ended(&self) -> bool {
        self.with(|writes| {
            writes.iter().filter(|w| w.effect == Effect::Changed).all(|w| w.upid.is_none() || w.ended.is_some())
        })
    }

    fn lines_where(&self, effect: Effect) -> Vec<String> {
        self.with(|writes| {
            writes
                .iter()
                .filter(|w| w.effect == effect)
                .map(|w| match (&w.upid, &w.ended) {
                    (None, _) => w.call.clone(),
                    (Some(u), None) => format!("{} (task {u} started)", w.call),
                    (Some(u), Some(s)) if s == "OK" => format!("{} (task {u} ended OK)", w.call),
                    (Some(u), Some(s)) => format!("{} (task {u} ended: {s})", w.call),
                })
                .collect()
        })
    }

    /// A copy taken without waiting for the lock, for the panic report (`protocol`), which runs
    /// on the panicking thread before any unwinding: a panic while this thread held the lock
    /// (nothing in `with`'s closures can panic) would otherwise deadlock; then it reports none.
    pub fn snapshot(&self) -> WriteJournal {
        let writes = match self.0.try_lock() {
            Ok(guard) => guard.clone(),
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner().clone(),
            Err(std::sync::TryLockError::WouldBlock) => Vec::new(),
        };
        let retries = self.1.try_lock().map(|r| r.clone()).unwrap_or_default();
        WriteJournal(Arc::new(Mutex::new(writes)), Arc::new(Mutex::new(retries)))
    }

    /// A request sent again after a transient refusal, or a lost answer reconciled
    /// (`pve::transient`, docs/pve-semantics.md §55): one line each, for the result's `retries`.
    pub fn retried(&self, line: String) {
        self.1.lock().unwrap_or_else(|p| p.into_inner()).push(line);
    }

    /// The lines `retried` recorded, in order.
    pub fn retries(&self) -> Vec<String> {
        self.1.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether the task `upid` ended having changed nothing (`settle` found its footprint as before).
    pub fn was_refused(&self, upid: &str) -> bool {
        self.with(|writes| writes.iter().any(|w| w.upid.as_deref() == Some(upid) && w.effect == Effect::Refused))
    }

    fn with<T>(&self, f: impl FnOnce(&mut Vec<AcceptedWrite>) -> T) -> T {
        // A poisoned lock only means a panic elsewhere; the list itself is still whole.
        let mut guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_write_undone_by_the_run_is_neither_a_change_nor_a_refusal() {
        let journal = WriteJournal::default();
        let (clone, stop) = ("UPID:pve1:1:1:1:qmclone:9000:root@pam:", "UPID:pve1:2:2:2:qmstop:100:root@pam:");
        journal.accepted("POST", "/nodes/pve1/qemu/100/status/stop", &[], &json!(stop));
        journal.changed_nothing(stop);
        let mark = journal.mark();
        journal.accepted("POST", "/nodes/pve1/qemu/9000/clone", &["newid"], &json!(clone));
        journal.accepted("DELETE", "/nodes/pve1/qemu/101", &[], &json!(null));
        journal.made_nothing_since(mark);
        assert!(!journal.changed());
        assert_eq!(journal.lines(), Vec::<String>::new());
        assert_eq!(journal.refused_lines(), [format!("POST /nodes/pve1/qemu/100/status/stop (task {stop} started)")]);
        // a later write of the same run is a change again
        journal.accepted("PUT", "/nodes/pve1/qemu/101/config", &["cores"], &json!(null));
        assert!(journal.changed());
        assert_eq!(journal.lines(), ["PUT /nodes/pve1/qemu/101/config (cores)"]);
    }
}
