"""Privileges read once per module run (issue 36, docs/pve-semantics.md §52): every privilege question of a task is
answered from one `GET /access/permissions` without `path` (pve-access-control API2/AccessControl.pm `permissions`,
RPCEnvironment.pm `get_effective_permissions`), counted on pvesim's request log for a create, a clone, a config
change and a no-op, and the outcome is the one the per-path reads gave: a token without a privilege is still refused
with PVE's words."""

from test_kvm import kvm, play

# The tasks measured, one after the other on the default state (VM 100, template 9000 on pve1).
TASKS = [
    ('create', kvm(node='pve1', vmid=150, name='measured', cores=2, memory=1024,
                   scsi={'scsi0': 'local-lvm:4'}, net={'net0': 'virtio,bridge=vmbr0'})),
    ('clone', kvm(node='pve1', clone='debian-13-template', name='cloned', newid=151, cores=2)),
    ('config change', kvm(node='pve1', vmid=100, update=True, cores=3)),
]


def requests_of(sim):
    return [(r['method'], r['path'].replace('/api2/json', '').split('/tasks/')[0]) for r in sim.requests()
            if not r['path'].endswith('/access/ticket')]


def test_each_task_reads_the_privileges_once(ansible, sim, summary):
    counts = {}
    for name, task in TASKS:
        sim.clear_requests()
        run = ansible.run_playbook(play(task))
        result = run.task('kvm')['result']
        assert result['changed'] and not result.get('failed'), (name, result)
        calls = requests_of(sim)
        counts[name] = (len(calls), calls.count(('GET', '/access/permissions')))
    # a no-op: the config change again, which finds nothing to do and asks nothing about privileges
    ansible.run_playbook(play(TASKS[2][1]))
    sim.clear_requests()
    run = ansible.run_playbook(play(TASKS[2][1]))
    result = run.task('kvm')['result']
    assert not result['changed'] and not result.get('failed'), result
    calls = requests_of(sim)
    counts['no-op'] = (len(calls), calls.count(('GET', '/access/permissions')))
    summary('requests per task (privilege reads): ' + ', '.join(
        '%s %d (%d)' % (name, total, privs) for name, (total, privs) in counts.items()))
    assert {name: privs for name, (_, privs) in counts.items()} == {
        'create': 1, 'clone': 1, 'config change': 1, 'no-op': 0}, counts


def test_one_read_still_refuses_what_the_token_lacks(ansible, sim, tmp_path):
    """A token with VM.Config.CPU on /vms (propagating) and only Datastore.Audit on /storage: a core count is
    allowed on VM 270, which no ACL names (what /vms passes down), a new disk is refused on its storage, in check
    and real runs."""
    from test_check_vs_real import write_seed, _vm
    users = {'cpu@pve': {'tokens': {'tk': '5a7c9e1b-cpu-only'},
                         'acl': {'/vms': ['VM.Audit', 'VM.Config.CPU', 'VM.Config.Disk'], '/storage': ['Datastore.Audit'], '/': ['Sys.Audit']}}}
    seed = write_seed(tmp_path, 'privileges-once', [_vm(270, 'row-270')], users=users)
    env = {'PROXMOX_USER': 'cpu@pve', 'PROXMOX_TOKEN_ID': 'tk', 'PROXMOX_TOKEN_SECRET': '5a7c9e1b-cpu-only'}
    cores = kvm(node='pve1', vmid=270, update=True, cores=3)
    disk = dict(kvm(node='pve1', vmid=270, update=True, scsi={'scsi1': 'local-lvm:2'}), ignore_errors=True)
    for check in (True, False):
        sim.reset(seed)
        run = ansible.run_playbook(play(cores), check=check, env=env)
        result = run.task('kvm')['result']
        assert result['changed'] and not result.get('failed'), (check, result)
        run = ansible.run_playbook(play(disk), check=check, env=env)
        result = run.task('kvm')['result']
        assert run.task('kvm')['status'] == 'failed' and \
            'Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)' in result['msg'], (check, result)
