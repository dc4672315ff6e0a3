"""What qemu-server 9.2.6 refuses of a drive QEMU mirrors, a full copy of a running VM's drive by a disk move or a
clone (pvesim's mirror.py, docs/pve-semantics.md §58): src/PVE/QemuServer.pm `clone_disk` (`cannot move TPM state
while VM is running`) and `clone_disk_check_io_uring` with `storage_allows_io_uring_default` (a drive with
`aio=io_uring` towards an lvm or cifs storage), inside the task of Qemu.pm `move_vm_disk` (`storage migration
failed: `) and `clone_vm` (`clone failed: `)."""

import json

from conftest import Q, config, error_of, ok, run

GIB = 1024 ** 3
IO_URING = 'target storage is known to cause issues with aio=io_uring (used by current drive)'


def _vm(vmid, status, **drives):
    return {'vmid': vmid, 'name': 'vm-%d' % vmid, 'node': 'pve1', 'status': status, 'template': False,
            'config': dict({'cores': 1, 'memory': '1024', 'scsi0': 'thin:vm-%d-disk-0,size=1G' % vmid}, **drives)}


SEED = {
    'nodes': ['pve1'], 'bridges': ['vmbr0'],
    'storages': {'thin': {'type': 'lvmthin', 'vgname': 'pve', 'thinpool': 'data', 'content': 'images'},
                 'thick': {'type': 'lvm', 'vgname': 'vg0', 'content': 'images', 'total': 20 * GIB},
                 'files': {'type': 'dir', 'path': '/mnt/files', 'content': 'images'}},
    'users': {'root@pam': {'password': 'secret'},
              'ansible@pve': {'tokens': {'automation': '5e3c1f0a-7b2d-4c8e-9f61-0d2a4b6c8e10'},
                              'acl': {'/': ['Administrator']}}},
    'vms': [_vm(130, 'running', scsi1='thin:vm-130-disk-1,aio=io_uring,size=1G',
                tpmstate0='thin:vm-130-disk-2,size=4M,version=v2.0'),
            _vm(131, 'running', scsi1='thin:vm-131-disk-1,aio=io_uring,size=1G'),
            _vm(132, 'stopped', scsi1='thin:vm-132-disk-1,aio=io_uring,size=1G'),
            dict(_vm(133, 'running', scsi1='thin:vm-133-disk-1,size=1G'), running_machine='pc-i440fx-9.2+pve1'),
            _vm(134, 'running', scsi1='thin:vm-134-disk-1,size=1G')],
}


def _reset(sim, tmp_path):
    path = tmp_path / 'mirror.json'
    path.write_text(json.dumps(SEED))
    sim.reset(str(path))


def _move(sim, vmid, disk, storage):
    return run(sim, 'POST', Q + '/%d/move_disk' % vmid, {'disk': disk, 'storage': storage})


def test_a_running_vm_s_drive_is_not_mirrored_where_pve_refuses(sim, tmp_path):
    _reset(sim, tmp_path)
    before = config(sim, 130)
    # move_vm_disk's task: the TPM state of a running VM, then io_uring towards thick LVM
    assert _move(sim, 130, 'tpmstate0', 'files')['exitstatus'] == \
        'storage migration failed: cannot move TPM state while VM is running'
    assert _move(sim, 130, 'scsi1', 'thick')['exitstatus'] == 'storage migration failed: ' + IO_URING
    assert config(sim, 130) == before
    # a storage that takes io_uring, or a stopped VM (no mirror), moves
    ok(_move(sim, 130, 'scsi1', 'files'))
    assert config(sim, 130)['scsi1'].startswith('files:130/vm-130-disk-')
    ok(_move(sim, 132, 'scsi1', 'thick'))
    # clone_vm's task: a full clone of the running VM to thick LVM fails and leaves no VM behind
    status = run(sim, 'POST', Q + '/131/clone', {'newid': 140, 'full': 1, 'storage': 'thick'})
    assert status['exitstatus'] == 'clone failed: ' + IO_URING
    assert error_of(sim.api, 'GET', Q + '/140/config').status == 500
    ok(run(sim, 'POST', Q + '/131/clone', {'newid': 141, 'full': 1, 'storage': 'files'}))


def test_without_aio_the_running_machine_decides(sim, tmp_path):
    """clone_disk_check_io_uring without `aio`: Machine.pm get_current_qemu_machine (QMP query-machines), which
    QemuServer.pm vmstatus shows as status/current's `running-machine` ($machinecb); below 10.0 the source storage's
    default (storage_allows_io_uring_default: lvmthin allows it) is io_uring, and thick LVM refuses it."""
    _reset(sim, tmp_path)
    assert sim.api('GET', Q + '/133/status/current')['running-machine'] == 'pc-i440fx-9.2+pve1'
    assert sim.api('GET', Q + '/134/status/current')['running-machine'].startswith('pc-i440fx-10.')
    assert 'running-machine' not in sim.api('GET', Q + '/132/status/current')
    assert _move(sim, 133, 'scsi1', 'thick')['exitstatus'] == 'storage migration failed: ' + IO_URING
    status = run(sim, 'POST', Q + '/133/clone', {'newid': 142, 'full': 1, 'storage': 'thick'})
    assert status['exitstatus'] == 'clone failed: ' + IO_URING
    # a machine from 10.0 switches aio on the fly: moved
    ok(_move(sim, 134, 'scsi1', 'thick'))
