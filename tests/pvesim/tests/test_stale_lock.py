"""A stale `lock: create` / `lock: clone` (issue 28; docs/pve-semantics.md §38): what PVE leaves when the worker
of a create or clone dies before its end, made by the admin API's `POST /_sim/stale-lock` (stale_lock.py).

Sources: qemu-server Qemu.pm `create_vm` (the worker writes the config without the lock at its end), `clone_vm`
(`delete $newconf->{lock}` at the end; its first log line `creating a clone of VM <src> with ID <newid>`);
pve-common RESTEnvironment.pm `active_workers` (a task whose process is gone is archived with an end time and
UPID.pm `read_status`: `unexpected status` when the log has no TASK line); pve-manager Tasks.pm `node_tasks`
(`source=active` lists no archived task); pve-guest-common AbstractConfig.pm `check_lock` (`VM is locked (<lock>)`).
"""

import pytest

from conftest import Q
from pvesim.testing import PvesimError
from test_placeholder_configs import active, readers_agree_on_placeholder


def stale(sim, **spec):
    return sim.admin('POST', 'stale-lock', spec)['data']


def archived(sim, **filters):
    return [t for t in sim.api('GET', '/nodes/pve1/tasks', filters)]


def test_a_dead_create_leaves_its_lock_and_an_ended_task_but_no_running_one(sim):
    made = stale(sim, vmid=150, lock='create')
    readers_agree_on_placeholder(sim, 150, 'create')
    assert not active(sim, vmid=150) and not active(sim)
    [task] = archived(sim, vmid=150)
    assert (task['upid'], task['type'], task['status']) == (made['upid'], 'qmcreate', 'unexpected status')
    assert task['endtime'] >= task['starttime']
    status = sim.api('GET', '/nodes/pve1/tasks/{0}/status'.format(made['upid']))
    assert (status['status'], status['exitstatus']) == ('stopped', 'unexpected status')
    # nothing clears it: the lock refuses a config change (update_vm → check_lock) and a start (vm_start)
    with pytest.raises(PvesimError) as e:
        sim.api('PUT', Q + '/150/config', {'cores': 2})
    assert 'VM is locked (create)' in e.value.message, e.value.message
    try:
        started = sim.wait_task(sim.api('POST', Q + '/150/status/start'))['exitstatus']
    except PvesimError as refused:
        started = refused.message
    assert 'VM is locked (create)' in started, started
    readers_agree_on_placeholder(sim, 150, 'create')


def test_a_dead_clone_is_archived_under_its_source_with_its_log_naming_the_target(sim):
    made = stale(sim, vmid=310, lock='clone', source=9000)
    readers_agree_on_placeholder(sim, 310, 'clone')
    assert not active(sim, typefilter='qmclone')
    [task] = archived(sim, typefilter='qmclone')
    assert (task['upid'], task['id'], task['status']) == (made['upid'], '9000', 'unexpected status')
    log = sim.api('GET', '/nodes/pve1/tasks/{0}/log'.format(made['upid']))
    assert [line['t'] for line in log] == ['creating a clone of VM 9000 with ID 310']


@pytest.mark.parametrize('spec, field', [
    ({'vmid': 100, 'lock': 'create'}, 'vmid'),      # a vmid a guest has
    ({'vmid': 151, 'lock': 'backup'}, 'lock'),      # only a create's or a clone's lock is left this way
    ({'vmid': 151, 'lock': 'clone', 'source': 4242}, 'source'),
    ({'vmid': 151, 'lock': 'create', 'node': 'pve9'}, 'node'),
])
def test_a_stale_lock_needs_a_free_vmid_and_a_create_or_clone_lock(sim, spec, field):
    with pytest.raises(PvesimError) as e:
        stale(sim, **spec)
    assert e.value.status == 400 and field in (e.value.errors or {}), (e.value.status, e.value.errors)
    assert not [r for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r['vmid'] == 151]
