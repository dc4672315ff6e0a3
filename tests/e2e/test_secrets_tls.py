"""Secrets and TLS for every module (issue 9).

Secrets: every run of the suite authenticates with the canary token (harness.py), and
`run_playbook` fails a run whose output, results or pvesim request log contains a canary secret.
Here each module also runs at -vvv with the canary token given as a task option, and with the
canary password (ticket auth), succeeding and failing.

TLS: `validate_certs: true` with `ca_path` (pvesim's CA) works; without it the task fails with a
message that says how to fix it; `validate_certs: false` works and warns once per task.
"""

from harness import CANARY_PASSWORD, CANARY_SECRETS, CANARY_TOKEN_SECRET, CANARY_USER

MODULES = ('proxmox_vm_info', 'proxmox_nic', 'proxmox_disk', 'proxmox_kvm')

# A task per module that changes nothing on the seed's VM 100.
UNCHANGED = {
    'proxmox_vm_info': {'vmid': 100, 'config': 'current'},
    'proxmox_nic': {'vmid': 100, 'interface': 'net0', 'bridge': 'vmbr0', 'firewall': True},
    'proxmox_disk': {'vmid': 100, 'disk': 'scsi0'},
    'proxmox_kvm': {'vmid': 100, 'name': 'existing-web', 'state': 'current'},
}
FAILING = {
    'proxmox_vm_info': {'node': 'nope'},
    'proxmox_nic': {'vmid': 4242, 'interface': 'net0'},
    'proxmox_disk': {'vmid': 100, 'disk': 'scsi0', 'state': 'resized', 'size': '1G'},
    'proxmox_kvm': {'vmid': 4242, 'state': 'current'},
}


def tasks(options_by_module, suffix='', **extra):
    return [{'name': m + suffix, 'ferro.proxmox.' + m: dict(options, **extra), 'delegate_to': 'localhost',
             'ignore_errors': True} for m, options in options_by_module.items()]


def play(task_list):
    return [{'name': 'secrets and tls', 'hosts': 'localhost', 'gather_facts': False, 'tasks': task_list}]


def assert_clean(run):
    text = run.stdout + run.stderr
    for secret in CANARY_SECRETS:
        assert secret not in text
    assert 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER' in text  # the -vvv invocation shows the masked option


def test_token_secret_given_as_option_never_shows_at_vvv(ansible, sim):
    run = ansible.run_playbook(play(tasks(UNCHANGED, api_token_secret=CANARY_TOKEN_SECRET)
                                    + tasks(FAILING, ' failing', api_token_secret=CANARY_TOKEN_SECRET)),
                               extra_args=['-vvv'])
    assert [r['status'] for r in run.results] == ['ok'] * 4 + ['failed'] * 4, run.stdout[-3000:]
    assert not run.changed_tasks
    assert_clean(run)


def test_password_auth_never_shows_the_password_at_vvv(ansible, sim):
    env = {'PROXMOX_USER': CANARY_USER, 'PROXMOX_PASSWORD': CANARY_PASSWORD,
           'PROXMOX_TOKEN_ID': None, 'PROXMOX_TOKEN_SECRET': None}
    sim.clear_requests()
    run = ansible.run_playbook(play(tasks(UNCHANGED) + tasks(FAILING, ' failing')), extra_args=['-vvv'], env=env)
    assert [r['status'] for r in run.results] == ['ok'] * 4 + ['failed'] * 4, run.stdout[-3000:]
    tickets = [r for r in sim.requests() if r['path'].endswith('/access/ticket')]
    assert len(tickets) == 8 and all(r['body'].get('password') == '**********' for r in tickets)
    assert_clean(run)
    # A wrong password: the message names the user, not the password.
    run = ansible.run_playbook(play(tasks({'proxmox_nic': UNCHANGED['proxmox_nic']})),
                               env=dict(env, PROXMOX_PASSWORD=CANARY_PASSWORD + '-wrong'), extra_args=['-vvv'])
    msg = run.task('proxmox_nic')['result']['msg']
    assert 'authentication failed for %s (password)' % CANARY_USER in msg, msg
    assert CANARY_PASSWORD not in run.stdout + run.stderr + msg


def test_tls_verified_with_ca_path_for_every_module(ansible, sim):
    run = ansible.run_playbook(play(tasks(UNCHANGED, validate_certs=True, ca_path=sim.ca_path)))
    assert [r['status'] for r in run.results] == ['ok'] * 4, run.stdout[-3000:]
    for r in run.results:
        assert not [w for w in r['result'].get('warnings', []) if 'validate_certs' in w]


def test_tls_without_the_ca_fails_and_says_how_to_fix_it(ansible, sim):
    sim.clear_requests()
    run = ansible.run_playbook(play(tasks(UNCHANGED, validate_certs=True)), env={'PROXMOX_CA_PATH': None})
    for m in MODULES:
        r = run.task(m)
        assert r['status'] == 'failed', r
        msg = r['result']['msg']
        assert 'the TLS certificate of https://%s:%d could not be verified' % (sim.host, sim.port) in msg, msg
        assert 'set ca_path to the CA that signed it (on a Proxmox VE node: /etc/pve/pve-root-ca.pem)' in msg, msg
        assert 'validate_certs: false' in msg
    assert sim.requests() == []  # the handshake failed: no request reached the API


def test_tls_unverified_works_and_warns_once_per_task(ansible, sim):
    run = ansible.run_playbook(play(tasks(UNCHANGED, validate_certs=False)), env={'PROXMOX_CA_PATH': ''})
    for m in MODULES:
        r = run.task(m)
        assert r['status'] == 'ok', r
        warnings = [w for w in r['result'].get('warnings', []) if 'validate_certs' in w]
        assert warnings == ['validate_certs is false: the TLS certificate of the Proxmox VE API is not verified; '
                            'set ca_path to its CA instead'], r['result'].get('warnings')
    # Each result has it once; ansible-playbook (2.19) shows a warning repeated by several tasks once.
    assert 1 <= (run.stdout + run.stderr).count('validate_certs is false') <= len(MODULES), run.stdout + run.stderr
