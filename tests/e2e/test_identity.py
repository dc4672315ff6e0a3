"""Which VM a task acts on (issue 23, docs/pve-semantics.md §29), end to end on pvesim.

A task that gives both `vmid` and `name` names one VM or is refused before any write, in check
and real runs alike, in every state of proxmox_kvm and in proxmox_disk / proxmox_nic; a vmid
outside PVE's range (`pve-vmid`, 100 to 999999999; pve-common JSONSchema.pm `pve_verify_vmid`)
is refused, never read as unset. A clone made by an earlier run is an existing VM: `update:
false` writes nothing to it and reports its drift. A rotated `cipassword` is compared with the
crypt hash PVE stores (qemu-server API2/Qemu.pm `update_vm_api` hashes it with pve-common
Tools.pm `encrypt_pw`).
"""

import pytest

REFUSED = '; refusing to act on another VM'
MAC_RE = r'[0-9A-F]{2}(?::[0-9A-F]{2}){5}'
UUID_RE = r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'


def kvm(_task, **options):
    return {'name': _task, 'ferro.proxmox.proxmox_kvm': options, 'delegate_to': 'localhost',
            'ignore_errors': True}


def disk(_task, **options):
    return {'name': _task, 'ferro.proxmox.proxmox_disk': options, 'delegate_to': 'localhost',
            'ignore_errors': True}


def nic(_task, **options):
    return {'name': _task, 'ferro.proxmox.proxmox_nic': options, 'delegate_to': 'localhost',
            'ignore_errors': True}


