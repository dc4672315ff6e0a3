"""proxmox_vm_info end to end: the installed collection, real ansible-playbook runs, pvesim.

Each test asserts what a user would check in their playbook's result, and where the issue asks
for "no needless calls", the API requests counted from pvesim's request log.
"""

import json
import os
import subprocess

import pytest

from harness import ROOT
from pvesim.testing import TOKEN_SECRET


def info_task(_task='info', **options):
    return {'name': _task, 'ferro.proxmox.proxmox_vm_info': options, 'delegate_to': 'localhost', 'register': 'out'}


def play(*tasks, **play_options):
    return [dict({'name': 'e2e', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}, **play_options)]


def vms_of(run, task='info'):
    result = run.task(task)['result']
    assert run.task(task)['status'] == 'ok', result
    return result['proxmox_vms']


def api_calls(sim):
    """(method, path below /api2/json) of every logged request."""
    return [(r['method'], r['path'].replace('/api2/json', '', 1)) for r in sim.requests()]


def test_lists_every_vm_sorted_with_upstream_types(ansible, sim):
    check, real, _ = ansible.converge(play(info_task()))
    vms = vms_of(real)
    assert [v['vmid'] for v in vms] == [100, 9000]
    web, template = vms
    assert web['name'] == 'existing-web' and web['node'] == 'pve1' and web['status'] == 'running'
    assert web['template'] is False and template['template'] is True
    assert web['type'] == 'qemu' and web['id'] == 'qemu/100'
    assert 'config' not in web and 'nics' not in web
    # Read-only: check mode returns the same information (usage counters like uptime aside).
    stable = ('vmid', 'name', 'node', 'status', 'template', 'type', 'id', 'tags', 'maxmem', 'maxdisk')
    assert [{k: v.get(k) for k in stable} for v in vms_of(check)] == [{k: v.get(k) for k in stable} for v in vms]


def test_config_current_parses_nics_and_disks(ansible, sim):
    raw = sim.api('GET', '/nodes/pve1/qemu/100/config')
    run = ansible.run_playbook(play(info_task(vmid=100, config='current')))
    (vm,) = vms_of(run)
    assert vm['config']['net0'] == raw['net0']
    (nic,) = vm['nics']
    mac = raw['net0'].split(',')[0].split('=')[1]
    assert nic['interface'] == 'net0' and nic['model'] == 'virtio' and nic['mac'] == mac.upper()
    assert nic['bridge'] == 'vmbr0' and nic['firewall'] is True
    disk = next(d for d in vm['disks'] if d['key'] == 'scsi0')
    assert disk['storage'] == 'local-lvm' and disk['volume'] == 'local-lvm:vm-100-disk-0'
    assert disk['size'] == '32G' and disk['size_bytes'] == 32 * 1024 ** 3 and disk['media'] == 'disk'


def test_config_pending_shows_pending_changes_current_does_not(ansible, sim):
    # cores is not hot-pluggable by default: on the running VM 100 it stays pending
    # (qemu-server QemuServer.pm vmconfig_hotplug_pending (9.2.6); docs/pve-semantics.md §6).
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'cores': 4})
    run = ansible.run_playbook(play(info_task('current', vmid=100, config='current'),
                                    info_task('pending', vmid=100, config='pending')))
    assert vms_of(run, 'current')[0]['config']['cores'] == 2
    assert vms_of(run, 'pending')[0]['config']['cores'] == 4


def test_unknown_vmid_is_an_empty_list(ansible, sim):
    run = ansible.run_playbook(play(info_task(vmid=4242)))
    assert vms_of(run) == []


def test_filters_by_name_type_and_node(ansible, sim):
    run = ansible.run_playbook(play(
        info_task('by name', name='debian-13-template'),
        info_task('by node', node='pve2'),
        info_task('lxc only', type='lxc'),
    ))
    assert [v['vmid'] for v in vms_of(run, 'by name')] == [9000]
    assert vms_of(run, 'by node') == []
    assert vms_of(run, 'lxc only') == []


