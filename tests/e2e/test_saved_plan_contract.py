"""A saved plan as a contract for the whole run (issue 33, part A; docs/saved-plans.md "Applying").

(a) every write goes through the plan: a pool move is recorded, shown in the summary, compared;
(b) every input a write depends on is recorded and verified: the VM's pool and power state, the
    snapshot a clone copies, the volume an import reads, a vmid the plan creates;
(c) the whole plan is verified before the run's first write: a drift in the THIRD task refuses
    the run with nothing written, one message naming the host and task;
(d) a planned write found done or impossible (a reboot of a VM now stopped, the removal of a VM
    already gone) fails the run, non-zero, naming it;
(e) a removal re-reads the VM between its stop and its destroy: a disk attached meanwhile refuses
    it, the VM left stopped; a lock taken at the destroy is a clear failure;
(f) an id PVE chooses is bound at apply, never compared: two hosts creating VMs with automatic
    vmids at forks 2, 20 items each, apply run after run.
Each refusal asserts pvesim's request log (no write) and the VMs' configs.
"""

import glob
import json
import os
import resource
import threading
import time

import pytest

from harness import CANARY_USER, add_canary_user

SEED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'pvesim', 'seeds')
WRITES = ('POST', 'PUT', 'DELETE')


def writes(sim):
    """The write requests sent to PVE (not the admin API, not a login)."""
    return [(r['method'], r['path']) for r in sim.requests()
            if r['method'] in WRITES and not r['path'].endswith('/access/ticket')]


def config(sim, vmid):
    return sim.api('GET', '/nodes/pve1/qemu/%d/config' % vmid)


def status(sim, vmid):
    return sim.api('GET', '/nodes/pve1/qemu/%d/status/current' % vmid)['status']


def pool_of(sim, vmid):
    return [r for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r['vmid'] == vmid][0].get('pool')


def records(plan_dir):
    out = []
    for path in sorted(glob.glob(os.path.join(plan_dir, 'tasks', '*', '*.json'))):
        with open(path, encoding='utf-8') as f:
            out.append(json.load(f))
    return out


def make_vm(sim, vmid, **config_):
    sim.wait_task(sim.api('POST', '/nodes/pve1/qemu', dict({'vmid': vmid, 'name': 'vm-%d' % vmid}, **config_)))


def runner(ansible, tmp_path, text, inventory=None, forks=None):
    """The playbook `text` and a function running it with its plan (check, then extra vars),
    the summary callback enabled."""
    playbook = tmp_path / 'site.yml'
    playbook.write_text(text)
    plan_dir = str(tmp_path / 'plan')

    def run(check, *extra):
        args = ['-e', 'ferro_proxmox_plan=%s' % plan_dir]
        if forks:
            args += ['--forks', str(forks)]
        for e in extra:
            args += ['-e', e]
        env = {'ANSIBLE_CALLBACKS_ENABLED': 'record_results,ferro.proxmox.plan_summary'}
        return ansible.run_playbook(str(playbook), check=check, extra_args=args, env=env, inventory=inventory)
    run.plan_dir = plan_dir
    return run


def play(*tasks):
    body = ''.join('    - name: %s\n      %s\n      delegate_to: localhost\n' % (name, module) for name, module in tasks)
    return '- name: contract\n  hosts: localhost\n  gather_facts: false\n  tasks:\n' + body


def refused(run, task, words):
    """The real run failed at `task`, before any write, with `words` in its message."""
    assert run.rc != 0
    assert run.failed_tasks == [task], run.stdout[-3000:]
    msg = run.task(task)['result']['msg']
    assert words in msg, msg
    return msg


# ---------------------------------------------------------------- (a) (b) pools


@pytest.fixture
def pools(sim, tmp_path):
    """The default seed with pools db (holding VM 100), web and other."""
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        seed = json.load(f)
    seed['pools'] = {'db': {'vms': [100]}, 'web': {}, 'other': {}}
    path = tmp_path / 'pools.json'
    path.write_text(json.dumps(seed))
    sim.reset(str(path))
    add_canary_user(sim)
    sim.add_user(CANARY_USER, acl={'/pool': ['Pool.Allocate', 'Pool.Audit']})
    return sim


POOL_PLAY = play(('pool', 'ferro.proxmox.proxmox_kvm: {vmid: 100, node: pve1, update: true, pool: web}'))


def test_a_pool_move_goes_through_the_plan_and_shows_in_the_summary(ansible, pools, tmp_path):
    run = runner(ansible, tmp_path, POOL_PLAY)
    check = run(True)
    assert check.rc == 0, check.stdout[-3000:]
    assert '~ move VM 100 to pool web  (pool)' in check.stdout, check.stdout[-2000:]
    assert 'localhost: 0 to create, 1 to change' in check.stdout
    planned = records(run.plan_dir)[0]
    assert planned['writes'] == [{'method': 'PUT', 'path': '/pools',
                                  'params': [['poolid', 'web'], ['vms', '100'], ['allow-move', '1']]}]
    assert planned['reads'][0]['pool'] == 'db'
    pools.clear_requests()
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    assert writes(pools) == [('PUT', '/api2/json/pools')]
    assert pool_of(pools, 100) == 'web'


