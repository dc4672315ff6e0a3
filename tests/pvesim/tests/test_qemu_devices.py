"""Start refusals of a VM's drives and PCI devices that the config and storage.cfg tell (docs/pve-semantics.md §62),
as pvesim/qemu_devices.py follows them: qemu-server 9.2.6 src/PVE/QemuServer.pm `vm_start_nolock`
(`check_volume_storage_type`, before the command line), src/PVE/QemuServer/PCI.pm `parse_hostpci` and
`parse_hostpci_devices` (before USB), and `config_to_command`'s drive loop (the SCSI guard, src/PVE/QemuServer/Drive.pm
`checked_parse_volname` and `get_path_and_format`, `print_drive_commandline_full`'s volume chain)."""

import json
import os

from test_values import SEED_DIR, _vm, seed, task_error

from conftest import Q, config, error_of, run

CHAIN = ("storage for 'chain:vm-409-disk-0.qcow2' is configured for snapshots as a volume chain - this requires QEMU"
         " machine version >= 10.0. See https://pve.proxmox.com/wiki/QEMU_Machine_Version_Upgrade")


# the devices the rows pass through, on pve1 (a start looks each `host` id up, node_pci.py)
NODE_DEVICES = {'pve1': {'pci': dict(('0000:' + pid, {'id': '8086:0001'}) for pid in (
    '01:00.0', '01:00.1', '00:02.0', '00:03.0'))}}

def test_a_start_is_refused_for_its_drives_and_pci_devices(sim, tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = json.load(f)['storages']
    storages['chain'] = {'type': 'lvm', 'vgname': 'chain', 'content': 'images', 'shared': 0,
                         'snapshot-as-volume-chain': 1}
    seed(sim, tmp_path, [
        _vm(400, scsi0='local:400/vm-400-disk-0.raw,size=1G'),
        _vm(401, ide2='vmdata:iso/x.iso,media=cdrom'),
        _vm(402, scsi0='local-lvm:vm-402-disk-0,format=qcow2'),
        _vm(403, scsi0='vmdata:403/subvol-403-disk-0.subvol'),
        _vm(404, machine='pc-i440fx-4.0', scsi14='local-lvm:vm-404-disk-1'),
        _vm(405, hostpci0='01:00.0,pcie=1'),
        _vm(406, hostpci0='01:00.0;01:00.1,mdev=i915-GVTg_V5_4'),
        _vm(407, hostpci0='00:02.0,legacy-igd=1'),
        _vm(408, hostpci0='00:03.0,legacy-igd=1', vga='none'),
        _vm(409, machine='pc-q35-9.2+pve1', scsi0='chain:vm-409-disk-0.qcow2'),
        # the volumes' content types come first, before the PCI devices
        _vm(410, hostpci0='01:00.0,pcie=1', scsi0='local:410/vm-410-disk-0.raw'),
        # the PCI devices before the USB devices, the clipboard before the drives
        _vm(411, hostpci0='01:00.0,pcie=1', usb5='spice', ostype='other'),
        _vm(412, vga='serial0,clipboard=vnc', scsi0='local-lvm:vm-412-disk-0,format=qcow2'),
        # let through: a new enough machine, q35, a legacy IGD as PVE wants it, a matching format
        _vm(420, machine='pc-i440fx-4.1+pve2', scsi14='local-lvm:vm-420-disk-1'),
        _vm(421, machine='q35', hostpci0='01:00.0,pcie=1'),
        _vm(422, hostpci0='00:02.0,legacy-igd=1', vga='none'),
        _vm(423, scsi0='vmdata:423/vm-423-disk-0.qcow2,format=qcow2', ide2='isos:iso/debian-13-netinst.iso,media=cdrom'),
        _vm(424, scsi0='chain:vm-424-disk-0.qcow2'),
    ], storages=storages, node_devices=NODE_DEVICES)
    refused = {
        400: "storage 'local' does not support content-type 'images'",
        401: "storage 'vmdata' does not support content-type 'iso'",
        402: "drive 'scsi0' - volume 'local-lvm:vm-402-disk-0' - 'format=qcow2' option different from storage"
             " format 'raw'",
        403: "volume 'vmdata:403/subvol-403-disk-0.subvol' - not a QEMU image format 'subvol'",
        404: 'scsi14: machine version 4.1~pve2 or higher is required to use more than 14 SCSI disks',
        405: 'q35 machine model is not enabled',
        406: 'cannot use mediated device with multifunction device',
        407: "legacy IGD assignment requires VGA mode to be 'none'",
        408: 'legacy IGD assignment only works for devices on host bus 00:02.0',
        409: CHAIN,
        410: "storage 'local' does not support content-type 'images'",
        411: 'q35 machine model is not enabled',
        412: 'vga type serial0 is not compatible with VNC clipboard',
    }
    for vmid, words in refused.items():
        assert task_error(run(sim, 'POST', Q + '/%d/status/start' % vmid)) == words, vmid
    for vmid in (420, 421, 422, 423, 424):
        assert run(sim, 'POST', Q + '/%d/status/start' % vmid)['exitstatus'] == 'OK', vmid


def test_an_attached_volume_or_import_source_in_a_format_qemu_does_not_take_is_refused(sim, tmp_path):
    # Drive.pm checked_parse_volname from API2/Qemu.pm $check_storage_access (an import-from source) and
    # create_disks (an attached volume); an OVA's member is taken, the OVA itself is not
    seed(sim, tmp_path, [_vm(430)])
    cases = {
        'local-lvm:0,import-from=local:import/x.ova': "volume 'local:import/x.ova' - not a QEMU image format 'ova'",
        'local-lvm:0,import-from=local:import/x.ovf': "volume 'local:import/x.ovf' - not a QEMU image format 'ovf'",
        'vmdata:430/subvol-430-disk-0.subvol':
            "volume 'vmdata:430/subvol-430-disk-0.subvol' - not a QEMU image format 'subvol'",
    }
    for value, words in cases.items():
        assert words in error_of(sim.api, 'PUT', Q + '/430/config', {'scsi1': value}).message, value
        assert 'scsi1' not in config(sim, 430)
    err = error_of(sim.api, 'PUT', Q + '/430/config', {'scsi1': 'local-lvm:0,import-from=local:import/x.ova/d.vmdk'})
    assert 'QEMU image format' not in err.message
