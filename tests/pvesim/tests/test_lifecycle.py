"""Power actions, create, delete and clone (issue 2 items 4-5; docs/pve-semantics.md §13-§16)."""

import threading
import time

from conftest import MAC, Q, config, create, error_of, ok, run, volumes


def test_shutdown_of_a_stopped_vm_is_a_task_that_ends_ok(sim):
    # qemu-server src/PVE/API2/Qemu.pm vm_shutdown; QemuServer.pm vm_stop (not running → nothing)
    # (9.2.6); docs/pve-semantics.md §16, §21 D9
    create(sim, 200)
    status = run(sim, 'POST', Q + '/200/status/shutdown')
    assert status['type'] == 'qmshutdown' and status['exitstatus'] == 'OK'


def test_stop_of_a_stopped_vm_ends_ok_and_a_locked_running_vm_fails_in_the_task(sim):
    # Qemu.pm vm_stop: lock checked inside the worker, only if running (9.2.6); §16, §21 D11
    create(sim, 200)
    sim.fault(kind='lock', vmid=200, lock='backup', seconds=30)
    ok(run(sim, 'POST', Q + '/200/status/stop'))
    sim.fault(kind='lock', vmid=100, lock='backup', seconds=30)
    status = run(sim, 'POST', Q + '/100/status/stop')
    assert status['exitstatus'] == 'VM is locked (backup)'


def test_reboot_of_a_stopped_vm_is_a_500_before_any_task(sim):
    # Qemu.pm vm_reboot: die "VM $vmid not running" before fork_worker (9.2.6); §16
    create(sim, 200)
    err = error_of(sim.api, 'POST', Q + '/200/status/reboot')
    assert (err.status, err.message) == (500, 'VM 200 not running')


def test_start_of_a_running_vm_fails_in_the_task(sim):
    # QemuServer.pm vm_start_nolock: "VM $vmid already running" (9.2.6); §16
    status = run(sim, 'POST', Q + '/100/status/start')
    assert (status['type'], status['exitstatus']) == ('qmstart', 'VM 100 already running')


def test_start_of_a_template_fails_in_the_task(sim):
    # QemuServer.pm vm_start: "you can't start a vm if it's a template" (9.2.6); §16
    status = run(sim, 'POST', Q + '/9000/status/start')
    assert status['exitstatus'] == "you can't start a vm if it's a template"


def test_create_is_a_qmcreate_task_holding_the_create_lock(sim):
    # Qemu.pm create_vm; AbstractConfig.pm create_and_lock_config (9.2.6 / 6.0.2); §13
    sim.time_scale(0.05)
    upid = sim.api('POST', Q, {'vmid': 200, 'name': 'new', 'scsi0': 'local-lvm:1'})
    assert upid.split(':')[5:7] == ['qmcreate', '200']
    assert sim.api('GET', '/nodes/pve1/tasks/{0}/status'.format(upid))['status'] == 'running'
    assert sim.api('GET', Q + '/200/status/current')['lock'] == 'create'
    ok(sim.wait_task(upid))
    cfg = config(sim, 200)
    assert 'lock' not in cfg and cfg['boot'] == 'order=scsi0' and cfg['name'] == 'new'


def test_delete_of_a_running_vm_fails_before_any_task(sim):
    # Qemu.pm destroy_vm: "VM $vmid is running - destroy failed" before the fork (9.2.6); §14
    sim.clear_requests()
    err = error_of(sim.api, 'DELETE', Q + '/100')
    assert (err.status, err.message) == (500, 'VM 100 is running - destroy failed')
    assert not any(t['id'] == '100' and t['type'] == 'qmdestroy' for t in sim.api('GET', '/nodes/pve1/tasks'))


def test_delete_is_a_qmdestroy_task_that_frees_every_owned_volume(sim):
    # Qemu.pm destroy_vm; QemuServer.pm destroy_vm (drives, unusedN, pending drives) (9.2.6); §14
    create(sim, 200, scsi0='local-lvm:1', scsi1='local-lvm:1')
    sim.api('PUT', Q + '/200/config', {'delete': 'scsi1'})
    status = run(sim, 'DELETE', Q + '/200')
    assert (status['type'], status['exitstatus']) == ('qmdestroy', 'OK')
    assert not [v for v in volumes(sim, 'local-lvm') if 'vm-200-' in v]
    err = error_of(sim.api, 'GET', Q + '/200/config')
    assert (err.status, err.message) == (500, "Configuration file 'nodes/pve1/qemu-server/200.conf' does not exist")


