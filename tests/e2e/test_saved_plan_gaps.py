"""A saved plan as a contract for the whole run (issue 33, the gaps closed last): an older format
version refused in words, the apply record signed like the plan, every API host's records verified
before the run's first write, a planned write found done by someone else during the run, and the
README's saved-plan example (with its closing lookup) applied once, exactly.

Each refusal asserts pvesim's request log (no write) and the VM's config afterwards.
"""

import json
import os
import re
import resource
import threading
import time

from harness import (CANARY_PASSWORD, CANARY_PRIVILEGES, CANARY_TOKEN_ID, CANARY_TOKEN_SECRET, CANARY_USER, ROOT,
                     add_canary_user)
from test_saved_plan_contract import config, make_vm, play, pool_of, pools, refused, runner  # noqa: F401 (pools: a fixture)

WRITES = ('POST', 'PUT', 'DELETE')
OTHER_SECRET = '5d1f0c3a-6f0e-4c8e-9a53-0b6e2f9a7c41'   # the second API host's token secret


def writes(sim):
    """The write requests pvesim saw (not a login), with their paths as sent."""
    return [(r['method'], r['path'].replace('/api2/json', '')) for r in sim.requests()
            if r['method'] in WRITES and not r['path'].endswith('/access/ticket')]


CORES = play(('cores', 'ferro.proxmox.proxmox_kvm: {vmid: 100, node: pve1, update: true, cores: 3}'))


def test_a_plan_of_an_older_format_version_is_refused_in_words(ansible, sim, tmp_path):
    run = runner(ansible, tmp_path, CORES)
    assert run(True).rc == 0
    header = os.path.join(run.plan_dir, 'plan.json')
    with open(header, encoding='utf-8') as f:
        data = json.load(f)
    assert data['format_version'] == 2
    data['format_version'] = 1
    with open(header, 'w', encoding='utf-8') as f:
        json.dump(data, f)
    sim.clear_requests()
    msg = refused(run(False), 'cores', 'has format version 1; this collection reads version 2: make a new plan')
    assert header.rsplit('/plan.json', 1)[0] in msg and 'nothing was written' in msg
    assert writes(sim) == [] and config(sim, 100)['cores'] != 3


def test_the_apply_record_is_signed_and_cannot_be_removed(ansible, sim, tmp_path):
    run = runner(ansible, tmp_path, CORES)
    assert run(True).rc == 0
    assert run(False).rc == 0 and config(sim, 100)['cores'] == 3
    apply_path = os.path.join(run.plan_dir, 'apply.json')
    assert os.path.exists(apply_path + '.mac')
    with open(apply_path, encoding='utf-8') as f:
        original = f.read()
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'cores': 1})   # so that the plan would apply again
    # an apply record edited to say nothing ran
    with open(apply_path, 'w', encoding='utf-8') as f:
        json.dump(dict(json.loads(original), attempted=[], complete=False), f)
    sim.clear_requests()
    refused(run(False), 'cores', "the saved plan's apply record %s was changed after the check run" % apply_path)
    assert writes(sim) == [] and config(sim, 100)['cores'] == 1
    # the apply record and its signature removed: the signed run file says a run applied the plan
    os.remove(apply_path)
    os.remove(apply_path + '.mac')
    sim.clear_requests()
    msg = refused(run(False), 'cores', 'was applied by a run started')
    assert 'its record of what it applied (apply.json) was removed: a plan applies once' in msg, msg
    assert writes(sim) == [] and config(sim, 100)['cores'] == 1


def test_every_api_host_is_verified_before_the_first_write(ansible, sim, tmp_path):
    make_vm(sim, 150, memory=512)
    other = 'localhost' if sim.host != 'localhost' else '127.0.0.1'   # pvesim's certificate names both
    run = runner(ansible, tmp_path, play(
        ('cores', 'ferro.proxmox.proxmox_kvm: {vmid: 100, node: pve1, update: true, cores: 3}'),
        ('memory', 'ferro.proxmox.proxmox_kvm: {vmid: 150, node: pve1, update: true, memory: 1024, api_host: %s}'
         % other)))
    assert run(True).rc == 0
    sim.api('PUT', '/nodes/pve1/qemu/150/config', {'description': 'changed meanwhile'})
    sim.clear_requests()
    # the first task speaks to the other API host, and refuses the run for the second's drift
    msg = refused(run(False), 'cores', 'API host %s: the saved plan no longer holds' % other)
    assert 'task "memory"' in msg and "VM 150's config changed since the plan: description (none)" in msg, msg
    assert writes(sim) == []
    assert config(sim, 100)['cores'] != 3 and str(config(sim, 150)['memory']) == '512'


