"""Which existing volume a VM's drive may name: the owner rule of pve-storage `Storage.pm` `check_volume_access`.

Sources (docs/pve-semantics.md §48.1): qemu-server `API2/Qemu.pm` `$check_storage_access` (run by `create_vm`
and `update_vm_api` for every drive sent) hands `check_volume_access` the VM's id; after `Datastore.Allocate` on
the storage and the ISO / template / import rule, a volume that VM owns needs nothing more ("we are owner - allow
access"); only another VM's image needs `Datastore.Audit` on its storage and `VM.Config.Disk` on that VM. fakepve's
drive check leaves the VM's id out, so it asked `Datastore.Audit` of a VM's own disk: the id is kept here for the
length of the drive check (synchronous, so no other request runs meanwhile).
"""

import re

from fakepve.routing import die

# pve-storage Plugin.pm parse_volname (a vzdump file) and PBSPlugin.pm parse_volname (a snapshot): the VM a backup is of
BACKUP_OWNER = (re.compile(r'^backup/vzdump-(?:openvz|lxc|qemu)-(\d+)-.+'),
                re.compile(r'^backup/[^\s_/]+/(\d+)/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'))

# content types check_volume_access judges before the owner (read access to the storage, whoever owns them)
STORAGE_READ_TYPES = ('iso', 'vztmpl', 'import')


class VolumeAccessMixin:
    _drive_check_vmid = None

    def _qm_check_drive(self, user, vmid, pool, key, value, default):
        self._drive_check_vmid = vmid
        try:
            return super()._qm_check_drive(user, vmid, pool, key, value, default)
        finally:
            self._drive_check_vmid = None

    def _check_access(self, user, sid, vtype, owner, volid):
        vmid = self._drive_check_vmid
        if vmid is not None and owner is not None and vtype not in STORAGE_READ_TYPES and int(owner) == int(vmid):
            return  # "we are owner - allow access"
        return super()._check_access(user, sid, vtype, owner, volid)

    def _archive_access(self, user, vmid, volid):
        """Qemu.pm create_vm with `archive`: Storage.pm check_volume_access($vmid, $archive, 'backup'). A path is
        root's (as fakepve words it, without the place Perl appends); a volume that is not a backup is refused first;
        then the owner rule above, a backup of another VM needing Datastore.AllocateSpace and VM.Backup on it."""
        if volid.startswith('/') or ':' not in volid:
            if user != 'root@pam':
                raise die('Only root can pass arbitrary filesystem paths.')
            return
        sid, volname = volid.split(':', 1)
        if not volname.startswith('backup/'):
            raise die("unable to use volume {0} - content type needs to be 'backup'".format(volid))
        owner = next((m.group(1) for m in (r.match(volname) for r in BACKUP_OWNER) if m), None)
        self._drive_check_vmid = vmid
        try:
            self._check_access(user, sid, 'backup', owner, volid)
        finally:
            self._drive_check_vmid = None
