"""Check versus real, issue 32: drive values the create and config handlers refuse beyond the schema (docs/pve-semantics.md §63).

Census rows (docs/refusals.md) R-config-180 to R-config-182, R-config-184 and R-config-185, split out of R-config-90. Each row runs the same play
with `--check --diff` and for real, from the same pvesim state, and the two must agree task by task
(test_check_vs_real.py's `run_batch` and `compare_row`); every row is a refusal, so nothing may be written. The
module decides each before any write from the task's values and the VM's applied config. pvesim follows PVE in each
(tests/pvesim/tests/test_drive_rules.py): qemu-server Qemu.pm `$check_drive_param` (an `import-from` drive's syntax
and required options), `$check_storage_access` (a source of content `images` or `import`), `create_disks` with
`$import_from_volid` (no cloud-init source; no new EFI disk on an SEV-SNP guest; an existing volume's own format),
`prohibit_tpm_version_change`; AbstractConfig.pm `add_unused_volume` (at most 256 unused volumes). An import
source with a bad format and a missing privilege at once gives the refusal `$check_storage_access` weighs first: the
new disk's storage, then the source's format, then the source's own privileges (§63.3).
"""

import copy
import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

BASE = 'vmdata:9000/base-9000-disk-0.qcow2'
CLOUDINIT = 'vmdata:9000/vm-9000-cloudinit.qcow2'
ISO = 'isos:iso/debian-13-netinst.iso'

VMS = [
    _vm(740, 'row-740'),
    _vm(741, 'row-741', tpmstate0='local-lvm:vm-741-disk-1,size=4M,version=v2.0'),
    _vm(742, 'row-742', **{'amd-sev': 'type=snp', 'bios': 'ovmf'}),
    _vm(743, 'row-743', tpmstate0='local-lvm:vm-743-disk-1,size=4M'),
    _vm(744, 'row-744', unused0='local-lvm:vm-744-disk-1'),
    # every unusedN taken (AbstractConfig.pm: 256 at most)
    _vm(745, 'row-745', scsi1='local-lvm:vm-745-disk-1,size=1G',
        **dict(('unused%d' % n, 'local-lvm:vm-745-disk-%d' % (n + 2)) for n in range(256))),
    _vm(747, 'row-747'),
    dict(_vm(750, 'row-750', scsi0='shared:750/vm-750-disk-0.qcow2,size=4G'), node='pve2'),
]
OWNED = 'shared:750/vm-750-disk-0.qcow2'
SUBVOL = 'vmdata:750/subvol-750-disk-0.subvol'

# Every VM privilege a disk needs but VM.Clone on VM 750 (the source's owner) and VM.Config.Disk on VM 747, space on
# local-lvm only.
IMPORTER_ACL = {'/vms': ['VM.Audit', 'VM.Allocate', 'VM.Clone', 'VM.Config.Disk', 'VM.Config.CDROM',
                         'VM.Config.Options', 'VM.Config.HWType', 'VM.Config.CPU', 'VM.Config.Memory'],
                '/vms/750': ['VM.Audit'], '/vms/747': ['VM.Audit', 'VM.Config.Options'], '/storage': ['Datastore.Audit'],
                '/storage/local-lvm': ['Datastore.Audit', 'Datastore.AllocateSpace'], '/': ['Sys.Audit']}
USERS = {'importer@pve': {'tokens': {'rows': '2c4e6a8d-importer-rows'}, 'acl': IMPORTER_ACL}}
IMPORTER = {'PROXMOX_USER': 'importer@pve', 'PROXMOX_TOKEN_ID': 'rows',
            'PROXMOX_TOKEN_SECRET': '2c4e6a8d-importer-rows'}

