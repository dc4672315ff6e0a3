"""Every write read back (issue 32, docs/pve-semantics.md §46).

- A CD-ROM drive and a boot order in one task end with the order asked for, on create, clone and update, whatever
  order PVE walks the request's keys in: pvesim draws that order from a seeded RNG (its key_order.py), and each
  seed below is first shown to matter (the same keys sent in one write, as the module sent them before, end with
  the order PVE's append makes for some of them). The check run predicts the order, the real run stores it.
- A PVE that stores something other than the task predicted (pvesim's `rewrite` fault) fails the task naming the
  key, with what was predicted and what was stored, and lists the write as accepted (`changed`: the VM changed).
- A create or clone whose task failed and that PVE cleaned up (the VM and its volumes gone) is no change.
"""

from test_kvm import config, kvm, play

CD = 'isos:iso/debian-13-netinst.iso,media=cdrom'
ASKED = 'order=ide3;scsi0;net0'
SEEDS = (0, 1, 2, 3, 4, 5)
# the ISO's size, which PVE reads from the storage (known after apply for proxmox_kvm, §35.3); a MAC PVE draws
ISO_SIZE = r'(?<=media=cdrom,size=)754M'
MAC = r'[0-9A-F]{2}(?::[0-9A-F]{2}){5}'


def create_vm(sim, vmid, **extra):
    params = dict({'vmid': vmid, 'name': 'vm%d' % vmid, 'memory': 512, 'scsi0': 'local-lvm:1',
                   'net0': 'virtio,bridge=vmbr0', 'boot': 'order=scsi0;net0'}, **extra)
    assert sim.wait_task(sim.api('POST', '/nodes/pve1/qemu', params))['exitstatus'] == 'OK'


def one_write_result(sim, vmid, seed):
    """The boot order the drive and the order sent in one write end with, for this seed (as the module sent them)."""
    create_vm(sim, vmid)
    sim.key_order_seed(seed)
    sim.api('PUT', '/nodes/pve1/qemu/%d/config' % vmid, {'ide3': CD, 'boot': ASKED})
    return config(sim, vmid)['boot']


def test_a_cdrom_and_a_boot_order_in_one_update_end_with_the_order_asked_for(ansible, sim):
    # what one write would end with, seed by seed: for some seeds the order PVE's append makes
    shown = {seed: one_write_result(sim, 190 + n, seed) for n, seed in enumerate(SEEDS)}
    assert 'order=scsi0;net0;ide3' in shown.values(), shown
    # six VMs updated in one run: each task's two writes take the next keys orders the seeded RNG draws
    vmids = [160 + n for n in range(len(SEEDS))]
    for vmid in vmids:
        create_vm(sim, vmid)
    sim.key_order_seed(SEEDS[0])
    tasks = [dict(kvm(vmid=vmid, node='pve1', update=True, ide={'ide3': CD}, boot=ASKED), name='kvm%d' % vmid)
             for vmid in vmids]
    check, real, _ = ansible.converge(play(*tasks), unpredictable=[ISO_SIZE])
    for vmid in vmids:
        assert config(sim, vmid)['boot'] == ASKED, vmid
        diff = check.task('kvm%d' % vmid)['result']['diff']
        assert 'boot: order=scsi0;net0' in diff['before']
        assert 'boot: %s' % ASKED in diff['after']
        # boot after the drive, in a write of its own
        puts = [r for r in sim.requests() if r['method'] == 'PUT' and r['path'].endswith('/%d/config' % vmid)]
        assert [sorted(k for k in r['body'] if k != 'digest') for r in puts] == [['ide3'], ['boot']], puts


def test_a_cdrom_and_a_boot_order_on_create_and_clone_end_with_the_order_asked_for(ansible, sim):
    sim.key_order_seed(SEEDS[0])
    tasks = []
    for n in range(3):
        tasks.append(dict(kvm(vmid=170 + n, name='cd%d' % n, node='pve1', memory=512, scsi={'scsi0': 'local-lvm:1'},
                              net={'net0': 'virtio,bridge=vmbr0'}, ide={'ide3': CD}, boot=ASKED), name='new%d' % n))
        tasks.append(dict(kvm('clone', clone='debian-13-template', newid=180 + n, name='cl%d' % n, node='pve1',
                              ide={'ide3': CD}, boot=ASKED), name='clone%d' % n))
    check, real, _ = ansible.converge(play(*tasks), unpredictable=[ISO_SIZE, MAC])
    for n in range(3):
        assert config(sim, 170 + n)['boot'] == ASKED
        assert config(sim, 180 + n)['boot'] == ASKED
        assert 'boot: %s' % ASKED in check.task('clone%d' % n)['result']['diff']['after']


def test_a_value_pve_stored_otherwise_fails_the_task_naming_the_key(ansible, sim):
    create_vm(sim, 165, cores=1)
    sim.fault(kind='rewrite', vmid=165, key='cores', value='3')
    run = ansible.run_playbook(play(kvm(vmid=165, node='pve1', update=True, cores=2, memory=1024)))
    result = run.task('kvm')
    res = result['result']
    assert result['status'] == 'failed', res
    assert "cores: predicted '2', stored '3'" in res['msg'], res['msg']
    assert 'memory' not in res['msg'].split('Then:')[-1], 'a key stored as predicted is not named'
    assert res['changed'] is True
    [write] = res['accepted_writes']
    assert write.startswith('PUT /nodes/pve1/qemu/165/config (') and 'cores' in write, write
    assert config(sim, 165)['cores'] == 3 and config(sim, 165)['memory'] == '1024'


def test_a_create_or_clone_pve_cleaned_up_after_its_failure_is_no_change(ansible, sim):
    sim.fault(kind='task', type='qmcreate', exitstatus="unable to create VM 175 - lvcreate 'pve/vm-175-disk-0' error")
    run = ansible.run_playbook(play(kvm(vmid=175, name='gone', node='pve1', scsi={'scsi0': 'local-lvm:1'})))
    res = run.task('kvm')['result']
    assert run.task('kvm')['status'] == 'failed' and res['changed'] is False, res
    assert 'accepted_writes' not in res, res
    [refused] = res['refused_writes']
    assert refused.startswith('POST /nodes/pve1/qemu (') and 'lvcreate' in refused, refused
    assert 175 not in [r['vmid'] for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})]
    assert sim.api('GET', '/nodes/pve1/storage/local-lvm/content', {'vmid': 175}) == []
    sim.fault(kind='task', type='qmclone', exitstatus='clone failed: copy error')
    run = ansible.run_playbook(play(kvm(clone='debian-13-template', newid=176, name='gone2', node='pve1')))
    res = run.task('kvm')['result']
    assert run.task('kvm')['status'] == 'failed' and res['changed'] is False, res
    [refused] = res['refused_writes']
    assert refused.startswith('POST /nodes/pve1/qemu/9000/clone ('), refused
    # once the fault is spent, the same create changes
    run = ansible.run_playbook(play(kvm(vmid=175, name='gone', node='pve1', scsi={'scsi0': 'local-lvm:1'})))
    assert run.task('kvm')['status'] == 'ok' and run.task('kvm')['result']['changed'] is True
