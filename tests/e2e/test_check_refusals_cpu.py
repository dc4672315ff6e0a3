"""Check versus real, issue 32 (CPU, machine, firmware, memory): refusals PVE meets when it builds QEMU's command line,
and the vIOMMU options also when it creates a VM or writes its config, that the config tells before any write.

Census rows (docs/refusals.md) R-power-140 to R-power-145 and R-power-148, split out of R-power-90. Each row runs the
same play with `--check --diff` and for real, from the same pvesim state, and the two must agree task by task
(test_check_vs_real.py's `run_batch`); every row is a refusal, so the real run writes nothing. pvesim refuses each as
PVE does (tests/pvesim/tests/test_qemu_cpu.py; docs/pve-semantics.md §61): qemu-server QemuServer.pm
`config_to_command` with CPUConfig.pm `get_cpu_bitness` (OVMF on a 32-bit CPU type), `print_cpu_device` (CPU hot-plug
off x86_64) and `get_cpu_options` (a model of another architecture, from API2/Qemu/CPU.pm `index`'s list), OVMF.pm
`print_ovmf_commandline` (an EFI disk path without a format), Memory.pm `parse_numa` (Helpers.pm `parse_number_sets`)
and `foreach_dimm`, Machine.pm `assert_valid_machine_property` (also from Qemu.pm `create_vm` and `update_vm_api`);
the module predicts them in `pve::values::start` and `values::command_cpu::request_machine`.
"""

import json
import os

from test_check_vs_real import SEED_DIR, _vm, assert_rows_agree, kvm, one, run_batch, write_seed

Q35 = 'to use Intel vIOMMU please set the machine type to q35'

# Rows' VMs: 790-799 (stopped, their disks on local-lvm); 794 is created by its row.
VMS = [
    _vm(790, 'row-790', bios='ovmf', cpu='kvm32'),
    _vm(791, 'row-791', bios='ovmf', efidisk0='/dev/disk/by-id/efi-791,efitype=4m'),
    _vm(792, 'row-792', arch='aarch64', hotplug='cpu,disk', cores=2),
    _vm(793, 'row-793', machine='pc,viommu=intel'),
    _vm(795, 'row-795', machine='q35'),
    _vm(796, 'row-796', numa=1, numa0='cpus=1-0,memory=1024'),
    _vm(797, 'row-797', hotplug='memory,disk', numa=1, memory='1500'),
    _vm(798, 'row-798', cpu='cortex-a57'),
    _vm(799, 'row-799', arch='aarch64', cpu='x86-64-v2-AES'),
]

ROWS = [
    one('ovmf on a 32-bit cpu: start', kvm(node='pve1', vmid=790, state='started'),
        real_failure='OVMF (UEFI) BIOS is not supported on 32-bit CPU types'),
    one('efi disk path without a format: start', kvm(node='pve1', vmid=791, state='started'),
        real_failure='efidisk format must be specified'),
    one('cpu hotplug on aarch64: start', kvm(node='pve1', vmid=792, state='started'),
        real_failure='Hotplug of non x86_64 CPU not yet supported'),
    one('intel viommu without q35: start', kvm(node='pve1', vmid=793, state='started'), real_failure=Q35),
    one('intel viommu without q35: create', kvm(node='pve1', vmid=794, name='row-794', machine='pc,viommu=intel'),
        real_failure=Q35),
    one('aw-bits without viommu: update', kvm(node='pve1', vmid=795, update=True, machine='q35,aw-bits=40'),
        real_failure='cannot set aw-bits if no vIOMMU is configured'),
    one('numa range reversed: start', kvm(node='pve1', vmid=796, state='started'),
        real_failure='invalid range: 1-0 (0 < 1)'),
    one('hotplug memory not dimm-aligned: start', kvm(node='pve1', vmid=797, state='started'),
        real_failure='memory size (1500) must be aligned to 512 for hotplugging'),
    one('aarch64 cpu model on x86_64: start', kvm(node='pve1', vmid=798, state='started'),
        real_failure="CPU model 'cortex-a57' does not exist for configured vCPU architecture 'x86_64'"),
    one('x86_64 cpu model on aarch64: start', kvm(node='pve1', vmid=799, state='started'),
        real_failure="CPU model 'x86-64-v2-AES' does not exist for configured vCPU architecture 'aarch64'"),
]

# Custom CPU models (cpu-models.conf) and a token that may read their definitions (Mapping.Audit on /mapping/cpu,
# pve-manager API2/Cluster/Qemu/CustomCPUModels.pm `config`), with the default token's privileges besides.
CUSTOM = {'old32': {'reported-model': 'qemu32'}, 'armish': {'reported-model': 'cortex-a53'}}
with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as _f:
    _ACL = json.load(_f)['users']['ansible@pve']['acl']['/']
USERS = {'cpus@pve': {'tokens': {'rows': '6d2f8a4c-cpus-rows'}, 'acl': {'/': _ACL, '/mapping/cpu': ['Mapping.Audit']}}}
CPUS = {'PROXMOX_USER': 'cpus@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '6d2f8a4c-cpus-rows'}
CUSTOM_VMS = [_vm(800, 'row-800', bios='ovmf', cpu='custom-old32'), _vm(801, 'row-801', cpu='custom-armish')]
CUSTOM_ROWS = [
    one('ovmf on a custom model reporting a 32-bit cpu: start', kvm(node='pve1', vmid=800, state='started'),
        real_failure='OVMF (UEFI) BIOS is not supported on 32-bit CPU types'),
    one('custom model reporting an aarch64 cpu on x86_64: start', kvm(node='pve1', vmid=801, state='started'),
        real_failure="CPU model 'cortex-a53' does not exist for configured vCPU architecture 'x86_64'"),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS + CUSTOM_ROWS
CENSUS = {
    'ovmf on a 32-bit cpu: start': ('R-power-140',),
    'intel viommu without q35: start': ('R-power-141',),
    'intel viommu without q35: create': ('R-power-141',),
    'aw-bits without viommu: update': ('R-power-141',),
    'hotplug memory not dimm-aligned: start': ('R-power-142',),
    'efi disk path without a format: start': ('R-power-143',),
    'numa range reversed: start': ('R-power-144',),
    'cpu hotplug on aarch64: start': ('R-power-145',),
    'aarch64 cpu model on x86_64: start': ('R-power-148',),
    'x86_64 cpu model on aarch64: start': ('R-power-148',),
    'ovmf on a custom model reporting a 32-bit cpu: start': ('R-power-140',),
    'custom model reporting an aarch64 cpu on x86_64: start': ('R-power-148',),
}


def test_check_run_predicts_refusals_of_cpu_machine_firmware_and_memory_settings(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'cpu', VMS)
    problems = run_batch(ansible, sim, seed, ROWS, writes_nothing=True)
    assert_rows_agree(summary, 'check-versus-real (issue 32, cpu, machine, firmware, memory)', ROWS, problems)


def test_check_run_predicts_them_for_a_custom_cpu_model_whose_definition_it_reads(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'cpu-custom', CUSTOM_VMS, users=USERS, custom_cpu_models=CUSTOM)
    problems = run_batch(ansible, sim, seed, CUSTOM_ROWS, env=CPUS, writes_nothing=True)
    assert_rows_agree(summary, 'check-versus-real (issue 32, custom cpu models)', CUSTOM_ROWS, problems)
