"""Check versus real, issue 32: a volume gone from its file storage, where a write activates it.

A create or config write naming an existing volume (R-any-115): qemu-server 9.2.6 src/PVE/API2/Qemu.pm `create_disks`
activates a drive's existing volume (an option of a drive changed, an unusedN re-attached, an ISO inserted, another
VM's volume attached at a create) after its access, content and format checks (docs/pve-semantics.md §68).
A migration's volume only a snapshot names (R-power-158): QemuMigrate.pm `scan_local_volumes` walks QemuServer.pm
`foreach_volid`, whose volumes are the config's, its pending values' and each snapshot's (drives, unused volumes,
`vmstate`); `$test_volid` activates each one on storage that is not shared, logs the error and the scan aborts the
migration; proxmox_kvm predicts it from the snapshots' configs it reads for the migration's other checks
(`Checks::migration`, `Preflight::gone`; §69).
pve-storage 9.1.7 Plugin.pm `activate_volume` dies `volume '<volid>' does not exist` when the file is gone; pvesim
follows PVE (activation.py, tests/pvesim/tests/test_activation.py). Each row runs with `--check --diff` and for real
from the same pvesim state; nothing may be written.
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

VOL = 'vmdata:%d/vm-%d-disk-1.qcow2'
VMS = [
    _vm(770, 'row-770', scsi1=VOL % (770, 770) + ',size=1G'),
    _vm(771, 'row-771', unused0=VOL % (771, 771)),
    _vm(772, 'row-772', unused0=VOL % (772, 772)),
    _vm(773, 'row-773'),
    _vm(774, 'row-774', scsi1=VOL % (774, 774) + ',size=1G'),
    dict(_vm(760, 'row-760'), snapshots={'s1': {'scsi1': 'vmdata:760/vm-760-disk-1.qcow2,size=1G'}}),
    dict(_vm(761, 'row-761'), snapshots={'s1': {'vmstate': 'vmdata:761/vm-761-state-s1.raw'}}),
]
GONE = ['%d/vm-%d-disk-1.qcow2' % (vmid, vmid) for vmid in (770, 771, 772, 774)] + \
    ['760/vm-760-disk-1.qcow2', '761/vm-761-state-s1.raw']


def gone(vmid):
    return "volume '%s' does not exist" % (VOL % (vmid, vmid))


def gone_at_migration(volid):
    return "can't migrate local disk '{0}': volume '{0}' does not exist".format(volid)


ROWS = [
    one('volume gone: a drive option changed', kvm(node='pve1', vmid=770, update=True,
                                                   scsi={'scsi1': VOL % (770, 770) + ',cache=unsafe'}),
        real_failure=gone(770)),
    one('volume gone: unused re-attached', kvm(node='pve1', vmid=771, update=True, scsi={'scsi1': VOL % (771, 771)}),
        real_failure=gone(771)),
    one('volume gone: attached at a create', kvm(node='pve1', vmid=775, name='row-775',
                                                 scsi={'scsi0': VOL % (772, 772)}),
        real_failure='unable to create VM 775 - ' + gone(772)),
    one('ISO gone: inserted', kvm(node='pve1', vmid=773, update=True, ide={'ide3': 'isos:iso/nope.iso,media=cdrom'}),
        real_failure="volume 'isos:iso/nope.iso' does not exist"),
    one('volume gone: a drive option changed (disk)', disk(vmid=774, disk='scsi1', cache='unsafe'),
        real_failure=gone(774)),
    one('snapshot volume gone: migrate', kvm(node='pve2', vmid=760, migrate=True),
        real_failure=gone_at_migration('vmdata:760/vm-760-disk-1.qcow2')),
    one('snapshot vmstate gone: migrate', kvm(node='pve2', vmid=761, migrate=True),
        real_failure=gone_at_migration('vmdata:761/vm-761-state-s1.raw')),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS
CENSUS = {
    'volume gone: a drive option changed': ('R-any-115',),
    'volume gone: unused re-attached': ('R-any-115',),
    'volume gone: attached at a create': ('R-any-115',),
    'ISO gone: inserted': ('R-any-115',),
    'volume gone: a drive option changed (disk)': ('R-any-115',),
    'snapshot volume gone: migrate': ('R-power-158',),
    'snapshot vmstate gone: migrate': ('R-power-158',),
}


def _storages():
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages['vmdata']['gone'] = GONE  # removed on the host behind PVE's back
    return storages


def test_check_run_predicts_volumes_gone_where_a_write_activates_them(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'activation', VMS, storages=_storages())
    problems = run_batch(ansible, sim, seed, ROWS, writes_nothing=True)
    assert_rows_agree(summary, 'check-versus-real (issue 32, volumes gone where a write activates them)', CENSUS_ROWS,
                      problems)
