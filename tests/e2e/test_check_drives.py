"""Check versus real, issue 32: drives PVE parses strictly, volumes two storages alias, volumes gone from their storage.

Census rows (docs/refusals.md) R-clone-90, R-move-92, R-migrate-103 and R-any-116 (docs/pve-semantics.md §65). Each row runs the same play with `--check
--diff` and for real, from the same pvesim state, and the two must agree task by task (test_check_vs_real.py's
`run_batch`); every row is a refusal, so nothing may be written. The module decides each before any write from the
VM's config and storage.cfg. pvesim follows PVE in each (tests/pvesim/tests/test_strict_drives.py,
test_migrate_task.py): qemu-server Drive.pm `parse_drive` as Qemu.pm `clone_vm` and `move_vm_disk` use it, and
QemuMigrate.pm `scan_local_volumes` (two volume ids on one path), pve-storage Plugin.pm `activate_volume` (a file
gone from a directory storage, the seed's `gone`: test_activation.py).
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

# a drive written by hand on the node: `cache=fast` is no cache mode (Drive.pm's schema refuses it)
BAD = 'local-lvm:vm-%d-disk-1,cache=fast,size=1G'

VMS = [
    _vm(730, 'row-730', scsi1=BAD % 730),
    _vm(731, 'row-731', scsi1=BAD % 731),
    _vm(732, 'row-732'),
    _vm(733, 'row-733', scsi1='local-lvm:vm-733-disk-1,ssd=1,size=1G'),
    _vm(734, 'row-734', scsi1='vmdata:734/vm-734-disk-1.qcow2,size=1G', scsi2='alias:734/vm-734-disk-1.qcow2,size=1G'),
] + [_vm(vmid, 'row-%d' % vmid, scsi1='vmdata:%d/vm-%d-disk-1.qcow2,size=1G' % (vmid, vmid)) for vmid in range(735, 739)] + [
    _vm(741, 'row-741', scsi1='vmdata:741/vm-741-disk-1.qcow2,size=1G'),
    _vm(742, 'row-742', ide2='vmdata:742/vm-742-cloudinit.qcow2,media=cdrom'),
    _vm(739, 'row-739', ide2='isos:iso/gone.iso,media=cdrom'),
]
GONE = ['%d/vm-%d-disk-1.qcow2' % (vmid, vmid) for vmid in (735, 736, 737, 738, 741)] + ['742/vm-742-cloudinit.qcow2']


def gone(vmid):
    return "volume 'vmdata:%d/vm-%d-disk-1.qcow2' does not exist" % (vmid, vmid)


ROWS = [
    one('unparsable drive: clone', kvm(node='pve1', vmid=730, clone='row-730', newid=740, name='row-740', full=True),
        real_failure="unable to parse drive options for 'scsi1'"),
    one('unparsable drive: move to a storage', disk(vmid=731, disk='scsi1', state='moved', target_storage='vmdata'),
        real_failure="disk 'scsi1' has no associated volume"),
    one('unparsable drive: move to a VM', disk(vmid=731, disk='scsi1', state='moved', target_vmid=732,
                                               target_disk='scsi1'),
        real_failure='failed to parse source disk - format error'),
    one('ssd drive: move to a virtio slot', disk(vmid=733, disk='scsi1', state='moved', target_vmid=732,
                                                 target_disk='virtio1'),
        real_failure='failed to parse source disk for target disk format - invalid key in comma-separated list '
                     'property: ssd'),
    one('aliased volumes: migrate', kvm(node='pve2', vmid=734, migrate=True),
        real_failure="detected not supported aliased volumes: 'alias:734/vm-734-disk-1.qcow2', "
                     "'vmdata:734/vm-734-disk-1.qcow2'"),
    one('volume gone: start', kvm(node='pve1', vmid=735, state='started'), real_failure=gone(735)),
    one('volume gone: resize', disk(vmid=736, disk='scsi1', state='resized', size='+1G'), real_failure=gone(736)),
    one('volume gone: move', disk(vmid=737, disk='scsi1', state='moved', target_storage='local-lvm'),
        real_failure=gone(737)),
    one('volume gone: clone', kvm(node='pve1', vmid=738, clone='row-738', newid=748, name='row-748', full=True),
        real_failure='clone failed: ' + gone(738)),
    one('volume gone: migrate', kvm(node='pve2', vmid=741, migrate=True),
        real_failure="can't migrate local disk 'vmdata:741/vm-741-disk-1.qcow2': " + gone(741)),
    one('cloud-init volume gone: clone', kvm(node='pve1', vmid=742, clone='row-742', newid=752, name='row-752',
                                             full=True),
        real_failure="clone failed: volume 'vmdata:742/vm-742-cloudinit.qcow2' does not exist"),
    one('ISO gone: start', kvm(node='pve1', vmid=739, state='started'),
        real_failure="volume 'isos:iso/gone.iso' does not exist"),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS
CENSUS = {
    'unparsable drive: clone': ('R-clone-90',),
    'unparsable drive: move to a storage': ('R-move-92',),
    'unparsable drive: move to a VM': ('R-move-92',),
    'ssd drive: move to a virtio slot': ('R-move-92',),
    'aliased volumes: migrate': ('R-migrate-103',),
    'volume gone: start': ('R-any-116',),
    'volume gone: resize': ('R-any-116',),
    'volume gone: move': ('R-any-116',),
    'volume gone: clone': ('R-any-116',),
    'ISO gone: start': ('R-any-116',),
    'volume gone: migrate': ('R-any-116',),
    'cloud-init volume gone: clone': ('R-any-116',),
}


def _storages():
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages['alias'] = dict(storages['vmdata'])  # another name for the same directory
    storages['vmdata']['gone'] = GONE  # removed on the host behind PVE's back
    return storages


def test_check_run_predicts_unparsable_drives_and_aliased_volumes(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'drives', VMS, storages=_storages())
    problems = run_batch(ansible, sim, seed, ROWS, writes_nothing=True)
    assert_rows_agree(summary, 'check-versus-real (issue 32, drives)', CENSUS_ROWS, problems)
