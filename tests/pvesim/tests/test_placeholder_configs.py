"""The placeholder config of a VM being created or cloned, and every reader agreeing on it (issue 26;
docs/pve-semantics.md §30).

Sources (qemu-server 9.2.6, pve-guest-common 6.0.2, pve-manager 9.2.11):
- Qemu.pm create_vm: `PVE::QemuConfig->create_and_lock_config($vmid, $force)` writes a config holding only
  `lock: create` before the qmcreate worker starts (AbstractConfig.pm create_and_lock_config); the worker
  writes the whole config, without the lock, at its end (`write_config($vmid, $conf)`).
- Qemu.pm clone_vm: `file_set_contents($conffile, "# qmclone temporary file\\nlock: clone\\n")`, then the
  drives are copied; the lock goes at the end (`delete $newconf->{lock}`). The worker's UPID id is the source.
- QemuServer.pm vmstatus: `$d->{name} = $conf->{name} || "VM $vmid"`, `$d->{lock} = $conf->{lock}`; pvestatd
  update_qemu_status broadcasts that name, and pve-manager API2/Cluster.pm resources takes `name` from it
  (API2Tools.pm extract_vm_stats) and `lock` from the config (get_guest_config_properties).
- pve-manager API2/Tasks.pm node_tasks: `source` archive|active|all, running tasks `status: RUNNING`.
"""

from conftest import Q, config, ok

PLACEHOLDER_NAME = 'VM {0}'


def resource(sim, vmid):
    return next(r for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r['vmid'] == vmid)


def readers_agree_on_placeholder(sim, vmid, lock):
    """What every reader shows of a VM whose create or clone is running."""
    cfg = sim.api('GET', '{0}/{1}/config'.format(Q, vmid))
    assert set(cfg) == {'lock', 'digest'} and cfg['lock'] == lock, cfg
    pending = sim.api('GET', '{0}/{1}/pending'.format(Q, vmid))
    assert {(p['key'], p.get('value')) for p in pending if p['key'] != 'digest'} == {('lock', lock)}, pending
    res = resource(sim, vmid)
    assert (res['name'], res['lock'], res['status']) == (PLACEHOLDER_NAME.format(vmid), lock, 'stopped'), res
    assert 'tags' not in res
    status = sim.api('GET', '{0}/{1}/status/current'.format(Q, vmid))
    assert (status['name'], status['lock'], status['status']) == (PLACEHOLDER_NAME.format(vmid), lock, 'stopped')


def active(sim, **filters):
    return sim.api('GET', '/nodes/pve1/tasks', dict(filters, source='active'))


def test_a_running_create_shows_only_its_lock_and_no_name_anywhere(sim):
    sim.fault(kind='task-slow', type='qmcreate', seconds=1.5)
    upid = sim.api('POST', Q, {'vmid': 200, 'name': 'db-01', 'cores': 4, 'tags': 'prod', 'scsi0': 'local-lvm:1'})
    readers_agree_on_placeholder(sim, 200, 'create')
    assert not [r for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r.get('name') == 'db-01']
    # the running task is listed as active, with PVE's RUNNING status, and not in the archive
    assert [(t['upid'], t['status']) for t in active(sim, vmid=200)] == [(upid, 'RUNNING')]
    assert not [t for t in sim.api('GET', '/nodes/pve1/tasks', {'vmid': 200}) if t['upid'] == upid]
    ok(sim.wait_task(upid))
    cfg = config(sim, 200)
    assert cfg['name'] == 'db-01' and cfg['cores'] == 4 and 'lock' not in cfg
    res = resource(sim, 200)
    assert res['name'] == 'db-01' and 'lock' not in res and res['tags'] == 'prod'
    assert not active(sim, vmid=200)
    assert [t['status'] for t in sim.api('GET', '/nodes/pve1/tasks', {'vmid': 200})] == ['OK']


def test_a_running_clone_shows_only_its_lock_and_its_task_is_listed_under_the_source(sim):
    sim.fault(kind='task-slow', type='qmclone', seconds=1.5)
    upid = sim.api('POST', Q + '/9000/clone', {'newid': 300, 'name': 'web-07', 'full': 1})
    readers_agree_on_placeholder(sim, 300, 'clone')
    # the worker's UPID id is the source vmid (fork_worker('qmclone', $vmid, ...))
    assert [t['upid'] for t in active(sim, typefilter='qmclone')] == [upid]
    assert [t['upid'] for t in active(sim, vmid=9000)] == [upid] and not active(sim, vmid=300)
    log = sim.api('GET', '/nodes/pve1/tasks/{0}/log'.format(upid))
    assert log[0]['t'] == 'creating a clone of VM 9000 with ID 300'
    ok(sim.wait_task(upid))
    assert config(sim, 300)['name'] == 'web-07' and resource(sim, 300)['name'] == 'web-07'


def test_a_failed_create_leaves_no_config_and_no_resource(sim):
    # Qemu.pm create_vm: on an error the worker unlinks the config file
    sim.fault(kind='task', type='qmcreate', exitstatus='unable to create VM 201 - storage full')
    upid = sim.api('POST', Q, {'vmid': 201, 'name': 'gone', 'scsi0': 'local-lvm:1'})
    assert sim.wait_task(upid)['exitstatus'].startswith('unable to create VM 201')
    assert not [r for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r['vmid'] == 201]


def test_the_task_list_shows_another_users_running_task_only_with_sys_audit(sim):
    # Tasks.pm node_tasks: a user sees its own tasks (and its tokens'), all of them with Sys.Audit on the node
    sim.add_user('ops@pve', password='pw', tokens={'ro': 'secret-ro'}, acl={'/': ['VM.Audit']})
    sim.fault(kind='task-slow', type='qmcreate', seconds=1.5)
    upid = sim.api('POST', Q, {'vmid': 202, 'name': 'x'})
    seen = sim.api('GET', '/nodes/pve1/tasks', {'source': 'active'}, token='ops@pve!ro=secret-ro')
    assert upid not in [t['upid'] for t in seen]
    assert upid in [t['upid'] for t in active(sim)]
    ok(sim.wait_task(upid))
