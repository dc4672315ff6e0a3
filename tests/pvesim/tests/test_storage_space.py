"""The space volumes take on each storage type (docs/pve-semantics.md §22.4, §22.5), on
`tests/seeds/storage_space.json`: what each plugin's `status` counts, file storages' `preallocation`, what a
full copy (clone, move) allocates and writes, and the sizes of EFI vars and TPM state volumes, new, moved and
cloned. Each test names the source it follows (pve-storage 9.1.7, qemu-server 9.2.6)."""

import os

import pytest

from conftest import Q, config, create, ok, run, volumes

SEED = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'seeds', 'storage_space.json')
pytestmark = pytest.mark.pvesim_seed(SEED)
GIB, MIB = 1024 ** 3, 1024 ** 2
STORAGES = ('nfs', 'nfs-falloc', 'dir-full', 'lvm', 'zfs', 'zfs-sparse', 'thin', 'ceph')


def used(sim):
    """Each storage's `used` from its status, checked against its /cluster/resources entry."""
    resources = dict((r['storage'], r) for r in sim.api('GET', '/cluster/resources', {'type': 'storage'}))
    out = {}
    for storage in STORAGES:
        item = sim.api('GET', '/nodes/pve1/storage/{0}/status'.format(storage))
        assert item['total'] == item['used'] + item['avail']
        assert (resources[storage]['disk'], resources[storage]['maxdisk']) == (item['used'], item['total'])
        out[storage] = item['used']
    return out


def grown(before, after):
    return dict((s, after[s] - before[s]) for s in STORAGES if after[s] != before[s])


def test_each_status_counts_as_its_plugin_does_and_preallocation_counts_on_file_storages(sim):
    # LVMPlugin.pm status (vg size - free: every LV whole), ZFSPoolPlugin.pm status (the pool's `used`, which
    # counts a non-sparse zvol's refreservation), LvmThinPlugin.pm status (the thin pool's data_percent) and
    # RBDPlugin.pm status (`stored`): only what is written; Plugin.pm status (df of the path) with
    # Plugin.pm alloc_image → qemu_img_create -o preallocation=<preallocation_cmd_opt>: a raw file is sparse
    # (off, metadata meaning off), falloc and full take the whole size, for raw and qcow2 alike
    before = used(sim)
    assert before == {'nfs': 0, 'nfs-falloc': 0, 'dir-full': 0, 'lvm': 0, 'zfs': 0, 'zfs-sparse': 0,
                      'thin': 6 * GIB, 'ceph': 2 * GIB + 5 * MIB}
    create(sim, 101, scsi0='lvm:2', scsi1='zfs:2', scsi2='zfs-sparse:2', scsi3='thin:2', scsi4='ceph:2',
           scsi5='nfs:2', scsi6='nfs:2,format=qcow2', scsi7='nfs-falloc:2', scsi8='dir-full:2,format=qcow2')
    assert grown(before, used(sim)) == {'lvm': 2 * GIB, 'zfs': 2 * GIB, 'nfs-falloc': 2 * GIB, 'dir-full': 2 * GIB}
    # Plugin.pm volume_resize: qemu-img resize with the same preallocation
    ok(run(sim, 'PUT', Q + '/101/resize', {'disk': 'scsi7', 'size': '+1G'}))
    ok(run(sim, 'PUT', Q + '/101/resize', {'disk': 'scsi5', 'size': '+1G'}))
    assert grown(before, used(sim)) == {'lvm': 2 * GIB, 'zfs': 2 * GIB, 'nfs-falloc': 3 * GIB, 'dir-full': 2 * GIB}
    # Plugin.pm list_images: a file's `used` is what it occupies (file_size_info)
    assert [(item['size'], item['used']) for item in volumes(sim, 'nfs-falloc').values()] == [(3 * GIB, 3 * GIB)]
    assert sorted((item['size'], item['used']) for item in volumes(sim, 'nfs').values()) == [(2 * GIB, 0),
                                                                                             (3 * GIB, 0)]
    # a preallocated file that does not fit fails in qemu-img create (PVE::Storage::Common::qemu_img_create,
    # errmsg "unable to create image": PVE::Tools run_command gives qemu-img's stderr); a sparse one fits
    status = run(sim, 'POST', Q, {'vmid': 102, 'scsi0': 'nfs-falloc:8'})
    # (QEMU block/file-posix.c handle_aiocb_truncate; a qcow2 image through qcow2_co_create/_truncate)
    assert status['exitstatus'] == ('unable to create VM 102 - unable to create image: qemu-img: '
                                    '/mnt/pve/nfs-falloc/images/102/vm-102-disk-0.raw: Could not preallocate new data: '
                                    'No space left on device')
    status = run(sim, 'POST', Q, {'vmid': 102, 'scsi0': 'nfs-falloc:8,format=qcow2'})
    assert status['exitstatus'] == ('unable to create VM 102 - unable to create image: qemu-img: '
                                    '/mnt/pve/nfs-falloc/images/102/vm-102-disk-0.qcow2: Could not resize image: '
                                    'Failed to resize underlying file: Could not preallocate new data: '
                                    'No space left on device')
    create(sim, 102, scsi0='nfs:9')
    # freed volumes give their space back (Storage.pm vdisk_free)
    ok(run(sim, 'DELETE', Q + '/101'))
    assert used(sim) == before


