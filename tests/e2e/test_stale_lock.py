"""A stale `lock: create` / `lock: clone` (issue 28; docs/pve-semantics.md §38).

When the worker of a create or clone dies (killed, or its node rebooted), the new VM's config keeps
only its lock and no task holds it: PVE archives the task with `unexpected status` and never clears
the lock (pvesim's `POST /_sim/stale-lock` leaves exactly that). A user who sees every task of the
node (Sys.Audit on /nodes/<node>, Tasks.pm `node_tasks`) then knows no create or clone runs: every
module fails at once, check and real runs alike, naming the lock and `qm unlock`. Without that
privilege the task cannot tell the lock from another user's running create: it waits, within its
`timeout`, and the timeout's message names a stale lock as one cause.
"""

from harness import CANARY_PRIVILEGES

STALE_CREATE = (
    "VM 150 is locked (create) but no task holds the lock: no qmcreate, qmrestore or qmtunnel task making VM "
    "150 runs on node pve1 (looked twice, a second apart), and this user sees every task there (Sys.Audit on "
    "/nodes/pve1). The lock is stale: the task that took it ended without removing it (a killed worker or a "
    "node reboot leaves it, and PVE never clears it itself); once no create, clone, restore, incoming "
    "migration or 'qm importovf' of VM 150 runs (an import holds the lock without a task), 'qm unlock 150' on "
    "node pve1 removes it; nothing was changed")

# a user like the canary but without Sys.Audit: it sees only its own tasks
BLIND_USER, BLIND_TOKEN, BLIND_SECRET = 'blind@pve', 'ops', '6a0d5c2e-1f3b-4e7a-9c8d-2b4f6e8a0c1d'


def task(module, _task, **options):
    return {'name': _task, 'ferro.proxmox.' + module: options, 'delegate_to': 'localhost', 'ignore_errors': True}


def play(*tasks):
    return [{'name': 'e2e', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def writes(sim):
    return [(r['method'], r['path']) for r in sim.requests()
            if r['method'] != 'GET' and not r['path'].endswith('/access/ticket')]


def failure(run, name):
    result = run.task(name)
    assert result['status'] == 'failed', result
    return result['result']['msg']


def test_a_stale_create_lock_fails_every_module_at_once_for_a_user_who_sees_every_task(ansible, sim):
    sim.admin('POST', 'stale-lock', {'vmid': 150, 'lock': 'create'})
    kvm = task('proxmox_kvm', 'kvm', vmid=150, name='db-01', node='pve1', memory=1024, timeout=120)
    for mode in ('check', 'real'):
        sim.clear_requests()
        run = ansible.run_playbook(play(kvm), check=mode == 'check')
        assert failure(run, 'kvm') == STALE_CREATE, mode
        assert writes(sim) == [], mode
    # the other modules meet the same rule (their wait is the same one)
    sim.clear_requests()
    run = ansible.run_playbook(play(
        task('proxmox_disk', 'disk', vmid=150, disk='scsi1', storage='local-lvm', size=2, timeout=120),
        task('proxmox_nic', 'nic', vmid=150, interface='net0', bridge='vmbr0'),
        task('proxmox_vm_info', 'info', vmid=150),
    ))
    assert [failure(run, name) for name in ('disk', 'nic', 'info')] == [STALE_CREATE] * 3
    assert writes(sim) == []
    # nothing was touched: the VM still holds only its lock
    assert set(sim.api('GET', '/nodes/pve1/qemu/150/config')) == {'lock', 'digest'}


def test_a_stale_clone_lock_fails_at_once_naming_the_clone_task_it_looked_for(ansible, sim):
    sim.admin('POST', 'stale-lock', {'vmid': 310, 'lock': 'clone', 'source': 9000})
    kvm = task('proxmox_kvm', 'kvm', vmid=310, name='web-07', node='pve1', timeout=120)
    msgs = []
    for mode in ('check', 'real'):
        run = ansible.run_playbook(play(kvm), check=mode == 'check')
        msgs.append(failure(run, 'kvm'))
    assert msgs[0] == msgs[1]
    assert msgs[0].startswith(
        'VM 310 is locked (clone) but no task holds the lock: no qmclone task making VM 310 runs on node pve1'), msgs[0]
    assert "'qm unlock 310' on node pve1" in msgs[0]


def test_without_sys_audit_a_lock_is_waited_for_and_the_timeout_names_a_stale_lock_as_a_cause(ansible, sim):
    privileges = [p for p in CANARY_PRIVILEGES if p != 'Sys.Audit']
    sim.add_user(BLIND_USER, tokens={BLIND_TOKEN: BLIND_SECRET}, acl={'/': privileges})
    sim.admin('POST', 'stale-lock', {'vmid': 150, 'lock': 'create'})
    env = {'PROXMOX_USER': BLIND_USER, 'PROXMOX_TOKEN_ID': BLIND_TOKEN, 'PROXMOX_TOKEN_SECRET': BLIND_SECRET}
    kvm = task('proxmox_kvm', 'kvm', vmid=150, name='db-01', node='pve1', memory=1024, timeout=2)
    msgs = []
    for mode in ('check', 'real'):
        sim.clear_requests()
        run = ansible.run_playbook(play(kvm), check=mode == 'check', env=env)
        msgs.append(failure(run, 'kvm'))
        assert writes(sim) == [], mode
        # it waited: the VMs were read again while the lock stayed
        reads = [r for r in sim.requests() if r['path'].endswith('/cluster/resources')]
        assert len(reads) > 2, (mode, len(reads))
    assert msgs[0] == msgs[1]
    assert msgs[0] == (
        "VM 150 is locked (create) and no running task of it is visible to this user: either another user's "
        "create or clone of it runs (another user's tasks need Sys.Audit on /nodes/pve1 to be seen) or the lock "
        "is stale, left by a task that died (once no create, clone, restore, incoming migration or "
        "'qm importovf' of VM 150 runs (an import holds the lock without a task), 'qm unlock 150' on node "
        "pve1 removes it); it was still locked after 2s (timeout); nothing was changed")


def test_a_create_by_name_alone_beside_a_stale_lock_of_a_higher_vmid_succeeds_in_check_and_real_runs(ansible, sim):
    """The real run looks only at VMs of a lower vmid than the one it made (apply/names.rs); the
    check run does the same (lib.rs `settled_for_name`), so a stale lock on VM 150 does not make the
    check run fail where the real run succeeds (review of issue 28)."""
    sim.admin('POST', 'stale-lock', {'vmid': 150, 'lock': 'create'})
    kvm = dict(task('proxmox_kvm', 'kvm', name='fresh-by-name', node='pve1', memory=1024, timeout=120),
               ignore_errors=False)
    results = {}
    for mode in ('check', 'real'):
        run = ansible.run_playbook(play(kvm), check=mode == 'check')
        assert run.rc == 0, run.stdout[-2000:]
        results[mode] = run.task('kvm')['result']
    assert results['check']['changed'] is True and results['real']['changed'] is True
    assert results['check']['vmid'] == results['real']['vmid'] < 150, (results['check']['vmid'], results['real']['vmid'])
    assert set(sim.api('GET', '/nodes/pve1/qemu/150/config')) == {'lock', 'digest'}
