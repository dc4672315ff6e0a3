"""What a start refuses of a VM's drives and passed-through PCI devices as the config and storage.cfg tell, as
qemu-server 9.2.6 does (docs/pve-semantics.md §62), written from qemu-server's source:

- QemuServer.pm `vm_start_nolock` -> `get_current_vm_volumes` -> `check_volume_storage_type`, before the command line:
  each volume's storage must have the volume's content type;
- QemuServer/PCI.pm `parse_hostpci` and `parse_hostpci_devices` (from `config_to_command` via
  `print_hostpci_devices`, before the USB devices): mdev with a multifunction device, `pcie` without q35, legacy IGD;
- `config_to_command`'s drive loop (after the VNC clipboard, before the NICs): more than 14 SCSI disks below machine
  version 4.1+pve2; QemuServer/Drive.pm `checked_parse_volname` (a format QEMU does not take) and the `format` option
  of `get_path_and_format` / Blockdev.pm `generate_format_blockdev`; QemuServer.pm `print_drive_commandline_full`
  (machine version below 10.0) with a qcow2 volume on a storage with snapshot-as-volume-chain.

A `host` id is looked up on the node's PCI devices (node_pci.py, `missing`; PVE's `lspci` refuses one the node lacks,
before the rules above); without `missing`, or on a node the seed does not list, every id is present.
"""

import re

from fakepve.qemu import volume_ref
from fakepve.routing import die

from . import drives as d
from .qemu_command import _props

# Drive.pm $QEMU_FORMAT_RE
QEMU_FORMAT = re.compile(r'^(raw|qcow|qcow2|qed|vmdk|cloop)$')
# QemuConfig valid_drive_names' order (foreach_volume): ide, sata, scsi, virtio, efidisk0, tpmstate0
BUSES = (('ide', 4), ('sata', 6), ('scsi', 31), ('virtio', 16), ('efidisk', 1), ('tpmstate', 1))
TRUE = ('1', 'on', 'yes', 'true')


def _drive_keys(conf):
    return [k for bus, n in BUSES for k in ('{0}{1}'.format(bus, i) for i in range(n)) if conf.get(k)]


def _volume(value, storages, parse_volname):
    """(volid, store, vtype, format) of a drive naming a volume on a storage, else None (`parse_volume_id`
    with noerr: `none`, `cdrom`, a path)."""
    volid = d.parse_drive(value)[0] or ''
    sid, name = volume_ref(volid)
    store = storages.get(sid) if sid else None
    if store is None or not name:
        return None
    vtype, _owner, fmt = parse_volname(store, name)
    if store.get('type') == 'lvm' and name.endswith('.qcow2'):
        fmt = 'qcow2'  # pve-storage LVMPlugin.pm parse_volname: a `.qcow2` LV holds qcow2 (volume chains)
    return volid, sid, store, vtype, fmt


def content_error(conf, storages, parse_volname):
    """QemuServer.pm check_volume_storage_type, for each volume of get_current_vm_volumes (the drives, then
    `vmstate`)."""
    for key in _drive_keys(conf) + (['vmstate'] if conf.get('vmstate') else []):
        found = _volume(conf[key], storages, parse_volname)
        if not found:
            continue
        _volid, sid, store, vtype, _fmt = found
        content = [c.strip() for c in str(store.get('content', '')).split(',')]
        if vtype not in content:
            return "storage '{0}' does not support content-type '{1}'".format(sid, vtype)
    return None


def _machine(conf):
    props = _props(conf.get('machine'))
    return props.get('type') or props.get('', '')


def machine_version(conf):
    """Machine.pm extract_version of a pinned machine type: (major, minor, pve), or None when none is pinned (the
    node's QEMU, 10.0 or later)."""
    found = re.match(r'^(?:pc|pc-i440fx|pc-q35|virt)-(\d+)\.(\d+)(?:\+pve(\d+))?', _machine(conf) or '')
    return tuple(int(g or 0) for g in found.groups()) if found else None


def drive_error(conf, storages, parse_volname):
    """config_to_command's drive loop (the EFI disk and the TPM state are printed before it)."""
    version = machine_version(conf)
    for key in _drive_keys(conf):
        if key.startswith(('efidisk', 'tpmstate')):
            continue
        index = int(re.search(r'\d+$', key).group(0))
        if key.startswith('scsi') and index > 13 and version is not None and version < (4, 1, 2):
            return ('{0}: machine version 4.1~pve2 or higher is required to use more than 14 SCSI disks'
                    .format(key))
        found = _volume(conf[key], storages, parse_volname)
        if not found:
            continue
        volid, _sid, store, _vtype, fmt = found
        fmt = fmt or 'raw'
        if not QEMU_FORMAT.match(fmt):
            return "volume '{0}' - not a QEMU image format '{1}'".format(volid, fmt)
        asked = d.parse_drive(conf[key])[1].get('format')
        if asked and asked != fmt:
            return ("drive '{0}' - volume '{1}' - 'format={2}' option different from storage format '{3}'"
                    .format(key, volid, asked, fmt))
        chain = str(store.get('snapshot-as-volume-chain', 0)) == '1'
        if chain and fmt == 'qcow2' and version is not None and version < (10, 0, 0):
            return ("storage for '{0}' is configured for snapshots as a volume chain - this requires QEMU machine"
                    " version >= 10.0. See https://pve.proxmox.com/wiki/QEMU_Machine_Version_Upgrade".format(volid))
    return None


