"""`--check` carries predictions across tasks however Ansible runs them (issue 24).

A check run's later tasks plan against what its earlier tasks predicted: the VM a create would
make exists for the disk and NIC tasks after it. The action plugin keeps the run's predictions on
the controller (in ansible-core's per-run local temp dir) and hands them to each task in its
arguments, so that holds however the module runs. Here, each way of running a build playbook
(README's first playbook: create, system disk, NIC, then an update) runs with `--check --diff`
and for real from the same state, and the two must agree task by task (outcome, message, diff):

- `delegate_to: localhost` from inventory hosts whose own connection is ssh, with forks > 1, so
  each host's tasks run in parallel worker processes;
- `serial: 1` batches, and a later play that reads every VM the batches predicted;
- `become` to an unprivileged user (`nobody`), where the module runs as a user that cannot open
  the controller's temp dir (become root and the connection path are rows of
  test_check_vs_real.py).

The check-versus-real helpers are test_check_vs_real.py's.
"""

import importlib.util
import json
import os
import shutil
import stat
import tempfile

import pytest
import yaml

from harness import ROOT
from test_check_vs_real import first_diff_difference, matches, outcome, write_seed, writes, reset

HOSTS = {'build-a': 251, 'build-b': 252, 'build-c': 253}


def build_tasks(vmid='{{ vmid }}', name='{{ inventory_hostname }}'):
    """README's first playbook, and an update of the VM it built."""
    def task(title, module, options):
        return {'name': title, 'ferro.proxmox.' + module: options, 'delegate_to': 'localhost'}
    return [
        task('Create the bare VM', 'proxmox_kvm', {'vmid': vmid, 'name': name, 'node': 'pve1', 'cores': 1,
                                                     'memory': 1024}),
        task('Add the system disk', 'proxmox_disk', {'vmid': vmid, 'disk': 'scsi0', 'storage': 'local-lvm',
                                                      'size': 4}),
        task('Add the NIC', 'proxmox_nic', {'vmid': vmid, 'interface': 'net0', 'bridge': 'vmbr0', 'tag': 10}),
        task('Grow it', 'proxmox_kvm', {'vmid': vmid, 'node': 'pve1', 'update': True, 'cores': 2}),
    ]


def inventory(tmp_path):
    """Hosts that are the planned VMs, reached (if ever) over ssh: every task delegates to localhost."""
    hosts = dict((host, {'vmid': vmid}) for host, vmid in HOSTS.items())
    path = tmp_path / 'inventory.yml'
    path.write_text(yaml.safe_dump({'planned': {
        'hosts': hosts, 'vars': {'ansible_connection': 'ssh', 'ansible_host': '127.0.0.1'}}}))
    return str(path)


def check_then_real(ansible, sim, seed, book, **kw):
    """The check run (which must succeed and write nothing), then the real run from the same state."""
    reset(sim, seed)
    check = ansible.run_playbook(book, check=True, diff=True, **kw)
    assert check.rc == 0 and not check.failed_tasks, 'the check run failed:\n%s\n%s' % (
        _failures(check), check.stdout[-3000:])
    assert writes(sim) == [], 'the check run wrote: %s' % writes(sim)
    reset(sim, seed)
    real = ansible.run_playbook(book, diff=True, **kw)
    assert real.rc == 0 and not real.failed_tasks, 'the real run failed:\n%s\n%s' % (
        _failures(real), real.stdout[-3000:])
    return check, real


def _failures(run):
    return '\n'.join('%s, %s: %s' % (r['host'], r['task'], r['result'].get('msg')) for r in run.results
                     if r['status'] in ('failed', 'item_failed'))


def disagreements(check, real):
    """Every (host, task) whose check result does not predict the real one."""
    def by_host_task(run):
        return dict(((r['host'], r['task']), r) for r in run.results if r['status'] in ('ok', 'failed', 'skipped'))
    checked, done = by_host_task(check), by_host_task(real)
    problems = [] if sorted(checked) == sorted(done) else ['tasks: check %s, real %s' % (sorted(checked), sorted(done))]
    for key in sorted(set(checked) & set(done)):
        c, r = checked[key], done[key]
        if outcome(c) != outcome(r):
            problems.append('%s: outcome check %s, real %s (%r)' % (key, outcome(c), outcome(r), c['result'].get('msg')))
        if not matches(c['result'].get('msg'), r['result'].get('msg')):
            problems.append('%s: msg check %r, real %r' % (key, c['result'].get('msg'), r['result'].get('msg')))
        first = first_diff_difference(c['result'].get('diff'), r['result'].get('diff'))
        if first:
            problems.append('%s: %s' % (key, first))
    return problems


def test_delegate_to_localhost_with_forks_carries_each_hosts_predictions(ansible, sim, tmp_path):
    seed = write_seed(tmp_path, 'empty', default_vms=False)
    book = [{'name': 'Build the planned VMs', 'hosts': 'planned', 'gather_facts': False, 'tasks': build_tasks()}]
    check, real = check_then_real(ansible, sim, seed, book, inventory=inventory(tmp_path), extra_args=['-f', '3'])
    assert not disagreements(check, real), '\n'.join(disagreements(check, real))
    # Every host's later tasks changed their own VM, in both runs.
    for run in (check, real):
        assert sorted(r['host'] for r in run.results if r['task'] == 'Grow it' and r['changed']) == sorted(HOSTS)