def test_clone_holds_the_clone_lock_on_the_target_while_it_runs(sim):
    # Qemu.pm clone_vm: target config with only 'lock: clone' written at once; the worker holds the
    # target's config-file lock (`$lock_target_vm`) for the whole copy, so a POST config is refused at
    # once by its check_lock before the fork and a PUT config waits for the lock (update_vm_api
    # lock_config), then finds the lock gone (9.2.6); docs/pve-semantics.md §15, §23
    sim.time_scale(0.05)
    upid = sim.api('POST', Q + '/9000/clone', {'newid': 300, 'name': 'web-2'})
    assert upid.split(':')[5:7] == ['qmclone', '9000']
    assert config(sim, 300) == {'lock': 'clone'}
    err = error_of(sim.api, 'POST', Q + '/300/config', {'cores': 2})
    assert (err.status, err.message) == (500, 'VM is locked (clone)')
    resources = dict((r['vmid'], r) for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}))
    assert resources[300]['lock'] == 'clone'
    sim.api('PUT', Q + '/300/config', {'cores': 3})
    assert sim.wait_task(upid)['exitstatus'] == 'OK'
    cfg = config(sim, 300)
    assert 'lock' not in cfg and cfg['cores'] == 3


def test_delete_during_a_clone_waits_for_it_then_destroys_or_times_out(sim):
    # Qemu.pm destroy_vm: the qmdestroy worker takes lock_config (10 s) before its checks; the clone
    # holds the target's lock for its copy (8 PVE s here), so the destroy waits and then removes the
    # finished clone; a copy longer than the wait ends the destroy with the lock timeout (9.2.6); §14, §23
    sim.time_scale(0.05)
    clone = sim.api('POST', Q + '/9000/clone', {'newid': 300, 'name': 'web-2'})
    status = run(sim, 'DELETE', Q + '/300')
    assert (status['type'], status['exitstatus']) == ('qmdestroy', 'OK')
    ok(sim.wait_task(clone))
    assert 300 not in [r['vmid'] for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})]
    sim.fault(kind='task-slow', type='qmclone', seconds=2)
    clone = sim.api('POST', Q + '/9000/clone', {'newid': 301, 'name': 'web-3'})
    status = run(sim, 'DELETE', Q + '/301')
    assert status['exitstatus'] == "can't lock file '/var/lock/qemu-server/lock-301.conf' - got timeout"
    ok(sim.wait_task(clone))


def test_writes_to_the_clone_source_wait_for_the_clone(sim):
    # Qemu.pm clone_vm holds the source config lock; update_vm waits for it (9.2.6); §15
    sim.time_scale(0.05)
    clone = sim.api('POST', Q + '/100/clone', {'newid': 300, 'full': 1})
    sim.api('PUT', Q + '/100/config', {'description': 'after clone'})
    assert sim.api('GET', '/nodes/pve1/tasks/{0}/status'.format(clone))['status'] == 'stopped'


def test_clone_gets_new_macs_its_own_cloudinit_and_linked_disks_of_the_template(sim):
    # Qemu.pm clone_vm: new MACs, clone_disk for cloud-init, linked clone of a template (9.2.6); §9, §15
    ok(run(sim, 'POST', Q + '/9000/clone', {'newid': 300, 'name': 'web-2'}))
    cfg = config(sim, 300)
    src = config(sim, 9000)
    mac = cfg['net0'].split(',')[0].split('=')[1]
    assert MAC.match(mac) and cfg['net0'] != src['net0'] and cfg['net0'].endswith(',bridge=vmbr0')
    assert cfg['ide2'] == 'vmdata:300/vm-300-cloudinit.qcow2,media=cdrom,size=4M'
    assert cfg['scsi0'] == 'vmdata:9000/base-9000-disk-0.qcow2/300/vm-300-disk-0.qcow2,discard=on,size=8G'
    assert cfg['name'] == 'web-2' and 'template' not in cfg


def test_two_creates_racing_on_one_id_the_second_fails_already_exists(sim):
    # pve-manager PVE/API2/Cluster.pm nextid reserves nothing; Qemu.pm create_vm
    # "unable to create VM ... already exists on node" (9.2.11 / 9.2.6); §13, §18
    sim.time_scale(0.05)
    first = sim.api('GET', '/cluster/nextid')
    second = sim.api('GET', '/cluster/nextid')
    assert first == second == '101'
    results = []

    def create_one():
        try:
            results.append(sim.api('POST', Q, {'vmid': int(first)}))
        except Exception as e:  # noqa: BLE001
            results.append(e)
    threads = [threading.Thread(target=create_one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 1
    assert (errors[0].status, errors[0].message) == (
        500, "unable to create VM 101 - VM 101 already exists on node 'pve1'")


def test_tasks_are_visibly_running_before_stopped(sim):
    # pve-common RESTEnvironment.pm fork_worker; pve-manager Tasks.pm read_task_status (9.2.1/9.2.11); §17
    upid = sim.api('POST', Q + '/100/status/shutdown')
    first = sim.api('GET', '/nodes/pve1/tasks/{0}/status'.format(upid))
    assert first['status'] == 'running' and 'exitstatus' not in first
    final = sim.wait_task(upid)
    assert final['status'] == 'stopped' and final['exitstatus'] == 'OK'
    assert isinstance(final['pid'], int) and isinstance(final['starttime'], int)
    assert time.time() - final['starttime'] < 60
