"""`changed` means the VM changed (issue 23): a PVE task that failed before its effect is no change.

Each row makes a task fail inside PVE the way it does there: another client acts just as the module's
write arrives, after every read the module made (pvesim's `race` fault), so the call answers a UPID and
the task then fails with PVE's words. The module must fail with `changed: false`, list the write in
`refused_writes` with "Proxmox VE refused ...; nothing was changed", and pvesim must show that nothing was
applied: the config (but the other client's lock), the power state and every volume with its size as
before. Once the other client is gone, the same task makes the change it could not make (so it had not
happened). A partly applied run (a config write applied, then the start refused) stays `changed: true`
and lists the applied write in `accepted_writes`.

docs/pve-semantics.md §31 has where each of these refusals happens in qemu-server.
"""

from dataclasses import dataclass
from typing import Callable

import pytest

REFUSED = 'Proxmox VE refused '
LOCK_TIMEOUT = "can't lock file '/var/lock/qemu-server/lock-%d.conf' - got timeout"


def t(module, **options):
    return {'name': 'task', 'ferro.proxmox.' + module: options, 'delegate_to': 'localhost', 'register': 'out'}


def play(*tasks):
    return [{'name': 'changed after failure', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def run(ansible, task):
    results = [r for r in ansible.run_playbook(play(task)).results if r['status'] in ('ok', 'failed')]
    assert results, 'the task did not run'
    return results[-1]


def where(sim, vmid):
    found = [r for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r['vmid'] == vmid]
    return found[0]['node'] if found else None


def state(sim, vmid):
    """What a task could have changed of a VM: its node, config (the lock and digest aside: another
    client's), power state, and every volume of its own on every storage, with its size."""
    node = where(sim, vmid)
    config = sim.api('GET', '/nodes/%s/qemu/%d/config' % (node, vmid))
    config.pop('digest')
    config.pop('lock', None)
    power = sim.api('GET', '/nodes/%s/qemu/%d/status/current' % (node, vmid))['status']
    volumes = set()
    for storage in ('local-lvm', 'vmdata', 'nvme-pool'):
        for item in sim.api('GET', '/nodes/%s/storage/%s/content' % (node, storage), {'vmid': vmid}) or []:
            volumes.add((item['volid'], item['size']))
    return {'node': node, 'config': config, 'power': power, 'volumes': volumes}


def stopped_vm(sim):
    upid = sim.api('POST', '/nodes/pve1/qemu', {'vmid': 150, 'name': 'data-vm', 'scsi0': 'local-lvm:4',
                                                'scsi1': 'local-lvm:10', 'cores': 2})
    assert sim.wait_task(upid)['exitstatus'] == 'OK'


def race(act, method, path, **spec):
    return dict(kind='race', act=act, method=method, path=path, **spec)


LINKED_CLONE = {'vmid': 141, 'name': 'linked-141',
                'config': {'scsi0': 'vmdata:9000/base-9000-disk-0.qcow2/141/vm-141-disk-0.qcow2,size=8G'}}
RESIZE = dict(vmid=150, disk='scsi1', state='resized', size='12G')


@dataclass
class Refused:
    id: str
    setup: Callable
    fault: dict          # the other client's act, as the write arrives
    task: dict
    write: str           # the refused write: "METHOD path"
    exitstatus: str      # PVE's words for the task's failure
    vmid: int = 150
    rerun_changes: bool = True   # once the other client is gone, the task makes its change


ROWS = [
    Refused('start refused by a lock (kvm)', stopped_vm,
            race('lock', 'POST', r'/qemu/150/status/start$', vmid=150, lock='backup', seconds=120),
            t('proxmox_kvm', vmid=150, node='pve1', state='started'),
            'POST /nodes/pve1/qemu/150/status/start', 'VM is locked (backup)'),
    Refused('resize refused by a lock (disk)', stopped_vm,
            race('lock', 'PUT', r'/qemu/150/resize$', vmid=150, lock='backup', seconds=120),
            t('proxmox_disk', **RESIZE), 'PUT /nodes/pve1/qemu/150/resize', 'VM is locked (backup)'),
    Refused('resize timing out on the config lock (disk)', stopped_vm,
            race('flock', 'PUT', r'/qemu/150/resize$', vmid=150, seconds=5),
            # a `timeout` shorter than the lock is held: the lock timeout is sent again until then (§55), then fails
            t('proxmox_disk', **dict(RESIZE, timeout=1)), 'PUT /nodes/pve1/qemu/150/resize', LOCK_TIMEOUT % 150),
    Refused('move timing out on the config lock (disk)', stopped_vm,
            race('flock', 'POST', r'/qemu/150/move_disk$', vmid=150, seconds=5),
            t('proxmox_disk', vmid=150, disk='scsi1', state='moved', target_storage='vmdata', timeout=1),
            'POST /nodes/pve1/qemu/150/move_disk', LOCK_TIMEOUT % 150),
    Refused('resize after the VM migrated away (disk)', stopped_vm,
            race('migrate', 'PUT', r'/qemu/150/resize$', vmid=150, target='pve2'),
            t('proxmox_disk', **RESIZE), 'PUT /nodes/pve1/qemu/150/resize',
            "Configuration file 'nodes/pve1/qemu-server/150.conf' does not exist"),
    Refused('template destroy refused for a linked clone (kvm)', lambda sim: None,
            race('vm', 'DELETE', r'/qemu/9000$', vm=LINKED_CLONE),
            t('proxmox_kvm', vmid=9000, state='absent'), 'DELETE /nodes/pve1/qemu/9000',
            "base volume 'vmdata:9000/base-9000-disk-0.qcow2' is still in use by linked cloned",
            vmid=9000, rerun_changes=False),
]


@pytest.mark.parametrize('row', ROWS, ids=[r.id for r in ROWS])
def test_a_task_refused_before_its_effect_is_no_change(ansible, sim, row):
    row.setup(sim)
    before = state(sim, row.vmid)
    sim.fault(**row.fault)
    result = run(ansible, row.task)
    res = result['result']
    assert result['status'] == 'failed', res
    assert res['changed'] is False, res
    assert 'accepted_writes' not in res, res
    # The refused write, after any try a digest conflict refused first (the other client's lock changes
    # the config's digest: resize_vm checks the digest before the lock, and the module plans again).
    refused = res['refused_writes']
    assert all(r.startswith(row.write + ' ') for r in refused), refused
    assert res['msg'].startswith(REFUSED + '; '.join(refused) + '; nothing was changed. '), res['msg']
    if refused[-1].endswith('ended: %s)' % row.exitstatus):
        # PVE's task refused it; a try before it met a digest conflict, or the same lock timeout in a task
        # that ended while the task's `timeout` still left time to send it again (§55: how many fit
        # depends on the machine's speed, so any number may)
        ended = 'ended: %s)' % row.exitstatus
        assert all('checksum mismatch' in r or r.endswith(ended) for r in refused[:-1]), refused
        assert res['exitstatus'] == row.exitstatus, res
    else:
        # every try met a digest conflict, and the module's plan from the read after it met PVE's
        # own refusal first (pve::state: the lock, docs/pve-semantics.md §33): no further write
        assert all('checksum mismatch' in r for r in refused), refused
        assert row.exitstatus in res['msg'], res['msg']
    # Nothing applied: PVE's own view of the VM is as it was.
    after = state(sim, row.vmid)
    if row.fault['act'] == 'migrate':
        assert after.pop('node') == 'pve2' and before.pop('node') == 'pve1'
    assert after == before
    sim.clear_faults()
    if row.rerun_changes:
        rerun = run(ansible, row.task)
        assert rerun['status'] == 'ok' and rerun['result']['changed'] is True, rerun['result']


def test_a_stop_applied_before_a_refused_destroy_is_a_change(ansible, sim):
    """Partly applied: the stop ended OK, then the destroy's task met a lock (QemuServer.pm destroy_vm
    checks it in the worker; Qemu.pm destroy_vm's early checks do not)."""
    stopped_vm(sim)
    assert sim.wait_task(sim.api('POST', '/nodes/pve1/qemu/150/status/start'))['exitstatus'] == 'OK'
    before = state(sim, 150)
    sim.fault(**race('lock', 'DELETE', r'/qemu/150$', vmid=150, lock='backup', seconds=120))
    result = run(ansible, t('proxmox_kvm', vmid=150, state='absent', force=True))
    res = result['result']
    assert result['status'] == 'failed', res
    assert res['changed'] is True, res
    [applied] = res['accepted_writes']
    assert applied.startswith('POST /nodes/pve1/qemu/150/status/stop ') and applied.endswith('ended OK)'), applied
    [refused] = res['refused_writes']
    assert refused.startswith('DELETE /nodes/pve1/qemu/150 ') and refused.endswith('ended: VM is locked (backup))')
    assert res['msg'].startswith('Proxmox VE applied these changes before the run failed: %s. Proxmox VE refused '
                                 '%s, which changed nothing. Then: ' % (applied, refused)), res['msg']
    after = state(sim, 150)
    assert (before.pop('power'), after.pop('power')) == ('running', 'stopped')
    assert after == before, 'only the stop was applied: the VM, its config and its volumes are all there'
