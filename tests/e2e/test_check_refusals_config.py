"""Check versus real, issue 32: refusals of config values, restores and drive copies (docs/pve-semantics.md §58).

Census rows (docs/refusals.md) R-config-93, R-config-132, R-create-132, R-clone-91, R-clone-92, R-clone-171 and
R-move-90, split out of R-config-90, R-clone-90, R-clone-93 (retired) and R-move-90.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must agree
task by task (test_check_vs_real.py's `run_batch` and `compare_row`); every row is a refusal, so nothing may be
written. The module decides each before any write from what it reads: the task's values, the VM's config and run
state, storage.cfg, the privileges. pvesim follows PVE in each (tests/pvesim/tests/test_handler_perms.py,
test_mirror.py): qemu-server Qemu.pm `check_hostpci_perm` (`romfile` is root@pam's, even on a mapped device),
QemuServer.pm `clone_disk` (a running VM's TPM state is not mirrored) and `clone_disk_check_io_uring` (a drive with
`aio=io_uring`, or without `aio` on a running machine older than 10.0, which status/current shows as
`running-machine`, is not mirrored to an lvm or cifs storage, nor to rbd with `krbd` without a direct cache) inside the tasks of `move_vm_disk` and `clone_vm`, and
`move_vm_disk`'s `target-vmid` that must differ from the source's; `update_vm_api`'s hook script, which must be a
snippet (pve-guest-common GuestHelpers.pm `check_hookscript`, tests/pvesim/tests/test_values.py).
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

GIB = 1024 ** 3
IO_URING = 'target storage is known to cause issues with aio=io_uring (used by current drive)'

VMS = [
    _vm(700, 'row-700'),
    _vm(702, 'row-702', status='running', scsi1='local-lvm:vm-702-disk-1,aio=io_uring,size=1G'),
    _vm(703, 'row-703', status='running', scsi1='local-lvm:vm-703-disk-1,aio=io_uring,size=1G'),
    _vm(704, 'row-704', status='running', tpmstate0='local-lvm:vm-704-disk-1,size=4M,version=v2.0'),
    _vm(705, 'row-705', scsi1='local-lvm:vm-705-disk-1,size=1G'),
    # running with a machine older than 10.0 (status/current's running-machine): no aio means io_uring
    dict(_vm(706, 'row-706', status='running', scsi1='local-lvm:vm-706-disk-1,size=1G'),
         running_machine='pc-i440fx-9.2+pve1'),
    dict(_vm(707, 'row-707', status='running'), running_machine='pc-q35-8.1+pve0'),
    _vm(708, 'row-708', status='running', scsi1='local-lvm:vm-708-disk-1,aio=io_uring,cache=writeback,size=1G'),
]

# Every VM privilege, the storages, and Mapping.Use: a mapped PCI device is this token's to set, its ROM file not.
MAPPER_ACL = ['VM.Allocate', 'VM.Audit', 'VM.Config.HWType', 'VM.Config.Options', 'VM.Config.Disk', 'VM.Config.CPU',
              'VM.Config.Memory', 'VM.Config.Network', 'VM.PowerMgmt', 'Datastore.Audit', 'Datastore.AllocateSpace',
              'Sys.Audit', 'SDN.Use', 'SDN.Audit', 'Mapping.Use']
USERS = {'mapper@pve': {'tokens': {'rows': '4c2e6a8b-mapper-rows'}, 'acl': {'/': MAPPER_ACL}}}
MAPPER = {'PROXMOX_USER': 'mapper@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '4c2e6a8b-mapper-rows'}
# Every VM privilege but VM.Backup, the storages readable, space on `local` only: a restore of another VM's backup.
USERS['restorer@pve'] = {'tokens': {'rows': '9e7c5a3b-restorer-rows'},
                         'acl': {'/': [p for p in MAPPER_ACL if p not in ('Datastore.AllocateSpace', 'Mapping.Use')],
                                 '/storage/local': ['Datastore.Audit', 'Datastore.AllocateSpace']}}
RESTORER = {'PROXMOX_USER': 'restorer@pve', 'PROXMOX_TOKEN_ID': 'rows',
            'PROXMOX_TOKEN_SECRET': '9e7c5a3b-restorer-rows'}
BACKUP = 'backup/vzdump-qemu-100-2026_12_01-00_00_00.vma.zst'
ROMFILE = "hostpci0: only root@pam can set 'romfile' option"

MAPPER_ROWS = [
    one('romfile on a mapped device: update', kvm(node='pve1', vmid=700, update=True,
                                                  hostpci={'hostpci0': 'mapping=gpu,romfile=vbios.bin'}),
        real_failure=ROMFILE),
    one('romfile on a mapped device: create', kvm(node='pve1', vmid=701, name='row-701',
                                                  hostpci={'hostpci0': 'mapping=gpu,romfile=vbios.bin'}),
        real_failure=ROMFILE),
]

RESTORER_ROWS = [
    one('restore: an archive on a storage without space', kvm(node='pve1', vmid=720, name='row-720',
                                                              archive='isos:' + BACKUP),
        real_failure='Permission check failed (/storage/isos, Datastore.AllocateSpace)'),
    one("restore: another VM's backup without VM.Backup", kvm(node='pve1', vmid=721, name='row-721',
                                                              archive='local:' + BACKUP),
        real_failure='Permission check failed (/vms/100, VM.Backup)'),
]

ROWS = [
    one('io_uring mirrored to thick LVM: move', disk(vmid=702, disk='scsi1', state='moved', target_storage='thick'),
        real_failure='storage migration failed: ' + IO_URING),
    one('io_uring mirrored to thick LVM: full clone', kvm(node='pve1', vmid=703, clone='row-703', newid=713,
                                                          name='row-713', full=True, storage='thick'),
        real_failure='clone failed: ' + IO_URING),
    one('default io_uring of a machine before 10.0 mirrored to thick LVM: move',
        disk(vmid=706, disk='scsi1', state='moved', target_storage='thick'),
        real_failure='storage migration failed: ' + IO_URING),
    one('default io_uring of a machine before 10.0 mirrored to thick LVM: full clone',
        kvm(node='pve1', vmid=707, clone='row-707', newid=717, name='row-717', full=True, storage='thick'),
        real_failure='clone failed: ' + IO_URING),
    one('io_uring with a writeback cache mirrored to rbd with krbd: move',
        disk(vmid=708, disk='scsi1', state='moved', target_storage='kceph'),
        real_failure='storage migration failed: ' + IO_URING),
    one('TPM state of a running VM: move', disk(vmid=704, disk='tpmstate0', state='moved', target_storage='vmdata'),
        real_failure='storage migration failed: cannot move TPM state while VM is running'),
    one('hookscript not a snippet', kvm(node='pve1', vmid=700, update=True, hookscript='local-lvm:vm-700-disk-0'),
        real_failure="hookscript: 'local-lvm:vm-700-disk-0' is not in the snippets directory"),
    one('reassign to the same VM', disk(vmid=705, disk='scsi1', state='moved', target_vmid=705, target_disk='scsi3'),
        real_failure='must be different than source VMID to reassign disk'),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = MAPPER_ROWS + RESTORER_ROWS + ROWS
CENSUS = {
    'romfile on a mapped device: update': ('R-config-132',),
    'romfile on a mapped device: create': ('R-config-132',),
    'restore: an archive on a storage without space': ('R-create-132',),
    "restore: another VM's backup without VM.Backup": ('R-create-132',),
    'io_uring mirrored to thick LVM: move': ('R-clone-91',),
    'io_uring mirrored to thick LVM: full clone': ('R-clone-91',),
    'default io_uring of a machine before 10.0 mirrored to thick LVM: move': ('R-clone-171',),
    'default io_uring of a machine before 10.0 mirrored to thick LVM: full clone': ('R-clone-171',),
    'io_uring with a writeback cache mirrored to rbd with krbd: move': ('R-clone-91',),
    'TPM state of a running VM: move': ('R-clone-92',),
    'reassign to the same VM': ('R-move-90',),
    'hookscript not a snippet': ('R-config-93',),
}


def _storages():
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages['thick'] = {'type': 'lvm', 'vgname': 'thick', 'content': 'images', 'shared': 0, 'total': 20 * GIB}
    storages['kceph'] = {'type': 'rbd', 'pool': 'rbd', 'krbd': 1, 'content': 'images', 'total': 20 * GIB}
    return storages


def test_check_run_predicts_refusals_of_config_values_and_mirrors(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'config', VMS, users=USERS, storages=_storages())
    problems = run_batch(ansible, sim, seed, MAPPER_ROWS, env=MAPPER, writes_nothing=True)
    problems.update(run_batch(ansible, sim, seed, RESTORER_ROWS, env=RESTORER, writes_nothing=True))
    problems.update(run_batch(ansible, sim, seed, ROWS, writes_nothing=True))
    assert_rows_agree(summary, 'check-versus-real (issue 32, config)', CENSUS_ROWS, problems)
