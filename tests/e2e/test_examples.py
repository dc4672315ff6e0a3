"""Every example a user reads runs as printed, given a connection (issue 27): the YAML blocks of
README.md and the EXAMPLES of each module's ansible-doc (plugins/modules/*.py, generated from
modules/<name>/src/spec.rs), against pvesim.

The examples name no storage, bridge or template of their own: they use the documented variables
(proxmox_node, proxmox_storage, ...), whose pvesim values are the example inventory's
(playbooks/inventory/group_vars/all/cluster.yml), given here as extra vars. The connection is
given as the examples say it comes: the environment (PROXMOX_*) or module_defaults. A README
block that spells out a connection for a real cluster (pve1.example.org, the token of
ansible@pve, a CA file) gets pvesim's in their place, value for value (CONNECTION below).
Also: the collection's playbooks run by FQCN as README tells a Galaxy user to run them, and
proxmox_vm_info reads a VM that may not exist without a failed task."""

import ast
import os
import re
import subprocess

import pytest
import yaml

from harness import CANARY_TOKEN_ID, CANARY_TOKEN_SECRET, CANARY_USER, ROOT, VENV_BIN

CLUSTER_VARS = os.path.join(ROOT, 'playbooks', 'inventory', 'group_vars', 'all', 'cluster.yml')
MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, 'plugins', 'modules')) if f.startswith('proxmox_'))
# README's YAML blocks that are not playbooks, tasks or an inventory, by the file name their
# first line gives: nothing of them runs on its own.
NOT_RUNNABLE = {
    'execution-environment.yml': 'an ansible-builder definition, checked by make dist-test',
}
# Examples left out because they cannot run as printed for a reason of their own: none.
SKIP = {}
CONNECTION_VARIABLES = ('PROXMOX_HOST', 'PROXMOX_PORT', 'PROXMOX_USER', 'PROXMOX_TOKEN_ID',
                        'PROXMOX_TOKEN_SECRET', 'PROXMOX_CA_PATH')


def cluster_vars():
    with open(CLUSTER_VARS, encoding='utf-8') as f:
        return yaml.safe_load(f)


def readme_blocks():
    """(first-line file name or index, text) of each ```yaml block of README.md."""
    with open(os.path.join(ROOT, 'README.md'), encoding='utf-8') as f:
        text = f.read()
    blocks = []
    for i, body in enumerate(re.findall(r'^```yaml\n(.*?)^```', text, re.S | re.M)):
        first = re.match(r'#\s*(\S+\.ya?ml)\b', body)
        blocks.append((first.group(1) if first else 'block %d' % i, body))
    return blocks


def module_examples(module):
    """The EXAMPLES of plugins/modules/<module>.py, read without importing it."""
    with open(os.path.join(ROOT, 'plugins', 'modules', module + '.py'), encoding='utf-8') as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ['EXAMPLES']:
            return node.value.value
    raise AssertionError('no EXAMPLES in %s' % module)


def connection(sim):
    """What a real cluster's connection in an example becomes against pvesim."""
    return {'pve1.example.org': sim.host, 8006: sim.port, '8006': str(sim.port), 'ansible@pve': CANARY_USER,
            'automation': CANARY_TOKEN_ID, 'pve-root-ca.pem': sim.ca_path}


def with_connection(value, sim):
    """`value` with every connection value of CONNECTION replaced, key by key (no text rewriting)."""
    subst = connection(sim)
    if isinstance(value, dict):
        return {k: with_connection(v, sim) for k, v in value.items()}
    if isinstance(value, list):
        return [with_connection(v, sim) for v in value]
    return subst.get(value, value) if isinstance(value, (str, int)) and not isinstance(value, bool) else value


def extra_vars(ansible):
    path = os.path.join(ansible.workdir, 'cluster-vars.yml')
    with open(path, 'w', encoding='utf-8') as f:
        yaml.safe_dump(cluster_vars(), f)
    return ['-e', '@' + path]


def assert_ran(run, where):
    assert run.rc == 0 and not run.failed_tasks, '%s failed:\n%s\n%s' % (where, run.stdout[-4000:], run.stderr[-2000:])
    assert run.results, '%s ran no task:\n%s' % (where, run.stdout[-2000:])
    assert 'skipping: no hosts matched' not in run.stdout, where


def is_play_list(doc):
    return isinstance(doc, list) and doc and all(isinstance(p, dict) and 'hosts' in p for p in doc)


def test_readme_blocks_are_each_a_playbook_an_inventory_or_named_as_not_runnable():
    kinds = {}
    for name, body in readme_blocks():
        doc = yaml.safe_load(body)
        kinds[name] = ('playbook' if is_play_list(doc) else 'inventory' if isinstance(doc, dict) and 'all' in doc
                       else 'not runnable')
    assert {n for n, k in kinds.items() if k == 'not runnable'} == set(NOT_RUNNABLE), kinds
    assert list(kinds.values()).count('inventory') == 1 and 'playbook' in kinds.values(), kinds


@pytest.mark.parametrize('name', [n for n, body in readme_blocks() if is_play_list(yaml.safe_load(body))])
def test_readme_playbook_runs_as_printed(ansible, sim, name):
    body = dict(readme_blocks())[name]
    plays = with_connection(yaml.safe_load(body), sim)
    run = ansible.run_playbook(plays, extra_args=extra_vars(ansible))
    assert_ran(run, 'README ' + name)