def test_an_api_host_with_another_secret_is_verified_by_its_own_first_task(ansible, sim, tmp_path):
    """The limit: the first task cannot reach a host whose secret it does not hold (a plan signed
    with ferro_proxmox_plan_key); it warns, and that host's first task verifies it."""
    add_canary_user(sim)
    sim.add_user(CANARY_USER, password=CANARY_PASSWORD, acl={'/': CANARY_PRIVILEGES},
                 tokens={CANARY_TOKEN_ID: CANARY_TOKEN_SECRET, 'other': OTHER_SECRET})
    make_vm(sim, 150, memory=512)
    other = 'localhost' if sim.host != 'localhost' else '127.0.0.1'
    run = runner(ansible, tmp_path, play(
        ('cores', 'ferro.proxmox.proxmox_kvm: {vmid: 100, node: pve1, update: true, cores: 3}'),
        ('memory', 'ferro.proxmox.proxmox_kvm: {vmid: 150, node: pve1, update: true, memory: 1024, api_host: %s, '
                   'api_token_id: other, api_token_secret: %s}' % (other, OTHER_SECRET))))
    assert run(True, 'ferro_proxmox_plan_key=a long key of the change').rc == 0
    sim.api('PUT', '/nodes/pve1/qemu/150/config', {'description': 'changed meanwhile'})
    sim.clear_requests()
    real = run(False, 'ferro_proxmox_plan_key=a long key of the change')
    msg = refused(real, 'memory', "VM 150's config changed since the plan: description (none)")
    warned = ' '.join(real.task('cores')['result'].get('warnings') or [])
    assert 'records for API host %s could not be verified before this run\'s first write' % other in warned, warned
    assert 'writes nothing' in msg
    assert [w for w in writes(sim) if '/qemu/150' in w[1]] == [] and config(sim, 100)['cores'] == 3
    assert str(config(sim, 150)['memory']) == '512'


def test_a_planned_removal_done_by_someone_else_during_the_run_fails_naming_it(ansible, sim, tmp_path):
    """The "unmade" guard: after the whole-plan verification, while the first task writes, someone
    else removes the VM the second task removes; the second task finds nothing to do and fails,
    naming the planned write that did not run."""
    make_vm(sim, 150)
    run = runner(ansible, tmp_path, play(
        ('cores', 'ferro.proxmox.proxmox_kvm: {vmid: 100, node: pve1, update: true, cores: 3}'),
        ('remove', 'ferro.proxmox.proxmox_kvm: {vmid: 150, node: pve1, state: absent}')))
    assert run(True).rc == 0
    sim.clear_requests()
    sim.admin('POST', '/_sim/faults', {'kind': 'latency', 'ms': 1500, 'path': '^/nodes/pve1/qemu/100/config$',
                                        'method': 'PUT', 'count': 1})
    sim.admin('POST', '/_sim/faults', {'kind': 'latency', 'ms': 1500, 'path': '^/nodes/pve1/qemu/100/config$',
                                        'method': 'POST', 'count': 1})
    done = threading.Event()

    def remove_when_writing():
        while not done.is_set():
            if any(w[0] in ('PUT', 'POST') and w[1] == '/nodes/pve1/qemu/100/config' for w in writes(sim)):
                sim.wait_task(sim.api('DELETE', '/nodes/pve1/qemu/150'))
                return
            time.sleep(0.05)
    thread = threading.Thread(target=remove_when_writing)
    thread.start()
    try:
        real = run(False)
    finally:
        done.set()
        thread.join()
    sim.admin('DELETE', '/_sim/faults')
    msg = refused(real, 'remove', 'its planned writes did not run: DELETE /nodes/pve1/qemu/150')
    assert 'found nothing to do where the plan writes' in msg, msg
    assert 'the tasks it applied before' in msg and "'cores'" in msg, msg
    # the first task's write, the other writer's removal, nothing else
    assert [w for w in writes(sim) if w[0] == 'DELETE'] == [('DELETE', '/nodes/pve1/qemu/150')]
    assert config(sim, 100)['cores'] == 3
    assert 150 not in [v['vmid'] for v in sim.api('GET', '/cluster/resources', {'type': 'vm'})]