def play(*tasks):
    return [{'name': 'e2e', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def create_vm(sim, vmid, name, **config):
    upid = sim.api('POST', '/nodes/pve1/qemu', dict({'vmid': vmid, 'name': name}, **config))
    assert sim.wait_task(upid)['exitstatus'] == 'OK'


def state_of(sim, vmid):
    """What a user would check: the VM's config (pending included), its status and its volumes."""
    config = sim.api('GET', '/nodes/pve1/qemu/%d/pending' % vmid)
    status = sim.api('GET', '/nodes/pve1/qemu/%d/status/current' % vmid)['status']
    volumes = sorted(v['volid'] for v in sim.api('GET', '/nodes/pve1/storage/local-lvm/content', {'vmid': vmid}))
    return config, status, volumes


def writes(sim):
    return [(r['method'], r['path']) for r in sim.requests()
            if r['method'] != 'GET' and not r['path'].endswith('/access/ticket')]


@pytest.fixture
def data_vm(sim):
    """VM 150 'data-vm' (stopped, one disk) beside the seed's VM 100 'existing-web' (running)."""
    create_vm(sim, 150, 'data-vm', cores=1, memory=512, scsi0='local-lvm:1', net0='virtio,bridge=vmbr0')
    return sim


# Every state of proxmox_kvm, and the actions that run before the state (delete, revert, migrate,
# clone), each given a vmid and a name that name different VMs: VM 150 is 'data-vm', not
# 'existing-web'; vmid 1500 does not exist, but 'data-vm' is VM 150.
MISMATCH = "vmid 150 is VM 'data-vm', not 'existing-web' (name)" + REFUSED
ABSENT_ID = "vmid 1500 does not exist, but 'data-vm' (name) is vmid 150" + REFUSED
KVM_ROWS = [
    ({'state': 'present', 'node': 'pve1', 'cores': 4}, MISMATCH),
    ({'state': 'present', 'node': 'pve1', 'cores': 4, 'update': True}, MISMATCH),
    ({'state': 'started'}, MISMATCH),
    ({'state': 'stopped'}, MISMATCH),
    ({'state': 'restarted'}, MISMATCH),
    ({'state': 'absent'}, MISMATCH),
    ({'state': 'current'}, MISMATCH),
    ({'state': 'template'}, MISMATCH),
    ({'state': 'paused'}, MISMATCH),
    ({'state': 'hibernated'}, MISMATCH),
    ({'delete': 'cores', 'node': 'pve1'}, MISMATCH),
    ({'revert': 'cores', 'node': 'pve1'}, MISMATCH),
    ({'migrate': True, 'node': 'pve2'}, MISMATCH),
]


def test_kvm_refuses_a_vmid_and_a_name_of_different_vms_in_every_state(ansible, data_vm):
    sim = data_vm
    before = state_of(sim, 150), state_of(sim, 100)
    tasks = [kvm('kvm %d' % i, vmid=150, name='existing-web', **opts) for i, (opts, _) in enumerate(KVM_ROWS)]
    # The vmid does not exist but the name is another VM's: present would create, absent would
    # report "already absent", the others would fail "does not exist"; all are refused alike.
    absent_id = [
        ({'state': 'present', 'node': 'pve1'}, ABSENT_ID),
        ({'state': 'absent'}, ABSENT_ID),
        ({'state': 'started'}, ABSENT_ID),
    ]
    tasks += [kvm('kvm absent id %d' % i, vmid=1500, name='data-vm', **opts) for i, (opts, _) in enumerate(absent_id)]
    check, real, again = ansible.converge(play(*tasks))
    rows = [('kvm %d' % i, msg) for i, (_, msg) in enumerate(KVM_ROWS)]
    rows += [('kvm absent id %d' % i, msg) for i, (_, msg) in enumerate(absent_id)]
    for run in (check, real, again):
        for task, msg in rows:
            result = run.task(task)
            assert result['status'] == 'failed' and result['changed'] is False, (task, result)
            assert result['result']['msg'] == msg, (task, result['result']['msg'])
    assert (state_of(sim, 150), state_of(sim, 100)) == before
    assert [v for v in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if v['vmid'] == 1500] == []


def test_clone_source_and_target_must_agree(ansible, data_vm):
    sim = data_vm
    before = state_of(sim, 150), state_of(sim, 100)
    tasks = [
        # `clone` names a VM that is not the vmid's: the source is ambiguous.
        kvm('source', vmid=9000, clone='data-vm', name='c1', newid=121, node='pve1'),
        # newid is VM 150, which is not named like the clone: the clone task would converge it.
        kvm('target', clone='debian-13-template', newid=150, name='c2', node='pve1', update=True, cores=4),
        # newid is free, but the name is VM 100's.
        kvm('target name', clone='debian-13-template', newid=122, name='existing-web', node='pve1'),
    ]
    check, real, _ = ansible.converge(play(*tasks))
    want = {
        'source': "vmid 9000 is VM 'debian-13-template', not 'data-vm' (clone)" + REFUSED,
        'target': "newid 150 is VM 'data-vm', not 'c2' (name)" + REFUSED,
        'target name': "newid 122 does not exist, but 'existing-web' (name) is vmid 100" + REFUSED,
    }
    for run in (check, real):
        for task, msg in want.items():
            assert run.task(task)['status'] == 'failed' and run.task(task)['result']['msg'] == msg
    assert (state_of(sim, 150), state_of(sim, 100)) == before
    vmids = sorted(v['vmid'] for v in sim.api('GET', '/cluster/resources', {'type': 'vm'}))
    assert vmids == [100, 150, 9000]


def test_disk_and_nic_refuse_a_vmid_and_a_name_of_different_vms(ansible, data_vm):
    sim = data_vm
    before = state_of(sim, 150), state_of(sim, 100)
    who = {'vmid': 150, 'name': 'existing-web'}
    tasks = [
        disk('disk present', disk='scsi1', storage='local-lvm', size='1G', **who),
        disk('disk resized', disk='scsi0', size='+1G', state='resized', **who),
        disk('disk moved', disk='scsi0', target_storage='vmdata', state='moved', **who),
        disk('disk detached', disk='scsi0', state='detached', **who),
        disk('disk absent', disk='scsi0', state='absent', **who),
        nic('nic present', interface='net1', bridge='vmbr0', **who),
        nic('nic absent', interface='net0', state='absent', **who),
        disk('disk absent id', disk='scsi0', state='absent', vmid=1500, name='data-vm'),
        nic('nic absent id', interface='net0', state='absent', vmid=1500, name='data-vm'),
    ]
    check, real, _ = ansible.converge(play(*tasks))
    for run in (check, real):
        for task in [t['name'] for t in tasks]:
            result = run.task(task)
            msg = ABSENT_ID if task.endswith(' id') else MISMATCH
            assert result['status'] == 'failed' and result['result']['msg'] == msg, (task, result)
    assert (state_of(sim, 150), state_of(sim, 100)) == before


def test_a_vmid_outside_pves_range_is_refused_never_unset(ansible, sim):
    create_vm(sim, 1500, 'other-vm')
    before = state_of(sim, 1500), state_of(sim, 100)
    tasks = [
        # The case: with vmid 0 read as unset, 'other-vm' was removed by its name.
        kvm('vmid 0', name='other-vm', vmid=0, state='absent'),
        kvm('vmid 99', name='other-vm', vmid=99, state='stopped'),
        kvm('newid 0', clone='debian-13-template', newid=0, name='other-vm', node='pve1'),
        kvm('newid huge', clone='debian-13-template', newid=1000000000, name='c9', node='pve1'),
        disk('disk vmid 0', name='other-vm', vmid=0, disk='scsi1', state='absent'),
        nic('nic vmid 0', name='other-vm', vmid=0, interface='net0', state='absent'),
    ]
    check, real, _ = ansible.converge(play(*tasks))
    want = {
        'vmid 0': 'vmid must be between 100 and 999999999, got 0',
        'vmid 99': 'vmid must be between 100 and 999999999, got 99',
        'newid 0': 'newid must be between 100 and 999999999, got 0',
        'newid huge': 'newid must be between 100 and 999999999, got 1000000000',
        'disk vmid 0': 'vmid must be between 100 and 999999999, got 0',
        'nic vmid 0': 'vmid must be between 100 and 999999999, got 0',
    }
    for run in (check, real):
        for task, msg in want.items():
            assert run.task(task)['status'] == 'failed' and run.task(task)['result']['msg'] == msg
    assert (state_of(sim, 1500), state_of(sim, 100)) == before


def clone_task(_task='clone', **extra):
    return {'name': _task, 'ferro.proxmox.proxmox_kvm': dict(
        clone='debian-13-template', newid=120, name='clone-01', node='pve1', cores=2, **extra),
        'delegate_to': 'localhost'}


def test_a_clone_rerun_reports_drift_and_changes_only_with_update(ansible, sim):
    ansible.converge(play(clone_task()), unpredictable=[MAC_RE, UUID_RE])
    # An operator gives the clone 8 cores by hand.
    sim.api('PUT', '/nodes/pve1/qemu/120/config', {'cores': 8})
    before = state_of(sim, 120)
    # check, real, again: no write in any (converge clears the request log first), drift in each
    runs = ansible.converge(play(clone_task()))
    assert writes(sim) == []
    assert [r.task('clone')['result']['drift'] for r in runs] == [{'cores': {'before': '8', 'after': '2'}}] * 3
    result = runs[1].task('clone')['result']
    assert result['changed'] is False and result['vmid'] == 120
    assert result['msg'] == ('VM clone-01 with vmid 120 already exists and differs from the task in cores '
                             '(not changed: update is false)')
    assert result['drift'] == {'cores': {'before': '8', 'after': '2'}}
    assert writes(sim) == []
    assert state_of(sim, 120) == before
    # update: true writes the difference; a second run changes nothing.
    check, real, again = ansible.converge(play(clone_task(update=True)))
    assert check.task('clone')['changed'] is True and real.task('clone')['changed'] is True
    assert real.task('clone')['result']['msg'] == 'VM clone-01 with vmid 120 updated'
    assert sim.api('GET', '/nodes/pve1/qemu/120/config')['cores'] == 2
    assert again.task('clone')['result']['drift'] == {}


def stored_password(sim, vmid):
    """The password PVE stores (its crypt hash after an update), from the generated user data."""
    text = sim.api('GET', '/nodes/pve1/qemu/%d/cloudinit/dump' % vmid, {'type': 'user'})
    return [line[len('password: '):] for line in text.splitlines() if line.startswith('password: ')][0]


def password_task(password, **extra):
    return {'name': 'pw', 'ferro.proxmox.proxmox_kvm': dict(
        vmid=100, name='existing-web', node='pve1', ciuser='ops', cipassword=password, **extra),
        'delegate_to': 'localhost'}


def test_a_rotated_cipassword_is_drift_then_changed_then_unchanged(ansible, sim):
    from pvesim.options import sha256_crypt

    def verifies(password):
        stored = stored_password(sim, 100)
        return stored.startswith('$5$') and sha256_crypt(password, stored.split('$')[2]) == stored

    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'ciuser': 'ops', 'cipassword': 'old-secret-1'})
    assert verifies('old-secret-1')
    # the same password: no drift
    same = ansible.run_playbook(play(password_task('old-secret-1')))
    assert same.rc == 0 and same.task('pw')['result']['drift'] == {}
    assert same.task('pw')['changed'] is False
    # rotated, update: false: drift, masked, nothing written (check, real, again)
    rotated_check, rotated, _ = ansible.converge(play(password_task('new-secret-2')))
    assert rotated_check.task('pw')['result']['drift'] == rotated.task('pw')['result']['drift']
    result = rotated.task('pw')['result']
    assert result['changed'] is False
    assert result['drift'] == {'cipassword': {'before': '**********', 'after': '**********'}}
    assert result['msg'].endswith('differs from the task in cipassword (not changed: update is false)')
    assert writes(sim) == [] and verifies('old-secret-1')
    # update: true: changed in check and real runs, then no change
    check, real, again = ansible.converge(play(password_task('new-secret-2', update=True)))
    assert check.task('pw')['changed'] is True and real.task('pw')['changed'] is True
    assert again.task('pw')['changed'] is False and again.task('pw')['result']['drift'] == {}
    assert verifies('new-secret-2')
    stored = stored_password(sim, 100)
    for run in (same, rotated_check, rotated, check, real, again):
        text = run.stdout + run.stderr + repr(run.results)
        for secret in ('old-secret-1', 'new-secret-2', stored):
            assert secret not in text
