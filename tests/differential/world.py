"""The differential test's worlds: a pvesim seed drawn from a random number generator.

A world is the default or the ceph seed plus generated VMs (running, stopped, paused, locked,
templates, protected, with snapshots, pending values, linked clones, disks on every storage type
pvesim has) and a generated API token whose user has a random subset of the VM privileges on
random ACL paths. `world(rng)` returns the seed as a plain dict (JSON), `token_env(world)` the
`PROXMOX_*` variables of the token a scenario's task runs with. Everything here is data: the
same seed number gives the same world.
"""

import copy
import json
import os
import re

SEED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'pvesim', 'seeds')

# The privileges of the seeds' ansible@pve token: the pool a generated user draws from.
PRIVILEGES = [
    'VM.Allocate', 'VM.Audit', 'VM.Clone', 'VM.Config.CDROM', 'VM.Config.CPU', 'VM.Config.Cloudinit',
    'VM.Config.Disk', 'VM.Config.HWType', 'VM.Config.Memory', 'VM.Config.Network', 'VM.Config.Options',
    'VM.Console', 'VM.GuestAgent.Audit', 'VM.Migrate', 'VM.PowerMgmt', 'VM.Snapshot', 'VM.Backup',
    'Datastore.AllocateSpace', 'Datastore.Audit', 'Sys.Audit', 'SDN.Use', 'SDN.Audit', 'Pool.Audit',
]
GEN_USER, GEN_TOKEN, GEN_SECRET = 'diff@pve', 'gen', 'd1ff0000-5eed-4c0d-9e1a-000000000001'
FULL_TOKEN = ('ansible@pve', 'automation', '5e3c1f0a-7b2d-4c8e-9f61-0d2a4b6c8e10')

# Storages added to a world so that every storage type pvesim knows holds disks
# (tests/pvesim/pvesim/storage_types.py: dir, nfs, cifs, btrfs, zfspool, lvm, lvmthin, rbd).
EXTRA_STORAGES = {
    'gen-btrfs': {'type': 'btrfs', 'path': '/mnt/gen-btrfs', 'content': 'images', 'total': 200 * 1024 ** 3},
    'gen-cifs': {'type': 'cifs', 'server': '10.0.0.9', 'share': 'vm', 'path': '/mnt/pve/gen-cifs',
                 'content': 'images,iso', 'total': 200 * 1024 ** 3},
    'gen-zfs': {'type': 'zfspool', 'pool': 'tank/vm', 'sparse': 1, 'content': 'images', 'total': 200 * 1024 ** 3},
    'gen-rbd': {'type': 'rbd', 'pool': 'gen', 'krbd': 0, 'content': 'images', 'total': 200 * 1024 ** 3},
    'gen-lvm': {'type': 'lvm', 'vgname': 'gen', 'shared': 0, 'content': 'images', 'total': 50 * 1024 ** 3},
}
FILE_TYPES = ('dir', 'nfs', 'cifs', 'btrfs')
# Types shared without `shared 1` (Plugin.pm @SHARED_STORAGE as pvesim's storage_types.py has it).
SHARED_TYPES = ('iscsi', 'nfs', 'cifs', 'rbd', 'cephfs', 'iscsidirect', 'zfs', 'drbd', 'pbs')
# Types whose volumes take snapshots (qcow2 files aside): pve-storage's volume_has_feature.
SNAP_TYPES = ('lvmthin', 'zfspool', 'rbd')
# A VM's lock. Not `create` or `clone`: a VM being made is waited for (tests/e2e/test_inflight.py and
# test_stale_lock.py have those), which would make a scenario take the task's whole timeout.
LOCKS = ['backup', 'snapshot', 'migrate', 'rollback', 'suspended', 'snapshot-delete']
GEN_VMIDS = list(range(200, 212))
# QEMU versions a world's nodes run (seed `node_qemu`, pvesim node_qemu.py): below, at and above the machines drawn
# (machine_type), and release candidates (micro 90 and above), whose start skips the machine check (R-power-171).
NODE_QEMU = ['8.1.5', '9.0.2', '9.2.0', '10.0.2', '10.1.2', '10.0.90', '10.2.91']
# Machine versions and revisions drawn: below, at and above the nodes' QEMU; +pveN within and above qemu-server's
# table (Machine.pm $PVE_MACHINE_VERSION: 4.1 has pve2, 9.2 and 10.0 pve1, 11.0 pve2, the rest none).
MACHINE_VERSIONS = ['4.1', '8.1', '9.0', '9.2', '10.0', '10.1', '10.2', '11.0']
MACHINE_REVISIONS = ['', '', '+pve0', '+pve1', '+pve2', '+pve3']
# A PCI mapping with two devices on one node (PCI.pm parse_hostpci_devices' alternate devices, R-power-157) and one
# with a device on each node, and the node's devices a `host` id may name or miss (node_pci.py, R-power-172).
PCI_MAPPINGS = [{'id': 'igds', 'map': ['node=pve1,path=0000:00:02.0,id=8086:3e92',
                                       'node=pve1,path=0000:01:00.0,id=8086:3e92']},
                {'id': 'gpu', 'map': ['node=pve1,path=0000:01:00.0,id=8086:3e92',
                                      'node=pve2,path=0000:01:00.0,id=8086:3e92']}]
