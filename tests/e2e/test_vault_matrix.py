"""The four modules on every supported ansible-core, with inline vault values (issue 27).

One playbook, run check → real → again (harness `converge`): each module through each way a
connection reaches it (its options, the play's `module_defaults` for group/ferro.proxmox.proxmox,
the play's `environment:`), the token secret an inline `!vault` value every time, and nothing
from the environment ansible-playbook itself runs in. ansible-core hands an action plugin such a
value as a wrapper type that its own validator refuses (AnsibleVaultEncryptedUnicode on 2.17 and
2.18: "Unknown parameter type"; EncryptedString and tagged strings on 2.19 and later): native.py
turns task arguments and environment into plain values as ansible-core does for a module.

`make test-matrix` runs this file once per ansible-core minor that meta/runtime.yml's
`requires_ansible` admits (mk/matrix.mk), with FERRO_MATRIX_VENV naming that version's pinned
virtualenv (tests/matrix/requirements-2.xx.txt), whose ansible-playbook runs the plays; pvesim and
pytest stay in .venv. Without FERRO_MATRIX_VENV it runs with .venv's ansible-core.
"""

import json
import os
import subprocess

import pytest

from harness import CANARY_TOKEN_ID, CANARY_TOKEN_SECRET, CANARY_USER, VENV_BIN, Ansible

MATRIX_VENV = os.environ.get('FERRO_MATRIX_VENV')
VENV = os.path.join(MATRIX_VENV, 'bin') if MATRIX_VENV else VENV_BIN
CONNECTION_VARIABLES = ('PROXMOX_HOST', 'PROXMOX_PORT', 'PROXMOX_USER', 'PROXMOX_TOKEN_ID',
                        'PROXMOX_TOKEN_SECRET', 'PROXMOX_CA_PATH', 'PROXMOX_PASSWORD', 'PROXMOX_OTP')
VMID = 4270


