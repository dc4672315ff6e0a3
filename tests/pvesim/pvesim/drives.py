"""Property strings of drives (`ide0`, `scsi0`, `efidisk0`, `unusedN`, ...) and the sizes and owners of their
volumes, as qemu-server parses and prints them.

Sources: qemu-server 9.2.6 src/PVE/QemuServer/Drive.pm `parse_drive`/`print_drive`, src/PVE/QemuServer.pm
`vmconfig_update_disk`; pve-storage PVE/Storage.pm `parse_volname`; pve-common `format_size`,
JSONSchema.pm `print_property_string`.
"""

import re

from fakepve.qemu import split_drive

from .options import bool_text

DRIVE_KEY = re.compile(
    r'^(ide[0-3]|sata[0-5]|scsi(?:[0-9]|[12][0-9]|30)|virtio(?:[0-9]|1[0-5])|efidisk0|tpmstate0)$')
UNUSED_KEY = re.compile(r'^unused(\d+)$')
SIZE_UNITS = {'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3, 'T': 1024 ** 4}
# Options of an existing disk that a running VM cannot change live (QemuServer.pm vmconfig_update_disk).
DISK_COLD_OPTS = ('aio', 'discard', 'iothread', 'queues', 'product', 'cache', 'ssd', 'vendor', 'ro')
DRIVE_BOOLS = ('backup', 'snapshot', 'detect_zeroes', 'replicate', 'shared', 'iothread', 'ro', 'ssd', 'scsiblock',
               'pre-enrolled-keys')


def is_drive(key):
    return bool(DRIVE_KEY.match(key))


def parse_drive(value):
    """(volume, {option: value}) of a drive string, or (None, {}) for None."""
    if value is None:
        return None, {}
    volume, props = split_drive(str(value))
    return volume, dict(props)


def print_drive(volume, props):
    """Drive.pm print_drive: the volume, then the options sorted by name."""
    return ','.join([volume] + ['{0}={1}'.format(k, props[k]) for k in sorted(props)])


def is_cdrom(value):
    volume, props = parse_drive(value)
    return props.get('media') == 'cdrom' or volume in ('cdrom', 'none')


def is_cloudinit(value):
    volume, _ = parse_drive(value)
    return bool(volume) and bool(re.search(r'(?:^|[:/])vm-\d+-cloudinit(?:\.\w+)?$', volume))


def volume_owner(volid):
    """The vmid that owns a volume (PVE::Storage::parse_volname), or None."""
    if not volid or ':' not in volid:
        return None
    name = volid.split(':', 1)[1]
    found = re.findall(r'(?:^|/)(?:vm|base|subvol|basevol)-(\d+)-', name)
    return int(found[-1]) if found else None


def fixed_size(key, props):
    """The size qemu-server asks the storage for when it allocates an `efidisk0` or a `tpmstate0`, whether new
    (OVMF.pm create_efidisk, Qemu.pm create_disks) or copied (QemuServer.pm clone_disk: `efisize`, from
    OVMF.pm get_efivars_size, and TPMSTATE_DISK_SIZE): the OVMF vars file, 528 KiB for `efitype=4m` and
    128 KiB otherwise (x86_64), and 4 MiB of TPM state; None for other drives."""
    if key == 'efidisk0':
        return 528 * 1024 if props.get('efitype') == '4m' else 128 * 1024
    if key == 'tpmstate0':
        return 4 * 1024 ** 2
    return None


def format_size(size):
    """pve-common format_size: the largest unit that divides the size, else bytes."""
    size = int(size)
    for unit in 'TGMK':
        if size and size % SIZE_UNITS[unit] == 0:
            return '{0}{1}'.format(size // SIZE_UNITS[unit], unit)
    return str(size)


def parse_size(text):
    """A disk-size `<n>[KMGT]` (no suffix: bytes) in bytes, or None."""
    found = re.fullmatch(r'(\d+(?:\.\d+)?)([KMGT])?', str(text or ''))
    if not found:
        return None
    return int(float(found.group(1)) * SIZE_UNITS.get(found.group(2) or '', 1))


def canon_drive(value):
    """A drive string with boolean options normalised to 1/0 (parse_drive, docs/pve-semantics.md §20)."""
    volume, props = parse_drive(value)
    for key in DRIVE_BOOLS:
        if key in props:
            props[key] = bool_text(props[key])
    if 'volume' in props and not volume:
        volume = props.pop('volume')
    return print_drive(volume or '', props)
