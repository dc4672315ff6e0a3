"""The storage plugins' features as pve-storage 9.1.7 decides them (pvesim's storage_features.py,
docs/pve-semantics.md §51.1): what a clone copies or links (qemu-server 9.2.6 Qemu.pm `clone_vm`, which asks
Storage.pm `volume_has_feature` 'copy' or 'clone' of each drive, of the snapshot when one is cloned) and what
a disk moved to another VM needs (Qemu.pm `move_vm_disk`: 'rename'). Each plugin's own `volume_has_feature`
table decides: ZFSPoolPlugin.pm copies no snapshot, LVMPlugin.pm only a qcow2 one, ZFSPlugin.pm (ZFS over
iSCSI) renames nothing."""

import json

from conftest import Q, config, error_of, ok, run

SNAP = {'cores': 1, 'memory': '1024', 'snaptime': 1767225600}


def _vm(vmid, snapshots=None, **drives):
    vm = {'vmid': vmid, 'name': 'vm-%d' % vmid, 'node': 'pve1', 'status': 'stopped', 'template': False,
          'config': dict({'cores': 1, 'memory': '1024'}, **drives)}
    if snapshots:
        vm['snapshots'] = snapshots
    return vm


SEED = {
    'nodes': ['pve1', 'pve2'], 'bridges': ['vmbr0'],
    'storages': {
        'thin': {'type': 'lvmthin', 'vgname': 'pve', 'thinpool': 'data', 'content': 'images'},
        'tank': {'type': 'zfspool', 'pool': 'tank/vm', 'content': 'images'},
        'thick': {'type': 'lvm', 'vgname': 'vg0', 'content': 'images', 'total': 20 * 1024 ** 3},
        'zsan': {'type': 'zfs', 'pool': 'tank', 'portal': '10.0.0.9', 'target': 'iqn.2003-01.org.x:t',
                 'iscsiprovider': 'LIO', 'lio_tpg': 'tpg1', 'content': 'images'},
    },
    'users': {'root@pam': {'password': 'secret'},
              'ansible@pve': {'tokens': {'automation': '5e3c1f0a-7b2d-4c8e-9f61-0d2a4b6c8e10'}, 'acl': {'/': ['Administrator']}}},
    'vms': [
        _vm(120, {'before': dict(SNAP, scsi0='tank:vm-120-disk-0,size=1G')}, scsi0='tank:vm-120-disk-0,size=1G'),
        _vm(121, {'before': dict(SNAP, scsi0='thin:vm-121-disk-0,size=1G')}, scsi0='thin:vm-121-disk-0,size=1G'),
        _vm(122, {'before': dict(SNAP, scsi0='thin:vm-122-disk-0,size=1G', scsi1='thick:vm-122-disk-1,size=1G')},
            scsi0='thin:vm-122-disk-0,size=1G', scsi1='thick:vm-122-disk-1,size=1G'),
        _vm(123, scsi0='thin:vm-123-disk-0,size=1G', scsi1='zsan:vm-123-disk-1,size=1G',
            scsi2='tank:vm-123-disk-2,size=1G'),
        _vm(124, scsi0='thin:vm-124-disk-0,size=1G'),
    ],
}


def _reset(sim, tmp_path):
    path = tmp_path / 'storage_features.json'
    path.write_text(json.dumps(SEED))
    sim.reset(str(path))


def test_a_full_clone_of_a_snapshot_needs_a_storage_that_copies_snapshots(sim, tmp_path):
    _reset(sim, tmp_path)
    # ZFSPoolPlugin.pm volume_has_feature: copy => { base, current }, no 'snap'; clone_vm dies before its task
    err = error_of(sim.api, 'POST', Q + '/120/clone', {'newid': 220, 'full': 1, 'snapname': 'before'})
    assert (err.status, err.message) == (
        500, "Full clone feature is not supported for a snapshot of 'tank:vm-120-disk-0' (scsi0)")
    assert 220 not in [
        int(r['vmid']) for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})]
    # the same VM's current state copies ('current')
    ok(run(sim, 'POST', Q + '/120/clone', {'newid': 220, 'full': 1}))
    assert config(sim, 220)['scsi0'].startswith('tank:vm-220-disk-0,')
    # LvmThinPlugin.pm copies a snapshot
    ok(run(sim, 'POST', Q + '/121/clone', {'newid': 221, 'full': 1, 'snapname': 'before'}))
    # LVMPlugin.pm: copy => { snap => { qcow2 } }: a raw LV of the snapshot is refused, in the keys' order
    err = error_of(sim.api, 'POST', Q + '/122/clone', {'newid': 222, 'full': 1, 'snapname': 'before'})
    assert err.message == "Full clone feature is not supported for a snapshot of 'thick:vm-122-disk-1' (scsi1)"
    # a linked clone of a VM that is not a template: 'clone' of a current volume (LvmThinPlugin.pm: base, snap)
    err = error_of(sim.api, 'POST', Q + '/124/clone', {'newid': 224, 'full': 0})
    assert err.message == "Linked clone feature is not supported for 'thin:vm-124-disk-0' (scsi0)"


def test_a_disk_moved_to_another_vm_needs_a_storage_that_renames(sim, tmp_path):
    _reset(sim, tmp_path)
    # ZFSPlugin.pm volume_has_feature has no 'rename' (ZFSPoolPlugin.pm has it for 'current')
    err = error_of(sim.api, 'POST', Q + '/123/move_disk', {'disk': 'scsi1', 'target-vmid': 124})
    assert (err.status, err.message) == (500, 'Storage does not support moving of this disk to another VM')
    assert config(sim, 123)['scsi1'].startswith('zsan:vm-123-disk-1,')
    ok(run(sim, 'POST', Q + '/123/move_disk', {'disk': 'scsi2', 'target-vmid': 124, 'target-disk': 'scsi2'}))
    assert config(sim, 124)['scsi2'].startswith('tank:vm-124-disk-')
