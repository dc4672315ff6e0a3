"""Drive values qemu-server's create and config handlers refuse beyond the schema: an `import-from` drive's syntax,
options and source, a TPM state's version change, an EFI disk on an SEV-SNP guest (docs/pve-semantics.md §63).

Sources: qemu-server 9.2.6 src/PVE/API2/Qemu.pm `$check_drive_param` (the new-disk syntax with size 0, `efitype` and
`pre-enrolled-keys` of an `efidisk0`, `version` of a `tpmstate0`), `$check_storage_access` (a source of content
`images` or `import`; an OVA's disk extracted onto a storage that takes images and is file based), `create_disks` with `$import_from_volid` (no cloud-init disk as a source, no image whose owner VM is on another
node, inside the eval that
prefixes `cannot import from '<source>' - `; an SEV-SNP guest's new `efidisk0`), `prohibit_tpm_version_change` (from
`update_vm_api`, against the applied drive), an existing volume's `format=` (`create_disks`); src/PVE/QemuServer/Drive.pm `drive_is_cloudinit`, `NEW_DISK_RE`;
src/PVE/QemuServer/CPUConfig.pm `get_cvm_type`.
"""

import re

from fakepve.routing import die, param_error

from . import drives as d
from .qemu_command import _props

NEW_DISK = re.compile(r'^(?:([^/:\s]+):)?(\d+(?:\.\d+)?)$')
CLOUDINIT = re.compile(r'[:/](?:vm-\d+-)?cloudinit(?:\.(?:raw|qcow2|vmdk))?$')
IMPORT_REQUIRES = {'efidisk0': ('efitype', 'pre-enrolled-keys'), 'tpmstate0': ('version',)}
# pve-storage Plugin.pm parse_volname: the content types a volume name says
NAMED_TYPES = ('iso', 'vztmpl', 'import', 'snippets', 'backup')
OVA_DISK = re.compile(r'^import/[^/]+\.ova/.+$')
# the storage types with a `path` (pve-storage's DirPlugin, NFSPlugin, CIFSPlugin, CephFSPlugin, BTRFSPlugin)
FILE_TYPES = ('dir', 'nfs', 'cifs', 'cephfs', 'btrfs', 'glusterfs')


def volume_type(volid):
    name = volid.split(':', 1)[1]
    return next((t for t in NAMED_TYPES if name.startswith(t + '/')), 'images')


class DriveRulesMixin:

    def _qm_check_drive(self, user, vmid, pool, key, value, default):
        volume, props = d.parse_drive(value)
        source = props.get('import-from')
        if source:
            found = NEW_DISK.match(volume or '')
            if not found or float(found.group(2)) != 0:
                raise param_error(**{key: "'import-from' requires special syntax - "
                                          "use <storage ID>:0,import-from=<source>"})
            for required in IMPORT_REQUIRES.get(key, ()):
                if props.get(required) is None:
                    raise param_error(**{key: "need to specify '{0}' when using 'import-from'".format(required)})
            if ':' in source and not source.startswith('/') and volume_type(source) not in ('images', 'import'):
                raise param_error(**{key: "{0} has wrong type '{1}' - needs to be 'images' or 'import'".format(
                    source, volume_type(source))})
            self._check_extraction(key, source, user)
        return super()._qm_check_drive(user, vmid, pool, key, value, default)

    def _check_extraction(self, key, source, user):
        """$check_storage_access: a disk inside an OVA (QemuServer/Helpers.pm `needs_extraction`: content `import`,
        format `ova+<fmt>`) is extracted onto `import-working-storage`, else the source's storage, which must take
        images and have a path (be file based), and on which the user needs Datastore.AllocateSpace."""
        sid, _, name = source.partition(':')
        if not OVA_DISK.match(name) or sid not in self.storages:
            return
        store = self.storages[sid]
        if 'images' not in str(store.get('content')).split(',') or store.get('type') not in FILE_TYPES:
            raise param_error(**{key: "import working storage '{0}' does not support 'images' content type or is "
                                      "not file based.".format(sid)})
        if user is not None:
            self.require(user, '/storage/{0}'.format(sid), 'Datastore.AllocateSpace')

    def _qm_new_drive(self, vmid, key, value, default):
        volume, props = d.parse_drive(value)
        vm = self.vm(vmid)
        conf = vm.config if vm is not None else {}
        source = props.get('import-from')
        if source and NEW_DISK.match(volume or '') and CLOUDINIT.search(source) and self._qm_volume(source):
            # volume_size_info first: a missing source is that error (volumes.py)
            raise die("cannot import from '{0}' - cannot import from cloudinit disk".format(source))
        owner = d.volume_owner(source) if source and NEW_DISK.match(volume or '') else None
        if owner is not None and self.vm(owner) is not None and vm is not None and self.vm(owner).node != vm.node:
            # $import_from_volid: the source's owner VM must have its config on this node
            raise die("cannot import from '{0}' - owner VM {1} not on local node".format(source, owner))
        if key == 'tpmstate0' and conf.get('lock') != 'create' and conf.get('tpmstate0'):
            old = d.parse_drive(conf['tpmstate0'])
            if old[0] == volume and (old[1].get('version') or 'v1.2') != (props.get('version') or 'v1.2'):
                raise die('cannot change TPM state version after creation')
        fmt = props.get('format')
        if fmt and volume and ':' in volume and not volume.startswith('/') and not NEW_DISK.match(volume) \
                and not CLOUDINIT.search(volume) and volume.partition(':')[0] in self.storages:
            # create_disks, an existing volume: `format=` must be checked_parse_volname's format
            sid, _, name = volume.partition(':')
            vtype, _owner, own = self._parse_volname(self.storages[sid], name)
            if vtype == 'images' and own != fmt:
                raise die("drive '{0}' - volume '{1}' - 'format={2}' option different from storage format '{3}'"
                          .format(key, volume, fmt, own))
        sev_type = _props(conf.get('amd-sev'), 'type').get('type')
        if key == 'efidisk0' and sev_type == 'snp' and NEW_DISK.match(volume or '') and not source:
            raise die('SEV-SNP uses consolidated read-only firmware and does not require an EFI disk')
        return super()._qm_new_drive(vmid, key, value, default)
