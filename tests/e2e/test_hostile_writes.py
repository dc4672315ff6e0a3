"""The hostile table of writes (issue 15): a change once made is always reported, concurrent
playbooks don't fail each other, a NIC on a missing bridge is refused before any write, `+0` grows
nothing. Every row asserts the task's result, pvesim's request log and the VM's config; counts are
printed at the end.

- A write Proxmox accepted, then a later step failing (a task slower than `timeout`, the task status
  poll or the read-back answering 500, a destroy task failing after its stop): the run fails with
  `changed: true` and a message saying what was accepted, and then what failed; the rerun converges.
- Two playbooks adding three disks and three NICs each to one VM at the same time, ten times: all
  twelve devices end in the config and no task fails. A write refused for a digest conflict is
  re-planned from a fresh read (vmconfig::retry_on_conflict); pvesim checks the digest where PVE does
  (Qemu.pm update_vm_api, also inside the qmconfig task).
"""

import re
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import pytest

COUNTS = Counter()
CONFLICT = 'checksum mismatch (file change by other user?)'
# 'accepted' while a task may still be running, 'applied' once every listed write is known to have ended
ACCEPTED = re.compile(r'Proxmox VE (accepted|applied) these changes before the run failed: ')


def t(module, name='task', **options):
    return {'name': name, 'ferro.proxmox.' + module: options, 'delegate_to': 'localhost', 'register': 'out'}


