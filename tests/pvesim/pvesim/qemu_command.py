"""What QEMU's command line build refuses of a VM's config alone at start, beyond values.py: hugepages without NUMA, a
custom NUMA topology that does not add up, a virtio NIC's MTU below IP's minimum, virtio-fs ACLs on a Windows guest.

Sources: qemu-server 9.2.6 src/PVE/QemuServer.pm `config_to_command` (the order: USB.pm `get_usb_devices`, the CPU count, Memory.pm `config`, then
`assert_clipboard_config`, the NICs, then Virtiofs.pm `config`), `print_netdevice_full`; src/PVE/QemuServer/Memory.pm
`config` (hugepages, the `numaN` loop, the total); src/PVE/QemuServer/Virtiofs.pm `assert_virtiofs_config`;
src/PVE/QemuServer/Helpers.pm `windows_version`; docs/pve-semantics.md §59. pvesim has no host hugepages, NUMA nodes
or bridges to look at: where PVE would look at them next (hugepages with NUMA, a node's `hostnodes`), it stops.
"""

import re

from . import qemu_cpu


def _set(value):
    return value not in (None, '', '0', 0)


def _props(value, default_key=''):
    """A property string as a dict; the first part without `=` under `default_key` (the format's default key)."""
    out = {}
    for i, part in enumerate(str(value or '').split(',')):
        key, eq, val = part.partition('=')
        if eq:
            out[key] = val
        elif i == 0:
            out[default_key] = part
    return out


def numa_error(conf, hotplug_memory, static_memory):
    """Memory.pm config, after its hot-plug checks: `die "numa needs to be enabled to use hugepages"`; with NUMA, each
    `numaN` (N < $MAX_NUMA, 8) needs `memory` ("missing NUMA node$i memory value") and, after print_mem_object,
    `cpus` ("missing NUMA node$i cpus"); `hostnodes` go to print_numa_hostnodes (the host); last the nodes' total
    against the static memory."""
    if _set(conf.get('hugepages')) and not _set(conf.get('numa')):
        return 'numa needs to be enabled to use hugepages'
    if not _set(conf.get('numa')) or hotplug_memory or _set(conf.get('hugepages')):
        return None
    total = 0
    for i in range(8):
        node = conf.get('numa{0}'.format(i))
        if not _set(node):
            continue
        if qemu_cpu.numa_range_error(node):
            return qemu_cpu.numa_range_error(node)  # Memory.pm parse_numa, before the node's memory (§61)
        props = _props(node)
        memory = int(props.get('memory') or 0)
        if not memory:
            return 'missing NUMA node{0} memory value'.format(i)
        total += memory
        if props.get('cpus', props.get('')) is None:
            return 'missing NUMA node{0} cpus'.format(i)
        if 'hostnodes' in props:
            return None
    if total and total != static_memory:
        return 'total memory for NUMA nodes must be equal to vm static memory'
    return None


def mtu_error(conf):
    """QemuServer.pm print_netdevice_full, for net0..net31 in order: a virtio NIC on a bridge whose `mtu` is neither 1
    (the bridge's) nor at least 576."""
    for i in range(32):
        net = conf.get('net{0}'.format(i))
        if not net:
            continue
        props = _props(net)
        model = str(net).split(',')[0].split('=')[0]
        mtu = props.get('mtu')
        if model == 'virtio' and props.get('bridge') and mtu is not None and int(mtu) != 1 and int(mtu) < 576:
            return "netdev net{0}: MTU '{1}' is smaller than the IP minimum MTU '576'".format(i, mtu)
    return None


def windows_version(ostype):
    """Helpers.pm windows_version: 5 (wxp, w2k, w2k3), 6 (w2k8, wvista), N (winN), else 0."""
    ostype = str(ostype or '')
    if ostype in ('wxp', 'w2k', 'w2k3'):
        return 5
    if ostype in ('w2k8', 'wvista'):
        return 6
    match = re.fullmatch(r'win(\d+)', ostype)
    return int(match.group(1)) if match else 0


def usb_error(conf):
    """USB.pm get_usb_devices (config_to_command, after the PCI devices, before the CPU count): usb5 and above only
    with qemu-xhci, a machine version from 7.1 (the pinned `machine`'s, else the node's QEMU, which is newer) and
    ostype l26 or Windows above 7 (assert_usb_index_is_useable). pvesim has no PCI devices to look at first."""
    machine = _props(conf.get('machine') or '')
    version = re.search(r'-(\d+)\.(\d+)', machine.get('type', machine.get('', '')))
    recent = version is None or (int(version.group(1)), int(version.group(2))) >= (7, 1)
    ostype = conf.get('ostype')
    xhci = recent and ostype is not None and (ostype == 'l26' or windows_version(ostype) > 7)
    for i in range(14):
        if conf.get('usb{0}'.format(i)) and i >= 5 and not xhci:
            return 'using usb{0} is only possible with machine type >= 7.1 and ostype l26 or windows > 7'.format(i)
    return None


def virtiofs_error(conf):
    """Virtiofs.pm assert_virtiofs_config for each `virtiofsN`: `expose-acl` with Helpers.pm windows_version true."""
    windows = windows_version(conf.get('ostype')) > 0
    for i in range(10):
        fs = conf.get('virtiofs{0}'.format(i))
        if fs and windows and _props(fs).get('expose-acl') in ('1', 'true', 'yes', 'on'):
            return ('Please disable ACLs for virtiofs on Windows VMs, otherwise the virtiofs shared directory cannot '
                    'be mounted.')
    return None
