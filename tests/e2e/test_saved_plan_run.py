"""A saved plan as a contract for the whole run (issue 33, part B; docs/saved-plans.md "The run"):
the real run does exactly the plan's tasks or fails (the run's --limit/--tags/--skip-tags are the
plan's, the closing lookup names a planned task that did not run), applies it once, only with the
files it was approved with, with `check_mode` tasks as documented, and only an unedited plan
signed with a key kept outside the plan directory; a damaged plan file is named in words.

Each refusal asserts pvesim's request log (no write) and the VM's config afterwards.
"""

import glob
import hashlib
import hmac
import json
import os
import threading
import time

from harness import CANARY_TOKEN_SECRET
from test_saved_plan import plan_runner, records, writes

CLOSE = """
    - name: the saved plan ran whole
      ansible.builtin.debug:
        msg: "{{ lookup('ferro.proxmox.saved_plan') }}"
"""

THREE = """
- name: three tasks
  hosts: localhost
  gather_facts: false
  tasks:
    - name: first
      ferro.proxmox.proxmox_nic: {vmid: 100, interface: net1, bridge: vmbr0, model: virtio}
      delegate_to: localhost
      tags: [nics]
    - name: second
      ferro.proxmox.proxmox_nic: {vmid: 100, interface: net2, bridge: vmbr0, model: virtio}
      delegate_to: localhost
      tags: [nics]
    - name: third
      ferro.proxmox.proxmox_disk: {vmid: 100, disk: scsi1, storage: local-lvm, size: 4}
      delegate_to: localhost
      tags: [disks]
      when: not (skip_third | default(false) | bool)
""" + CLOSE


def config(sim, vmid=100):
    return sim.api('GET', '/nodes/pve1/qemu/%d/config' % vmid)


def test_other_tags_limit_or_skip_tags_than_the_plan_are_refused_before_any_write(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, THREE)
    assert run(True).rc == 0
    for extra, words in ((['--skip-tags', 'disks'], '--skip-tags [] → ["disks"]'),
                         (['--tags', 'nics'], '--tags [] → ["nics"]'),
                         (['--limit', 'localhost'], '--limit null → "localhost"')):
        sim.clear_requests()
        refused = ansible.run_playbook(str(tmp_path / 'site.yml'), extra_args=['-e', 'ferro_proxmox_plan=%s' % run.plan_dir]
                                       + extra)
        assert refused.rc != 0 and refused.failed_tasks == ['first'], refused.stdout[-3000:]
        msg = refused.task('first')['result']['msg']
        assert 'made for another part of the playbook' in msg and words in msg, msg
        assert writes(sim) == []
    assert 'net1' not in config(sim) and 'scsi1' not in config(sim)
    # the same options as the check run: applies
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    assert 'net1' in config(sim) and 'scsi1' in config(sim)


def test_a_planned_last_task_skipped_fails_the_run_and_names_it(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, THREE)
    check = run(True)
    assert check.rc == 0, check.stdout[-3000:]
    assert '3 planned tasks for host localhost' in check.stdout
    real = run(False, 'skip_third=true')
    assert real.rc != 0 and real.failed_tasks == ['the saved plan ran whole'], real.stdout[-3000:]
    assert "planned tasks of host localhost did not run or failed: 'third' at site.yml:14" in real.stdout, \
        real.stdout[-3000:]
    # the callback names it too, and does not claim every task ran
    output = real.stdout + real.stderr
    assert 'every planned task ran' not in output
    assert "localhost: 'third' at site.yml:14 (did not run)" in output, output[-3000:]
    assert 'net2' in config(sim) and 'scsi1' not in config(sim)
    assert not [r for r in writes(sim) if r['path'].endswith('/resize') or 'scsi1' in json.dumps(r['body'])]


LOOP = """
- name: a loop
  hosts: localhost
  gather_facts: false
  tasks:
    - name: nics
      ferro.proxmox.proxmox_nic: {vmid: 100, interface: "{{ item }}", bridge: vmbr0, model: virtio}
      delegate_to: localhost
      loop: "{{ nics | default(['net1', 'net2', 'net3']) }}"
""" + CLOSE