def play(*tasks):
    return [{'name': 'hostile', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def writes(sim):
    """(method, path) of every write in the request log, the login excepted."""
    return [(r['method'], r['path'].replace('/api2/json', ''), r['status']) for r in sim.requests()
            if r['method'] != 'GET' and not r['path'].endswith('/access/ticket')]


def cfg(sim, vmid):
    return sim.api('GET', '/nodes/pve1/qemu/%d/config' % vmid)


def create_vm(sim, vmid, name, **config):
    upid = sim.api('POST', '/nodes/pve1/qemu', dict({'vmid': vmid, 'name': name}, **config))
    assert sim.wait_task(upid)['exitstatus'] == 'OK'


def data_vm(sim):
    create_vm(sim, 150, 'data-vm', scsi0='local-lvm:4', scsi1='local-lvm:10')


def running_data_vm(sim):
    data_vm(sim)
    assert sim.wait_task(sim.api('POST', '/nodes/pve1/qemu/150/status/start'))['exitstatus'] == 'OK'


def wait_idle(sim, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not [x for x in sim.api('GET', '/nodes/pve1/tasks', {'source': 'active'}) or [] if not x.get('endtime')]:
            return
        time.sleep(0.2)
    raise TimeoutError('tasks still running on pve1')


def run(ansible, *tasks, check=False):
    COUNTS['playbook runs'] += 1
    return ansible.run_playbook(play(*tasks), check=check)


def last(run_):
    return [r for r in run_.results if r['status'] in ('ok', 'failed')][-1]


# A write accepted, then a later step failing ---------------------------------------------------

@dataclass
class Accepted:
    id: str
    setup: Callable
    faults: list
    task: dict
    accepted: list        # the accepted writes the message must name, in order (method, path)
    failed_with: str      # what the message says failed, after "Then: "
    holds: Callable       # holds(sim): the change is there once its task ended
    converge_in: int = 1  # reruns until a run changes nothing (1: the rerun itself)
    refused: list = ()    # accepted writes whose task PVE then refused, changing nothing (issue 23)


NEW_DISK = dict(vmid=150, disk='scsi2', storage='local-lvm', size='1')
ROWS = [
    Accepted('disk create, task slower than timeout', data_vm,
             [dict(kind='task-slow', type='qmconfig', seconds=2.5)], t('proxmox_disk', timeout=1, **NEW_DISK),
             [('POST', '/nodes/pve1/qemu/150/config (scsi2)')], 'timed out after 1s waiting for task',
             lambda sim: cfg(sim, 150)['scsi2'] == 'local-lvm:vm-150-disk-2,size=1G'),
    Accepted('disk create, task status answers 500', data_vm,
             [dict(kind='http', method='GET', path=r'/tasks/[^/]+/status$', status=500, message='proxy gone', count=4)],
             t('proxmox_disk', **NEW_DISK),
             [('POST', '/nodes/pve1/qemu/150/config (scsi2)')], 'reading the status of task',
             lambda sim: cfg(sim, 150)['scsi2'] == 'local-lvm:vm-150-disk-2,size=1G'),
    Accepted('nic change, read-back answers 500', lambda sim: None,
             [dict(kind='http', method='GET', path=r'/qemu/100/pending$', status=500, message='proxy gone', skip=1,
                   count=4)],
             t('proxmox_nic', vmid=100, interface='net1', bridge='vmbr1'),
             [('PUT', '/nodes/pve1/qemu/100/config (net1)')], 'reading the configuration of VM 100',
             lambda sim: 'bridge=vmbr1' in cfg(sim, 100)['net1']),
    Accepted('kvm update, read-back answers 500', lambda sim: None,
             [dict(kind='http', method='GET', path=r'/qemu/100/pending$', status=500, message='proxy gone', skip=1,
                   count=4)],
             t('proxmox_kvm', vmid=100, node='pve1', name='existing-web', update=True, description='hostile'),
             [('PUT', '/nodes/pve1/qemu/100/config (description)')], 'reading the configuration of VM 100',
             lambda sim: cfg(sim, 100)['description'] == 'hostile'),
    Accepted('kvm absent, destroy task fails after the stop', running_data_vm,
             [dict(kind='task', type='qmdestroy', exitstatus='unable to remove VM 150 - storage busy')],
             t('proxmox_kvm', vmid=150, state='absent', force=True),
             [('POST', '/nodes/pve1/qemu/150/status/stop')],
             'deletion of VM 150 failed',
             lambda sim: sim.api('GET', '/nodes/pve1/qemu/150/status/current')['status'] == 'stopped',
             converge_in=2, refused=[('DELETE', '/nodes/pve1/qemu/150')]),
]


@pytest.mark.parametrize('row', ROWS, ids=[r.id for r in ROWS])
def test_an_accepted_write_is_reported_whatever_fails_after_it(ansible, sim, row):
    row.setup(sim)
    for spec in row.faults:
        sim.fault(**spec)
        COUNTS['faults injected'] += 1
    sim.clear_requests()
    result = last(run(ansible, row.task))
    assert result['status'] == 'failed', result
    res = result['result']
    assert res['changed'] is True, res
    head = ACCEPTED.match(res['msg'])
    assert head, res['msg']
    done, _, failed = res['msg'][head.end():].partition('. Then: ')
    assert row.failed_with in failed, res['msg']
    for (method, path), line in zip(row.accepted, res['accepted_writes']):
        assert line.startswith('%s %s' % (method, path)), (line, res['accepted_writes'])
        assert line in done
    assert len(res['accepted_writes']) == len(row.accepted), res['accepted_writes']
    assert len(res.get('refused_writes', [])) == len(row.refused), res
    for (method, path), line in zip(row.refused, res.get('refused_writes', [])):
        assert line.startswith('%s %s ' % (method, path)) and 'Proxmox VE refused %s' % line in res['msg'], res
    if row.id.startswith('kvm absent'):
        assert 'ended OK' in res['accepted_writes'][0] and 'storage busy' in res['refused_writes'][0], res
    # The request log: each accepted write sent once, and nothing else written.
    sent = [(m, p) for m, p, status in writes(sim) if 200 <= status < 300]
    assert sent == [(m, p.split(' (')[0]) for m, p in list(row.accepted) + list(row.refused)], sent
    wait_idle(sim)
    sim.clear_faults()
    assert row.holds(sim), 'the accepted change is not in the config'
    # The rerun converges: it succeeds, and (after the destroy that still had to happen) changes nothing.
    for n in range(row.converge_in):
        rerun = last(run(ansible, row.task))
        assert rerun['status'] == 'ok', rerun['result']
        assert rerun['result']['changed'] is (n < row.converge_in - 1), rerun['result']
    COUNTS['rows'] += 1


# Two playbooks on one VM at once --------------------------------------------------------------

ROUNDS = 10


def writer(vmids, disks, nics):
    """One play writing `disks` and `nics` to each VM of `vmids` in turn (task names carry the vmid)."""
    tasks = []
    for vmid in vmids:
        for disk, nic in zip(disks, nics):
            tasks.append(t('proxmox_disk', 'disk %d %s' % (vmid, disk), vmid=vmid, disk=disk, storage='local-lvm',
                           size='1'))
            tasks.append(t('proxmox_nic', 'nic %d %s' % (vmid, nic), vmid=vmid, interface=nic, bridge='vmbr1'))
    return play(*tasks)


def test_two_playbooks_on_one_vm_at_once_both_succeed_ten_times(ansible, sim):
    # Two playbooks at once, each writing three disks and three NICs to the same ten VMs in the same order: ten
    # rounds of two writers on one VM, in two playbook runs.
    sim.time_scale(0.05)
    vmids = [300 + n for n in range(ROUNDS)]
    for n, vmid in enumerate(vmids):
        create_vm(sim, vmid, 'busy-%d' % n, scsihw='virtio-scsi-single')
    plays = [writer(vmids, ['scsi1', 'scsi2', 'scsi3'], ['net1', 'net2', 'net3']),
             writer(vmids, ['scsi4', 'scsi5', 'scsi6'], ['net4', 'net5', 'net6'])]
    sim.clear_requests()
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda p: ansible.run_playbook(p), plays))
    COUNTS['playbook runs'] += 2
    for r in runs:
        assert r.rc == 0 and r.failed_tasks == [], r.stdout[-3000:]
        assert len(r.changed_tasks) == 6 * ROUNDS, r.changed_tasks
    log = writes(sim)
    # Every write carried a digest; the ones beyond the twelve a VM needs were refused for a conflict and redone.
    assert all(p.endswith('/config') for _, p, _ in log), log
    bodies = [r['body'] for r in sim.requests() if r['method'] in ('PUT', 'POST') and r['path'].endswith('/config')]
    assert all(b.get('digest') for b in bodies), bodies
    for vmid in vmids:
        config = cfg(sim, vmid)
        for i in range(1, 7):
            assert config['scsi%d' % i].endswith(',size=1G'), config
            assert 'bridge=vmbr1' in config['net%d' % i], config
        COUNTS['concurrent rounds'] += 1
    COUNTS['digest conflicts re-planned'] += len(log) - 12 * ROUNDS


# A NIC on a bridge the node lacks; a NIC left pending -------------------------------------------

def test_a_missing_bridge_is_refused_before_any_write_in_check_and_real_mode(ansible, sim):
    before = cfg(sim, 100)
    for task, option in ((t('proxmox_nic', vmid=100, interface='net1', bridge='vmbr7'), 'bridge'),
                         (t('proxmox_kvm', vmid=100, node='pve1', name='existing-web', update=True,
                            net={'net1': 'virtio,bridge=vmbr7'}), 'net.net1')):
        for check in (True, False):
            sim.clear_requests()
            result = last(run(ansible, task, check=check))
            assert result['status'] == 'failed' and result['result']['changed'] is False, result['result']
            assert result['result']['msg'].startswith(
                "%s: bridge 'vmbr7' does not exist on node pve1, or this user may not use it (SDN.Use); "
                "the node's bridges: vmbr0, vmbr1; nothing was changed" % option), result['result']['msg']
            assert writes(sim) == []
            assert any(r['path'].endswith('/nodes/pve1/network') and r['query'] == {'type': 'any_bridge'}
                       for r in sim.requests())
            COUNTS['rows'] += 1
    assert cfg(sim, 100) == before


def test_a_nic_left_pending_is_reported_as_pending_on_every_later_run(ansible, sim):
    # VM 100 runs without network hotplug: PVE keeps the new NIC in [PENDING] (QemuServer.pm
    # vmconfig_hotplug_pending).
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'hotplug': 'disk,usb'})
    task = t('proxmox_nic', vmid=100, interface='net1', bridge='vmbr1')
    first = last(run(ansible, task))['result']
    assert first['changed'] is True and first['pending'] == ['net1'], first
    for _ in range(2):
        sim.clear_requests()
        again = last(run(ansible, task))['result']
        assert again['changed'] is False and again['pending'] == ['net1'], again
        assert 'unchanged' not in again['msg'] and 'pending' in again['msg'], again['msg']
        assert writes(sim) == []
    pend = dict((i['key'], i) for i in sim.api('GET', '/nodes/pve1/qemu/100/pending'))
    assert 'bridge=vmbr1' in pend['net1']['pending'] and 'value' not in pend['net1']
    COUNTS['rows'] += 1


