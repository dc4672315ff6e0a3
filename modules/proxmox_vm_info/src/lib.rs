//! proxmox_vm_info: list VMs with their config, parsed NICs and disks, and guest network.
//!
//! `main` wires the common shape: `params` (the validated task) → the cluster read (through
//! `check::world`, so a check run sees what its earlier tasks predicted) → `plan` (pure: the
//! selection and the return shape) → `apply` (its further reads: node check, node lists,
//! configs, agent). Read-only: there is nothing to record or write, so check mode is a normal run.

mod apply;
mod params;
mod plan;
mod spec;

use std::collections::BTreeMap;

use module_utils::check::world::World;
use module_utils::connect::connect;
use module_utils::protocol::{Context, Outcome};
use module_utils::Result;
use serde_json::{Map, Value};

pub use params::{ConfigMode, Params};
pub use plan::{merge_entry, select};
pub use spec::SPEC;

/// The module body.
pub fn main(ctx: &mut Context) -> Result<Outcome> {
    let params = Params::from_spec(&ctx.params)?;
    if let Some(id) = params.vmid {
        ctx.identify("vmid", id);
    }
    let api = connect(ctx)?;
    let world = World::new(&api, ctx.predictions.clone()).saving(ctx.saved.clone());
    let vms = read(&world, &params)?;
    Ok(Outcome::new(false, "").with("proxmox_vms", Value::Array(vms)))
}

/// All reads of one task, in the fewest calls.
pub fn read(world: &World, params: &Params) -> Result<Vec<Value>> {
    let api = world.api();
    if let Some(node) = &params.node {
        apply::require_node(api, node)?;
    }
    // A VM the task selects by vmid or name while its create or clone runs: wait for it (§30).
    let filtered = params.vmid.is_some() || params.name.is_some();
    let all = world.vms_for(&|v| filtered && !select(std::slice::from_ref(v), params).is_empty())?;
    let selected = select(&all, params);
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
        let mut entry = merge_entry(vm, node_entry);
        if params.config != ConfigMode::None {
            let config = match world.predicted_config(vm.vmid) {
                Some(predicted) => plan::predicted_config_view(&predicted, params.config),
                None => apply::config(api, vm, params.config)?,
            };
            plan::add_config(&mut entry, &vm.kind, config);
        }
        if params.network {
            match apply::guest_network(api, vm) {
                Ok(net) => {
                    entry.insert("network".into(), net);
                }
                Err(why) => {
                    entry.insert("network_error".into(), Value::String(why));
                }
            }
        }
        out.push(Value::Object(entry));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
