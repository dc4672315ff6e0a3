//! Names under concurrency: after this task made a VM by name alone, which VM holds the name when overlapping runs made several.
//!
//! Proxmox VE has no unique names and no cluster-wide primitive that makes "name → one VM"
//! atomic; a create or clone shows no name until its task ends (docs/pve-semantics.md §30). So
//! a task that made a VM by `name` without a vmid looks again once its own task ended: the
//! lowest vmid of the QEMU VMs of that name holds it, and a task whose VM is not that one
//! removes the VM it made itself (no other) and converges on the holder.

use module_utils::check::world::World;
use module_utils::pve::inflight;
use module_utils::pve::resources::VmResource;
use module_utils::Result;

use super::Apply;
use crate::plan::Write;

/// The VMs, once those below vmid `below` (the VM a create or clone by name alone made, or in a
/// check run the next free vmid it would get) that are in flight and may bear `name` have ended,
/// each waited for within the world's wait (the task's `timeout`). A lock without a visible task
/// is not waited for here: it may be stale, and every create by name would then wait out its
/// timeout; that, and a VM that does not end, is an error the caller reports as a warning.
pub(crate) fn settled_below(world: &World, name: &str, below: u64) -> Result<Vec<VmResource>> {
    let lower = |v: &VmResource| v.vmid < below && inflight::may_be_named(v, name);
    world.in_flight().without_polling().settle(&lower, &|| world.vms())
}

impl Apply<'_> {
    /// `ours`, named `name`, was just made by this run (the writes from journal mark `mark` on).
    /// Wait (at most `timeout`) for the VMs of lower vmid whose create or clone still runs and
    /// that may bear the name; then, when one of lower vmid has the name, remove `ours`, count
    /// its writes as no change (a warning says what happened) and return that holder. A VM in
    /// flight that does not end in time, or without a visible task, leaves `ours` in place, with
    /// a warning naming it.
    pub(crate) fn yield_name(
        &mut self,
        world: &World,
        ours: &VmResource,
        name: &str,
        mark: usize,
    ) -> Result<Option<VmResource>> {
        let vms = match settled_below(world, name, ours.vmid) {
            Ok(vms) => vms,
            Err(e) => {
                self.ctx.warn(format!(
                    "VM {name} with vmid {} was made, but whether an overlapping run made another VM of that name is not known: {e}",
                    ours.vmid
                ));
                return Ok(None);
            }
        };
        let mut holder = None;
        for v in vms.iter().filter(|v| v.kind == "qemu" && v.vmid < ours.vmid) {
            let named = match v.name.as_deref() {
                Some(n) if n == name => true,
                // the name /cluster/resources shows comes from pvestatd and may lag the config (§30)
                Some(n) if n != format!("VM {}", v.vmid) => false,
                // (a VM removed in between has no name to hold)
                _ => world.config(v).is_ok_and(|c| c.get("name") == Some(name)),
            };
            if named {
                holder = Some(v.clone());
                break;
            }
        }
        let Some(holder) = holder else { return Ok(None) };
        let removal = Write::Remove { vm: ours.clone(), stop: None, query: Vec::new() };
        self.run(&removal).map_err(|e| {
            e.context(&format!(
                "VM {} also has the name {name}; removing VM {}, which this task made,",
                holder.vmid, ours.vmid
            ))
        })?;
        if let Some(journal) = self.api.journal() {
            journal.made_nothing_since(mark);
        }
        self.ctx.warn(format!(
            "this task made VM {} named {name} and removed it again: VM {} has that name too, made by an overlapping run, and the lowest vmid keeps the name (README: Names under concurrency)",
            ours.vmid, holder.vmid
        ));
        Ok(Some(holder))
    }
}