# +0 grows nothing ----------------------------------------------------------------------------

def test_resize_by_plus_zero_grows_nothing(ansible, sim):
    data_vm(sim)
    before = cfg(sim, 150)['scsi1']
    task = t('proxmox_disk', vmid=150, disk='scsi1', state='resized', size='+0G')
    for check in (True, False):
        sim.clear_requests()
        result = last(run(ansible, task, check=check))['result']
        assert result['changed'] is False, result
        assert result['msg'] == 'Disk scsi1 stays 10G size: size +0G grows nothing', result['msg']
        assert not any('+0' in w or '0T' in w for w in result.get('warnings', [])), result
        assert writes(sim) == []
    grown = last(run(ansible, t('proxmox_disk', vmid=150, disk='scsi1', state='resized', size='+1024M')))['result']
    assert grown['changed'] is True and cfg(sim, 150)['scsi1'].endswith('size=11G')
    assert any(w.startswith('size +1024M grows scsi1') for w in grown['warnings']), grown['warnings']
    assert before.endswith('size=10G')
    COUNTS['rows'] += 1


# How many `rows` each test outside the ROWS table adds when it passes.
ROWS_ADDED = {
    'test_a_missing_bridge_is_refused_before_any_write_in_check_and_real_mode': 4,
    'test_a_nic_left_pending_is_reported_as_pending_on_every_later_run': 1,
    'test_resize_by_plus_zero_grows_nothing': 1,
}