def ansible_core_version():
    out = subprocess.run([os.path.join(VENV, 'python'), '-c', 'import ansible; print(ansible.__version__)'],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


class Matrix(Ansible):
    """The harness's runner with the ansible-core under test, and an ansible-playbook process that
    gets no connection from its own environment, only the vault password file."""

    password_file = None

    def env(self, extra=None):
        outside = dict.fromkeys(CONNECTION_VARIABLES, None)
        outside['ANSIBLE_VAULT_PASSWORD_FILE'] = self.password_file
        return super().env(dict(outside, **(extra or {})))


@pytest.fixture
def matrix(collections_path, sim, tmp_path):
    runner = Matrix(collections_path, sim, str(tmp_path), venv_bin=VENV)
    runner.password_file = str(tmp_path / 'vault-password')
    with open(runner.password_file, 'w', encoding='utf-8') as f:
        f.write('ferro-matrix-vault-password\n')
    os.chmod(runner.password_file, 0o600)
    return runner


def vault(ansible, password_file, value):
    """`value` encrypted as ansible-vault's encrypt_string prints it: the lines of the block that
    follows `!vault |`, without their indentation."""
    out = subprocess.run([os.path.join(VENV, 'ansible-vault'), 'encrypt_string', '--vault-password-file',
                          password_file, value], capture_output=True, text=True, check=True, cwd=ansible.workdir)
    return [line.strip() for line in out.stdout.split('!vault |', 1)[1].strip().splitlines()]


def mapping(values, secret_key, secret, indent):
    """YAML lines of a mapping at `indent` spaces: `values`, then `secret_key` as an inline vault."""
    pad = ' ' * indent
    lines = ['%s%s: %s' % (pad, k, json.dumps(v)) for k, v in values.items()]
    lines.append('%s%s: !vault |' % (pad, secret_key))
    lines.extend('%s  %s' % (pad, line) for line in secret)
    return lines


MODULES = [
    ('proxmox_kvm', {'vmid': VMID, 'name': 'matrix-vm', 'node': 'pve1', 'memory': 512, 'cores': 1}),
    ('proxmox_disk', {'vmid': VMID, 'disk': 'scsi1', 'storage': 'local-lvm', 'size': 1}),
    ('proxmox_nic', {'vmid': VMID, 'interface': 'net0', 'bridge': 'vmbr0', 'firewall': True}),
    ('proxmox_vm_info', {'vmid': VMID, 'config': 'current'}),
]
ROUTES = ('options', 'module_defaults', 'environment')
# What a check run cannot know of the new VM (harness `_normalize`, on the diff as JSON text): the
# MAC PVE generates, and the keys PVE adds at creation, which later tasks' diffs show.
UNPREDICTABLE = [r'(?<=virtio=)[0-9A-F:]{17}', (r'(meta|smbios1|vmgenid): [^\\]*\\n', '')]


def task_lines(route, connection=None):
    """The four modules, each converging on VM VMID, named '<route> <module>'."""
    lines = []
    for module, options in MODULES:
        lines += ['    - name: %s %s' % (route, module), '      delegate_to: localhost',
                  '      ferro.proxmox.%s:' % module]
        lines += ['        %s: %s' % (k, json.dumps(v)) for k, v in options.items()]
        lines += connection or []
    return lines


def playbook(sim, secret):
    conn = {'api_host': sim.host, 'api_port': sim.port, 'api_user': CANARY_USER, 'api_token_id': CANARY_TOKEN_ID,
            'ca_path': sim.ca_path}
    env = {'PROXMOX_HOST': sim.host, 'PROXMOX_PORT': str(sim.port), 'PROXMOX_USER': CANARY_USER,
           'PROXMOX_TOKEN_ID': CANARY_TOKEN_ID, 'PROXMOX_CA_PATH': sim.ca_path}
    head = ['  hosts: localhost', '  gather_facts: false']
    lines = ['- name: the connection as options'] + head + ['  tasks:']
    lines += task_lines('options', mapping(conn, 'api_token_secret', secret, 8))
    lines += ['- name: the connection in module_defaults'] + head
    lines += ['  module_defaults:', '    group/ferro.proxmox.proxmox:']
    lines += mapping(conn, 'api_token_secret', secret, 6) + ['  tasks:'] + task_lines('module_defaults')
    lines += ['- name: the connection in the environment'] + head + ['  environment:']
    lines += mapping(env, 'PROXMOX_TOKEN_SECRET', secret, 4) + ['  tasks:'] + task_lines('environment')
    return '\n'.join(lines) + '\n'


def test_four_modules_with_inline_vault_through_options_defaults_and_environment(matrix, sim):
    secret = vault(matrix, matrix.password_file, CANARY_TOKEN_SECRET)
    plays = playbook(sim, secret)
    assert CANARY_TOKEN_SECRET not in plays
    check, real, again = matrix.converge(matrix.write_playbook(plays), unpredictable=UNPREDICTABLE)
    names = ['%s %s' % (route, module) for route in ROUTES for module, _ in MODULES]
    for run in (check, real, again):
        assert [r['task'] for r in run.results] == names, run.stdout[-3000:]
        assert run.failed_tasks == [], (ansible_core_version(), run.stdout[-3000:])
    # The first route creates the VM, adds its disk and NIC; the others find it as they want it.
    assert real.changed_tasks == ['options proxmox_kvm', 'options proxmox_disk', 'options proxmox_nic']
    config = sim.api('GET', '/nodes/pve1/qemu/%d/config' % VMID)
    assert config['name'] == 'matrix-vm' and config['memory'] in (512, '512')
    assert config['scsi1'].startswith('local-lvm:vm-%d-disk-' % VMID) and 'bridge=vmbr0' in config['net0']
    for route in ROUTES:
        vms = real.task('%s proxmox_vm_info' % route)['result']['proxmox_vms']
        assert [vm['vmid'] for vm in vms] == [VMID] and vms[0]['config']['name'] == 'matrix-vm'
    # The module saw the plain secret (pvesim took the token) and no result shows it.
    assert CANARY_TOKEN_SECRET not in json.dumps(real.results)


def test_an_empty_connection_option_leaves_module_defaults_and_the_environment(matrix, sim):
    """One rule for empty values: a connection option given as '' (a lookup of an unset variable)
    counts as unset, so module_defaults' value, else the environment's, applies."""
    secret = vault(matrix, matrix.password_file, CANARY_TOKEN_SECRET)
    empty = "\"{{ lookup('ansible.builtin.env', 'FERRO_E2E_UNSET') }}\""
    conn = {'api_host': sim.host, 'api_port': sim.port, 'api_user': CANARY_USER, 'api_token_id': CANARY_TOKEN_ID,
            'ca_path': sim.ca_path}
    env = {'PROXMOX_HOST': sim.host, 'PROXMOX_PORT': str(sim.port), 'PROXMOX_USER': CANARY_USER,
           'PROXMOX_TOKEN_ID': CANARY_TOKEN_ID, 'PROXMOX_CA_PATH': sim.ca_path}
    info = ['      ferro.proxmox.proxmox_vm_info:', '        vmid: 100']
    empties = ['        api_token_secret: ' + empty, '        ca_path: ' + empty, '        api_host: ' + empty]
    lines = ['- name: empty options over module_defaults', '  hosts: localhost', '  gather_facts: false',
             '  module_defaults:', '    group/ferro.proxmox.proxmox:']
    lines += mapping(conn, 'api_token_secret', secret, 6)
    lines += ['  tasks:', '    - name: over module_defaults', '      delegate_to: localhost'] + info + empties
    lines += ['- name: empty options over the environment', '  hosts: localhost', '  gather_facts: false',
              '  environment:'] + mapping(env, 'PROXMOX_TOKEN_SECRET', secret, 4)
    lines += ['  tasks:', '    - name: over the environment', '      delegate_to: localhost'] + info + empties
    run = matrix.run_playbook('\n'.join(lines) + '\n')
    for name in ('over module_defaults', 'over the environment'):
        result = run.task(name)
        assert result['status'] == 'ok', (ansible_core_version(), result['result'].get('msg'))
        assert [vm['vmid'] for vm in result['result']['proxmox_vms']] == [100]
