"""Every module over every storage type of the second seed (issue 18), check → real → again.

The world is pvesim's `ceph` seed (tests/pvesim/README.md): template 9000 on the shared RBD pool `ceph`,
`truenas` (nfs, qcow2 by default), `local-zfs` (zfspool), `local-lvm` (lvmthin), `san-lvm` (thick lvm,
shared) and `local` (dir; the tests that need a dir storage for images enable that content on it, as an
admin would). Names and refusals are PVE's (docs/pve-semantics.md §8, §12, §15, §22; pve-storage
Plugin.pm `find_free_diskname` and `clone_image`, RBDPlugin.pm / ZFSPoolPlugin.pm `clone_image`
(`base-<tid>-disk-<n>/vm-<id>-disk-<m>`), LVMPlugin.pm `volume_has_feature` (no linked clone on thick
LVM), qemu-server Qemu.pm `clone_vm` (a clone to another node needs shared storage)). Every check run
must predict each volume name exactly: the only `unpredictable` patterns are a clone's new MACs and uuids.
"""

import re

import pytest

pytestmark = pytest.mark.pvesim_seed('ceph')

GIB = 1024 ** 3
# What a clone gets anew (Qemu.pm clone_vm): a MAC for each NIC, the smbios1 uuid and the vmgenid. Only
# these are left to PVE; no volume name is.
CLONE_NEW = [r'[0-9A-F]{2}(?::[0-9A-F]{2}){5}', r'[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}']
ISO = 'local:iso/debian-13.2.0-amd64-netinst.iso'


def kvm(_task, **options):
    return {'name': _task, 'ferro.proxmox.proxmox_kvm': options, 'delegate_to': 'localhost'}


def disk(_task, **options):
    return {'name': _task, 'ferro.proxmox.proxmox_disk': options, 'delegate_to': 'localhost'}


def nic(_task, **options):
    return {'name': _task, 'ferro.proxmox.proxmox_nic': options, 'delegate_to': 'localhost'}


def info(_task, **options):
    return {'name': _task, 'ferro.proxmox.proxmox_vm_info': options, 'delegate_to': 'localhost'}


