"""Formats of new volumes and cloud-init drives, as pve-storage 9.1.7 and qemu-server 9.2.6 decide them
(docs/pve-semantics.md §42), on `tests/seeds/volume_chain.json`: one storage of each type and a thick LVM
storage with PVE 9's `snapshot-as-volume-chain`. Each test names the source it follows."""

import os

import pytest

from conftest import Q, config, create, error_of, run, volumes

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
    assert [v for v in volumes(sim, 'dirs')] == ['dirs:import/debian.qcow2']


def test_a_create_with_two_cloud_init_drives_is_refused(sim):
    # Qemu.pm create_disks in create_vm: has_cloudinit on the drives made so far (`$res`), keys in sorted
    # order; create_disks frees what it made and no VM is left
    status = run(sim, 'POST', Q, {'vmid': 104, 'ide2': 'thin:cloudinit', 'scsi5': 'dirs:cloudinit'})
    assert status['exitstatus'] == "unable to create VM 104 - scsi5 - cloud-init drive is already attached at 'ide2'"
    assert volumes(sim, 'thin') == {} and list(volumes(sim, 'dirs')) == ['dirs:import/debian.qcow2']
    assert 104 not in [vm['vmid'] for vm in sim.api('GET', '/nodes/pve1/qemu')]


def test_an_import_volume_is_a_source_and_never_a_drives_volume(sim):
    # Qemu.pm $check_storage_access: a drive's existing volume must be of type images or iso (parse_volname:
    # `import/...` is `import`), in a create and an update, before the volume is looked for; as `import-from`
    # it is a source (create_disks)
    for params in ({'vmid': 107, 'scsi0': 'dirs:import/debian.qcow2'}, {'vmid': 107, 'scsi0': 'dirs:import/no.qcow2'}):
        err = error_of(sim.api, 'POST', Q, params)
        assert (err.status, err.errors) == (400, {'scsi0': "content type needs to be 'images' or 'iso'"})
    cfg = create(sim, 107, scsi0='thin:0,import-from=dirs:import/debian.qcow2')
    assert disk(cfg) == 'thin:vm-107-disk-0' and 'import-from' not in cfg['scsi0']
    err = error_of(sim.api, 'PUT', Q + '/107/config', {'scsi1': 'dirs:import/debian.qcow2'})
    assert (err.status, err.errors) == (400, {'scsi1': "content type needs to be 'images' or 'iso'"})


def test_a_disk_moves_only_to_a_vm_on_the_same_node(sim):
    # Qemu.pm move_vm_disk, $load_and_check_reassign_configs: the VMs' nodes from the cluster's VM list, before
    # the fork; nothing moves
    create(sim, 108, scsi0='thin:1', scsi1='thin:1')
    ok_status = run(sim, 'POST', '/nodes/pve2/qemu', {'vmid': 109, 'scsi0': 'dirs:1'})
    assert ok_status['exitstatus'] == 'OK'
    err = error_of(sim.api, 'POST', Q + '/108/move_disk', {'disk': 'scsi1', 'target-vmid': 109})
    assert (err.status, err.message) == (500, 'Both VMs need to be on the same node (pve1 != pve2)')
    assert disk(config(sim, 108), 'scsi1') == 'thin:vm-108-disk-1'


def test_a_qcow2_disk_moved_to_plain_lvm_becomes_raw(sim):
    # Qemu.pm move_vm_disk → QemuServer.pm clone_disk → resolve_dst_disk_format: the source's format is only a
    # hint, Storage.pm resolve_format_hint keeps it where the target's get_formats lists it, else the target's
    # default; LVMPlugin.pm get_formats lists raw only without snapshot-as-volume-chain (raw and qcow2 with it)
    create(sim, 110, scsi0='nfs-qcow:1', scsi1='nfs-qcow:1')
    status = run(sim, 'POST', Q + '/110/move_disk', {'disk': 'scsi0', 'storage': 'lvm-thick'})
    assert status['exitstatus'] == 'OK'
    assert disk(config(sim, 110)) == 'lvm-thick:vm-110-disk-0'
    assert volumes(sim, 'lvm-thick')['lvm-thick:vm-110-disk-0']['format'] == 'raw'
    status = run(sim, 'POST', Q + '/110/move_disk', {'disk': 'scsi1', 'storage': 'chain'})
    assert status['exitstatus'] == 'OK'
    assert disk(config(sim, 110), 'scsi1') == 'chain:vm-110-disk-0.qcow2'