def test_serial_batches_carry_predictions_to_later_batches_and_plays(ansible, sim, tmp_path):
    seed = write_seed(tmp_path, 'empty', default_vms=False)
    listing = {'name': 'List the VMs', 'ferro.proxmox.proxmox_vm_info': {'type': 'qemu', 'config': 'current'}, 'register': 'listed'}
    book = [
        {'name': 'Build the planned VMs, one at a time', 'hosts': 'planned', 'gather_facts': False, 'serial': 1,
         'tasks': build_tasks()},
        {'name': 'Read them back', 'hosts': 'localhost', 'gather_facts': False, 'connection': 'local',
         'tasks': [listing]},
    ]
    check, real = check_then_real(ansible, sim, seed, book, inventory=inventory(tmp_path), extra_args=['-f', '3'])
    assert not disagreements(check, real), '\n'.join(disagreements(check, real))
    # The last play, after all batches, sees every VM the batches built: predicted in the check run.
    for run in (check, real):
        vms = run.task('List the VMs')['result']['proxmox_vms']
        assert sorted((vm['vmid'], vm['name'], str(vm['config']['cores'])) for vm in vms) == sorted(
            (vmid, host, '2') for host, vmid in HOSTS.items()), vms


def _become_command():
    """A way for root to run the module as `nobody` (whose shell is nologin): sudo, or su with a shell."""
    if shutil.which('sudo'):
        return {'become_method': 'sudo'}
    if shutil.which('su'):
        return {'become_method': 'su', 'become_flags': '-s /bin/sh'}
    return None


@pytest.mark.skipif(os.geteuid() != 0, reason='becoming another user without a password needs root')
def test_become_an_unprivileged_user_carries_predictions(ansible, sim, tmp_path):
    become = _become_command()
    if become is None:
        pytest.skip('neither sudo nor su is installed')
    # The module runs as nobody, who must read the CA file: a copy outside root's temp dirs.
    public = tempfile.mkdtemp(prefix='ferro-ca-')
    try:
        os.chmod(public, 0o755)
        ca = os.path.join(public, 'ca.pem')
        shutil.copyfile(sim.ca_path, ca)
        os.chmod(ca, 0o644)
        seed = write_seed(tmp_path, 'empty', default_vms=False)
        tasks = build_tasks(vmid=254, name='become-nobody')
        for task in tasks:
            task.update(become=True, become_user='nobody', **become)
        book = [{'name': 'Build as nobody', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}]
        check, real = check_then_real(ansible, sim, seed, book, env={'PROXMOX_CA_PATH': ca})
    finally:
        shutil.rmtree(public, ignore_errors=True)
    assert not disagreements(check, real), '\n'.join(disagreements(check, real))
    assert check.task('Grow it')['changed'] and real.task('Grow it')['changed']


def _native():
    """plugins/plugin_utils/native.py, loaded from the source tree."""
    path = os.path.join(ROOT, 'plugins', 'plugin_utils', 'native.py')
    spec = importlib.util.spec_from_file_location('ferro_native_under_test', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_plan_directory_stays_private_and_a_result_names_no_path(tmp_path):
    native = _native()
    plan_dir = str(tmp_path / 'run' / 'ferro-proxmox-check-plan')
    os.makedirs(os.path.dirname(plan_dir), mode=0o700)
    assert native.load_plan(plan_dir) == ([], None)
    vm = {'vmid': 251, 'current': {'cores': '2'}}
    assert native.save_predictions(plan_dir, [vm]) is None
    assert stat.S_IMODE(os.stat(plan_dir).st_mode) & 0o077 == 0
    assert os.listdir(plan_dir) == ['vm-251.json']
    assert native.load_plan(plan_dir) == ([vm], None)
    # A vmid is the only part of a result that names a file, and only as an integer.
    for bad in ({'vmid': '../../x'}, {'vmid': True}, {'vmid': -1}, 'vm'):
        assert 'vmid' in native.save_predictions(plan_dir, [bad])
    assert os.listdir(plan_dir) == ['vm-251.json']
    # A plan that cannot be stored is said so, naming what then goes unseen.
    os.chmod(plan_dir, 0o500)
    try:
        if os.access(plan_dir, os.W_OK):   # root writes anyway: make the directory a file instead
            os.chmod(plan_dir, 0o700)
            shutil.rmtree(plan_dir)
            with open(plan_dir, 'w') as f:
                f.write('')
        problem = native.save_predictions(plan_dir, [vm])
    finally:
        if os.path.isdir(plan_dir):
            os.chmod(plan_dir, 0o700)
    assert problem
    warning = native.plan_warning('proxmox_kvm', problem)
    assert warning.startswith('ferro.proxmox.proxmox_kvm: --check cannot carry predictions') and problem in warning
    assert json.loads(json.dumps(native.load_plan(str(tmp_path / 'missing'))[0])) == []