NODE_PCI = {'0000:00:02.0': {'id': '8086:3e92'}, '0000:01:00.0': {'id': '8086:3e92'}}
HOSTPCI = ['host=0000:01:00.0', 'host=01:00', 'host=0000:03:00.0', 'host=0000:00:02.0;0000:01:00.0',
           'mapping=igds,legacy-igd=1', 'mapping=gpu', 'mapping=gpu,pcie=1', 'mapping=igds']


def load_seed(name):
    with open(os.path.join(SEED_DIR, name + '.json'), encoding='utf-8') as f:
        return json.load(f)


def image_storages(seed):
    return sorted(sid for sid, s in seed['storages'].items() if 'images' in s.get('content', ''))


def iso_volumes(seed):
    return sorted('%s:%s' % (sid, name) for sid, s in seed['storages'].items()
                  for name in (s.get('files') or {}) if name.startswith('iso/'))


def volume(seed, sid, vmid, n, template=False, fmt=None):
    """A volume id as the storage type names it (Plugin.pm, LVMPlugin.pm, RBDPlugin.pm, ZFSPoolPlugin.pm)."""
    kind = seed['storages'][sid]['type']
    prefix = 'base' if template else 'vm'
    if kind in FILE_TYPES:
        ext = fmt or ('qcow2' if seed['storages'][sid].get('format') == 'qcow2' or kind in ('nfs', 'cifs') else 'raw')
        return '%s:%d/%s-%d-disk-%d.%s' % (sid, vmid, prefix, vmid, n, ext)
    return '%s:%s-%d-disk-%d' % (sid, prefix, vmid, n)


def snapshot_capable(seed, vol):
    sid, name = vol.split(':', 1)
    kind = seed['storages'][sid]['type']
    return kind in SNAP_TYPES or name.endswith('.qcow2')


def machine_type(rng):
    """A `machine` value: unpinned (`q35`, `pc`) or pinned (`pc-i440fx-X.Y[+pveN][.pxe]`, `pc-q35-...`, sometimes as
    `type=` with another option), its version below, at or above the nodes' QEMU (R-power-171)."""
    if rng.random() < 0.3:
        return rng.choice(['q35', 'pc', 'pc-q35', 'type=q35,viommu=virtio'])
    kind = rng.choice(['pc-i440fx-', 'pc-q35-', 'pc-'])
    value = kind + rng.choice(MACHINE_VERSIONS) + rng.choice(MACHINE_REVISIONS) + ('.pxe' if rng.random() < 0.15 else '')
    return 'type=%s,viommu=virtio' % value if rng.random() < 0.1 else value


def state_volume(seed, sid, vmid):
    """A hibernation's state volume on `sid` (QemuServer.pm vm_suspend: vm-<vmid>-state-suspend-<date>)."""
    name = 'vm-%d-state-suspend-2026-12-01' % vmid
    if seed['storages'][sid]['type'] in FILE_TYPES:
        return '%s:%d/%s.raw' % (sid, vmid, name)
    return '%s:%s' % (sid, name)


def _mac(rng):
    return 'BC:24:11:%02X:%02X:%02X' % (rng.randrange(256), rng.randrange(256), rng.randrange(256))


