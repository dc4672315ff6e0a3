"""Check versus real, issue 32: what a storage's plugin refuses by a volume's name or format (R-any-95, -112, -113).

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must
agree task by task (test_check_vs_real.py's `run_batch` and `compare_row`); every row here fails in both runs
with PVE's words, and the check run writes nothing (docs/pve-semantics.md §57). One playbook run for all rows.

1. A volume name its storage's plugin cannot parse (pve-storage `Storage.pm` `check_volume_access`, each
   plugin's `parse_volname`): a drive on `local-lvm:foo` (LvmThinPlugin.pm), an ISO named without its `iso/`
   directory (Plugin.pm); a resize of a passed-through device, whose path qemu-server's `resize_vm` hands
   to `parse_volname` (Plugin.pm `parse_volume_id`).
2. A resize of a format the plugin cannot resize: Plugin.pm `volume_resize` (a `.vmdk` file).
3. A new disk where storage.cfg's default `format` is `subvol`: Plugin.pm `alloc_image` makes no sized
   subvolume, in a create and in proxmox_disk.
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

# Rows' VMs: 470-476 (473 is made by its row).
VMS = [_vm(470, 'row-470'), _vm(471, 'row-471', ide2='none,media=cdrom'),
       _vm(472, 'row-472', scsi1='vmdata:472/vm-472-disk-1.vmdk,size=1G'),
       _vm(474, 'row-474'), _vm(475, 'row-475', scsi1='/dev/sdb,size=32G'),
       _vm(476, 'row-476', scsi1='vmdata:476/vm-476-disk-1.qcow2,size=1G')]

# A directory storage whose default format is a subvolume (Plugin.pm get_formats: storage.cfg's `format`).
SUBDIR = {'subdir': {'type': 'dir', 'path': '/mnt/subdir', 'content': 'images', 'format': 'subvol', 'shared': 0}}


def _seed(tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages.update(copy.deepcopy(SUBDIR))
    return write_seed(tmp_path, 'refusals-storage-ops', VMS, storages=storages)


NAMES = [
    one('unparsable lvm-thin name (update)', kvm(node='pve1', vmid=470, update=True,
                                                 scsi={'scsi0': 'local-lvm:vm-470-disk-0,size=4G',
                                                       'scsi1': 'local-lvm:foo'}),
        real_failure="unable to parse lvm volume name 'foo'"),
    one('ISO outside iso/ (disk)', disk(vmid=471, disk='ide2', media='cdrom', iso_image='isos:debian-13-netinst.iso'),
        real_failure="unable to parse directory volume name 'debian-13-netinst.iso'"),
    one('resize a passed-through device', disk(vmid=475, disk='scsi1', state='resized', size='+1G'),
        real_failure="unable to parse volume ID '/dev/sdb'"),
]

RESIZE = [
    one('resize a vmdk file', disk(vmid=472, disk='scsi1', state='resized', size='+1G'),
        real_failure="can't resize this image format"),
    one('resize a qcow2 file', disk(vmid=476, disk='scsi1', state='resized', size='2G'), real_changed=True),
]

SUBVOL = [
    one('sized subvolume by default (create)', kvm(node='pve1', vmid=473, name='row-473', scsi={'scsi0': 'subdir:1'}),
        real_failure='unable to create VM 473 - storage does not support subvol quotas'),
    one('sized subvolume by default (disk)', disk(vmid=474, disk='scsi1', storage='subdir', size='1'),
        real_failure='storage does not support subvol quotas'),
]

CENSUS_ROWS = NAMES + RESIZE + SUBVOL

# case name -> the census rows (docs/refusals.md) it covers
CENSUS = {
    'unparsable lvm-thin name (update)': ('R-any-95',),
    'ISO outside iso/ (disk)': ('R-any-95',),
    'resize a passed-through device': ('R-any-95',),
    'resize a vmdk file': ('R-any-112',),
    'sized subvolume by default (create)': ('R-any-113',),
    'sized subvolume by default (disk)': ('R-any-113',),
}


def test_what_a_plugin_refuses_by_name_or_format_is_predicted_by_the_check_run(ansible, sim, tmp_path, summary):
    seed = _seed(tmp_path)
    rows = CENSUS_ROWS
    problems = run_batch(ansible, sim, seed, rows)
    assert_rows_agree(summary, 'check-versus-real (issue 32, storage operations)', rows, problems)