def test_a_full_copy_allocates_the_source_size_and_writes_its_data(sim):
    # QemuServer.pm clone_disk: vdisk_alloc at volume_size_info of the source (so thick LVM and non-sparse ZFS
    # refuse before copying: LVMPlugin.pm lvcreate, ZFSPoolPlugin.pm zfs_create_zvol), then
    # clone_disk_copy_data → QemuImage.pm convert (`copy failed: ...`): the target holds the source's data,
    # 6 GiB of VM 150's 8 GiB thin disk; Qemu.pm clone_vm `clone failed: ...`, move_vm_disk `storage migration
    # failed: ...`, both freeing the volume they made
    before = used(sim)
    ok(run(sim, 'POST', Q + '/150/clone', {'newid': 151, 'storage': 'nfs'}))
    item = volumes(sim, 'nfs')['nfs:151/vm-151-disk-0.raw']
    assert (item['size'], item['used']) == (8 * GIB, 6 * GIB)
    ok(run(sim, 'POST', Q + '/150/clone', {'newid': 152, 'storage': 'thin'}))
    ok(run(sim, 'POST', Q + '/150/clone', {'newid': 153, 'storage': 'lvm'}))
    ok(run(sim, 'POST', Q + '/150/clone', {'newid': 154, 'storage': 'zfs'}))
    assert grown(before, used(sim)) == {'nfs': 6 * GIB, 'thin': 6 * GIB, 'lvm': 8 * GIB, 'zfs': 8 * GIB}
    status = run(sim, 'POST', Q + '/150/clone', {'newid': 155, 'storage': 'nfs'})
    assert status['exitstatus'] == ("clone failed: copy failed: command '/usr/bin/qemu-img convert -p -n -f raw "
                                    "-O raw /dev/pve/vm-150-disk-0 zeroinit:/mnt/pve/nfs/images/155/vm-155-disk-0.raw' "
                                    "failed: exit code 1")
    status = run(sim, 'POST', Q + '/150/clone', {'newid': 155, 'storage': 'zfs'})
    assert status['exitstatus'] == "clone failed: zfs error: cannot create 'tank/vm-155-disk-0': out of space"
    status = run(sim, 'POST', Q + '/150/move_disk', {'disk': 'scsi0', 'storage': 'lvm'})
    assert status['exitstatus'] == ('storage migration failed: lvcreate \'vg0/vm-150-disk-0\' error:   Volume group '
                                    '"vg0" has insufficient free space (512 extents): 2048 required.')
    assert list(volumes(sim, 'nfs')) == ['nfs:151/vm-151-disk-0.raw']
    assert config(sim, 150)['scsi0'] == 'thin:vm-150-disk-0,size=8G'
    assert grown(before, used(sim)) == {'nfs': 6 * GIB, 'thin': 6 * GIB, 'lvm': 8 * GIB, 'zfs': 8 * GIB}
    ok(run(sim, 'POST', Q + '/150/move_disk', {'disk': 'scsi0', 'storage': 'zfs-sparse', 'delete': 1}))
    assert grown(before, used(sim)) == {'nfs': 6 * GIB, 'lvm': 8 * GIB, 'zfs': 8 * GIB, 'zfs-sparse': 6 * GIB}


