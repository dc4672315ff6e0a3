"""Snapshots where a write meets them (docs/pve-semantics.md §45): what PVE refuses of a VM whose snapshots use a
volume, and seeds that carry snapshots. Each test names the qemu-server 9.2.6 source it follows."""

import copy
import json
import os

from conftest import Q, config, error_of, ok, run

SEED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'seeds', 'default.json')


def _seed(tmp_path, **vm):
    with open(SEED, encoding='utf-8') as f:
        seed = json.load(f)
    base = {'vmid': 120, 'name': 'snapped', 'node': 'pve1', 'status': 'stopped', 'config': {
        'cores': 1, 'memory': '1024', 'scsihw': 'virtio-scsi-single',
        'scsi0': 'local-lvm:vm-120-disk-0,size=4G', 'scsi1': 'local-lvm:vm-120-disk-1,size=1G',
        'unused0': 'local-lvm:vm-120-disk-2'},
        'snapshots': {'before': {'cores': 1, 'memory': '1024', 'scsi0': 'local-lvm:vm-120-disk-0,size=4G',
                                 'scsi1': 'local-lvm:vm-120-disk-2,size=1G', 'snaptime': 1767225600}}}
    base.update(copy.deepcopy(vm))
    seed['vms'].append(base)
    path = tmp_path / 'snapshots.json'
    path.write_text(json.dumps(seed))
    return str(path)


def test_a_seed_carries_snapshots_listed_and_readable(sim, tmp_path):
    # Qemu.pm snapshot_list (each snapshot, then `current`) and vm_config with `snapshot`
    sim.reset(_seed(tmp_path))
    names = [s['name'] for s in sim.api('GET', Q + '/120/snapshot')]
    assert names == ['before', 'current']
    snap = sim.api('GET', Q + '/120/config', {'snapshot': 'before'})
    assert snap['scsi1'] == 'local-lvm:vm-120-disk-2,size=1G'
    # the snapshot's volume is on the storage (it is the VM's unused0 here)
    listed = [v['volid'] for v in sim.api('GET', '/nodes/pve1/storage/local-lvm/content')]
    assert 'local-lvm:vm-120-disk-2' in listed


def test_an_unused_volume_a_snapshot_uses_is_not_freed(sim, tmp_path):
    # Qemu.pm update_vm_api (an unusedN removed: try_deallocate_drive at once), QemuServer.pm try_deallocate_drive,
    # QemuServer/Drive.pm is_volume_in_use (the snapshots' drives)
    sim.reset(_seed(tmp_path))
    err = error_of(sim.api, 'PUT', Q + '/120/unlink', {'idlist': 'unused0', 'force': 1})
    assert "unable to delete 'local-lvm:vm-120-disk-2' - volume is still in use (snapshot?)" in str(err)
    assert config(sim, 120)['unused0'] == 'local-lvm:vm-120-disk-2'


def test_a_drive_removed_with_force_keeps_a_volume_a_snapshot_uses(sim, tmp_path):
    # QemuServer.pm vmconfig_apply_pending -> vmconfig_delete_or_detach_drive (force) -> try_deallocate_drive; the
    # error names the option, the delete stays pending (update_vm_api raises the errors)
    sim.reset(_seed(tmp_path, snapshots={'before': {'scsi1': 'local-lvm:vm-120-disk-1,size=1G'}}))
    err = error_of(sim.api, 'PUT', Q + '/120/unlink', {'idlist': 'scsi1', 'force': 1})
    assert err.status == 400 and "unable to apply pending change scsi1 : unable to delete " \
        "'local-lvm:vm-120-disk-1' - volume is still in use (snapshot?)" in str(err.errors), err.errors
    assert config(sim, 120, current=True)['scsi1'] == 'local-lvm:vm-120-disk-1,size=1G'


def test_a_volume_no_snapshot_uses_is_freed(sim, tmp_path):
    # the same path, is_volume_in_use false: vdisk_free
    sim.reset(_seed(tmp_path, snapshots={}))
    sim.api('PUT', Q + '/120/unlink', {'idlist': 'unused0', 'force': 1})
    assert 'unused0' not in config(sim, 120)
    listed = [v['volid'] for v in sim.api('GET', '/nodes/pve1/storage/local-lvm/content')]
    assert 'local-lvm:vm-120-disk-2' not in listed


def test_template_clone_and_move_refuse_snapshots(sim, tmp_path):
    # Qemu.pm template ("VM contains snapshots"), clone_vm (snapname), move_vm_disk (delete; to another VM)
    sim.reset(_seed(tmp_path, snapshots={'before': {'scsi1': 'local-lvm:vm-120-disk-1,size=1G'}}))
    assert 'unable to create template, because VM contains snapshots' in str(
        error_of(sim.api, 'POST', Q + '/120/template'))
    assert "snapshot 'nope' does not exist" in str(
        error_of(sim.api, 'POST', Q + '/120/clone', {'newid': 121, 'snapname': 'nope'}))
    assert "you can't move a disk with snapshots and delete the source" in str(
        error_of(sim.api, 'POST', Q + '/120/move_disk', {'disk': 'scsi1', 'storage': 'nvme-pool', 'delete': 1}))
    assert "Can't move disk used by a snapshot to another VM" in str(
        error_of(sim.api, 'POST', Q + '/120/move_disk', {'disk': 'scsi1', 'target-vmid': 100, 'target-disk': 'scsi5'}))
    # without delete the move is taken (the source stays as unusedN)
    ok(run(sim, 'POST', Q + '/120/move_disk', {'disk': 'scsi1', 'storage': 'nvme-pool'}))


def test_a_restore_refuses_a_drive_beside_its_archive(sim):
    # Qemu.pm create_vm: with `archive`, the first drive option (sorted, is_valid_drivename) conflicts, a 400 after
    # the privilege checks; without a drive the restore goes on (fakepve does not restore archives)
    err = error_of(sim.api, 'POST', Q, {'vmid': 130, 'archive': 'local:backup/vzdump-qemu-1.vma.zst',
                                        'scsi1': 'local-lvm:1', 'ide2': 'none,media=cdrom', 'cores': 2})
    assert err.status == 400 and err.errors == {'ide2': "option conflicts with option 'archive'"}, err.errors
    err = error_of(sim.api, 'POST', Q, {'vmid': 130, 'archive': 'local:backup/vzdump-qemu-1.vma.zst', 'cores': 2})
    assert 'conflicts' not in str(err) + str(err.errors)


def test_a_running_vm_unplugs_the_drive_then_keeps_a_volume_a_snapshot_uses(sim, tmp_path):
    # QemuServer.pm vmconfig_hotplug_pending: vm_deviceunplug, then vmconfig_delete_or_detach_drive (force) ->
    # try_deallocate_drive dies; the error is the option's, `hotplug problem - <error>`, and the delete stays pending
    sim.reset(_seed(tmp_path, status='running', snapshots={'before': {'scsi1': 'local-lvm:vm-120-disk-1,size=1G'}}))
    err = error_of(sim.api, 'PUT', Q + '/120/unlink', {'idlist': 'scsi1', 'force': 1})
    assert err.status == 400 and "hotplug problem - unable to delete 'local-lvm:vm-120-disk-1' - volume is still " \
        "in use (snapshot?)" in str(err.errors), err.errors
    assert config(sim, 120, current=True)['scsi1'] == 'local-lvm:vm-120-disk-1,size=1G'
