"""Property-string helpers for drives and NICs, as qemu-server parses and prints them.

Sources: qemu-server src/PVE/QemuServer/Drive.pm `parse_drive`/`print_drive`, Network.pm
`parse_net`/`print_net` (9.2.6); pve-common JSONSchema.pm `print_property_string`.
"""

import re

from fakepve.qemu import NET_MODELS, split_drive

DRIVE_KEY = re.compile(
    r'^(ide[0-3]|sata[0-5]|scsi(?:[0-9]|[12][0-9]|30)|virtio(?:[0-9]|1[0-5])|efidisk0|tpmstate0)$')
UNUSED_KEY = re.compile(r'^unused(\d+)$')
NET_KEY = re.compile(r'^net(\d+)$')
USB_KEY = re.compile(r'^usb\d+$')
SIZE_UNITS = {'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3, 'T': 1024 ** 4}
# Options of an existing disk that a running VM cannot change live (QemuServer.pm vmconfig_update_disk).
DISK_COLD_OPTS = ('aio', 'discard', 'iothread', 'queues', 'product', 'cache', 'ssd', 'vendor', 'ro')
# NIC options whose change needs an unplug and replug (QemuServer.pm vmconfig_update_net).
NET_REPLUG_OPTS = ('model', 'macaddr', 'queues', 'mtu')


def is_drive(key):
    return bool(DRIVE_KEY.match(key))


def natural(key):
    found = re.fullmatch(r'(\D+)(\d+)', key)
    return (found.group(1), int(found.group(2))) if found else (key, 0)


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


def parse_net(value):
    """{model, macaddr, ...} of a net string (keyAlias `<model>=<mac>` resolved)."""
    out = {}
    for part in str(value).split(','):
        if not part:
            continue
        key, eq, val = part.partition('=')
        if not eq:
            out['model'] = key
        elif key in NET_MODELS:
            out['model'] = key
            out['macaddr'] = val
        else:
            out[key] = val
    return out


def print_net(net):
    """Network.pm print_net: `<model>=<MAC>` first, then the other options sorted."""
    rest = dict((k, v) for k, v in net.items() if k not in ('model', 'macaddr'))
    head = '{0}={1}'.format(net.get('model'), (net.get('macaddr') or '').upper())
    return ','.join([head] + ['{0}={1}'.format(k, rest[k]) for k in sorted(rest)])


def hotplug_features(value):
    """QemuServer.pm parse_hotplug_features: unset or 1 = network,disk,usb; 0 = none."""
    if value is None:
        value = '1'
    value = str(value)
    if value == '1':
        return {'network', 'disk', 'usb'}
    if value == '0':
        return set()
    return set(item for item in re.split(r'[\s,;]+', value) if item)


def normalise_tags(text):
    """GuestHelpers.pm get_unique_tags: split on `,; `, lower-case, unique, sorted, joined by `;`."""
    tags = sorted(set(t.lower() for t in re.split(r'[;,\s]+', str(text)) if t), key=str.lower)
    return ';'.join(tags)


NET_BOOLS = ('firewall', 'link_down', 'host-tunnel')
DRIVE_BOOLS = ('backup', 'snapshot', 'detect_zeroes', 'replicate', 'shared', 'iothread', 'ro', 'ssd', 'scsiblock',
               'pre-enrolled-keys')
TRUE = ('1', 'on', 'yes', 'true')
FALSE = ('0', 'off', 'no', 'false')


def _bool_text(value):
    low = str(value).lower()
    return '1' if low in TRUE else '0' if low in FALSE else value


def canon_net(value, random_mac):
    """parse_net + print_net: booleans as 1/0, a new MAC when none is given, upper-case MAC
    (docs/pve-semantics.md §9, §20)."""
    net = parse_net(value)
    for key in NET_BOOLS:
        if key in net:
            net[key] = _bool_text(net[key])
    if not net.get('macaddr'):
        net['macaddr'] = random_mac()
    net['macaddr'] = net['macaddr'].upper()
    return print_net(net)


def canon_drive(value):
    """A drive string with boolean options normalised to 1/0 (parse_drive, docs/pve-semantics.md §20)."""
    volume, props = parse_drive(value)
    for key in DRIVE_BOOLS:
        if key in props:
            props[key] = _bool_text(props[key])
    if 'volume' in props and not volume:
        volume = props.pop('volume')
    return print_drive(volume or '', props)


def current_memory(value):
    """QemuServer/Memory.pm get_current_memory: MiB of `[current=]<MiB>`, 512 when unset."""
    if value is None or str(value) == '':
        return 512
    for part in str(value).split(','):
        key, eq, val = part.partition('=')
        if not eq:
            return int(key)
        if key == 'current':
            return int(val)
    return 512


def boot_order(value):
    """The devices of `boot: order=a;b` (pve-qm-boot), or [] for a legacy or unset value."""
    for part in str(value or '').split(','):
        key, eq, val = part.partition('=')
        if eq and key == 'order':
            return [dev for dev in re.split(r'[;,\s]+', val) if dev]
    return []


def print_bootorder(devs):
    """QemuServer.pm print_bootorder: '' for no device, else order=<dev;dev>."""
    return 'order=' + ';'.join(devs) if devs else ''
