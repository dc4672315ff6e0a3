//! proxmox_nic's checks before its write, in check and real runs alike: the privileges it needs, PVE's API schema on it, the VM's lock, the bridge.

use module_utils::pve::client::Api;
use module_utils::pve::config::VmConfig;
use module_utils::pve::permissions::{self, Privileges};
use module_utils::pve::request::describe;
use module_utils::pve::resources::{node_bridges, require_bridge, VmResource};
use module_utils::pve::state::{self, Facts, Op};
use module_utils::{Error, Result};

use crate::apply;
use crate::params::Params;
use crate::plan::{Action, Plan};

/// What must hold before the write, in check and real runs alike (so both fail with the same
/// message, and nothing is written): the privileges it needs (qemu-server `update_vm_api`:
/// one `VM.Config.*` on the VM, `VM.Config.Network`, `SDN.Use` on the bridge), PVE's API schema
/// on the write as it will be sent (through the client, which then sends it without a second
/// check), then the VM's lock (docs/pve-semantics.md §27, §28, §33).
pub fn guard(
    api: &dyn Api,
    privileges: &Privileges,
    vm: &VmResource,
    config: &VmConfig,
    iface: &str,
    action: &Action,
) -> Result<()> {
    let Some((method, path, body)) = apply::write(vm, config, iface, action) else { return Ok(()) };
    let (set, delete) = match action {
        Action::Delete => (Vec::new(), vec![iface.to_string()]),
        _ => (body.iter().filter(|(k, _)| k == iface).cloned().collect(), Vec::new()),
    };
    let request = describe(method, &path, &body);
    privileges.require_for(&permissions::update(vm.vmid, &config.effective(), &set, &delete), &request)?;
    api.check_write(method, &path, &body)?;
    // the VM's state (its lock) as update_vm_api checks it, inside the handler (pve::state)
    let facts = Facts { vmid: vm.vmid, config, running: vm.status == "running", skiplock: false };
    match state::refusal(Op::Config { deletes: &delete, force: false }, &facts) {
        Some(words) => Err(Error::failed(format!("{}: {words}", apply::context(vm.vmid, iface, action)))),
        None => Ok(()),
    }
}

/// A bridge the node lacks: refused before the write, and also when an earlier run left the NIC
/// pending on it (check mode alike: the node's bridges are only read, after the privileges: a
/// user who may not change the VM may not see its bridges either). `bridges`: the node's, read
/// at most once per task.
pub fn bridge(
    api: &dyn Api,
    bridges: &mut Option<Vec<String>>,
    vm: &VmResource,
    params: &Params,
    plan: &Plan,
) -> Result<()> {
    if let (Some(bridge), true) = (&params.bridge, matches!(plan.action, Action::Set(_)) || plan.pending) {
        if bridges.is_none() {
            *bridges = Some(node_bridges(api, &vm.node)?);
        }
        require_bridge(bridges.as_deref().unwrap_or_default(), bridge, &vm.node, "bridge")?;
    }
    Ok(())
}