# Every format qemu-server's drive schema allows (QemuServer/Drive.pm `format`).
SCHEMA_FORMATS = ('raw', 'qcow', 'qed', 'qcow2', 'vmdk', 'cloop')


def new_disk_outcome(kind, fmt):
    """What PVE makes of a new disk `<storage>:1,format=<fmt>` of VM 102: API2/Qemu.pm create_disks hands the
    format to Storage.pm vdisk_alloc as it is, with no check of the storage's formats; the plugin's
    alloc_image decides. Returns the volume name, or the error."""
    if kind in ('dir', 'nfs', 'cifs'):
        # Plugin.pm alloc_image: find_free_diskname names it `.<fmt>`, parse_name_dir accepts raw, qcow2,
        # vmdk (and subvol) only
        if fmt in ('raw', 'qcow2', 'vmdk'):
            return '102/vm-102-disk-0.' + fmt
        return "unable to parse volume filename 'vm-102-disk-0.{0}'".format(fmt)
    if kind == 'rbd':
        return 'vm-102-disk-0'  # RBDPlugin.pm alloc_image ignores the format: an RBD image is raw
    if kind == 'chain' and fmt == 'qcow2':
        return 'vm-102-disk-0.qcow2'
    if kind == 'lvm' and fmt == 'qcow2':
        return 'snapshot-as-volume-chain option need to be enabled to use qcow2 format'
    # LVMPlugin.pm alloc_lvm_image, LvmThinPlugin.pm and ZFSPoolPlugin.pm alloc_image
    return 'vm-102-disk-0' if fmt == 'raw' else "unsupported format '{0}'".format(fmt)


@pytest.mark.parametrize('fmt', SCHEMA_FORMATS)
@pytest.mark.parametrize('storage, kind', [
    ('dirs', 'dir'), ('nfs-qcow', 'nfs'), ('smb', 'cifs'), ('ceph', 'rbd'), ('zfs-thick', 'zfspool'),
    ('lvm-thick', 'lvm'), ('thin', 'lvmthin'), ('chain', 'chain'),
])
def test_a_new_disk_in_each_schema_format_on_each_storage_type(sim, storage, kind, fmt):
    want = new_disk_outcome(kind, fmt)
    status = run(sim, 'POST', Q, {'vmid': 102, 'scsi0': '{0}:1,format={1}'.format(storage, fmt)})
    if want.startswith(('102/', 'vm-')):
        assert status['exitstatus'] == 'OK'
        assert disk(config(sim, 102)) == storage + ':' + want
    else:
        assert status['exitstatus'] == 'unable to create VM 102 - ' + want
        assert [v for v, item in volumes(sim, storage).items() if item.get('vmid') == 102] == []


@pytest.mark.parametrize('fmt', ('qed', 'cloop'))
def test_a_cloud_init_drive_named_with_an_extension_parse_name_dir_refuses(sim, fmt):
    # Qemu.pm create_disks → Cloudinit.pm: `vm-<vmid>-cloudinit.<fmt>` on a storage with a path;
    # Plugin.pm alloc_image → parse_name_dir dies on it
    status = run(sim, 'POST', Q, {'vmid': 102, 'ide2': 'dirs:cloudinit,format=' + fmt})
    assert status['exitstatus'] == "unable to create VM 102 - unable to parse volume filename " \
        "'vm-102-cloudinit.{0}'".format(fmt)
