"""Check versus real, issue 32 (drives and PCI devices at start): refusals PVE meets when it starts a VM, before or
while it builds QEMU's command line, that the config and storage.cfg tell before any write (docs/pve-semantics.md
§62). The module predicts them in `pve::values::start_on` (`values::devices`); pvesim refuses them as qemu-server
does (tests/pvesim/pvesim/qemu_devices.py, tests/pvesim/tests/test_qemu_devices.py): QemuServer.pm `vm_start_nolock`
(`check_volume_storage_type`), QemuServer/PCI.pm `parse_hostpci_devices`, and `config_to_command`'s drive loop
(the SCSI guard, QemuServer/Drive.pm `checked_parse_volname` and `get_path_and_format`, `print_drive_commandline_full`).

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must agree
task by task (test_check_vs_real.py's `run_batch`); every row is a refusal, so the real run writes nothing.
"""

import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

CHAIN = ("storage for 'chain:vm-798-disk-0.qcow2' is configured for snapshots as a volume chain - this requires QEMU"
         " machine version >= 10.0")

# Rows' VMs: 790-798 (stopped).
VMS = [
    _vm(790, 'row-790', scsi1='local:790/vm-790-disk-1.raw,size=1G'),
    _vm(791, 'row-791', scsi0='local-lvm:vm-791-disk-0,format=qcow2,size=4G'),
    _vm(792, 'row-792', scsi1='vmdata:792/subvol-792-disk-0.subvol,size=1G'),
    _vm(793, 'row-793', machine='pc-i440fx-4.0', scsi14='local-lvm:vm-793-disk-1,size=1G'),
    _vm(794, 'row-794', hostpci0='01:00.0,pcie=1'),
    _vm(795, 'row-795', hostpci0='01:00.0;01:00.1,mdev=i915-GVTg_V5_4'),
    _vm(796, 'row-796', hostpci0='00:02.0,legacy-igd=1'),
    _vm(797, 'row-797', hostpci0='00:02.0,legacy-igd=1,x-vga=1', vga='none'),
    _vm(798, 'row-798', machine='pc-q35-9.2+pve1', scsi0='chain:vm-798-disk-0.qcow2,size=4G'),
    _vm(799, 'row-799'),
]

ROWS = [
    one('disk on a storage without images: start', kvm(node='pve1', vmid=790, state='started'),
        real_failure="storage 'local' does not support content-type 'images'"),
    one('format option other than the volume: start', kvm(node='pve1', vmid=791, state='started'),
        real_failure="drive 'scsi0' - volume 'local-lvm:vm-791-disk-0' - 'format=qcow2' option different from"
                     " storage format 'raw'"),
    one('container subvolume as a disk: start', kvm(node='pve1', vmid=792, state='started'),
        real_failure="volume 'vmdata:792/subvol-792-disk-0.subvol' - not a QEMU image format 'subvol'"),
    one('scsi14 on machine 4.0: start', kvm(node='pve1', vmid=793, state='started'),
        real_failure='scsi14: machine version 4.1~pve2 or higher is required to use more than 14 SCSI disks'),
    one('pcie without q35: start', kvm(node='pve1', vmid=794, state='started'),
        real_failure='q35 machine model is not enabled'),
    one('mdev on a multifunction device: start', kvm(node='pve1', vmid=795, state='started'),
        real_failure='cannot use mediated device with multifunction device'),
    one('legacy igd with a vga: start', kvm(node='pve1', vmid=796, state='started'),
        real_failure="legacy IGD assignment requires VGA mode to be 'none'"),
    one('legacy igd with x-vga: start', kvm(node='pve1', vmid=797, state='started'),
        real_failure='legacy IGD assignment is not compatible with x-vga'),
    one('volume chain on machine 9.2: start', kvm(node='pve1', vmid=798, state='started'),
        real_failure=CHAIN),
    one('subvolume attached (update)', kvm(node='pve1', vmid=799, update=True,
                                           scsi={'scsi0': 'local-lvm:vm-799-disk-0,size=4G',
                                                 'scsi1': 'vmdata:799/subvol-799-disk-1.subvol'}),
        real_failure="volume 'vmdata:799/subvol-799-disk-1.subvol' - not a QEMU image format 'subvol'"),
    one('ova as an import source (disk)', disk(vmid=799, disk='scsi2', storage='local-lvm',
                                               import_from='local:import/appliance.ova'),
        real_failure="volume 'local:import/appliance.ova' - not a QEMU image format 'ova'"),
    one('ovf as an import source (update)', kvm(node='pve1', vmid=799, update=True,
                                                scsi={'scsi0': 'local-lvm:vm-799-disk-0,size=4G',
                                                      'scsi1': 'local-lvm:0,import-from=local:import/appliance.ovf'}),
        real_failure="volume 'local:import/appliance.ovf' - not a QEMU image format 'ovf'"),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS
CENSUS = {
    'disk on a storage without images: start': ('R-power-150',),
    'format option other than the volume: start': ('R-power-151',),
    'container subvolume as a disk: start': ('R-power-151',),
    'scsi14 on machine 4.0: start': ('R-power-152',),
    'volume chain on machine 9.2: start': ('R-power-152',),
    'pcie without q35: start': ('R-power-153',),
    'mdev on a multifunction device: start': ('R-power-153',),
    'legacy igd with a vga: start': ('R-power-153',),
    'legacy igd with x-vga: start': ('R-power-153',),
    'subvolume attached (update)': ('R-power-154',),
    'ova as an import source (disk)': ('R-power-154',),
    'ovf as an import source (update)': ('R-power-154',),
}


def test_check_run_predicts_refusals_of_a_start_for_its_drives_and_pci_devices(ansible, sim, tmp_path, summary):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = json.load(f)['storages']
    storages['chain'] = {'type': 'lvm', 'vgname': 'chain', 'content': 'images', 'shared': 0,
                         'snapshot-as-volume-chain': 1}
    # the node's PCI devices, which a start looks each `host` id up in (PCI.pm parse_hostpci, §72)
    pci = {'0000:01:00.0': {'id': '8086:3e92'}, '0000:01:00.1': {'id': '8086:3e93'}, '0000:00:02.0': {'id': '8086:3e92'}}
    seed = write_seed(tmp_path, 'devices', VMS, storages=storages, node_devices={'pve1': {'pci': pci}})
    problems = run_batch(ansible, sim, seed, ROWS, writes_nothing=True)
    assert_rows_agree(summary, 'check-versus-real (issue 32, drives and PCI devices)', ROWS, problems)
