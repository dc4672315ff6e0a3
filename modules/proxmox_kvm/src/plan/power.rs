//! A VM's power state and the one table of power transitions: from the state a VM is in and the
//! state a task asks for, the one call PVE gets (or none, or a refusal). Pure.

use module_utils::pve::config::VmConfig;

use module_utils::pve::request::{form, Form};

use crate::params::State;

/// The power state of a VM as the module reasons about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Power {
    Running,
    Stopped,
    Paused,
    Hibernated,
}

impl Power {
    pub const ALL: [Power; 4] = [Power::Running, Power::Stopped, Power::Paused, Power::Hibernated];

    pub fn as_str(self) -> &'static str {
        match self {
            Power::Running => "running",
            Power::Stopped => "stopped",
            Power::Paused => "paused",
            Power::Hibernated => "hibernated",
        }
    }

    /// What `/cluster/resources` shows for it (a paused VM runs; a hibernated one is stopped).
    pub fn resource_status(self) -> &'static str {
        match self {
            Power::Running | Power::Paused => "running",
            Power::Stopped | Power::Hibernated => "stopped",
        }
    }

    /// Whether QEMU runs (a paused VM's process is there, frozen).
    pub fn is_running(self) -> bool {
        matches!(self, Power::Running | Power::Paused)
    }

    /// From `status/current` (`status`, `qmpstatus`, `lock`).
    pub fn from_status(status: &str, qmpstatus: Option<&str>, lock: Option<&str>) -> Power {
        match (status, qmpstatus, lock) {
            ("running", Some("paused"), _) => Power::Paused,
            ("running", _, _) => Power::Running,
            (_, _, Some("suspended")) => Power::Hibernated,
            _ => Power::Stopped,
        }
    }
}

/// The power states a task can ask for (`state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    Started,
    Stopped,
    Restarted,
    Paused,
    Hibernated,
}

impl Wanted {
    pub const ALL: [Wanted; 5] =
        [Wanted::Started, Wanted::Stopped, Wanted::Restarted, Wanted::Paused, Wanted::Hibernated];

    /// The power state a task's `state` asks for, if it asks for one.
    pub fn of(state: State) -> Option<Wanted> {
        Some(match state {
            State::Started => Wanted::Started,
            State::Stopped => Wanted::Stopped,
            State::Restarted => Wanted::Restarted,
            State::Paused => Wanted::Paused,
            State::Hibernated => Wanted::Hibernated,
            State::Present | State::Absent | State::Current | State::Template => return None,
        })
    }
}

/// One power call to PVE, `POST .../status/<verb>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerCall {
    Start,
    Resume,
    /// An ACPI (or guest agent) shutdown; `force_stop`: stop hard when the timeout passes.
    Shutdown {
        force_stop: bool,
    },
    Reboot,
    Reset,
    /// `suspend`: QEMU paused, kept in memory.
    Pause,
    /// `suspend` with `todisk`: the state saved to a volume, QEMU gone (`lock: suspended`).
    Hibernate,
}

impl PowerCall {
    /// Whether the call changes the config, so the result must read it again; else the config
    /// read before the call is the result. It changes with pending changes (a start or stop
    /// applies them, §16), a hibernation (RunState.pm `vm_suspend` writes `lock`, `vmstate`,
    /// `runningmachine`), and the start or resume of a hibernated VM, which removes them.
    pub fn changes_config(self, config: &VmConfig) -> bool {
        let hibernated = ["lock", "vmstate"].iter().any(|k| config.current.contains_key(*k));
        !config.pending.is_empty() || !config.pending_delete.is_empty() || hibernated || self == PowerCall::Hibernate
    }

