"""Saved plans (issue 25): `--check` with `ferro_proxmox_plan` saves what each task read and would
write; the real run with the same variable applies exactly that, or fails the task before any
write with what moved since the plan (docs/saved-plans.md).

(a) nothing moved: the real run applies, each task's `changed` is the plan's, and every config
write carries the digest the plan recorded; (b) each kind of drift between the two runs fails the
drifting task before it writes, naming the difference; (c) a change landing between the real
run's re-plan and its write is refused by PVE's digest check and reported, not retried.
"""

import glob
import json
import os
import threading
import time

import pytest

from harness import CANARY_SECRETS

PLAYBOOK = """
- name: saved plan
  hosts: localhost
  gather_facts: false
  tasks:
    - name: extra
      ferro.proxmox.proxmox_nic: {vmid: 100, interface: net3, bridge: vmbr0, model: virtio}
      delegate_to: localhost
      when: extra | default(false) | bool
    - name: disk
      ferro.proxmox.proxmox_disk: {vmid: 100, disk: scsi1, storage: local-lvm, size: "{{ disk_size | default(10) }}"}
      delegate_to: localhost
    - name: nic
      ferro.proxmox.proxmox_nic: {vmid: 100, interface: net1, bridge: vmbr0, model: virtio}
      delegate_to: localhost
    - name: info
      ferro.proxmox.proxmox_vm_info: {vmid: 100}
      delegate_to: localhost
      when: not (skip_info | default(false) | bool)
    - name: new vm
      ferro.proxmox.proxmox_kvm: {name: plan-new, node: pve1, cores: 1, memory: 512}
      delegate_to: localhost
"""

WRITES = ('POST', 'PUT', 'DELETE')


def plan_runner(ansible, tmp_path, text, name='site.yml'):
    """The playbook `text` (one file for both runs) and a function running it with its plan
    (`check`, then extra vars), the summary callback enabled."""
    playbook = tmp_path / name
    playbook.write_text(text)
    plan_dir = str(tmp_path / 'plan')

    def run(check, *extra):
        args = ['-e', 'ferro_proxmox_plan=%s' % plan_dir]
        for e in extra:
            args += ['-e', e]
        env = {'ANSIBLE_CALLBACKS_ENABLED': 'record_results,ferro.proxmox.plan_summary'}
        return ansible.run_playbook(str(playbook), check=check, extra_args=args, env=env)
    run.plan_dir = plan_dir
    return run


@pytest.fixture
def planned(ansible, tmp_path):
    return plan_runner(ansible, tmp_path, PLAYBOOK)


def records(plan_dir):
    out = []
    for path in sorted(glob.glob(os.path.join(plan_dir, 'tasks', '*', '*.json'))):
        with open(path, encoding='utf-8') as f:
            out.append(json.load(f))
    return out


def writes(sim):
    return [r for r in sim.requests() if r['method'] in WRITES and '/nodes/' in r['path']]


def test_nothing_moved_applies_exactly_the_plan(planned, sim):
    check = planned(True)
    assert check.rc == 0, check.stdout[-3000:]
    # the summary, per host
    assert 'ferro.proxmox saved plan: %s' % planned.plan_dir in check.stdout
    assert 'localhost: 1 to create, 2 to change, 0 to destroy, 0 to restart' in check.stdout, check.stdout[-2000:]
    saved = records(planned.plan_dir)
    assert sorted(r['task'] for r in saved) == ['disk', 'info', 'new vm', 'nic']
    planned_digest = {r['task']: dict(r['writes'][0]['params']).get('digest') for r in saved if r['writes']}
    assert planned_digest['disk'], saved
    info = next(r for r in saved if r['task'] == 'info')
    assert info['writes'] == [] and info['vms'] == [{'vmid': 100, 'node': 'pve1', 'name': 'existing-web'}]
    # no secret in clear: the token secret is there as its keyed hash only
    disk_args = next(r for r in saved if r['task'] == 'disk')['args']
    assert disk_args['api_token_secret'].startswith('hmac-sha256:')
    for path in glob.glob(os.path.join(planned.plan_dir, '**'), recursive=True):
        if os.path.isfile(path) and not path.endswith('/key'):
            text = open(path, encoding='utf-8').read()
            assert not any(secret in text for secret in CANARY_SECRETS), path
    sim.clear_requests()

    real = planned(False)
    assert real.rc == 0, real.stdout[-3000:]
    for name in ('disk', 'nic', 'info', 'new vm'):
        assert real.task(name)['changed'] == check.task(name)['changed'], name
    assert [real.task(n)['changed'] for n in ('disk', 'nic', 'new vm')] == [True, True, True]
    # the disk task's config write carried the planned digest; the NIC task's (planned on the
    # config the disk task predicted) a digest too
    config_writes = [r for r in writes(sim) if r['path'].endswith('/qemu/100/config')]
    assert config_writes[0]['body'].get('digest') == planned_digest['disk']
    assert all(r['body'].get('digest') for r in config_writes)
    # the vmid PVE chose: known after apply in the plan, bound (reported) at apply time
    new_vm = real.task('new vm')['result']
    assert next(r for r in saved if r['task'] == 'new vm')['result']['vmid'] == '(known after apply)'
    assert new_vm['saved_plan']['bound'] == {'vmid': new_vm['vmid']}, new_vm
    assert 'every planned task ran' in real.stdout


