"""What the `qmigrate` task refuses from the VM's config, snapshots and replication jobs (docs/pve-semantics.md §59.2),
as pvesim/migrate_task.py follows qemu-server 9.2.6 src/PVE/QemuMigrate.pm `prepare` (a `local` job to the target
with `remove_job`; QemuMigrate/Helpers.pm `check_local_resources`: local devices) and `scan_local_volumes` (a
snapshot's volume on local storage: only replicated ones go live; zfspool, raw on btrfs and qcow2 without volume
chains carry snapshots offline). Each aborts the task ("migration aborted") with its words in the task log."""

import json
import os

from test_migrate import migrate, resource, task_log
from test_values import SEED_DIR, _vm, seed



def _snap(vmid, storage, volname):
    return {'s1': {'scsi0': '%s:%s,size=1G' % (storage, volname % vmid)}}


def _aborted(sim, vmid, words, **params):
    status = migrate(sim, vmid, target='pve2', **params)
    assert status['exitstatus'] == 'migration aborted', status
    assert any(line.endswith(words) for line in task_log(sim, status)), task_log(sim, status)
    assert resource(sim, vmid)['node'] == 'pve1'


def test_the_migration_task_refuses_what_the_config_snapshots_and_jobs_tell(sim, tmp_path):
    vms = [
        _vm(340, usb0='host=1234:5678', serial0='socket', hostpci0='mapping=gpu', parallel0='/dev/parport0'),
        _vm(341, usb0='spice', serial0='socket', hostpci0='mapping=gpu'),
        _vm(342, status='running', virtiofs0='dirid=share'),
        _vm(343),
        dict(_vm(344, scsi0='local-lvm:vm-344-disk-0,size=1G'), snapshots=_snap(344, 'local-lvm', 'vm-%d-disk-0')),
        dict(_vm(345, scsi0='vmdata:345/vm-345-disk-0.qcow2,size=1G'),
             snapshots=_snap(345, 'vmdata', '345/vm-%d-disk-0.qcow2')),
        dict(_vm(346, status='running', scsi0='vmdata:346/vm-346-disk-0.qcow2,size=1G'),
             snapshots=_snap(346, 'vmdata', '346/vm-%d-disk-0.qcow2')),
    ]
    jobs = [{'id': '343-0', 'guest': 343, 'type': 'local', 'target': 'pve2', 'remove_job': 'full'}]
    seed(sim, tmp_path, vms, replication=jobs,  # 341's mapping covers the target (mappings.py, §64)
         mappings={'pci': [{'id': 'gpu', 'map': ['node=pve1,path=0000:01:00.0', 'node=pve2,path=0000:01:00.0']}]})
    _aborted(sim, 340, "can't migrate VM which uses local devices: parallel0, usb0")
    _aborted(sim, 342, "can't migrate VM which uses local devices: virtiofs", online=1)
    _aborted(sim, 343, 'refusing to migrate replicated VM whose replication job is marked for removal')
    _aborted(sim, 344, "can't migrate local disk 'local-lvm:vm-344-disk-0': non-migratable snapshot exists")
    _aborted(sim, 346, "can't migrate local disk 'vmdata:346/vm-346-disk-0.qcow2': online storage migration not "
             'possible if non-replicated snapshot exists', online=1, **{'with-local-disks': 1})
    # a SPICE port, a socket and a mapped device are no local devices; qcow2 on a directory carries its snapshots
    for vmid in (341, 345):
        assert migrate(sim, vmid, target='pve2')['exitstatus'] == 'OK', vmid
        assert resource(sim, vmid)['node'] == 'pve2'


def test_two_storages_on_one_path_abort_the_migration(sim, tmp_path):
    """scan_local_volumes: two volume ids of the VM's own naming one path (pve-storage `path`) die after the scan
    (docs/pve-semantics.md §65.2); the same storage seen once migrates."""
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = json.load(f)['storages']
    storages['alias'] = dict(storages['vmdata'])  # another name for /mnt/vmdata
    vms = [_vm(347, scsi1='vmdata:347/vm-347-disk-1.qcow2,size=1G', scsi2='alias:347/vm-347-disk-1.qcow2,size=1G'),
           _vm(348, scsi1='vmdata:348/vm-348-disk-1.qcow2,size=1G')]
    seed(sim, tmp_path, vms, storages=storages)
    _aborted(sim, 347, "detected not supported aliased volumes: 'alias:347/vm-347-disk-1.qcow2', "
             "'vmdata:347/vm-347-disk-1.qcow2'")
    assert migrate(sim, 348, target='pve2')['exitstatus'] == 'OK'