def test_a_vm_moved_to_another_pool_after_the_check_is_refused(ansible, pools, tmp_path):
    run = runner(ansible, tmp_path, POOL_PLAY)
    assert run(True).rc == 0
    pools.add_user('ansible@pve', acl={'/pool': ['Pool.Allocate']})  # the other writer's token
    pools.api('PUT', '/pools', {'poolid': 'other', 'vms': '100', 'allow-move': 1})
    pools.clear_requests()
    msg = refused(run(False), 'pool', "VM 100's pool changed since the plan: db → other")
    assert 'writes nothing' in msg
    assert writes(pools) == []
    assert pool_of(pools, 100) == 'other'


# ---------------------------------------------------------------- (b) power state


def test_a_config_write_planned_on_a_stopped_vm_is_refused_once_it_runs(ansible, sim, tmp_path):
    make_vm(sim, 150, cores=1)
    run = runner(ansible, tmp_path, play(('cores', 'ferro.proxmox.proxmox_kvm: {vmid: 150, node: pve1, update: true, cores: 4}')))
    assert run(True).rc == 0
    sim.wait_task(sim.api('POST', '/nodes/pve1/qemu/150/status/start', {}))
    sim.clear_requests()
    refused(run(False), 'cores', 'VM 150 was stopped when the plan was made and is running now')
    assert writes(sim) == []
    assert config(sim, 150)['cores'] == 1


# ---------------------------------------------------------------- (b) a clone's snapshot


CLONE_PLAY = play(('clone', 'ferro.proxmox.proxmox_kvm: {vmid: 100, clone: existing-web, snapname: s1, '
                            'name: from-snap, newid: 160, node: pve1, full: true, storage: local-lvm}'))


def test_a_snapshot_deleted_and_taken_again_with_another_nic_is_refused(ansible, sim, tmp_path):
    sim.wait_task(sim.api('POST', '/nodes/pve1/qemu/100/snapshot', {'snapname': 's1'}))
    run = runner(ansible, tmp_path, CLONE_PLAY)
    check = run(True)
    assert check.rc == 0, check.stdout[-3000:]
    inputs = records(run.plan_dir)[0]['inputs']
    assert [i['id'] for i in inputs] == ['pve1/100/s1'] and 'net0' in inputs[0]['facts']
    # the snapshot deleted and taken again under its name, after a NIC was added
    sim.wait_task(sim.api('DELETE', '/nodes/pve1/qemu/100/snapshot/s1'))
    sim.api('POST', '/nodes/pve1/qemu/100/config', {'net2': 'virtio,bridge=vmbr0'})
    time.sleep(1.1)  # another snaptime
    sim.wait_task(sim.api('POST', '/nodes/pve1/qemu/100/snapshot', {'snapname': 's1'}))
    sim.api('POST', '/nodes/pve1/qemu/100/config', {'delete': 'net2'})
    sim.clear_requests()
    msg = refused(run(False), 'clone', 'the snapshot pve1/100/s1 the task copies changed since the plan')
    assert 'net2 (none) → virtio=' in msg, msg
    assert writes(sim) == []
    assert 160 not in [v['vmid'] for v in sim.api('GET', '/cluster/resources', {'type': 'vm'})]


# ---------------------------------------------------------------- (b) an import source


def test_an_import_source_grown_after_the_check_is_refused(ansible, sim, tmp_path):
    make_vm(sim, 150, scsi0='local-lvm:2')
    run = runner(ansible, tmp_path, play(
        ('import', 'ferro.proxmox.proxmox_disk: {vmid: 100, disk: scsi2, storage: local-lvm, '
                   'import_from: "local-lvm:vm-150-disk-0"}')))
    check = run(True)
    assert check.rc == 0, check.stdout[-3000:]
    assert records(run.plan_dir)[0]['inputs'] == [
        {'kind': 'volume', 'id': 'pve1/local-lvm:vm-150-disk-0', 'facts': {'size': str(2 << 30)}}]
    # the source is now a 40G image
    sim.api('PUT', '/nodes/pve1/qemu/150/resize', {'disk': 'scsi0', 'size': '40G'})
    sim.clear_requests()
    refused(run(False), 'import', 'the volume pve1/local-lvm:vm-150-disk-0 the task reads changed since the plan: '
                                  'size %d → %d' % (2 << 30, 40 << 30))
    assert writes(sim) == []
    assert 'scsi2' not in config(sim, 100)


