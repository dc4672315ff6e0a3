"""Start refusals of a VM's CPU, machine, firmware and memory settings decided by the config alone
(docs/pve-semantics.md §61), as pvesim/qemu_cpu.py follows them: qemu-server 9.2.6 src/PVE/QemuServer.pm
`config_to_command` (in its order), src/PVE/QemuServer/CPUConfig.pm `get_cpu_bitness` (OVMF on a 32-bit type) and
`print_cpu_device` (CPU hot-plug off x86_64), `get_cpu_options` (a model of another architecture;
src/PVE/API2/Qemu/CPU.pm `index` lists them), src/PVE/QemuServer/OVMF.pm `print_ovmf_commandline` (an EFI disk path
without a format), src/PVE/QemuServer/Machine.pm `assert_valid_machine_property` (vIOMMU; also src/PVE/API2/Qemu.pm
`create_vm` in its task and `update_vm_api` when its loop reaches `machine`), src/PVE/QemuServer/Memory.pm
`parse_numa` with src/PVE/QemuServer/Helpers.pm `parse_number_sets` (a reversed range) and `foreach_dimm` (DIMM
alignment)."""

import json
import os

from test_values import SEED_DIR, _vm, seed, task_error

from conftest import Q, config, error_of, run

Q35 = 'to use Intel vIOMMU please set the machine type to q35'
CPUS_SECRET = '3b9d7f21-cpus-models'
USERS = json.load(open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8'))['users']


def test_a_start_is_refused_for_cpu_machine_firmware_and_memory_settings(sim, tmp_path):
    seed(sim, tmp_path, [
        _vm(360, bios='ovmf', cpu='kvm32'),
        # OVMF comes before USB and the CPU count
        _vm(361, bios='ovmf', cpu='cputype=qemu32', ostype='other', usb5='spice', sockets=64),
        _vm(362, bios='ovmf', cpu='x86-64-v2-AES'),
        _vm(363, bios='ovmf', efidisk0='/dev/disk/by-id/efi,efitype=4m'),
        _vm(364, bios='ovmf', efidisk0='/dev/disk/by-id/efi,format=raw'),
        _vm(365, arch='aarch64', hotplug='cpu,disk', cores=2),
        _vm(366, arch='aarch64', hotplug='cpu,disk', cores=2, vcpus=1),
        _vm(367, machine='pc,viommu=intel'),
        _vm(368, machine='q35,viommu=intel,aw-bits=40'),
        _vm(369, machine='q35,aw-bits=40'),
        _vm(370, machine='q35,viommu=intel,aw-bits=48'),
        _vm(371, numa=1, numa0='cpus=1-0,memory=1024'),
        _vm(372, hotplug='memory', numa=1, memory='1500'),
        _vm(373, hotplug='memory', numa=1, memory='17920'),
        _vm(374, hotplug='memory', numa=1, memory='17408'),
        # the vIOMMU comes after the clipboard
        _vm(375, machine='pc,viommu=intel', vga='serial0,clipboard=vnc'),
    ])
    refused = {
        360: 'OVMF (UEFI) BIOS is not supported on 32-bit CPU types',
        361: 'OVMF (UEFI) BIOS is not supported on 32-bit CPU types',
        363: 'efidisk format must be specified',
        365: 'Hotplug of non x86_64 CPU not yet supported',
        367: Q35,
        368: 'Intel vIOMMU supports only 39 or 48 bits as address width',
        369: 'cannot set aw-bits if no vIOMMU is configured',
        371: 'invalid range: 1-0 (0 < 1)',
        372: 'memory size (1500) must be aligned to 512 for hotplugging',
        373: 'memory size (17920) must be aligned to 1024 for hotplugging',
        375: 'vga type serial0 is not compatible with VNC clipboard',
    }
    for vmid, words in refused.items():
        assert task_error(run(sim, 'POST', Q + '/%d/status/start' % vmid)) == words, vmid
    for vmid in (362, 364, 366, 370, 374):
        assert run(sim, 'POST', Q + '/%d/status/start' % vmid)['exitstatus'] == 'OK', vmid


def test_the_viommu_options_are_checked_on_create_and_config_write(sim):
    # create_vm: in the task (check_and_pin_machine_string, after the clipboard), the disks freed again
    status = run(sim, 'POST', Q, {'vmid': 376, 'machine': 'pc,viommu=intel', 'scsi0': 'local-lvm:1'})
    assert task_error(status) == 'unable to create VM 376 - ' + Q35
    assert not any('vm-376-' in v['volid'] for v in sim.api('GET', '/nodes/pve1/storage/local-lvm/content'))
    # update_vm_api: a 500 when its loop reaches `machine`; valid options are written
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'machine': 'q35,aw-bits=40'})
    assert 'cannot set aw-bits if no vIOMMU is configured' in err.message
    sim.api('PUT', Q + '/100/config', {'machine': 'q35,viommu=intel,aw-bits=39'})
    assert 'viommu=intel' in config(sim, 100).get('machine', '')


