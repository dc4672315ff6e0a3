"""A backup's config (`GET /nodes/{node}/vzdump/extractconfig`) and the restore's hints: the storages a restore
allocates on, which the archive's config names and which must hold `images` and grant Datastore.AllocateSpace.

A backup's config comes from the seed's `vzdump_configs` ({volid: config text, with vzdump's `#qmdump#map:` lines}); for a
backup the seed gives none, pvesim writes what vzdump would of the VM the backup is of (its current config, one
`#qmdump#map:<drive>:drive-<drive>:<storage>:<format>:` line per disk), or an empty config when that VM is gone.
pvesim restores nothing (fakepve refuses a restore): the hints are checked first, where PVE's restore task would.

Sources: pve-manager 9.2.11 PVE/API2/VZDump.pm `extractconfig` (Storage.pm check_volume_access of the backup, then
VM.Backup on the VM it is of); pve-storage 9.1.7 src/PVE/Storage.pm `extract_vzdump_config`; qemu-server 9.2.6
src/PVE/QemuServer.pm `$parse_backup_hints` (`$check_storage`: content, then the privilege but for root@pam), called by
`restore_vma_archive` in create_vm's restore task; docs/pve-semantics.md §64.
"""

import json
import re

from fakepve.routing import die, split_list

from . import drives as d
from .volume_access import BACKUP_OWNER

ROOT = 'root@pam'


def hint_storages(config, storage=None):
    """$parse_backup_hints: each map line's storage (none: local), each cloud-init drive's; `storage` replaces them."""
    out = []
    for line in config.splitlines():
        m = re.match(r'^#qmdump#map:(\S+?):(\S+?):(\S*?):(\S*?):$', line)
        sid = None
        if m:
            sid = m.group(3)
        else:
            c = re.match(r'^((?:ide|sata|scsi)\d+):\s*(.*?)\s*$', line)
            if c and re.search(r'vm-\d+-cloudinit', c.group(2).split(',')[0]):
                sid = c.group(2).split(':')[0]
        if sid is None:
            continue
        sid = (storage if storage is not None else sid) or 'local'
        if sid not in out:
            out.append(sid)
    return out


class RestoreHintsMixin:
    """extractconfig and the restore's hint storages."""

    def load_seed(self, path=None):
        path = super().load_seed(path)
        with open(path, encoding='utf-8') as fh:
            self.backup_configs = dict(json.load(fh).get('vzdump_configs', {}))
        return path

    def _routes_restore_hints(self):
        return [('GET', '/nodes/{node}/vzdump/extractconfig', self._extractconfig)]

    def backup_config(self, volid):
        """The config the backup holds: the seed's, else vzdump's of the VM it is of."""
        if volid in getattr(self, 'backup_configs', {}):
            return self.backup_configs[volid]
        owner = next((m.group(1) for m in (r.match(volid.partition(':')[2]) for r in BACKUP_OWNER) if m), None)
        vm = next((vm for vm in self.vms if vm.vmid == int(owner)), None) if owner else None
        if vm is None:
            return ''
        lines = []
        for key in sorted(vm.config):
            value = str(vm.config[key])
            if d.is_drive(key) and not d.is_cdrom(value) and ':' in value:
                volume = value.split(',')[0]
                fmt = 'qcow2' if volume.endswith('.qcow2') else 'raw'
                lines.append('#qmdump#map:{0}:drive-{0}:{1}:{2}:'.format(key, volume.split(':')[0], fmt))
            lines.append('{0}: {1}'.format(key, value))
        return '\n'.join(lines) + '\n'

    async def _extractconfig(self, v, user):
        """VZDump.pm extractconfig: check_volume_access of the backup (content `backup`), then VM.Backup on its VM."""
        volid = v['volume']
        self._archive_access(user, None, volid)  # volume_access.py: no VM is the owner here
        owner = next((m.group(1) for m in (r.match(volid.partition(':')[2]) for r in BACKUP_OWNER) if m), None)
        if owner is not None:
            self.require(user or ROOT, '/vms/{0}'.format(owner), 'VM.Backup')
        return self.backup_config(volid)



class RestoreTaskMixin:
    """The restore task's hints, checked after every check of create_vm's handler: placed last before fakepve's
    server in Pvesim's bases (RestoreHintsMixin, with the seed, comes before AdminMixin's load_seed)."""

    async def _qm_create(self, v, user):
        """create_vm's restore task, $parse_backup_hints, before anything is restored (fakepve restores nothing)."""
        if v.get('archive') and v['archive'] != '-':
            for sid in hint_storages(self.backup_config(v['archive']), v.get('storage')):
                store = self.storages.get(sid)
                if store is None:
                    raise die("storage '{0}' does not exist".format(sid))
                if 'images' not in split_list(store.get('content')):
                    raise die("Content type 'images' is not available on storage '{0}'".format(sid))
                if (user or ROOT) != ROOT:
                    self.require(user, '/storage/' + sid, 'Datastore.AllocateSpace')
        return await super()._qm_create(v, user)
