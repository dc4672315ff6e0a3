"""Storage replication jobs and the refusals of a replicated VM (docs/pve-semantics.md §50), as pvesim/replication.py
follows them: pve-guest-common 6.0.2 src/PVE/ReplicationConfig.pm `check_for_existing_jobs`,
`find_local_replication_job`; pve-manager 9.2.11 PVE/API2/ReplicationConfig.pm `index`; qemu-server 9.2.6
src/PVE/API2/Qemu.pm `destroy_vm` (without purge), `migrate_vm` (a running VM), `move_vm_disk` (a reassignment), `update_vm_api`
(`$check_replication`); pve-storage 9.1.7 Plugin.pm and ZFSPoolPlugin.pm `storage_can_replicate`."""

import json
import os

from conftest import Q, config, error_of, run

SEED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'seeds')


def _vm(vmid, status='stopped', **extra):
    conf = dict({'cores': 1, 'memory': '1024', 'scsihw': 'virtio-scsi-single'}, **extra)
    return {'vmid': vmid, 'name': 'r%d' % vmid, 'node': 'pve1', 'status': status, 'config': conf}


def seed(sim, tmp_path, vms, jobs):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        data = json.load(f)
    data['vms'] += vms
    data['nodes'] = ['pve1', 'pve2', 'pve3']
    data['storages']['tank'] = {'type': 'zfspool', 'pool': 'tank', 'content': 'images,rootdir',
                                'files': {'vm-500-disk-0': 4 << 30}}
    data['replication'] = jobs
    path = tmp_path / 'replication.json'
    path.write_text(json.dumps(data))
    sim.reset(str(path))


JOBS = [{'id': '500-0', 'guest': 500, 'type': 'local', 'target': 'pve2', 'schedule': '*/15'}]


def test_the_jobs_are_listed_with_their_guest(sim, tmp_path):
    seed(sim, tmp_path, [_vm(500, scsi0='tank:vm-500-disk-0,size=4G')], JOBS)
    jobs = sim.api('GET', '/cluster/replication')
    assert [(j['id'], j['guest'], j['target'], j['type']) for j in jobs] == [('500-0', 500, 'pve2', 'local')]


def test_a_removal_without_purge_is_refused_and_purge_removes_the_jobs(sim, tmp_path):
    seed(sim, tmp_path, [_vm(500, scsi0='tank:vm-500-disk-0,size=4G')], JOBS)
    err = error_of(sim.api, 'DELETE', Q + '/500')
    assert "There is a replication job '500-0' for guest '500' - Please remove that first." in err.message
    assert config(sim, 500)['scsi0'].startswith('tank:vm-500-disk-0')
    assert run(sim, 'DELETE', Q + '/500', {'purge': 1})['exitstatus'] == 'OK'
    assert sim.api('GET', '/cluster/replication') == []


def test_a_running_replicated_vm_migrates_live_only_to_a_target(sim, tmp_path):
    seed(sim, tmp_path, [_vm(500, status='running', scsi0='tank:vm-500-disk-0,size=4G')], JOBS)
    err = error_of(sim.api, 'POST', Q + '/500/migrate', {'target': 'pve3', 'online': 1})
    assert ("Cannot live-migrate replicated VM to node 'pve3' - not a replication target. Use 'force' to override."
            in err.message)
    assert 'lock' not in config(sim, 500)
    # to the job's target it starts (the task may fail later for reasons of its own)
    assert isinstance(sim.api('POST', Q + '/500/migrate', {'target': 'pve2', 'online': 1}), str)


def test_a_drive_that_cannot_replicate_is_refused_on_a_replicated_vm(sim, tmp_path):
    seed(sim, tmp_path, [_vm(500, scsi0='tank:vm-500-disk-0,size=4G'), _vm(501)], JOBS)
    err = error_of(sim.api, 'PUT', Q + '/500/config', {'scsi1': 'local-lvm:1'})
    assert 'cannot add non-replicatable volume to a replicated VM' in err.message
    err = error_of(sim.api, 'PUT', Q + '/500/config', {'scsi1': '/dev/sdb'})
    assert 'cannot add non-managed/pass-through volume to a replicated VM' in err.message
    assert 'scsi1' not in config(sim, 500)
    # a ZFS pool replicates, `replicate=0` opts out, a VM without jobs takes anything
    assert run(sim, 'POST', Q + '/500/config', {'scsi1': 'tank:1'})['exitstatus'] == 'OK'
    assert run(sim, 'POST', Q + '/500/config', {'scsi2': 'local-lvm:1,replicate=0'})['exitstatus'] == 'OK'
    assert run(sim, 'POST', Q + '/501/config', {'scsi1': 'local-lvm:1'})['exitstatus'] == 'OK'


def test_a_disk_is_reassigned_to_a_replicated_vm_only_from_a_storage_that_replicates(sim, tmp_path):
    # move_vm_disk ($load_and_check_reassign_configs): the source volume's format on its storage
    seed(sim, tmp_path, [_vm(500, scsi0='tank:vm-500-disk-0,size=4G'),
                         _vm(502, scsi0='local-lvm:vm-502-disk-0,size=4G')], JOBS)
    err = error_of(sim.api, 'POST', Q + '/502/move_disk', {'disk': 'scsi0', 'target-vmid': 500,
                                                           'target-disk': 'scsi1'})
    assert 'Cannot move disk to a replicated VM. Storage does not support replication!' in err.message
    assert config(sim, 502)['scsi0'].startswith('local-lvm:vm-502-disk-0')
    assert 'scsi1' not in config(sim, 500)