def run_fqcn(ansible, playbook, inventory=None, env=None, check=False):
    """`ansible-playbook [-i INVENTORY] ferro.proxmox.<playbook>`, as README tells a Galaxy user."""
    cmd = [os.path.join(VENV_BIN, 'ansible-playbook')] + (['-i', inventory] if inventory else [])
    cmd += ['ferro.proxmox.' + playbook] + (['--check', '--diff'] if check else [])
    return subprocess.run(cmd, capture_output=True, text=True, env=ansible.env(env), cwd=ansible.workdir, timeout=600)


def test_readme_inventory_builds_its_vms_with_the_collection_playbook_by_fqcn(ansible, sim):
    # README's inventory, shown in full, with create_vms.yml from the installed collection: the
    # dry run, the build, then nothing to do.
    [(name, body)] = [(n, b) for n, b in readme_blocks()
                      if isinstance(yaml.safe_load(b), dict) and 'all' in yaml.safe_load(b)]
    inventory = os.path.join(ansible.workdir, name)
    with open(inventory, 'w', encoding='utf-8') as f:
        yaml.safe_dump(with_connection(yaml.safe_load(body), sim), f)
    secret = {'PROXMOX_TOKEN_SECRET': CANARY_TOKEN_SECRET}
    hosts = yaml.safe_load(body)['all']['children']['planned']['hosts']
    check = run_fqcn(ansible, 'create_vms', inventory, secret, check=True)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-2000:]
    assert not {h['vmid'] for h in hosts.values()} & {r['vmid'] for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})}
    real = run_fqcn(ansible, 'create_vms', inventory, secret)
    assert real.returncode == 0, real.stdout[-3000:] + real.stderr[-2000:]
    for host, hv in hosts.items():
        cfg = sim.api('GET', '/nodes/%s/qemu/%d/config' % (yaml.safe_load(body)['all']['vars']['proxmox_node'], hv['vmid']))
        assert cfg['name'] == host and cfg['scsi0'].startswith('local-lvm:') and 'bridge=vmbr0' in cfg['net0']
    again = run_fqcn(ansible, 'create_vms', inventory, secret)
    assert again.returncode == 0 and re.search(r'changed=0 ', again.stdout), again.stdout[-2000:]


def test_demo_playbook_by_fqcn_with_the_connection_in_the_environment(ansible, sim):
    # No inventory, no file of the user's: the connection from PROXMOX_* (the harness exports
    # pvesim's, its CA included).
    run = run_fqcn(ansible, 'demo')
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert '100 existing-web on pve1 (running): net0=BC:24:11:0A:01:00' in run.stdout


@pytest.mark.parametrize('via', ['environment', 'module_defaults'])
@pytest.mark.parametrize('module', MODULES)
def test_module_examples_run_as_printed(ansible, sim, module, via):
    if module in SKIP:
        pytest.skip(SKIP[module])
    tasks = yaml.safe_load(module_examples(module))
    play = {'name': module + ' examples', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}
    env = {}
    if via == 'module_defaults':
        # As the examples' opening comment shows it, the secret from a lookup; nothing in the
        # environment of ansible-playbook but that secret's variable.
        play['module_defaults'] = {'group/ferro.proxmox.proxmox': with_connection({
            'api_host': 'pve1.example.org', 'api_port': 8006, 'api_user': 'ansible@pve', 'api_token_id': 'automation',
            'api_token_secret': "{{ lookup('ansible.builtin.env', 'PROXMOX_TOKEN_SECRET') }}",
            'ca_path': 'pve-root-ca.pem'}, sim)}
        env = dict.fromkeys(CONNECTION_VARIABLES)
        env['PROXMOX_TOKEN_SECRET'] = CANARY_TOKEN_SECRET
    run = ansible.run_playbook([play], extra_args=extra_vars(ansible), env=env)
    assert_ran(run, '%s EXAMPLES (%s)' % (module, via))
    assert len([r for r in run.results if r['status'] in ('ok', 'skipped')]) == len(tasks), run.stdout[-3000:]


def test_vm_info_reads_a_vm_that_may_not_exist_without_a_failed_task(ansible, sim):
    # What README and vm_info's EXAMPLES show: a missing vmid or name is an empty list, as
    # community.proxmox's proxmox_vm_info gives it; a present one is listed.
    info = {'delegate_to': 'localhost'}
    run = ansible.run_playbook([{'hosts': 'localhost', 'gather_facts': False, 'tasks': [
        dict(info, name='missing vmid', register='a', **{'ferro.proxmox.proxmox_vm_info': {'vmid': 4242}}),
        dict(info, name='missing name', register='b', **{'ferro.proxmox.proxmox_vm_info': {'name': 'no-such-vm'}}),
        dict(info, name='present name', **{'ferro.proxmox.proxmox_vm_info': {'name': 'existing-web'}}),
    ]}])
    assert run.rc == 0 and not run.failed_tasks, run.stdout[-3000:]
    assert run.task('missing vmid')['result']['proxmox_vms'] == []
    assert run.task('missing name')['result']['proxmox_vms'] == []
    assert [v['vmid'] for v in run.task('present name')['result']['proxmox_vms']] == [100]
    assert not any(r['changed'] for r in run.results)