def test_a_loop_whose_list_shrank_fails_the_run(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, LOOP)
    assert run(True).rc == 0
    sim.clear_requests()
    real = run(False, '{"nics": ["net1", "net2"]}')
    assert real.rc != 0, real.stdout[-3000:]
    assert "did not run or failed: 'nics' at site.yml:6" in real.stdout, real.stdout[-3000:]
    vm = config(sim)
    assert 'net1' in vm and 'net2' in vm and 'net3' not in vm
    assert [r for r in writes(sim) if 'net1' in json.dumps(r['body'])] and \
        not [r for r in writes(sim) if 'net3' in json.dumps(r['body'])]


def test_a_plan_applies_once(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, THREE)
    assert run(True).rc == 0
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    assert 'every planned task of host localhost ran; the plan is used' in real.stdout
    after = config(sim)
    sim.clear_requests()
    again = run(False)
    assert again.rc != 0 and again.failed_tasks == ['first'], again.stdout[-3000:]
    msg = again.task('first')['result']['msg']
    assert 'was applied already' in msg and 'a plan applies once' in msg, msg
    assert writes(sim) == [] and config(sim) == after


def test_a_run_refused_before_any_write_leaves_the_plan_usable(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, THREE)
    assert run(True).rc == 0
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'description': 'drift'})
    sim.clear_requests()
    refused = run(False)
    assert refused.rc != 0 and refused.failed_tasks == ['first'], refused.stdout[-3000:]
    assert writes(sim) == [] and 'net1' not in config(sim)
    # nothing was written: once the drift is undone the same plan applies
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'delete': 'description'})
    done = run(False)
    assert done.rc == 0, done.stdout[-3000:]
    assert 'net1' in config(sim) and 'scsi1' in config(sim)


PART_WAY = """
- name: part way
  hosts: localhost
  gather_facts: false
  tasks:
    - name: first
      ferro.proxmox.proxmox_nic: {vmid: 301, interface: net1, bridge: vmbr0, model: virtio}
      delegate_to: localhost
    - name: second
      ferro.proxmox.proxmox_nic: {vmid: 301, interface: net2, bridge: vmbr0, model: virtio}
      delegate_to: localhost
    - name: third
      ferro.proxmox.proxmox_disk: {vmid: 302, disk: scsi1, storage: local-lvm, size: 4}
      delegate_to: localhost
""" + CLOSE


def test_a_failed_part_way_plan_names_what_applied_and_is_refused_again(ansible, sim, tmp_path):
    for vmid in (301, 302):
        sim.wait_task(sim.api('POST', '/nodes/pve1/qemu', {'vmid': vmid, 'name': 'part-%d' % vmid}))
    run = plan_runner(ansible, tmp_path, PART_WAY)
    assert run(True).rc == 0
    # PVE refuses the third task's write (a drift would be refused by the whole-run verification before the
    # first write): the third task fails after the first two applied
    sim.fault(kind='http', method='POST', path='/qemu/302/config$', status=500, message='got timeout', count=1)
    sim.fault(kind='http', method='PUT', path='/qemu/302/config$', status=500, message='got timeout', count=1)
    real = run(False)
    assert real.failed_tasks == ['third'], real.stdout[-3000:]
    msg = real.task('third')['result']['msg']
    assert "the tasks it applied before: 'first' at site.yml:6 (host localhost); 'second' at site.yml:9" in msg, msg
    assert 'cannot be applied again' in msg
    sim.clear_faults()
    before = config(sim, 302)
    sim.clear_requests()
    again = run(False)
    assert again.rc != 0 and again.failed_tasks == ['first'], again.stdout[-3000:]
    msg = again.task('first')['result']['msg']
    assert 'was applied in part' in msg and "applied: 'first' at site.yml:6" in msg, msg
    assert "'third' at site.yml:12 (host localhost): refused" in msg, msg
    assert writes(sim) == [] and config(sim, 302) == before


