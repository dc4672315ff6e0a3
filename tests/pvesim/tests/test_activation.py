"""A volume gone from its file storage behind PVE's back (a seed's `gone`), as pve-storage 9.1.7
src/PVE/Storage/Plugin.pm `activate_volume` refuses it (pvesim's activation.py, docs/pve-semantics.md §65.3): in
qemu-server 9.2.6's start, migration (QemuMigrate.pm `scan_local_volumes`), (QemuServer.pm `vm_start_nolock`, `get_current_vm_volumes`: an ISO too), resize
(Qemu.pm `resize_vm`), disk move (`move_vm_disk`, before its eval) and clone (`clone_vm`, inside its eval:
`clone failed: `) tasks: `volume '<storage>:<volname>' does not exist`."""

import json

from conftest import Q, config, ok, run, volumes
from test_migrate import migrate, task_log
from test_strict_drives import USERS, _vm

GONE = "volume 'files:160/vm-160-disk-1.qcow2' does not exist"


SEED = {
    'nodes': ['pve1'], 'bridges': ['vmbr0'],
    'storages': {'thin': {'type': 'lvmthin', 'vgname': 'pve', 'thinpool': 'data', 'content': 'images'},
                 'files': {'type': 'dir', 'path': '/mnt/files', 'content': 'images,iso',
                           'files': {'iso/here.iso': 1024}, 'gone': ['160/vm-160-disk-1.qcow2', '163/vm-163-cloudinit.qcow2']}},
    'users': USERS,
    'vms': [_vm(160, scsi1='files:160/vm-160-disk-1.qcow2,size=1G'),
            _vm(161, ide2='files:iso/gone.iso,media=cdrom'),
            _vm(162, scsi1='files:162/vm-162-disk-1.qcow2,size=1G', ide2='files:iso/here.iso,media=cdrom'),
            _vm(163, ide2='files:163/vm-163-cloudinit.qcow2,media=cdrom')],
}


def test_a_volume_gone_from_its_file_storage_fails_each_task_that_activates_it(sim, tmp_path):
    path = tmp_path / 'gone.json'
    path.write_text(json.dumps(SEED))
    sim.reset(str(path))
    assert 'files:160/vm-160-disk-1.qcow2' not in volumes(sim, 'files')
    before = config(sim, 160)
    assert run(sim, 'POST', Q + '/160/status/start')['exitstatus'] == GONE
    assert run(sim, 'PUT', Q + '/160/resize', {'disk': 'scsi1', 'size': '+1G'})['exitstatus'] == GONE
    assert run(sim, 'POST', Q + '/160/move_disk', {'disk': 'scsi1', 'storage': 'thin'})['exitstatus'] == GONE
    assert run(sim, 'POST', Q + '/160/clone', {'newid': 170, 'full': 1})['exitstatus'] == 'clone failed: ' + GONE
    assert config(sim, 160) == before
    assert run(sim, 'POST', Q + '/161/status/start')['exitstatus'] == "volume 'files:iso/gone.iso' does not exist"
    # a clone copies a cloud-init drive, so activates it; a start makes it again (Cloudinit.pm)
    assert run(sim, 'POST', Q + '/163/clone', {'newid': 173, 'full': 1})['exitstatus'] == \
        "clone failed: volume 'files:163/vm-163-cloudinit.qcow2' does not exist"
    ok(run(sim, 'POST', Q + '/163/status/start'))
    # what the storage lists activates
    ok(run(sim, 'POST', Q + '/162/status/start'))
    ok(run(sim, 'POST', Q + '/160/move_disk', {'disk': 'scsi0', 'storage': 'files'}))


def test_a_migration_logs_a_local_volume_gone_and_aborts(sim, tmp_path):
    """QemuMigrate.pm scan_local_volumes: `$test_volid` activates each local volume in an eval and logs its
    error; the scan's errors abort the migration."""
    seed = dict(SEED, nodes=['pve1', 'pve2'])
    path = tmp_path / 'gone.json'
    path.write_text(json.dumps(seed))
    sim.reset(str(path))
    status = migrate(sim, 160, target='pve2')
    assert status['exitstatus'] == 'migration aborted', status
    assert any(line.endswith("can't migrate local disk 'files:160/vm-160-disk-1.qcow2': " + GONE)
               for line in task_log(sim, status)), task_log(sim, status)