def hostpci_error(conf, mapped=None, missing=None):
    """PCI.pm parse_hostpci_devices, each hostpciN after parse_hostpci: `host` or `mapping`, not both; a mapping's
    own checks and its entries on the node, one alternative each (`mapped(id)`: (error, paths), mappings.py; without
    it a mapping ends what is modelled); an alternative with several ids is a multifunction device; then the
    legacy IGD rules, `alternate devices` (several alternatives) after the multifunction one (§70)."""
    q35 = re.match(r'^(?:pc-)?q35', _machine(conf) or '') is not None
    legacy_igd = False
    for i in range(16):
        value = conf.get('hostpci{0}'.format(i))
        if not value:
            continue
        props = _props(value)
        host = props.get('host') or props.get('')
        if host and props.get('mapping'):
            return "Cannot set both 'host' and 'mapping'."
        if not host and not props.get('mapping'):
            return "Either 'host' or 'mapping' must be set."
        if host:
            # PCI.pm parse_hostpci: lspci of each id (SysFSTools.pm), `no PCI device found for '<id>'` (node_pci.py)
            errors = [missing(pid) for pid in host.split(';')] if missing else []
            if any(errors):
                return next(e for e in errors if e)
            alternatives = [host]
        elif mapped is None:
            return None
        else:
            error, alternatives = mapped(props['mapping'])
            if error:
                return error
        # lspci of an id without a function lists its functions: the seed's node has them as given
        ids = [alt.split(';') for alt in alternatives]
        multi = any(len(a) > 1 for a in ids)
        mdev = bool(props.get('mdev'))
        if multi and mdev:
            return 'cannot use mediated device with multifunction device'
        if not q35 and props.get('pcie') in TRUE:
            return 'q35 machine model is not enabled'
        if props.get('legacy-igd') not in TRUE:
            continue
        if legacy_igd:
            return 'only one device can be assigned in legacy-igd mode'
        legacy_igd = True
        if conf.get('vga') != 'none':
            return "legacy IGD assignment requires VGA mode to be 'none'"
        if 'rombar' in props and props['rombar'] not in TRUE:
            return 'legacy IGD assignment requires rombar to be enabled'
        if props.get('x-vga') in TRUE:
            return 'legacy IGD assignment is not compatible with x-vga'
        if mdev:
            return 'legacy IGD assignment is not compatible with mdev'
        if q35:
            return 'legacy IGD assignment is not compatible with q35'
        if multi:
            return 'legacy IGD assignment is not compatible with multifunction devices'
        if len(ids) > 1:
            return 'legacy IGD assignment is not compatible with alternate devices'
        # lspci's first function of an id without one is function 0
        first = ids[0][0]
        if not re.search(r'02\.0$', first if '.' in first else first + '.0'):
            return 'legacy IGD assignment only works for devices on host bus 00:02.0'
    return None


def import_format(name):
    """pve-storage Plugin.pm parse_volname of an `import/` volume's format: `ova+<ext>` for an OVA member
    (`<name>.ova/<member>.<qcow2|raw|vmdk>`), else the extension (ova, ovf, qcow2, raw, vmdk)."""
    found = re.match(r'^import/.+\.ova/.+\.(qcow2|raw|vmdk)$', name)
    if found:
        return 'ova+' + found.group(1)
    found = re.match(r'^import/.+\.(ova|ovf|qcow2|raw|vmdk)$', name)
    return found.group(1) if found else None


class QemuFormatMixin:
    """QemuServer/Drive.pm checked_parse_volname where a create or config update reaches it: API2/Qemu.pm
    $check_storage_access on an `import-from` source, and create_disks on an attached existing volume (in PVE's
    create task; pvesim checks it with the drive, before the task: the create fails either way, nothing kept)."""

    def _qm_check_drive(self, user, vmid, pool, key, value, default):
        super()._qm_check_drive(user, vmid, pool, key, value, default)
        volume, props = d.parse_drive(value)
        source = props.get('import-from')
        for volid, is_source in ((source, True), (volume, False)):
            sid, name = volume_ref(volid or '')
            store = self.storages.get(sid) if sid else None
            # not a volume to parse: a new disk (`<sid>:<size>`), a new or existing cloud-init drive
            new = re.match(r'^\d+(\.\d+)?$', name) or name == 'cloudinit' or d.is_cloudinit(value)
            if store is None or not name or (not is_source and new):
                continue
            vtype, _owner, fmt = self._parse_volname(store, name)
            if vtype == 'import':
                fmt = import_format(name) or fmt
                if fmt.startswith('ova+'):
                    continue
            fmt = fmt or 'raw'
            if not QEMU_FORMAT.match(fmt):
                raise die("volume '{0}' - not a QEMU image format '{1}'".format(volid, fmt))
