"""proxmox_disk end to end: check → real → again through ansible-playbook against pvesim.

PVE behaviour relied on (docs/pve-semantics.md): `STORAGE:N` allocates the lowest free
`vm-<vmid>-disk-<n>` (§8, qemu-server Qemu.pm create_disks); a drive taken out of use goes to
the lowest free `unusedN` (§11, QemuServer.pm vmconfig_register_unused_drive); resize and move
are tasks whose checks fail inside the task (§10, §12).
"""

import pytest

VOLUME_RE = r'local-lvm:vm-\d+-disk-\d+'


def disk_task(_task='disk', **options):
    return {'name': _task, 'ferro.proxmox.proxmox_disk': options, 'delegate_to': 'localhost', 'register': 'out'}


def play(*tasks):
    return [{'name': 'e2e', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def config(sim, vmid, node='pve1', current=False):
    return sim.api('GET', '/nodes/%s/qemu/%d/config' % (node, vmid), {'current': 1} if current else None)


def volumes(sim, node='pve1'):
    """Every volume on every storage of the node, through the storage content API."""
    found = set()
    for storage in ('local-lvm', 'vmdata', 'nvme-pool'):
        for item in sim.api('GET', '/nodes/%s/storage/%s/content' % (node, storage)) or []:
            found.add(item['volid'])
    return found


def create_vm(sim, vmid, name, node='pve1', **cfg):
    upid = sim.api('POST', '/nodes/%s/qemu' % node, dict({'vmid': vmid, 'name': name}, **cfg))
    assert sim.wait_task(upid)['exitstatus'] == 'OK'


@pytest.fixture
def stopped_vm(sim):
    """VM 150, stopped, with a 10G scsi1 next to its system disk."""
    create_vm(sim, 150, 'data-vm', scsi0='local-lvm:4', scsi1='local-lvm:10,discard=on')
    return 150


@pytest.mark.parametrize('size,expected', [('200', '200G'), ('10G', '10G')])
def test_create_a_data_disk_then_rerun_unchanged(ansible, sim, size, expected):
    _, real, again = ansible.converge(play(disk_task(vmid=100, disk='scsi1', storage='local-lvm', size=size)))
    result = real.task('disk')['result']
    assert result['msg'] == 'Disk scsi1 created in VM 100'
    assert config(sim, 100)['scsi1'] == 'local-lvm:vm-100-disk-1,size=%s' % expected
    assert result['volume'] == 'local-lvm:vm-100-disk-1'
    assert result['size']['text'] == expected
    assert result['config'] == config(sim, 100)['scsi1']
    assert again.task('disk')['result']['msg'] == 'Disk scsi1 is up to date in VM 100'


def test_change_cache_and_iothread_keeps_volume_and_options(ansible, sim, stopped_vm):
    before = config(sim, stopped_vm)['scsi1']
    _, real, _ = ansible.converge(play(disk_task(vmid=stopped_vm, disk='scsi1', cache='writeback', iothread=True)))
    after = config(sim, stopped_vm)['scsi1']
    assert before == 'local-lvm:vm-150-disk-1,discard=on,size=10G'
    assert after == 'local-lvm:vm-150-disk-1,cache=writeback,discard=on,iothread=1,size=10G'
    assert real.task('disk')['result']['diff']['before'] == 'scsi1: %s\n' % before
    assert real.task('disk')['result']['diff']['after'] == 'scsi1: %s\n' % after


def test_option_change_on_a_running_vm_is_reported_pending(ansible, sim):
    # cache is not hot-pluggable (QemuServer.pm vmconfig_update_disk; §6).
    _, real, _ = ansible.converge(play(disk_task(vmid=100, disk='scsi0', cache='writeback')))
    result = real.task('disk')['result']
    assert result['pending'] == ['scsi0'] and result['reboot_required'] is True
    assert 'cache' not in config(sim, 100, current=True)['scsi0']
    assert 'cache=writeback' in config(sim, 100)['scsi0']

    # Grown while that change waits: Qemu.pm resize_vm rewrites the applied drive only, and the
    # pending value would bring size=32G back at the next start (QemuServer.pm
    # vmconfig_apply_pending); the module writes the pending value again with the new size.
    _, real, again = ansible.converge(play(disk_task(vmid=100, disk='scsi0', size='40G', state='resized')))
    result = real.task('disk')['result']
    assert result['changed'] is True and result['msg'] == 'Disk scsi0 resized in VM 100'
    assert result['pending'] == ['scsi0'] and result['size']['text'] == '40G'
    assert config(sim, 100, current=True)['scsi0'] == 'local-lvm:vm-100-disk-0,discard=on,iothread=1,size=40G'
    assert config(sim, 100)['scsi0'] == 'local-lvm:vm-100-disk-0,cache=writeback,discard=on,iothread=1,size=40G'
    assert again.task('disk')['result']['msg'] == 'Disk scsi0 is already 40G size'
    upid = sim.api('POST', '/nodes/pve1/qemu/100/status/stop')
    assert sim.wait_task(upid)['exitstatus'] == 'OK'
    assert config(sim, 100, current=True)['scsi0'] == 'local-lvm:vm-100-disk-0,cache=writeback,discard=on,iothread=1,size=40G'


def test_create_disabled_on_a_missing_disk(ansible, sim):
    _, real, _ = ansible.converge(play(disk_task(vmid=100, disk='scsi5', create='disabled', cache='none')))
    assert real.task('disk')['result']['msg'] == \
        'Disk scsi5 not found in VM 100 and creation was disabled in parameters.'
    assert 'scsi5' not in config(sim, 100)


def test_create_forced_keeps_the_old_volume_as_unused(ansible, sim, stopped_vm):
    check = ansible.run_playbook(play(disk_task(vmid=stopped_vm, disk='scsi1', create='forced', storage='local-lvm', size='20G')),
                                 check=True, diff=True)
    real = ansible.run_playbook(play(disk_task(vmid=stopped_vm, disk='scsi1', create='forced', storage='local-lvm', size='20G')),
                                diff=True)
    result = real.task('disk')['result']
    cfg = config(sim, stopped_vm)
    assert cfg['scsi1'] == 'local-lvm:vm-150-disk-2,size=20G'
    assert cfg['unused0'] == 'local-lvm:vm-150-disk-1'
    assert result['unused'] == 'unused0'
    assert check.task('disk')['result']['unused'] == 'unused0'
    assert check.task('disk')['result']['diff'] == result['diff']
    assert 'local-lvm:vm-150-disk-1' in volumes(sim)


def test_resize_to_an_absolute_size_twice(ansible, sim, stopped_vm):
    _, real, again = ansible.converge(play(disk_task(vmid=stopped_vm, disk='scsi1', state='resized', size='15G')))
    assert real.task('disk')['result']['msg'] == 'Disk scsi1 resized in VM 150'
    assert config(sim, stopped_vm)['scsi1'] == 'local-lvm:vm-150-disk-1,discard=on,size=15G'
    assert again.task('disk')['result']['msg'] == 'Disk scsi1 is already 15G size'


def test_resize_relative_grows_every_time_and_says_so(ansible, sim, stopped_vm):
    pb = play(disk_task(vmid=stopped_vm, disk='scsi1', state='resized', size='+1G'))
    check = ansible.run_playbook(pb, check=True, diff=True)
    first = ansible.run_playbook(pb, diff=True)
    second = ansible.run_playbook(pb, diff=True)
    assert check.task('disk')['result']['diff'] == first.task('disk')['result']['diff']
    assert first.task('disk')['changed'] and second.task('disk')['changed']
    assert any('idempotent' in w for w in first.task('disk')['result']['warnings'])
    assert config(sim, stopped_vm)['scsi1'].endswith('size=12G')


@pytest.mark.parametrize('check', [True, False])
def test_shrink_is_refused_before_any_call(ansible, sim, stopped_vm, check):
    sim.clear_requests()
    run = ansible.run_playbook(play(disk_task(vmid=stopped_vm, disk='scsi1', state='resized', size='5G')), check=check)
    assert run.task('disk')['status'] == 'failed'
    assert run.task('disk')['result']['msg'] == \
        'shrinking disks is not supported: scsi1 of VM 150 is 10G, the task asks for 5G'
    assert [r for r in sim.requests() if r['method'] != 'GET'] == []


def test_detach_leaves_the_volume_unused(ansible, sim, stopped_vm):
    _, real, again = ansible.converge(play(disk_task(vmid=stopped_vm, disk='scsi1', state='detached')))
    result = real.task('disk')['result']
    assert result['msg'] == 'Disk scsi1 detached from VM 150'
    assert result['unused'] == 'unused0'
    cfg = config(sim, stopped_vm)
    assert 'scsi1' not in cfg and cfg['unused0'] == 'local-lvm:vm-150-disk-1'
    assert again.task('disk')['result']['msg'] == 'Disk scsi1 not present in VM 150 config'


@pytest.mark.parametrize('delete_moved', [False, True])
def test_move_to_nvme_pool(ansible, sim, stopped_vm, delete_moved):
    _, real, again = ansible.converge(play(disk_task(vmid=stopped_vm, disk='scsi1', state='moved',
                                                     target_storage='nvme-pool', delete_moved=delete_moved)))
    result = real.task('disk')['result']
    cfg = config(sim, stopped_vm)
    assert cfg['scsi1'] == 'nvme-pool:vm-150-disk-0,discard=on,size=10G'
    assert result['volume'] == 'nvme-pool:vm-150-disk-0'
    if delete_moved:
        assert 'unused0' not in cfg and 'unused' not in result
        assert 'local-lvm:vm-150-disk-1' not in volumes(sim)
    else:
        assert cfg['unused0'] == 'local-lvm:vm-150-disk-1' and result['unused'] == 'unused0'
    assert again.task('disk')['result']['msg'] == 'Disk scsi1 already at nvme-pool storage'


def test_move_to_another_vm(ansible, sim, stopped_vm):
    create_vm(sim, 151, 'other', scsi0='local-lvm:4')
    _, real, again = ansible.converge(play(disk_task(vmid=stopped_vm, disk='scsi1', state='moved', target_vmid=151,
                                                     target_disk='scsi2')))
    assert 'scsi1' not in config(sim, stopped_vm)
    moved = config(sim, 151)['scsi2']
    assert moved == 'local-lvm:vm-151-disk-1,discard=on,size=10G'
    assert real.task('disk')['result']['volume'] == 'local-lvm:vm-151-disk-1'
    assert real.task('disk')['result']['msg'] == 'Disk scsi1 moved from VM 150 storage local-lvm'
    assert again.task('disk')['result']['msg'] == 'Disk scsi1 already moved to VM 151 as scsi2'


def test_import_from_a_volume(ansible, sim):
    # converge compares the diffs exactly: the size (the source's) is predicted from the storage's listing
    _, real, _ = ansible.converge(play(disk_task(vmid=100, disk='scsi2', storage='local-lvm',
                                                 import_from='vmdata:9000/base-9000-disk-0.qcow2')))
    assert real.task('disk')['result']['msg'] == 'Disk scsi2 imported into VM 100'
    assert config(sim, 100)['scsi2'] == 'local-lvm:vm-100-disk-1,size=8G'


def test_cdrom_with_an_iso(ansible, sim, stopped_vm):
    _, real, again = ansible.converge(play(disk_task(vmid=stopped_vm, disk='ide2', iso_image='isos:iso/debian-13-netinst.iso',
                                                     media='cdrom')))
    assert real.task('disk')['result']['msg'] == 'CD-ROM was created on ide2 bus in VM 150'
    # the ISO's size, which PVE fills in from the storage, is predicted exactly by the check run
    assert config(sim, stopped_vm)['ide2'] == 'isos:iso/debian-13-netinst.iso,media=cdrom,size=754M'


def test_efidisk0(ansible, sim, stopped_vm):
    _, real, _ = ansible.converge(play(disk_task(vmid=stopped_vm, disk='efidisk0', storage='local-lvm')))
    assert config(sim, stopped_vm)['efidisk0'] == real.task('disk')['result']['config']
    assert real.task('disk')['result']['volume'] == 'local-lvm:vm-150-disk-2'


def test_absent_twice(ansible, sim, stopped_vm):
    _, real, again = ansible.converge(play(disk_task(vmid=stopped_vm, disk='scsi1', state='absent')))
    assert real.task('disk')['result']['msg'] == 'Disk scsi1 removed from VM 150'
    assert 'local-lvm:vm-150-disk-1' not in volumes(sim)
    assert again.task('disk')['result']['msg'] == 'Disk scsi1 is already absent in VM 150'


@pytest.mark.parametrize('task_type,options', [
    ('resize', {'state': 'resized', 'size': '20G'}),
    ('qmmove', {'state': 'moved', 'target_storage': 'nvme-pool'}),
])
def test_a_failing_task_fails_the_module_and_loses_nothing(ansible, sim, stopped_vm, task_type, options):
    before = volumes(sim)
    sim.fault(kind='task', type=task_type, exitstatus='storage migration failed: I/O error')
    run = ansible.run_playbook(play(disk_task(vmid=stopped_vm, disk='scsi1', **options)))
    result = run.task('disk')['result']
    assert run.task('disk')['status'] == 'failed'
    assert result['exitstatus'] == 'storage migration failed: I/O error'
    assert 'storage migration failed: I/O error' in result['msg'] and result['upid'] in result['msg']
    assert before <= volumes(sim)
    assert config(sim, stopped_vm)['scsi1'] == 'local-lvm:vm-150-disk-1,discard=on,size=10G'
    # Without the fault, a rerun converges.
    again = ansible.run_playbook(play(disk_task(vmid=stopped_vm, disk='scsi1', **options)))
    assert again.task('disk')['status'] == 'ok' and again.task('disk')['changed']


def test_only_the_calls_it_needs(ansible, sim, stopped_vm):
    sim.clear_requests()
    ansible.run_playbook(play(disk_task(vmid=stopped_vm, disk='scsi1', state='resized', size='12G')))
    calls = [(r['method'], r['path'].replace('/api2/json', '').split('/tasks/')[0]) for r in sim.requests()]
    assert calls[0] == ('GET', '/cluster/resources')
    assert calls[1] == ('GET', '/nodes/pve1/qemu/150/pending')
    # what the token holds, every path in one read (§52): VM.Config.Disk on /vms/150 (§27) and
    # Datastore.AllocateSpace on the volume's storage, which resize_vm checks in its handler (§44.2)
    assert calls[2] == ('GET', '/access/permissions')
    # storage.cfg: whether the volume's storage reserves the growth (thick LVM, a zvol; its status is read
    # only then, not for local-lvm's thin pool; docs/pve-semantics.md §42.3)
    assert calls[3] == ('GET', '/storage')
    # the resize's footprint: the volume's size before the write, so that a failed resize is known to have
    # grown it or not (the config came from the read above; docs/pve-semantics.md §31)
    assert calls[4] == ('GET', '/nodes/pve1/storage/local-lvm/content')
    assert calls[5] == ('PUT', '/nodes/pve1/qemu/150/resize')
    assert set(calls[6:-1]) == {('GET', '/nodes/pve1')}  # task status polls (and nothing else)
    assert calls[-1] == ('GET', '/nodes/pve1/qemu/150/pending')