# ---------------------------------------------------------------- (c) the whole run first


THREE = play(
    ('one', 'ferro.proxmox.proxmox_nic: {vmid: 100, interface: net1, bridge: vmbr0, model: virtio}'),
    ('two', 'ferro.proxmox.proxmox_kvm: {vmid: 100, node: pve1, update: true, cores: 3}'),
    ('three', 'ferro.proxmox.proxmox_kvm: {vmid: 150, node: pve1, update: true, memory: 1024}'),
)


def test_a_drift_in_the_third_task_writes_nothing_at_all(ansible, sim, tmp_path):
    make_vm(sim, 150)
    run = runner(ansible, tmp_path, THREE)
    assert run(True).rc == 0
    sim.api('PUT', '/nodes/pve1/qemu/150/config', {'description': 'changed meanwhile'})
    before = {100: config(sim, 100), 150: config(sim, 150)}
    sim.clear_requests()
    real = run(False)
    # the first task refuses the run, naming the third task's host, task and change
    msg = refused(real, 'one', 'host localhost, task "three" at site.yml:')
    assert "VM 150's config changed since the plan: description (none) → changed meanwhile" in msg, msg
    assert writes(sim) == []
    assert {100: config(sim, 100), 150: config(sim, 150)} == before
    # put back, the plan holds, and all three apply
    sim.api('PUT', '/nodes/pve1/qemu/150/config', {'delete': 'description'})
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    assert 'net1' in config(sim, 100) and config(sim, 100)['cores'] == 3 and config(sim, 150)['memory'] == '1024'


# ---------------------------------------------------------------- (d) done or impossible


def test_a_planned_reboot_of_a_vm_now_stopped_fails_the_run(ansible, sim, tmp_path):
    run = runner(ansible, tmp_path, play(('reboot', 'ferro.proxmox.proxmox_kvm: {vmid: 100, state: restarted}')))
    assert run(True).rc == 0
    sim.wait_task(sim.api('POST', '/nodes/pve1/qemu/100/status/stop', {}))
    sim.clear_requests()
    refused(run(False), 'reboot', 'VM 100 was running when the plan was made and is stopped now')
    assert writes(sim) == []
    assert status(sim, 100) == 'stopped'


def test_a_planned_removal_of_a_vm_already_gone_fails_the_run(ansible, sim, tmp_path):
    make_vm(sim, 150)
    run = runner(ansible, tmp_path, play(('remove', 'ferro.proxmox.proxmox_kvm: {vmid: 150, state: absent}')))
    assert run(True).rc == 0
    sim.wait_task(sim.api('DELETE', '/nodes/pve1/qemu/150'))
    sim.clear_requests()
    refused(run(False), 'remove', 'host localhost, task "remove" at site.yml:5: VM 150 is gone')
    assert writes(sim) == []


# ---------------------------------------------------------------- (e) removal guarded


REMOVE_PLAY = play(('remove', 'ferro.proxmox.proxmox_kvm: {vmid: 100, state: absent, force: true}'))


def _when_stopping(sim, action, method='POST', path='/nodes/pve1/qemu/100/status/stop'):
    """Run `action` once the removal's stop (or another) request reaches pvesim (delayed 1.5 s there)."""
    sim.admin('POST', '/_sim/faults', {'kind': 'latency', 'ms': 1500, 'method': method,
                                        'path': '^%s$' % path, 'count': 1})
    done = threading.Event()

    def watch():
        while not done.is_set():
            if any(r['method'] == method and r['path'].endswith(path) for r in sim.requests()):
                action()
                return
            time.sleep(0.05)
    thread = threading.Thread(target=watch)
    thread.start()
    return done, thread


def test_a_disk_attached_between_the_stop_and_the_destroy_is_never_destroyed(ansible, sim, tmp_path):
    run = runner(ansible, tmp_path, REMOVE_PLAY)
    assert run(True).rc == 0
    sim.clear_requests()
    done, thread = _when_stopping(sim, lambda: sim.api('POST', '/nodes/pve1/qemu/100/config', {'scsi1': 'local-lvm:1'}))
    try:
        real = run(False)
    finally:
        done.set()
        thread.join()
    msg = refused(real, 'remove', 'volumes were attached to it meanwhile (local-lvm:vm-100-disk-1)')
    assert 'not removed and is left stopped' in msg
    assert ('DELETE', '/api2/json/nodes/pve1/qemu/100') not in writes(sim)
    assert status(sim, 100) == 'stopped' and config(sim, 100)['scsi1'].startswith('local-lvm:vm-100-disk-1')


