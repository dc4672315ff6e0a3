//! What proxmox_kvm checks after PVE's own checks of a create or clone: that this user may read the new VM back, as the task does after its write.

use module_utils::pve::permissions;
use module_utils::pve::request::{describe, ApiPath, Form, Method};
use module_utils::Result;

use super::{described, value, Checks};
use crate::plan::Write;

impl Checks<'_> {
    /// A create or clone reads the new VM's config back once PVE made it (the prediction compared
    /// with what PVE stored, docs/pve-semantics.md §46, and the result built from it), which needs
    /// `VM.Audit` on the new VM or on the pool it joins (`permissions::read_config`). A user
    /// without it would get the VM made and a failed task; refused before the write instead, in
    /// check and real runs alike, with the message the read would get.
    pub(super) fn read_back(&self, write: &Write, vmid: u64) -> Result<()> {
        let (node, form) = match write {
            Write::Create { node, form, .. } => (node, form),
            Write::Clone { node, body, .. } => (node, body),
            _ => return Ok(()),
        };
        let vmid_s = vmid.to_string();
        let read = describe(Method::Get, &ApiPath::new(["nodes", node, "qemu", &vmid_s, "pending"]), &Form::new());
        let request =
            format!("{read}, the read-back of VM {vmid} after {}; nothing was changed", described(write, vmid));
        self.privileges.require_for(&permissions::read_config(vmid, value(form, "pool")), &request)
    }
}
