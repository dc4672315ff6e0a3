"""Config updates: PUT/POST .../config, pending, hotplug, delete/unused, revert, digest, locks (issue 2 items 1-2)."""

from conftest import MAC, Q, config, create, error_of, ok, pending, run, strip_meta, volumes


def test_put_new_disk_allocates_lowest_free_volume_on_block_storage(sim):
    # qemu-server src/PVE/API2/Qemu.pm update_vm_api → create_disks; pve-storage Plugin.pm
    # find_free_diskname (9.2.6 / 9.1.7); docs/pve-semantics.md §8, §21 D1
    create(sim, 200, name='t')
    assert sim.api('PUT', Q + '/200/config', {'scsi0': 'local-lvm:10'}) is None
    assert sim.api('PUT', Q + '/200/config', {'scsi1': 'local-lvm:2,discard=on,iothread=1'}) is None
    cfg = config(sim, 200)
    assert cfg['scsi0'] == 'local-lvm:vm-200-disk-0,size=10G'
    assert cfg['scsi1'] == 'local-lvm:vm-200-disk-1,discard=on,iothread=1,size=2G'
    assert volumes(sim, 'local-lvm')['local-lvm:vm-200-disk-1']['size'] == 2 * 1024 ** 3


def test_new_disk_on_dir_storage_is_a_file_in_the_storage_format(sim):
    # pve-storage Plugin.pm alloc_image/find_free_diskname; Drive.pm print_drive drops format=;
    # docs/pve-semantics.md §8.3, §8.6. Which disk gets which number follows the order update_vm_api walks the
    # request's keys in (Perl's hash order, §46): pvesim's seeded order, so either.
    create(sim, 200)
    sim.api('PUT', Q + '/200/config', {'virtio0': 'vmdata:4', 'virtio1': 'vmdata:1,format=raw'})
    cfg = config(sim, 200)
    assert cfg['virtio0'].endswith('.qcow2,size=4G') and cfg['virtio1'].endswith('.raw,size=1G')
    names = sorted(cfg[k].split('.')[0] for k in ('virtio0', 'virtio1'))
    assert names == ['vmdata:200/vm-200-disk-0', 'vmdata:200/vm-200-disk-1']


def test_net_without_mac_gets_a_new_mac_on_create_and_on_update(sim):
    # qemu-server src/PVE/QemuServer/Network.pm parse_net/print_net, add_random_macs;
    # Qemu.pm update_vm_api (9.2.6); docs/pve-semantics.md §9, §21 D2
    cfg = create(sim, 200, net0='virtio,bridge=vmbr0,firewall=yes')
    model, mac = cfg['net0'].split(',')[0].split('=')
    assert model == 'virtio' and MAC.match(mac)
    assert cfg['net0'] == 'virtio={0},bridge=vmbr0,firewall=1'.format(mac)
    sim.api('PUT', Q + '/200/config', {'net0': 'virtio,bridge=vmbr1'})
    new_mac = config(sim, 200)['net0'].split(',')[0].split('=')[1]
    assert MAC.match(new_mac) and new_mac != mac
    sim.api('PUT', Q + '/200/config', {'net0': 'virtio=bc:24:11:aa:bb:cc,bridge=vmbr1'})
    assert config(sim, 200)['net0'] == 'virtio=BC:24:11:AA:BB:CC,bridge=vmbr1'


def test_post_config_is_a_qmconfig_task_and_put_is_synchronous(sim):
    # Qemu.pm update_vm (PUT, sync, null) and update_vm_async (POST, fork_worker 'qmconfig') (9.2.6);
    # docs/pve-semantics.md §5
    create(sim, 200)
    # PVE's own pace (2 s for the task), so that the status read below meets it running on a loaded machine
    sim.time_scale(1)
    upid = sim.api('POST', Q + '/200/config', {'cores': 4})
    assert upid.split(':')[5:8] == ['qmconfig', '200', 'ansible@pve!automation']
    assert sim.api('GET', '/nodes/pve1/tasks/{0}/status'.format(upid))['status'] == 'running'
    ok(sim.wait_task(upid))
    assert config(sim, 200)['cores'] == 4
    assert sim.api('PUT', Q + '/200/config', {'cores': 2}) is None
    assert config(sim, 200)['cores'] == 2


def test_stopped_vm_applies_every_change_at_once(sim):
    # QemuServer.pm vmconfig_apply_pending, called by update_vm_api for a stopped VM (9.2.6); §6
    create(sim, 200, cores=1)
    sim.api('PUT', Q + '/200/config', {'cores': 3, 'memory': '4096', 'scsihw': 'virtio-scsi-single'})
    assert config(sim, 200, current=True)['cores'] == 3
    assert [i for i in pending(sim, 200).values() if 'pending' in i or 'delete' in i] == []