def test_zz_hostile_writes_counts(request, summary):
    """The counts agree with the tests of this file that ran in this session (this test runs last)."""
    ran = [item for item in request.session.items if item.module is request.module and item is not request.node]
    if not ran:
        pytest.skip('no other test of this file was selected')
    table = [item.callspec.params['row'] for item in ran
             if item.originalname == 'test_an_accepted_write_is_reported_whatever_fails_after_it']
    concurrent = any(item.originalname == 'test_two_playbooks_on_one_vm_at_once_both_succeed_ten_times'
                     for item in ran)
    summary('hostile writes: %d rows, %d concurrent rounds (%d digest conflicts re-planned), %d faults injected, '
            '%d playbook runs' % (COUNTS['rows'], COUNTS['concurrent rounds'], COUNTS['digest conflicts re-planned'],
                                  COUNTS['faults injected'], COUNTS['playbook runs']))
    assert COUNTS['rows'] == len(table) + sum(ROWS_ADDED.get(item.originalname, 0) for item in ran), COUNTS
    assert COUNTS['concurrent rounds'] == (ROUNDS if concurrent else 0), COUNTS
    assert COUNTS['faults injected'] >= sum(len(row.faults) for row in table), COUNTS
    # Each table row runs its task, then converges in `converge_in` reruns; the concurrent test runs two.
    assert COUNTS['playbook runs'] >= sum(1 + row.converge_in for row in table) + (2 if concurrent else 0), COUNTS
    if len(table) == len(ROWS):
        assert COUNTS['rows'] >= len(ROWS), COUNTS
