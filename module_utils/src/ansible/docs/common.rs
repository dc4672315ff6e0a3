//! What every module's documentation holds alike: `seealso` and the keys of a failed task's result.

use crate::ansible::spec::{ModuleSpec, Support};

/// The collection's other modules, the saved-plan docs and community.proxmox's module of the
/// same name.
pub(super) fn seealso(name: &str) -> String {
    let mut out = String::from("seealso:\n");
    for other in MODULES.iter().filter(|m| **m != name) {
        out.push_str(&format!("  - module: ferro.proxmox.{other}\n"));
    }
    out.push_str(&format!("  - module: community.proxmox.{name}\n    description: \"The module this one re-implements with the same options; README.md, Migrating from community.proxmox, lists every difference.\"\n"));
    out.push_str("  - name: \"Saved plans: the real run does what --check showed, or nothing\"\n    description: \"Set C(ferro_proxmox_plan) to save the check run's plan and apply exactly it (docs/saved-plans.md in the collection).\"\n    link: \"https://github.com/ferro-proxmox/ferro.proxmox/blob/main/docs/saved-plans.md\"\n");
    out
}

/// The collection's modules, for `seealso`.
const MODULES: [&str; 4] = ["proxmox_kvm", "proxmox_disk", "proxmox_nic", "proxmox_vm_info"];

/// What a failed task returns besides `msg`, in every module (protocol.rs `failure`); a module
/// that writes (diff mode applies) also returns what Proxmox VE applied or refused.
const FAILURE_RETURNS: &str = r#"status_code:
  description: The HTTP status of the Proxmox VE API answer that failed the task (for example V(403) for a missing privilege).
  returned: failure, when an API call was answered with an error
  type: int
  sample: 403
upid:
  description: The Proxmox VE task (UPID) that failed, or was still running when the task timed out.
  returned: failure, when a Proxmox VE task failed or timed out
  type: str
  sample: "UPID:pve1:0000A1B2:00C3D4E5:66F0A1B2:qmstart:100:ansible@pve!automation:"
exitstatus:
  description: The exit status of the failed Proxmox VE task, as the task list shows it.
  returned: failure, when a Proxmox VE task failed
  type: str
  sample: "VM is locked (backup)"
task_log:
  description: The last lines of the failed Proxmox VE task's log.
  returned: failure, when a Proxmox VE task failed
  type: list
  elements: str
  sample: ["TASK ERROR: VM is locked (backup)"]
retries:
  description: The requests sent again after a transient refusal of a busy cluster (a lock Proxmox VE could not take in time before any change, a connection refused before the request was sent, a proxy hop that could not connect), and the writes whose answer was lost, reconciled from the task list or the VM before anything was sent again; one line each. README.md, Transient errors.
  returned: success and failure, when a request was tried again or an answer reconciled
  type: list
  elements: str
  sample: ["task UPID:pve1:... failed before any change: cfs-lock 'storage-nas' error: got lock request timeout; sent again after 250 ms"]
"#;
/// `saved_plan`, which the action plugin adds in a real run that applies a saved plan
/// (plugins/plugin_utils/plan_run.py `finish_apply`), in every module.
const SAVED_PLAN_RETURN: &str = r#"saved_plan:
  description: How the task's real run went against the saved plan of the check run (the variable C(ferro_proxmox_plan) set; docs/saved-plans.md in the collection).
  returned: success and failure, in a real run that applies a saved plan
  type: dict
  contains:
    planned_changed:
      description: The C(changed) the check run planned for this task.
      type: bool
    bound:
      description: The values the plan knew only after apply (shown as C((known after apply)) in the check run), as this run bound them, by result key.
      type: dict
      sample: {"mac": "BC:24:11:3A:5C:0F"}
    preview:
      description: True when the task has C(check_mode) set, so the real run previewed it again and applied nothing.
      returned: when the task previews
      type: bool
    outside_plan:
      description: "True when the check run wrote this task (C(check_mode: false)): the plan holds its arguments only, which this run compares."
      returned: when the task is outside the plan
      type: bool
"#;
const WRITE_FAILURE_RETURNS: &str = r#"accepted_writes:
  description: The writes Proxmox VE applied (or accepted, for a task still running) before the task failed; the task is then C(changed). README.md, What changed means when a task fails.
  returned: failure, after Proxmox VE applied a write
  type: list
  elements: str
  sample: ["POST /nodes/pve1/qemu/100/status/stop"]
refused_writes:
  description: The Proxmox VE tasks that failed before their effect (read back unchanged), which changed nothing.
  returned: failure, when a Proxmox VE task was refused before its effect
  type: list
  elements: str
  sample: ["PUT /nodes/pve1/qemu/100/resize (task UPID:pve1:... ended: VM is locked (backup))"]
"#;

/// `pending`, one type in every module that writes (a list of config keys), documented here once.
const PENDING_RETURN: &str = r#"pending:
  description:
    - The config keys with a change that waits for the next start of the VM (Proxmox VE's pending config); empty when nothing waits.
    - M(ferro.proxmox.proxmox_kvm) lists every such key of the VM; M(ferro.proxmox.proxmox_disk) the task's drive key and M(ferro.proxmox.proxmox_nic) the task's NIC key, when theirs waits.
    - The same type in every module (proxmox_disk and proxmox_nic returned a boolean before; a list is true in a condition when it is not empty).
  returned: success
  type: list
  elements: str
  sample: ["cores"]
"#;

/// The module's RETURN: its own keys (with `pending` for a module that writes), then those of a failure.
pub(super) fn returns(spec: &ModuleSpec) -> String {
    let writes = spec.diff_mode != Support::NotApplicable;
    let (pending, failed) = if writes { (PENDING_RETURN, WRITE_FAILURE_RETURNS) } else { ("", "") };
    format!("{}{pending}{SAVED_PLAN_RETURN}{FAILURE_RETURNS}{failed}", spec.returns.trim_start_matches('\n'))
}
