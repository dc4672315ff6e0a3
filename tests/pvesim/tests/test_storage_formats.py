"""Formats of new volumes and cloud-init drives, as pve-storage 9.1.7 and qemu-server 9.2.6 decide them
(docs/pve-semantics.md §42), on `tests/seeds/volume_chain.json`: one storage of each type and a thick LVM
storage with PVE 9's `snapshot-as-volume-chain`. Each test names the source it follows."""

import os

import pytest

from conftest import Q, config, create, run, volumes

SEED = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'seeds', 'volume_chain.json')
pytestmark = pytest.mark.pvesim_seed(SEED)
GIB = 1024 ** 3


def disk(cfg, key='scsi0'):
    return cfg[key].split(',')[0]


def test_a_volume_chain_lvm_makes_qcow2_volumes_named_with_their_extension(sim):
    # LVMPlugin.pm get_formats (qcow2 valid and the default with snapshot-as-volume-chain), alloc_image →
    # find_free_diskname (`.qcow2` added; Plugin.pm $get_vm_disk_number: a raw LV's unsuffixed pattern
    # counts the qcow2 LVs, a qcow2 LV's `.qcow2` pattern does not count the raw ones), parse_volname
    # (the format from the name); Qemu.pm create_disks: a new cloud-init volume is qcow2 there too
    cfg = create(sim, 101, scsi0='chain:1', scsi1='chain:1,format=raw', scsi2='chain:1,format=qcow2',
                 ide2='chain:cloudinit')
    assert [disk(cfg, k) for k in ('scsi0', 'scsi1', 'scsi2', 'ide2')] == [
        # the raw LV's number 1 is free again for a qcow2 one
        'chain:vm-101-disk-0.qcow2', 'chain:vm-101-disk-1', 'chain:vm-101-disk-1.qcow2',
        'chain:vm-101-cloudinit.qcow2']
    listed = volumes(sim, 'chain')
    assert listed['chain:vm-101-disk-0.qcow2']['format'] == 'qcow2'
    assert listed['chain:vm-101-disk-1']['format'] == 'raw'
    assert listed['chain:vm-101-cloudinit.qcow2']['format'] == 'qcow2'


@pytest.mark.parametrize('storage, message', [
    ('lvm-thick', 'snapshot-as-volume-chain option need to be enabled to use qcow2 format'),
    ('thin', "unsupported format 'qcow2'"),
    ('zfs-thick', "unsupported format 'qcow2'"),
])
def test_a_cloud_init_drive_in_a_format_its_storage_does_not_make_is_refused(sim, storage, message):
    # Qemu.pm create_disks: a new cloud-init drive's `format=` (else raw on a storage without a path) goes to
    # Storage.pm vdisk_alloc as it is; the plugin's alloc_image refuses it (LVMPlugin.pm alloc_lvm_image,
    # LvmThinPlugin.pm, ZFSPoolPlugin.pm alloc_image), and nothing stays allocated
    status = run(sim, 'POST', Q, {'vmid': 102, 'ide2': storage + ':cloudinit,format=qcow2'})
    assert status['exitstatus'] == 'unable to create VM 102 - ' + message
    assert volumes(sim, storage) == {}
    cfg = create(sim, 102, ide2=storage + ':cloudinit')
    assert disk(cfg, 'ide2') == storage + ':vm-102-cloudinit'


def test_a_second_cloud_init_drive_is_refused_new_or_an_existing_volume(sim):
    # Qemu.pm create_disks with QemuConfig.pm has_cloudinit (QemuServer/Drive.pm drive_is_cloudinit: a new
    # `STORAGE:cloudinit` or a `vm-<vmid>-cloudinit` volume), in update_vm_api before anything is written
    cfg = create(sim, 103, scsi0='thin:1', ide2='thin:cloudinit')
    assert disk(cfg, 'ide2') == 'thin:vm-103-cloudinit'
    for value in ('dirs:cloudinit', 'thin:vm-103-cloudinit,media=cdrom'):
        status = run(sim, 'POST', Q + '/103/config', {'ide3': value})
        assert status['exitstatus'] == "ide3 - cloud-init drive is already attached at 'ide2'"
        assert 'ide3' not in config(sim, 103)
    assert [v for v in volumes(sim, 'dirs')] == []


def test_a_create_with_two_cloud_init_drives_is_refused(sim):
    # Qemu.pm create_disks in create_vm: has_cloudinit on the drives made so far (`$res`), keys in sorted
    # order; create_disks frees what it made and no VM is left
    status = run(sim, 'POST', Q, {'vmid': 104, 'ide2': 'thin:cloudinit', 'scsi5': 'dirs:cloudinit'})
    assert status['exitstatus'] == "unable to create VM 104 - scsi5 - cloud-init drive is already attached at 'ide2'"
    assert volumes(sim, 'thin') == {} and volumes(sim, 'dirs') == {}
    assert 104 not in [vm['vmid'] for vm in sim.api('GET', '/nodes/pve1/qemu')]
