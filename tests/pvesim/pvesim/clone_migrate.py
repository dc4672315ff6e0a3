"""Moving a VM: the clone precondition for another node, and migrate (checks, then the qmigrate task).

Sources: qemu-server 9.2.6 src/PVE/API2/Qemu.pm (Qemu.pm) `clone_vm`, `migrate_vm`; src/PVE/QemuMigrate.pm;
pve-guest-common src/PVE/AbstractMigrate.pm; docs/pve-semantics.md §15.
"""

import time

from fakepve.model import PveError, TaskError
from fakepve.qemu import volume_ref
from fakepve.routing import die, param_error

from . import activation, drives as d, migrate_task, mirror, options as o, strict_drives


class CloneMigrateMixin:
    """Clone to another node and migrate."""

    async def _qm_clone(self, v, user):
        """Qemu.pm clone_vm: a clone to another node needs every source volume on shared storage (§15)."""
        target, storage = v.get('target'), v.get('storage')
        src = self.vm(int(v['vmid']))
        if target and target not in (v['node'], 'localhost') and target in self.nodes and src is not None \
                and src.node == v['node'] and not src.lock \
                and (not storage or self.storages.get(storage, {}).get('shared')):
            conf = src.snapshots.get(v['snapname']) if v.get('snapname') else src.config
            for key in sorted(conf or {}):
                if not d.is_drive(key):
                    continue
                volume = d.parse_drive(conf[key])[0]
                sid = volume_ref(volume or 'none')[0]
                if sid is not None and not str(self.storages.get(sid, {}).get('shared', 0)) in ('1', 'True'):
                    raise die("can't clone VM to node '{0}' (VM uses local storage)".format(target))
        # Qemu.pm clone_vm, copying the source's options: a full clone of a running VM cannot copy its TPM state
        # (docs/pve-semantics.md §33); the checks before it (lock, linked-clone parameters) are fakepve's
        full = v.get('full')
        if src is not None and not src.lock and src.status == 'running' and not v.get('snapname') \
                and 'tpmstate0' in src.config and (not src.template if full is None else str(full) in ('1', 'True')):
            raise die('cannot clone TPM state while VM is running')
        if src is not None and not src.lock:
            # Qemu.pm clone_vm: each drive of the source parsed strictly (Drive.pm parse_drive, strict_drives.py)
            conf = src.snapshots.get(v['snapname']) if v.get('snapname') else src.config
            for key in sorted(conf or {}, key=o.natural):
                if d.is_drive(key) and strict_drives.parse_drive(key, conf[key])[0] is None:
                    raise die("unable to parse drive options for '{0}'".format(key))
        self._clone_features(v, user, src)  # the 'copy' and 'clone' features of each drive (storage_features.py)
        # QemuServer.pm clone_disk: the clone's own cloud-init volume goes to `storage` when given (tasks.py)
        self.clone_storage[int(v['newid'])] = (storage, v.get('format'))
        if src is not None:
            conf = src.snapshots.get(v['snapname']) if v.get('snapname') else src.config
            self.clone_sources[int(v['newid'])] = (dict(conf or {}), v.get('format'))
            # QemuServer.pm clone_disk: a full clone of a running VM (no snapshot) is mirrored by QEMU (mirror.py)
            if src.status == 'running' and not v.get('snapname') and (str(full) in ('1', 'True') or (
                    full is None and not src.template)):
                self.__dict__.setdefault('clone_mirrors', {})[int(v['newid'])] = (storage, mirror.running_machine(src))
        return await super()._qm_clone(v, user)

    async def ceph_io(self, vm, keys=None):
        """fakepve's clone task calls this on the new VM once it has allocated every volume, inside the task
        (an error fails it as `clone failed: ...` and frees what fakepve allocated): the point where
        `_clone_copies` does what fakepve's clone leaves out."""
        await super().ceph_io(vm, keys)
        if vm.lock == 'clone' and vm.vmid in self.clone_sources:
            # clone_vm's activate_volumes of the source's drives it copies or links (activation.py)
            source = self.clone_sources[vm.vmid][0]
            # drive_is_cdrom with exclude_cloudinit: a cloud-init drive is copied, so activated
            copied = [d.parse_drive(v)[0] for k, v in sorted(source.items())
                      if d.is_drive(k) and (not d.is_cdrom(v) or d.is_cloudinit(v))]
            words = self.missing_volume([v for v in copied if v and volume_ref(v)[0]])
            if words:
                self.clone_sources.pop(vm.vmid, None)
                self.__dict__.get('clone_mirrors', {}).pop(vm.vmid, None)
                raise die(words)
        if vm.lock == 'clone' and vm.vmid in self.__dict__.get('clone_mirrors', {}):
            (storage, machine), source = self.clone_mirrors.pop(vm.vmid), self.clone_sources.get(vm.vmid, ({},))[0]
            for key in sorted(source, key=o.natural):
                sid = volume_ref(d.parse_drive(source[key])[0] or 'none')[0]
                words = d.is_drive(key) and not d.is_cdrom(source[key]) and mirror.refusal(
                    key, source[key], storage or sid, self.storages, machine)
                if words:
                    self.clone_sources.pop(vm.vmid, None)
                    raise die(words)
        if vm.lock == 'clone' and vm.vmid in self.clone_sources:
            self._clone_copies(vm, *self.clone_sources.pop(vm.vmid))

    def _clone_copies(self, vm, source, requested):
        """QemuServer.pm clone_disk for each drive of the clone: a full copy is in the format
        resolve_dst_disk_format gives (`requested`, else the source's, where the target storage takes it,
        else its default: fakepve gives the target's default), an `efidisk0` copy is allocated at the OVMF
        vars' size (`efisize`), not the source's, and the copy writes the source's data (`_copy_data`);
        Qemu.pm clone_vm copies `tpmstate0` in full even in a linked clone (it is among the drives that need
        the 'copy' feature, with `full` and cloud-init), on the source's storage."""
        made = []
        try:
            for key in sorted(vm.config, key=o.natural):
                if not d.is_drive(key) or d.is_cdrom(vm.config[key]) or key not in source:
                    continue
                volume, props = d.parse_drive(vm.config[key])
                vol = self._qm_volume(volume)
                src_volume = d.parse_drive(source[key])[0]
                src = self._qm_volume(src_volume)
                if vol is None or src is None or (vol.get('linked_from') and key != 'tpmstate0'):
                    continue
                sid, fixed = volume_ref(volume)[0], d.fixed_size(key, props)
                fmt = self._target_format(sid, requested, src.get('format'))
                if vol.get('linked_from') or fixed is not None or fmt != vol.get('format'):
                    # allocated again as clone_disk does: the lowest free number is the one just freed (once
                    # the config no longer names it either), as PVE's allocations in key order give it
                    self._qm_free(volume)
                    del vm.config[key]
                    volume = self._qm_alloc(sid, vm.vmid, fmt, fixed or int(vol.get('size') or 0))[0]
                    made.append(volume)
                    props['size'] = d.format_size(self._qm_volume(volume)['size'])
                    vm.config[key] = d.print_drive(volume, props)
                self._copy_data(src_volume, volume)
        except PveError:
            for volume in made:
                self._qm_free(volume)
            raise

    def _migrate_local_volumes(self, vm):
        """QemuMigrate.pm scan_local_volumes: the config's volumes on storage that is not shared, each with
        how it is referenced ('attached', 'unused' or 'generated' for cloud-init), and the errors PVE logs."""
        found, errors = {}, {}
        for key in sorted(vm.config, key=o.natural):
            value = vm.config[key]
            if not (d.is_drive(key) or d.UNUSED_KEY.match(key)):
                continue
            volume = d.parse_drive(value)[0]
            if not volume or volume == 'none':
                continue
            if volume == 'cdrom':
                # a physical drive on the host: "can't migrate local cdrom drive"
                errors[None] = "can't migrate local cdrom drive"
                continue
            sid = volume_ref(volume)[0]
            if sid is None or sid not in self.storages or self.storages[sid].get('shared'):
                # shared storage is seen by both nodes: nothing to copy
                continue
            # $test_volid activates it before its size and its kind (activation.py)
            words = self.missing_volume([volume])
            if words:
                errors[volume] = words
                continue
            if d.is_drive(key) and d.is_cdrom(value):
                if d.is_cloudinit(value):
                    found[volume] = 'generated'
                else:
                    errors[volume] = 'local cdrom image'
                continue
            found[volume] = 'unused' if d.UNUSED_KEY.match(key) else 'attached'
        for volume in activation.snapshot_volumes(vm):
            # a volume only a snapshot names (a drive, or a snapshot's vmstate): $test_volid activates it too
            # (activation.py); its snapshot checks are migrate_task.snapshot_errors'
            sid = volume_ref(volume)[0]
            if volume in found or volume in errors or sid not in self.storages or self.storages[sid].get('shared'):
                continue
            words = self.missing_volume([volume])
            if words:
                errors[volume] = words
        return found, errors

    async def _sim_migrate(self, v, user):
        """Qemu.pm migrate_vm: checks before the fork (HTTP errors), then a `qmigrate` task that runs
        QemuMigrate.pm (prepare, phase1 with lock 'migrate', config moved to the target in phase3_cleanup)."""
        node, vmid, target = v['node'], int(v['vmid']), v['target']
        if target == node:
            raise param_error(target='target is local node.')
        self.need_quorum()
        if target not in self.nodes:
            # PVE::Cluster::check_node_exists
            raise die("no such cluster node '{0}'".format(target))
        for opt in ('force', 'migration_type', 'migration_network'):
            if v.get(opt) and user != 'root@pam':
                raise param_error(**{opt: 'Only root may use this option.'})
        vm = self.find(node, vmid)
        self._check_lock(vm)
        online = bool(v.get('online'))
        if vm.status == 'running':
            if not online:
                raise die("can't migrate running VM without --online")
        else:
            # "VM isn't running. Doing offline migration instead." is a warning of the API daemon, not the task
            online = False
        for key in sorted(vm.config, key=o.natural):
            # QemuServer.pm check_storage_availability: every drive's storage must be enabled on the target
            if d.is_drive(key):
                sid = volume_ref(d.parse_drive(vm.config[key])[0] or '')[0]
                if sid in self.storages:
                    self._check_enabled(sid, node)
                    self._check_enabled(sid, target)
        with_local = bool(v.get('with-local-disks'))

        async def body():
            started = time.monotonic()
            log = self._running_task('qmigrate', vmid)['log']

            def say(msg, err=False):
                # AbstractMigrate.pm $msg2text: a timestamp on every line, "ERROR: " for level err
                log.append('{0} {1}{2}'.format(time.strftime('%Y-%m-%d %H:%M:%S'), 'ERROR: ' if err else '', msg))

            def duration():
                secs = int((time.monotonic() - started) / (self.time_scale or 1))
                return '{0:02d}:{1:02d}:{2:02d}'.format(secs // 3600, secs // 60 % 60, secs % 60)

            def abort(err):
                # AbstractMigrate.pm migrate: any error ends the task "migration aborted"
                say('migration aborted (duration {0}): {1}'.format(duration(), err), err=True)
                return TaskError('migration aborted')
            # prepare, under the config lock the task holds (QemuMigrate.pm lock_vm): the same checks again
            try:
                self.find(node, vmid)
                self._check_lock(vm)
            except PveError as e:
                raise abort(e.message) from e
            running = vm.status == 'running'
            if running and not online:
                raise abort("can't migrate running VM without --online")
            refused = (migrate_task.prepare_error(vm, self._jobs_of(vmid), target, running)
                       or self.mapped_migration_error(vm, target, running))  # mappings.py (§64)
            if refused:
                raise abort(refused)
            say("starting migration of VM {0} to node '{1}'".format(vmid, target))
            # phase1: "set migrate lock in config file", then scan_local_volumes
            vm.config['lock'] = 'migrate'
            self._sync_vm(vm)
            local, errors = self._migrate_local_volumes(vm)
            aliased = migrate_task.aliased_error(vm, self.storages)  # dies after the scan, before its errors
            if aliased:
                say(aliased, err=True)
                say('aborting phase 1 - cleanup resources')
                vm.config.pop('lock', None)
                self._sync_vm(vm)
                raise abort(aliased)
            for volume, words in migrate_task.snapshot_errors(vm, self.storages, self._jobs_of(vmid), target,
                                                              running).items():
                errors.setdefault(volume, words)  # a volume that is gone died in its activation first
            for volume, ref in sorted(local.items()):
                if ref == 'attached' and running and not with_local:
                    errors[volume] = "can't live migrate attached local disks without with-local-disks option"
                if ref == 'generated':
                    say("found generated disk '{0}' (in current VM config)".format(volume))
                else:
                    say("found local disk '{0}' ({1})".format(volume, ref))
            if errors:
                for volume, msg in sorted((k, x) for k, x in errors.items() if k is not None):
                    say("can't migrate local disk '{0}': {1}".format(volume, msg))
                if None in errors:
                    say(errors[None])
                err = "Problem found while scanning volumes - can't migrate VM - check log"
                say(err, err=True)
                say('aborting phase 1 - cleanup resources')
                # phase1_cleanup: "delete $conf->{lock}"
                vm.config.pop('lock', None)
                self._sync_vm(vm)
                raise abort(err)
            # sync_offline_local_volumes: a stopped VM's disks (and cloud-init always) are copied to the same
            # storage id on the target; a running VM's attached disks go over NBD in phase2. The simulated
            # storage is one namespace for every node, so the volume ids stay as they are.
            offline = [vol for vol, ref in sorted(local.items()) if not (running and ref == 'attached')]
            if offline:
                say('copying local disk images')
            for volume in offline:
                say("volume '{0}' is '{0}' on the target".format(volume))
            if running:
                say("starting VM {0} on remote node '{1}'".format(vmid, target))
            # phase3_cleanup: move_config_to_node, then "qm unlock" on the target clears the migrate lock; a
            # live-migrated VM runs on the target
            vm.node = target
            vm.config.pop('lock', None)
            self._sync_vm(vm)
            say('migration finished successfully (duration {0})'.format(duration()))
            return None
        return await self.task(node, 'qmigrate', vmid, user, body, vm=vm)