def _resize(sim):
    sim.api('PUT', '/nodes/pve1/qemu/100/resize', {'disk': 'scsi0', 'size': '+1G'})


def _add_nic(sim):
    sim.api('POST', '/nodes/pve1/qemu/100/config', {'net2': 'virtio,bridge=vmbr0'})


def _lock(sim):
    sim.admin('POST', '/_sim/faults', {'kind': 'lock', 'vmid': 100, 'lock': 'backup', 'seconds': 120})


def _remove(sim):
    sim.wait_task(sim.api('POST', '/nodes/pve1/qemu/100/status/stop', {}))
    sim.wait_task(sim.api('DELETE', '/nodes/pve1/qemu/100', {}))


DRIFTS = [
    # (id, drift, extra vars of the real run, failing task, words)
    ('disk-resized', _resize, (), 'disk', "VM 100's config changed since the plan: scsi0 size=32G → size=33G"),
    ('nic-added', _add_nic, (), 'disk', "VM 100's config changed since the plan: net2 (none) → virtio="),
    ('lock-taken', _lock, (), 'disk', "VM 100's config changed since the plan: lock (none) → backup"),
    ('vm-removed', _remove, (), 'disk', 'VM 100 is gone'),
    ('argument-changed', None, ('disk_size=12',), 'disk', 'arguments changed since the plan: size "10" → "12"'),
    ('extra-task', None, ('extra=true',), 'extra', 'this task is not in it'),
]


@pytest.mark.parametrize('drift,extra,task,words', [d[1:] for d in DRIFTS], ids=[d[0] for d in DRIFTS])
def test_drift_fails_the_task_before_its_write(planned, sim, drift, extra, task, words):
    check = planned(True)
    assert check.rc == 0, check.stdout[-3000:]
    if drift:
        drift(sim)
    sim.clear_requests()
    real = planned(False, *extra)
    assert real.rc != 0
    assert real.failed_tasks == [task], real.stdout[-3000:]
    msg = real.task(task)['result']['msg']
    assert words in msg, msg
    assert writes(sim) == [], writes(sim)


def test_a_planned_task_the_run_skips_fails_the_next_task_or_is_reported(planned, sim):
    assert planned(True).rc == 0
    sim.clear_requests()
    # by default: the next task of the host fails before its write
    real = planned(False, 'skip_info=true')
    assert real.failed_tasks == ['new vm'], real.stdout[-3000:]
    assert "planned tasks of host localhost did not run before this one: 'info' at site.yml:" in \
        real.task('new vm')['result']['msg']
    assert not [r for r in writes(sim) if r['path'] == '/api2/json/nodes/pve1/qemu'], writes(sim)


def test_a_skipped_planned_task_is_only_reported_when_asked(planned, sim):
    assert planned(True).rc == 0
    real = planned(False, 'skip_info=true', 'ferro_proxmox_plan_skipped=warn')
    assert real.rc == 0, real.stdout[-3000:]
    assert "did not run before this one: 'info' at site.yml:" in real.stdout + real.stderr
    # and the callback's report at the end
    assert "planned tasks this run did not apply: localhost: 'info'" in real.stdout + real.stderr


def test_a_plan_of_another_playbook_is_refused(planned, ansible, sim, tmp_path):
    assert planned(True).rc == 0
    other = tmp_path / 'site.yml'
    other.write_text(PLAYBOOK + '\n# edited\n')
    sim.clear_requests()
    real = ansible.run_playbook(str(other), extra_args=['-e', 'ferro_proxmox_plan=%s' % planned.plan_dir])
    assert real.rc != 0
    assert 'was made for another playbook' in real.task('disk')['result']['msg']
    assert writes(sim) == []


