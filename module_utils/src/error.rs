//! The one error type of ferro.proxmox: every fallible function in the workspace returns it.
//!
//! Variants are split by cause, because the cause decides what a caller may do next: an
//! `Args` error is the user's to fix, a `Transport` error on a read may be retried, an `Api`
//! or `TaskFailed` error means Proxmox said no. Only the protocol layer turns an `Error` into
//! output (see `protocol.rs`); nothing else prints.

use std::fmt;

/// Everything that can go wrong in a module run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The task's arguments are invalid; the message names the option (AnsibleModule wording).
    Args(String),
    /// Proxmox answered an HTTP error. `message` is PVE's text, per-parameter errors appended.
    Api { method: String, path: String, status: u16, message: String },
    /// The request did not get an answer (connection refused, reset, timeout, TLS).
    /// `may_have_applied` is true for writes whose request may have reached the server.
    Transport { method: String, path: String, detail: String, may_have_applied: bool },
    /// A Proxmox task (UPID) ended with an exit status other than `OK`/`WARNINGS: n`.
    /// `context` is what the module was doing (`Error::context`), empty when none: the variant
    /// is kept through it, so the result still carries `upid`, `exitstatus` and `task_log`.
    TaskFailed { upid: String, exitstatus: String, log_tail: Vec<String>, context: String },
    /// A Proxmox task was still running when the module's timeout ran out.
    TaskTimeout { upid: String, seconds: u64, context: String },
    /// A precondition of the module failed (VM missing, shrink requested, ...): the message is
    /// complete as it stands.
    Failed(String),
    /// A bug in ferro.proxmox: an answer we cannot interpret, a broken invariant.
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The longest argument error message.
pub const ARGS_MSG_MAX: usize = 1000;

impl Error {
    /// Shorthand for a module-level failure with a complete message.
    pub fn failed(msg: impl Into<String>) -> Self {
        Error::Failed(msg.into())
    }

    /// Shorthand for an argument error. The message is cut to `ARGS_MSG_MAX` characters: it
    /// names the option first, and a value it quotes must not make it unreadable (each site
    /// also quotes values through `clip`; this is the net under those).
    pub fn args(msg: impl Into<String>) -> Self {
        Error::Args(clip(&msg.into(), ARGS_MSG_MAX))
    }

    /// The HTTP status of an API error, if this is one.
    pub fn api_status(&self) -> Option<u16> {
        match self {
            Error::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Prefix the message with what the module was doing, keeping the variant.
    pub fn context(self, what: &str) -> Self {
        match self {
            Error::Failed(m) => Error::Failed(format!("{what}: {m}")),
            Error::Internal(m) => Error::Internal(format!("{what}: {m}")),
            Error::Api { method, path, status, message } => {
                Error::Api { method, path, status, message: format!("{what}: {message}") }
            }
            Error::TaskFailed { upid, exitstatus, log_tail, context } => {
                Error::TaskFailed { upid, exitstatus, log_tail, context: prefix(what, &context) }
            }
            Error::TaskTimeout { upid, seconds, context } => {
                Error::TaskTimeout { upid, seconds, context: prefix(what, &context) }
            }
            other => Error::Failed(format!("{what}: {other}")),
        }
    }
}

/// `text` cut to `max` characters (then `...`), so that a huge value cannot make a huge
/// message. Every message that quotes a task's value quotes it through this.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() > max {
        let mut q: String = text.chars().take(max).collect();
        q.push_str("...");
        q
    } else {
        text.to_string()
    }
}

fn prefix(what: &str, context: &str) -> String {
    if context.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {context}")
    }
}

fn write_context(f: &mut fmt::Formatter<'_>, context: &str) -> fmt::Result {
    if context.is_empty() {
        Ok(())
    } else {
        write!(f, "{context}: ")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Args(m) | Error::Failed(m) => f.write_str(m),
            Error::Api { method, path, status, message } => write!(f, "{message} (HTTP {status} on {method} {path})"),
            Error::Transport { method, path, detail, may_have_applied } => {
                write!(f, "{method} {path} failed: {detail}")?;
                if *may_have_applied {
                    f.write_str(" (the request may have reached Proxmox; it was not retried)")?;
                }
                Ok(())
            }
            Error::TaskFailed { upid, exitstatus, log_tail, context } => {
                write_context(f, context)?;
                write!(f, "task {upid} failed: {exitstatus}")?;
                if !log_tail.is_empty() {
                    write!(f, "; last lines of its log: {}", log_tail.join(" | "))?;
                }
                Ok(())
            }
            Error::TaskTimeout { upid, seconds, context } => {
                write_context(f, context)?;
                write!(f, "timed out after {seconds}s waiting for task {upid}; it may still be running on Proxmox")
            }
            Error::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_error_names_the_call_and_status() {
        let e = Error::Api {
            method: "PUT".into(),
            path: "/nodes/pve1/qemu/100/config".into(),
            status: 500,
            message: "VM is locked (backup)".into(),
        };
        assert_eq!(e.to_string(), "VM is locked (backup) (HTTP 500 on PUT /nodes/pve1/qemu/100/config)");
    }

    #[test]
    fn task_timeout_says_it_may_still_run() {
        let e = Error::TaskTimeout { upid: "UPID:pve1:x".into(), seconds: 30, context: String::new() };
        assert!(e.to_string().contains("UPID:pve1:x"));
        assert!(e.to_string().contains("may still be running"));
    }

    #[test]
    fn context_keeps_the_task_fields() {
        // Found by the e2e fault table: proxmox_kvm's failed start lost exitstatus and task_log.
        let e = Error::TaskFailed {
            upid: "UPID:pve1:x".into(),
            exitstatus: "start failed".into(),
            log_tail: vec!["line".into()],
            context: String::new(),
        }
        .context("starting of VM 150 failed")
        .context("outer");
        assert!(matches!(&e, Error::TaskFailed { exitstatus, .. } if exitstatus == "start failed"));
        assert_eq!(
            e.to_string(),
            "outer: starting of VM 150 failed: task UPID:pve1:x failed: start failed; last lines of its log: line"
        );
        let e =
            Error::TaskTimeout { upid: "UPID:pve1:x".into(), seconds: 3, context: String::new() }.context("resizing");
        assert!(matches!(&e, Error::TaskTimeout { .. }));
        assert!(e.to_string().starts_with("resizing: timed out after 3s waiting for task UPID:pve1:x"));
    }

    #[test]
    fn context_keeps_failed_variant() {
        let e = Error::failed("boom").context("reading VM 100");
        assert_eq!(e, Error::Failed("reading VM 100: boom".into()));
    }
}
