"""Volumes of VM drives: allocation (PVE's cloud-init name, EFI disk sizes, import-from), linked-clone
bases, and freeing a VM's volumes.

Sources: qemu-server 9.2.6 src/PVE/API2/Qemu.pm (Qemu.pm) `create_disks`, src/PVE/QemuServer.pm
(QemuServer.pm) `destroy_vm`; pve-storage Plugin.pm `find_free_diskname`; docs/pve-semantics.md §8, §14.
"""

import re
import time

from fakepve.model import PveError, TaskError
from fakepve.qemu import NEW_DISK, volume_ref
from fakepve.routing import die
from fakepve.storage import _is_file

from . import drives as d, options as o
from .storage_types import NAME_DIR_FORMATS


class VolumesMixin:
    """Allocation and freeing of drive volumes."""

    def _check_base_unused(self, vm):
        """QemuServer.pm destroy_vm: a template whose base volume a linked clone uses is not destroyed (§14)."""
        for key in sorted(vm.config, key=o.natural):
            if not (d.is_drive(key) or d.UNUSED_KEY.match(key)) or d.is_cdrom(vm.config[key]):
                continue
            volid = d.parse_drive(vm.config[key])[0]
            if self._base_volume_in_use(volid):
                raise TaskError("base volume '{0}' is still in use by linked cloned".format(volid))

    def _free_all_volumes(self, vm):
        for key, value in list(vm.config.items()) + list(vm.pending.items()):
            if value is None or not (d.is_drive(key) or d.UNUSED_KEY.match(key)):
                continue
            volume = d.parse_drive(value)[0]
            if d.volume_owner(volume) == vm.vmid:
                self._qm_free(volume)

    def _alloc_cloudinit(self, sid, vmid, fmt=None, asked=None):
        """A cloud-init volume: vm-<vmid>-cloudinit, 4 MiB (§8.5); on file storages in `fmt` (a clone's:
        its source's), qcow2 for a new one (Qemu.pm create_disks). A new one's `format=` (`asked`) goes to
        vdisk_alloc as it is, which the plugin may refuse (`_refuse_format`); on LVM with
        snapshot-as-volume-chain a new one is qcow2, `vm-<vmid>-cloudinit.qcow2` (docs/pve-semantics.md §42)."""
        store = self.storages[sid]
        chain = store.get('type') == 'lvm' and str(store.get('snapshot-as-volume-chain', 0)) == '1'
        if _is_file(store):
            fmt = asked or fmt or 'qcow2'
            name = '{0}/vm-{0}-cloudinit.{1}'.format(vmid, fmt)
            if fmt not in NAME_DIR_FORMATS:
                # Plugin.pm alloc_image: parse_name_dir takes no other extension (storage_types `_qm_alloc`)
                raise die("unable to parse volume filename '{0}'".format(name.split('/', 1)[1]))
        elif chain:
            fmt = asked or fmt or 'qcow2'
            name = 'vm-{0}-cloudinit{1}'.format(vmid, '.qcow2' if fmt == 'qcow2' else '')
        else:
            if asked and store.get('type') != 'rbd':
                self._refuse_format(store, asked)
            name, fmt = 'vm-{0}-cloudinit'.format(vmid), 'raw'
        volumes = store.setdefault('volumes', {})
        if name in volumes:
            raise die("volume '{0}:{1}' already exists".format(sid, name))
        volumes[name] = {'content': 'images', 'format': fmt, 'size': 4 * 1024 ** 2, 'vmid': vmid,
                         'ctime': int(time.time())}
        return '{0}:{1}'.format(sid, name)

    def _qm_new_drive(self, vmid, key, value, default):
        """fakepve's drive allocation with PVE's cloud-init volume name and EFI disk sizes (§8.5, D15)."""
        volume, props = d.parse_drive(value)
        found = re.fullmatch(r'(?:([^/:\s]+):)?cloudinit', volume or '')
        if found or d.is_cloudinit(value):
            self._one_cloudinit_in_create(vmid, key)
        if found:
            sid = found.group(1) or default
            if sid not in self.storages:
                raise die("storage '{0}' does not exist".format(sid))
            volid = self._alloc_cloudinit(sid, vmid, asked=props.pop('format', None))
            props.update(media='cdrom', size='4M')
            return d.print_drive(volid, props), [volid]
        if props.get('import-from') and NEW_DISK.match(volume or ''):
            return self._qm_import_drive(vmid, volume, props, default)
        if key in ('efidisk0', 'tpmstate0') and NEW_DISK.match(volume or ''):
            # OVMF.pm create_efidisk / Qemu.pm create_disks: vdisk_alloc of the fixed size (the `N` is ignored),
            # and `size=` what the storage made of it (volume_size_info: 4M on LVM, 1M on RBD and ZFS)
            sid = NEW_DISK.match(volume).group(1) or default
            if sid not in self.storages:
                raise die("storage '{0}' does not exist".format(sid))
            volid, _fmt = self._qm_alloc(sid, vmid, props.pop('format', None), d.fixed_size(key, props))
            props['size'] = d.format_size(self._qm_volume(volid)['size'])
            return d.print_drive(volid, props), [volid]
        return super()._qm_new_drive(vmid, key, value, default)

    def _one_cloudinit_in_create(self, vmid, key):
        """Qemu.pm create_disks in create_vm: a cloud-init drive while an earlier drive of the same create was
        one (QemuConfig.pm has_cloudinit on `$res`, the drives made so far, in sorted key order). A config
        update checks its own (config_update.py) before it allocates."""
        vm = self.vm(vmid)
        if vm is None or vm.config.get('lock') != 'create':
            return
        earlier = getattr(vm, 'cloudinit_key', None)
        if earlier and earlier != key:
            raise die("{0} - cloud-init drive is already attached at '{1}'".format(key, earlier))
        vm.cloudinit_key = key

    def _qm_import_drive(self, vmid, volume, props, default):
        """Qemu.pm create_disks, import path: `STORAGE:0,import-from=<source>` copies the source
        into a new volume of the source's size on STORAGE, in the target storage's format; the
        drive keeps the new volume, its size, and no `import-from` (docs/pve-semantics.md §4.1, §8)."""
        props = dict(props)
        source = props.pop('import-from')
        sid = NEW_DISK.match(volume).group(1) or default
        if sid not in self.storages:
            raise die("storage '{0}' does not exist".format(sid))
        src = self._qm_volume(source) if not source.startswith('/') else None
        if src is None:
            raise die('volume {0} does not exist'.format(source))
        size = int(src.get('size') or 0)
        volid, _fmt = self._qm_alloc(sid, vmid, props.pop('format', None), size)
        try:
            self._copy_data(source, volid)
        except PveError:
            self._qm_free(volid)
            raise
        props['size'] = d.format_size(self._qm_volume(volid)['size'])
        return d.print_drive(volid, props), [volid]
