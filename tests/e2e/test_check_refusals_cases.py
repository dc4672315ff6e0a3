"""Check versus real, issue 32: refusals the modules already predicted without a check-versus-real case.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two
must agree task by task (test_check_vs_real.py's `run_batch` and `compare_row`); each refused row names
PVE's failure that the real run must show (`real_failure`), and pvesim refuses each the same way from
PVE's source (tests/pvesim/tests/test_refusals_cases.py and the tests it names):

1. space: a new volume, a full clone's copy and a moved disk that do not fit on a thick LVM storage
   (pve-storage LVMPlugin.pm `alloc_image`, Storage.pm `vdisk_alloc`; Qemu.pm `create_disks`, QemuServer.pm
   `clone_disk`, Qemu.pm `move_vm_disk`; docs/pve-semantics.md §26.7);
2. the VM's state: `vmstate` removed from a protected VM (Qemu.pm `update_vm_api`), a reboot, reset, pause,
   hibernation or resume under a lock (QemuServer.pm `vm_reboot`, `vm_reset`, RunState.pm `vm_suspend`,
   `vm_resume`), a disk moved from or to a template (Qemu.pm `move_vm_disk`);
3. where a VM may go: a local CD-ROM image and a live migration of local disks (QemuMigrate.pm
   `scan_local_volumes`), a clone to another node from local storage or to a storage that is not shared, a
   linked clone of a disk whose storage cannot link it (Qemu.pm `clone_vm`, Storage.pm `volume_has_feature`);
4. a pool move to a pool that does not exist (pve-manager Pool.pm `update_pool`).
"""

import copy
import json
import os

from test_check_vs_real import (POOLER, POOL_SEED, POOL_VMS, Row, SEED_DIR, _vm, assert_rows_agree, disk, kvm, one,
    run_batch, write_seed)

GIB = 1024 ** 3
LOCKED = 'VM is locked (migrate)'

# `tiny`: a thick LVM volume group of 2 GiB (empty), where no 4 GiB volume fits; `thick`: 10 GiB, holding the
# base volume of template 9004 (LVM has no linked clones); `local` holds a local ISO.
STORAGES = {
    'tiny': {'type': 'lvm', 'vgname': 'tiny', 'content': 'images', 'shared': 0, 'total': 2 * GIB},
    'thick': {'type': 'lvm', 'vgname': 'thick', 'content': 'images', 'shared': 0, 'total': 10 * GIB},
}

VMS = [
    _vm(302, 'row-302'),
    _vm(303, 'row-303'),
    _vm(304, 'row-304'),
    _vm(305, 'row-305', protection=1, vmstate='local-lvm:vm-305-state-suspend-2026-12-01'),
    _vm(306, 'row-306', status='running', lock='migrate'),
    _vm(307, 'row-307', status='running', lock='migrate'),
    _vm(308, 'row-308', status='running', lock='migrate'),
    _vm(309, 'row-309', status='running', lock='backup'),
    dict(_vm(310, 'row-310', status='running', lock='migrate'), qmpstatus='paused'),
    _vm(9003, 'tpl-9003', template=True, scsi1='local-lvm:base-9003-disk-1,size=1G'),
    _vm(312, 'row-312', scsi1='local-lvm:vm-312-disk-1,size=1G'),
    _vm(313, 'row-313', ide2='local:iso/local.iso,media=cdrom'),
    _vm(314, 'row-314', status='running'),
    _vm(315, 'row-315'),
    _vm(316, 'row-316'),
    _vm(9004, 'tpl-9004', template=True, scsi0='thick:base-9004-disk-0,size=4G'),
    _vm(317, 'row-317'),
    _vm(318, 'row-318', status='running', lock='backup'),
]


