"""Check versus real, issue 32 (storages, formats and volumes): refusals `--check` predicts before any write.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must
agree task by task (test_check_vs_real.py's `run_batch` and `compare_row`); a row with `real_failure` fails
in both runs with PVE's words, and the check run writes nothing.

1. A new disk in a format its storage does not make: Qemu.pm `create_disks` hands `format=` to Storage.pm
   `vdisk_alloc` as it is, and LvmThinPlugin.pm `alloc_image` (`unsupported format 'qcow2'`) or
   LVMPlugin.pm `alloc_lvm_image` (`snapshot-as-volume-chain option need to be enabled to use qcow2
   format`) refuses it, or on a file storage Plugin.pm `alloc_image`'s `parse_name_dir` the name
   `vm-<vmid>-disk-<n>.<fmt>` of a format it has no extension for (`unable to parse volume filename`); with
   `snapshot-as-volume-chain` a thick LVM storage makes qcow2 volumes named
   `vm-<vmid>-disk-<n>.qcow2` (LVMPlugin.pm `get_formats`, `find_free_diskname`; docs/pve-semantics.md
   §42.1).
4. A drive on an existing volume of the wrong content: an ISO without `media=cdrom` (Qemu.pm
   `$check_drive_param`), an `import/` volume as a disk's volume (`$check_storage_access`: `content type needs
   to be 'images' or 'iso'`; an import volume is only an `import-from` source) (§42.4).
5. A disk moved to a VM on another node: Qemu.pm `move_vm_disk` (`Both VMs need to be on the same node`).
3. Growing a disk on thick LVM beyond its free space: LVMPlugin.pm `volume_resize` (`lvextend`) refuses it
   (`error resizing volume '<path>':   Insufficient free space: ...`; §42.3).
2. A second cloud-init drive: Qemu.pm `create_disks` with QemuConfig.pm `has_cloudinit` (`<key> - cloud-init
   drive is already attached at '<key>'`), in a config update and in a create (§42.2).
"""

import copy
import json
import os

from test_check_vs_real import Row, SEED_DIR, _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

GIB = 1024 ** 3

# Rows' VMs: 440-460 (446, 448, 449, 450, 453, 459 and 460 are made by the rows).
VMS = [_vm(vmid, 'row-%d' % vmid) for vmid in range(440, 446)] + [
    _vm(447, 'row-447', ide2='local-lvm:vm-447-cloudinit,media=cdrom,size=4M'),
    _vm(451, 'row-451', scsi1='thick-raw:vm-451-disk-0,size=4G'),
    _vm(452, 'row-452', scsi1='thick-raw:vm-452-disk-0,size=4G'),
    _vm(454, 'row-454'),
    _vm(455, 'row-455'),
    _vm(456, 'row-456', scsi1='local-lvm:vm-456-disk-1,size=1G'),
    dict(_vm(457, 'row-457'), node='pve2'),
    _vm(458, 'row-458')]

# A thick LVM storage without volume chains and one with them (PVE 9), 50 GiB each.
LVM = {'thick-raw': {'type': 'lvm', 'vgname': 'thickraw', 'content': 'images', 'shared': 0, 'total': 50 * GIB},
       'thick-chain': {'type': 'lvm', 'vgname': 'thickchain', 'content': 'images', 'shared': 0, 'total': 50 * GIB,
                       'snapshot-as-volume-chain': 1}}


