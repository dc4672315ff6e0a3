"""resize, move_disk and unlink change state for real (issue 2 item 3; docs/pve-semantics.md §10-§12, §21 D7, D16)."""

import time

from conftest import Q, config, create, error_of, ok, pending, run, volumes


def test_resize_with_plus_grows_from_the_volume_size_in_a_resize_task(sim):
    # qemu-server src/PVE/API2/Qemu.pm resize_vm (9.2.6): task 'resize', '+' adds to the storage size; §10
    create(sim, 200, scsi0='local-lvm:2,discard=on')
    upid = sim.api('PUT', Q + '/200/resize', {'disk': 'scsi0', 'size': '+1G'})
    assert upid.split(':')[5] == 'resize'
    ok(sim.wait_task(upid))
    assert config(sim, 200)['scsi0'] == 'local-lvm:vm-200-disk-0,discard=on,size=3G'
    assert volumes(sim, 'local-lvm')['local-lvm:vm-200-disk-0']['size'] == 3 * 1024 ** 3


def test_resize_to_an_absolute_size_uses_the_canonical_unit(sim):
    # Qemu.pm resize_vm; pve-common JSONSchema.pm format_size (9.2.6 / 9.2.1); §10
    create(sim, 200, scsi0='vmdata:1')
    ok(run(sim, 'PUT', Q + '/200/resize', {'disk': 'scsi0', 'size': '1536M'}))
    assert config(sim, 200)['scsi0'] == 'vmdata:200/vm-200-disk-0.qcow2,size=1536M'


def test_resize_smaller_fails_in_the_task_with_shrinking_not_supported(sim):
    # Qemu.pm resize_vm: die "shrinking disks is not supported" inside the worker (9.2.6); §10
    create(sim, 200, scsi0='local-lvm:2')
    status = run(sim, 'PUT', Q + '/200/resize', {'disk': 'scsi0', 'size': '1G'})
    assert status['exitstatus'] == 'shrinking disks is not supported'
    assert config(sim, 200)['scsi0'] == 'local-lvm:vm-200-disk-0,size=2G'


def test_resize_to_the_same_size_ends_ok_without_a_change(sim):
    # Qemu.pm resize_vm: "return if $size == $newsize" (9.2.6); §10
    create(sim, 200, scsi0='local-lvm:2')
    digest = sim.api('GET', Q + '/200/config')['digest']
    ok(run(sim, 'PUT', Q + '/200/resize', {'disk': 'scsi0', 'size': '2G'}))
    assert sim.api('GET', Q + '/200/config')['digest'] == digest


def test_resize_of_a_missing_vm_or_disk_fails_the_task(sim):
    # Qemu.pm resize_vm: load_config and the disk lookup run in the worker (9.2.6); §10, §19
    status = run(sim, 'PUT', Q + '/4242/resize', {'disk': 'scsi0', 'size': '+1G'})
    assert status['exitstatus'] == "Configuration file 'nodes/pve1/qemu-server/4242.conf' does not exist"
    status = run(sim, 'PUT', Q + '/100/resize', {'disk': 'scsi5', 'size': '+1G'})
    assert status['exitstatus'] == "disk 'scsi5' does not exist"


def test_resize_with_a_pending_option_change_rewrites_the_applied_drive_only(sim):
    # Qemu.pm resize_vm (9.2.6) grows the volume and sets $conf->{$disk} (the applied drive) only;
    # the pending value keeps its old size= and replaces the applied one at the next start
    # (QemuServer.pm vmconfig_apply_pending: $conf->{$opt} = delete $conf->{pending}->{$opt}).
    create(sim, 200, scsi0='local-lvm:2')
    ok(run(sim, 'POST', Q + '/200/status/start'))
    ok(run(sim, 'POST', Q + '/200/config', {'scsi0': 'local-lvm:vm-200-disk-0,aio=native,size=2G'}))
    rows = pending(sim, 200)
    assert rows['scsi0']['pending'] == 'local-lvm:vm-200-disk-0,aio=native,size=2G'
    ok(run(sim, 'PUT', Q + '/200/resize', {'disk': 'scsi0', 'size': '+1G'}))
    rows = pending(sim, 200)
    assert rows['scsi0']['value'] == 'local-lvm:vm-200-disk-0,size=3G'
    assert rows['scsi0']['pending'] == 'local-lvm:vm-200-disk-0,aio=native,size=2G'
    assert volumes(sim, 'local-lvm')['local-lvm:vm-200-disk-0']['size'] == 3 * 1024 ** 3
    ok(run(sim, 'POST', Q + '/200/status/stop'))
    # Applied at the stop: the old size text is back, on a 3 GiB volume.
    assert config(sim, 200)['scsi0'] == 'local-lvm:vm-200-disk-0,aio=native,size=2G'


