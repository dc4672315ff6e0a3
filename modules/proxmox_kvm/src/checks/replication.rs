//! What proxmox_kvm checks of a replicated VM before any write (`pve::replication`, docs/pve-semantics.md §50): a removal without `purge`, a live migration to a node no job targets, a drive the config write adds on a storage that cannot replicate.
//!
//! The jobs (`GET /cluster/replication`) are read only when the write could meet one of these
//! refusals: a removal without `purge`, a migration (its task also checks a job marked for
//! removal), a config write with a drive PVE would refuse on a replicated VM.

use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::is_disk_key;
use module_utils::pve::replication::{self, Job};
use module_utils::pve::request::Form;
use module_utils::{Error, Result};

use super::{split_config_body, value, Checks};
use crate::plan::Write;

impl Checks<'_> {
    fn jobs(&self, vmid: u64) -> Result<Vec<Job>> {
        replication::jobs_of(self.api, vmid)
    }

    /// `update_vm_api`'s `$check_replication` on the drives a config write sets (before the
    /// privileges, as PVE checks them in `$check_drive_param`).
    pub(super) fn replicated_drives(&self, write: &Write) -> Result<()> {
        let Write::Config { vm, body, .. } = write else { return Ok(()) };
        let (set, _) = split_config_body(body);
        let drives: Form = set.into_iter().filter(|(k, _)| is_disk_key(k) && !k.starts_with("unused")).collect();
        if drives.is_empty() {
            return Ok(());
        }
        let storages = self.preflight.storages()?;
        // the words each drive would meet on a replicated VM; the jobs are read only if one would
        let refused: Vec<(&String, &str)> =
            drives.iter().filter_map(|(k, v)| Some((k, replication::config_drive(true, v, &storages)?))).collect();
        let Some((_, words)) = refused.first() else { return Ok(()) };
        if self.jobs(vm.vmid)?.is_empty() {
            return Ok(());
        }
        Err(Error::failed(words.to_string()))
    }

    /// `destroy_vm` without `purge` and `migrate_vm` (`running`: as the write finds the VM; a
    /// migration also meets what its task refuses, `Checks::migration`), with the real run's
    /// context.
    pub(super) fn replicated_state(
        &self,
        write: &Write,
        form: &Form,
        config: &VmConfig,
        running: bool,
        purge: bool,
    ) -> Result<Option<String>> {
        match write {
            Write::Remove { vm, .. } if !purge => Ok(replication::destroy(&self.jobs(vm.vmid)?, vm.vmid, purge)),
            Write::Migrate { vm, .. } => {
                let target = value(form, "target").unwrap_or_default();
                let force = value(form, "force") == Some("1");
                self.migration(vm, config, target, force, running, &self.jobs(vm.vmid)?)
            }
            _ => Ok(None),
        }
    }
}