def _seed(tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages.update(copy.deepcopy(LVM))
    storages['local']['files'] = {'import/debian.qcow2': 2 * GIB}
    return write_seed(tmp_path, 'refusals-storage', VMS, storages=storages)


def _volume_in_diff(name):
    """The check and the real run both show the new drive on volume `name`."""
    def expect(check, real):
        problems = []
        for run, result in (('check', check), ('real', real)):
            after = json.dumps(result.get('diff'))
            if name not in after:
                problems.append('%s diff does not show %s: %s' % (run, name, after[:600]))
        return problems
    return expect


def _both(*expects):
    return lambda check, real: [p for expect in expects for p in expect(check, real)]


FORMATS = [
    one('qcow2 on lvmthin (disk)', disk(vmid=440, disk='scsi1', storage='local-lvm', size='1', format='qcow2'),
        real_failure="unsupported format 'qcow2'"),
    one('qcow2 on lvmthin (create)', kvm(node='pve1', vmid=446, name='row-446',
                                         scsi={'scsi0': 'local-lvm:2,format=qcow2'}),
        real_failure="unable to create VM 446 - unsupported format 'qcow2'"),
    one('qcow2 on thick lvm (update)', kvm(node='pve1', vmid=441, update=True,
                                           scsi={'scsi0': 'local-lvm:vm-441-disk-0,size=4G',
                                                 'scsi1': 'thick-raw:1,format=qcow2'}),
        real_failure='snapshot-as-volume-chain option need to be enabled to use qcow2 format'),
    one('qcow2 on thick lvm (disk)', disk(vmid=442, disk='scsi1', storage='thick-raw', size='1', format='qcow2'),
        real_failure='snapshot-as-volume-chain option need to be enabled to use qcow2 format'),
    # PVE 9's volume chains: qcow2 allowed, and the default
    one('qcow2 on a volume chain (disk)', disk(vmid=443, disk='scsi1', storage='thick-chain', size='1',
                                               format='qcow2'),
        real_changed=True, expect=_volume_in_diff('thick-chain:vm-443-disk-0.qcow2')),
    one('default on a volume chain (disk)', disk(vmid=444, disk='scsi1', storage='thick-chain', size='1'),
        real_changed=True, expect=_volume_in_diff('thick-chain:vm-444-disk-0.qcow2')),
    one('raw on a volume chain (disk)', disk(vmid=445, disk='scsi1', storage='thick-chain', size='1', format='raw'),
        real_changed=True, expect=_volume_in_diff('thick-chain:vm-445-disk-0,')),
    # a file storage names the file with the format (Plugin.pm alloc_image), which parse_name_dir refuses
    one('qed on a directory (disk)', disk(vmid=458, disk='scsi1', storage='vmdata', size='1', format='qed'),
        real_failure="unable to parse volume filename 'vm-458-disk-0.qed'"),
    one('cloop on a directory (create)', kvm(node='pve1', vmid=459, name='row-459',
                                             scsi={'scsi0': 'vmdata:1,format=cloop'}),
        real_failure="unable to create VM 459 - unable to parse volume filename 'vm-459-disk-0.cloop'"),
    # a cloud-init drive on a storage with a path: `vm-<vmid>-cloudinit.<fmt>` (create_disks), the same parse
    one('cloud-init qed on a directory (create)', kvm(node='pve1', vmid=460, name='row-460',
                                                      ide={'ide2': 'vmdata:cloudinit,format=qed'}),
        real_failure="unable to create VM 460 - unable to parse volume filename 'vm-460-cloudinit.qed'"),
]

CLOUDINIT = [
    one('second cloud-init drive (update)', kvm(node='pve1', vmid=447, update=True,
                                                ide={'ide2': 'local-lvm:vm-447-cloudinit,media=cdrom',
                                                     'ide3': 'local-lvm:cloudinit'}),
        real_failure="ide3 - cloud-init drive is already attached at 'ide2'"),
    one('two cloud-init drives (create)', kvm(node='pve1', vmid=448, name='row-448', ide={'ide2': 'local-lvm:cloudinit'},
                                              scsi={'scsi0': 'local-lvm:2', 'scsi5': 'vmdata:cloudinit'}),
        real_failure="scsi5 - cloud-init drive is already attached at 'ide2'"),
    one('cloud-init qcow2 on lvmthin (create)', kvm(node='pve1', vmid=449, name='row-449',
                                                    ide={'ide2': 'local-lvm:cloudinit,format=qcow2'}),
        real_failure="unable to create VM 449 - unsupported format 'qcow2'"),
    # LVM with volume chains: a new cloud-init volume is qcow2 there (create_disks)
    one('cloud-init and disk on a volume chain (create)',
        kvm(node='pve1', vmid=450, name='row-450', ide={'ide2': 'thick-chain:cloudinit'},
            scsi={'scsi0': 'thick-chain:1'}),
        real_changed=True, expect=_both(_volume_in_diff('thick-chain:vm-450-cloudinit.qcow2'),
                                        _volume_in_diff('thick-chain:vm-450-disk-0.qcow2'))),
]

# thick-raw: 50 GiB, 8 GiB of it taken by the two 4 GiB LVs
RESIZE = [
    one('grow beyond thick lvm', disk(vmid=451, disk='scsi1', state='resized', size='60G'),
        real_failure="error resizing volume '/dev/thickraw/vm-451-disk-0':   Insufficient free space: 14336 extents "
                     "needed, but only 10752 available"),
    one('grow within thick lvm', disk(vmid=452, disk='scsi1', state='resized', size='+2G'), real_changed=True),
]

CONTENT = [
    one('ISO without media=cdrom (create)', kvm(node='pve1', vmid=453, name='row-453',
                                                ide={'ide2': 'isos:iso/debian-13-netinst.iso'}),
        real_failure="explicit 'media=cdrom' is required for iso images"),
    # PVE refuses the content type before it looks for the volume: an existing one and a missing one alike
    one('missing import volume as a disk (update)', kvm(node='pve1', vmid=455, update=True,
                                                        scsi={'scsi0': 'local-lvm:vm-455-disk-0,size=4G',
                                                              'scsi1': 'local:import/nope.qcow2'}),
        real_failure="content type needs to be 'images' or 'iso'"),
    one('import volume as a disk (update)', kvm(node='pve1', vmid=454, update=True,
                                                scsi={'scsi0': 'local-lvm:vm-454-disk-0,size=4G',
                                                      'scsi1': 'local:import/debian.qcow2'}),
        real_failure="content type needs to be 'images' or 'iso'"),
]

REASSIGN = [
    one('disk to a VM on another node', disk(vmid=456, disk='scsi1', state='moved', target_vmid=457),
        real_failure='Both VMs need to be on the same node (pve1 != pve2)'),
]

CENSUS_ROWS = FORMATS + CLOUDINIT + RESIZE + CONTENT + REASSIGN

# case name -> the census rows (docs/refusals.md) it covers
CENSUS = {
    'qcow2 on lvmthin (disk)': ('R-config-40',),
    'qcow2 on thick lvm (update)': ('R-config-40',),
    'qcow2 on thick lvm (disk)': ('R-config-40',),
    'qcow2 on lvmthin (create)': ('R-create-40',),
    'qed on a directory (disk)': ('R-config-40',),
    'cloop on a directory (create)': ('R-create-40',),
    'cloud-init qed on a directory (create)': ('R-create-40',),
    'cloud-init qcow2 on lvmthin (create)': ('R-create-40',),
    'second cloud-init drive (update)': ('R-config-20',),
    'two cloud-init drives (create)': ('R-create-41',),
    'grow beyond thick lvm': ('R-resize-40',),
    'ISO without media=cdrom (create)': ('R-create-09',),
    'import volume as a disk (update)': ('R-create-08',),
    'missing import volume as a disk (update)': ('R-create-08',),
    'disk to a VM on another node': ('R-move-10',),
}


def test_storage_refusals_are_predicted_by_the_check_run(ansible, sim, tmp_path, summary):
    seed = _seed(tmp_path)
    rows = CENSUS_ROWS
    problems = run_batch(ansible, sim, seed, rows)
    assert_rows_agree(summary, 'check-versus-real (issue 32, storages)', rows, problems)
