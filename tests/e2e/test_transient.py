"""Transient errors of a busy cluster survived, nothing duplicated (issue 36, docs/pve-semantics.md §55).

Each class with pvesim's faults in PVE's words: a lock PVE could not take in time before it changed anything
(pve-cluster Cluster.pm cfs_lock as a task's exit status, pve-common Tools.pm lock_file_full as a 500), a
connection refused before the request was sent, pveproxy's 595 for a proxy hop that could not connect
(pve-http-server AnyEvent.pm proxy_request): sent again with backoff, the tries in the result's `retries`. A
write whose answer was lost (a reset after sending, or before it was handled) is reconciled by reading the task
list, the config's digest or the VM before anything is sent again. Every case asserts the result's retries,
the request log (no write applied twice) and the VM's final state.
"""

import glob
import json
import os
import socket
import subprocess
import threading
import time

from harness import CANARY_PASSWORD, CANARY_TOKEN_ID, CANARY_TOKEN_SECRET, CANARY_USER

CFS_TIMEOUT = "cfs-lock 'storage-vmdata' error: got lock request timeout"
FLOCK_TIMEOUT = "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout"


def t(module, **options):
    return {'name': 'task', 'ferro.proxmox.' + module: options, 'register': 'out'}


def play(*tasks):
    return [{'name': 'transient', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def one(run):
    results = [r for r in run.results if r['status'] in ('ok', 'failed')]
    assert len(results) == 1, run.stdout[-3000:]
    assert results[0]['status'] == 'ok', results[0]['result']
    return results[0]['result']


def writes(sim, method, suffix):
    return [r for r in sim.requests() if r['method'] == method and r['path'].endswith(suffix)]


def vms_named(sim, name):
    return [v for v in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if v.get('name') == name]


def clone_task(**extra):
    return t('proxmox_kvm', node='pve1', clone='debian-13-template', name='fleet-01', newid=301, timeout=30, **extra)


def test_a_clone_whose_task_timed_out_on_the_storage_lock_is_sent_again(ansible, sim):
    sim.fault(kind='task', type='qmclone', exitstatus=CFS_TIMEOUT, count=1)
    result = one(ansible.run_playbook(play(clone_task())))
    assert result['changed'] is True and result['vmid'] == 301
    assert len(result['retries']) == 1 and CFS_TIMEOUT in result['retries'][0], result['retries']
    assert 'failed before any change' in result['retries'][0]
    clones = writes(sim, 'POST', '/qemu/9000/clone')
    assert [c['status'] for c in clones] == [200, 200]
    tasks = sim.api('GET', '/nodes/pve1/tasks', {'source': 'all', 'vmid': 9000, 'typefilter': 'qmclone'})
    assert sorted(x['status'] for x in tasks) == ['OK', CFS_TIMEOUT]
    assert [v['vmid'] for v in vms_named(sim, 'fleet-01')] == [301]


def test_a_config_write_refused_on_the_config_flock_is_sent_again(ansible, sim):
    sim.fault(kind='http', method='PUT', path='/qemu/100/config$', status=500, message=FLOCK_TIMEOUT, count=2)
    result = one(ansible.run_playbook(play(t('proxmox_nic', vmid=100, interface='net0', bridge='vmbr1'))))
    assert result['changed'] is True
    assert len(result['retries']) == 2 and all('lock timeout before any change' in r for r in result['retries'])
    assert [w['status'] for w in writes(sim, 'PUT', '/qemu/100/config')] == [500, 500, 200]
    assert 'bridge=vmbr1' in sim.api('GET', '/nodes/pve1/qemu/100/config')['net0']


def test_a_disk_move_whose_task_timed_out_on_the_storage_lock_is_sent_again(ansible, sim):
    upid = sim.api('POST', '/nodes/pve1/qemu', {'vmid': 150, 'name': 'data-vm', 'scsi1': 'local-lvm:4'})
    assert sim.wait_task(upid)['exitstatus'] == 'OK'
    words = "cfs-lock 'storage-nvme-pool' error: got lock request timeout"
    sim.fault(kind='task', type='qmmove', exitstatus=words, count=1)
    result = one(ansible.run_playbook(play(t('proxmox_disk', vmid=150, disk='scsi1', state='moved',
                                               target_storage='nvme-pool', timeout=30))))
    assert result['changed'] is True
    assert len(result['retries']) == 1 and words in result['retries'][0], result['retries']
    assert [w['status'] for w in writes(sim, 'POST', '/qemu/150/move_disk')] == [200, 200]
    assert sim.api('GET', '/nodes/pve1/qemu/150/config')['scsi1'].startswith('nvme-pool:')


def test_a_proxy_hops_595_is_sent_again(ansible, sim):
    sim.fault(kind='http', method='POST', path='^/nodes/pve1/qemu$', status=595, message='Connection refused', count=1)
    result = one(ansible.run_playbook(play(t('proxmox_kvm', node='pve1', vmid=302, name='hop', cores=1))))
    assert result['changed'] is True and result['vmid'] == 302
    assert len(result['retries']) == 1 and 'a proxy hop could not connect (HTTP 595' in result['retries'][0]
    assert [w['status'] for w in writes(sim, 'POST', '/nodes/pve1/qemu')] == [595, 200]
    assert [v['vmid'] for v in vms_named(sim, 'hop')] == [302]


def test_a_lost_clone_answer_is_found_in_the_task_list_and_not_sent_again(ansible, sim):
    sim.fault(kind='reset', after=True, method='POST', path='/qemu/9000/clone$', count=1)
    result = one(ansible.run_playbook(play(clone_task())))
    assert result['changed'] is True and result['vmid'] == 301
    assert len(result['retries']) == 1, result['retries']
    assert "the answer was lost; its task UPID:pve1:" in result['retries'][0]
    assert 'not sent again' in result['retries'][0]
    assert [c['status'] for c in writes(sim, 'POST', '/qemu/9000/clone')] == [0]
    assert [v['vmid'] for v in vms_named(sim, 'fleet-01')] == [301]


def test_a_lost_config_answer_is_told_from_the_digest(ansible, sim):
    sim.fault(kind='reset', after=True, method='PUT', path='/qemu/100/config$', count=1)
    result = one(ansible.run_playbook(play(t('proxmox_nic', vmid=100, interface='net0', bridge='vmbr1'))))
    assert result['changed'] is True
    assert result['retries'] == ["PUT /nodes/pve1/qemu/100/config: the answer was lost; the config's digest shows it "
                                 'applied: not sent again']
    assert [w['status'] for w in writes(sim, 'PUT', '/qemu/100/config')] == [0]
    assert 'bridge=vmbr1' in sim.api('GET', '/nodes/pve1/qemu/100/config')['net0']


def test_a_write_reset_before_pve_handled_it_is_sent_again_once_reads_show_nothing_done(ansible, sim):
    sim.fault(kind='reset', method='POST', path='^/nodes/pve1/qemu$', count=1)
    result = one(ansible.run_playbook(play(t('proxmox_kvm', node='pve1', vmid=303, name='reset-before', cores=1))))
    assert result['changed'] is True and result['vmid'] == 303
    assert len(result['retries']) == 1
    assert 'the answer was lost, and neither the task list nor the VM shows it done' in result['retries'][0]
    log = sim.requests()
    posts = [i for i, r in enumerate(log) if r['method'] == 'POST' and r['path'].endswith('/nodes/pve1/qemu')]
    assert [log[i]['status'] for i in posts] == [0, 200]
    # the task list was read between the two sends
    assert any(r['path'].endswith('/nodes/pve1/tasks') for r in log[posts[0]:posts[1]])
    assert [v['vmid'] for v in vms_named(sim, 'reset-before')] == [303]


def _forward_later(port, target, delay):
    """Listen on `port` only after `delay` seconds (until then a connection is refused), then forward each
    connection to `target`, byte for byte (TLS passes through)."""
    def pipe(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def serve():
        time.sleep(delay)
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(('127.0.0.1', port))
        listener.listen(16)
        listener.settimeout(20)
        try:
            while True:
                client, _ = listener.accept()
                upstream = socket.create_connection(target)
                threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
                threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
        except OSError:
            listener.close()

    threading.Thread(target=serve, daemon=True).start()


def test_a_connection_refused_before_sending_is_tried_again(collections_path, sim):
    """The module binary run as the action plugin runs it (arguments on stdin), so that its first connection
    comes before the listener is up, whatever Ansible's own start-up costs on a loaded machine."""
    probe = socket.socket()
    probe.bind(('127.0.0.1', 0))
    port = probe.getsockname()[1]
    probe.close()
    binary = glob.glob(os.path.join(collections_path, 'ansible_collections', 'ferro', 'proxmox', 'native', '*',
                                    'proxmox_vm_info'))[0]
    args = {'api_host': '127.0.0.1', 'api_port': port, 'api_user': CANARY_USER, 'api_token_id': CANARY_TOKEN_ID,
            'api_token_secret': CANARY_TOKEN_SECRET, 'ca_path': sim.ca_path, 'vmid': 100, 'config': 'current'}
    sim.clear_requests()
    _forward_later(port, ('127.0.0.1', sim.port), 1.0)
    proc = subprocess.run([binary], input=json.dumps(args), capture_output=True, text=True, timeout=60)
    result = json.loads(proc.stdout)
    assert not result.get('failed'), result
    assert result['changed'] is False and [vm['vmid'] for vm in result['proxmox_vms']] == [100]
    assert result['retries'] and all('connection failed before the request was sent' in r for r in result['retries'])
    assert CANARY_TOKEN_SECRET not in proc.stdout
    # nothing reached PVE before the listener was up: the first request it saw succeeded
    assert sim.requests()[0]['status'] == 200


def test_a_password_login_reset_is_sent_again_a_ticket_changes_nothing(ansible, sim):
    # pve-access-control create_ticket signs a ticket and stores nothing: a login reset before or after PVE
    # handled it is sent again (docs/pve-semantics.md §60)
    sim.fault(kind='reset', method='POST', path='^/access/ticket$', count=1)
    sim.fault(kind='reset', after=True, method='POST', path='^/access/ticket$', count=1)  # the next one
    result = one(ansible.run_playbook(play(t('proxmox_vm_info', vmid=100, api_user=CANARY_USER,
                                             api_password=CANARY_PASSWORD))))
    assert [vm['vmid'] for vm in result['proxmox_vms']] == [100]
    assert len(result['retries']) == 2 and all(r.startswith('POST /access/ticket: ') for r in result['retries'])
    assert 'the answer was lost (a login changes nothing)' in result['retries'][1]
    assert [r['status'] for r in sim.requests() if r['path'].endswith('/access/ticket')] == [0, 0, 200]


def test_the_second_write_of_a_resize_keeping_a_pending_change_is_sent_again_on_a_lock_timeout(ansible, sim):
    # VM 100 runs; a cache change of its disk waits for the next start, so the resize is followed by the pending
    # value again with the new size (proxmox_disk apply): that write's task failed on the storage lock is sent
    # again, as the first write's would be (the same call sends both)
    scsi0 = sim.api('GET', '/nodes/pve1/qemu/100/config')['scsi0']
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'scsi0': scsi0 + ',cache=writeback'})
    assert 'scsi0' in [p['key'] for p in sim.api('GET', '/nodes/pve1/qemu/100/pending') if 'pending' in p]
    sim.fault(kind='task', type='qmconfig', exitstatus=CFS_TIMEOUT, count=1)
    result = one(ansible.run_playbook(play(t('proxmox_disk', vmid=100, disk='scsi0', state='resized', size='64G',
                                               timeout=30))))
    assert result['changed'] is True
    assert len(result['retries']) == 1 and CFS_TIMEOUT in result['retries'][0], result['retries']
    assert 'qmconfig' in result['retries'][0]
    pending = {p['key']: p for p in sim.api('GET', '/nodes/pve1/qemu/100/pending')}['scsi0']
    assert 'size=64G' in pending['value'] and 'size=64G' in pending['pending'] and 'cache=writeback' in pending['pending']