    /// The last segment of the call's path.
    pub fn verb(self) -> &'static str {
        match self {
            PowerCall::Start => "start",
            PowerCall::Resume => "resume",
            PowerCall::Shutdown { .. } => "shutdown",
            PowerCall::Reboot => "reboot",
            PowerCall::Reset => "reset",
            PowerCall::Pause | PowerCall::Hibernate => "suspend",
        }
    }

    /// The call's parameters; `timeout`: the task's, in seconds.
    pub fn body(self, timeout: u64) -> Form {
        let timeout = timeout.to_string();
        match self {
            PowerCall::Shutdown { force_stop } => {
                form([("forceStop", if force_stop { "1" } else { "0" }), ("timeout", timeout.as_str())])
            }
            PowerCall::Reboot => form([("timeout", timeout.as_str())]),
            PowerCall::Hibernate => form([("todisk", "1")]),
            PowerCall::Start | PowerCall::Resume | PowerCall::Reset | PowerCall::Pause => Vec::new(),
        }
    }

    /// Seconds to wait for the task beyond the task's timeout: a shutdown (or the one inside a
    /// reboot) may take the whole timeout before PVE gives up or stops hard.
    pub fn extra_wait(self) -> u64 {
        match self {
            PowerCall::Shutdown { .. } | PowerCall::Reboot => 30,
            _ => 0,
        }
    }

    /// What the module says when the call succeeded; it follows "VM <vmid> ".
    pub fn done(self) -> &'static str {
        match self {
            PowerCall::Start => "started",
            PowerCall::Resume => "resumed",
            // upstream's words (its integration test asserts them); the shutdown is waited for.
            PowerCall::Shutdown { .. } => "is shutting down",
            PowerCall::Reboot | PowerCall::Reset => "is restarted",
            PowerCall::Pause => "paused",
            PowerCall::Hibernate => "hibernated",
        }
    }

    /// What failed, when the call or its task fails.
    pub fn failure(self, vmid: u64) -> String {
        let what = match self {
            PowerCall::Start | PowerCall::Resume => "starting",
            PowerCall::Shutdown { .. } => "stopping",
            PowerCall::Reboot | PowerCall::Reset => "restarting",
            PowerCall::Pause | PowerCall::Hibernate => "suspending",
        };
        let mut text = format!("{what} of VM {vmid} failed");
        if self == (PowerCall::Shutdown { force_stop: false }) {
            text.push_str(" (with force: true it is stopped hard after the timeout)");
        }
        text
    }
}

/// What a power task does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// No call, `changed: false`; the text follows "VM <vmid> ".
    Nothing(&'static str),
    /// One call, and the power state the VM is in after it.
    Call(PowerCall, Power),
    /// The task fails before any call; the text follows "VM <vmid> ".
    Refuse(&'static str),
}

impl Transition {
    /// The task's message.
    pub fn message(self, vmid: u64) -> String {
        match self {
            Transition::Nothing(text) | Transition::Refuse(text) => format!("VM {vmid} {text}"),
            Transition::Call(call, _) => format!("VM {vmid} {}", call.done()),
        }
    }
}

/// A shutdown or reboot of a paused VM, in PVE's words (Qemu.pm `vm_shutdown`, `vm_reboot`).
const PAUSED_SHUTDOWN: &str = "is paused: VM is paused - cannot shutdown (with force: true it is stopped, or reset)";

/// The transition from `current` to `wanted`; `force` is the task's `force`. The table test in
/// tests.rs walks every combination; docs/pve-semantics.md §16 has what PVE does with each call.
pub fn transition(current: Power, wanted: Wanted, force: bool) -> Transition {
    use Power::*;
    match (wanted, current) {
        (Wanted::Started, Running) => Transition::Nothing("is already running"),
        (Wanted::Started, Paused) => Transition::Call(PowerCall::Resume, Running),
        (Wanted::Started, Stopped | Hibernated) => Transition::Call(PowerCall::Start, Running),
        (Wanted::Stopped, Stopped | Hibernated) => Transition::Nothing("is already stopped"),
        // Qemu.pm vm_shutdown and vm_reboot refuse a paused VM before their task, unless forceStop
        // (a stop instead) or a reset (docs/pve-semantics.md §16, §33)
        (Wanted::Stopped, Paused) if !force => Transition::Refuse(PAUSED_SHUTDOWN),
        (Wanted::Stopped, Running | Paused) => Transition::Call(PowerCall::Shutdown { force_stop: force }, Stopped),
        (Wanted::Restarted, Stopped | Hibernated) => Transition::Nothing("is not running"),
        (Wanted::Restarted, Running | Paused) if force => Transition::Call(PowerCall::Reset, Running),
        (Wanted::Restarted, Paused) => Transition::Refuse(PAUSED_SHUTDOWN),
        (Wanted::Restarted, Running) => Transition::Call(PowerCall::Reboot, Running),
        (Wanted::Paused, Paused) => Transition::Nothing("is already paused"),
        (Wanted::Paused, Running) => Transition::Call(PowerCall::Pause, Paused),
        (Wanted::Paused, Stopped | Hibernated) => Transition::Refuse("is not running, so it cannot be paused"),
        (Wanted::Hibernated, Hibernated) => Transition::Nothing("is already hibernated"),
        (Wanted::Hibernated, Running | Paused) => Transition::Call(PowerCall::Hibernate, Hibernated),
        (Wanted::Hibernated, Stopped) => Transition::Refuse("is not running, so it cannot be hibernated"),
    }
}
