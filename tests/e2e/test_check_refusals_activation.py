"""Check versus real, issue 32: a migration's volume only a snapshot names, gone from its file storage (R-power-158).

QemuMigrate.pm `scan_local_volumes` walks QemuServer.pm `foreach_volid`, whose volumes are the config's, its pending
values' and each snapshot's (drives, unused volumes, `vmstate`); `$test_volid` activates each one on storage that is
not shared (pve-storage Plugin.pm `activate_volume`: `volume '<volid>' does not exist`), logs the error and the scan
aborts the migration. proxmox_kvm predicts it from the snapshots' configs it reads for the migration's other checks
(`Checks::migration`, `Preflight::gone`; docs/pve-semantics.md §69); pvesim follows PVE (activation.py,
tests/pvesim/tests/test_activation.py). Each row runs with `--check --diff` and for real from the same pvesim state.
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, kvm, one, run_batch, write_seed

VMS = [
    dict(_vm(760, 'row-760'), snapshots={'s1': {'scsi1': 'vmdata:760/vm-760-disk-1.qcow2,size=1G'}}),
    dict(_vm(761, 'row-761'), snapshots={'s1': {'vmstate': 'vmdata:761/vm-761-state-s1.raw'}}),
]
GONE = ['760/vm-760-disk-1.qcow2', '761/vm-761-state-s1.raw']


def gone(volid):
    return "can't migrate local disk '{0}': volume '{0}' does not exist".format(volid)


ROWS = [
    one('snapshot volume gone: migrate', kvm(node='pve2', vmid=760, migrate=True),
        real_failure=gone('vmdata:760/vm-760-disk-1.qcow2')),
    one('snapshot vmstate gone: migrate', kvm(node='pve2', vmid=761, migrate=True),
        real_failure=gone('vmdata:761/vm-761-state-s1.raw')),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS
CENSUS = {
    'snapshot volume gone: migrate': ('R-power-158',),
    'snapshot vmstate gone: migrate': ('R-power-158',),
}


def _storages():
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages['vmdata']['gone'] = GONE  # removed on the host behind PVE's back
    return storages


def test_check_run_predicts_a_snapshot_volume_gone_before_a_migration(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'activation', VMS, storages=_storages())
    problems = run_batch(ansible, sim, seed, ROWS, writes_nothing=True)
    assert_rows_agree(summary, 'check-versus-real (issue 32, snapshot volumes gone)', CENSUS_ROWS, problems)
