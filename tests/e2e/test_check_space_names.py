"""Check versus real, issue 28 follow-up: the free space and the volume names a check run predicts from its own
earlier tasks, as the real run will find them (docs/pve-semantics.md §40).

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must
agree task by task (test_check_vs_real.py's `run_batch` and `compare_row`):

1. space a predicted removal frees on a storage that reserves it (thick LVM, 10 GiB each): a VM removed
   (QemuServer.pm `destroy_vm` frees the volumes it owns; LVMPlugin.pm `free_image` removes the LV at once), a
   drive removed, a disk moved with `delete` (Qemu.pm `move_vm_disk`: `vdisk_free` of the source). A later
   allocation that the freed space lets fit must be predicted to fit, and one that still does not fit must fail
   alike;
2. the name of a new VM's volume where the storage already holds volumes of its vmid that no config names
   (Plugin.pm `find_free_diskname` lists the storage): a create, a full clone and a disk added by an update;
   and where an earlier task of the run frees such a volume, the name it gives back.
"""

import copy
import json
import os

from test_check_vs_real import Row, SEED_DIR, _vm, _volume_is, assert_rows_agree, disk, kvm, run_batch, write_seed

GIB = 1024 ** 3


def _lvm(vg, **volumes):
    out = {'type': 'lvm', 'vgname': vg, 'content': 'images', 'shared': 0, 'total': 10 * GIB}
    if volumes:
        out['volumes'] = volumes
    return out


def _left(vmid, n, size=GIB):
    return {'vm-%d-disk-%d' % (vmid, n): {'size': size, 'vmid': vmid}}


STORAGES = {
    'fr-a': _lvm('fra'), 'fr-b': _lvm('frb'), 'fr-c': _lvm('frc'), 'fr-d': _lvm('frd'), 'fr-e': _lvm('fre'),
    # leftovers: vm-150-disk-0 (a VM 150 destroyed without destroy-unreferenced-disks), vm-151-disk-0 (a failed
    # clone), vm-152-disk-0 (VM 152's scsi0 is on local-lvm: this one is another's leftover of the same id)
    'left': {'type': 'lvmthin', 'vgname': 'left', 'thinpool': 'data', 'content': 'images',
             'volumes': dict(**_left(150, 0), **_left(151, 0), **_left(152, 0))},
}

# Rows' VMs: 184-189 for the space rows, 152-153 and 190-191 for the names rows.
VMS = [
    _vm(184, 'row-184', scsi0='fr-a:vm-184-disk-0,size=6G'),
    _vm(185, 'row-185', scsi0='fr-b:vm-185-disk-0,size=2G'),
    _vm(186, 'row-186', scsi0='fr-b:vm-186-disk-0,size=6G'),
    _vm(187, 'row-187', scsi1='fr-c:vm-187-disk-0,size=6G'),
    _vm(188, 'row-188', scsi1='fr-d:vm-188-disk-0,size=6G'),
    _vm(189, 'row-189', scsi1='fr-e:vm-189-disk-0,size=6G'),
    _vm(152, 'row-152'),
    _vm(153, 'row-153', scsi1='left:vm-153-disk-0,size=1G'),
    _vm(190, 'row-190'),
    _vm(191, 'row-191', scsi1='left:vm-191-disk-0,size=1G'),
]


def _seed(tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages.update(copy.deepcopy(STORAGES))
    return write_seed(tmp_path, 'space-names', VMS, storages=storages)


SPACE = [
    Row('thick lvm: VM removed then create', [
        ('remove', kvm(node='pve1', vmid=184, state='absent')),
        ('create', kvm(node='pve1', vmid=257, name='row-257', scsi={'scsi0': 'fr-a:6'})),
    ], real_changed=True),
    # 2 GiB free; the removal of VM 185 frees 2 more: 6 GiB still does not fit, in both runs alike
    Row('thick lvm: smaller VM removed then create', [
        ('remove', kvm(node='pve1', vmid=185, state='absent')),
        ('create', kvm(node='pve1', vmid=258, name='row-258', scsi={'scsi0': 'fr-b:6'})),
    ], real_failure='insufficient free space'),
    Row('thick lvm: drive removed then disk added', [
        ('remove', disk(vmid=187, disk='scsi1', state='absent')),
        ('add', disk(vmid=187, disk='scsi2', storage='fr-c', size='6')),
    ], real_changed=True),
    Row('thick lvm: disk moved with delete then create', [
        ('move', disk(vmid=188, disk='scsi1', state='moved', target_storage='local-lvm', delete_moved=True)),
        ('create', kvm(node='pve1', vmid=259, name='row-259', scsi={'scsi0': 'fr-d:6'})),
    ], real_changed=True),
    # without `delete` the source stays as unused0: nothing is freed
    Row('thick lvm: disk moved, source kept, then create', [
        ('move', disk(vmid=189, disk='scsi1', state='moved', target_storage='local-lvm')),
        ('create', kvm(node='pve1', vmid=260, name='row-260', scsi={'scsi0': 'fr-e:6'})),
    ], real_failure='insufficient free space'),
]


def _devices_volume(key, volume):
    def expect(check, real):
        problems = []
        for run, result in (('check', check), ('real', real)):
            got = str(((result.get('devices') or {}).get(key)) or '')
            if got.split(',')[0] != volume:
                problems.append('%s devices.%s is %r, want volume %s' % (run, key, got, volume))
        return problems
    return expect


NAMES = [
    Row('leftover volume: create', [
        ('create', kvm(node='pve1', vmid=150, name='row-150', scsi={'scsi0': 'left:1'})),
    ], real_changed=True, exact=('devices',), unmarked=True, expect=_devices_volume('scsi0', 'left:vm-150-disk-1')),
    Row('leftover volume: full clone', [
        ('clone', kvm(node='pve1', vmid=190, clone='row-190', newid=151, name='row-151', full=True,
                      storage='left')),
    ], real_changed=True, exact=('devices',), unmarked=True, expect=_devices_volume('scsi0', 'left:vm-151-disk-1')),
    Row('leftover volume: disk added by update', [
        ('update', kvm(node='pve1', vmid=152, update=True, scsi={'scsi1': 'left:1'})),
    ], real_changed=True, exact=('devices',), unmarked=True, expect=_devices_volume('scsi1', 'left:vm-152-disk-1')),
    # VM 153 removed, then created again: its freed vm-153-disk-0 is the first free name again
    Row('volume freed earlier in the run: create', [
        ('remove', kvm(node='pve1', vmid=153, state='absent')),
        ('create', kvm(node='pve1', vmid=153, name='row-153b', scsi={'scsi0': 'left:1'})),
    ], real_changed=True, exact=('devices',), unmarked=True, expect=_devices_volume('scsi0', 'left:vm-153-disk-0')),
    # proxmox_disk alike: a drive removed (its volume destroyed), then a disk added on the same storage
    Row('volume freed earlier in the run: disk added', [
        ('remove', disk(vmid=191, disk='scsi1', state='absent')),
        ('add', disk(vmid=191, disk='scsi2', storage='left', size='1')),
    ], real_changed=True, exact=('volume',), unmarked=True, expect=_volume_is('left:vm-191-disk-0')),
]


def test_check_run_predicts_space_and_names_as_the_real_run_finds_them(ansible, sim, tmp_path, summary):
    seed = _seed(tmp_path)
    problems = run_batch(ansible, sim, seed, SPACE + NAMES)
    rows = SPACE + NAMES
    assert_rows_agree(summary, 'check-versus-real (space and names)', rows, problems)
