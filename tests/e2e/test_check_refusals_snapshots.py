"""Check versus real, issue 32: the refusals a VM's snapshots cause, and the clone refusals a storage's type decides
(docs/pve-semantics.md §45, §26.4, §22.3).

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must agree
task by task (test_check_vs_real.py's `run_batch` and `compare_row`); every refused row is refused before any write
in both runs. The seed's VMs carry snapshots (a snapshot is a section of the config file; pvesim's snapshots.py):

1. Qemu.pm `template`: "unable to create template, because VM contains snapshots";
2. Qemu.pm `move_vm_disk` with `delete` ("you can't move a disk with snapshots and delete the source") and to another
   VM ("Can't move disk used by a snapshot to another VM"), QemuServer/Drive.pm `is_volume_in_use`; the reassign's
   checks of the drive before it (a CD-ROM, a volume PVE does not manage);
3. QemuServer.pm `try_deallocate_drive` for an `unusedN` removed (Qemu.pm `update_vm_api`) and for a drive removed
   with `force` (through `vmconfig_apply_pending`, which names the option);
4. Qemu.pm `clone_vm` (through `vm_config`'s read of the snapshot): a `snapname` that does not exist;
5. Qemu.pm `clone_vm` to another node (`target`): a non-shared target storage, a source on local storage; and a
   linked clone of a volume whose storage cannot link (LVMPlugin.pm `volume_has_feature`: thick LVM);
6. Qemu.pm `create_vm`: a drive option beside `archive` (a restore takes the archive's drives).

The rows that PVE takes (a snapshot that does not use the moved or removed volume) show the check is not wider
than PVE's.
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

# A snapshot of a VM of `_vm`'s shape, `over` its drives.
def _snap(vmid, **over):
    snap = {'cores': 1, 'memory': '1024', 'ostype': 'l26', 'scsihw': 'virtio-scsi-single',
            'scsi0': 'local-lvm:vm-%d-disk-0,size=4G' % vmid, 'snaptime': 1767225600}
    snap.update(over)
    return snap


def _snapped(vmid, snapshots, **config):
    return dict(_vm(vmid, 'row-%d' % vmid, **config), snapshots=snapshots)


# Rows' VMs: 400-409 and 415-417, templates 9010-9011; the clones and the restore would be 410-414.
VMS = [
    _snapped(400, {'before': _snap(400)}),
    _snapped(401, {'before': _snap(401, scsi1='local-lvm:vm-401-disk-1,size=1G')},
             scsi1='local-lvm:vm-401-disk-1,size=1G'),
    _snapped(402, {'before': _snap(402, scsi1='local-lvm:vm-402-disk-1,size=1G')},
             scsi1='local-lvm:vm-402-disk-1,size=1G'),
    _vm(403, 'row-403'),
    _snapped(404, {'before': _snap(404, scsi1='local-lvm:vm-404-disk-2,size=1G')},
             unused0='local-lvm:vm-404-disk-2'),
    _snapped(405, {'before': _snap(405, scsi1='local-lvm:vm-405-disk-1,size=1G')},
             scsi1='local-lvm:vm-405-disk-1,size=1G'),
    # snapshots that do not use the volume the row moves or frees
    _snapped(406, {'before': _snap(406)}, scsi1='local-lvm:vm-406-disk-1,size=1G'),
    _snapped(407, {'before': _snap(407)}, unused0='local-lvm:vm-407-disk-2'),
    _snapped(408, {'before': _snap(408)}, scsi1='local-lvm:vm-408-disk-1,size=1G'),
    _vm(409, 'row-409'),
    _vm(416, 'row-416', ide2='isos:iso/debian-13-netinst.iso,media=cdrom,size=754M'),
    _vm(417, 'row-417', scsi1='/dev/disk/by-id/ata-SAMSUNG-1,size=1G'),
    dict(_snapped(415, {'before': _snap(415, scsi1='local-lvm:vm-415-disk-1,size=1G')},
                  scsi1='local-lvm:vm-415-disk-1,size=1G'), status='running'),
    _vm(9010, 'zfs-template', template=True, scsi0='snap-zfs:base-9010-disk-0,size=1G'),
    _vm(9011, 'san-template', template=True, scsi0='snap-san:vm-9011-disk-0,size=1G'),
]

GIB = 1024 ** 3
STORAGES = {
    'snap-zfs': {'type': 'zfspool', 'pool': 'rpool/snap', 'sparse': 1, 'content': 'images', 'shared': 0},
    'snap-san': {'type': 'lvm', 'vgname': 'snapsan', 'shared': 1, 'content': 'images', 'total': 100 * GIB},
}


def _seed(tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages.update(copy.deepcopy(STORAGES))
    return write_seed(tmp_path, 'snapshots', VMS, storages=storages)


IN_USE = "unable to delete 'local-lvm:vm-%d-disk-%d' - volume is still in use (snapshot?)"
REFUSED = [
    one('snapshots: template', kvm(node='pve1', vmid=400, state='template'),
        real_failure='unable to create template, because VM contains snapshots'),
    one('snapshots: move with delete', disk(vmid=401, disk='scsi1', state='moved', target_storage='nvme-pool',
                                            delete_moved=True),
        real_failure="you can't move a disk with snapshots and delete the source"),
    one('snapshots: disk to another VM', disk(vmid=402, disk='scsi1', state='moved', target_vmid=403,
                                              target_disk='scsi3'),
        real_failure="Can't move disk used by a snapshot to another VM"),
    # the same checks of move_vm_disk's reassign, before the snapshot's
    one('reassign: a CD-ROM', disk(vmid=416, disk='ide2', state='moved', target_vmid=403, target_disk='ide3'),
        real_failure="CD drive contents can't be moved to another VM"),
    one('reassign: a path', disk(vmid=417, disk='scsi1', state='moved', target_vmid=403, target_disk='scsi4'),
        real_failure="Volume '/dev/disk/by-id/ata-SAMSUNG-1' not managed by PVE"),
    one('snapshots: unused disk remove', disk(vmid=404, disk='unused0', state='absent'),
        real_failure=IN_USE % (404, 2)),
    one('snapshots: disk remove', disk(vmid=405, disk='scsi1', state='absent'),
        real_failure='unable to apply pending change scsi1 : ' + IN_USE % (405, 1)),
    # a running VM unplugs the drive (disk hotplug, PVE's default), then fails to free it
    one('snapshots: disk remove, running', disk(vmid=415, disk='scsi1', state='absent'),
        real_failure='hotplug problem - ' + IN_USE % (415, 1)),
    one('snapshots: clone from a missing snapshot', kvm(node='pve1', vmid=400, clone='row-400', snapname='nope',
                                                        newid=410, name='row-410'),
        real_failure="snapshot 'nope' does not exist"),
    one('clone: local storage to another node', kvm(node='pve1', vmid=9010, clone='zfs-template', newid=411,
                                                    name='row-411', target='pve2', full=False),
        real_failure="can't clone VM to node 'pve2' (VM uses local storage)"),
    one('clone: to non-shared storage on another node', kvm(node='pve1', vmid=9000, clone='debian-13-template',
                                                            newid=412, name='row-412', target='pve2',
                                                            storage='snap-zfs', full=True),
        real_failure="can't clone to non-shared storage 'snap-zfs'"),
    one('clone: linked on thick lvm', kvm(node='pve1', vmid=9011, clone='san-template', newid=413, name='row-413',
                                          full=False),
        real_failure="Linked clone feature is not supported for 'snap-san:vm-9011-disk-0' (scsi0)"),
    # Qemu.pm create_vm: a restore takes its drives from the archive
    one('restore: a drive beside the archive', kvm(node='pve1', vmid=414, name='row-414',
                                                   archive='local:backup/vzdump-qemu-100.vma.zst',
                                                   scsi={'scsi0': 'local-lvm:4'}),
        real_failure="scsi0: option conflicts with option 'archive'"),
]

TAKEN = [
    one('snapshots elsewhere: move with delete', disk(vmid=406, disk='scsi1', state='moved',
                                                      target_storage='nvme-pool', delete_moved=True),
        real_changed=True),
    one('snapshots elsewhere: unused disk remove', disk(vmid=407, disk='unused0', state='absent'), real_changed=True),
    one('snapshots elsewhere: disk to another VM', disk(vmid=408, disk='scsi1', state='moved', target_vmid=409,
                                                        target_disk='scsi3'), real_changed=True),
]

CENSUS_ROWS = REFUSED
CENSUS = {
    'snapshots: template': ['R-template-02'],
    'snapshots: move with delete': ['R-move-05'],
    'snapshots: disk to another VM': ['R-move-12'],
    'reassign: a CD-ROM': ['R-move-12'],
    'reassign: a path': ['R-move-12'],
    'snapshots: unused disk remove': ['R-config-10'],
    'snapshots: disk remove': ['R-config-10'],
    'snapshots: disk remove, running': ['R-config-10'],
    'snapshots: clone from a missing snapshot': ['R-clone-06'],
    'clone: local storage to another node': ['R-clone-03'],
    'clone: to non-shared storage on another node': ['R-clone-03'],
    'clone: linked on thick lvm': ['R-clone-11'],
    'restore: a drive beside the archive': ['R-create-03'],
}


def test_snapshot_and_storage_refusals_are_predicted_alike_in_check_and_real_runs(ansible, sim, tmp_path, summary):
    seed = _seed(tmp_path)
    problems = {}
    problems.update(run_batch(ansible, sim, seed, REFUSED, writes_nothing=True))
    problems.update(run_batch(ansible, sim, seed, TAKEN))
    rows = REFUSED + TAKEN
    assert_rows_agree(summary, 'check-versus-real (issue 32, snapshots)', rows, problems)
