"""The refusals issue 32's check-versus-real cases show in the real run (tests/e2e/test_check_refusals_cases.py),
as pvesim gives them from PVE's source: a pause and a hibernation under a lock, a resume under a lock, and the
state volume of a hibernation removed from a protected VM.

Sources: qemu-server 9.2.6 src/PVE/QemuServer/RunState.pm `vm_suspend` (the lock checked unless a backup holds it,
"cannot suspend to disk during backup") and `vm_resume` (a template refused, the lock checked unless a backup or
a hibernation holds it); src/PVE/API2/Qemu.pm `vm_suspend`, `vm_resume` ("VM <vmid> not running" before the
fork) and `update_vm_api` (`check_protection($conf, "can't remove vmstate '$val'")` on a `delete` of `vmstate`).
"""

import copy
import json
import os

from conftest import Q, config, error_of, ok, run

SEEDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'seeds')
STATE = 'local-lvm:vm-100-state-suspend-2026-12-01'


def _status(sim):
    return sim.api('GET', Q + '/100/status/current')


def test_a_pause_under_a_lock_fails_in_its_task_but_a_backups_lock_lets_it_through(sim):
    sim.fault(kind='lock', vmid=100, lock='migrate', seconds=30)
    assert run(sim, 'POST', Q + '/100/status/suspend')['exitstatus'] == 'VM is locked (migrate)'
    assert _status(sim)['qmpstatus'] == 'running'
    sim.reset()
    sim.fault(kind='lock', vmid=100, lock='backup', seconds=30)
    ok(run(sim, 'POST', Q + '/100/status/suspend'))
    assert _status(sim)['qmpstatus'] == 'paused'


def test_a_hibernation_during_a_backup_is_refused_and_the_vm_keeps_running(sim):
    sim.fault(kind='lock', vmid=100, lock='backup', seconds=30)
    status = run(sim, 'POST', Q + '/100/status/suspend', {'todisk': 1})
    assert status['exitstatus'] == 'cannot suspend to disk during backup'
    assert _status(sim)['status'] == 'running'


def test_a_resume_under_a_lock_fails_in_its_task_and_the_vm_stays_paused(sim):
    ok(run(sim, 'POST', Q + '/100/status/suspend'))
    sim.fault(kind='lock', vmid=100, lock='migrate', seconds=30)
    assert run(sim, 'POST', Q + '/100/status/resume')['exitstatus'] == 'VM is locked (migrate)'
    assert _status(sim)['qmpstatus'] == 'paused'


def test_a_resume_during_a_backup_runs_the_vm_again(sim):
    ok(run(sim, 'POST', Q + '/100/status/suspend'))
    sim.fault(kind='lock', vmid=100, lock='backup', seconds=30)
    ok(run(sim, 'POST', Q + '/100/status/resume'))
    assert _status(sim)['qmpstatus'] == 'running'


def test_a_resume_of_a_vm_that_does_not_run_is_refused_before_its_task(sim):
    err = error_of(sim.api, 'POST', Q + '/9000/status/resume')
    assert (err.status, err.message) == (500, 'VM 9000 not running')


def _protected_with_state(tmp_path):
    with open(os.path.join(SEEDS, 'default.json'), encoding='utf-8') as f:
        seed = json.load(f)
    vm = [v for v in seed['vms'] if v['vmid'] == 100][0]
    vm['config'] = dict(copy.deepcopy(vm['config']), protection=1, vmstate=STATE)
    path = tmp_path / 'vmstate.json'
    path.write_text(json.dumps(seed))
    return str(path)


def test_the_state_volume_of_a_protected_vm_is_not_removed(sim, tmp_path):
    sim.reset(_protected_with_state(tmp_path))
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'delete': 'vmstate'})
    assert err.message == "can't remove vmstate '%s' - protection mode enabled" % STATE, err.errors
    assert config(sim, 100)['vmstate'] == STATE
