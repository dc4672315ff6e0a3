"""The connection through the task's `environment:` and a two-factor login (issue 14, part A).

The `PROXMOX_*` fallbacks read what a Python module would see: the task's environment (play,
role, block and task `environment:`, the innermost winning) on top of the controller's, in the
action plugin's validation and in the binary alike, on the direct and the connection path; an
option the task sets beats the environment. `api_otp` / `PROXMOX_OTP` completes the second step
of PVE's TFA login (pvesim/tfa.py). Every run here is at -vvv and the harness fails it if a
canary secret shows anywhere.
"""

import base64
import time

from harness import CANARY_PASSWORD, CANARY_PRIVILEGES, CANARY_TOKEN_ID, CANARY_TOKEN_SECRET, CANARY_USER
from pvesim.tfa import totp_code

# A task per module that changes nothing on the seed's VM 100.
UNCHANGED = {
    'proxmox_vm_info': {'vmid': 100, 'config': 'current'},
    'proxmox_nic': {'vmid': 100, 'interface': 'net0', 'bridge': 'vmbr0', 'firewall': True},
    'proxmox_disk': {'vmid': 100, 'disk': 'scsi0'},
    'proxmox_kvm': {'vmid': 100, 'name': 'existing-web', 'state': 'current'},
}
CONNECTION_VARIABLES = ('PROXMOX_HOST', 'PROXMOX_PORT', 'PROXMOX_USER', 'PROXMOX_TOKEN_ID',
                        'PROXMOX_TOKEN_SECRET', 'PROXMOX_CA_PATH', 'PROXMOX_PASSWORD', 'PROXMOX_OTP')
# ansible-playbook itself gets none of them: the connection comes from the playbook only. The
# playbooks take secrets from a lookup, as users take them from a vault: ansible-core shows the
# lines of a failed task's play, which must not hold a secret.
NO_CONNECTION_IN_PROCESS = dict(dict.fromkeys(CONNECTION_VARIABLES), E2E_TOKEN_SECRET=CANARY_TOKEN_SECRET,
                                E2E_PASSWORD=CANARY_PASSWORD)


def secret(name):
    return "{{ lookup('ansible.builtin.env', '%s') }}" % name

TFA_USER = 'ferro-tfa@pve'
TFA_SECRET = base64.b32encode(b'ferro-e2e-second-factor').decode().rstrip('=')


def connection(sim, **changes):
    env = {'PROXMOX_HOST': sim.host, 'PROXMOX_PORT': str(sim.port), 'PROXMOX_USER': CANARY_USER,
           'PROXMOX_TOKEN_ID': CANARY_TOKEN_ID, 'PROXMOX_TOKEN_SECRET': secret('E2E_TOKEN_SECRET'),
           'PROXMOX_CA_PATH': sim.ca_path}
    env.update(changes)
    return dict((k, v) for k, v in env.items() if v is not None)


def task(name, module, environment=None, **options):
    t = {'name': name, 'ferro.proxmox.' + module: dict(UNCHANGED[module], **options), 'delegate_to': 'localhost',
         'ignore_errors': True}
    if environment is not None:
        t['environment'] = environment
    return t


def play(tasks, environment=None, **extra):
    p = {'name': 'environment', 'hosts': 'localhost', 'gather_facts': False}
    if environment is not None:
        p['environment'] = environment
    p.update(extra)
    p['tasks'] = tasks
    return [p]


def statuses(run):
    return dict((r['task'], r['status']) for r in run.results)


def test_connection_only_from_the_play_environment_on_both_paths(ansible, sim):
    tasks = [task(m, m) for m in UNCHANGED]
    for exec_path in (None, 'connection'):
        run = ansible.run_playbook(play(tasks, connection(sim)), extra_args=['-vvv'],
                                   env=dict(NO_CONNECTION_IN_PROCESS, FERRO_PROXMOX_EXEC=exec_path))
        assert statuses(run) == dict.fromkeys(UNCHANGED, 'ok'), (exec_path, run.stdout[-3000:])
        assert not run.changed_tasks
    # The connection path puts the environment on its command line, which -vvv shows (EXEC):
    # without the secret, whose value travelled in the args file instead.
    assert 'EXEC' in run.stdout and 'PROXMOX_HOST=' in run.stdout and 'PROXMOX_TOKEN_SECRET' not in run.stdout


