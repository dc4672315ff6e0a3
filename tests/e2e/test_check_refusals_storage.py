"""Check versus real, issue 32 (storages, formats and volumes): refusals `--check` predicts before any write.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must
agree task by task (test_check_vs_real.py's `run_batch` and `compare_row`); a row with `real_failure` fails
in both runs with PVE's words, and the check run writes nothing.

1. A new disk in a format its storage does not make: Qemu.pm `create_disks` hands `format=` to Storage.pm
   `vdisk_alloc` as it is, and LvmThinPlugin.pm `alloc_image` (`unsupported format 'qcow2'`) or
   LVMPlugin.pm `alloc_lvm_image` (`snapshot-as-volume-chain option need to be enabled to use qcow2
   format`) refuses it; with `snapshot-as-volume-chain` a thick LVM storage makes qcow2 volumes named
   `vm-<vmid>-disk-<n>.qcow2` (LVMPlugin.pm `get_formats`, `find_free_diskname`; docs/pve-semantics.md
   §42.1).
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, Row, _vm, disk, kvm, one, run_batch, write_seed

GIB = 1024 ** 3

# Rows' VMs: 440-449.
VMS = [_vm(vmid, 'row-%d' % vmid) for vmid in range(440, 446)]

# A thick LVM storage without volume chains and one with them (PVE 9), 50 GiB each.
LVM = {'thick-raw': {'type': 'lvm', 'vgname': 'thickraw', 'content': 'images', 'shared': 0, 'total': 50 * GIB},
       'thick-chain': {'type': 'lvm', 'vgname': 'thickchain', 'content': 'images', 'shared': 0, 'total': 50 * GIB,
                       'snapshot-as-volume-chain': 1}}


def _seed(tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages.update(copy.deepcopy(LVM))
    return write_seed(tmp_path, 'refusals-storage', VMS, storages=storages)


def _volume_in_diff(name):
    """The check and the real run both show the new drive on volume `name`."""
    def expect(check, real):
        problems = []
        for run, result in (('check', check), ('real', real)):
            after = json.dumps(result.get('diff'))
            if name not in after:
                problems.append('%s diff does not show %s: %s' % (run, name, after[:600]))
        return problems
    return expect


FORMATS = [
    one('qcow2 on lvmthin (disk)', disk(vmid=440, disk='scsi1', storage='local-lvm', size='1', format='qcow2'),
        real_failure="unsupported format 'qcow2'"),
    one('qcow2 on lvmthin (create)', kvm(node='pve1', vmid=446, name='row-446',
                                         scsi={'scsi0': 'local-lvm:2,format=qcow2'}),
        real_failure="unable to create VM 446 - unsupported format 'qcow2'"),
    one('qcow2 on thick lvm (update)', kvm(node='pve1', vmid=441, update=True,
                                           scsi={'scsi0': 'local-lvm:vm-441-disk-0,size=4G',
                                                 'scsi1': 'thick-raw:1,format=qcow2'}),
        real_failure='snapshot-as-volume-chain option need to be enabled to use qcow2 format'),
    one('qcow2 on thick lvm (disk)', disk(vmid=442, disk='scsi1', storage='thick-raw', size='1', format='qcow2'),
        real_failure='snapshot-as-volume-chain option need to be enabled to use qcow2 format'),
    # PVE 9's volume chains: qcow2 allowed, and the default
    one('qcow2 on a volume chain (disk)', disk(vmid=443, disk='scsi1', storage='thick-chain', size='1',
                                               format='qcow2'),
        real_changed=True, expect=_volume_in_diff('thick-chain:vm-443-disk-0.qcow2')),
    one('default on a volume chain (disk)', disk(vmid=444, disk='scsi1', storage='thick-chain', size='1'),
        real_changed=True, expect=_volume_in_diff('thick-chain:vm-444-disk-0.qcow2')),
    one('raw on a volume chain (disk)', disk(vmid=445, disk='scsi1', storage='thick-chain', size='1', format='raw'),
        real_changed=True, expect=_volume_in_diff('thick-chain:vm-445-disk-0,')),
]

CENSUS_ROWS = FORMATS

# case name -> the census rows (docs/refusals.md) it covers
CENSUS = {
    'qcow2 on lvmthin (disk)': ('R-config-40',),
    'qcow2 on thick lvm (update)': ('R-config-40',),
    'qcow2 on thick lvm (disk)': ('R-config-40',),
    'qcow2 on lvmthin (create)': ('R-create-40',),
}


def test_storage_refusals_are_predicted_by_the_check_run(ansible, sim, tmp_path, summary):
    seed = _seed(tmp_path)
    problems = run_batch(ansible, sim, seed, FORMATS)
    rows = FORMATS
    disagree = [(row.name, problems[row.name]) for row in rows if problems[row.name]]
    summary('check-versus-real (issue 32, storages): %d rows, %d agree' % (len(rows), len(rows) - len(disagree)))
    assert not disagree, 'rows where the check run did not predict the real run:\n' + '\n'.join(
        '- %s:\n    %s' % (name, '\n    '.join(p)) for name, p in disagree)
