"""Check versus real, issue 32: a hook script snippet that is not there, SCSI `product`/`vendor` on an iSCSI volume below machine 4.1 (docs/pve-semantics.md §67).

Census rows (docs/refusals.md) R-config-190 and R-config-191, split out of R-config-90. Each row runs the same play
with `--check --diff` and for real, from the same pvesim state, and the two must agree task by task
(test_check_vs_real.py's `run_batch` and `compare_row`); every row is a refusal, so nothing may be written. The
module decides each before any write: the hook script from the storage's content listing (which shows snippets to a
user with Datastore.Allocate on the storage), the SCSI device type from storage.cfg and the VM's applied `machine`.
pvesim follows PVE in each (tests/pvesim/tests/test_hook_scsi.py): pve-guest-common GuestHelpers.pm
`check_hookscript` (`-f $path`, raised on the key by qemu-server's `update_vm_api`), qemu-server Qemu.pm
`assert_scsi_feature_compatibility` with Drive.pm `get_scsi_device_type` (an `iscsi://` path, pve-storage
ISCSIDirectPlugin.pm and ZFSPlugin.pm `path`, is `scsi-generic` below machine version 4.1).
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, kvm, one, run_batch, write_seed

WORDS = "information is only supported for 'scsi-hd' and 'scsi-cd' devices (e.g. not pass-through)."

VMS = [
    _vm(760, 'row-760'),
    _vm(761, 'row-761', machine='pc-i440fx-4.0', scsi1='ziscsi:vm-761-disk-1,size=1G'),
    _vm(762, 'row-762', machine='pc-q35-3.1', scsi2='direct:lun2,size=1G'),
]

# The default token's privileges and Datastore.Allocate on the storages: its listing shows snippets and LUNs.
ACL = ['VM.Allocate', 'VM.Audit', 'VM.Config.CDROM', 'VM.Config.CPU', 'VM.Config.Disk', 'VM.Config.HWType',
       'VM.Config.Memory', 'VM.Config.Network', 'VM.Config.Options', 'VM.PowerMgmt', 'Datastore.Allocate',
       'Datastore.AllocateSpace', 'Datastore.Audit', 'Sys.Audit', 'SDN.Use', 'SDN.Audit']
USERS = {'scripter@pve': {'tokens': {'rows': '2d4f6a8c-scripter-rows'}, 'acl': {'/': ACL}}}
SCRIPTER = {'PROXMOX_USER': 'scripter@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '2d4f6a8c-scripter-rows'}

ROWS = [
    one('hook script snippet not there', kvm(node='pve1', vmid=760, update=True, hookscript='local:snippets/gone.pl'),
        real_failure="hookscript: script 'local:snippets/gone.pl' does not exist"),
    one('SCSI product on ZFS over iSCSI below machine 4.1',
        kvm(node='pve1', vmid=761, update=True, scsi={'scsi1': 'ziscsi:vm-761-disk-1,size=1G,product=DISK'}),
        real_failure='scsi1: Passing of product ' + WORDS),
    one('SCSI vendor on an iSCSI-direct LUN below machine 4.1',
        kvm(node='pve1', vmid=762, update=True, scsi={'scsi2': 'direct:lun2,size=1G,vendor=ACME'}),
        real_failure='scsi2: Passing of vendor ' + WORDS),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS
CENSUS = {
    'hook script snippet not there': ('R-config-190',),
    'SCSI product on ZFS over iSCSI below machine 4.1': ('R-config-191',),
    'SCSI vendor on an iSCSI-direct LUN below machine 4.1': ('R-config-191',),
}


def _storages():
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages['local']['content'] = 'iso,import,snippets'
    storages['local']['files'] = {'snippets/hook.pl': 120}
    storages['ziscsi'] = {'type': 'zfs', 'content': 'images', 'portal': '192.0.2.10', 'target': 'iqn.2026-01.sim:t',
                          'pool': 'tank', 'blocksize': '4k', 'iscsiprovider': 'LIO', 'shared': 1}
    storages['direct'] = {'type': 'iscsidirect', 'content': 'images', 'portal': '192.0.2.11',
                          'target': 'iqn.2026-01.sim:d', 'shared': 1}
    return storages


def test_check_run_predicts_a_missing_hook_script_and_scsi_identity_on_iscsi(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'hook-scsi', VMS, users=USERS, storages=_storages())
    problems = run_batch(ansible, sim, seed, ROWS, env=SCRIPTER, writes_nothing=True)
    assert_rows_agree(summary, 'check-versus-real (issue 32, hook script and SCSI identity)', CENSUS_ROWS, problems)
