"""Write the benchmark's pvesim seed: the default world plus N stopped VMs with one disk and one NIC;
and name the default world's template, which the fleet clones.

    seed.py OUT.json [--vms 50] [--first-vmid 1001]

VM i (0-based) is vmid FIRST+i, named bench-NNN, on pve1 or pve2 in turn, with `scsi0`
`local-lvm:vm-<vmid>-disk-0,size=8G`, `net0` `virtio=BC:24:11:BE:xx:yy,bridge=vmbr0`, 1 core and
1024 MiB. The values are plain (no options a task would not name), so a task naming the same values
is a no-op for both collections: community.proxmox's proxmox_disk compares the whole drive dict and
proxmox_nic the raw net string.
"""

import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SEED = os.path.join(os.path.dirname(HERE), 'tests', 'pvesim', 'seeds', 'default.json')
NODES = ('pve1', 'pve2')


def bench_vm(i, vmid):
    return {
        'vmid': vmid,
        'name': 'bench-%03d' % (i + 1),
        'node': NODES[i % len(NODES)],
        'status': 'stopped',
        'config': {
            'boot': 'order=scsi0;net0',
            'cores': 1,
            'memory': '1024',
            'name': 'bench-%03d' % (i + 1),
            'net0': 'virtio=BC:24:11:BE:%02X:%02X,bridge=vmbr0' % (vmid // 256 % 256, vmid % 256),
            'ostype': 'l26',
            'scsi0': 'local-lvm:vm-%d-disk-0,size=8G' % vmid,
            'scsihw': 'virtio-scsi-single',
        },
    }


def template():
    """The default seed's template, which the fleet clones: its name, vmid, node, and its first
    disk's key and size (e.g. `scsi0`, `8G`)."""
    with open(DEFAULT_SEED, encoding='utf-8') as f:
        vm = next(v for v in json.load(f)['vms'] if v.get('template'))
    disk = next(k for k in sorted(vm['config']) if k.startswith(('scsi', 'virtio', 'sata')) and k[-1].isdigit())
    size = dict(kv.split('=', 1) for kv in vm['config'][disk].split(',')[1:] if '=' in kv)['size']
    return {'name': vm['name'], 'vmid': vm['vmid'], 'node': vm['node'], 'disk': disk, 'size': size}


def make_seed(vms, first_vmid):
    with open(DEFAULT_SEED, encoding='utf-8') as f:
        seed = json.load(f)
    seed['_comment'] = 'ferro.proxmox benchmark world: the default seed plus %d VMs (bench/seed.py)' % vms
    seed['vms'] = list(seed['vms']) + [bench_vm(i, first_vmid + i) for i in range(vms)]
    return seed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('out')
    parser.add_argument('--vms', type=int, default=50)
    parser.add_argument('--first-vmid', type=int, default=1001)
    args = parser.parse_args()
    with open(args.out, 'w', encoding='utf-8') as f:
        json.dump(make_seed(args.vms, args.first_vmid), f, indent=1)


if __name__ == '__main__':
    main()
