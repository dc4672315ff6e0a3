"""A stored drive qemu-server 9.2.6 cannot parse, or cannot parse in another slot (pvesim's strict_drives.py,
docs/pve-semantics.md §65.1): src/PVE/QemuServer/Drive.pm `parse_drive`, as src/PVE/API2/Qemu.pm `clone_vm`
(`unable to parse drive options for '<key>'`) and `move_vm_disk` (to a storage: `disk '<disk>' has no associated
volume`; to another VM: `failed to parse source disk - ...`, then, in the target slot's format, `failed to parse
source disk for target disk format - ...`) use it before their tasks."""

import json

from conftest import Q, config, error_of, ok, run


def _vm(vmid, **drives):
    return {'vmid': vmid, 'name': 'vm-%d' % vmid, 'node': 'pve1', 'status': 'stopped', 'template': False,
            'config': dict({'cores': 1, 'memory': '1024', 'scsi0': 'thin:vm-%d-disk-0,size=1G' % vmid}, **drives)}


USERS = {'root@pam': {'password': 'secret'},
         'ansible@pve': {'tokens': {'automation': '5e3c1f0a-7b2d-4c8e-9f61-0d2a4b6c8e10'}, 'acl': {'/': ['Administrator']}}}

SEED = {
    'nodes': ['pve1'], 'bridges': ['vmbr0'],
    'storages': {'thin': {'type': 'lvmthin', 'vgname': 'pve', 'thinpool': 'data', 'content': 'images'},
                 'files': {'type': 'dir', 'path': '/mnt/files', 'content': 'images'}},
    'users': USERS,
    # a config written by hand on the node: `cache=fast` is no cache mode; a geometry key PVE skips
    'vms': [_vm(150, scsi1='thin:vm-150-disk-1,cache=fast,size=1G', scsi2='thin:vm-150-disk-2,cyls=4,size=1G',
                scsi3='thin:vm-150-disk-3,ssd=1,size=1G'),
            _vm(151)],
}


def test_a_drive_pve_cannot_parse_refuses_clone_and_move(sim, tmp_path):
    path = tmp_path / 'strict.json'
    path.write_text(json.dumps(SEED))
    sim.reset(str(path))
    before = config(sim, 150)
    assert "unable to parse drive options for 'scsi1'" in error_of(
        sim.api, 'POST', Q + '/150/clone', {'newid': 160, 'full': 1}).message
    assert error_of(sim.api, 'POST', Q + '/150/move_disk', {'disk': 'scsi1', 'storage': 'files'}).message \
        .startswith("disk 'scsi1' has no associated volume")
    reassign = {'disk': 'scsi1', 'target-vmid': 151, 'target-disk': 'scsi1'}
    assert 'failed to parse source disk - format error' in error_of(
        sim.api, 'POST', Q + '/150/move_disk', reassign).message
    # `ssd` is no option of a virtio slot
    reassign = {'disk': 'scsi3', 'target-vmid': 151, 'target-disk': 'virtio1'}
    assert 'failed to parse source disk for target disk format - invalid key in comma-separated list property: ssd' \
        in error_of(sim.api, 'POST', Q + '/150/move_disk', reassign).message
    assert config(sim, 150) == before
    # a skipped key parses; the same drive in a SCSI slot moves
    ok(run(sim, 'POST', Q + '/150/move_disk', {'disk': 'scsi2', 'storage': 'files'}))
    ok(run(sim, 'POST', Q + '/150/move_disk', {'disk': 'scsi3', 'target-vmid': 151, 'target-disk': 'scsi3'}))
