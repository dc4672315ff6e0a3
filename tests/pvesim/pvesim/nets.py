"""Property strings of NICs (`netN`), as qemu-server parses and prints them.

Sources: qemu-server 9.2.6 src/PVE/QemuServer/Network.pm `parse_net`/`print_net`, src/PVE/QemuServer.pm
`vmconfig_update_net`; pve-common JSONSchema.pm `print_property_string`.
"""

import re

from fakepve.qemu import NET_MODELS

from .options import bool_text

NET_KEY = re.compile(r'^net(\d+)$')
# NIC options whose change needs an unplug and replug (QemuServer.pm vmconfig_update_net).
NET_REPLUG_OPTS = ('model', 'macaddr', 'queues', 'mtu')
NET_BOOLS = ('firewall', 'link_down', 'host-tunnel')


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


def canon_net(value, random_mac):
    """parse_net + print_net: booleans as 1/0, a new MAC when none is given, upper-case MAC
    (docs/pve-semantics.md §9, §20)."""
    net = parse_net(value)
    for key in NET_BOOLS:
        if key in net:
            net[key] = bool_text(net[key])
    if not net.get('macaddr'):
        net['macaddr'] = random_mac()
    net['macaddr'] = net['macaddr'].upper()
    return print_net(net)