def gen_vm(rng, seed, vmid, templates):
    """One generated VM (a seed's `vms` entry)."""
    stores = image_storages(seed)
    template = rng.random() < 0.12
    status = 'stopped' if template else rng.choice(['stopped', 'stopped', 'running', 'running', 'paused'])
    config = {'cores': rng.choice([1, 2, 4]), 'memory': str(rng.choice([512, 1024, 2048, 4096])),
              'ostype': rng.choice(['l26', 'l26', 'win11', 'win10', 'win2k22', 'other']),
              'scsihw': 'virtio-scsi-single',
              'net0': 'virtio=%s,bridge=%s' % (_mac(rng), rng.choice(seed['bridges']))}
    if rng.random() < 0.3:
        config['sockets'] = rng.choice([1, 2])
    if rng.random() < 0.25:
        config['balloon'] = str(rng.choice([0, 256, 512]))
    if rng.random() < 0.2:
        config['tags'] = rng.choice(['web', 'db;prod', 'gen'])
    if rng.random() < 0.2:
        config['description'] = 'generated'
    if rng.random() < 0.2:
        config['agent'] = 'enabled=1'
    n = 0
    bus_slots = ['scsi0', 'scsi1', 'virtio0', 'sata0', 'scsi2']
    linked_from = None
    if templates and not template and rng.random() < 0.2:
        linked_from = rng.choice(templates)
    for i, key in enumerate(bus_slots[:rng.choice([1, 1, 2, 3])]):
        if i == 0 and linked_from is not None:
            base_vol, size, _ = linked_from
            sid, base = base_vol.split(':', 1)
            kind = seed['storages'][sid]['type']
            if kind in FILE_TYPES:
                own = '%d/vm-%d-disk-%d.%s' % (vmid, vmid, n, base.rsplit('.', 1)[-1])
                config[key] = '%s:%s/%s,size=%s' % (sid, base, own, size)
            else:
                config[key] = '%s:%s/vm-%d-disk-%d,size=%s' % (sid, base, vmid, n, size)
            n += 1
            continue
        sid = rng.choice(stores)
        size = rng.choice(['1G', '4G', '8G', '32G'])
        kind = seed['storages'][sid]['type']
        tmpl = template and kind != 'lvm'  # a template keeps vm- disks on thick LVM (LVMPlugin.pm)
        config[key] = '%s,size=%s' % (volume(seed, sid, vmid, n, tmpl), size)
        n += 1
    config['boot'] = 'order=scsi0;net0' if rng.random() < 0.8 else 'order=net0'
    if rng.random() < 0.15:
        config['unused0'] = volume(seed, rng.choice(stores), vmid, n)
        n += 1
    isos = iso_volumes(seed)
    if rng.random() < 0.25:
        config['ide2'] = (rng.choice(isos) + ',media=cdrom') if isos and rng.random() < 0.7 else 'none,media=cdrom'
    if rng.random() < 0.1:
        config['efidisk0'] = '%s,efitype=4m,size=4M' % volume(seed, rng.choice(stores), vmid, n)
        config['bios'] = 'ovmf'
        n += 1
    if rng.random() < 0.1:
        config['net1'] = 'e1000=%s,bridge=vmbr1,tag=%d' % (_mac(rng), rng.randrange(1, 4095))
    if rng.random() < 0.3:
        config['machine'] = machine_type(rng)
    if rng.random() < 0.3 and seed.get('mappings'):
        config['hostpci0'] = rng.choice(HOSTPCI)
        if 'legacy-igd' in config['hostpci0'] or rng.random() < 0.3:
            config['vga'] = 'none'
    if not template and status != 'stopped' and rng.random() < 0.6 and (
            'hostpci0' in config or re.match(r'^(type=)?pc-', config.get('machine', ''))):
        status = 'stopped'  # what a start checks: most of these VMs are stopped, so that a start runs it
    if not template and rng.random() < 0.15:
        # `suspended` only on a stopped VM: RunState.pm vm_suspend sets it once the state is saved and QEMU stopped
        config['lock'] = rng.choice([lock for lock in LOCKS if status == 'stopped' or lock != 'suspended'])
    hibernated = not template and status == 'stopped' and 'lock' not in config and rng.random() < 0.1
    if hibernated:
        # hibernated (vm_suspend with todisk): its state volume, and the machine it ran with, which a resume
        # runs again (vm_start_nolock's forcemachine, R-power-171)
        config['lock'] = 'suspended'
        config['vmstate'] = state_volume(seed, rng.choice(stores), vmid)
        config['runningmachine'] = rng.choice(['pc-q35-', 'pc-i440fx-']) + rng.choice(MACHINE_VERSIONS[1:]) + \
            rng.choice(['+pve0', '+pve1'])
    if rng.random() < 0.1:
        config['protection'] = 1
    name = 'gen-%d' % vmid if rng.random() < 0.9 else 'gen-twin'
    node = rng.choice(seed['nodes'])
    base_store = seed['storages'][linked_from[0].split(':', 1)[0]] if linked_from is not None else {}
    if linked_from is not None and not (base_store.get('shared') or base_store.get('type') in SHARED_TYPES):
        node = linked_from[2]  # a linked clone of a base on local storage is on the base's node (clone_vm)
    vm = {'vmid': vmid, 'name': name, 'node': node,
          'status': 'running' if status == 'paused' else status, 'template': template, 'config': config}
    if status == 'paused':
        vm['qmpstatus'] = 'paused'
    if vm['status'] == 'running' and rng.random() < 0.25:
        # the machine QEMU runs it with (status/current): before 10.0 a drive without `aio` was io_uring, which a
        # mirror to a storage that does not allow it refuses (R-clone-171)
        vm['running_machine'] = rng.choice(['pc-q35-', 'pc-i440fx-']) + rng.choice(['8.1', '9.2', '10.0']) + '+pve0'
    if not template and rng.random() < 0.15:
        vm['pending'] = rng.choice([{'memory': '8192'}, {'cores': 8}, {'description': None},
                                    {'net0': 'e1000=%s,bridge=vmbr0' % _mac(rng)}, {'onboot': 1}])
    disks = [v.split(',')[0] for k, v in config.items() if re.match(r'^(scsi|virtio|sata|efidisk)\d+$', k)]
    if not template and rng.random() < 0.15 and all(snapshot_capable(seed, d) for d in disks):
        snap = copy.deepcopy(config)
        snap.pop('lock', None)
        snap.update({'snaptime': 1767225600, 'description': 'before upgrade'})
        vm['snapshots'] = {'before-upgrade': snap}
        config['parent'] = 'before-upgrade'
    return vm


