"""Config options of a qemu VM: which keys exist, how GET config encodes their values, and the values of
the options other than drives and NICs (hotplug, tags, memory, boot order).

Sources: qemu-server 9.2.6 src/PVE/QemuServer.pm (QemuServer.pm), src/PVE/QemuServer/Memory.pm; pve-guest-common
6.0.2 src/PVE/GuestHelpers.pm; the PVE API schema of PUT /nodes/{node}/qemu/{vmid}/config.
"""

import re

from fakepve import schema as pve_schema

# Options a running VM takes at once (QemuServer.pm $fast_plug_option, and the cloud-init keys; §6).
FASTPLUG = ('description', 'hookscript', 'lock', 'migrate_downtime', 'migrate_speed', 'name', 'onboot',
            'protection', 'shares', 'startup', 'tags', 'vmstatestorage', 'citype', 'ciuser', 'cipassword',
            'ciupgrade', 'cicustom', 'searchdomain', 'nameserver', 'sshkeys')
# Request parameters of update_vm that are not config keys.
UPDATE_ONLY = ('node', 'vmid', 'delete', 'revert', 'digest', 'force', 'skiplock', 'background_delay',
               'import-working-storage')
CONFIG_PATH = '/nodes/{node}/qemu/{vmid}/config'
USB_KEY = re.compile(r'^usb\d+$')
TRUE = ('1', 'on', 'yes', 'true')
FALSE = ('0', 'off', 'no', 'false')


def natural(key):
    found = re.fullmatch(r'(\D+)(\d+)', key)
    return (found.group(1), int(found.group(2))) if found else (key, 0)


def bool_text(value):
    low = str(value).lower()
    return '1' if low in TRUE else '0' if low in FALSE else value


def is_fastplug(key):
    return key in FASTPLUG or bool(re.fullmatch(r'ipconfig\d+', key))


def agent_enabled(conf):
    value = conf.get('agent')
    if value is None:
        return False
    first = str(value).split(',')[0]
    if first.startswith('enabled='):
        first = first[len('enabled='):]
    return pve_schema.parse_boolean(first) == '1'


def config_schema():
    return pve_schema.load().paths[CONFIG_PATH]['PUT']['parameters']['properties']


def key_type(key):
    sch = pve_schema._prop(config_schema(), key)
    return (sch or {}).get('type')


def option_exists(key):
    """QemuServer.pm option_exists: a config key of the schema (numbered keys within their range)."""
    return key not in UPDATE_ONLY and pve_schema._prop(config_schema(), key) is not None


def wire_value(key, value):
    """How GET .../config encodes a value (§3): integers/booleans as numbers, `number` keys and memory
    as strings."""
    kind = key_type(key)
    if key == 'memory':
        return str(value)
    if kind in ('integer', 'boolean'):
        try:
            return int(value)
        except (TypeError, ValueError):
            return value
    if kind == 'number':
        return str(value)
    return value


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
