"""A seed's leftover VM images: volumes of a vmid that no config names (a VM destroyed without
`destroy-unreferenced-disks`, a failed create), seeded as a storage's `volumes` (tests/pvesim/README.md).
pve-storage 9.1.7 Plugin.pm `find_free_diskname` / `get_next_vm_diskname` (the numbers the storage lists
are not given again), LVMPlugin.pm `status` (every LV counts), qemu-server 9.2.6 QemuServer.pm
`destroy_vm` (`$purge_unreferenced`: `vdisk_list` of the vmid's images, each freed)."""

import copy
import json
import os

from conftest import Q, create, ok, run, volumes

GIB = 1024 ** 3
SEEDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'seeds')


def _seed(tmp_path):
    with open(os.path.join(SEEDS, 'default.json'), encoding='utf-8') as f:
        seed = json.load(f)
    seed['storages'] = copy.deepcopy(seed['storages'])
    seed['storages']['thick'] = {'type': 'lvm', 'vgname': 'thick', 'content': 'images', 'total': 10 * GIB,
                                 'volumes': {'vm-150-disk-0': {'size': 4 * GIB, 'vmid': 150}}}
    path = tmp_path / 'leftover.json'
    path.write_text(json.dumps(seed))
    return str(path)


def test_a_leftover_volume_is_listed_counted_skipped_and_freed_only_with_unreferenced_disks(sim, tmp_path):
    sim.reset(_seed(tmp_path))
    listed = volumes(sim, 'thick')
    assert {v: (i['size'], i['vmid']) for v, i in listed.items()} == {'thick:vm-150-disk-0': (4 * GIB, 150)}
    assert sim.api('GET', '/nodes/pve1/storage/thick/status')['avail'] == 6 * GIB
    # find_free_diskname: disk-0 is taken on the storage, the new VM's first disk is disk-1
    cfg = create(sim, 150, scsi0='thick:1')
    assert cfg['scsi0'].startswith('thick:vm-150-disk-1,')
    # destroy_vm without destroy-unreferenced-disks frees what the config names only
    ok(run(sim, 'DELETE', Q + '/150'))
    assert set(volumes(sim, 'thick')) == {'thick:vm-150-disk-0'}
    create(sim, 150, scsi0='thick:1')
    ok(run(sim, 'DELETE', Q + '/150', {'destroy-unreferenced-disks': 1}))
    assert volumes(sim, 'thick') == {}
    assert sim.api('GET', '/nodes/pve1/storage/thick/status')['avail'] == 10 * GIB