def test_unknown_node_fails_with_upstream_message(ansible, sim):
    run = ansible.run_playbook(play(info_task(node='nope')))
    result = run.task('info')['result']
    assert run.task('info')['status'] == 'failed'
    assert result['msg'] == "Node nope doesn't exist in PVE cluster"


def test_network_on_stopped_vm_is_a_per_vm_error_not_a_failure(ansible, sim):
    run = ansible.run_playbook(play(info_task(network=True)))
    web, template = vms_of(run)
    assert isinstance(web['network'], list) and web['network'], web
    assert 'network_error' not in web
    assert template['network_error'] == 'VM 9000 is not running'
    assert 'network' not in template


def test_makes_only_the_calls_it_needs(ansible, sim):
    sim.clear_requests()
    ansible.run_playbook(play(info_task(config='current')))
    calls = api_calls(sim)
    assert calls == [
        ('GET', '/cluster/resources'),
        ('GET', '/nodes/pve1/qemu'),
        ('GET', '/nodes/pve1/qemu/100/config'),
        ('GET', '/nodes/pve1/qemu/9000/config'),
    ], calls
    sim.clear_requests()
    ansible.run_playbook(play(info_task(node='pve1', vmid=100)))
    # the VM listed on pve1 shows the node exists: no GET /nodes (docs/pve-semantics.md §66)
    assert api_calls(sim) == [('GET', '/cluster/resources'), ('GET', '/nodes/pve1/qemu')]
    sim.clear_requests()
    ansible.run_playbook(play(info_task(node='pve2', vmid=100)))
    # nothing selected on pve2: whether the node exists is asked (it does: an empty list)
    assert api_calls(sim) == [('GET', '/cluster/resources'), ('GET', '/nodes')]


def test_password_auth_gets_a_ticket(ansible, sim):
    env = {'PROXMOX_USER': 'root@pam', 'PROXMOX_PASSWORD': 'secret', 'PROXMOX_TOKEN_ID': None, 'PROXMOX_TOKEN_SECRET': None}
    sim.clear_requests()
    run = ansible.run_playbook(play(info_task(vmid=100)), env=env)
    assert [v['vmid'] for v in vms_of(run)] == [100]
    assert api_calls(sim)[0] == ('POST', '/access/ticket')


def test_connection_mode_copies_and_runs_the_binary(ansible, sim):
    # The path used for remote hosts, forced on the local connection.
    run = ansible.run_playbook(play(info_task(vmid=100)), env={'FERRO_PROXMOX_EXEC': 'connection'})
    assert [v['vmid'] for v in vms_of(run)] == [100]


def test_tls_validation(ansible, sim):
    # Without the simulator's CA, verification fails and says how to fix it.
    run = ansible.run_playbook(play(info_task()), env={'PROXMOX_CA_PATH': None})
    result = run.task('info')['result']
    assert run.task('info')['status'] == 'failed'
    assert 'could not be verified' in result['msg'] and 'ca_path' in result['msg'], result['msg']
    # validate_certs false works, with one warning.
    run = ansible.run_playbook(play(info_task(validate_certs=False)), env={'PROXMOX_CA_PATH': ''})
    result = run.task('info')['result']
    assert run.task('info')['status'] == 'ok', result
    assert len([w for w in result['warnings'] if 'validate_certs' in w]) == 1


BAD_ARGS = [
    ({'vmid': 'abc'}, "argument 'vmid' is of type str and we were unable to convert to int"),
    ({'config': 'bogus'}, 'value of config must be one of: none, current, pending, got: bogus'),
    ({'type': 'vm'}, 'value of type must be one of: all, qemu, lxc, got: vm'),
    ({'network': 'maybe'}, "argument 'network' is of type str and we were unable to convert to bool"),
    ({'bogus_option': 1}, 'Unsupported parameters for (ferro.proxmox.proxmox_vm_info) module: bogus_option. Supported parameters include:'),
    ({'api_port': 'x'}, "argument 'api_port' is of type str and we were unable to convert to int"),
]


