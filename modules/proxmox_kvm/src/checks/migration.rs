//! What proxmox_kvm checks of a migration before it writes, beyond `migrate_vm`'s own checks (`Preflight::migrate_target`, `replication::migrate`): what the `qmigrate` task refuses from the VM's config, snapshots and jobs (`pve::migration`, docs/pve-semantics.md §59.2).

use module_utils::check::world::World;
use module_utils::pve::config::VmConfig;
use module_utils::pve::migration;
use module_utils::pve::replication::{self, Job};
use module_utils::pve::resources::VmResource;
use module_utils::Result;

use super::Checks;

impl Checks<'_> {
    /// `migrate_vm` to `target` (`running`: as the write finds the VM), in PVE's order: the
    /// handler's live migration of a replicated VM, then QemuMigrate.pm `prepare` (a job marked
    /// for removal, local devices), then `scan_local_volumes` (snapshots of local volumes).
    /// `jobs`: the VM's replication jobs, read once.
    pub(super) fn migration(
        &self,
        vm: &VmResource,
        config: &VmConfig,
        target: &str,
        force: bool,
        running: bool,
        jobs: &[Job],
    ) -> Result<Option<String>> {
        let handler = running.then(|| replication::migrate(jobs, vm.vmid, target, force)).flatten();
        let prepared = || {
            migration::job_marked_for_removal(jobs, vm.vmid, target)
                .map(str::to_string)
                .or_else(|| migration::local_devices(&config.current, running))
        };
        if let Some(words) = handler.or_else(prepared) {
            return Ok(Some(words));
        }
        if let Some(words) = self.mapped_migration(config, target, running)? {
            return Ok(Some(words)); // prepare's mapped devices, after the local ones (§64)
        }
        // none for a VM that exists only as a prediction (a create or clone makes none)
        let snapshots: Vec<_> = World::snapshots(self.api, vm)?.into_iter().map(|s| s.current).collect();
        let storages = self.preflight.storages()?;
        // two names of one volume die after the scan, before the volumes' own problems (§65.2)
        let configs: Vec<_> = [&config.current, &config.pending].into_iter().chain(&snapshots).collect();
        if let Some(words) = migration::aliased_volumes(vm.vmid, &configs, &storages) {
            return Ok(Some(words));
        }
        if snapshots.is_empty() {
            return Ok(None);
        }
        // $test_volid activates a snapshot's volumes (drives, unused, vmstate) before their snapshot
        // checks; `Preflight::gone`, as for the config's (`Checks::activated`, R-power-158, §69)
        let snapshot_configs: Vec<_> = snapshots.iter().collect();
        let scanned = migration::scanned_volumes(&snapshot_configs, &storages);
        if let Some(v) = self.preflight.gone(&self.privileges, &vm.node, &scanned)? {
            return Ok(Some(format!("can't migrate local disk '{v}': volume '{v}' does not exist")));
        }
        // replication keeps a running VM's volumes only where a `local` job targets the node
        let replicated = jobs.iter().any(|j| j.kind == "local" && j.target == target);
        Ok(migration::snapshot_volumes(vm.vmid, &snapshots, &storages, running, replicated))
    }
}