def test_a_change_between_the_replan_and_the_write_is_refused_by_the_digest(planned, sim):
    assert planned(True).rc == 0
    sim.clear_requests()
    # the disk task's write waits 1.5 s in pvesim, with its digest already sent; meanwhile
    # another writer changes the VM
    sim.admin('POST', '/_sim/faults', {'kind': 'latency', 'ms': 1500, 'method': 'POST',
                                        'path': '^/nodes/pve1/qemu/100/config$', 'count': 1})
    done = threading.Event()

    def other_writer():
        while not done.is_set():
            if any(r['method'] == 'POST' and r['path'].endswith('/qemu/100/config') for r in sim.requests()):
                sim.api('PUT', '/nodes/pve1/qemu/100/config', {'description': 'changed meanwhile'})
                return
            time.sleep(0.05)
    thread = threading.Thread(target=other_writer)
    thread.start()
    try:
        real = planned(False)
    finally:
        done.set()
        thread.join()
    assert real.failed_tasks == ['disk'], real.stdout[-3000:]
    msg = real.task('disk')['result']['msg']
    assert 'refused the planned write' in msg and 'digest' in msg, msg
    # one write was sent (and refused); none was retried; the disk was not added
    assert len([r for r in writes(sim) if r['path'].endswith('/qemu/100/config')]) == 2  # ours + the other writer's
    config = sim.api('GET', '/nodes/pve1/qemu/100/config')
    assert 'scsi1' not in config and config['description'] == 'changed meanwhile'


LOOP_PLAYBOOK = """
- name: saved plan, three hosts in parallel, a loop each
  hosts: vms
  gather_facts: false
  tasks:
    - name: nics
      ferro.proxmox.proxmox_nic: {vmid: "{{ vmid }}", interface: "{{ item }}", bridge: vmbr0, model: virtio}
      delegate_to: localhost
      loop: "{{ nics | default(['net1', 'net2']) }}"
"""


def test_loops_and_parallel_hosts_each_have_their_record(ansible, sim, tmp_path):
    for vmid in (201, 202, 203):
        sim.wait_task(sim.api('POST', '/nodes/pve1/qemu', {'vmid': vmid, 'name': 'loop-%d' % vmid}))
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text('vms:\n  hosts:\n' + ''.join(
        '    h%d: {vmid: %d, ansible_connection: local}\n' % (vmid, vmid) for vmid in (201, 202, 203)))
    playbook = tmp_path / 'loop.yml'
    playbook.write_text(LOOP_PLAYBOOK)
    plan_dir = str(tmp_path / 'plan')

    def run(check, *extra):
        args = ['-e', 'ferro_proxmox_plan=%s' % plan_dir, '--forks', '3']
        for e in extra:
            args += ['-e', e]
        return ansible.run_playbook(str(playbook), check=check, extra_args=args, inventory=str(inventory))

    assert run(True).rc == 0
    saved = records(plan_dir)
    assert sorted((r['host'], r['occurrence'], r['args']['interface']) for r in saved) == [
        ('h%d' % v, i, 'net%d' % (i + 1)) for v in (201, 202, 203) for i in (0, 1)]
    # the items in another order: each item's arguments differ from its planned ones
    sim.clear_requests()
    swapped = run(False, '{"nics": ["net2", "net1"]}')
    assert swapped.rc != 0
    assert 'interface "net1" → "net2"' in swapped.stdout, swapped.stdout[-3000:]
    assert writes(sim) == []
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    for vmid in (201, 202, 203):
        config = sim.api('GET', '/nodes/pve1/qemu/%d/config' % vmid)
        assert config['net1'].startswith('virtio=') and config['net2'].startswith('virtio='), config


KVM_PLAYBOOK = """
- name: saved plan, proxmox_kvm on an existing VM
  hosts: localhost
  gather_facts: false
  tasks:
    - name: update
      ferro.proxmox.proxmox_kvm:
        {vmid: 100, node: pve1, cores: 4, memory: 4096, update: true, cipassword: "{{ pw | default('Plan-Secret-7c1') }}"}
      delegate_to: localhost
    - name: restart
      ferro.proxmox.proxmox_kvm: {vmid: 100, state: restarted}
      delegate_to: localhost
"""