def test_efi_vars_and_tpm_state_sizes_new_moved_and_cloned(sim):
    # OVMF.pm create_efidisk: vdisk_alloc of the OVMF vars' size (528 KiB for efitype=4m, else 128 KiB), the
    # drive's size= from volume_size_info: whole 4 MiB extents on LVM (lvcreate, LvmThinPlugin.pm alloc_image),
    # whole MiB on RBD (RBDPlugin.pm alloc_image) and ZFS (ZFSPoolPlugin.pm zfs_create_zvol), as is on files
    for vmid, (storage, efitype, size) in enumerate((
            ('nfs', '4m', '528K'), ('nfs', '2m', '128K'), ('lvm', '4m', '4M'), ('thin', '2m', '4M'),
            ('ceph', '4m', '1M'), ('zfs', '4m', '1M')), start=110):
        cfg = create(sim, vmid, bios='ovmf', efidisk0='{0}:1,efitype={1}'.format(storage, efitype))
        assert cfg['efidisk0'].split(',')[-1] == 'size=' + size, storage
        assert volumes(sim, storage)[cfg['efidisk0'].split(',')[0]]['size'] == (
            int(size[:-1]) * (1024 if size.endswith('K') else MIB))
    # QemuServer.pm clone_disk for a move: the copy is allocated at `efisize` (get_efivars_size), not at the
    # source's size: 4M on LVM, 528K back on a file storage
    ok(run(sim, 'POST', Q + '/110/move_disk', {'disk': 'efidisk0', 'storage': 'lvm', 'delete': 1}))
    assert config(sim, 110)['efidisk0'] == 'lvm:vm-110-disk-0,efitype=4m,size=4M'
    ok(run(sim, 'POST', Q + '/110/move_disk', {'disk': 'efidisk0', 'storage': 'nfs', 'delete': 1}))
    assert config(sim, 110)['efidisk0'] == 'nfs:110/vm-110-disk-0.raw,efitype=4m,size=528K'
    # Qemu.pm clone_vm: a linked clone links efidisk0 and the disks, but copies tpmstate0 in full (with
    # cloud-init it is among the drives cloned with the 'copy' feature), on the source's storage
    before = used(sim)
    ok(run(sim, 'POST', Q + '/9100/clone', {'newid': 201, 'name': 'linked'}))
    cfg = config(sim, 201)
    assert (cfg['efidisk0'], cfg['scsi0'], cfg['tpmstate0']) == (
        'ceph:base-9100-disk-0/vm-201-disk-0,efitype=4m,pre-enrolled-keys=1,size=1M',
        'ceph:base-9100-disk-1/vm-201-disk-1,size=2G', 'ceph:vm-201-disk-2,size=4M,version=v2.0')
    assert volumes(sim, 'ceph')['ceph:vm-201-disk-2']['vmid'] == 201
    assert grown(before, used(sim)) == {'ceph': 4 * MIB}
    # a full clone to a file storage: EFI vars at their own size again
    ok(run(sim, 'POST', Q + '/9100/clone', {'newid': 202, 'full': 1, 'storage': 'nfs'}))
    cfg = config(sim, 202)
    assert (cfg['efidisk0'], cfg['tpmstate0']) == ('nfs:202/vm-202-disk-0.raw,efitype=4m,pre-enrolled-keys=1,size=528K',
                                                   'nfs:202/vm-202-disk-2.raw,size=4M,version=v2.0')
