"""Storage types as pve-storage 9.1.7 has them (docs/pve-semantics.md §22): names of new disks and of linked
clones, formats, capacity, shared versus local, on `tests/seeds/every_storage_type.json` (one storage of
each type) and on the second seed `seeds/ceph.json`. Each test names the source it follows."""

import os

import pytest

from conftest import Q, config, create, error_of, ok, run, volumes

EVERY = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'seeds', 'every_storage_type.json')
pytestmark = pytest.mark.pvesim_seed(EVERY)
GIB = 1024 ** 3


def disk(cfg, key='scsi0'):
    return cfg[key].split(',')[0]


@pytest.mark.parametrize('storage, first, second', [
    ('dirs', 'dirs:101/vm-101-disk-0.raw', 'dirs:101/vm-101-disk-1.qcow2'),
    ('nfs-qcow', 'nfs-qcow:101/vm-101-disk-0.qcow2', 'nfs-qcow:101/vm-101-disk-1.qcow2'),
    # numbers are counted per format on nfs and cifs (Plugin.pm $get_vm_disk_number)
    ('smb', 'smb:101/vm-101-disk-0.raw', 'smb:101/vm-101-disk-0.qcow2'),
    # RBDPlugin.pm alloc_image takes no format: the image is raw whatever the drive asked
    ('ceph', 'ceph:vm-101-disk-0', 'ceph:vm-101-disk-1'),
])
def test_new_disk_names_and_formats_on_file_storages_and_rbd(sim, storage, first, second):
    # Qemu.pm create_disks (format= or Storage.pm storage_default_format: the plugin's get_formats, the
    # storage's `format` option first); Plugin.pm alloc_image / find_free_diskname; RBDPlugin.pm alloc_image
    cfg = create(sim, 101, scsi0=storage + ':1', scsi1=storage + ':1,format=qcow2')
    assert (disk(cfg), disk(cfg, 'scsi1')) == (first, second)
    listed = volumes(sim, storage)
    assert listed[first]['format'] == ('qcow2' if first.endswith('qcow2') else 'raw')
    assert listed[second]['vmid'] == 101 and listed[second]['size'] == GIB


@pytest.mark.parametrize('storage, message', [
    ('lvm-thick', 'snapshot-as-volume-chain option need to be enabled to use qcow2 format'),
    ('thin', "unsupported format 'qcow2'"),
    ('zfs-thick', "unsupported format 'qcow2'"),
])
def test_block_storages_are_raw_only(sim, storage, message):
    # LVMPlugin.pm alloc_lvm_image, LvmThinPlugin.pm alloc_image, ZFSPoolPlugin.pm alloc_image; the failed
    # create frees what it made (Qemu.pm create_disks) and leaves no config
    status = run(sim, 'POST', Q, {'vmid': 102, 'scsi0': storage + ':1', 'scsi1': storage + ':1,format=qcow2'})
    assert status['exitstatus'] == 'unable to create VM 102 - ' + message
    assert volumes(sim, storage) == {}
    cfg = create(sim, 102, scsi0=storage + ':1')
    assert disk(cfg) == storage + ':vm-102-disk-0'