def test_running_vm_hotplugs_disk_and_nic_with_default_hotplug(sim):
    # QemuServer.pm vmconfig_hotplug_pending / vmconfig_update_disk / vmconfig_update_net,
    # hotplug default network,disk,usb (9.2.6); docs/pve-semantics.md §6, §21 D4
    sim.api('PUT', Q + '/100/config', {'scsi1': 'local-lvm:5', 'net1': 'virtio,bridge=vmbr1'})
    current = config(sim, 100, current=True)
    assert current['scsi1'] == 'local-lvm:vm-100-disk-1,size=5G'
    assert current['net1'].endswith(',bridge=vmbr1')
    assert not any('pending' in i for i in pending(sim, 100).values())


def test_running_vm_without_disk_hotplug_allocates_disk_but_keeps_it_pending(sim):
    # Qemu.pm update_vm_api: create_disks runs before the hotplug decision; QemuServer.pm
    # vmconfig_hotplug_pending "skip" without 'disk' (9.2.6); docs/pve-semantics.md §8.9
    sim.api('PUT', Q + '/100/config', {'hotplug': 'network,usb'})
    sim.api('PUT', Q + '/100/config', {'scsi1': 'local-lvm:5'})
    assert 'scsi1' not in config(sim, 100, current=True)
    assert config(sim, 100)['scsi1'] == 'local-lvm:vm-100-disk-1,size=5G'
    assert pending(sim, 100)['scsi1'] == {'key': 'scsi1', 'pending': 'local-lvm:vm-100-disk-1,size=5G'}
    assert 'local-lvm:vm-100-disk-1' in volumes(sim, 'local-lvm')


def test_running_vm_leaves_cold_keys_pending_and_config_overlays_them_unless_current(sim):
    # AbstractConfig.pm load_current_config via Qemu.pm vm_config (current param) (9.2.6);
    # docs/pve-semantics.md §6, §7, §21 D3
    sim.api('PUT', Q + '/100/config', {'cores': 4, 'description': 'hello'})
    assert config(sim, 100)['cores'] == 4
    current = config(sim, 100, current=True)
    assert current['cores'] == 2 and current['description'] == 'hello'
    assert pending(sim, 100)['cores'] == {'key': 'cores', 'value': 2, 'pending': 4}


def test_pending_lists_every_key_with_the_digest_row_and_forced_deletes(sim):
    # pve-guest-common GuestHelpers.pm config_with_pending_array (6.0.2); docs/pve-semantics.md §7, §21 D12
    sim.api('PUT', Q + '/100/config', {'hotplug': '0'})
    sim.api('PUT', Q + '/100/config', {'delete': 'net0', 'force': 1})
    sim.api('PUT', Q + '/100/config', {'delete': 'sockets'})
    items = pending(sim, 100)
    assert items['digest']['value'] == sim.api('GET', Q + '/100/config')['digest']
    assert items['net0']['delete'] == 2
    assert items['sockets'] == {'key': 'sockets', 'value': 1, 'delete': 1}
    assert 'net0' not in config(sim, 100) and 'net0' in config(sim, 100, current=True)


def test_start_applies_pending_changes(sim):
    # QemuServer.pm vm_start_nolock → vmconfig_apply_pending (9.2.6); docs/pve-semantics.md §6
    create(sim, 200, cores=1)
    ok(run(sim, 'POST', Q + '/200/status/start'))
    sim.api('PUT', Q + '/200/config', {'cores': 2})
    assert config(sim, 200, current=True)['cores'] == 1
    ok(run(sim, 'POST', Q + '/200/status/stop'))
    ok(run(sim, 'POST', Q + '/200/status/start'))
    assert config(sim, 200, current=True)['cores'] == 2


def test_stop_and_shutdown_apply_pending_changes(sim):
    # QemuServer.pm vm_stop_cleanup with apply-pending, via _do_vm_stop (9.2.6); §6, §21 D8
    sim.api('PUT', Q + '/100/config', {'cores': 4})
    ok(run(sim, 'POST', Q + '/100/status/shutdown'))
    assert config(sim, 100, current=True)['cores'] == 4
    ok(run(sim, 'POST', Q + '/100/status/start'))
    sim.api('PUT', Q + '/100/config', {'cores': 6})
    ok(run(sim, 'POST', Q + '/100/status/stop'))
    assert config(sim, 100, current=True)['cores'] == 6


