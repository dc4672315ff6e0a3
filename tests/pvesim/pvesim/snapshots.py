"""A VM's snapshots where freeing a volume meets them: a volume a snapshot (or another drive) still uses is not freed
(docs/pve-semantics.md §45), and seeds that carry snapshots.

Sources: qemu-server 9.2.6 src/PVE/QemuServer/Drive.pm `is_volume_in_use` (every drive of the config but the one
named, then every drive of every snapshot; CD-ROMs aside; `unusedN` is no drive there) and src/PVE/QemuServer.pm
`try_deallocate_drive` (a volume the VM owns: `unable to delete '<volid>' - volume is still in use (snapshot?)`),
reached from Qemu.pm `update_vm_api` for an `unusedN` removed (at once) and from QemuServer.pm
`vmconfig_delete_or_detach_drive` for a drive removed with `force` (whose error `vmconfig_apply_pending` names the
option with). The other refusals snapshots cause are fakepve's and disk_calls.py's (Qemu.pm `template`,
`clone_vm`, `move_vm_disk`).
"""

import copy

from fakepve.routing import die

from . import drives as d


class SnapshotsMixin:
    """try_deallocate_drive's check, and a seed VM's `snapshots` {name: config}."""

    def _volume_in_use(self, vm, skip, volid):
        """Drive.pm is_volume_in_use: a drive of the config other than `skip`, or of any snapshot, uses `volid`."""
        def uses(cfg, skipped):
            return any(d.is_drive(k) and k != skipped and v is not None and not d.is_cdrom(v)
                       and d.parse_drive(v)[0] == volid for k, v in cfg.items())
        return uses(vm.config, skip) or any(uses(snap, None) for snap in vm.snapshots.values())

    def _try_deallocate(self, vm, key, volid):
        """QemuServer.pm try_deallocate_drive, for a volume `vm` owns, before it is freed."""
        if self._volume_in_use(vm, key, volid):
            raise die("unable to delete '{0}' - volume is still in use (snapshot?)".format(volid))

    def _seed_vm(self, spec):
        """A seed VM's `snapshots` {name: config} (AbstractConfig.pm keeps each as a section of the config file),
        their volumes registered as the config's are."""
        super()._seed_vm(spec)
        vm = self.vms[-1]
        vm.snapshots = copy.deepcopy(spec.get('snapshots', {}))
        for snap in vm.snapshots.values():
            for key, value in snap.items():
                if not d.is_drive(key) or d.is_cdrom(value):
                    continue
                volume, props = d.parse_drive(value)
                sid, _, name = (volume or '').partition(':')
                if sid in self.storages and name:
                    self.storages[sid]['volumes'].setdefault(name, {
                        'content': 'images', 'format': name.rsplit('.', 1)[1] if '.' in name else 'raw',
                        'size': d.parse_size(props.get('size')) or 0, 'vmid': d.volume_owner(volume) or vm.vmid,
                        'ctime': 1767225600})
