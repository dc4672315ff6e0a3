//! The privileges a write needs, checked in PVE's order with the one check of a value PVE weighs among them: an `import-from` source's format (Qemu.pm `$check_storage_access`, docs/pve-semantics.md §63.3).

use module_utils::pve::config::VmConfig;
use module_utils::pve::permissions;
use module_utils::pve::request::Form;
use module_utils::Result;

use super::{described, needs, option_of, Checks};
use crate::params::Params;
use crate::plan::Write;

impl Checks<'_> {
    /// The privileges of `write` (`needs`), an import source's format among them where Qemu.pm
    /// `$check_storage_access` weighs it (§63.3): a create checks storage access after its own
    /// checks and before its options' privileges, an update after those.
    pub(super) fn require(&self, write: &Write, before: Option<&VmConfig>, vmid: u64, p: &Params) -> Result<()> {
        let request = described(write, vmid);
        let sources = |vmid, form, default| {
            let it = (request.as_str(), &option_of as &dyn Fn(&str) -> String);
            self.preflight.import_sources(&self.privileges, vmid, form, default, it)
        };
        if let Write::Create { form, .. } = write {
            // create_vm's own checks come first (`storage`, `VM.Allocate`), then `$check_storage_access`
            let head = permissions::create(vmid, p.pool.as_deref(), p.storage.as_deref(), false, &Form::new());
            self.privileges.require_for(&head, &request)?;
            sources(vmid, form, p.storage.as_deref())?;
        }
        self.privileges.require_for(&needs(write, before, vmid, p), &request)?;
        match write {
            Write::Config { vm, body, .. } => sources(vm.vmid, body, None),
            _ => Ok(()),
        }
    }
}