def test_play_role_block_and_task_environment_in_ansible_precedence(ansible, sim, tmp_path):
    role = tmp_path / 'roles' / 'env_role' / 'tasks'
    role.mkdir(parents=True)
    (role / 'main.yml').write_text(
        '- name: role level\n  ferro.proxmox.proxmox_vm_info: {vmid: 100}\n  delegate_to: localhost\n'
        '  ignore_errors: true\n')
    wrong_port = connection(sim, PROXMOX_PORT='1')  # nothing listens there: the play level is overridden
    right = {'PROXMOX_PORT': str(sim.port)}
    plays = play([
        task('play level only', 'proxmox_vm_info'),
        {'name': 'block', 'environment': right, 'block': [
            task('block level', 'proxmox_vm_info'),
            task('task level beats block level', 'proxmox_vm_info', environment={'PROXMOX_TOKEN_SECRET': 'wrong'}),
        ]},
        task('explicit options beat the environment', 'proxmox_nic', api_port=sim.port,
             environment={'PROXMOX_HOST': 'no-such-host.invalid'}, api_host=sim.host),
        task('templated environment', 'proxmox_disk', environment={'PROXMOX_PORT': '{{ pvesim_port }}'}),
    ], wrong_port, vars={'pvesim_port': sim.port},
        roles=[{'role': 'env_role', 'environment': right}])
    run = ansible.run_playbook(plays, extra_args=['-vvv'], env=NO_CONNECTION_IN_PROCESS)
    assert statuses(run) == {'env_role : role level': 'ok', 'play level only': 'failed', 'block level': 'ok',
                             'task level beats block level': 'failed',
                             'explicit options beat the environment': 'ok', 'templated environment': 'ok'}, \
        run.stdout[-4000:]
    assert 'Connection refused' in run.task('play level only')['result']['msg']
    assert 'authentication fail' in run.task('task level beats block level')['result']['msg']


def test_the_task_environment_beats_the_controllers(ansible, sim):
    # The controller exports the connection (the harness does), the play overrides one variable.
    run = ansible.run_playbook(play([task('vm_info', 'proxmox_vm_info')], {'PROXMOX_PORT': '1'}))
    assert run.task('vm_info')['status'] == 'failed' and 'Connection refused' in run.task('vm_info')['result']['msg']


def test_api_otp_from_the_environment_completes_a_two_factor_login(ansible, sim):
    sim.add_user(TFA_USER, password=CANARY_PASSWORD, acl={'/': CANARY_PRIVILEGES}, totp=TFA_SECRET)
    password_login = connection(sim, PROXMOX_USER=TFA_USER, PROXMOX_PASSWORD=secret('E2E_PASSWORD'),
                                PROXMOX_TOKEN_ID=None, PROXMOX_TOKEN_SECRET=None)
    code = 'totp:' + totp_code(TFA_SECRET)
    wrong = totp_code(TFA_SECRET, time.time() + 150)  # five steps ahead: outside PVE's window
    sim.clear_requests()
    run = ansible.run_playbook(play([
        task('no otp', 'proxmox_vm_info'),
        task('wrong otp', 'proxmox_vm_info', environment={'PROXMOX_OTP': secret('E2E_WRONG_OTP')}),
        task('right otp', 'proxmox_nic', environment={'PROXMOX_OTP': secret('E2E_OTP')}),
        task('the same otp again', 'proxmox_vm_info', environment={'PROXMOX_OTP': secret('E2E_OTP')}),
    ], password_login), extra_args=['-vvv'], env=dict(NO_CONNECTION_IN_PROCESS, E2E_OTP=code, E2E_WRONG_OTP=wrong))
    assert statuses(run) == {'no otp': 'failed', 'wrong otp': 'failed', 'right otp': 'ok',
                             'the same otp again': 'failed'}, run.stdout[-4000:]
    msg = run.task('no otp')['result']['msg']
    assert 'two-factor' in msg and 'api_otp' in msg and 'PROXMOX_OTP' in msg, msg
    for name in ('wrong otp', 'the same otp again'):
        msg = run.task(name)['result']['msg']
        assert 'authentication failed for %s (password and one-time password)' % TFA_USER in msg, msg
        assert 'second factor' in msg and 'HTTP 401' in msg, msg
    # PVE was asked as its login dialog asks: password first, the code only to answer the challenge.
    tickets = [r['body'] for r in sim.requests() if r['path'].endswith('/access/ticket')]
    assert [sorted(b) for b in tickets] == [['password', 'username']] * 2 + [
        ['password', 'tfa-challenge', 'username'], ['password', 'username'], ['password', 'tfa-challenge', 'username'],
        ['password', 'username'], ['password', 'tfa-challenge', 'username']]
    assert code not in run.stdout + run.stderr + str(run.results)
    assert 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER' in run.stdout