def gen_acl(rng, seed, vmids):
    """A random ACL: one to three paths, each with a random subset of PRIVILEGES."""
    paths = ['/vms', '/storage', '/sdn/zones/localnetwork'] + ['/nodes/%s' % n for n in seed['nodes']] + \
            ['/vms/%d' % v for v in vmids] + ['/storage/%s' % s for s in seed['storages']]
    acl = {rng.choice(['/', '/', '/vms']): sorted(p for p in PRIVILEGES if rng.random() < 0.9)}
    for _ in range(rng.choice([0, 1, 1, 2])):
        keep = 0.9 if rng.random() < 0.6 else 0.5
        privs = set(p for p in PRIVILEGES if rng.random() < keep)
        if rng.random() < 0.8:
            privs.add('VM.Audit')  # else most tasks stop at "does not exist"
        acl[rng.choice(paths)] = sorted(privs)
    if seed.get('mappings') and rng.random() < 0.6:
        acl['/mapping'] = sorted(p for p in ('Mapping.Audit', 'Mapping.Use') if rng.random() < 0.8)
    return acl


def gone_volumes(rng, seed, vmids):
    """One or two volumes of the generated VMs on a file storage removed behind PVE's back (seed `gone`,
    activation.py): a drive, an unused volume or a snapshot's volume (R-any-115, R-any-116, R-power-158)."""
    named = []
    for vm in seed['vms']:
        if vm['vmid'] not in vmids:
            continue
        sections = [vm['config']] + list((vm.get('snapshots') or {}).values())
        for section in sections:
            for key, value in section.items():
                if re.match(r'^(scsi|virtio|sata|efidisk|unused)\d+$', key) or key == 'vmstate':
                    vol = str(value).split(',')[0]
                    sid = vol.split(':', 1)[0]
                    if sid in seed['storages'] and seed['storages'][sid].get('type', 'dir') in FILE_TYPES:
                        named.append(vol)
    for vol in rng.sample(sorted(set(named)), min(len(set(named)), rng.choice([1, 1, 2]))):
        sid, name = vol.split(':', 1)
        seed['storages'][sid].setdefault('gone', []).append(name)


