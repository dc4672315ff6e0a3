//! What proxmox_kvm checks last before a write: one cloud-init drive, a restore's hints, the storages the archive's own config names for its drives (`pve::restore::hint_storages`, docs/pve-semantics.md §64), and the read-back of a new VM (read_back.rs).

use std::collections::BTreeMap;

use module_utils::pve::config::VmConfig;
use module_utils::pve::permissions::Need;
use module_utils::pve::restore;
use module_utils::{Error, Result};

use super::volumes::one_cloudinit;
use super::{described, value, Checks};
use crate::plan::Write;

impl Checks<'_> {
    /// The checks PVE makes last: one cloud-init drive (`one_cloudinit`), then, for a restore,
    /// the restore task's `$parse_backup_hints`: each storage the restore allocates on holds
    /// `images` and grants `Datastore.AllocateSpace`. The archive's config is read
    /// (`extractconfig`) only for a restore whose request names no `storage`.
    /// Then this user's right to read a new VM back (`read_back`), which the task needs after PVE.
    pub(super) fn last(&self, write: &Write, before: Option<&VmConfig>, vmid: u64) -> Result<()> {
        self.scsi_identity(write, before)?;
        one_cloudinit(write, before, vmid)?;
        self.restore_hints(write, vmid)?;
        self.read_back(write, vmid)
    }

    fn restore_hints(&self, write: &Write, vmid: u64) -> Result<()> {
        let Write::Create { node, form, .. } = write else { return Ok(()) };
        let Some(archive) = value(form, "archive").filter(|a| *a != "-") else { return Ok(()) };
        // a `storage` in the request takes every drive, and create_vm checks it first (R-any-133)
        if value(form, "storage").is_some() {
            return Ok(());
        }
        let config = match restore::extracted_config(self.api, node, archive) {
            Ok(config) => config,
            // extractconfig wants VM.Backup on the backup's VM, which a restore of one's own VM does not; a
            // backup PVE cannot read fails the restore in its own words
            Err(e) => {
                let why = format!("reading its config failed ({e})");
                let refusal = self.unread_hints_refusal()?;
                self.privileges.not_known(format!(
                    "the storages the restore of '{archive}' allocates on are not known: {why}; PVE may refuse it: {refusal}"
                ));
                return Ok(());
            }
        };
        let hints = restore::hint_storages(&config, None);
        let storages = self.preflight.storages()?;
        for sid in hints {
            if storages.iter().any(|s| s.storage == sid && !s.content.contains("images")) {
                return Err(Error::failed(format!("Content type 'images' is not available on storage '{sid}'")));
            }
            let need =
                [Need::Privs { path: format!("/storage/{sid}"), privs: vec!["Datastore.AllocateSpace"], any: false }];
            self.privileges.require_for(&need, &described(write, vmid))?;
        }
        Ok(())
    }

    /// The words a restore whose hints could not be read may be refused in (`$parse_backup_hints`'
    /// `$check_storage`, §52): `Datastore.AllocateSpace` on a hinted storage when this user lacks it
    /// on one of the storages holding `images`, else the content check, which comes first.
    fn unread_hints_refusal(&self) -> Result<String> {
        let storages = self.preflight.storages()?;
        let allocates = |sid: &str| {
            self.privileges.held(&format!("/storage/{sid}")).is_ok_and(|h| h.contains("Datastore.AllocateSpace"))
        };
        Ok(if storages.iter().filter(|s| s.content.contains("images")).all(|s| allocates(&s.storage)) {
            "Content type 'images' is not available on storage '(known after apply)'".into()
        } else {
            "Permission check failed (/storage/(known after apply), Datastore.AllocateSpace)".into()
        })
    }

    /// Qemu.pm `assert_scsi_feature_compatibility` on each `scsiN` a create or config write sets,
    /// against the machine `get_vm_machine` reads: the request's at a create (in its task, before
    /// `create_disks`), the applied config's at an update (`Preflight::scsi_identity`, §67.2).
    fn scsi_identity(&self, write: &Write, before: Option<&VmConfig>) -> Result<()> {
        let (form, machine, context) = match (write, before) {
            (Write::Create { form, .. }, _) => (form, value(form, "machine"), None),
            (Write::Config { body, context, .. }, Some(c)) => {
                (body, c.current.get("machine").map(String::as_str), Some(context))
            }
            _ => return Ok(()),
        };
        let config = machine.map(|m| BTreeMap::from([("machine".to_string(), m.to_string())])).unwrap_or_default();
        form.iter().filter(|(k, _)| k.starts_with("scsi") && k != "scsihw").try_for_each(|(k, v)| {
            let refused = self.preflight.scsi_identity(k, v, &config);
            refused.map_err(|e| match context {
                Some(c) => e.context(c),
                None => e,
            })
        })
    }
}