def _readme_example():
    with open(os.path.join(ROOT, 'README.md'), encoding='utf-8') as f:
        text = f.read()
    blocks = re.findall(r'```yaml\n(# change-42\.yml.*?)```', text, re.S)
    assert len(blocks) == 1, 'README has one change-42.yml example'
    return blocks[0]


def test_the_readme_example_applies_once_and_its_lookup_closes_the_run(ansible, sim, tmp_path):
    example = _readme_example()
    assert "lookup('ferro.proxmox.saved_plan')" in example
    run = runner(ansible, tmp_path, example)
    check = run(True)
    assert check.rc == 0, check.stdout[-3000:]
    assert 'planned tasks for host localhost' in check.stdout
    sim.clear_requests()
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    assert 'every planned task of host localhost ran; the plan is used' in real.stdout
    vmid = real.task('A VM for change 42')['result']['vmid']
    assert config(sim, vmid)['name'] == 'change-42' and config(sim, vmid)['cores'] == 2
    assert [w[0] for w in writes(sim)] == ['POST']
    sim.clear_requests()
    again = run(False)
    assert again.rc != 0 and 'was applied already' in again.stdout, again.stdout[-3000:]
    assert writes(sim) == []


WINDOWS = play(
    ('pool', 'ferro.proxmox.proxmox_kvm: {vmid: 100, node: pve1, update: true, pool: web}'),
    ('reboot', 'ferro.proxmox.proxmox_kvm: {vmid: 100, node: pve1, state: restarted}'),
    ('remove', 'ferro.proxmox.proxmox_kvm: {vmid: 150, node: pve1, state: absent}'))


def test_the_writes_without_a_digest_and_their_windows(ansible, pools, tmp_path):
    """The writes PVE takes no digest for (a pool move, a reboot, a removal) apply exactly as
    planned; the window each leaves (from the answer to the task's last read before it to the
    write's arrival, in pvesim's request log) is printed: docs/saved-plans.md "Limits" quotes it."""
    make_vm(pools, 150)
    run = runner(ansible, tmp_path, WINDOWS)
    assert run(True).rc == 0
    pools.clear_requests()
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    log = [r for r in pools.requests() if not r['path'].endswith('/access/ticket')]
    sent = [(r['method'], r['path'].replace('/api2/json', '')) for r in log if r['method'] in WRITES]
    assert sent == [('PUT', '/pools'), ('POST', '/nodes/pve1/qemu/100/status/reboot'),
                    ('DELETE', '/nodes/pve1/qemu/150')], sent
    windows = []
    for i, r in enumerate(log):
        if r['method'] in WRITES:
            last = [g for g in log[:i] if g['method'] == 'GET'][-1]
            windows.append('%s %s %.1f ms' % (r['method'], r['path'].replace('/api2/json', ''),
                                              r['at_ms'] - last['at_ms'] - last['duration_ms']))
    print('windows without a digest, last read answered to write arrived: ' + '; '.join(windows))
    assert pool_of(pools, 100) == 'web' and 150 not in [
        v['vmid'] for v in pools.api('GET', '/cluster/resources', {'type': 'vm'})]


TWO_PLANS = """
- name: plan a
  hosts: localhost
  gather_facts: false
  vars: {ferro_proxmox_plan: "{{ plan_a }}"}
  tasks:
    - name: cores
      ferro.proxmox.proxmox_kvm: {vmid: 100, node: pve1, update: true, cores: 3}
      delegate_to: localhost
- name: plan b
  hosts: localhost
  gather_facts: false
  vars: {ferro_proxmox_plan: "{{ plan_b }}"}
  tasks:
    - name: memory
      ferro.proxmox.proxmox_kvm: {vmid: 150, node: pve1, update: true, memory: 1024}
      delegate_to: localhost
"""


