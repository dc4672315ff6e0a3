"""Clone locking as qemu-server 9.2.6 does it: Qemu.pm `clone_vm` (`$lock_source_vm`, `$lock_target_vm`)
over AbstractConfig.pm `lock_config_shared` / `lock_config_full` and pve-common Tools.pm `lock_file_full`;
docs/pve-semantics.md §23."""

import threading

from conftest import Q, config, error_of, ok, run

LOCK_9000 = "can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout"


def test_twelve_clones_of_a_template_run_at_once_and_a_template_write_waits_for_them(sim):
    # clone_vm: lock_config_shared on a stopped source (1 s), lock_config_full on each target; a PUT config
    # of the template wants the exclusive lock (update_vm_api lock_config, 10 s) and gets it only when
    # every clone has let go; with the clones slowed past its wait it fails with the lock timeout
    sim.time_scale(0.05)
    upids = [sim.api('POST', Q + '/9000/clone', {'newid': 400 + i, 'name': 'fleet-{0}'.format(i)})
             for i in range(12)]
    results = {}
    writer = threading.Thread(target=lambda: results.update(put=error_of(sim.api, 'PUT', Q + '/9000/config',
                                                                          {'description': 'x'})))
    sim.fault(kind='task-slow', type='qmclone', seconds=1.5)
    slow = sim.api('POST', Q + '/9000/clone', {'newid': 450, 'name': 'slow'})
    writer.start()
    statuses = [sim.wait_task(upid) for upid in upids]
    assert [s['exitstatus'] for s in statuses] == ['OK'] * 12
    writer.join()
    assert (results['put'].status, results['put'].message) == (500, LOCK_9000)
    ok(sim.wait_task(slow))
    volumes = set(config(sim, 400 + i)['scsi0'].split(',')[0] for i in range(12))
    assert len(volumes) == 12 and all(v.startswith('vmdata:9000/base-9000-disk-0.qcow2/4') for v in volumes)
    # once they are done the template takes writes again
    sim.api('PUT', Q + '/9000/config', {'description': 'fleet template'})
    assert config(sim, 9000)['description'] == 'fleet template'


def test_a_write_to_the_template_during_a_short_clone_waits_then_applies(sim):
    # the same exclusive-versus-shared rule when the clones end within the writer's 10 s
    sim.time_scale(0.05)
    upid = sim.api('POST', Q + '/9000/clone', {'newid': 401})
    sim.api('PUT', Q + '/9000/config', {'description': 'after the clone'})
    assert sim.api('GET', '/nodes/pve1/tasks/{0}/status'.format(upid))['status'] == 'stopped'
    ok(sim.wait_task(upid))
    assert config(sim, 9000)['description'] == 'after the clone'


def test_a_running_source_is_locked_exclusively_so_a_second_clone_times_out(sim):
    # clone_vm: `lock_config_full($vmid, 1, ...)` when the source runs; a second clone waits 1 s and fails
    sim.time_scale(0.05)
    first = sim.api('POST', Q + '/100/clone', {'newid': 402})
    second = run(sim, 'POST', Q + '/100/clone', {'newid': 403})
    assert second['exitstatus'] == "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout"
    ok(sim.wait_task(first))
    assert 403 not in [r['vmid'] for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})]