def test_bad_arguments_fail_clearly_without_writes_or_secrets(ansible, sim):
    # every case a task of one playbook (one ansible-playbook start instead of one per case), each
    # failing on its own: the playbook goes on to the next case (ignore_errors)
    sim.clear_requests()
    tasks = [dict(info_task('case %d' % i, **options), ignore_errors=True) for i, (options, _) in enumerate(BAD_ARGS)]
    run = ansible.run_playbook(play(*tasks), extra_args=['-vvv'])
    for i, (_, message) in enumerate(BAD_ARGS):
        result = run.task('case %d' % i)['result']
        assert run.task('case %d' % i)['status'] == 'failed', (i, result)
        assert message in result['msg'], result['msg']
    assert sim.requests() == []
    assert TOKEN_SECRET not in run.stdout + run.stderr


@pytest.mark.parametrize('unset,options,message', [
    (['PROXMOX_HOST'], {}, 'missing required arguments: api_host'),
    (['PROXMOX_HOST', 'PROXMOX_USER'], {}, 'missing required arguments: api_host, api_user'),
    (['PROXMOX_TOKEN_SECRET'], {}, 'parameters are required together: api_token_id, api_token_secret'),
    (['PROXMOX_TOKEN_ID', 'PROXMOX_TOKEN_SECRET'], {}, 'one of the following is required: api_password, api_token_id'),
    ([], {'ca_path': '/nonexistent/ca.pem'}, 'ca_path: unable to read the CA file /nonexistent/ca.pem'),
])
def test_missing_or_broken_auth_names_the_options(ansible, sim, unset, options, message):
    run = ansible.run_playbook(play(info_task(**options)), env={k: None for k in unset})
    result = run.task('info')['result']
    assert run.task('info')['status'] == 'failed'
    assert message in result['msg'], result['msg']
    assert sim.requests() == []


def test_secret_never_appears_at_vvv(ansible, sim):
    # The seed token's secret as an option (the environment names the canary user otherwise).
    run = ansible.run_playbook(play(info_task(vmid=100, config='current', api_token_secret=TOKEN_SECRET)),
                               extra_args=['-vvv'], env={'PROXMOX_USER': 'ansible@pve', 'PROXMOX_TOKEN_ID': 'automation'})
    assert run.task('info')['status'] == 'ok'
    assert TOKEN_SECRET not in run.stdout + run.stderr
    assert TOKEN_SECRET not in json.dumps(run.results)


# The binary on its own, as ansible-core's binary-module path or a user would call it.

def binary(collections_path):
    """The binary the installed collection's action plugin would run on this machine."""
    import platform
    import sys
    root = os.path.join(collections_path, 'ansible_collections', 'ferro', 'proxmox')
    sys.path.insert(0, os.path.join(root, 'plugins', 'plugin_utils'))
    try:
        import native
    finally:
        sys.path.pop(0)
    return native.find_binary('proxmox_vm_info', platform.system(), platform.machine(), root=root)


@pytest.mark.parametrize('argv,stdin,expected', [
    (['/nonexistent/args'], '', 'unable to read the module arguments from /nonexistent/args'),
    ([], '', 'no module arguments'),
    ([], 'not json', 'the module arguments are not valid JSON'),
    ([], '[1, 2]', 'the module arguments must be a JSON object'),
    ([], '{"vmid": [1]}', "argument 'vmid' is of type list"),
], ids=['unreadable file', 'empty stdin', 'non-JSON', 'not an object', 'wrong type'])
def test_binary_answers_bad_input_with_one_json_object(argv, stdin, expected, collections_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith('PROXMOX_')}
    env.update({'PROXMOX_HOST': '127.0.0.1', 'PROXMOX_USER': 'a@pve', 'PROXMOX_TOKEN_ID': 't',
                'PROXMOX_TOKEN_SECRET': 'canary-secret-value'})
    proc = subprocess.run([binary(collections_path)] + argv, input=stdin, capture_output=True, text=True, env=env, timeout=30)
    result = json.loads(proc.stdout)
    assert proc.stdout.strip().count('\n') == 0
    assert result['failed'] is True and expected in result['msg'], result
    assert proc.returncode == 1
    assert 'canary-secret-value' not in proc.stdout + proc.stderr