def test_move_disk_without_delete_keeps_the_source_as_unused(sim):
    # Qemu.pm move_vm_disk (9.2.6): task 'qmmove', source kept as unusedN; §12, §21 D16
    create(sim, 200, scsi0='local-lvm:2,iothread=1')
    upid = sim.api('POST', Q + '/200/move_disk', {'disk': 'scsi0', 'storage': 'vmdata'})
    assert upid.split(':')[5:7] == ['qmmove', '200']
    ok(sim.wait_task(upid))
    cfg = config(sim, 200)
    assert cfg['scsi0'] == 'vmdata:200/vm-200-disk-0.raw,iothread=1,size=2G'
    assert cfg['unused0'] == 'local-lvm:vm-200-disk-0'
    log = [line['t'] for line in sim.api('GET', '/nodes/pve1/tasks/{0}/log'.format(upid))]
    assert "adding source volume 'local-lvm:vm-200-disk-0' as 'unused0' to config" in log


def test_move_disk_with_delete_frees_the_source(sim):
    # Qemu.pm move_vm_disk: delete=1 → vdisk_free of the source after the copy (9.2.6); §12
    create(sim, 200, scsi0='vmdata:2')
    ok(run(sim, 'POST', Q + '/200/move_disk', {'disk': 'scsi0', 'storage': 'nvme-pool', 'delete': 1}))
    cfg = config(sim, 200)
    assert cfg['scsi0'] == 'nvme-pool:vm-200-disk-0,size=2G' and 'unused0' not in cfg
    assert 'vmdata:200/vm-200-disk-0.qcow2' not in volumes(sim, 'vmdata')


def test_move_disk_checks_fail_before_the_task(sim):
    # Qemu.pm move_vm_disk checks before fork_worker (9.2.6); pve-common Tools.pm assert_if_modified; §12
    err = error_of(sim.api, 'POST', Q + '/100/move_disk', {'disk': 'scsi0', 'storage': 'local-lvm'})
    assert (err.status, err.message) == (500, "you can't move to the same storage with same format")
    err = error_of(sim.api, 'POST', Q + '/100/move_disk', {'disk': 'scsi0', 'storage': 'isos'})
    assert err.status == 400 and err.errors == {'storage': "storage 'isos' does not support vm images"}
    err = error_of(sim.api, 'POST', Q + '/100/move_disk', {'disk': 'scsi0', 'storage': 'vmdata',
                                                            'digest': 'a' * 40})
    assert err.message == 'detected modified configuration - file changed by other user? Try again.'
    err = error_of(sim.api, 'POST', Q + '/4242/move_disk', {'disk': 'scsi0', 'storage': 'vmdata'})
    assert (err.status, err.message) == (500, "Configuration file 'nodes/pve1/qemu-server/4242.conf' does not exist")


def test_move_disk_needs_exactly_one_of_storage_and_target_vmid(sim):
    # Qemu.pm move_vm_disk raise_param_exc on both parameters (9.2.6); §12
    err = error_of(sim.api, 'POST', Q + '/100/move_disk', {'disk': 'scsi0'})
    assert err.status == 400 and set(err.errors) == {'storage', 'target-vmid'}
    err = error_of(sim.api, 'POST', Q + '/100/move_disk', {'disk': 'scsi0', 'storage': 'vmdata',
                                                            'target-vmid': 200})
    assert err.errors['storage'] == "either set 'storage' or 'target-vmid', but not both"


def test_move_disk_to_another_vm_reassigns_the_volume(sim):
    # Qemu.pm move_vm_disk with target-vmid (reassign), task id <vmid>-<disk>><target>-<disk> (9.2.6); §12
    create(sim, 200, scsi0='local-lvm:1', scsi1='local-lvm:3')
    create(sim, 201, scsi0='local-lvm:1')
    upid = sim.api('POST', Q + '/200/move_disk', {'disk': 'scsi1', 'target-vmid': 201, 'target-disk': 'scsi2'})
    assert upid.split(':')[5:7] == ['qmmove', '200-scsi1>201-scsi2']
    ok(sim.wait_task(upid))
    assert 'scsi1' not in config(sim, 200)
    assert config(sim, 201)['scsi2'] == 'local-lvm:vm-201-disk-1,size=3G'