def test_a_migration_activates_the_volumes_only_a_snapshot_names(sim, tmp_path):
    """QemuMigrate.pm scan_local_volumes walks QemuServer.pm `foreach_volid`, the snapshots' sections too: a
    snapshot's drive and its `vmstate` that are gone from the file storage abort the migration, each in its
    activation, before the snapshot checks (docs/pve-semantics.md §69)."""
    seed = json.loads(json.dumps(dict(SEED, nodes=['pve1', 'pve2'])))
    seed['storages']['files']['gone'] = ['164/vm-164-disk-1.qcow2', '165/vm-165-state-s1.raw']
    seed['vms'] = [
        dict(_vm(164), snapshots={'s1': {'scsi0': 'thin:vm-164-disk-0,size=1G',
                                         'scsi1': 'files:164/vm-164-disk-1.qcow2,size=1G'}}),
        dict(_vm(165), snapshots={'s1': {'scsi0': 'thin:vm-165-disk-0,size=1G',
                                         'vmstate': 'files:165/vm-165-state-s1.raw'}}),
        dict(_vm(166, scsi1='files:166/vm-166-disk-1.qcow2,size=1G'),
             snapshots={'s1': {'scsi1': 'files:166/vm-166-disk-1.qcow2,size=1G'}})]
    path = tmp_path / 'snap-gone.json'
    path.write_text(json.dumps(seed))
    sim.reset(str(path))
    for vmid, volid in ((164, 'files:164/vm-164-disk-1.qcow2'), (165, 'files:165/vm-165-state-s1.raw')):
        status = migrate(sim, vmid, target='pve2')
        assert status['exitstatus'] == 'migration aborted', status
        words = "can't migrate local disk '{0}': volume '{0}' does not exist".format(volid)
        assert any(line.endswith(words) for line in task_log(sim, status)), task_log(sim, status)
    ok(migrate(sim, 166, target='pve2'))


def test_a_drive_naming_a_gone_volume_fails_a_create_and_a_config_write(sim, tmp_path):
    """Qemu.pm create_disks: a drive naming an existing volume (re-attached, or an option of it changed) is
    activated after its access, content and format checks (docs/pve-semantics.md §68); a create's task
    dies with `unable to create VM <vmid> - ` before it and writes no config."""
    path = tmp_path / 'gone.json'
    path.write_text(json.dumps(SEED))
    sim.reset(str(path))
    before = config(sim, 160)
    status = run(sim, 'POST', Q + '/160/config', {'scsi1': 'files:160/vm-160-disk-1.qcow2,size=1G,cache=unsafe'})
    assert status['exitstatus'] == GONE
    assert run(sim, 'POST', Q + '/160/config', {'ide3': 'files:iso/gone.iso,media=cdrom'})['exitstatus'] == \
        "volume 'files:iso/gone.iso' does not exist"
    # its format= is checked before it is activated (checked_parse_volname: the name's format)
    status = run(sim, 'POST', Q + '/160/config', {'scsi1': 'files:160/vm-160-disk-1.qcow2,format=raw'})
    assert status['exitstatus'] == "drive 'scsi1' - volume 'files:160/vm-160-disk-1.qcow2' - 'format=raw' option " \
        "different from storage format 'qcow2'"
    assert config(sim, 160) == before
    status = run(sim, 'POST', Q, {'vmid': 180, 'scsi0': 'files:160/vm-160-disk-1.qcow2'})
    assert status['exitstatus'] == 'unable to create VM 180 - ' + GONE
    # what the storage lists is attached
    ok(run(sim, 'POST', Q + '/162/config', {'ide3': 'files:iso/here.iso,media=cdrom'}))
