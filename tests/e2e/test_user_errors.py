"""The mistakes a new user makes first, each with the message that names what to fix (a table), and
the trust store a certificate is checked against when `ca_path` is unset: the system's, or the one
`SSL_CERT_FILE` / `SSL_CERT_DIR` name, as curl and Python's ssl read them (README, "The connection
from the environment")."""

import datetime
import os
import shutil
import socket

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def other_ca(path):
    """A CA that did not sign pvesim's certificate, as a PEM file."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'Some other CA')])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return str(path)


def closed_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def info_task(**options):
    return {'name': 'info', 'ferro.proxmox.proxmox_vm_info': dict({'vmid': 100}, **options),
            'delegate_to': 'localhost', 'ignore_errors': True}


def play(*tasks, hosts='localhost'):
    return [{'name': 'a new user', 'hosts': hosts, 'gather_facts': False, 'tasks': list(tasks)}]


def failure(run):
    r = run.task('info')
    assert r['status'] == 'failed', r
    return r['result']['msg']


# (case, env for the run (None unsets), task options, the parts the message must hold). `{port}`,
# `{host}`, `{ca}` and `{other}` are pvesim's, a closed port's, pvesim's CA file and another CA file.
MISTAKES = [
    ('connection refused names the URL tried', {'PROXMOX_PORT': '{closed}'}, {},
     ['GET /cluster/resources failed', 'Connection refused', '(the API at https://127.0.0.1:{closed})']),
    ('an unknown host name names the URL tried', {'PROXMOX_HOST': 'pve-typo.invalid'}, {},
     ['(the API at https://pve-typo.invalid:{port})']),
    ('a wrong CA file is named, as what to fix', {'PROXMOX_CA_PATH': '{other}'}, {},
     ['the TLS certificate of https://{host}:{port} could not be verified against the CA file {other} (ca_path)',
      '{other} is not the CA that signed it: set ca_path to that CA']),
    ('a CA file that does not exist is named', {'PROXMOX_CA_PATH': '/srv/missing/pve-root-ca.pem'}, {},
     ['ca_path: unable to read the CA file /srv/missing/pve-root-ca.pem']),
    ('without ca_path, the system trust store is named', {'PROXMOX_CA_PATH': None, 'SSL_CERT_FILE': None,
                                                          'SSL_CERT_DIR': None}, {},
     ["could not be verified against the system's trust store", 'set ca_path to the CA that signed it']),
    ('SSL_CERT_FILE without pvesim\'s CA is named', {'PROXMOX_CA_PATH': None, 'SSL_CERT_FILE': '{other}',
                                                     'SSL_CERT_DIR': None}, {},
     ['could not be verified against the trust store of SSL_CERT_FILE={other}']),
]


@pytest.mark.parametrize('case,env,options,parts', MISTAKES, ids=[m[0] for m in MISTAKES])
def test_each_mistake_fails_with_a_message_that_names_what_to_fix(ansible, sim, tmp_path, case, env, options, parts):
    values = {'port': sim.port, 'host': sim.host, 'closed': closed_port(), 'ca': sim.ca_path,
              'other': other_ca(tmp_path / 'other-ca.pem')}
    env = {k: (v.format(**values) if isinstance(v, str) else v) for k, v in env.items()}
    msg = failure(ansible.run_playbook(play(info_task(**options)), env=env))
    for part in parts:
        assert part.format(**values) in msg, (case, part.format(**values), msg)


def test_a_task_on_another_host_without_connection_options_says_to_delegate_to_localhost(ansible, sim, tmp_path):
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text('all:\n  hosts:\n    web01:\n      ansible_host: 127.0.0.1\n      ansible_connection: ssh\n')
    task = {'name': 'info', 'ferro.proxmox.proxmox_vm_info': {'vmid': 100}, 'ignore_errors': True}
    msg = failure(ansible.run_playbook(play(task, hosts='web01'), inventory=str(inventory)))
    assert msg.startswith('missing required arguments: '), msg
    assert 'This task runs on web01, not on the controller' in msg, msg
    assert 'Add `delegate_to: localhost` to the task (the usual fix)' in msg, msg
    # On the controller the same task finds the PROXMOX_* variables: no such hint.
    run = ansible.run_playbook(play(dict(task, delegate_to='localhost'), hosts='web01'), inventory=str(inventory))
    assert run.task('info')['status'] == 'ok', run.task('info')['result']


@pytest.mark.parametrize('how', ['SSL_CERT_FILE', 'SSL_CERT_DIR'])
def test_a_ca_in_the_trust_store_verifies_the_api_without_ca_path(ansible, sim, tmp_path, how):
    if how == 'SSL_CERT_FILE':
        env = {'SSL_CERT_FILE': sim.ca_path, 'SSL_CERT_DIR': None}
    else:
        store = tmp_path / 'certs'
        store.mkdir()
        shutil.copy(sim.ca_path, store / 'pvesim.pem')
        env = {'SSL_CERT_DIR': str(store), 'SSL_CERT_FILE': None}
    run = ansible.run_playbook(play(info_task()), env=dict(env, PROXMOX_CA_PATH=None))
    result = run.task('info')
    assert result['status'] == 'ok', result['result']
    assert [vm['vmid'] for vm in result['result']['proxmox_vms']] == [100]
    assert os.path.exists(sim.ca_path)


# The mistakes of a task's own options or of its token's privileges, each with a module task:
# (case, module, task options, the token's ACL on / or None for the canary's, the parts the message must hold).
READER = ('reader@pve', 'ro', 'reader-token-secret-0b1c')
TASK_MISTAKES = [
    ('a read-only token creating a VM names path, privilege, operation and token', 'proxmox_kvm',
     {'node': 'pve1', 'vmid': 606, 'name': 'ro', 'cores': 1}, ['VM.Audit', 'Datastore.Audit', 'Sys.Audit'],
     ['/vms/606', 'VM.Allocate', 'POST /nodes/pve1/qemu', 'reader@pve!ro']),
    ("a wrong node lists the cluster's nodes", 'proxmox_kvm', {'node': 'pve9', 'vmid': 607, 'name': 'typo', 'cores': 1},
     None, ["'pve9'", "the cluster's nodes: pve1"]),
    ("a missing storage lists the node's storages", 'proxmox_disk',
     {'vmid': 100, 'disk': 'scsi2', 'storage': 'no-such-storage', 'size': '1'}, None,
     ["storage 'no-such-storage' does not exist", 'the storages enabled on pve1: ', 'local-lvm']),
    ("a missing bridge lists the node's bridges", 'proxmox_nic', {'vmid': 100, 'interface': 'net1', 'bridge': 'vmbr7'},
     None, ["bridge 'vmbr7' does not exist on node pve1", "the node's bridges: vmbr0"]),
]


@pytest.mark.parametrize('case,module,options,acl,parts', TASK_MISTAKES, ids=[m[0] for m in TASK_MISTAKES])
def test_each_task_mistake_fails_with_a_message_that_names_what_to_fix(ansible, sim, case, module, options, acl, parts):
    env = {}
    if acl is not None:
        user, token, secret = READER
        sim.add_user(user, tokens={token: secret}, acl={'/': acl})
        env = {'PROXMOX_USER': user, 'PROXMOX_TOKEN_ID': token, 'PROXMOX_TOKEN_SECRET': secret}
    task = {'name': 'info', 'ferro.proxmox.' + module: options, 'delegate_to': 'localhost', 'ignore_errors': True}
    msg = failure(ansible.run_playbook(play(task), env=env))
    for part in parts:
        assert part in msg, (case, part, msg)
