"""Details of update_vm_api found in review: boot order upkeep, vmgenid, balloon check, cloud-init,
templates (docs/pve-semantics.md §5, §8; qemu-server 9.2.6 src/PVE/API2/Qemu.pm update_vm_api, create_disks)."""

import re

from conftest import MAC, Q, config, create, error_of, pending, volumes

UUID = re.compile(r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')


def test_deleting_a_boot_device_removes_it_from_the_boot_order(sim):
    # Qemu.pm update_vm_api: "remove from bootorder if necessary" writes a pending boot; §5.2 step 1
    create(sim, 200, scsi0='local-lvm:1', scsi1='local-lvm:1', net0='virtio,bridge=vmbr0', boot='order=scsi0;scsi1;net0')
    sim.api('PUT', Q + '/200/config', {'delete': 'scsi1'})
    assert config(sim, 200)['boot'] == 'order=scsi0;net0'
    # running VM: the new boot order stays pending (boot is not hot-pluggable; §6) while the NIC goes at once
    sim.api('PUT', Q + '/100/config', {'delete': 'net0'})
    assert config(sim, 100, current=True)['boot'] == 'order=scsi0;net0'
    assert 'net0' not in config(sim, 100, current=True)
    assert pending(sim, 100)['boot']['pending'] == 'order=scsi0'


def test_a_new_cdrom_joins_the_boot_order_but_cloudinit_does_not(sim):
    # Qemu.pm update_vm_api: "append new CD drives to bootorder" (drive_is_cdrom($drive, 1) skips cloud-init); §5
    create(sim, 200, scsi0='local-lvm:1', net0='virtio,bridge=vmbr0')
    sim.api('PUT', Q + '/200/config', {'ide2': 'isos:iso/debian-13-netinst.iso,media=cdrom'})
    assert config(sim, 200)['boot'] == 'order=scsi0;net0;ide2'
    sim.api('PUT', Q + '/200/config', {'ide0': 'local-lvm:cloudinit'})
    assert config(sim, 200)['boot'] == 'order=scsi0;net0;ide2'


def test_a_new_boot_order_drops_the_legacy_bootdisk(sim):
    # Qemu.pm update_vm_api: add_to_pending_delete($conf, "bootdisk") when boot order= is set; §5
    create(sim, 200, scsi0='local-lvm:1', bootdisk='scsi0')
    sim.api('PUT', Q + '/200/config', {'boot': 'order=scsi0'})
    assert 'bootdisk' not in config(sim, 200)


def test_vmgenid_1_on_update_draws_a_new_uuid(sim):
    # Qemu.pm update_vm_api: vmgenid '1' becomes PVE::QemuServer::generate_uuid(); §5.1 step 6
    before = config(sim, 100)['vmgenid']
    sim.api('PUT', Q + '/100/config', {'vmgenid': '1'})
    after = config(sim, 100)['vmgenid']
    assert UUID.match(after) and after != before


def test_lowering_memory_below_the_balloon_is_refused(sim):
    # Qemu.pm $load_and_check_config: checked when memory *or* balloon is given (get_current_memory); §5.1 step 8
    create(sim, 200, memory=2048, balloon=1024)
    err = error_of(sim.api, 'PUT', Q + '/200/config', {'memory': 'current=512'})
    assert (err.status, err.message) == (500, 'balloon value too large (must be smaller than assigned memory)')
    sim.api('PUT', Q + '/200/config', {'memory': 1024})
    assert config(sim, 200)['memory'] == '1024'


def test_a_second_cloudinit_drive_is_refused_naming_the_first(sim):
    # Qemu.pm create_disks: "$ds - cloud-init drive is already attached at '$ci_key'"
    create(sim, 200, ide0='local-lvm:cloudinit')
    err = error_of(sim.api, 'PUT', Q + '/200/config', {'ide1': 'vmdata:cloudinit'})
    assert (err.status, err.message) == (500, "ide1 - cloud-init drive is already attached at 'ide0'")


def test_a_disk_added_to_a_template_is_a_base_volume(sim):
    # Qemu.pm create_disks: vdisk_create_base "in case the VM is a template"; §8.6
    sim.api('PUT', Q + '/9000/config', {'scsi1': 'local-lvm:1'})
    assert config(sim, 9000)['scsi1'] == 'local-lvm:base-9000-disk-0,size=1G'
    assert 'local-lvm:base-9000-disk-0' in volumes(sim, 'local-lvm')
    assert MAC.match(config(sim, 9000)['net0'].split(',')[0].split('=')[1])