ROWS = [
    one('import-from without the new-disk syntax', kvm(node='pve1', vmid=740, update=True,
                                                      scsi={'scsi1': 'local-lvm:8,import-from=' + BASE}),
        real_failure="scsi1: 'import-from' requires special syntax - use <storage ID>:0,import-from=<source>"),
    one('import-from an ISO', disk(vmid=740, disk='scsi2', storage='local-lvm', import_from=ISO),
        real_failure="scsi2: %s has wrong type 'iso' - needs to be 'images' or 'import'" % ISO),
    one('import-from a cloud-init disk', disk(vmid=740, disk='scsi3', storage='local-lvm', import_from=CLOUDINIT),
        real_failure="cannot import from '%s' - cannot import from cloudinit disk" % CLOUDINIT),
    one("an OVA's disk extracted onto a storage without images",
        disk(vmid=740, disk='scsi4', storage='local-lvm', import_from='local:import/appliance.ova/disk1.vmdk'),
        real_failure="scsi4: import working storage 'local' does not support 'images' content type or is not file based."),
    one("an OVA's disk in a drive value", kvm(node='pve1', vmid=740, update=True, virtio={
        'virtio1': 'local-lvm:0,import-from=local:import/appliance.ova/disk1.vmdk'}),
        real_failure="virtio1: import working storage 'local' does not support 'images' content type or is not file based."),
    one('EFI disk imported without efitype', disk(vmid=740, disk='efidisk0', storage='local-lvm', import_from=BASE),
        real_failure="efidisk0: need to specify 'efitype' when using 'import-from'"),
    one('TPM state version changed', kvm(node='pve1', vmid=741, update=True,
                                         tpmstate0={'storage': 'local-lvm', 'version': '1.2'}),
        real_failure='tpmstate0: cannot change TPM state version after creation'),
    one('TPM state version set where none was', kvm(node='pve1', vmid=743, update=True,
                                                    tpmstate0={'storage': 'local-lvm', 'version': '2.0'}),
        real_failure='tpmstate0: cannot change TPM state version after creation'),
    one('EFI disk on an SEV-SNP guest', kvm(node='pve1', vmid=742, update=True, bios='ovmf',
                                            efidisk0={'storage': 'local-lvm', 'efitype': '4m'}),
        real_failure='SEV-SNP uses consolidated read-only firmware and does not require an EFI disk'),
    one('format= other than the volume\'s', kvm(node='pve1', vmid=744, update=True,
                                               scsi={'scsi1': 'local-lvm:vm-744-disk-1,format=qcow2'}),
        real_failure="drive 'scsi1' - volume 'local-lvm:vm-744-disk-1' - 'format=qcow2' option different from storage "
                     "format 'raw'"),
    one("import-from a disk whose VM is on another node", disk(vmid=740, disk='scsi5', storage='local-lvm',
                                                              import_from=OWNED),
        real_failure="cannot import from '%s' - owner VM 750 not on local node" % OWNED),
    one('detached with every unused slot taken', disk(vmid=745, disk='scsi1', state='detached'),
        real_failure='Too many unused volumes - please delete them first.'),
]

# A bad source format and a missing privilege at once (§63.3), as a token without VM.Clone on 750 and without space
# on vmdata: the source's format comes before the source's privileges, the new disk's storage before the format.
BOTH_ROWS = [
    one('a bad source format without VM.Clone on its owner (disk)',
        disk(vmid=740, disk='scsi6', storage='local-lvm', import_from=SUBVOL),
        real_failure="volume '%s' - not a QEMU image format 'subvol'" % SUBVOL),
    one('a bad source format without VM.Clone on its owner (kvm update)',
        kvm(node='pve1', vmid=740, update=True, scsi={'scsi7': 'local-lvm:0,import-from=' + SUBVOL}),
        real_failure="volume '%s' - not a QEMU image format 'subvol'" % SUBVOL),
    one('a bad source format without VM.Config.Disk (kvm update)',
        kvm(node='pve1', vmid=747, update=True, scsi={'scsi1': 'local-lvm:0,import-from=' + SUBVOL}),
        real_failure='(/vms/747, VM.Config.Disk)'),
    one('a bad source format onto a storage without space (kvm create)',
        kvm(node='pve1', vmid=746, name='row-746', scsi={'scsi0': 'vmdata:0,import-from=' + SUBVOL}),
        real_failure='(/storage/vmdata, Datastore.AllocateSpace)'),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS + BOTH_ROWS
CENSUS = {
    'import-from without the new-disk syntax': ('R-config-180',),
    'EFI disk imported without efitype': ('R-config-180',),
    'import-from an ISO': ('R-config-181',),
    'import-from a cloud-init disk': ('R-config-181',),
    "an OVA's disk extracted onto a storage without images": ('R-config-181',),
    "an OVA's disk in a drive value": ('R-config-181',),
    'import-from a disk whose VM is on another node': ('R-config-181',),
    'TPM state version changed': ('R-config-182',),
    'TPM state version set where none was': ('R-config-182',),
    'EFI disk on an SEV-SNP guest': ('R-config-182',),
    "format= other than the volume's": ('R-config-184',),
    'detached with every unused slot taken': ('R-config-185',),
    'a bad source format without VM.Clone on its owner (disk)': ('R-power-154',),
    'a bad source format without VM.Clone on its owner (kvm update)': ('R-power-154',),
    'a bad source format without VM.Config.Disk (kvm update)': ('R-config-130',),
    'a bad source format onto a storage without space (kvm create)': ('R-any-133',),
}


def _storages():
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages['shared'] = {'type': 'nfs', 'path': '/mnt/pve/shared', 'content': 'images', 'shared': 1}
    return storages


def test_check_run_predicts_refusals_of_drive_values(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'drive-values', VMS, storages=_storages(), users=USERS)
    problems = run_batch(ansible, sim, seed, ROWS, writes_nothing=True)
    problems.update(run_batch(ansible, sim, seed, BOTH_ROWS, env=IMPORTER, writes_nothing=True))
    assert_rows_agree(summary, 'check-versus-real (issue 32, drive values)', CENSUS_ROWS, problems)
