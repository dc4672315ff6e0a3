"""Storage replication jobs and what PVE refuses of a replicated VM: a removal without `purge`, a live migration to
a node no job targets, a config write adding a drive that cannot replicate, a disk reassigned to a replicated VM
from a storage that cannot replicate.

The jobs come from the seed's `replication` list ({id, guest, target, type `local`}, as replication.cfg holds them);
`GET /cluster/replication` lists those whose guest the user may audit.

Sources: pve-guest-common 6.0.2 src/PVE/ReplicationConfig.pm `check_for_existing_jobs`, `find_local_replication_job`,
`remove_vmid_jobs`; pve-manager 9.2.11 PVE/API2/ReplicationConfig.pm `index`; qemu-server 9.2.6
src/PVE/API2/Qemu.pm `update_vm_api` (`$check_replication`), `destroy_vm`, `migrate_vm`, `move_vm_disk`; pve-storage 9.1.7
src/PVE/Storage/Plugin.pm and ZFSPoolPlugin.pm `storage_can_replicate`; docs/pve-semantics.md §50.
"""

import json

from fakepve.qemu import NEW_DISK, is_cdrom, split_drive
from fakepve.routing import die

from .storage_types import formats_of, is_shared

ROOT = 'root@pam'


def can_replicate(store, fmt):
    """Plugin.pm storage_can_replicate (0), ZFSPoolPlugin.pm (raw and subvol)."""
    return store.get('type') == 'zfspool' and fmt in ('raw', 'subvol')


class ReplicationMixin:
    """The replication jobs of replication.cfg and the refusals they cause."""

    def load_seed(self, path=None):
        path = super().load_seed(path)
        with open(path, encoding='utf-8') as fh:
            seed = json.load(fh)
        self.replication_jobs = [dict(j) for j in seed.get('replication', [])]
        return path

    def _routes_replication(self):
        return [('GET', '/cluster/replication', self._replication_index)]

    def _jobs_of(self, vmid):
        return [j for j in sorted(getattr(self, 'replication_jobs', []), key=lambda j: j['id'])
                if int(j['guest']) == int(vmid)]

    async def _replication_index(self, v, user):
        """API2/ReplicationConfig.pm index (`user => 'all'`): the jobs, sorted by id, whose guest the user may
        audit (VM.Audit on /vms/<vmid>)."""
        who = user or ROOT
        out = []
        for job in sorted(getattr(self, 'replication_jobs', []), key=lambda j: j['id']):
            if who == ROOT or self.allowed(who, '/vms/{0}'.format(job['guest']), 'VM.Audit'):
                out.append(dict(job, guest=int(job['guest']), type=job.get('type', 'local')))
        return out

    def _check_for_existing_jobs(self, vmid):
        """ReplicationConfig.pm check_for_existing_jobs: dies naming a job of the guest."""
        for job in self._jobs_of(vmid):
            raise die("There is a replication job '{0}' for guest '{1}' - Please remove that first."
                      .format(job['id'], vmid))

    # ------------------------------------------------------------ destroy_vm

    async def _qm_destroy(self, v, user):
        """Qemu.pm destroy_vm's early checks: skiplock (root only), protection, HA without purge, then
        replication jobs without purge, before the running check; with purge the jobs go
        (remove_vmid_jobs)."""
        vm = self.find(v['node'], v['vmid'])
        if not v.get('purge') and not (v.get('skiplock') and user != ROOT) \
                and vm.config.get('protection') not in (1, '1', True) and not vm.ha_managed:
            self._check_for_existing_jobs(vm.vmid)
        res = await super()._qm_destroy(v, user)
        if v.get('purge'):
            self.replication_jobs = [j for j in getattr(self, 'replication_jobs', [])
                                     if int(j['guest']) != int(vm.vmid)]
        return res

    # ------------------------------------------------------------ migrate_vm

    async def _sim_migrate(self, v, user):
        """Qemu.pm migrate_vm: a running VM, after the node, root-only option, lock and `--online` checks: a
        replicated VM migrates live only to a node a local job targets (find_local_replication_job), unless
        `force`."""
        node, target = v['node'], v.get('target')
        vm = self.vm(int(v['vmid']))
        reached = (vm is not None and vm.node == node and target != node and target in self.nodes
                   and not vm.lock and vm.status == 'running' and v.get('online')
                   and not any(v.get(o) and user != ROOT for o in ('force', 'migration_type', 'migration_network')))
        if reached and not v.get('force'):
            jobs = self._jobs_of(vm.vmid)
            if jobs and not any(j.get('type', 'local') == 'local' and j['target'] == target for j in jobs):
                raise die("Cannot live-migrate replicated VM to node '{0}' - not a replication target. "
                          "Use 'force' to override.".format(target))
        return await super()._sim_migrate(v, user)

    # ------------------------------------------------------------ move_vm_disk

    def _reassign_checks(self, v, user):
        """Qemu.pm move_vm_disk `$load_and_check_reassign_configs`, last: a disk reassigned to a replicated VM
        must be on a storage that can replicate its format (no exception for a shared storage here)."""
        src, dst, target, target_disk, sid = super()._reassign_checks(v, user)
        if self._jobs_of(target):
            volume = str(src.config.get(v['disk'])).split(',')[0]
            store = self.storages.get(sid, {})
            fmt = self._parse_volname(store, volume.partition(':')[2])[2]
            if not can_replicate(store, fmt):
                raise die('Cannot move disk to a replicated VM. Storage does not support replication!')
        return src, dst, target, target_disk, sid

    # ------------------------------------------------------------ update_vm_api

    def _update_prepare(self, vm, user, v):
        self._replication_update_vmid = vm.vmid
        try:
            return super()._update_prepare(vm, user, v)
        finally:
            self._replication_update_vmid = None

    def _qm_check_drive(self, user, vmid, pool, key, value, default):
        res = super()._qm_check_drive(user, vmid, pool, key, value, default)
        if getattr(self, '_replication_update_vmid', None) is not None:
            self._check_replication(vmid, value)
        return res

    def _check_replication(self, vmid, value):
        """Qemu.pm update_vm_api `$check_replication`, for each drive of the request on a replicated VM."""
        if not self._jobs_of(vmid):
            return
        volume, props = split_drive(str(value))
        if not volume or str(props.get('replicate', '1')) in ('0', 'no', 'off', 'false') or is_cdrom(volume, props):
            return
        sid, _, volname = volume.partition(':')
        if not volname or '/' in sid:
            # PVE::Storage::parse_volume_id fails: a path or a device
            raise die('cannot add non-managed/pass-through volume to a replicated VM')
        if volname == 'cloudinit':
            return
        store = self.storages.get(sid)
        if store is None:
            return
        if NEW_DISK.match(volume):
            fmt = props.get('format') or formats_of(store)[1]
        else:
            fmt = self._parse_volname(store, volname)[2]
        if can_replicate(store, fmt) or is_shared(store):
            return
        raise die('cannot add non-replicatable volume to a replicated VM')