@pytest.mark.parametrize('storage, base, linked', [
    # Plugin.pm clone_image: a qcow2 overlay named after its base, whatever the base's format
    ('dirs', 'dirs:103/base-103-disk-0.raw', 'dirs:103/base-103-disk-0.raw/203/vm-203-disk-0.qcow2'),
    ('nfs-qcow', 'nfs-qcow:103/base-103-disk-0.qcow2', 'nfs-qcow:103/base-103-disk-0.qcow2/203/vm-203-disk-0.qcow2'),
    ('smb', 'smb:103/base-103-disk-0.raw', 'smb:103/base-103-disk-0.raw/203/vm-203-disk-0.qcow2'),
    # RBDPlugin.pm and ZFSPoolPlugin.pm clone_image: base-<tid>-disk-<n>/vm-<id>-disk-<m>
    ('ceph', 'ceph:base-103-disk-0', 'ceph:base-103-disk-0/vm-203-disk-0'),
    ('zfs-thick', 'zfs-thick:base-103-disk-0', 'zfs-thick:base-103-disk-0/vm-203-disk-0'),
    # LvmThinPlugin.pm clone_image: a thin snapshot whose name does not show the base
    ('thin', 'thin:base-103-disk-0', 'thin:vm-203-disk-0'),
])
def test_templates_and_linked_clones_are_named_as_each_plugin_names_them(sim, storage, base, linked):
    # QemuServer.pm template_create → Storage.pm vdisk_create_base; Qemu.pm clone_vm → clone_image;
    # the clone owns its volume (each plugin's parse_volname), and its base keeps the template (QemuServer.pm
    # destroy_vm → Storage.pm volume_is_base_and_used → `base volume ... is still in use by linked cloned`)
    # where the listed clone's name names its base: not on lvmthin, whose base PVE frees (§32.2)
    create(sim, 103, scsi0=storage + ':2')
    ok(run(sim, 'POST', Q + '/103/template'))
    assert disk(config(sim, 103)) == base
    ok(run(sim, 'POST', Q + '/103/clone', {'newid': 203, 'name': 'linked'}))
    assert config(sim, 203)['scsi0'] == linked + ',size=2G'
    item = volumes(sim, storage)[linked]
    assert (item['vmid'], item['size']) == (203, 2 * GIB)
    info = sim.api('GET', '/nodes/pve1/storage/{0}/content/{1}'.format(storage, linked))
    assert info['format'] == ('qcow2' if linked.endswith('.qcow2') else 'raw')
    status = run(sim, 'DELETE', Q + '/103')
    if storage == 'thin':
        ok(status)
        assert list(volumes(sim, storage)) == [linked]
        ok(run(sim, 'DELETE', Q + '/203'))
        assert volumes(sim, storage) == {}
        return
    assert status['exitstatus'] == "base volume '{0}' is still in use by linked cloned".format(base)
    ok(run(sim, 'DELETE', Q + '/203'))
    assert linked not in volumes(sim, storage)
    ok(run(sim, 'DELETE', Q + '/103'))
    assert volumes(sim, storage) == {}


def test_thick_lvm_has_no_templates_linked_clones_or_snapshots(sim):
    # QemuServer.pm template_create skips a volume without the 'template' feature and Qemu.pm clone_vm
    # checks 'clone' (LVMPlugin.pm volume_has_feature offers neither for raw); AbstractConfig.pm
    # snapshot_create: `snapshot feature is not available`; a full clone copies ('copy' on base and current)
    create(sim, 104, scsi0='lvm-thick:1')
    status = run(sim, 'POST', Q + '/104/snapshot', {'snapname': 'before'})
    assert status['exitstatus'] == 'snapshot feature is not available'
    ok(run(sim, 'POST', Q + '/104/template'))
    cfg = config(sim, 104)
    assert (cfg['template'], disk(cfg)) == (1, 'lvm-thick:vm-104-disk-0')
    err = error_of(sim.api, 'POST', Q + '/104/clone', {'newid': 204})
    assert (err.status, err.message) == (500, "Linked clone feature is not supported for 'lvm-thick:vm-104-disk-0' "
                                              "(scsi0)")
    ok(run(sim, 'POST', Q + '/104/clone', {'newid': 204, 'full': 1}))
    assert disk(config(sim, 204)) == 'lvm-thick:vm-204-disk-0'
    # on thin LVM the same VM takes a snapshot (LvmThinPlugin.pm volume_has_feature: snapshot current)
    create(sim, 105, scsi0='thin:1')
    ok(run(sim, 'POST', Q + '/105/snapshot', {'snapname': 'before'}))


