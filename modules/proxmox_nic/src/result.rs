//! proxmox_nic's result: the task's `Outcome` from the plan and the NIC as it is after it (read back, or predicted in check mode).

use module_utils::ansible::diff::Diff;
use module_utils::protocol::{Context, Outcome};
use module_utils::pve::propstring::{PropertyString, NET};
use module_utils::pve::resources::VmResource;
use serde_json::{json, Value};

use crate::params::{Params, State};
use crate::plan::{Action, Plan};

/// The result of the task: the plan's change, and the NIC as it is after it (`after`, `pending`:
/// read back, or predicted in check mode).
pub fn outcome(
    ctx: &mut Context,
    vm: &VmResource,
    params: &Params,
    plan: &Plan,
    after: Option<String>,
    pending: bool,
) -> Outcome {
    let iface = params.interface.as_str();
    let changed = plan.action != Action::None;
    let diff = Diff::text(
        &line(iface, plan.before.as_deref()),
        &line(iface, after.as_deref()),
        &format!("VM {} {iface} (before)", vm.vmid),
        &format!("VM {} {iface} (after)", vm.vmid),
    );
    if pending {
        ctx.warn(format!(
            "the change to {iface} of VM {} is pending: Proxmox VE applies it when the VM is next started (it could not be hot-plugged)",
            vm.vmid
        ));
    }
    let msg = match (&plan.action, params.state) {
        (Action::Set(_), _) => format!("Nic {iface} updated on VM with vmid {}", vm.vmid),
        (Action::Delete, _) => format!("Nic {iface} deleted on VM with vmid {}", vm.vmid),
        (Action::None, State::Present) if pending => format!(
            "Nic {iface} on VM with vmid {} is as the task asks, but Proxmox VE has not applied it: the change is pending until the VM is next started",
            vm.vmid
        ),
        (Action::None, State::Present) => format!("Nic {iface} unchanged on VM with vmid {}", vm.vmid),
        (Action::None, State::Absent) => format!("Nic {iface} does not exist on VM with vmid {}", vm.vmid),
    };
    let mac = after
        .as_deref()
        .and_then(|a| PropertyString::parse_lenient(&NET, a).ok())
        .and_then(|n| n.get("macaddr").map(str::to_string));
    Outcome::new(changed, msg)
        .with("vmid", vm.vmid)
        .with("interface", iface)
        .with("mac", mac.map(Value::String).unwrap_or(Value::Null))
        .with("config", after.map(Value::String).unwrap_or(Value::Null))
        // the one type of `pending` in every module: the keys that wait (docs/common.rs)
        .with("pending", if pending { json!([iface]) } else { json!([]) })
        .with("reboot_required", pending)
        .with_diff(Some(diff))
}

fn line(iface: &str, value: Option<&str>) -> String {
    value.map(|v| format!("{iface}: {v}\n")).unwrap_or_default()
}