def test_a_lock_taken_at_the_destroy_is_a_clear_failure(ansible, sim, tmp_path):
    run = runner(ansible, tmp_path, REMOVE_PLAY)
    assert run(True).rc == 0
    sim.clear_requests()
    # the lock lands while the destroy request is on its way (after the stop and the re-read)
    done, thread = _when_stopping(sim, lambda: sim.admin('POST', '/_sim/faults', {
        'kind': 'lock', 'vmid': 100, 'lock': 'backup', 'seconds': 120}), 'DELETE', '/nodes/pve1/qemu/100')
    try:
        real = run(False)
    finally:
        done.set()
        thread.join()
    msg = refused(real, 'remove', 'deletion of VM 100 failed (it was stopped for the removal and is left stopped)')
    assert 'locked' in msg, msg
    assert status(sim, 100) == 'stopped' and config(sim, 100)['name'] == 'existing-web'


# ---------------------------------------------------------------- (f) ids PVE chooses


AUTO_PLAY = """
- name: automatic vmids, two hosts
  hosts: creators
  gather_facts: false
  tasks:
    - name: create
      ferro.proxmox.proxmox_kvm: {name: "auto-{{ inventory_hostname }}-{{ item }}", node: pve1, cores: 1, memory: 256}
      delegate_to: localhost
      loop: "{{ range(20) | list }}"
"""


def test_automatic_vmids_on_two_hosts_at_forks_2_apply_run_after_run(ansible, sim, tmp_path):
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text('creators:\n  hosts:\n    h1: {ansible_connection: local}\n    h2: {ansible_connection: local}\n')
    run = runner(ansible, tmp_path, AUTO_PLAY, inventory=str(inventory), forks=2)
    started, cpu = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    check = run(True)
    assert check.rc == 0, check.stdout[-3000:]
    assert {r['result']['vmid'] for r in records(run.plan_dir)} == {'(known after apply)'}
    real = run(False)
    elapsed = time.monotonic() - started
    assert real.rc == 0, real.stdout[-3000:]
    names = sorted(v['name'] for v in sim.api('GET', '/cluster/resources', {'type': 'vm'})
                   if v.get('name', '').startswith('auto-'))
    assert names == sorted('auto-%s-%d' % (h, i) for h in ('h1', 'h2') for i in range(20))
    bound = [r['result']['saved_plan']['bound']['vmid'] for r in real.results
             if r['task'] == 'create' and r['status'] == 'item_ok']
    assert len(set(bound)) == 40, bound
    # each item is one race of the two hosts for /cluster/nextid: how often the real run's order
    # differed from the check run's (the case that failed before ids were bound, not compared)
    planned = dict(((r['host'], r['occurrence']), r['planned_vmid']) for r in records(run.plan_dir))
    got = dict(((r['host'], r['result']['item']), r['result']['vmid']) for r in real.results
               if r['task'] == 'create' and r['status'] == 'item_ok')
    flipped = sum(1 for k, v in got.items() if planned.get(k) != v)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    print('automatic vmids: 20 races of 2 hosts at forks 2 (40 creates), %d bound to another id than planned; '
          'check and real run in %.1f s, %.1f s CPU' % (flipped, elapsed, after.ru_utime + after.ru_stime
                                                        - cpu.ru_utime - cpu.ru_stime))


BY_NAME_PLAY = play(
    ('create', 'ferro.proxmox.proxmox_kvm: {name: plan-auto, node: pve1, cores: 1, memory: 512}'),
    ('nic', 'ferro.proxmox.proxmox_nic: {name: plan-auto, interface: net0, bridge: vmbr0, model: virtio}'),
)


def test_a_later_task_addresses_a_vm_whose_vmid_pve_chose_at_apply(ansible, sim, tmp_path):
    run = runner(ansible, tmp_path, BY_NAME_PLAY)
    check = run(True)
    assert check.rc == 0, check.stdout[-3000:]
    planned = int(check.task('create')['result']['vmid'])
    # another run takes the planned vmid meanwhile: PVE gives the create the next one
    make_vm(sim, planned)
    sim.clear_requests()
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    got = real.task('create')['result']['vmid']
    assert got != planned and real.task('create')['result']['saved_plan']['bound'] == {'vmid': got}
    assert config(sim, got)['net0'].startswith('virtio=') and 'net0' not in config(sim, planned)
    assert [w for w in writes(sim) if '/qemu/%d' % planned in w[1]] == []


def test_a_vm_of_the_planned_name_made_meanwhile_refuses_the_run(ansible, sim, tmp_path):
    run = runner(ansible, tmp_path, BY_NAME_PLAY)
    assert run(True).rc == 0
    sim.wait_task(sim.api('POST', '/nodes/pve1/qemu', {'vmid': 170, 'name': 'plan-auto'}))
    sim.clear_requests()
    refused(run(False), 'create', 'a VM named plan-auto, which the plan creates, exists now (vmid 170)')
    assert writes(sim) == []
    assert 'net0' not in config(sim, 170)