def test_capacity_status_and_what_each_type_refuses_when_full(sim):
    # pve-storage Status.pm: total, used, avail of each storage; the thick types refuse at allocation:
    # LVMPlugin.pm alloc_lvm_image (then lvcreate, 4 MiB extents) and volume_resize (lvextend),
    # ZFSPoolPlugin.pm zfs_create_zvol (a non-sparse zvol reserves its size); thin LVM and RBD over-provision
    # (LvmThinPlugin.pm, RBDPlugin.pm alloc_image); docs/pve-semantics.md §22.4
    def status(storage):
        item = sim.api('GET', '/nodes/pve1/storage/{0}/status'.format(storage))
        assert item['total'] == item['used'] + item['avail']
        return item
    assert (status('lvm-thick')['total'], status('lvm-thick')['used']) == (20 * GIB, 0)
    create(sim, 106, scsi0='lvm-thick:16')
    assert (status('lvm-thick')['used'], status('lvm-thick')['avail']) == (16 * GIB, 4 * GIB)
    resources = dict((r['storage'], r) for r in sim.api('GET', '/cluster/resources', {'type': 'storage'})
                     if r['node'] == 'pve1')
    assert (resources['lvm-thick']['disk'], resources['lvm-thick']['maxdisk']) == (16 * GIB, 20 * GIB)
    result = run(sim, 'POST', Q, {'vmid': 107, 'scsi0': 'lvm-thick:8'})
    assert result['exitstatus'] == ('unable to create VM 107 - lvcreate \'vg0/vm-107-disk-0\' error:   Volume group '
                                    '"vg0" has insufficient free space (1024 extents): 2048 required.')
    result = run(sim, 'PUT', Q + '/106/resize', {'disk': 'scsi0', 'size': '+5G'})
    assert result['exitstatus'] == ("error resizing volume '/dev/vg0/vm-106-disk-0':   Insufficient free space: "
                                    "1280 extents needed, but only 1024 available")
    ok(run(sim, 'PUT', Q + '/106/resize', {'disk': 'scsi0', 'size': '+4G'}))
    assert status('lvm-thick')['avail'] == 0
    result = run(sim, 'POST', Q, {'vmid': 108, 'scsi0': 'zfs-thick:30'})
    assert result['exitstatus'] == "unable to create VM 108 - zfs error: cannot create 'tank/vm/vm-108-disk-0': " \
                                   "out of space"
    # thin storages count only what is written (LvmThinPlugin.pm status: data_percent; RBDPlugin.pm status:
    # `stored`), so a new 30 GiB volume on a 20 GiB pool leaves it empty (tests/test_storage_space.py)
    for thin in ('thin', 'ceph'):
        create(sim, 109 if thin == 'thin' else 110, scsi0=thin + ':30')
        assert status(thin)['avail'] == 20 * GIB


def test_shared_storage_is_what_a_clone_to_another_node_needs(sim):
    # Plugin.pm parse_config sets `shared` on nfs, cifs and rbd (@SHARED_STORAGE); Qemu.pm clone_vm:
    # `can't clone VM to node ... (VM uses local storage)` and `can't clone to non-shared storage`
    shared = dict((s['storage'], s.get('shared', 0)) for s in sim.api('GET', '/storage'))
    assert shared == {'ceph': 1, 'dirs': 0, 'lvm-thick': 0, 'nfs-qcow': 1, 'smb': 1, 'thin': 0, 'zfs-thick': 0}
    create(sim, 111, scsi0='thin:1', scsi1='ceph:1')
    err = error_of(sim.api, 'POST', Q + '/111/clone', {'newid': 211, 'target': 'pve2'})
    assert (err.status, err.message) == (500, "can't clone VM to node 'pve2' (VM uses local storage)")
    err = error_of(sim.api, 'POST', Q + '/111/clone', {'newid': 211, 'target': 'pve2', 'storage': 'dirs'})
    assert (err.status, err.message) == (500, "can't clone to non-shared storage 'dirs'")
    # a shared target storage does not help a source volume on local storage (check_storage_access_clone)
    err = error_of(sim.api, 'POST', Q + '/111/clone', {'newid': 211, 'target': 'pve2', 'storage': 'smb', 'full': 1})
    assert (err.status, err.message) == (500, "can't clone VM to node 'pve2' (VM uses local storage)")
    create(sim, 112, scsi0='ceph:1', scsi1='nfs-qcow:1')
    ok(run(sim, 'POST', Q + '/112/clone', {'newid': 212, 'target': 'pve2', 'storage': 'smb', 'full': 1}))
    # QemuServer.pm clone_disk → resolve_dst_disk_format: each copy keeps its source's format where the
    # target takes it (cifs numbers per format, §22.2)
    cfg = config(sim, 212, node='pve2')
    assert (disk(cfg), disk(cfg, 'scsi1')) == ('smb:212/vm-212-disk-0.raw', 'smb:212/vm-212-disk-0.qcow2')


