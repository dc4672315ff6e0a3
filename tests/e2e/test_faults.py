"""The fault table (issue 9): each module run against pvesim's fault injection.

For every fault: the faulted run ends as it must (a read fault is retried and succeeds; a write
fault, a failed or overlong task, a lock, a 401 is a clear failure, never a success, and a write
is never sent twice), every volume that existed before still exists afterwards (compared through
the storage content API of every storage of every node), and a rerun without the fault
converges (it succeeds, and the run after it changes nothing). Counts are printed.

Locks: no module waits for a VM lock. A write to a locked VM fails at once with Proxmox VE's
`VM is locked (<reason>)` (HTTP 500, never retried: it is a write, and the lock is permanent
for the request); a rerun once the lock is gone converges. SECURITY.md and the module notes say so.
"""

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import pytest

from harness import CANARY_SECRETS, CANARY_TOKEN_ID, CANARY_USER

COUNTS = Counter()


def t(module, name='task', **options):
    return {'name': name, 'ferro.proxmox.' + module: options, 'delegate_to': 'localhost', 'register': 'out'}


def play(*tasks):
    return [{'name': 'faults', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def volumes(sim):
    """Every volume of every storage of every node, through GET /nodes/{node}/storage/{storage}/content."""
    found = set()
    for node in sim.api('GET', '/nodes'):
        for storage in sim.api('GET', '/nodes/%s/storage' % node['node']):
            if 'images' not in storage.get('content', '') and 'iso' not in storage.get('content', ''):
                continue
            for item in sim.api('GET', '/nodes/%s/storage/%s/content' % (node['node'], storage['storage'])) or []:
                found.add(item['volid'])
    return found


def calls(sim, method, path_part):
    return [r for r in sim.requests() if r['method'] == method and path_part in r['path']]


def create_vm(sim, vmid, name, **cfg):
    upid = sim.api('POST', '/nodes/pve1/qemu', dict({'vmid': vmid, 'name': name}, **cfg))
    assert sim.wait_task(upid)['exitstatus'] == 'OK'


def wait_tasks_idle(sim, timeout=30):
    """Until no task runs on pve1 (a fault may leave one running after the module gave up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = [x for x in sim.api('GET', '/nodes/pve1/tasks', {'source': 'active'}) or [] if x.get('status') == 'running'
                   or not x.get('endtime')]
        if not running:
            return
        time.sleep(0.2)
    raise TimeoutError('tasks still running on pve1')


@dataclass
class Fault:
    id: str
    faults: list                       # pvesim fault specs, injected before the faulted run
    tasks: list                        # the playbook's tasks (one run)
    expect: Callable                   # expect(result, sim): the faulted task's result
    ok: bool = False                   # whether the faulted run must succeed
    setup: Callable = None             # setup(sim) before the faults
    after: Callable = None             # after(sim) once the faulted run ended (e.g. wait for a task)
    rerun: list = field(default=None)  # the rerun's tasks (default: the same)


# Expectations -----------------------------------------------------------------------------------

def read_retried(path, n):
    def expect(result, sim):
        got = calls(sim, 'GET', path)
        assert [r['status'] for r in got[:n + 1]] == [500] * n + [200] or \
            [r['status'] for r in got[:n + 1]] == [0] * n + [200], [r['status'] for r in got]
    return expect


def write_failed_once(method, path, words):
    def expect(result, sim):
        for w in words:
            assert w in result['msg'], result['msg']
        assert len(calls(sim, method, path)) == 1, 'the write was sent %d times' % len(calls(sim, method, path))
    return expect


def lost_then_sent_again(method, path):
    """A write whose connection was reset before PVE handled it: the config's digest read between the two sends
    shows nothing done, so it is sent again, once (docs/pve-semantics.md §55)."""
    def expect(result, sim):
        log = sim.requests()
        sent = [i for i, r in enumerate(log) if r['method'] == method and r['path'].endswith(path)]
        assert [log[i]['status'] for i in sent] == [0, 200], [log[i]['status'] for i in sent]
        assert any(r['method'] == 'GET' and r['path'].endswith(path) for r in log[sent[0]:sent[1]])
        assert len(result['retries']) == 1, result.get('retries')
        assert 'the answer was lost, and neither the task list nor the VM shows it done' in result['retries'][0]
    return expect


def auth_failed(result, sim):
    principal = '%s!%s (API token)' % (CANARY_USER, CANARY_TOKEN_ID)
    assert result['msg'] == ('Failed to retrieve VMs information from cluster resources: authentication failed for %s: '
                             'authentication failure (HTTP 401 on GET /cluster/resources)' % principal), result['msg']
    assert result['status_code'] == 401
    assert len(calls(sim, 'GET', '/cluster/resources')) == 1, '401 must not be retried'
    for secret in CANARY_SECRETS:
        assert secret not in str(result)


def task_failed(exitstatus):
    def expect(result, sim):
        assert result['exitstatus'] == exitstatus
        assert result['upid'].startswith('UPID:pve1:') and result['upid'] in result['msg']
        assert exitstatus in result['msg'] and result['task_log'], result
    return expect


def task_timeout(result, sim):
    assert result['upid'].startswith('UPID:pve1:'), result
    # The resize was accepted (issue 15): the message says so before the timeout.
    assert result['msg'] == ('Proxmox VE accepted these changes before the run failed: PUT /nodes/pve1/qemu/150/resize '
                             '(disk, size) (task %s started). Then: timed out after 1s waiting for task %s; it may still '
                             'be running on Proxmox' % (result['upid'], result['upid'])), result['msg']


def locked(reason):
    def expect(result, sim):
        assert 'VM is locked (%s)' % reason in result['msg'], result['msg']
    return expect


def clone_locked(result, sim):
    # waited for at most `timeout`, then the clone's task is named (docs/pve-semantics.md §30)
    assert result['msg'] == ('VM 140 is being cloned by task %s (lock: clone), which had not ended after 2s (timeout); '
                             'nothing was changed' % sim.clone_upid), result['msg']
    assert 140 in [int(r['vmid']) for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})]


def slow_ok(result, sim):
    assert min(r['duration_ms'] for r in sim.requests()) >= 150


# Scenario helpers ------------------------------------------------------------------------------

def data_vm(sim):
    create_vm(sim, 150, 'data-vm', scsi0='local-lvm:4', scsi1='local-lvm:10')


def start_slow_clone(sim):
    sim.fault(kind='task-slow', type='qmclone', seconds=6)
    COUNTS['faults injected'] += 1
    sim.clone_upid = sim.api('POST', '/nodes/pve1/qemu/9000/clone', {'newid': 140, 'name': 'cloning', 'full': 1})


def wait_clone(sim):
    sim.wait_task(sim.clone_upid)


NIC = dict(vmid=100, interface='net0', bridge='vmbr1', firewall=True)
DISK_RESIZE = dict(vmid=150, disk='scsi1', state='resized', size='12G')

FAULTS = [
    Fault('read 500 retried (vm_info)',
          [dict(kind='http', method='GET', path='^/cluster/resources$', status=500, message='proxy: upstream gone', count=2)],
          [t('proxmox_vm_info', config='current')], read_retried('/cluster/resources', 2), ok=True),
    Fault('read reset retried (nic)',
          [dict(kind='reset', method='GET', path='/pending$', count=1)],
          [t('proxmox_nic', **NIC)], read_retried('/pending', 1), ok=True),
    Fault('read 500 retried (disk)',
          [dict(kind='http', method='GET', path='/pending$', status=500, count=1)],
          [t('proxmox_disk', **DISK_RESIZE)], read_retried('/pending', 1), ok=True, setup=data_vm),
    Fault('read reset retried (kvm)',
          [dict(kind='reset', method='GET', path='^/cluster/resources$', count=2)],
          [t('proxmox_kvm', vmid=100, node='pve1', name='existing-web', cores=4)], read_retried('/cluster/resources', 2), ok=True),
    Fault('write 500 fails once (nic)',
          [dict(kind='http', method='PUT', path='/config$', status=500, message='got timeout')],
          [t('proxmox_nic', **NIC)], write_failed_once('PUT', '/config', ['got timeout', '(HTTP 500 on PUT /nodes/pve1/qemu/100/config)'])),
    Fault('write reset: reconciled, then sent again (nic)',
          [dict(kind='reset', method='PUT', path='/config$')],
          [t('proxmox_nic', **NIC)], lost_then_sent_again('PUT', '/qemu/100/config'), ok=True),
    Fault('write 500 fails once (disk)',
          [dict(kind='http', method='PUT', path='/resize$', status=500, message='storage busy')],
          [t('proxmox_disk', **DISK_RESIZE)], write_failed_once('PUT', '/resize', ['storage busy']), setup=data_vm),
    Fault('write reset: reconciled, then sent again (kvm)',
          [dict(kind='reset', method='PUT', path='/config$')],
          [t('proxmox_kvm', vmid=100, node='pve1', name='existing-web', cores=4, update=True)],
          lost_then_sent_again('PUT', '/qemu/100/config'), ok=True),
    Fault('401 names the user, not the secret',
          [dict(kind='http', method='GET', path='^/cluster/resources$', status=401)],
          [t('proxmox_nic', **NIC)], auth_failed),
    Fault('failed task (disk resize)',
          [dict(kind='task', type='resize', exitstatus='unable to resize: lvextend failed')],
          [t('proxmox_disk', **DISK_RESIZE)], task_failed('unable to resize: lvextend failed'), setup=data_vm),
    Fault('failed task (disk move)',
          [dict(kind='task', type='qmmove', exitstatus='storage migration failed: I/O error')],
          [t('proxmox_disk', vmid=150, disk='scsi1', state='moved', target_storage='nvme-pool')],
          task_failed('storage migration failed: I/O error'), setup=data_vm),
    Fault('failed task (kvm start)',
          [dict(kind='task', type='qmstart', exitstatus='start failed: QEMU exited with code 1')],
          [t('proxmox_kvm', vmid=150, node='pve1', name='data-vm', state='started')],
          task_failed('start failed: QEMU exited with code 1'), setup=data_vm),
    Fault('task past timeout names the UPID (disk)',
          [dict(kind='task-slow', type='resize', seconds=3)],
          [t('proxmox_disk', timeout=1, **DISK_RESIZE)], task_timeout, setup=data_vm, after=wait_tasks_idle),
    Fault('locked VM (nic)',
          [dict(kind='lock', vmid=100, lock='backup', seconds=60)],
          [t('proxmox_nic', **NIC)], locked('backup')),
    Fault('locked VM (disk)',
          [dict(kind='lock', vmid=150, lock='backup', seconds=60)],
          [t('proxmox_disk', **DISK_RESIZE)], locked('backup'), setup=data_vm),
    Fault('delete while its clone runs (kvm)',
          [], [t('proxmox_kvm', vmid=140, state='absent', force=True, timeout=2)], clone_locked, setup=start_slow_clone, after=wait_clone),
    Fault('slow network (every call +200 ms)',
          [dict(kind='latency', ms=200)],
          [t('proxmox_vm_info', 'info', vmid=100, config='current'), t('proxmox_nic', 'nic', **NIC),
           t('proxmox_disk', 'disk', vmid=100, disk='scsi0', cache='writeback')], slow_ok, ok=True),
    Fault('one read slower than api_timeout, retried',
          [dict(kind='latency', ms=2500, method='GET', path='^/cluster/resources$', count=1)],
          [t('proxmox_nic', api_timeout=1, **NIC)], read_retried('/cluster/resources', 1), ok=True),
]


@pytest.mark.parametrize('fault', FAULTS, ids=[f.id for f in FAULTS])
def test_fault(ansible, sim, fault):
    if fault.setup:
        fault.setup(sim)
    before = volumes(sim)
    for spec in fault.faults:
        sim.fault(**spec)
        COUNTS['faults injected'] += 1
    sim.clear_requests()
    run = ansible.run_playbook(play(*fault.tasks))
    faulted = [r for r in run.results if r['status'] in ('ok', 'failed')]
    assert faulted, run.stdout[-3000:]
    if fault.ok:
        assert run.rc == 0 and all(r['status'] == 'ok' for r in faulted), run.stdout[-3000:]
    else:
        result = faulted[-1]['result']
        assert faulted[-1]['status'] == 'failed', 'a fault reported success: %s' % result
        # A write Proxmox accepted before the failure is a change (issue 15), and the only one; but a
        # task that failed and changed nothing is not (issue 23): each accepted write is listed as
        # applied (`accepted_writes`) or refused (`refused_writes`), and only the first make `changed`.
        accepted = [r for r in sim.requests() if r['method'] != 'GET' and 200 <= r['status'] < 300
                    and not r['path'].endswith('/access/ticket')]
        listed = result.get('accepted_writes', []) + result.get('refused_writes', [])
        assert len(listed) == len(accepted), (result, accepted)
        assert result.get('changed') is bool(result.get('accepted_writes')), result
    fault.expect(faulted[-1]['result'], sim)
    if fault.after:
        fault.after(sim)
    sim.clear_faults()  # also lifts a lock fault: the lock is gone for the rerun
    after = volumes(sim)
    assert before <= after, 'volumes lost: %s' % sorted(before - after)
    COUNTS['volumes checked'] += len(before)
    # Without the fault: a rerun succeeds, and the run after it changes nothing (when the faulted
    # run succeeded, it was the first of the two).
    if not fault.ok:
        rerun = ansible.run_playbook(play(*(fault.rerun or fault.tasks)))
        assert rerun.rc == 0, rerun.stdout[-3000:]
    again = ansible.run_playbook(play(*(fault.rerun or fault.tasks)))
    assert again.rc == 0 and again.changed_tasks == [], again.changed_tasks
    assert before - {v for v in before if '-140-' in v} <= volumes(sim)
    COUNTS['volumes checked'] += len(before)
    COUNTS['scenarios'] += 1


def test_zz_fault_counts(request, summary):
    """The counts agree with the table rows that ran in this session (this test runs last in this file):
    one scenario per row, at least its faults injected, its volumes checked."""
    rows = [item.callspec.params['fault'] for item in request.session.items
            if item.module is request.module and item.originalname == 'test_fault']
    if not rows:
        pytest.skip('no row of the fault table was selected')
    summary('fault table: %d scenarios, %d faults injected, %d volumes checked'
            % (COUNTS['scenarios'], COUNTS['faults injected'], COUNTS['volumes checked']))
    assert COUNTS['scenarios'] == len(rows), (COUNTS, len(rows))
    assert COUNTS['faults injected'] >= sum(len(f.faults) for f in rows), COUNTS
    assert COUNTS['volumes checked'] > 0, COUNTS
    if len(rows) == len(FAULTS):
        assert COUNTS['scenarios'] >= 18, COUNTS