IMPORTS = """
- name: imports
  hosts: localhost
  gather_facts: false
  vars_files: [vars.yml]
  tasks:
    - name: first
      ferro.proxmox.proxmox_nic: {vmid: 100, interface: net1, bridge: vmbr0, model: virtio}
      delegate_to: localhost
    - name: more
      ansible.builtin.import_tasks: more.yml
""" + CLOSE

MORE = """
- name: described
  ferro.proxmox.proxmox_kvm:
    vmid: 100
    node: pve1
    update: true
    description: "{{ lookup('ansible.builtin.template', 'desc.j2') | trim }}"
  delegate_to: localhost
"""


def test_a_changed_imported_file_vars_file_or_template_is_refused_before_any_write(ansible, sim, tmp_path):
    (tmp_path / 'more.yml').write_text(MORE)
    (tmp_path / 'vars.yml').write_text('owner: ops\n')
    (tmp_path / 'templates').mkdir()
    (tmp_path / 'templates' / 'desc.j2').write_text('owned by {{ owner }}\n')
    run = plan_runner(ansible, tmp_path, IMPORTS)
    assert run(True).rc == 0
    saved = json.load(open(os.path.join(run.plan_dir, 'index.json'), encoding='utf-8'))['files']
    for name in ('site.yml', 'more.yml', 'vars.yml', 'templates/desc.j2'):
        assert os.path.realpath(str(tmp_path / name)) in saved, sorted(saved)
    for name, text in (('more.yml', MORE + '\n- name: added after approval\n  ansible.builtin.debug: {msg: x}\n'),
                       ('vars.yml', 'owner: someone-else\n'),
                       ('templates/desc.j2', 'owned by nobody\n')):
        original = (tmp_path / name).read_text()
        (tmp_path / name).write_text(text)
        sim.clear_requests()
        refused = run(False)
        assert refused.rc != 0 and refused.failed_tasks == ['first'], refused.stdout[-3000:]
        msg = refused.task('first')['result']['msg']
        assert 'the files the plan was approved with changed' in msg and '%s changed' % name in msg, msg
        assert writes(sim) == [] and 'net1' not in config(sim)
        (tmp_path / name).write_text(original)
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    assert config(sim)['description'] == 'owned by ops'


SHAPES = """
- name: check_mode shapes
  hosts: localhost
  gather_facts: false
  tasks:
    - name: always for real
      ferro.proxmox.proxmox_nic: {vmid: 100, interface: net1, bridge: vmbr0, model: virtio}
      delegate_to: localhost
      check_mode: false
    - name: always a preview
      ferro.proxmox.proxmox_nic: {vmid: 100, interface: net2, bridge: vmbr0, model: virtio}
      delegate_to: localhost
      check_mode: true
    - name: planned
      ferro.proxmox.proxmox_disk: {vmid: 100, disk: scsi1, storage: local-lvm, size: 4}
      delegate_to: localhost
""" + CLOSE


def test_check_mode_true_and_false_tasks_in_both_runs(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, SHAPES)
    check = run(True)
    assert check.rc == 0, check.stdout[-3000:]
    # check_mode: false wrote in the check run already, and is recorded as outside the plan
    assert 'net1' in config(sim)
    outside = next(r for r in records(run.plan_dir) if r['task'] == 'always for real')
    assert outside.get('outside_plan') is True and outside['writes'] == []
    assert 'always for real: check_mode: false, runs as written in both runs, outside the plan' in check.stdout
    saved = sorted(os.listdir(os.path.join(run.plan_dir, 'tasks')))
    real = run(False)
    assert real.rc == 0, real.stdout[-3000:]
    # the preview stays a preview and does not wipe the plan; the planned task applies
    assert real.task('always a preview')['result']['saved_plan']['preview'] is True
    assert 'net2' not in config(sim) and 'scsi1' in config(sim)
    assert sorted(os.listdir(os.path.join(run.plan_dir, 'tasks'))) == saved
    assert len(records(run.plan_dir)) == 3