def test_proxmox_kvm_update_and_restart_apply_the_plan_or_refuse_drift(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, KVM_PLAYBOOK, 'kvm.yml')
    check = run(True)
    assert check.rc == 0, check.stdout[-3000:]
    assert 'localhost: 0 to create, 1 to change, 0 to destroy, 1 to restart' in check.stdout, check.stdout[-2000:]
    update = next(r for r in records(run.plan_dir) if r['task'] == 'update')
    digest = dict(update['writes'][0]['params'])['digest']
    # the cloud-init password only as its keyed hash, in the arguments and in the planned write
    assert update['args']['cipassword'].startswith('hmac-sha256:')
    assert dict(update['writes'][0]['params'])['cipassword'] == update['args']['cipassword']
    for path in glob.glob(os.path.join(run.plan_dir, '**'), recursive=True):
        if os.path.isfile(path) and not path.endswith('/key'):
            assert 'Plan-Secret-7c1' not in open(path, encoding='utf-8').read(), path
    # another password than the planned one: named as a changed secret, never shown
    sim.clear_requests()
    other = run(False, 'pw=Other-Secret-9d2')
    assert other.failed_tasks == ['update'] and writes(sim) == []
    assert 'cipassword a changed secret → a changed secret' in other.task('update')['result']['msg']
    assert 'Other-Secret-9d2' not in other.stdout + json.dumps(other.results)
    # drift: tags changed by someone else (PVE sorts them): the update fails before its write
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'tags': 'prod;db'})
    sim.clear_requests()
    drifted = run(False)
    assert drifted.failed_tasks == ['update']
    assert "VM 100's config changed since the plan: tags prod;web → db;prod" in drifted.task('update')['result']['msg']
    assert writes(sim) == []
    # put it back as it was planned: the digest is PVE's over the config text, so the plan holds again
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'tags': 'prod;web'})
    sim.clear_requests()
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    assert [real.task(n)['changed'] for n in ('update', 'restart')] == [True, True]
    config_writes = [r for r in writes(sim) if r['path'].endswith('/qemu/100/config')]
    assert config_writes and config_writes[0]['body'].get('digest') == digest


BUILD_PLAYBOOK = """
- name: saved plan, the README's build of a new VM
  hosts: localhost
  gather_facts: false
  tasks:
    - name: create
      ferro.proxmox.proxmox_kvm: {vmid: 150, name: planned-build, node: pve1, cores: 2, memory: 2048}
      delegate_to: localhost
    - name: disk
      ferro.proxmox.proxmox_disk: {vmid: 150, disk: scsi0, storage: local-lvm, size: 20}
      delegate_to: localhost
    - name: nic
      ferro.proxmox.proxmox_nic: {vmid: 150, interface: net0, bridge: vmbr0, tag: 10}
      delegate_to: localhost
      register: nic
    - name: started
      ferro.proxmox.proxmox_kvm: {vmid: 150, state: started}
      delegate_to: localhost
"""


def test_building_a_new_vm_applies_the_plan_and_binds_its_mac(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, BUILD_PLAYBOOK, 'build.yml')
    check = run(True)
    assert check.rc == 0, check.stdout[-3000:]
    assert 'localhost: 1 to create, 2 to change, 0 to destroy, 0 to restart, 1 power' in check.stdout, \
        check.stdout[-2000:]
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    assert [real.task(n)['changed'] for n in ('create', 'disk', 'nic', 'started')] == [True] * 4
    nic = real.task('nic')['result']
    mac = sim.api('GET', '/nodes/pve1/qemu/150/config')['net0'].split(',')[0].split('=')[1]
    assert nic['saved_plan']['bound'] == {'mac': nic['mac']} and nic['mac'] == mac
    assert 'every planned task ran' in real.stdout


def test_a_vm_created_meanwhile_under_the_planned_vmid_is_refused(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, BUILD_PLAYBOOK, 'build.yml')
    assert run(True).rc == 0
    sim.wait_task(sim.api('POST', '/nodes/pve1/qemu', {'vmid': 150, 'name': 'someone-else'}))
    sim.clear_requests()
    real = run(False)
    assert real.failed_tasks == ['create'], real.stdout[-3000:]
    msg = real.task('create')['result']['msg']
    assert 'the saved plan no longer holds' in msg and 'VM 150' in msg, msg
    assert writes(sim) == []
