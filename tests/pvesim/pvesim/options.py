"""Config options of a qemu VM: which keys exist, how GET config encodes their values, and the values of
the options other than drives and NICs (hotplug, tags, memory, boot order).

Sources: qemu-server 9.2.6 src/PVE/QemuServer.pm (QemuServer.pm), src/PVE/QemuServer/Memory.pm; pve-guest-common
6.0.2 src/PVE/GuestHelpers.pm; the PVE API schema of PUT /nodes/{node}/qemu/{vmid}/config.
"""

import base64
import hashlib
import os
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


# The keys of $confdesc that QemuServer.pm json_config_properties leaves out of the config endpoints' schema
CONFDESC_ONLY = ('parent', 'snaptime', 'vmstate', 'running-nets-host-mtu', 'runningmachine', 'runningcpu', 'meta')


def option_exists(key):
    """QemuServer.pm option_exists: a config key of $confdesc, that is of the schema (numbered keys within their
    range) or one json_config_properties leaves out of it."""
    return key in CONFDESC_ONLY or (key not in UPDATE_ONLY and pve_schema._prop(config_schema(), key) is not None)


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


# ---------------------------------------------------------------- cloud-init password (§29.5)

# qemu-server API2/Qemu.pm update_vm_api: a value matching this is already a crypt hash, stored as given.
CRYPT_HASH_RE = re.compile(r'^\$(?:[156]|2[ay])(\$.+){2}')
# qemu-server QemuServer/Helpers.pm windows_version: the ostypes of Windows guests.
WINDOWS_OSTYPE_RE = re.compile(r'^(?:wxp|w2k3|w2k|w2k8|wvista|win\d+)$')
_ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'


def sha256_crypt(password, salt, rounds=5000):
    """SHA-256-crypt (`$5$`, Ulrich Drepper's "Unix crypt using SHA-256 and SHA-512"), what the C
    library's crypt(3) computes for pve-common Tools.pm encrypt_pw; default rounds, salt up to 16."""
    h = lambda data: hashlib.sha256(data).digest()  # noqa: E731
    p, s = password.encode(), salt.encode()[:16]
    b = h(p + s + p)
    a = p + s + (b * (len(p) // 32 + 1))[:len(p)]
    n = len(p)
    while n:
        a += b if n & 1 else p
        n >>= 1
    c = h(a)
    p_seq = (h(p * len(p)) * (len(p) // 32 + 1))[:len(p)]
    s_seq = (h(s * (16 + c[0])) * 2)[:len(s)]
    for i in range(rounds):
        c = h((p_seq if i % 2 else c) + (s_seq if i % 3 else b'') + (p_seq if i % 7 else b'') + (c if i % 2 else p_seq))
    out = ''
    order = [(0, 10, 20), (21, 1, 11), (12, 22, 2), (3, 13, 23), (24, 4, 14), (15, 25, 5), (6, 16, 26),
             (27, 7, 17), (18, 28, 8), (9, 19, 29)]
    for x, y, z in order + [(None, 31, 30)]:
        w = ((c[x] if x is not None else 0) << 16) | (c[y] << 8) | c[z]
        for _ in range(4 if x is not None else 3):
            out += _ITOA64[w & 0x3f]
            w >>= 6
    prefix = '$5$' if rounds == 5000 else '$5$rounds={0}$'.format(rounds)
    return '{0}{1}${2}'.format(prefix, s.decode(), out)


def encrypt_pw(password):
    """pve-common Tools.pm encrypt_pw: `$5$` with an 8-character salt from a SHA-1 base64, `+` made `X`."""
    salt = base64.b64encode(hashlib.sha1(os.urandom(16)).digest()).decode()[:8].replace('+', 'X')
    return sha256_crypt(password, salt)


def stored_cipassword(value, ostype):
    """Qemu.pm update_vm_api: a Windows guest's password and a value already hashed are stored as given."""
    if WINDOWS_OSTYPE_RE.match(ostype or '') or CRYPT_HASH_RE.match(value):
        return value
    return encrypt_pw(value)