@pytest.mark.pvesim_seed('ceph')
def test_the_ceph_seed_clones_its_template_to_both_nodes_and_blocks_live_migration_of_local_disks(sim):
    # seeds/ceph.json: template 9000 on the shared rbd pool; Qemu.pm clone_vm (linked to the other node,
    # the clone's own cloud-init volume on `storage`, QemuServer.pm clone_disk); QemuMigrate.pm
    # scan_local_volumes: only the local-zfs disk of running VM 120 needs with-local-disks, not the NFS one
    types = dict((s['storage'], (s['type'], s.get('shared', 0))) for s in sim.api('GET', '/storage'))
    assert types == {'ceph': ('rbd', 1), 'local': ('dir', 0), 'local-lvm': ('lvmthin', 0),
                     'local-zfs': ('zfspool', 0), 'san-lvm': ('lvm', 1), 'truenas': ('nfs', 1)}
    ok(run(sim, 'POST', Q + '/9000/clone', {'newid': 130, 'name': 'web-1', 'target': 'pve2'}))
    cfg = config(sim, 130, node='pve2')
    assert (disk(cfg, 'efidisk0'), disk(cfg), disk(cfg, 'ide2')) == (
        'ceph:base-9000-disk-0/vm-130-disk-0', 'ceph:base-9000-disk-1/vm-130-disk-1', 'ceph:vm-130-cloudinit')
    # a full copy keeps the source's raw format on the qcow2-default NFS storage, cloud-init too
    # (QemuServer.pm clone_disk → resolve_dst_disk_format)
    ok(run(sim, 'POST', Q + '/9000/clone', {'newid': 131, 'full': 1, 'storage': 'truenas'}))
    cfg = config(sim, 131)
    assert (disk(cfg), disk(cfg, 'ide2')) == ('truenas:131/vm-131-disk-1.raw', 'truenas:131/vm-131-cloudinit.raw')
    status = run(sim, 'POST', '/nodes/pve2/qemu/120/migrate', {'target': 'pve1', 'online': 1})
    assert status['exitstatus'] == 'migration aborted'
    log = [line['t'] for line in sim.api('GET', '/nodes/pve2/tasks/{0}/log'.format(status['upid']))]
    assert any("can't migrate local disk 'local-zfs:vm-120-disk-0': can't live migrate attached local disks" in line
               for line in log)
    assert not any('truenas' in line for line in log)


@pytest.mark.pvesim_seed('ceph')
def test_a_linked_clones_disk_moved_to_another_vm_keeps_its_base_and_moved_to_a_storage_is_copied(sim):
    # Qemu.pm move_vm_disk: with target-vmid, RBDPlugin.pm rename_volume keeps the `base-.../` part; to a
    # storage, a full copy named as that storage names a new disk (docs/pve-semantics.md §12, §22.3)
    ok(run(sim, 'POST', Q + '/9000/clone', {'newid': 140, 'name': 'linked'}))
    create(sim, 141, name='receiver')
    ok(run(sim, 'POST', Q + '/140/move_disk', {'disk': 'scsi0', 'target-vmid': 141, 'target-disk': 'scsi1'}))
    assert disk(config(sim, 141), 'scsi1') == 'ceph:base-9000-disk-1/vm-141-disk-0'
    assert volumes(sim, 'ceph')['ceph:base-9000-disk-1/vm-141-disk-0']['vmid'] == 141
    ok(run(sim, 'POST', Q + '/140/move_disk', {'disk': 'efidisk0', 'storage': 'local-lvm', 'delete': 1}))
    assert disk(config(sim, 140), 'efidisk0') == 'local-lvm:vm-140-disk-0'
    assert 'ceph:base-9000-disk-0/vm-140-disk-0' not in volumes(sim, 'ceph')
