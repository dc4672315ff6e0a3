"""Check versus real, issue 32 (replication): the refusals of a replicated VM `--check` predicts before any write.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must
agree task by task (test_check_vs_real.py's `run_batch`); a row with `real_failure` fails in both runs with
PVE's words, and the check run writes nothing. The VMs' jobs are the seed's `replication` list, which
`GET /cluster/replication` shows (docs/pve-semantics.md §50).

1. A removal without `purge`: Qemu.pm `destroy_vm` calls ReplicationConfig.pm `check_for_existing_jobs`.
2. A live migration to a node no job targets: Qemu.pm `migrate_vm` (`find_local_replication_job`).
3. A config write adding a drive that cannot replicate: Qemu.pm `update_vm_api` `$check_replication`
   (pve-storage `storage_can_replicate`: only a ZFS pool's raw volumes), while a ZFS disk is taken.
4. A disk reassigned to a replicated VM from a storage that cannot replicate: Qemu.pm `move_vm_disk`.
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

GIB = 1024 ** 3

# Rows' VMs: 760-764, each with a job to pve2; 765 without one, whose disk goes to 760.
VMS = [
    _vm(760, 'row-760', scsi0='tank:vm-760-disk-0,size=4G'),
    _vm(761, 'row-761', scsi0='tank:vm-761-disk-0,size=4G'),
    _vm(762, 'row-762', status='running', scsi0='shared:762/vm-762-disk-0.qcow2,size=4G'),
    _vm(763, 'row-763', scsi0='tank:vm-763-disk-0,size=4G'),
    _vm(764, 'row-764', scsi0='tank:vm-764-disk-0,size=4G'),
    _vm(765, 'row-765', scsi1='local-lvm:vm-765-disk-1,size=1G'),
]
JOBS = [{'id': '%d-0' % vmid, 'guest': vmid, 'type': 'local', 'target': 'pve2', 'schedule': '*/15'}
        for vmid in (760, 761, 762, 763, 764)]


def _seed(tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages['tank'] = {'type': 'zfspool', 'pool': 'tank', 'content': 'images,rootdir', 'total': 50 * GIB,
                        'files': dict(('vm-%d-disk-0' % v, 4 * GIB) for v in (760, 761, 763, 764))}
    storages['shared'] = {'type': 'nfs', 'path': '/mnt/pve/shared', 'server': '10.0.0.9', 'export': '/shared',
                          'content': 'images', 'total': 50 * GIB,
                          'files': {'762/vm-762-disk-0.qcow2': 4 * GIB}}
    return write_seed(tmp_path, 'refusals-replication', VMS, storages=storages, nodes=['pve1', 'pve2', 'pve3'],
                      replication=JOBS)


CENSUS_ROWS = [
    one('replicated: remove without purge', kvm(node='pve1', vmid=760, state='absent'),
        real_failure="There is a replication job '760-0' for guest '760' - Please remove that first."),
    one('replicated: disk that cannot replicate (update)',
        kvm(node='pve1', vmid=761, update=True, scsi={'scsi0': 'tank:vm-761-disk-0,size=4G',
                                                      'scsi1': 'local-lvm:1'}),
        real_failure='cannot add non-replicatable volume to a replicated VM'),
    one('replicated: disk that cannot replicate (disk)', disk(vmid=764, disk='scsi1', storage='local-lvm', size='1'),
        real_failure='cannot add non-replicatable volume to a replicated VM'),
    one('replicated: disk reassigned from lvm-thin', disk(vmid=765, disk='scsi1', state='moved', target_vmid=760),
        real_failure='Cannot move disk to a replicated VM. Storage does not support replication!'),
    one('replicated: live migration to a node no job targets', kvm(node='pve3', vmid=762, migrate=True),
        real_failure="Cannot live-migrate replicated VM to node 'pve3' - not a replication target."),
    one('replicated: a ZFS disk is taken (update)',
        kvm(node='pve1', vmid=763, update=True, scsi={'scsi0': 'tank:vm-763-disk-0,size=4G', 'scsi1': 'tank:1'}),
        real_changed=True),
]

# case name -> the census rows (docs/refusals.md) it covers
CENSUS = {
    'replicated: remove without purge': ('R-destroy-03',),
    'replicated: disk that cannot replicate (update)': ('R-config-03',),
    'replicated: disk that cannot replicate (disk)': ('R-config-03',),
    'replicated: live migration to a node no job targets': ('R-migrate-05',),
    'replicated: disk reassigned from lvm-thin': ('R-move-100',),
}


def test_replication_refusals_are_predicted_by_the_check_run(ansible, sim, tmp_path, summary):
    rows = CENSUS_ROWS
    problems = run_batch(ansible, sim, _seed(tmp_path), rows)
    assert_rows_agree(summary, 'check-versus-real (issue 32, replication)', rows, problems)
