"""A hook script snippet that is not there, SCSI `product`/`vendor` on a volume QEMU passes through as `scsi-generic`, and
the names of iSCSI-direct LUNs (docs/pve-semantics.md §67).

Sources: pve-guest-common 6.0.2 src/PVE/GuestHelpers.pm `check_hookscript` (after the snippet's content type, the file
must exist: `-f $path`; qemu-server's `update_vm_api` raises its error on the key); qemu-server 9.2.6
src/PVE/API2/Qemu.pm `assert_scsi_feature_compatibility` (from `update_vm_api`'s loop, before `create_disks` of the
key, against the applied config's machine) with src/PVE/QemuServer/Drive.pm `get_scsi_device_type` (an existing
volume whose path is an `iscsi://` URL is `generic` below machine version 4.1) and src/PVE/QemuServer/Machine.pm
`get_vm_machine`, `extract_version` (an unpinned machine runs at the node's QEMU); pve-storage 9.1.7
src/PVE/Storage/ISCSIDirectPlugin.pm and ZFSPlugin.pm `path` (`iscsi://<portal>/<target>/<lun>`), ISCSIDirectPlugin.pm
`parse_volname` (`lun<N>`, content images, no owner). Not modelled: the same check in create_vm's task (fakepve's
create task words every error `unable to create VM <vmid> - ...`, which PVE does not for this one).
"""

import re

from fakepve.routing import die, param_error

from . import drives as d

# pve-storage: the storage types whose volumes' `path` is an iscsi:// URL
ISCSI_URL_TYPES = ('iscsidirect', 'zfs')
PINNED = re.compile(r'-(\d+)\.(\d+)(?:\+pve\d+)?(?:\.pxe)?$')


def machine_below(machine, major, minor):
    """Machine.pm: the version of a pinned machine type (`pc-i440fx-4.0`, `type=pc-q35-3.1+pve1`) below major.minor;
    False for an unpinned one (the node's QEMU, 10.x on PVE 9)."""
    kind = next((p.split('=', 1)[-1] for p in str(machine or '').split(',') if '=' not in p or p.startswith('type=')),
                '')
    found = PINNED.search(kind)
    return bool(found) and (int(found.group(1)), int(found.group(2))) < (major, minor)


class HookScsiMixin:

    def _check_hookscript(self, volid):
        """check_hookscript: a snippet (values.py), then `-f $path`: the file is one of the storage's volumes."""
        super()._check_hookscript(volid)
        sid, _, volname = volid.partition(':')
        if volname not in self.storages[sid]['volumes']:
            raise param_error(hookscript="script '{0}' does not exist".format(volid))

    def _parse_volname(self, store, volname):
        if store.get('type') == 'iscsidirect':
            if not re.match(r'^lun\d+$', volname):
                raise die("unable to parse iscsi volume name '{0}'".format(volname))
            return 'images', None, 'raw'
        return super()._parse_volname(store, volname)

    def _qm_new_drive(self, vmid, key, value, default):
        vm = self.vm(vmid)
        if vm is not None and vm.lock != 'create' and re.fullmatch(r'scsi\d+', key):
            self._assert_scsi_feature_compatibility(vm, key, value)
        return super()._qm_new_drive(vmid, key, value, default)

    def _assert_scsi_feature_compatibility(self, vm, key, value):
        volume, props = d.parse_drive(value)
        if d.is_cdrom(value) or d.is_cloudinit(value) or not volume or ':' not in volume or volume.startswith('/'):
            return
        sid, _, name = volume.partition(':')
        store = self.storages.get(sid)
        if store is None or store.get('type') not in ISCSI_URL_TYPES or re.fullmatch(r'\d+(?:\.\d+)?', name):
            return  # a new disk's special syntax is scsi-hd
        if not machine_below(vm.config.get('machine'), 4, 1):
            return
        for what in ('product', 'vendor'):
            if props.get(what):
                raise param_error(**{key: "Passing of {0} information is only supported for 'scsi-hd' and 'scsi-cd' "
                                          "devices (e.g. not pass-through).".format(what)})
