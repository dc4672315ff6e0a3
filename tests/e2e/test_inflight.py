"""VMs in flight and names under concurrency (issue 23; docs/pve-semantics.md §30).

While a create or clone task runs, Proxmox VE's config of the new VM holds only `lock: create` /
`lock: clone` (qemu-server Qemu.pm create_vm → create_and_lock_config, clone_vm), so its name is not
visible until the task ends; pvesim does the same (tests/pvesim/tests/test_placeholder_configs.py).
A task that meets such a VM waits for its task and then converges on what it made; a task that
made a VM by name alone looks again once its own task ended, and the lowest vmid of that name
keeps it (README, "Names under concurrency").

Each scenario slows the first create or clone with pvesim's `task-slow` fault, starts it in one
ansible-playbook process, and runs the re-run's check and real runs while it is in flight, then
the third run ("again") once everything ended.
"""

import threading
import time

from concurrent.futures import ThreadPoolExecutor

from harness import add_canary_user

SLOW = 6.0  # real seconds the first create or clone takes


def kvm(_task='kvm', **options):
    return {'name': _task, 'ferro.proxmox.proxmox_kvm': options, 'delegate_to': 'localhost', 'register': 'out'}


def play(*tasks):
    return [{'name': 'e2e', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def vms(sim):
    return sim.api('GET', '/cluster/resources', {'type': 'vm'})


def named(sim, name):
    return sorted(int(r['vmid']) for r in vms(sim) if r.get('name') == name)


def wait_in_flight(sim, lock, timeout=60):
    """The vmid of the VM that holds `lock` (create or clone), once one does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [int(r['vmid']) for r in vms(sim) if r.get('lock') == lock]
        if found:
            return found[0]
        time.sleep(0.05)
    raise TimeoutError('no VM with lock %s appeared' % lock)


def wait_idle(sim, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not sim.api('GET', '/nodes/pve1/tasks', {'source': 'active'}):
            return
        time.sleep(0.1)
    raise TimeoutError('tasks still running on pve1')


def rerun_during(ansible, sim, first, rerun, lock, task_type):
    """Run `first` slowed in the background and, once its VM holds `lock`, `rerun` while it is in
    flight: with --check, then (from the same state again: the default seed, the first run
    repeated) for real; then `rerun` again once every task ended. Returns the vmid in flight, the
    first run's result (of the real round) and the three re-runs."""
    runs = {}
    for mode in ('check', 'real'):
        sim.admin('DELETE', '/_sim/faults')
        sim.reset('default')
        add_canary_user(sim)
        sim.clear_requests()
        sim.fault(kind='task-slow', type=task_type, seconds=SLOW)
        with ThreadPoolExecutor(max_workers=2) as pool:
            first_run = pool.submit(ansible.run_playbook, first, diff=True)
            in_flight = wait_in_flight(sim, lock)
            started = time.monotonic()
            rerun_run = ansible.run_playbook(rerun, check=mode == 'check', diff=True)
            # the re-run waited for the first task instead of answering at once
            assert time.monotonic() - started > SLOW / 3, mode
            first_run = first_run.result()
        for run in (first_run, rerun_run):
            assert run.rc == 0, run.stdout[-4000:]
        runs[mode] = (in_flight, first_run.task('kvm')['result'], rerun_run)
    assert runs['check'][0] == runs['real'][0]
    wait_idle(sim)
    again = ansible.run_playbook(rerun, diff=True)
    assert again.rc == 0, again.stdout[-4000:]
    in_flight, first_result, real = runs['real']
    return in_flight, first_result, runs['check'][2], real, again


def test_a_rerun_by_vmid_during_a_slowed_create_waits_and_reports_the_vm_it_made(ansible, sim):
    task = kvm(node='pve1', vmid=161, name='db-01', cores=2, memory=1024, update=False)
    vmid, first, check, real, again = rerun_during(ansible, sim, play(task), play(task), 'create', 'qmcreate')
    assert vmid == 161 and first['changed'] is True and first['msg'] == 'VM db-01 with vmid 161 deployed'
    for run in (check, real, again):
        result = run.task('kvm')['result']
        # not "already exists and differs ... (not changed: update is false)" on the half-made VM
        assert (result['changed'], result['msg'], result['drift']) == (
            False, 'VM db-01 with vmid 161 already exists', {}), result
        assert result['vmid'] == 161 and result['name'] == 'db-01'
    assert named(sim, 'db-01') == [161]


def test_a_rerun_by_name_during_a_slowed_create_keeps_one_vm(ansible, sim):
    task = kvm(node='pve1', name='db-02', cores=2, memory=1024, update=False)
    vmid, first, check, real, again = rerun_during(ansible, sim, play(task), play(task), 'create', 'qmcreate')
    assert first['changed'] is True and first['vmid'] == vmid
    check_result, real_result = check.task('kvm')['result'], real.task('kvm')['result']
    for result in (check_result, real_result, again.task('kvm')['result']):
        assert (result['changed'], result['vmid'], result['msg']) == (
            False, vmid, 'VM db-02 with vmid %d already exists' % vmid), result
    # the real re-run made its own VM before it could see the name, and removed that one only
    made = [int(r['path'].rsplit('/', 1)[-1]) for r in sim.requests() if r['method'] == 'DELETE']
    assert len(made) == 1 and made[0] != vmid
    assert any('removed it again' in w and 'VM %d has that name too' % vmid in w
               for w in real_result.get('warnings', [])), real_result.get('warnings')
    assert named(sim, 'db-02') == [vmid] and made[0] not in [int(r['vmid']) for r in vms(sim)]


def test_a_rerun_during_a_slowed_clone_waits_and_reports_the_clone(ansible, sim):
    task = kvm(node='pve1', clone='debian-13-template', name='web-07', full=True, timeout=120)
    vmid, first, check, real, again = rerun_during(ansible, sim, play(task), play(task), 'clone', 'qmclone')
    assert first['changed'] is True and first['vmid'] == vmid
    assert first['msg'] == 'VM web-07 with newid %d cloned from vm with vmid 9000' % vmid
    for run in (check, real, again):
        result = run.task('kvm')['result']
        assert (result['changed'], result['vmid'], result['msg']) == (
            False, vmid, 'VM web-07 with vmid %d already exists' % vmid), result
    assert named(sim, 'web-07') == [vmid]


def test_a_rerun_by_newid_during_a_slowed_clone_waits_for_it(ansible, sim):
    task = kvm(node='pve1', clone='debian-13-template', newid=171, name='web-08', full=True)
    vmid, first, check, real, again = rerun_during(ansible, sim, play(task), play(task), 'clone', 'qmclone')
    assert vmid == 171 and first['changed'] is True
    for run in (check, real, again):
        result = run.task('kvm')['result']
        assert (result['changed'], result['vmid']) == (False, 171), result
    assert named(sim, 'web-08') == [171]


def test_four_overlapping_clones_to_one_name_leave_one_vm(ansible, sim):
    before = {int(r['vmid']): sim.api('GET', '/nodes/%s/qemu/%s/config' % (r['node'], r['vmid']))
              for r in vms(sim)}
    # every clone slowed, so that all four run at once
    sim.fault(kind='task-slow', type='qmclone', seconds=SLOW, count=4)
    sim.clear_requests()
    task = play(kvm(node='pve1', clone='debian-13-template', name='dup-01', full=True))
    go = threading.Barrier(4)

    def pipeline(_):
        go.wait()
        return ansible.run_playbook(task)
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = list(pool.map(pipeline, range(4)))
    wait_idle(sim)
    results = [r.task('kvm')['result'] for r in runs]
    assert all(r.rc == 0 for r in runs), [r.stdout[-2000:] for r in runs]
    survivors = named(sim, 'dup-01')
    assert len(survivors) == 1, survivors
    winner = survivors[0]
    cloned = sorted(int(r['body']['newid']) for r in sim.requests()
                    if r['method'] == 'POST' and r['path'].endswith('/clone') and 'body' in r)
    deleted = sorted(int(r['path'].rsplit('/', 1)[-1]) for r in sim.requests() if r['method'] == 'DELETE')
    # every task reports the one VM that keeps the name; only the one that made it reports a change
    assert sorted(r['vmid'] for r in results) == [winner] * 4
    changed = [r for r in results if r['changed']]
    assert len(changed) == 1 and changed[0]['msg'].startswith('VM dup-01 with newid %d cloned' % winner), results
    # each other task removed the VM it made itself, and no other: clones that collided on a
    # vmid (already exists) made none
    made = sorted(set(cloned) & set(deleted) | {winner})
    assert deleted == sorted(set(made) - {winner}), (cloned, deleted)
    losers = [r for r in results if not r['changed']]
    for result in losers:
        warned = [w for w in result.get('warnings', []) if 'removed it again' in w]
        assert len(warned) <= 1
    assert sum(1 for r in losers for w in r.get('warnings', []) if 'removed it again' in w) == len(deleted)
    # no VM the tasks did not make was touched
    after = {int(r['vmid']): sim.api('GET', '/nodes/%s/qemu/%s/config' % (r['node'], r['vmid'])) for r in vms(sim)}
    assert set(after) == set(before) | {winner}
    assert all(after[v] == before[v] for v in before)
    print('four overlapping clones: made %s, removed %s, kept %d' % (made, deleted, winner))


def test_disk_nic_and_info_on_a_vm_being_created_wait_for_it(ansible, sim):
    sim.fault(kind='task-slow', type='qmcreate', seconds=SLOW)
    upid = sim.api('POST', '/nodes/pve1/qemu', {'vmid': 162, 'name': 'app-01', 'memory': 1024})
    assert wait_in_flight(sim, 'create') == 162
    book = play(
        {'name': 'disk', 'ferro.proxmox.proxmox_disk': {'vmid': 162, 'disk': 'scsi1', 'storage': 'local-lvm', 'size': 2},
         'delegate_to': 'localhost'},
        {'name': 'nic', 'ferro.proxmox.proxmox_nic': {'vmid': 162, 'interface': 'net0', 'bridge': 'vmbr0'},
         'delegate_to': 'localhost'},
        {'name': 'info', 'ferro.proxmox.proxmox_vm_info': {'vmid': 162, 'config': 'current'},
         'delegate_to': 'localhost', 'register': 'info'},
    )
    run = ansible.run_playbook(book)
    assert run.rc == 0, run.stdout[-4000:]
    assert sim.wait_task(upid)['exitstatus'] == 'OK'
    # each task waited for the create and then acted on the VM it made
    assert run.task('disk')['result']['changed'] and run.task('nic')['result']['changed']
    vm = run.task('info')['result']['proxmox_vms'][0]
    assert vm['name'] == 'app-01' and 'lock' not in vm['config'] and str(vm['config']['memory']) == '1024'
    assert 'scsi1' in vm['config'] and 'net0' in vm['config']