def test_revert_drops_a_pending_change_and_a_pending_only_disk_becomes_unused(sim):
    # Qemu.pm update_vm_api revert handling; QemuServer.pm vmconfig_register_unused_drive (9.2.6); §5, §21 D6
    sim.api('PUT', Q + '/100/config', {'hotplug': 'network'})
    sim.api('PUT', Q + '/100/config', {'cores': 8, 'scsi1': 'local-lvm:1'})
    sim.api('PUT', Q + '/100/config', {'revert': 'cores,scsi1'})
    cfg = config(sim, 100)
    assert cfg['cores'] == 2 and 'scsi1' not in cfg and 'revert' not in cfg
    assert cfg['unused0'] == 'local-lvm:vm-100-disk-1'
    assert not any('pending' in i or 'delete' in i for i in pending(sim, 100).values())


def test_delete_of_a_disk_moves_its_volume_to_unused(sim):
    # QemuServer.pm vmconfig_delete_or_detach_drive → vmconfig_register_unused_drive;
    # AbstractConfig.pm add_unused_volume (9.2.6); docs/pve-semantics.md §11, §21 D5
    create(sim, 200, scsi0='local-lvm:1', scsi1='local-lvm:2')
    sim.api('PUT', Q + '/200/config', {'delete': 'scsi1'})
    cfg = config(sim, 200)
    assert 'scsi1' not in cfg and cfg['unused0'] == 'local-lvm:vm-200-disk-1'
    assert 'local-lvm:vm-200-disk-1' in volumes(sim, 'local-lvm')


def test_delete_of_a_disk_with_force_frees_the_volume(sim):
    # QemuServer.pm vmconfig_delete_or_detach_drive ($force → vdisk_free) (9.2.6); §11
    create(sim, 200, scsi0='local-lvm:1', scsi1='local-lvm:2')
    sim.api('PUT', Q + '/200/config', {'delete': 'scsi1', 'force': 1})
    cfg = config(sim, 200)
    assert 'scsi1' not in cfg and 'unused0' not in cfg
    assert 'local-lvm:vm-200-disk-1' not in volumes(sim, 'local-lvm')


def test_delete_of_unused_frees_the_volume(sim):
    # Qemu.pm update_vm_api: unusedN deletes free the volume at once (9.2.6); §11
    create(sim, 200, scsi0='local-lvm:1')
    sim.api('PUT', Q + '/200/config', {'delete': 'scsi0'})
    sim.api('PUT', Q + '/200/config', {'delete': 'unused0'})
    assert 'unused0' not in config(sim, 200)
    assert 'local-lvm:vm-200-disk-0' not in volumes(sim, 'local-lvm')


def test_running_vm_sata_disk_delete_stays_a_pending_delete(sim):
    # QemuServer.pm vmconfig_hotplug_pending: ide/sata deletes "skip" (9.2.6); §6, §11
    sim.api('PUT', Q + '/100/config', {'hotplug': 'network'})
    sim.api('PUT', Q + '/100/config', {'sata0': 'local-lvm:1'})
    ok(run(sim, 'POST', Q + '/100/status/reboot'))
    assert config(sim, 100, current=True)['sata0'] == 'local-lvm:vm-100-disk-1,size=1G'
    sim.api('PUT', Q + '/100/config', {'hotplug': '1'})
    sim.api('PUT', Q + '/100/config', {'delete': 'sata0'})
    assert pending(sim, 100)['sata0']['delete'] == 1
    ok(run(sim, 'POST', Q + '/100/status/stop'))
    cfg = config(sim, 100)
    assert 'sata0' not in cfg and cfg['unused0'] == 'local-lvm:vm-100-disk-1'


def test_digest_mismatch_fails_put_and_post_with_http_500(sim):
    # Qemu.pm update_vm_api: "checksum mismatch" before the fork (9.2.6); §5, §21 D10
    for method in ('PUT', 'POST'):
        err = error_of(sim.api, method, Q + '/100/config', {'cores': 3, 'digest': '0' * 40})
        assert (err.status, err.message) == (500, 'checksum mismatch (file change by other user?)')
    digest = sim.api('GET', Q + '/100/config')['digest']
    assert sim.api('PUT', Q + '/100/config', {'cores': 3, 'digest': digest}) is None


def test_digest_changes_with_a_pending_only_edit(sim):
    # SHA1 of the whole config file incl. [PENDING] (AbstractConfig.pm / PVE::Cluster cfs) ; §7, §21 D14
    before = sim.api('GET', Q + '/100/config')['digest']
    sim.api('PUT', Q + '/100/config', {'cores': 4})
    assert sim.api('GET', Q + '/100/config', {'current': 1})['digest'] != before


