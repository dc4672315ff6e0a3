"""The requests of a create (issue 36, docs/pve-semantics.md §66): a token that sees every guest creates without
`/cluster/nextid?vmid=` or `GET /nodes`, the task's status is not polled at once, and the footprint reads no
config of its own, nor does a clone's of its new vmid (§66.6); a user who cannot see every guest still asks `/cluster/nextid` and is refused a vmid a
hidden guest holds (§47.2), in check and real runs."""

from test_check_vs_real import _vm, write_seed
from test_kvm import kvm, play

CREATE = kvm(node='pve1', vmid=150, name='measured', cores=2, memory=1024,
             scsi={'scsi0': 'local-lvm:4'}, net={'net0': 'virtio,bridge=vmbr0'})


def requests_of(sim):
    return [(r['method'], r['path'].replace('/api2/json', '').split('/tasks/')[0]) for r in sim.requests()
            if not r['path'].endswith('/access/ticket')]


def test_a_create_by_a_token_that_sees_every_guest(ansible, sim):
    sim.clear_requests()
    run = ansible.run_playbook(play(CREATE))
    result = run.task('kvm')['result']
    assert result['changed'] and not result.get('failed'), result
    calls = requests_of(sim)
    assert ('GET', '/cluster/nextid') not in calls, calls
    assert ('GET', '/nodes') not in calls, calls
    # the one read of §60 (found absent, then the footprint's), and the read-back: no third
    assert calls.count(('GET', '/nodes/pve1/qemu/150/pending')) == 2, calls
    # the VM is there, as the task asked
    config = sim.api('GET', '/nodes/pve1/qemu/150/config')
    assert config['name'] == 'measured' and int(config['cores']) == 2, config


def test_a_vmid_a_hidden_guest_holds_is_still_refused(ansible, sim, tmp_path):
    """VM 271 exists; the user holds VM.Audit on VM 270 alone, so /cluster/resources does not list 271."""
    users = {'one@pve': {'tokens': {'tk': '5a7c9e1b-one-vm'},
                         'acl': {'/vms/270': ['VM.Audit', 'VM.Allocate'], '/storage': ['Datastore.Audit'],
                                 '/': ['Sys.Audit']}}}
    seed = write_seed(tmp_path, 'hidden-guest', [_vm(270, 'row-270'), _vm(271, 'row-271')], users=users)
    env = {'PROXMOX_USER': 'one@pve', 'PROXMOX_TOKEN_ID': 'tk', 'PROXMOX_TOKEN_SECRET': '5a7c9e1b-one-vm'}
    task = dict(kvm(node='pve1', vmid=271, name='taken', cores=1), ignore_errors=True)
    for check in (True, False):
        sim.reset(seed)
        sim.clear_requests()
        run = ansible.run_playbook(play(task), check=check, env=env)
        result = run.task('kvm')['result']
        assert run.task('kvm')['status'] == 'failed' and \
            'held by a guest this user cannot see' in result['msg'], (check, result)
        assert ('GET', '/cluster/nextid') in requests_of(sim), requests_of(sim)
        assert not any(m != 'GET' for m, _ in requests_of(sim)), requests_of(sim)


def test_a_clone_by_a_token_that_sees_every_guest_reads_no_config_of_its_new_vmid(ansible, sim):
    sim.clear_requests()
    task = kvm(node='pve1', clone='debian-13-template', name='measured-clone', newid=151, full=True)
    result = ansible.run_playbook(play(task)).task('kvm')['result']
    assert result['changed'] and not result.get('failed'), result
    calls = requests_of(sim)
    posted = calls.index(('POST', '/nodes/pve1/qemu/9000/clone'))
    # /cluster/resources, read before, lists every guest to this token: 151 is in no node's config (§66.6)
    assert ('GET', '/nodes/pve1/qemu/151/pending') not in calls[:posted], calls
    assert ('GET', '/cluster/resources') in calls[:posted], calls
    assert sim.api('GET', '/nodes/pve1/qemu/151/config')['name'] == 'measured-clone'
