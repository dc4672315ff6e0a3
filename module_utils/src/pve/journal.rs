//! The writes Proxmox VE accepted during one run, kept so that a run that fails after a write still
//! reports the change: the client records into it, the protocol runner reads it.

use std::sync::{Arc, Mutex};

use serde_json::Value;

/// The writes Proxmox VE accepted during one run, in order: every non-GET call that got a success
/// answer (a config written, a task started), with what became of its task. Shared between the
/// client that records it and the protocol layer that reports it (a clone is the same journal).
#[derive(Debug, Clone, Default)]
pub struct WriteJournal(Arc<Mutex<Vec<AcceptedWrite>>>);

/// One accepted write: `PUT /nodes/pve1/qemu/100/config (net0)`, and its task if it started one.
#[derive(Debug, Clone, PartialEq)]
struct AcceptedWrite {
    /// Method, path and the names (never the values) of the parameters sent.
    call: String,
    upid: Option<String>,
    /// The task's exit status once it was seen to end.
    ended: Option<String>,
    /// The write's task ended without changing anything (`WriteJournal::changed_nothing`).
    void: bool,
}

impl WriteJournal {
    /// Record a write Proxmox answered with success. `answer` is its `data` (a UPID or null).
    pub fn accepted(&self, method: &str, path: &str, names: &[&str], answer: &Value) {
        let names: Vec<&str> = names.iter().copied().filter(|n| *n != "digest").collect();
        let call = if names.is_empty() {
            format!("{method} {path}")
        } else {
            format!("{method} {path} ({})", names.join(", "))
        };
        let upid = answer.as_str().filter(|s| s.starts_with("UPID:")).map(str::to_string);
        self.with(|writes| writes.push(AcceptedWrite { call, upid, ended: None, void: false }));
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
                w.void = true;
            }
        });
    }

    /// How many writes were accepted so far: a mark for `made_nothing_since`.
    pub fn mark(&self) -> usize {
        self.with(|writes| writes.len())
    }

    /// The writes accepted since `mark` left nothing behind: a VM this run made and removed
    /// again, because an overlapping run's VM holds its name (docs/pve-semantics.md §30).
    pub fn made_nothing_since(&self, mark: usize) {
        self.with(|writes| writes.iter_mut().skip(mark).for_each(|w| w.void = true));
    }

    /// Whether Proxmox accepted at least one write that may have changed something.
    pub fn changed(&self) -> bool {
        self.with(|writes| writes.iter().any(|w| !w.void))
    }

    /// The accepted writes, one line each: `POST /nodes/pve1/qemu/100/status/stop (task UPID:... ended OK)`.
    pub fn lines(&self) -> Vec<String> {
        self.with(|writes| {
            writes
                .iter()
                .filter(|w| !w.void)
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
        WriteJournal(Arc::new(Mutex::new(writes)))
    }

    fn with<T>(&self, f: impl FnOnce(&mut Vec<AcceptedWrite>) -> T) -> T {
        // A poisoned lock only means a panic elsewhere; the list itself is still whole.
        let mut guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
}