def test_locked_vm_refuses_put_and_post_with_vm_is_locked(sim):
    # pve-guest-common AbstractConfig.pm check_lock; Qemu.pm update_vm_api (before the fork) (9.2.6); §5, §17
    sim.fault(kind='lock', vmid=100, lock='backup', seconds=30)
    for method in ('PUT', 'POST'):
        err = error_of(sim.api, method, Q + '/100/config', {'cores': 3})
        assert (err.status, err.message) == (500, 'VM is locked (backup)')


def test_setting_lock_in_the_config_locks_the_vm(sim):
    # lock is a config property checked by AbstractConfig.pm check_lock (6.0.2); §17, §21 D17
    sim.api('PUT', Q + '/100/config', {'lock': 'migrate'})
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'cores': 3})
    assert (err.status, err.message) == (500, 'VM is locked (migrate)')
    assert sim.api('GET', Q + '/100/status/current')['lock'] == 'migrate'


def test_nothing_to_update_is_no_options_specified(sim):
    # Qemu.pm update_vm_api: die "no options specified" (9.2.6); §5
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'digest': sim.api('GET', Q + '/100/config')['digest']})
    assert (err.status, err.message) == (500, 'no options specified')


def test_set_and_delete_of_the_same_key_is_a_400_on_delete(sim):
    # Qemu.pm update_vm_api raise_param_exc (quote placement as in PVE) (9.2.6); §5
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'cores': 2, 'delete': 'cores'})
    assert err.status == 400 and err.errors == {'delete': "you can't use '-cores' and -delete cores' at the same time"}


def test_delete_of_an_unknown_option_is_a_400(sim):
    # Qemu.pm update_vm_api option_exists check (9.2.6); §5
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'delete': 'bogus7'})
    assert err.status == 400 and err.errors == {'delete': "unknown option 'bogus7'"}


def test_iso_without_media_cdrom_is_a_400(sim):
    # Qemu.pm check_drive_param / assert_scsi_feature_compatibility: iso needs media=cdrom (9.2.6); §5
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'ide2': 'isos:iso/debian-13-netinst.iso'})
    assert err.status == 400 and err.errors == {'ide2': "explicit 'media=cdrom' is required for iso images"}
    sim.api('PUT', Q + '/100/config', {'ide2': 'isos:iso/debian-13-netinst.iso,media=cdrom'})
    assert config(sim, 100)['ide2'] == 'isos:iso/debian-13-netinst.iso,media=cdrom,size=754M'


def test_tags_are_normalised_on_write(sim):
    # pve-guest-common GuestHelpers.pm get_unique_tags (6.0.2); docs/pve-semantics.md §20.6
    sim.api('PUT', Q + '/100/config', {'tags': 'Web,prod db;web'})
    assert config(sim, 100)['tags'] == 'db;prod;web'


def test_config_keeps_wire_types_of_pve(sim):
    # QemuServer.pm check_type: integers/booleans as numbers, memory and number keys as strings;
    # (the API takes a boolean only as 0 or 1: JSONSchema.pm check_type, docs/pve-semantics.md §32)
    # docs/pve-semantics.md §3
    cfg = create(sim, 200, cores=2, onboot=1, memory=1024, cpulimit='0.5')
    assert strip_meta(cfg) == {'cores': 2, 'onboot': 1, 'memory': '1024', 'cpulimit': '0.5'}


def test_running_vm_compares_cold_and_agent_options_as_set_or_unset(sim):
    # QemuServer.pm vmconfig_update_disk, vmconfig_update_agent: pve-guest-common GuestHelpers.pm safe_string_ne
    # (an option set on one side only differs, even at its default); vmconfig_update_agent skips (pending) when
    # the VM's agent value is false (`!$conf->{agent}`); fstrim_cloned_disks alone changes live. §6
    sim.api('PUT', Q + '/100/config', {'agent': '1'})
    sim.api('PUT', Q + '/100/config', {'agent': 'enabled=on,fstrim_cloned_disks=1'})
    assert 'agent' not in {k for k, i in pending(sim, 100).items() if 'pending' in i}
    sim.api('PUT', Q + '/100/config', {'agent': '1,type=virtio'})
    assert pending(sim, 100)['agent']['pending'] == '1,type=virtio'
    sim.api('PUT', Q + '/100/config', {'scsi1': 'local-lvm:1'})
    sim.api('PUT', Q + '/100/config', {'scsi1': 'local-lvm:vm-100-disk-1,iothread=0,size=1G'})
    assert pending(sim, 100)['scsi1']['pending'] == 'local-lvm:vm-100-disk-1,iothread=0,size=1G'
