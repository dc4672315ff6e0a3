"""pve-storage's `activate_volume` of a file storage: a volume a VM's config names that is gone from its storage dies
`volume '<storage>:<volname>' does not exist` (docs/pve-semantics.md §65.3).

Sources: pve-storage 9.1.7 src/PVE/Storage/Plugin.pm `activate_volume` (`-e` of the volume's path, which the
directory, NFS, CIFS, CephFS, BTRFS and GlusterFS plugins inherit; the others override it); qemu-server 9.2.6
src/PVE/QemuServer.pm `get_current_vm_volumes` (what `vm_start_nolock` activates: every drive's volume id and
`vmstate`; a cloud-init volume that is gone is made again first, QemuServer/Cloudinit.pm `commit_cloudinit_disk`),
src/PVE/QemuMigrate.pm `scan_local_volumes` (`$test_volid` activates every volume `foreach_volid` finds on storage
that is not shared before its other checks: the config's, its pending values' and each snapshot's drives, unused
volumes and `vmstate`), src/PVE/API2/Qemu.pm `create_disks` (a drive of a create or config write naming an existing
volume: after its access, content type and format checks, before its size: docs/pve-semantics.md §68), `clone_vm`
(the source's drives, inside its eval: `clone failed: `), `move_vm_disk` (the moved drive's volume, before its eval),
`resize_vm` (the resized volume).

A seed's storage may list `gone` volume names: files removed on the host behind PVE's back, which the storage no
longer lists although a config names them (fakepve lists every volume a config names).
"""

import json
import re

from fakepve.routing import die
from fakepve.qemu import volume_ref

from . import drives as d

NEW_VOLUME = re.compile(r'(?:[^/:\s]+:)?(?:cloudinit|\d+(?:\.\d+)?)')
FILE_TYPES = ('dir', 'nfs', 'cifs', 'cephfs', 'btrfs', 'glusterfs')


def current_volumes(config):
    """QemuServer.pm get_current_vm_volumes: each drive's volume id (ISOs too) and `vmstate`, but cloud-init."""
    out = [d.parse_drive(config[k])[0] for k in sorted(config) if d.is_drive(k) and not d.is_cloudinit(config[k])]
    out.append(config.get('vmstate'))
    return [v for v in out if v and volume_ref(v)[0]]


def snapshot_volumes(vm):
    """QemuServer.pm foreach_volid over the snapshots' sections: each snapshot's drive, unused and `vmstate` volume
    ids, sorted (scan_local_volumes activates each, docs/pve-semantics.md §69)."""
    out = set()
    for snap in (getattr(vm, 'snapshots', None) or {}).values():
        for key, value in snap.items():
            if key == 'vmstate' or d.is_drive(key) or d.UNUSED_KEY.match(key):
                volume = value if key == 'vmstate' else d.parse_drive(value)[0]
                if volume and volume_ref(volume)[0]:
                    out.add(volume)
    return sorted(out)


class ActivationMixin:
    """Volumes gone from their file storage, and the check every activating call makes."""

    def load_seed(self, path=None):
        path = super().load_seed(path)
        with open(path, encoding='utf-8') as fh:
            storages = json.load(fh).get('storages', {})
        self.gone = dict((sid, set(spec.get('gone') or ())) for sid, spec in storages.items())
        for store in self.storages.values():
            store.pop('gone', None)
        return path

    def _volumes(self, name):
        gone = getattr(self, 'gone', {}).get(name) or ()
        return dict((k, v) for k, v in super()._volumes(name).items() if k not in gone)

    def _qm_new_drive(self, vmid, key, value, default):
        """Qemu.pm create_disks, a drive naming an existing volume: activate_volumes dies first on a file storage."""
        volume, props = d.parse_drive(value)
        words = None if NEW_VOLUME.fullmatch(volume or '') else self.missing_volume([volume])
        if words:
            # its format= is weighed first, against the format its name gives (checked_parse_volname)
            sid, name = volume_ref(volume)
            fmt, want = self._parse_volname(self._store(sid), name)[2], props.get('format')
            if want and fmt and want != fmt:
                raise die("drive '{0}' - volume '{1}' - 'format={2}' option different from storage format '{3}'"
                          .format(key, volume, want, fmt))
            raise die(words)
        return super()._qm_new_drive(vmid, key, value, default)

    def missing_volume(self, volids):
        """Storage.pm activate_volumes: PVE's words for the first volume on a file storage that is gone, or None."""
        for volid in volids:
            sid, name = volume_ref(volid or '')
            store = self.storages.get(sid) if sid else None
            if store and store.get('type', 'dir') in FILE_TYPES and name not in self._volumes(sid):
                return "volume '{0}' does not exist".format(volid)
        return None