def play(*tasks):
    return [{'name': 'storage types', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def config(sim, vmid, node='pve1'):
    return sim.api('GET', '/nodes/%s/qemu/%d/config' % (node, vmid))


def volume_of(value):
    return value.split(',')[0]


def volumes(sim, storage, node='pve1'):
    return {item['volid'] for item in sim.api('GET', '/nodes/%s/storage/%s/content' % (node, storage)) or []}


def create_vm(sim, vmid, name, node='pve1', **cfg):
    """A VM made through the API (setup, not under test)."""
    upid = sim.api('POST', '/nodes/%s/qemu' % node, dict({'vmid': vmid, 'name': name}, **cfg))
    assert sim.wait_task(upid)['exitstatus'] == 'OK'


def make_template(sim, vmid, name, **drives):
    """A VM on pve1 made a template through the API (QemuServer.pm template_create)."""
    create_vm(sim, vmid, name, **drives)
    assert sim.wait_task(sim.api('POST', '/nodes/pve1/qemu/%d/template' % vmid))['exitstatus'] == 'OK'


def enable_images_on_local(sim):
    """The admin lets the dir storage `local` hold VM images too (PUT /storage/{storage}, as root)."""
    login = sim.api('POST', '/access/ticket', {'username': 'root@pam', 'password': 'secret'}, token=False)
    ticket = (login['ticket'], login['CSRFPreventionToken'])
    sim.api('PUT', '/storage/local', {'content': 'iso,import,vztmpl,snippets,images'}, token=False, ticket=ticket)


def same_volumes(check, real, tasks):
    """What check mode returned as each task's volume is what the real run made."""
    for name in tasks:
        predicted, made = check.task(name)['result'].get('volume'), real.task(name)['result'].get('volume')
        assert predicted == made, '%s: check said %r, the real run made %r' % (name, predicted, made)


def diff_volumes(run, task):
    """The volume of each drive line in a task's `--diff` after text: what the run says it made."""
    found = {}
    for line in run.task(task)['result']['diff']['after'].splitlines():
        key, _, value = line.partition(': ')
        if re.fullmatch(r'(?:ide|sata|scsi|virtio|efidisk|tpmstate|unused)\d+', key):
            found[key] = volume_of(value)
    return found


def disks_by_key(run, task, vmid):
    (vm,) = [v for v in run.task(task)['result']['proxmox_vms'] if v['vmid'] == vmid]
    return {d['key']: d for d in vm['disks']}


# One storage of each type: rbd, nfs, zfspool, lvmthin, thick lvm, dir.
STORAGES = ['ceph', 'truenas', 'local-zfs', 'local-lvm', 'san-lvm', 'local']


def create_book():
    """proxmox_kvm creates VM 200 with a disk on each storage type, a cloud-init drive on NFS and the ISO
    on dir; proxmox_disk then adds a disk to it (numbered after the create's); vm_info parses it."""
    return play(
        kvm('create', node='pve1', vmid=200, name='every-store', scsihw='virtio-scsi-single',
            scsi=dict(('scsi%d' % i, '%s:2' % s) for i, s in enumerate(STORAGES)),
            ide={'ide0': ISO + ',media=cdrom', 'ide2': 'truenas:cloudinit'}),
        disk('add after create', vmid=200, disk='scsi10', storage='ceph', size='1G'),
        info('info', vmid=200, config='current'),
    )


def test_create_with_a_disk_on_every_storage_type(ansible, sim):
    enable_images_on_local(sim)
    # The ISO's size: read from its storage by PVE, known after apply to proxmox_kvm (§35.3).
    check, real, again = ansible.converge(create_book(), unpredictable=[(r'(iso,media=cdrom,size=)\w+', r'\1<unpredictable>')])
    same_volumes(check, real, ['add after create'])
    cfg = config(sim, 200)
    assert {k: cfg[k] for k in ('scsi0', 'scsi1', 'scsi2', 'scsi3', 'scsi4', 'scsi5', 'scsi10', 'ide2')} == {
        'scsi0': 'ceph:vm-200-disk-0,size=2G',
        'scsi1': 'truenas:200/vm-200-disk-0.qcow2,size=2G',
        'scsi2': 'local-zfs:vm-200-disk-0,size=2G',
        'scsi3': 'local-lvm:vm-200-disk-0,size=2G',
        'scsi4': 'san-lvm:vm-200-disk-0,size=2G',
        'scsi5': 'local:200/vm-200-disk-0.raw,size=2G',
        'scsi10': 'ceph:vm-200-disk-1,size=1G',
        'ide2': 'truenas:200/vm-200-cloudinit.qcow2,media=cdrom,size=4M'}
    # proxmox_vm_info's parsed disks: block volumes, file volumes (format from the name), cloud-init, ISO
    parsed = disks_by_key(real, 'info', 200)
    assert {k: (d['storage'], d['volume'], d['size_bytes'], d['format']) for k, d in parsed.items()
            if k.startswith('scsi')} == {
        'scsi0': ('ceph', 'ceph:vm-200-disk-0', 2 * GIB, None),
        'scsi1': ('truenas', 'truenas:200/vm-200-disk-0.qcow2', 2 * GIB, 'qcow2'),
        'scsi2': ('local-zfs', 'local-zfs:vm-200-disk-0', 2 * GIB, None),
        'scsi3': ('local-lvm', 'local-lvm:vm-200-disk-0', 2 * GIB, None),
        'scsi4': ('san-lvm', 'san-lvm:vm-200-disk-0', 2 * GIB, None),
        'scsi5': ('local', 'local:200/vm-200-disk-0.raw', 2 * GIB, 'raw'),
        'scsi10': ('ceph', 'ceph:vm-200-disk-1', GIB, None)}
    assert (parsed['ide2']['storage'], parsed['ide2']['media'], parsed['ide2']['format']) == ('truenas', 'cdrom', 'qcow2')
    assert (parsed['ide0']['storage'], parsed['ide0']['volume'], parsed['ide0']['media']) == ('local', ISO, 'cdrom')
    assert disks_by_key(again, 'info', 200) == parsed


def disk_ops_setup(sim):
    """VM 210 (stopped, pve1) with a 2G disk on each storage type (scsi0-5), and three more to detach and
    remove (scsi6 on thick LVM, scsi7 on dir, scsi8 on ZFS), made through the API."""
    enable_images_on_local(sim)
    drives = dict(('scsi%d' % i, '%s:2' % s) for i, s in enumerate(STORAGES + ['san-lvm', 'local', 'local-zfs']))
    create_vm(sim, 210, 'disk-ops', scsihw='virtio-scsi-single', **drives)


def disk_ops_book():
    """proxmox_disk on every storage type: add, update, resize, move between types, detach, remove."""
    return play(
        *[disk('add %s' % s, vmid=210, disk='scsi%d' % (10 + i), storage=s, size='1G') for i, s in enumerate(STORAGES)],
        disk('update rbd', vmid=210, disk='scsi0', ssd=True, discard='on'),
        disk('update nfs', vmid=210, disk='scsi1', cache='writeback'),
        *[disk('resize %s' % s, vmid=210, disk='scsi%d' % i, state='resized', size='3G') for i, s in enumerate(STORAGES)],
        # moves between types: raw block to qcow2 file and back, to and from thick LVM
        disk('move rbd to zfs', vmid=210, disk='scsi10', state='moved', target_storage='local-zfs'),
        disk('move nfs to lvmthin', vmid=210, disk='scsi11', state='moved', target_storage='local-lvm'),
        disk('move zfs to nfs', vmid=210, disk='scsi12', state='moved', target_storage='truenas', delete_moved=True),
        disk('move lvmthin to thick lvm', vmid=210, disk='scsi13', state='moved', target_storage='san-lvm',
             delete_moved=True),
        disk('move thick lvm to dir', vmid=210, disk='scsi14', state='moved', target_storage='local'),
        disk('move dir to rbd', vmid=210, disk='scsi15', state='moved', target_storage='ceph', delete_moved=True),
        disk('detach thick lvm', vmid=210, disk='scsi6', state='detached'),
        disk('remove dir', vmid=210, disk='scsi7', state='absent'),
        disk('remove zfs', vmid=210, disk='scsi8', state='absent'),
    )


def test_add_update_resize_move_detach_remove_on_every_storage_type(ansible, sim):
    disk_ops_setup(sim)
    book = disk_ops_book()
    check, real, _ = ansible.converge(book)
    same_volumes(check, real, [t['name'] for t in book[0]['tasks']])
    cfg = config(sim, 210)
    assert {k: cfg.get(k) for k in ('scsi0', 'scsi1', 'scsi2', 'scsi3', 'scsi4', 'scsi5', 'scsi6', 'scsi7', 'scsi8')} == {
        'scsi0': 'ceph:vm-210-disk-0,discard=on,size=3G,ssd=1',
        'scsi1': 'truenas:210/vm-210-disk-0.qcow2,cache=writeback,size=3G',
        'scsi2': 'local-zfs:vm-210-disk-0,size=3G',
        'scsi3': 'local-lvm:vm-210-disk-0,size=3G',
        'scsi4': 'san-lvm:vm-210-disk-0,size=3G',
        'scsi5': 'local:210/vm-210-disk-0.raw,size=3G',
        'scsi6': None, 'scsi7': None, 'scsi8': None}
    # each move named as its target names a new disk (Plugin.pm find_free_diskname, lowest free number)
    assert {k: cfg[k] for k in ('scsi10', 'scsi11', 'scsi12', 'scsi13', 'scsi14', 'scsi15')} == {
        'scsi10': 'local-zfs:vm-210-disk-3,size=1G',
        'scsi11': 'local-lvm:vm-210-disk-2,size=1G',
        # QemuServer.pm resolve_dst_disk_format: the source's format (raw) when the target takes it; NFS
        # numbers among the names of that format (§22.2)
        'scsi12': 'truenas:210/vm-210-disk-0.raw,size=1G',
        'scsi13': 'san-lvm:vm-210-disk-3,size=1G',
        'scsi14': 'local:210/vm-210-disk-3.raw,size=1G',
        'scsi15': 'ceph:vm-210-disk-2,size=1G'}
    # the sources kept are unusedN, the detached disk too; the deleted and removed volumes are gone
    unused = {v for k, v in cfg.items() if k.startswith('unused')}
    assert unused == {'ceph:vm-210-disk-1', 'truenas:210/vm-210-disk-1.qcow2', 'san-lvm:vm-210-disk-2',
                      'san-lvm:vm-210-disk-1'}
    gone = {'local-zfs:vm-210-disk-1', 'local-zfs:vm-210-disk-2', 'local-lvm:vm-210-disk-1',
            'local:210/vm-210-disk-1.raw', 'local:210/vm-210-disk-2.raw'}
    assert gone & set().union(*(volumes(sim, s) for s in STORAGES)) == set()


def clones_book():
    """Linked and full clones of template 9000 (ceph) to both nodes, then disk operations on the linked ones
    and a NIC on the one on pve2."""
    return play(
        kvm('linked here', node='pve1', clone='debian-13-cloud', newid=300, name='linked-1', full=False),
        kvm('linked there', node='pve1', clone='debian-13-cloud', newid=301, name='linked-2', full=False,
            target='pve2'),
        kvm('full to zfs', node='pve1', clone='debian-13-cloud', newid=302, name='full-zfs', storage='local-zfs'),
        kvm('full to nfs there', node='pve1', clone='debian-13-cloud', newid=303, name='full-nfs', storage='truenas',
            target='pve2'),
        kvm('full to thick lvm', node='pve1', clone='debian-13-cloud', newid=304, name='full-san', storage='san-lvm'),
        # a linked clone's disks: base-9000-disk-1/vm-300-disk-1 grown, updated, moved; a new one numbered after it
        disk('resize linked', vmid=300, disk='scsi0', state='resized', size='5G'),
        disk('update linked', vmid=300, disk='scsi0', cache='writeback'),
        disk('add to linked', vmid=300, disk='scsi1', storage='ceph', size='1G'),
        disk('move linked efidisk', vmid=300, disk='efidisk0', state='moved', target_storage='local-lvm',
             delete_moved=True),
        disk('detach linked there', vmid=301, disk='scsi0', state='detached'),
        disk('remove linked there', vmid=301, disk='efidisk0', state='absent'),
        disk('resize full nfs', vmid=303, disk='scsi0', state='resized', size='4G'),
        # proxmox_nic on the clone on the other node (a MAC given, so that no value is left to PVE)
        nic('nic there', vmid=301, interface='net1', model='virtio', mac='BC:24:11:30:01:01', bridge='vmbr1'),
        info('info', config='current'),
    )


def test_full_and_linked_clones_of_the_ceph_template_to_both_nodes_and_their_disks(ansible, sim):
    check, real, again = ansible.converge(clones_book(), unpredictable=CLONE_NEW)
    same_volumes(check, real, ['add to linked', 'move linked efidisk'])
    for name in ('linked here', 'linked there', 'full to zfs', 'full to nfs there', 'full to thick lvm'):
        assert check.task(name)['result']['vmid'] == real.task(name)['result']['vmid'], name
    # each clone's diff names the volumes PVE made: a linked clone's base-<tid>-disk-<n>/vm-<id>-disk-<m>
    # (RBDPlugin.pm clone_image), a full clone's new disks and cloud-init volume on `storage` (QemuServer.pm
    # clone_disk; Plugin.pm find_free_diskname)
    made = {
        'linked here': {'efidisk0': 'ceph:base-9000-disk-0/vm-300-disk-0', 'ide2': 'ceph:vm-300-cloudinit',
                        'scsi0': 'ceph:base-9000-disk-1/vm-300-disk-1'},
        'linked there': {'efidisk0': 'ceph:base-9000-disk-0/vm-301-disk-0', 'ide2': 'ceph:vm-301-cloudinit',
                         'scsi0': 'ceph:base-9000-disk-1/vm-301-disk-1'},
        'full to zfs': {'efidisk0': 'local-zfs:vm-302-disk-0', 'ide2': 'local-zfs:vm-302-cloudinit',
                        'scsi0': 'local-zfs:vm-302-disk-1'},
        # the copies keep the template's raw format on the qcow2-default NFS storage (resolve_dst_disk_format)
        'full to nfs there': {'efidisk0': 'truenas:303/vm-303-disk-0.raw', 'ide2': 'truenas:303/vm-303-cloudinit.raw',
                              'scsi0': 'truenas:303/vm-303-disk-1.raw'},
        'full to thick lvm': {'efidisk0': 'san-lvm:vm-304-disk-0', 'ide2': 'san-lvm:vm-304-cloudinit',
                              'scsi0': 'san-lvm:vm-304-disk-1'},
    }
    for vmid, node, name in ((302, 'pve1', 'full to zfs'), (303, 'pve2', 'full to nfs there'),
                             (304, 'pve1', 'full to thick lvm')):
        cfg = config(sim, vmid, node)
        assert {k: volume_of(cfg[k]) for k in made[name]} == made[name]
    assert {name: diff_volumes(real, name) for name in made} == made

    linked = config(sim, 300)
    assert linked['scsi0'] == 'ceph:base-9000-disk-1/vm-300-disk-1,cache=writeback,discard=on,iothread=1,size=5G,ssd=1'
    assert volume_of(linked['scsi1']) == 'ceph:vm-300-disk-2'
    assert volume_of(linked['efidisk0']) == 'local-lvm:vm-300-disk-0'
    assert volume_of(linked['ide2']) == 'ceph:vm-300-cloudinit'
    assert 'ceph:base-9000-disk-0/vm-300-disk-0' not in volumes(sim, 'ceph')
    there = config(sim, 301, node='pve2')
    assert 'scsi0' not in there and 'efidisk0' not in there
    assert there['unused0'] == 'ceph:base-9000-disk-1/vm-301-disk-1'
    assert 'ceph:base-9000-disk-0/vm-301-disk-0' not in volumes(sim, 'ceph')
    assert volume_of(config(sim, 302)['scsi0']) == 'local-zfs:vm-302-disk-1'
    full_nfs = config(sim, 303, node='pve2')
    assert full_nfs['scsi0'].startswith('truenas:303/vm-303-disk-1.raw,') and full_nfs['scsi0'].endswith('size=4G,ssd=1')
    assert volume_of(config(sim, 304)['scsi0']) == 'san-lvm:vm-304-disk-1'
    assert there['net1'] == 'virtio=BC:24:11:30:01:01,bridge=vmbr1'

    # proxmox_vm_info: a linked clone's volume, a template's base, a file-form full clone
    parsed = disks_by_key(real, 'info', 300)
    assert (parsed['scsi0']['storage'], parsed['scsi0']['volume'], parsed['scsi0']['size_bytes']) == (
        'ceph', 'ceph:base-9000-disk-1/vm-300-disk-1', 5 * GIB)
    assert (parsed['ide2']['volume'], parsed['ide2']['media']) == ('ceph:vm-300-cloudinit', 'cdrom')
    template = disks_by_key(real, 'info', 9000)
    assert (template['scsi0']['storage'], template['scsi0']['volume']) == ('ceph', 'ceph:base-9000-disk-1')
    assert disks_by_key(real, 'info', 303)['scsi0']['format'] == 'raw'
    assert disks_by_key(real, 'info', 301)['unused0']['volume'] == 'ceph:base-9000-disk-1/vm-301-disk-1'
    assert again.changed_tasks == []


def local_linked_setup(sim):
    # ZFSPoolPlugin.pm clone_image: base-<tid>-disk-<n>/vm-<id>-disk-<m>; Plugin.pm clone_image on a file
    # storage: <tid>/base-<tid>-disk-<n>.<fmt>/<id>/vm-<id>-disk-<m>.qcow2
    make_template(sim, 500, 'tpl-local', scsi0='local-zfs:1', scsi1='truenas:1')
    tpl = config(sim, 500)
    assert (volume_of(tpl['scsi0']), volume_of(tpl['scsi1'])) == ('local-zfs:base-500-disk-0',
                                                                   'truenas:500/base-500-disk-0.qcow2')


def local_linked_book():
    return play(
        kvm('linked', node='pve1', clone='tpl-local', newid=501, name='linked-local', full=False),
        disk('resize zfs linked', vmid=501, disk='scsi0', state='resized', size='2G'),
        disk('resize file linked', vmid=501, disk='scsi1', state='resized', size='2G'),
        disk('add nfs', vmid=501, disk='scsi2', storage='truenas', size='1G'),
        disk('add zfs', vmid=501, disk='scsi3', storage='local-zfs', size='1G'),
        disk('move file linked to rbd', vmid=501, disk='scsi1', state='moved', target_storage='ceph'),
        disk('move zfs linked to nfs', vmid=501, disk='scsi0', state='moved', target_storage='truenas',
             delete_moved=True),
        info('info', vmid=501, config='current'),
    )


def test_linked_clones_of_a_template_on_zfs_and_nfs_and_their_disks(ansible, sim):
    local_linked_setup(sim)
    check, real, _ = ansible.converge(local_linked_book(), unpredictable=CLONE_NEW)
    same_volumes(check, real, ['add nfs', 'add zfs', 'move file linked to rbd', 'move zfs linked to nfs'])
    assert diff_volumes(real, 'linked') == {'scsi0': 'local-zfs:base-500-disk-0/vm-501-disk-0',
                                            'scsi1': 'truenas:500/base-500-disk-0.qcow2/501/vm-501-disk-0.qcow2'}
    cfg = config(sim, 501)
    assert cfg['unused0'] == 'truenas:500/base-500-disk-0.qcow2/501/vm-501-disk-0.qcow2'
    assert volume_of(cfg['scsi1']) == 'ceph:vm-501-disk-0'
    assert volume_of(cfg['scsi2']) == 'truenas:501/vm-501-disk-1.qcow2'
    assert volume_of(cfg['scsi3']) == 'local-zfs:vm-501-disk-1'
    assert 'local-zfs:base-500-disk-0/vm-501-disk-0' not in volumes(sim, 'local-zfs')
    parsed = disks_by_key(real, 'info', 501)
    # the file form of a linked clone: <tid>/base-<tid>-disk-<n>.qcow2/<id>/vm-<id>-disk-<m>.qcow2
    assert (parsed['unused0']['storage'], parsed['unused0']['volume'], parsed['unused0']['format']) == (
        'truenas', 'truenas:500/base-500-disk-0.qcow2/501/vm-501-disk-0.qcow2', 'qcow2')
    assert parsed['scsi2']['volume'] == 'truenas:501/vm-501-disk-1.qcow2'


def test_what_pve_refuses_is_refused_alike_in_check_and_real_runs(ansible, sim):
    make_template(sim, 500, 'tpl-zfs', scsi0='local-zfs:1')
    make_template(sim, 600, 'tpl-san', scsi0='san-lvm:1')
    make_template(sim, 700, 'tpl-big', scsi0='local-lvm:150')
    # a directory storage that preallocates its files (100 GiB, pvesim's default size), added by root
    login = sim.api('POST', '/access/ticket', {'username': 'root@pam', 'password': 'secret'}, token=False)
    sim.api('POST', '/storage', {'storage': 'prealloc', 'type': 'dir', 'path': '/mnt/prealloc', 'content': 'images',
                                 'preallocation': 'falloc'},
            token=False, ticket=(login['ticket'], login['CSRFPreventionToken']))
    refusals = {
        # LVMPlugin.pm volume_has_feature: no 'clone' on thick LVM; Qemu.pm clone_vm
        'linked on thick lvm': (kvm('linked on thick lvm', node='pve1', clone='tpl-san', newid=601, name='x1',
                                    full=False),
                                "Linked clone feature is not supported for 'san-lvm:vm-600-disk-0' (scsi0)"),
        # Qemu.pm clone_vm: every source volume must be on shared storage for another node
        'local to other node': (kvm('local to other node', node='pve1', clone='tpl-zfs', newid=502, name='x2',
                                    target='pve2', full=False),
                                "can't clone VM to node 'pve2' (VM uses local storage)"),
        'to local storage there': (kvm('to local storage there', node='pve1', clone='debian-13-cloud', newid=305,
                                       name='x3', target='pve2', storage='local-zfs'),
                                   "can't clone to non-shared storage 'local-zfs'"),
        # Qemu.pm $check_storage_access (create_vm, update_vm_api): the storage must hold `images`
        'create on iso storage': (kvm('create on iso storage', node='pve1', vmid=220, name='x4', scsi={'scsi0': 'local:1'}),
                                  "storage 'local' does not support vm images"),
        'disk on iso storage': (disk('disk on iso storage', vmid=121, disk='scsi1', storage='local', size='1G'),
                                "storage 'local' does not support vm images"),
        # LVMPlugin.pm alloc_lvm_image: thick LVM reserves the size (san-lvm: 200 GiB, 64G used)
        'thick lvm full': (disk('thick lvm full', vmid=121, disk='scsi2', storage='san-lvm', size='150G'),
                           'insufficient free space'),
        # the same for proxmox_kvm's own allocations, each with the words of the call that fails
        # (Qemu.pm create_vm, create_disks in sorted key order, clone_vm → clone_disk)
        'create on thick lvm full': (kvm('create on thick lvm full', node='pve1', vmid=222, name='x5',
                                         scsi={'scsi0': 'san-lvm:150'}),
                                     "unable to create VM 222 - lvcreate 'san/vm-222-disk-0' error:   Volume group "
                                     '"san" has insufficient free space'),
        'create on thick lvm full, next free vmid': (kvm('create on thick lvm full, next free vmid', node='pve1',
                                                         name='x8', scsi={'scsi0': 'san-lvm:150'}),
                                                     'disk-0\' error:   Volume group "san" has insufficient free space'),
        'second disk does not fit': (kvm('second disk does not fit', node='pve1', vmid=223, name='x6',
                                         scsi={'scsi0': 'san-lvm:100', 'scsi1': 'san-lvm:100'}),
                                     "unable to create VM 223 - lvcreate 'san/vm-223-disk-1' error:"),
        'full clone to thick lvm full': (kvm('full clone to thick lvm full', node='pve1', clone='tpl-big', newid=701,
                                             name='x7', full=True, storage='san-lvm'),
                                         "clone failed: lvcreate 'san/vm-701-disk-0' error:"),
        # a disk the task adds to its clone takes space after the clone's copies (checked before the clone)
        'clone with a disk that does not fit': (kvm('clone with a disk that does not fit', node='pve1', clone='tpl-san',
                                                    newid=702, name='x9', scsi={'scsi1': 'san-lvm:150'}),
                                                "scsi.scsi1: lvcreate 'san/vm-702-disk-1' error:"),
        # Plugin.pm alloc_image → qemu_img_create -o preallocation=falloc: the file takes its size at once
        'preallocated file full': (disk('preallocated file full', vmid=121, disk='scsi3', storage='prealloc',
                                        size='150G'),
                                   'unable to create image: qemu-img: /mnt/prealloc/images/121/vm-121-disk-0.raw: '
                                   'Could not preallocate new data: No space left on device'),
    }
    book = play(*[dict(task, ignore_errors=True) for task, _ in refusals.values()])
    wrong = []
    for mode, run in (('check', ansible.run_playbook(book, check=True)), ('real', ansible.run_playbook(book))):
        for name, (_, message) in refusals.items():
            result = run.task(name)
            if result['status'] != 'failed' or message not in result['result'].get('msg', ''):
                wrong.append('%s run, %r: %s %r' % (mode, name, result['status'], result['result'].get('msg')))
    assert wrong == [], 'not refused with PVE\'s message:\n' + '\n'.join(wrong)
    vmids = {int(r['vmid']) for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})}
    assert vmids == {120, 121, 500, 600, 700, 9000}