def test_a_cpu_model_must_be_one_of_the_vm_s_architecture(sim, tmp_path):
    # CPUConfig.pm get_cpu_options: the write's format takes a model of either architecture; the start does not
    seed(sim, tmp_path, [
        _vm(377, cpu='cortex-a57'),
        _vm(378, arch='aarch64', cpu='x86-64-v2-AES'),
        _vm(379, cpu='cputype=Icelake-Client,flags=+aes'),
        _vm(380, arch='aarch64', cpu='cortex-a72'),
    ])
    refused = {377: "CPU model 'cortex-a57' does not exist for configured vCPU architecture 'x86_64'",
               378: "CPU model 'x86-64-v2-AES' does not exist for configured vCPU architecture 'aarch64'"}
    for vmid, words in refused.items():
        assert task_error(run(sim, 'POST', Q + '/%d/status/start' % vmid)) == words, vmid
    for vmid in (379, 380):
        assert run(sim, 'POST', Q + '/%d/status/start' % vmid)['exitstatus'] == 'OK', vmid
    # API2/Qemu/CPU.pm index: the models of the architecture asked, the built-in ones as abstract
    x86 = dict((m['name'], m) for m in sim.api('GET', '/nodes/pve1/capabilities/qemu/cpu'))
    assert x86['host']['custom'] == 0 and x86['x86-64-v2-AES'].get('abstract') == 1 and 'cortex-a57' not in x86
    arm = [m['name'] for m in sim.api('GET', '/nodes/pve1/capabilities/qemu/cpu', {'arch': 'aarch64'})]
    assert 'cortex-a57' in arm and 'max' in arm and 'host' not in arm and 'x86-64-v2-AES' not in arm


def test_a_custom_cpu_model_stands_for_the_model_it_reports(sim, tmp_path):
    # CPUConfig.pm get_custom_model in get_cpu_bitness and get_cpu_options; the definitions as
    # pve-manager API2/Cluster/Qemu/CustomCPUModels.pm `config` lists them
    seed(sim, tmp_path, [_vm(381, bios='ovmf', cpu='custom-old32'), _vm(382, cpu='custom-armish,flags=+aes'),
                         _vm(383, bios='ovmf', cpu='custom-plain')],
         custom_cpu_models={'old32': {'reported-model': 'qemu32'}, 'armish': {'reported-model': 'cortex-a53'},
                            'plain': {}},
         users={'ansible@pve': USERS['ansible@pve'],
                'cpus@pve': {'tokens': {'t1': CPUS_SECRET}, 'acl': {'/mapping/cpu/old32': ['Mapping.Audit']}}})
    assert task_error(run(sim, 'POST', Q + '/381/status/start')) == 'OVMF (UEFI) BIOS is not supported on 32-bit CPU types'
    assert task_error(run(sim, 'POST', Q + '/382/status/start')) == (
        "CPU model 'cortex-a53' does not exist for configured vCPU architecture 'x86_64'")
    assert run(sim, 'POST', Q + '/383/status/start')['exitstatus'] == 'OK'  # reports kvm64
    # the definitions a user sees: Mapping.Audit, .Use or .Modify on /mapping/cpu/<name>
    assert sim.api('GET', '/cluster/qemu/custom-cpu-models') == []
    listed = sim.api('GET', '/cluster/qemu/custom-cpu-models', token='cpus@pve!t1=' + CPUS_SECRET)
    assert [(m['cputype'], m['reported-model']) for m in listed] == [('custom-old32', 'qemu32')]
    # CPU.pm index lists a custom model for the architecture its reported model belongs to
    names = [m['name'] for m in sim.api('GET', '/nodes/pve1/capabilities/qemu/cpu') if m['custom']]
    assert names == ['custom-old32', 'custom-plain']
    # validate_vm_cpu_conf refuses an unknown custom model; a defined one passes it, to meet the mapping's
    # privilege (Qemu.pm check_cpu_model_access, handler_perms.py)
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'cpu': 'custom-nope'})
    assert "Custom cputype 'nope' not found" in str(err.message) + str(err.errors)
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'cpu': 'custom-old32'})
    assert 'Permission check failed (/mapping/cpu/old32, Mapping.Use)' in err.message