def world(rng):
    """A generated seed (a dict): base seed, extra storages, generated VMs and token user."""
    seed = load_seed(rng.choice(['default', 'default', 'ceph']))
    for sid in sorted(EXTRA_STORAGES):
        if rng.random() < 0.4:
            seed['storages'][sid] = copy.deepcopy(EXTRA_STORAGES[sid])
    if rng.random() < 0.8:
        # each node's QEMU (R-power-171): older, newer or a release candidate
        seed['node_qemu'] = dict((node, rng.choice(NODE_QEMU)) for node in seed['nodes'] if rng.random() < 0.9)
    if rng.random() < 0.25:
        seed['mappings'] = {'pci': copy.deepcopy(PCI_MAPPINGS)}
        seed['node_devices'] = {'pve1': {'pci': copy.deepcopy(NODE_PCI)}}
        if rng.random() < 0.5:  # the full token sees the mappings (else its check run says PVE may refuse)
            seed['users']['ansible@pve']['acl']['/mapping'] = ['Mapping.Audit', 'Mapping.Use']
    templates = []
    for vm in seed['vms']:
        if vm.get('template'):
            for key in ('scsi0',):
                if key in vm['config']:
                    vol, _, rest = vm['config'][key].partition(',')
                    size = [p[5:] for p in rest.split(',') if p.startswith('size=')]
                    templates.append((vol, size[0] if size else '8G', vm.get('node', 'pve1')))
    vmids = rng.sample(GEN_VMIDS, rng.choice([1, 2, 3, 4, 5]))
    for vmid in sorted(vmids):
        vm = gen_vm(rng, seed, vmid, templates)
        seed['vms'].append(vm)
        if vm['template'] and not vm['config']['scsi0'].split(':', 1)[1].startswith('vm-'):
            vol = vm['config']['scsi0'].split(',')[0]
            templates.append((vol, vm['config']['scsi0'].split('size=')[1], vm['node']))
    if rng.random() < 0.2:
        gone_volumes(rng, seed, vmids)
    if rng.random() < 0.35:
        seed['users'][GEN_USER] = {'tokens': {GEN_TOKEN: GEN_SECRET},
                                   'acl': gen_acl(rng, seed, [v['vmid'] for v in seed['vms']])}
    if rng.random() < 0.2:
        members = [v['vmid'] for v in seed['vms'] if rng.random() < 0.4]
        seed['pools'] = {'gen-pool': {'vms': members}}
    seed['_comment'] = 'differential test world'
    return seed


def token_env(seed):
    """The PROXMOX_* token variables of the world's task: the generated user's token when the world has one."""
    if GEN_USER in seed.get('users', {}):
        user, token, secret = GEN_USER, GEN_TOKEN, GEN_SECRET
    else:
        user, token, secret = FULL_TOKEN
    return {'PROXMOX_USER': user, 'PROXMOX_TOKEN_ID': token, 'PROXMOX_TOKEN_SECRET': secret}


def interesting(seed):
    """The generated VMs whose config holds what the newest predicted refusals need (a pinned machine, a hibernation's
    runningmachine, a PCI device, a machine QEMU runs a mirror with, a volume gone from its storage): a task
    addresses them more often than the rest."""
    gone = set('%s:%s' % (sid, name) for sid, s in seed['storages'].items() for name in s.get('gone') or ())
    found = []
    for vm in seed['vms']:
        config = vm['config']
        named = json.dumps([config, vm.get('snapshots')])
        if vm['vmid'] in GEN_VMIDS and not vm.get('template') and (
                'hostpci0' in config or 'runningmachine' in config or 'running_machine' in vm
                or re.match(r'^(type=)?pc-', config.get('machine', '')) or any(v in named for v in gone)):
            found.append(int(vm['vmid']))
    return found


def vm_ids(seed):
    return [int(v['vmid']) for v in seed['vms']]
