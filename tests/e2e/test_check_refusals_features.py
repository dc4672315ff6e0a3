"""Check versus real, issue 32: what a storage's plugin refuses to do with a volume (pve-storage
`volume_has_feature`; docs/pve-semantics.md §51).

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must agree
task by task (test_check_vs_real.py's `run_batch` and `compare_row`); every refused row is refused before any write
in both runs, with PVE's words.

1. Qemu.pm `clone_vm` asks Storage.pm `volume_has_feature` 'copy' of each drive it copies, of the snapshot when one
   is cloned: ZFSPoolPlugin.pm copies no snapshot (`copy => { base, current }`), LVMPlugin.pm only a qcow2 one; a
   thin LVM snapshot copies (LvmThinPlugin.pm), which shows the check is not wider than PVE's (§51.1).
2. Qemu.pm `move_vm_disk` to another VM asks 'rename' of the volume's storage: ZFSPlugin.pm (ZFS over iSCSI) has
   none, ZFSPoolPlugin.pm has it (§51.1).
3. ZFSPlugin.pm `alloc_image` makes raw LUNs only: a new disk in another format is refused (§51.2).
4. Qemu.pm `create_vm`: an `archive` of `-` (standard input) only through `qmrestore` (§51.4).
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

GIB = 1024 ** 3


def _snap(vmid, **drives):
    snap = {'cores': 1, 'memory': '1024', 'ostype': 'l26', 'scsihw': 'virtio-scsi-single',
            'scsi0': 'local-lvm:vm-%d-disk-0,size=4G' % vmid, 'snaptime': 1767225600}
    snap.update(drives)
    return snap


def _snapped(vmid, snapshots, **config):
    return dict(_vm(vmid, 'row-%d' % vmid, **config), snapshots=snapshots)


# Rows' VMs: 470-477; the clones would be 480-482, the restore 478.
VMS = [
    _snapped(470, {'before': _snap(470, scsi0='feat-zfs:vm-470-disk-0,size=1G')},
             scsi0='feat-zfs:vm-470-disk-0,size=1G'),
    _snapped(471, {'before': _snap(471, scsi1='feat-lvm:vm-471-disk-1,size=1G')},
             scsi1='feat-lvm:vm-471-disk-1,size=1G'),
    _snapped(472, {'before': _snap(472)}),
    _vm(473, 'row-473', scsi1='feat-zsan:vm-473-disk-1,size=1G'),
    _vm(474, 'row-474'),
    _vm(475, 'row-475', scsi1='feat-zfs:vm-475-disk-1,size=1G'),
    _vm(476, 'row-476'),
    _vm(477, 'row-477'),
]

STORAGES = {
    'feat-zfs': {'type': 'zfspool', 'pool': 'rpool/feat', 'sparse': 1, 'content': 'images', 'shared': 0},
    'feat-lvm': {'type': 'lvm', 'vgname': 'featlvm', 'shared': 0, 'content': 'images', 'total': 50 * GIB},
    'feat-zsan': {'type': 'zfs', 'pool': 'tank', 'portal': '10.0.0.9', 'target': 'iqn.2003-01.org.linux-iscsi:t',
                  'iscsiprovider': 'LIO', 'lio_tpg': 'tpg1', 'content': 'images', 'total': 50 * GIB},
}


def _seed(tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages.update(copy.deepcopy(STORAGES))
    return write_seed(tmp_path, 'features', VMS, storages=storages)


REFUSED = [
    one('full clone of a zfs snapshot', kvm(node='pve1', vmid=470, clone='row-470', snapname='before', newid=480,
                                            name='row-480', full=True),
        real_failure="Full clone feature is not supported for a snapshot of 'feat-zfs:vm-470-disk-0' (scsi0)"),
    one('full clone of a thick lvm snapshot', kvm(node='pve1', vmid=471, clone='row-471', snapname='before',
                                                  newid=481, name='row-481', full=True),
        real_failure="Full clone feature is not supported for a snapshot of 'feat-lvm:vm-471-disk-1' (scsi1)"),
    # ZFSPlugin.pm alloc_image: a LUN of ZFS over iSCSI is raw (§51.2)
    one('qcow2 on zfs over iscsi (disk)', disk(vmid=477, disk='scsi1', storage='feat-zsan', size='1', format='qcow2'),
        real_failure="unsupported format 'qcow2'"),
    one('disk to another VM on zfs over iscsi', disk(vmid=473, disk='scsi1', state='moved', target_vmid=474,
                                                     target_disk='scsi3'),
        real_failure='Storage does not support moving of this disk to another VM'),
    # Qemu.pm create_vm: a backup piped from standard input only through qmrestore (§51.4)
    one('archive from standard input (create)', kvm(node='pve1', vmid=478, name='row-478', archive='-'),
        real_failure='pipe requires cli environment'),
]

TAKEN = [
    one('full clone of a thin snapshot', kvm(node='pve1', vmid=472, clone='row-472', snapname='before', newid=482,
                                             name='row-482', full=True), real_changed=True),
    one('disk to another VM on a zfs pool', disk(vmid=475, disk='scsi1', state='moved', target_vmid=476,
                                                 target_disk='scsi3'), real_changed=True),
]

CENSUS_ROWS = REFUSED + TAKEN
CENSUS = {
    'full clone of a zfs snapshot': ['R-clone-70'],
    'full clone of a thick lvm snapshot': ['R-clone-70'],
    'disk to another VM on zfs over iscsi': ['R-move-70'],
    'qcow2 on zfs over iscsi (disk)': ['R-config-40'],
    'archive from standard input (create)': ['R-create-91'],
}


def test_storage_feature_refusals_are_predicted_alike_in_check_and_real_runs(ansible, sim, tmp_path, summary):
    seed = _seed(tmp_path)
    problems = {}
    problems.update(run_batch(ansible, sim, seed, REFUSED, writes_nothing=True))
    problems.update(run_batch(ansible, sim, seed, TAKEN))
    rows = REFUSED + TAKEN
    assert_rows_agree(summary, 'check-versus-real (issue 32, storage features)', rows, problems)