def test_each_plan_of_a_run_gets_its_whole_plan_checks(ansible, sim, tmp_path):
    """A play variable may give each play its own plan: the second plan's first task checks that
    plan whole (here its format), not trusting the first plan's checks."""
    make_vm(sim, 150, memory=512)
    playbook = tmp_path / 'two.yml'
    playbook.write_text(TWO_PLANS)
    plans = ['-e', 'plan_a=%s' % (tmp_path / 'a'), '-e', 'plan_b=%s' % (tmp_path / 'b')]
    assert ansible.run_playbook(str(playbook), check=True, extra_args=plans).rc == 0
    header = str(tmp_path / 'b' / 'plan.json')
    with open(header, encoding='utf-8') as f:
        data = json.load(f)
    with open(header, 'w', encoding='utf-8') as f:
        json.dump(dict(data, format_version=1), f)
    sim.clear_requests()
    real = ansible.run_playbook(str(playbook), extra_args=plans)
    msg = refused(real, 'memory', 'has format version 1; this collection reads version 2')
    assert str(tmp_path / 'b') in msg
    assert [w for w in writes(sim) if '/qemu/150' in w[1]] == [] and str(config(sim, 150)['memory']) == '512'
    assert config(sim, 100)['cores'] == 3


def test_automatic_vmids_at_forks_2_twenty_plans_apply_one_after_another(ansible, sim, tmp_path):
    """Done-when line 4, run after run: twenty plans (one per play, `ferro_proxmox_plan` a play
    variable), each creating a VM without a vmid on each of two hosts at forks 2, saved by one
    check run and applied one after another by one real run (cheap: two ansible-playbook runs)."""
    plays = ''.join("""
- name: plan %(n)d
  hosts: creators
  gather_facts: false
  vars: {ferro_proxmox_plan: "{{ plans }}/%(n)d"}
  tasks:
    - name: create %(n)d
      ferro.proxmox.proxmox_kvm: {name: "run%(n)d-{{ inventory_hostname }}", node: pve1, cores: 1, memory: 256}
      delegate_to: localhost
""" % {'n': n} for n in range(20))
    playbook = tmp_path / 'runs.yml'
    playbook.write_text(plays)
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text('creators:\n  hosts:\n    h1: {ansible_connection: local}\n    h2: {ansible_connection: local}\n')
    args = ['-e', 'plans=%s' % (tmp_path / 'plans'), '--forks', '2']
    started, cpu = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    check = ansible.run_playbook(str(playbook), check=True, extra_args=args, inventory=str(inventory))
    assert check.rc == 0, check.stdout[-3000:]
    sim.clear_requests()
    real = ansible.run_playbook(str(playbook), extra_args=args, inventory=str(inventory))
    assert real.rc == 0, real.stdout[-3000:]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    made = [r for r in real.results if r['task'].startswith('create ') and r['status'] == 'ok']
    assert len(made) == 40 and all(r['result']['changed'] for r in made)
    names = dict((v['name'], v['vmid']) for v in sim.api('GET', '/cluster/resources', {'type': 'vm'}))
    assert all('run%d-%s' % (n, h) in names for n in range(20) for h in ('h1', 'h2'))
    # each VM made once (a create that met an id taken meanwhile is refused by PVE and sent again)
    made_by_pve = [r for r in sim.requests() if r['method'] == 'POST' and r['path'].endswith('/nodes/pve1/qemu')
                   and r['status'] == 200]
    assert len(made_by_pve) == 40
    planned = {}
    for n in range(20):
        for path in sorted((tmp_path / 'plans' / str(n) / 'tasks').glob('*/*.json')):
            record = json.loads(path.read_text())
            planned[(n, record['host'])] = record['planned_vmid']
    flipped = sum(1 for n in range(20) for h in ('h1', 'h2') if names['run%d-%s' % (n, h)] != planned[(n, h)])
    print('automatic vmids: 20 plans applied one after another, 2 hosts at forks 2, %d of 40 bound to another id '
          'than planned; %.1f s, %.1f s CPU' % (flipped, time.monotonic() - started,
                                                after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime))
