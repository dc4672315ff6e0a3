"""Tests of pvesim's POST /nodes/{node}/qemu/{vmid}/migrate against PVE's migrate semantics.

Sources: qemu-server src/PVE/API2/Qemu.pm migrate_vm (checks before the task), src/PVE/QemuMigrate.pm (the
`qmigrate` task) and pve-guest-common src/PVE/AbstractMigrate.pm (how the task ends)."""

from conftest import Q, config, create, error_of, ok, run


def migrate(sim, vmid, node='pve1', **params):
    return run(sim, 'POST', '/nodes/{0}/qemu/{1}/migrate'.format(node, vmid), params)


def resource(sim, vmid):
    return [r for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r['vmid'] == vmid][0]


def task_log(sim, status):
    return [line['t'] for line in sim.api('GET', '/nodes/{0}/tasks/{1}/log'.format(status['node'], status['upid']))]


def test_parameter_checks_come_before_the_task(sim):
    # Qemu.pm migrate_vm: raise_param_exc({target => "target is local node."}); the schema makes target required;
    # PVE::Cluster::check_node_exists dies "no such cluster node '<node>'"
    err = error_of(sim.api, 'POST', Q + '/100/migrate', {'target': 'pve1', 'online': 1})
    assert (err.status, err.errors) == (400, {'target': 'target is local node.'})
    err = error_of(sim.api, 'POST', Q + '/100/migrate', {'online': 1})
    assert err.status == 400 and 'target' in err.errors
    err = error_of(sim.api, 'POST', Q + '/100/migrate', {'target': 'pve9', 'online': 1})
    assert (err.status, err.message) == (500, "no such cluster node 'pve9'")


def test_a_running_vm_needs_online(sim):
    # Qemu.pm migrate_vm: die "can't migrate running VM without --online\n" before fork_worker
    err = error_of(sim.api, 'POST', Q + '/100/migrate', {'target': 'pve2'})
    assert (err.status, err.message) == (500, "can't migrate running VM without --online")
    assert resource(sim, 100)['node'] == 'pve1'


def test_a_locked_vm_is_refused(sim):
    # Qemu.pm migrate_vm: PVE::QemuConfig->check_lock($conf) "to detect errors early" (AbstractConfig.pm check_lock)
    sim.fault(kind='lock', vmid=100, lock='backup', seconds=30)
    err = error_of(sim.api, 'POST', Q + '/100/migrate', {'target': 'pve2', 'online': 1})
    assert (err.status, err.message) == (500, 'VM is locked (backup)')


def test_offline_migration_moves_the_config_and_keeps_the_disks(sim):
    # Qemu.pm migrate_vm: fork_worker('qmigrate', $vmid, ...); QemuMigrate.pm sync_offline_local_volumes copies
    # each local volume to the same storage id (no targetstorage map) and phase3_cleanup moves the config to the
    # target node and clears the migrate lock ("qm unlock")
    cfg = create(sim, 200, scsi0='local-lvm:1', scsi1='vmdata:1', ide2='isos:iso/debian-13-netinst.iso,media=cdrom')
    status = ok(migrate(sim, 200, target='pve2'))
    assert status['type'] == 'qmigrate' and status['id'] == '200' and status['node'] == 'pve1'
    assert resource(sim, 200)['node'] == 'pve2'
    moved = config(sim, 200, node='pve2')
    assert moved == cfg and 'lock' not in moved
    err = error_of(sim.api, 'GET', Q + '/200/config')
    assert err.message == "Configuration file 'nodes/pve1/qemu-server/200.conf' does not exist"
    log = task_log(sim, status)
    assert log[0].endswith("starting migration of VM 200 to node 'pve2'")
    assert any(line.endswith("found local disk 'local-lvm:vm-200-disk-0' (attached)") for line in log)
    assert any(line.endswith("volume 'vmdata:200/vm-200-disk-0.qcow2' is 'vmdata:200/vm-200-disk-0.qcow2' "
                             "on the target") for line in log)
    # the ISO is on shared storage: nothing to copy
    assert not any('debian-13-netinst' in line for line in log)
    assert 'migration finished successfully (duration ' in log[-2]
    assert log[-1] == 'TASK OK'


def test_online_is_ignored_for_a_stopped_vm(sim):
    # Qemu.pm migrate_vm: "VM isn't running. Doing offline migration instead." and $param->{online} = 0
    create(sim, 200, scsi0='local-lvm:1')
    ok(migrate(sim, 200, target='pve2', online=1))
    assert resource(sim, 200)['node'] == 'pve2'


def test_live_migration_of_local_disks_needs_with_local_disks(sim):
    # QemuMigrate.pm scan_local_volumes: "can't live migrate attached local disks without with-local-disks option"
    # aborts with "Problem found while scanning volumes - can't migrate VM - check log"; AbstractMigrate.pm ends
    # the task "migration aborted" and phase1_cleanup deletes the migrate lock
    status = migrate(sim, 100, target='pve2', online=1)
    assert status['exitstatus'] == 'migration aborted'
    log = task_log(sim, status)
    assert any(line.endswith("can't migrate local disk 'local-lvm:vm-100-disk-0': can't live migrate attached "
                             "local disks without with-local-disks option") for line in log)
    assert any(line.endswith("ERROR: Problem found while scanning volumes - can't migrate VM - check log")
               for line in log)
    assert log[-1] == 'TASK ERROR: migration aborted'
    res = resource(sim, 100)
    assert (res['node'], res['status']) == ('pve1', 'running') and 'lock' not in res
    assert 'lock' not in config(sim, 100)


def test_live_migration_with_local_disks_keeps_the_vm_running_on_the_target(sim):
    # QemuMigrate.pm: attached local disks of a running VM go online (NBD) with with-local-disks; phase3_cleanup
    # moves the config and resumes the VM on the target
    before = config(sim, 100)
    ok(migrate(sim, 100, target='pve2', online=1, **{'with-local-disks': 1}))
    res = resource(sim, 100)
    assert (res['node'], res['status']) == ('pve2', 'running')
    assert config(sim, 100, node='pve2') == before


def test_a_cloud_init_drive_is_copied_as_a_generated_disk(sim):
    # QemuMigrate.pm scan_local_volumes: a vm-<id>-cloudinit cdrom on local storage is ref 'generated', logged
    # "found generated disk '<volid>' (in current VM config)", and migrated offline
    create(sim, 200, scsi0='local-lvm:1', ide2='local-lvm:cloudinit')
    status = ok(migrate(sim, 200, target='pve2'))
    log = task_log(sim, status)
    assert any(line.endswith("found generated disk 'local-lvm:vm-200-cloudinit' (in current VM config)")
               for line in log)
    assert config(sim, 200, node='pve2')['ide2'].startswith('local-lvm:vm-200-cloudinit,media=cdrom')
