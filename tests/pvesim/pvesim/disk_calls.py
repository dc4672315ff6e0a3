"""The disk calls: resize, move_disk (to a storage or to another VM) and unlink.

Sources: qemu-server 9.2.6 src/PVE/API2/Qemu.pm (Qemu.pm) `resize_vm`, `move_vm_disk`, `unlink`;
src/PVE/QemuServer.pm `resolve_dst_disk_format`; docs/pve-semantics.md §10, §11, §12.
"""

import re

from fakepve.model import PveError, TaskError
from fakepve.qemu import volume_ref
from fakepve.routing import DIGEST_CHANGED, die, param_error, split_list

from . import drives as d, mirror, options as o, strict_drives
from .config_state import CHECKSUM_MISMATCH
from .storage_types import formats_of


class DiskCallsMixin:
    """resize, move_disk and unlink."""

    def _vm_on(self, node, vmid):
        vm = self.vm(int(vmid))
        return vm if vm is not None and vm.node == node else None

    async def _sim_unlink(self, v, user):
        """Qemu.pm unlink: update_vm_api with delete=<idlist>, force, synchronous; null (§11)."""
        vm = self.find(v['node'], v['vmid'])
        values = {'delete': v['idlist']}
        if v.get('force'):
            values['force'] = 1
        await self._update_synchronously(vm, self._update_prepare(vm, user, values))
        return None

    async def _sim_resize(self, v, user):
        """Qemu.pm resize_vm: a `resize` task; every check runs inside it (§10, D7)."""
        node, vmid = v['node'], int(v['vmid'])
        if v.get('skiplock') and user != 'root@pam':
            raise param_error(skiplock='Only root may use this option.')
        self.need_quorum()
        disk, sizestr, digest = v['disk'], str(v['size']), v.get('digest')

        async def body():
            try:
                vm = self.find(node, vmid)
            except PveError as e:
                raise TaskError(e.message) from e
            if digest and digest != self._digest(vm):
                raise TaskError(CHECKSUM_MISMATCH)
            if vm.lock and not v.get('skiplock'):
                raise TaskError('VM is locked ({0})'.format(vm.lock))
            value = vm.config.get(disk)
            if value is None:
                raise TaskError("disk '{0}' does not exist".format(disk))
            volume, props = d.parse_drive(value)
            if volume and volume_ref(volume)[0] is None:
                # resize_vm's Storage.pm parse_volname of the drive's file comes first: Plugin.pm parse_volume_id
                # parses no path (a passed-through device) nor `none`/`cdrom` (docs/pve-semantics.md §57.2)
                raise TaskError("unable to parse volume ID '{0}'".format(volume))
            if not volume:
                raise TaskError("disk '{0}' has no associated volume".format(disk))
            if d.is_cdrom(value):
                raise TaskError("you can't resize a cdrom")
            sid = volume_ref(volume)[0]
            if sid:
                try:
                    self.require(user, '/storage/' + sid, 'Datastore.AllocateSpace')
                except PveError as e:
                    raise TaskError(e.message) from e
            words = self.missing_volume([volume])  # resize_vm's activate_volumes (activation.py)
            if words:
                raise TaskError(words)
            vol = self._qm_volume(volume)
            size = int(vol['size']) if vol and vol.get('size') is not None else d.parse_size(props.get('size'))
            if size is None:
                raise TaskError("Could not determine current size of volume '{0}'".format(volume))
            found = re.fullmatch(r'(\+)?(\d+(?:\.\d+)?)([KMGT])?', sizestr)
            amount = float(found.group(2)) * d.SIZE_UNITS.get(found.group(3) or '', 1)
            newsize = int(size + amount if found.group(1) else amount)
            if newsize < size:
                raise TaskError('shrinking disks is not supported')
            if newsize == size:
                return None
            if vol is not None:
                try:
                    self._resize_volume(sid, volume_ref(volume)[1], vol, newsize)
                except PveError as e:
                    raise TaskError(e.message) from e
            props['size'] = d.format_size(newsize)
            vm.config[disk] = d.print_drive(volume, props)
            return 'Image resized.'
        return await self.task(node, 'resize', vmid, user, body, vm=self._vm_on(node, vmid))

    def _target_format(self, sid, want, current):
        supported, default = formats_of(self.storages[sid])
        # QemuServer.pm resolve_dst_disk_format: "test if requested format is supported - else use default"
        if want:
            return want if want in supported else default
        if current in supported:
            return current
        return default

    async def _sim_move_disk(self, v, user):
        """Qemu.pm move_vm_disk: checks before the fork, then a `qmmove` task (§12, D7, D16)."""
        node, vmid, disk = v['node'], int(v['vmid']), v['disk']
        storage, target_vmid = v.get('storage'), v.get('target-vmid')
        if storage is None and target_vmid is None:
            msg = "both 'storage' and 'target-vmid' missing, either needs to be set"
            raise param_error(**{'storage': msg, 'target-vmid': msg})
        if storage is not None and target_vmid is not None:
            msg = "either set 'storage' or 'target-vmid', but not both"
            raise param_error(**{'storage': msg, 'target-vmid': msg})
        self.need_quorum()
        if target_vmid is not None:
            return await self._sim_reassign(v, user)
        vm = self.find(node, vmid)
        self._check_lock(vm)
        if v.get('digest') and v['digest'] != self._digest(vm):
            raise die(DIGEST_CHANGED)
        value = vm.config.get(disk)
        if value is None:
            raise die("disk '{0}' does not exist".format(disk))
        volume, props = d.parse_drive(value)
        # Drive.pm parse_drive, strictly: a drive it cannot parse has no volume (strict_drives.py)
        if not volume or strict_drives.parse_drive(disk, value)[0] is None:
            raise die("disk '{0}' has no associated volume".format(disk))
        if d.is_cdrom(value):
            raise die("you can't move a cdrom")
        old_sid = volume_ref(volume)[0]
        old_vol = self._qm_volume(volume) or {}
        fmt = v.get('format')
        if old_sid == storage and (not fmt or fmt == old_vol.get('format')):
            raise die("you can't move to the same storage with same format")
        if storage not in self.storages:
            raise die("storage '{0}' does not exist".format(storage))
        store = self.storages[storage]
        if 'images' not in split_list(store.get('content')) or str(store.get('disable', 0)) == '1':
            raise param_error(storage="storage '{0}' does not support vm images".format(storage))
        self.require(user, '/storage/' + storage, 'Datastore.AllocateSpace')
        delete = bool(v.get('delete'))
        if delete and any(volume == d.parse_drive(s.get(k))[0] for s in vm.snapshots.values() for k in s
                          if d.is_drive(k)):
            raise die("you can't move a disk with snapshots and delete the source")

        async def body():
            current = vm.config.get(disk)
            cur_volume, cur_props = d.parse_drive(current)
            words = self.missing_volume([cur_volume])  # move_vm_disk's activate_volumes, before its eval
            if words:
                raise TaskError(words)
            src = self._qm_volume(cur_volume) or {}
            # QemuServer.pm clone_disk: EFI vars and TPM state at their fixed size, other disks at the source's
            size = d.fixed_size(disk, cur_props) or int(src.get('size') or d.parse_size(cur_props.get('size')) or 0)
            target_fmt = self._target_format(storage, fmt, src.get('format'))
            # QemuServer.pm clone_disk: QEMU mirrors a running VM's drive, and some it refuses first (mirror.py)
            words = mirror.refusal(disk, current, storage, self.storages, mirror.running_machine(vm)) \
                if vm.status == 'running' else None
            if words:
                raise TaskError('storage migration failed: {0}'.format(words))
            newvol = None
            try:
                newvol, _ = self._qm_alloc(storage, vmid, target_fmt, size)
                self._copy_data(cur_volume, newvol)
            except PveError as e:
                if newvol:
                    self._qm_free(newvol)
                raise TaskError('storage migration failed: {0}'.format(e.message)) from e
            # the drive's size is what the target storage made of it (volume_size_info)
            size = int(self._qm_volume(newvol)['size'])
            lines = ["copying volume '{0}' from current storage '{1}' to target storage '{2}'".format(
                cur_volume, volume_ref(cur_volume)[0], storage),
                "create full clone of drive {0} ({1})".format(disk, cur_volume)]
            cur_props.pop('format', None)
            cur_props['size'] = d.format_size(size)
            if str(vm.config.get('template', 0)) == '1':
                # move_vm_disk: "convert moved disk to base if part of template"
                newvol = self._qm_rename_volume(newvol)
            vm.config[disk] = d.print_drive(newvol, cur_props)
            if delete:
                lines.append("removing source volume '{0}' after successful copy".format(cur_volume))
                if d.volume_owner(cur_volume) == vmid:
                    try:
                        self._qm_free(cur_volume)
                    except PveError as e:
                        # Qemu.pm move_vm_disk frees the source in an eval and only warns, with Perl's warn: the
                        # worker's __WARN__ handler (pve-manager bin/pvedaemon) prints the bare text to the task log
                        # and counts nothing, so the task still ends OK (§32.2, §39.3)
                        lines.append(e.message)
            else:
                key = self._add_unused(vm, cur_volume)
                lines.append("adding source volume '{0}' as '{1}' to config".format(cur_volume, key))
            return '\n'.join(lines)
        return await self.task(node, 'qmmove', vmid, user, body, vm=vm)

    def _reassign_checks(self, v, user):
        """Qemu.pm move_vm_disk $load_and_check_reassign_configs, in PVE's order and wording (§12)."""
        node, vmid, disk = v['node'], int(v['vmid']), v['disk']
        target = int(v['target-vmid'])
        target_disk = v.get('target-disk') or disk
        if self.vm(vmid) is None:
            raise die('could not find VM {0}'.format(vmid))
        if self.vm(target) is None:
            raise die('could not find target VM {0}'.format(target))
        if self.vm(vmid).node != self.vm(target).node:
            raise die('Both VMs need to be on the same node ({0} != {1})'.format(self.vm(vmid).node,
                                                                                  self.vm(target).node))
        src = self.find(node, vmid)
        self._check_lock(src)
        dst = self.find(node, target)
        self._check_lock(dst)
        if src.template or dst.template or str(src.config.get('template', 0)) == '1' \
                or str(dst.config.get('template', 0)) == '1':
            raise die("Can't move disks from or to template VMs")
        if v.get('digest') and v['digest'] != self._digest(src):
            raise die('VM {0}: {1}'.format(vmid, DIGEST_CHANGED))
        if v.get('target-digest') and v['target-digest'] != self._digest(dst):
            raise die('VM {0}: {1}'.format(target, DIGEST_CHANGED))
        value = src.config.get(disk)
        if value is None:
            raise die("Disk '{0}' for VM '{1}' does not exist".format(disk, vmid))
        if dst.config.get(target_disk):
            raise die("Target disk key '{0}' is already in use for VM '{1}'".format(target_disk, target))
        parsed, why = strict_drives.parse_drive(disk, value)  # Drive.pm parse_drive (strict_drives.py)
        if parsed is None:
            raise die('failed to parse source disk - {0}'.format(why))
        volume = d.parse_drive(value)[0]
        if not volume:
            raise die("disk '{0}' has no associated volume".format(disk))
        if d.is_cdrom(value) and not d.is_cloudinit(value):
            raise die("CD drive contents can't be moved to another VM")
        sid = volume_ref(volume)[0]
        if sid is None:
            raise die("Volume '{0}' not managed by PVE".format(volume))
        if any(volume == d.parse_drive(snap.get(k))[0] for snap in src.snapshots.values() for k in snap
               if d.is_drive(k)):
            raise die("Can't move disk used by a snapshot to another VM")
        if not self.volume_has_feature('rename', volume):  # storage_features.py
            raise die('Storage does not support moving of this disk to another VM')
        if src.status == 'running' and not d.UNUSED_KEY.match(disk):
            raise die('Cannot move disk to another VM while the source VM is running - detach first')
        # parsed again in the target slot's format: an unusedN takes the volume alone
        parsed, why = strict_drives.parse_drive(target_disk, volume if d.UNUSED_KEY.match(target_disk) else value)
        if parsed is None:
            raise die('failed to parse source disk for target disk format - {0}'.format(why))
        return src, dst, target, target_disk, sid

    async def _sim_reassign(self, v, user):
        """Qemu.pm move_vm_disk with target-vmid: checks before the fork, then the volume is renamed for the
        target, leaves the source (and its boot order) and is added to the target by update_vm_api (§12)."""
        node, vmid, disk = v['node'], int(v['vmid']), v['disk']
        if int(v['target-vmid']) == vmid:
            raise param_error(**{'target-vmid': 'must be different than source VMID to reassign disk'})
        src, dst, target, target_disk, sid = self._reassign_checks(v, user)
        self.require(user, '/storage/' + sid, 'Datastore.AllocateSpace')
        tid = '{0}-{1}>{2}-{3}'.format(vmid, disk, target, target_disk)

        async def body():
            try:
                src_, dst_, _t, _k, _s = self._reassign_checks(v, user)
            except PveError as e:
                raise TaskError(e.message) from e
            lines = ["reassign disk '{0}' from VM '{1}' as '{2}' to VM '{3}'".format(disk, vmid, target_disk, target)]
            volume, props = d.parse_drive(src.config.get(disk))
            sid_, name = volume_ref(volume)
            store = self.storages[sid_]
            vol = store.setdefault('volumes', {}).pop(name, None) or {}
            fmt = vol.get('format') or 'raw'
            newname = self._renamed_volname(store, name, target, self._qm_free_name(sid_, target, fmt))
            vol['vmid'] = target
            store['volumes'][newname] = vol
            newvol = '{0}:{1}'.format(sid_, newname)
            order = o.boot_order(src.config.get('boot'))
            if disk in order:
                lines.append("removing disk '{0}' from boot order config".format(disk))
                src.config['boot'] = o.print_bootorder([dev for dev in order if dev != disk])
            del src.config[disk]
            lines.append("removing disk '{0}' from VM '{1}' config".format(disk, vmid))
            if d.UNUSED_KEY.match(target_disk):
                dst.config[target_disk] = newvol
            else:
                values = {target_disk: d.print_drive(newvol, props)}
                if v.get('target-digest'):
                    values['digest'] = v['target-digest']
                try:
                    plan = self._update_prepare(dst, user, values)
                    self._update_check_state(dst, plan)
                    self._update_apply(dst, plan)
                except PveError as e:
                    text = e.message
                    if e.errors:
                        text = '{0} {1} '.format(e.status, e.message) + ' '.join(
                            '{0}: {1}'.format(k, str(x).rstrip('\n')) for k, x in sorted(e.errors.items()))
                    raise TaskError(text) from e
            self._sync_vm(src)
            return '\n'.join(lines)
        return await self.task(node, 'qmmove', tid, user, body, vm=src)