def test_a_second_check_into_a_plan_directory_in_use_fails(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, THREE)
    # the first check run's reads of VM 100 take 8 s each in pvesim: it is still running when the
    # second starts
    sim.admin('POST', '/_sim/faults', {'kind': 'latency', 'ms': 8000, 'method': 'GET',
                                        'path': '^/nodes/pve1/qemu/100/pending$', 'count': 2})
    first = {}
    thread = threading.Thread(target=lambda: first.update(run=run(True)))
    thread.start()
    try:
        deadline = time.time() + 20
        while not os.path.exists(os.path.join(run.plan_dir, 'run.json')) and time.time() < deadline:
            time.sleep(0.2)
        second = run(True)
    finally:
        thread.join()
    assert second.rc != 0, second.stdout[-3000:]
    msg = second.task('first')['result']['msg']
    assert 'is in use by a --check run saving a plan' in msg, msg
    assert first['run'].rc == 0, first['run'].stdout[-3000:]
    assert sorted(r['task'] for r in records(run.plan_dir)) == ['first', 'second', 'third']


def _edit(path, change):
    with open(path, encoding='utf-8') as f:
        data = json.load(f)
    change(data)
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(data, f, indent=1, sort_keys=True)


def _record_path(plan_dir, task):
    for path in glob.glob(os.path.join(plan_dir, 'tasks', '*', '*.json')):
        if json.load(open(path, encoding='utf-8'))['task'] == task:
            return path
    raise AssertionError('no record of %r' % task)


def test_an_edited_plan_is_refused_before_any_write(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, THREE)
    assert run(True).rc == 0
    third = _record_path(run.plan_dir, 'third')
    original = open(third, encoding='utf-8').read()
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'description': 'drift'})
    digest = config(sim)['digest']

    def refresh(data):   # the digest refreshed by hand to the drifted config's
        for read in data['reads']:
            read['digest'] = digest
        for write in data['writes']:
            write['params'] = [[k, digest if k == 'digest' else v] for k, v in write['params']]

    def unknown(data):   # every read's digest replaced by "(known after apply)"
        for read in data['reads']:
            read['digest'] = '(known after apply)'
    for change in (refresh, unknown):
        _edit(third, change)
        sim.clear_requests()
        refused = run(False)
        assert refused.rc != 0 and refused.failed_tasks == ['first'], refused.stdout[-3000:]
        msg = refused.task('first')['result']['msg']
        assert 'was changed after the check run made it' in msg and third in msg, msg
        assert writes(sim) == [] and 'net1' not in config(sim)
        open(third, 'w', encoding='utf-8').write(original)


def test_the_key_is_not_in_the_plan_directory_and_secrets_are_whole_values(ansible, sim, tmp_path):
    playbook = """
- name: secrets
  hosts: localhost
  gather_facts: false
  tasks:
    - name: update
      ferro.proxmox.proxmox_kvm: {vmid: 100, node: pve1, update: true, cipassword: web}
      delegate_to: localhost
    - name: info
      ferro.proxmox.proxmox_vm_info: {vmid: 100}
      delegate_to: localhost
"""
    run = plan_runner(ansible, tmp_path, playbook)
    assert run(True).rc == 0
    info = next(r for r in records(run.plan_dir) if r['task'] == 'info')
    # `web` inside `existing-web` is a name, not the password
    assert info['vms'] == [{'vmid': 100, 'node': 'pve1', 'name': 'existing-web'}]
    token = next(r for r in records(run.plan_dir) if r['task'] == 'update')['args']['cipassword']
    assert token.startswith('hmac-sha256:')
    # nothing in the plan directory is the key: no file of it, used as the key, gives the hash
    # of the password; the key derived from the connection's secret and the plan's salt does
    files = [p for p in glob.glob(os.path.join(run.plan_dir, '**'), recursive=True) if os.path.isfile(p)]
    for path in files:
        with open(path, 'rb') as f:
            content = f.read()
        for key in (content, content.strip(), bytes.fromhex(content.decode()) if path.endswith('/salt') else b''):
            assert 'hmac-sha256:' + hmac.new(key, b'web', hashlib.sha256).hexdigest() != token, path
    salt = bytes.fromhex(open(os.path.join(run.plan_dir, 'salt'), encoding='ascii').read())
    key = hashlib.pbkdf2_hmac('sha256', CANARY_TOKEN_SECRET.encode(), b'ferro.proxmox saved plan\0' + salt, 200000)
    assert token == 'hmac-sha256:' + hmac.new(key, b'web', hashlib.sha256).hexdigest()
    # another key in the real run (the environment's) is refused, nothing written
    sim.clear_requests()
    other = ansible.run_playbook(str(tmp_path / 'site.yml'), extra_args=['-e', 'ferro_proxmox_plan=%s' % run.plan_dir],
                                 env={'FERRO_PROXMOX_PLAN_KEY': 'another key'})
    assert other.rc != 0 and 'signed with another key' in other.task('update')['result']['msg']
    assert writes(sim) == []


