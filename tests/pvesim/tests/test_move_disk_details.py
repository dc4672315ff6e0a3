"""move_disk details found in review: reassign to another VM (target-vmid) and target formats
(docs/pve-semantics.md §12; qemu-server 9.2.6 src/PVE/API2/Qemu.pm move_vm_disk)."""

from conftest import Q, config, create, error_of, ok, pending, run, volumes


def test_reassign_checks_use_pves_wording_before_the_task(sim):
    # Qemu.pm move_vm_disk $load_and_check_reassign_configs: every check dies before fork_worker (HTTP 500)
    create(sim, 200, scsi0='local-lvm:1', ide2='isos:iso/debian-13-netinst.iso,media=cdrom')
    create(sim, 201, scsi0='local-lvm:1')
    move = Q + '/200/move_disk'
    cases = [
        ({'disk': 'scsi0', 'target-vmid': 999}, 'could not find target VM 999'),
        ({'disk': 'scsi0', 'target-vmid': 9000, 'target-disk': 'scsi5'}, "Can't move disks from or to template VMs"),
        ({'disk': 'scsi0', 'target-vmid': 201, 'digest': 'abc'},
         'VM 200: detected modified configuration - file changed by other user? Try again.'),
        ({'disk': 'scsi5', 'target-vmid': 201}, "Disk 'scsi5' for VM '200' does not exist"),
        ({'disk': 'scsi0', 'target-vmid': 201}, "Target disk key 'scsi0' is already in use for VM '201'"),
        ({'disk': 'ide2', 'target-vmid': 201, 'target-disk': 'ide2'}, "CD drive contents can't be moved to another VM"),
    ]
    for params, message in cases:
        err = error_of(sim.api, 'POST', move, params)
        assert (err.status, err.message) == (500, message), params


def test_reassign_of_an_attached_disk_of_a_running_vm_is_refused(sim):
    # Qemu.pm move_vm_disk: "Cannot move disk to another VM while the source VM is running - detach first"
    # (unusedN keys may move); §12
    create(sim, 201, scsi0='local-lvm:1')
    err = error_of(sim.api, 'POST', Q + '/100/move_disk', {'disk': 'scsi0', 'target-vmid': 201, 'target-disk': 'scsi1'})
    assert (err.status, err.message) == (500, 'Cannot move disk to another VM while the source VM is running'
                                               ' - detach first')


def test_reassign_leaves_the_boot_order_and_adds_the_disk_through_a_config_update(sim):
    # Qemu.pm move_vm_disk $disk_reassignfn: the disk leaves the source boot order; the target gets it by
    # update_vm_api, so a running target without sata hotplug holds it as pending (§6, §12)
    create(sim, 200, scsi0='local-lvm:1', sata0='vmdata:1', boot='order=sata0;scsi0')
    status = ok(run(sim, 'POST', Q + '/200/move_disk', {'disk': 'sata0', 'target-vmid': 100, 'target-disk': 'sata3'}))
    assert status['upid'].split(':')[5:7] == ['qmmove', '200-sata0>100-sata3']
    assert config(sim, 200)['boot'] == 'order=scsi0'
    assert 'sata0' not in config(sim, 200)
    assert pending(sim, 100)['sata3']['pending'] == 'vmdata:100/vm-100-disk-0.qcow2,size=1G'
    assert 'vmdata:100/vm-100-disk-0.qcow2' in volumes(sim, 'vmdata')
    log = [line['t'] for line in sim.api('GET', '/nodes/pve1/tasks/{0}/log'.format(status['upid']))]
    assert log[:3] == ["reassign disk 'sata0' from VM '200' as 'sata3' to VM '100'",
                       "removing disk 'sata0' from boot order config", "removing disk 'sata0' from VM '200' config"]


def test_move_to_a_format_the_storage_lacks_uses_its_default_format(sim):
    # QemuServer.pm resolve_dst_disk_format: "test if requested format is supported - else use default"
    create(sim, 200, scsi0='vmdata:1')
    ok(run(sim, 'POST', Q + '/200/move_disk', {'disk': 'scsi0', 'storage': 'local-lvm', 'format': 'qcow2'}))
    assert config(sim, 200)['scsi0'] == 'local-lvm:vm-200-disk-0,size=1G'


def test_a_disk_moved_on_a_template_becomes_a_base_volume(sim):
    # Qemu.pm move_vm_disk: "convert moved disk to base if part of template"
    ok(run(sim, 'POST', Q + '/9000/move_disk', {'disk': 'scsi0', 'storage': 'local-lvm'}))
    assert config(sim, 9000)['scsi0'] == 'local-lvm:base-9000-disk-0,discard=on,size=8G'