def _seed(tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages.update(copy.deepcopy(STORAGES))
    storages['local'] = dict(storages['local'], files={'iso/local.iso': 100 * 1024 * 1024})
    return write_seed(tmp_path, 'refusals-cases', VMS, storages=storages)


NO_SPACE = 'insufficient free space'

SPACE = [
    one('thick lvm: create does not fit', kvm(node='pve1', vmid=301, name='row-301', scsi={'scsi0': 'tiny:4'}),
        real_failure=NO_SPACE),
    one('thick lvm: disk added does not fit', disk(vmid=302, disk='scsi1', storage='tiny', size='4'),
        real_failure=NO_SPACE),
    one('thick lvm: full clone does not fit', kvm(node='pve1', vmid=303, clone='row-303', newid=311, name='row-311',
                                                  full=True, storage='tiny'),
        real_failure=NO_SPACE),
    one('thick lvm: move does not fit', disk(vmid=304, disk='scsi0', state='moved', target_storage='tiny'),
        real_failure=NO_SPACE),
]

STATE = [
    one('protection: vmstate removed', kvm(node='pve1', vmid=305, delete='vmstate'),
        real_failure="can't remove vmstate 'local-lvm:vm-305-state-suspend-2026-12-01' - protection mode enabled"),
    one('lock migrate: reboot', kvm(node='pve1', vmid=306, state='restarted'), real_failure=LOCKED),
    one('lock migrate: reset', kvm(node='pve1', vmid=307, state='restarted', force=True), real_failure=LOCKED),
    one('lock migrate: pause', kvm(node='pve1', vmid=308, state='paused'), real_failure=LOCKED),
    one('lock backup: hibernate', kvm(node='pve1', vmid=309, state='hibernated'),
        real_failure='cannot suspend to disk during backup'),
    # a backup's lock does not keep a pause out (RunState.pm vm_suspend): the check run must not refuse it
    one('lock backup: pause', kvm(node='pve1', vmid=318, state='paused'), real_changed=True),
    one('lock migrate: resume', kvm(node='pve1', vmid=310, state='started'), real_failure=LOCKED),
    one('template: disk moved from it', disk(vmid=9003, disk='scsi1', state='moved', target_vmid=316),
        real_failure="Can't move disks from or to template VMs"),
    one('template: disk moved to it', disk(vmid=312, disk='scsi1', state='moved', target_vmid=9003, target_disk='scsi3'),
        real_failure="Can't move disks from or to template VMs"),
]

WHERE = [
    one('migrate: local CD-ROM image', kvm(node='pve2', vmid=313, migrate=True),
        real_failure='local cdrom image'),
    one('migrate: live with local disks', kvm(node='pve2', vmid=314, migrate=True),
        real_failure='without with-local-disks option'),
    one('clone to another node: VM on local storage', kvm(node='pve1', vmid=315, clone='row-315', newid=319,
                                                          name='row-319', target='pve2')),
    one('clone to another node: storage not shared', kvm(node='pve1', vmid=315, clone='row-315', newid=320,
                                                         name='row-320', target='pve2', full=True,
                                                         storage='local-lvm'),
        real_failure="can't clone to non-shared storage 'local-lvm'"),
    one('linked clone: thick lvm template', kvm(node='pve1', vmid=9004, clone='tpl-9004', newid=321,
                                                name='row-321', full=False),
        real_failure="Linked clone feature is not supported for 'thick:base-9004-disk-0' (scsi0)"),
    one('linked clone: a VM that is no template', kvm(node='pve1', vmid=317, clone='row-317', newid=322,
                                                     name='row-322', full=False),
        real_failure="Linked clone feature is not supported for 'local-lvm:vm-317-disk-0' (scsi0)"),
]
WHERE[2].real_failure = "can't clone VM to node 'pve2' (VM uses local storage)"

POOLS = [
    one('pool: move to a missing pool', kvm(node='pve1', vmid=134, update=True, pool='nope'),
        real_failure="pool 'nope' does not exist"),
]

CENSUS_ROWS = SPACE + STATE + WHERE + POOLS
CENSUS = {
    'thick lvm: create does not fit': ('R-create-11',),
    'thick lvm: disk added does not fit': ('R-config-19',),
    'thick lvm: full clone does not fit': ('R-clone-12',),
    'thick lvm: move does not fit': ('R-move-06',),
    'protection: vmstate removed': ('R-config-09',),
    'lock migrate: reboot': ('R-power-08',),
    'lock migrate: reset': ('R-power-08',),
    'lock migrate: pause': ('R-power-09',),
    'lock backup: hibernate': ('R-power-09',),
    'lock migrate: resume': ('R-power-11',),
    'template: disk moved from it': ('R-move-08',),
    'template: disk moved to it': ('R-move-08',),
    'migrate: local CD-ROM image': ('R-migrate-04',),
    'migrate: live with local disks': ('R-migrate-04',),
    'clone to another node: VM on local storage': ('R-clone-03',),
    'clone to another node: storage not shared': ('R-clone-03',),
    'linked clone: thick lvm template': ('R-clone-11',),
    'linked clone: a VM that is no template': ('R-clone-11',),
    'pool: move to a missing pool': ('R-pool-90',),
}


def test_check_run_predicts_the_refusals_of_issue_32(ansible, sim, tmp_path, summary):
    seed = _seed(tmp_path)
    problems = {}
    problems.update(run_batch(ansible, sim, seed, SPACE + STATE + WHERE, writes_nothing=True))
    problems.update(run_batch(ansible, sim, write_seed(tmp_path, 'pools', POOL_VMS, **POOL_SEED), POOLS, env=POOLER,
                              writes_nothing=True))
    rows = CENSUS_ROWS
    assert_rows_agree(summary, 'check-versus-real (issue 32 cases)', rows, problems)