def test_move_disk_holds_the_config_lock_while_it_runs(sim):
    # Qemu.pm move_vm_disk runs under lock_config; writers wait for it (9.2.6); §12, §17
    create(sim, 200, scsi0='local-lvm:1')
    sim.time_scale(0.05)
    upid = sim.api('POST', Q + '/200/move_disk', {'disk': 'scsi0', 'storage': 'vmdata'})
    started = time.monotonic()
    sim.api('PUT', Q + '/200/config', {'cores': 2})
    assert sim.api('GET', '/nodes/pve1/tasks/{0}/status'.format(upid))['status'] == 'stopped'
    assert time.monotonic() - started > 0.2


def test_unlink_without_force_keeps_unused_and_with_force_frees(sim):
    # Qemu.pm unlink → update_vm_api(delete=idlist, force) synchronous (9.2.6); §11
    create(sim, 200, scsi0='local-lvm:1', scsi1='local-lvm:1', scsi2='local-lvm:1')
    assert sim.api('PUT', Q + '/200/unlink', {'idlist': 'scsi1'}) is None
    assert config(sim, 200)['unused0'] == 'local-lvm:vm-200-disk-1'
    assert sim.api('PUT', Q + '/200/unlink', {'idlist': 'scsi2,unused0', 'force': 1}) is None
    cfg = config(sim, 200)
    assert 'scsi2' not in cfg and 'unused0' not in cfg and 'unused1' not in cfg
    assert set(volumes(sim, 'local-lvm')) == {'local-lvm:vm-100-disk-0', 'local-lvm:vm-200-disk-0'}


def test_unlink_of_a_missing_vm_fails(sim):
    # AbstractConfig.pm load_config via update_vm_api (6.0.2); §19
    err = error_of(sim.api, 'PUT', Q + '/4242/unlink', {'idlist': 'scsi0'})
    assert (err.status, err.message) == (500, "Configuration file 'nodes/pve1/qemu-server/4242.conf' does not exist")


def test_efidisk_on_lvmthin_is_4m_and_on_dir_follows_efitype(sim):
    # qemu-server QemuServer/OVMF.pm create_efidisk; Qemu.pm create_disks (9.2.6); §8.5, §21 D15
    cfg = create(sim, 200, bios='ovmf', efidisk0='local-lvm:1,efitype=4m', scsi0='vmdata:1')
    assert cfg['efidisk0'] == 'local-lvm:vm-200-disk-0,efitype=4m,size=4M'
    cfg = create(sim, 201, bios='ovmf', efidisk0='vmdata:1,efitype=4m')
    assert cfg['efidisk0'] == 'vmdata:201/vm-201-disk-0.qcow2,efitype=4m,size=528K'


def test_cloudinit_drive_is_named_for_the_vm(sim):
    # Qemu.pm create_disks: cloud-init volume vm-<vmid>-cloudinit, media=cdrom (9.2.6); §8.5
    # (one per VM: has_cloudinit refuses a second, docs/pve-semantics.md §42.2)
    cfg = create(sim, 200, ide2='local-lvm:cloudinit')
    assert cfg['ide2'] == 'local-lvm:vm-200-cloudinit,media=cdrom,size=4M'
    cfg = create(sim, 201, scsi1='vmdata:cloudinit')
    assert cfg['scsi1'] == 'vmdata:201/vm-201-cloudinit.qcow2,media=cdrom,size=4M'


def test_import_from_copies_the_source_into_a_new_volume_without_keeping_import_from(sim):
    # qemu-server src/PVE/API2/Qemu.pm create_disks, import path (9.2.6): `STORAGE:0,import-from=SRC`
    # allocates a volume of the source's size and drops `import-from` from the drive; §4.1, §8
    create(sim, 200, scsi0='local-lvm:0,import-from=vmdata:9000/base-9000-disk-0.qcow2,discard=on')
    assert config(sim, 200)['scsi0'] == 'local-lvm:vm-200-disk-0,discard=on,size=8G'
    assert volumes(sim, 'local-lvm')['local-lvm:vm-200-disk-0']['size'] == 8 * 1024 ** 3
    # A source that does not exist fails the create task (create_disks runs in the worker).
    status = run(sim, 'POST', Q, {'vmid': 201, 'scsi0': 'local-lvm:0,import-from=vmdata:9000/nope.qcow2'})
    assert 'does not exist' in status['exitstatus']
