//! proxmox_vm_info: list VMs with their config, parsed NICs and disks, and guest network.
//!
//! `main` wires the common shape: the start-up (`connect::Session`: `params`, the client) →
//! the cluster read (through `check::world`, so a check run sees what its earlier tasks
//! predicted) → `checks` (the node the task names, where no VM on it is selected) → `plan` (pure: the selection, the node lists it
//! needs) → `apply` (its further reads: node lists, configs, agent) → `result` (each entry in
//! the return shape). Read-only: there is nothing to record or write, so check mode is a normal
//! run.

mod apply;
mod checks;
mod params;
mod plan;
mod result;
mod spec;

use std::collections::BTreeMap;

use module_utils::check::world::World;
use module_utils::connect::Session;
use module_utils::protocol::{Context, Outcome};
use module_utils::Result;
use serde_json::{Map, Value};

pub use params::{ConfigMode, Params};
pub use plan::select;
pub use result::merge_entry;
pub use spec::SPEC;

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let session = Session::start(ctx, |args, _| Params::from_spec(args))?;
    let vms = read(&session.world(), &session.params)?;
    Ok(result::outcome(vms))
}

/// All reads of one task, in the fewest calls, each VM's entry shaped as it is read.
pub fn read(world: &World, params: &Params) -> Result<Vec<Value>> {
    let api = world.api();
    // A VM the task selects by vmid or name while its create or clone runs: wait for it (§30).
    let filtered = params.vmid.is_some() || params.name.is_some();
    let all = world.vms_for(&|v| filtered && !select(std::slice::from_ref(v), params).is_empty())?;
    let selected = select(&all, params);
    // A selected VM is on the node the task names, so the cluster has that node: `GET /nodes` only
    // where nothing is selected (docs/pve-semantics.md §66).
    if selected.is_empty() {
        checks::before_reading(api, params)?;
    }
    world.identities(&selected)?;

    // One list read per (node, kind) that has selected VMs, for the node-list fields.
    let mut node_lists: BTreeMap<(String, String), Map<String, Value>> = BTreeMap::new();
    for (node, kind) in plan::node_lists_to_read(&selected, World::exists_only_as_prediction) {
        let list = apply::node_list(api, &node, &kind)?;
        node_lists.insert((node, kind), plan::by_vmid(&list));
    }

    let mut out = Vec::with_capacity(selected.len());
    for vm in selected {
        let node_entry = node_lists
            .get(&(vm.node.clone(), vm.kind.clone()))
            .and_then(|m| m.get(&vm.vmid.to_string()))
            .and_then(Value::as_object);
        let config = match params.config {
            ConfigMode::None => None,
            mode => Some(match world.predicted_config(vm.vmid) {
                Some(predicted) => result::predicted_config_view(&predicted, mode),
                None => apply::config(api, vm, mode)?,
            }),
        };
        let network = params.network.then(|| apply::guest_network(api, vm));
        out.push(result::entry(vm, node_entry, config, network));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