def test_a_malformed_truncated_or_foreign_plan_file_is_named(ansible, sim, tmp_path):
    run = plan_runner(ansible, tmp_path, THREE)
    assert run(True).rc == 0
    first = _record_path(run.plan_dir, 'first')
    original = open(first, encoding='utf-8').read()
    header = os.path.join(run.plan_dir, 'plan.json')
    header_text = open(header, encoding='utf-8').read()
    for path, text, words in ((first, original[:len(original) // 2], 'is not valid JSON (truncated or damaged?)'),
                              (first, '[1, 2]', 'holds a JSON list, not an object'),
                              (first, '', 'is empty'),
                              (header, '["foreign"]', 'holds a JSON list, not an object')):
        open(path, 'w', encoding='utf-8').write(text)
        sim.clear_requests()
        refused = run(False)
        assert refused.rc != 0 and refused.failed_tasks == ['first'], refused.stdout[-3000:]
        msg = refused.task('first')['result']['msg']
        assert path in msg and words in msg, msg
        assert 'Traceback' not in refused.stdout + refused.stderr and "object has no attribute" not in msg
        assert writes(sim) == []
        open(first, 'w', encoding='utf-8').write(original)
        open(header, 'w', encoding='utf-8').write(header_text)
    assert run(False).rc == 0


HOSTS = """
- name: two hosts
  hosts: vms
  gather_facts: false
  tasks:
    - name: nic
      ferro.proxmox.proxmox_nic: {vmid: "{{ vmid }}", interface: net1, bridge: vmbr0, model: virtio}
      delegate_to: localhost
      when: inventory_hostname not in (skip_hosts | default([]))
""" + CLOSE


def test_the_closing_lookup_checks_each_host_at_forks_2(ansible, sim, tmp_path):
    for vmid in (311, 312):
        sim.wait_task(sim.api('POST', '/nodes/pve1/qemu', {'vmid': vmid, 'name': 'host-%d' % vmid}))
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text('vms:\n  hosts:\n    h1: {vmid: 311, ansible_connection: local}\n'
                         '    h2: {vmid: 312, ansible_connection: local}\n')
    playbook = tmp_path / 'hosts-play.yml'
    playbook.write_text(HOSTS)
    plan_dir = str(tmp_path / 'plan')

    def run(check, *extra):
        args = ['-e', 'ferro_proxmox_plan=%s' % plan_dir, '--forks', '2']
        for e in extra:
            args += ['-e', e]
        return ansible.run_playbook(str(playbook), check=check, extra_args=args, inventory=str(inventory))

    assert run(True).rc == 0
    real = run(False, '{"skip_hosts": ["h2"]}')
    assert real.rc != 0, real.stdout[-3000:]
    closing = [r for r in real.results if r['task'] == 'the saved plan ran whole']
    assert sorted((r['host'], r['status']) for r in closing) == [('h1', 'ok'), ('h2', 'failed')], closing
    assert "planned tasks of host h2 did not run or failed: 'nic' at hosts-play.yml:6" in real.stdout, \
        real.stdout[-3000:]
    assert 'net1' in config(sim, 311) and 'net1' not in config(sim, 312)
    # applied in part: refused again, nothing written
    sim.clear_requests()
    again = run(False)
    assert again.rc != 0 and 'was applied in part' in again.stdout, again.stdout[-3000:]
    assert writes(sim) == [] and 'net1' not in config(sim, 312)
