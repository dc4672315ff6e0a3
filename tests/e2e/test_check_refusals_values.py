"""Check versus real, issue 32 (part B2): refusals PVE decides from config values and cluster facts.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the
two must agree task by task (test_check_vs_real.py's `run_batch` and `compare_row`); every row is a
refusal, so the real run must change nothing. The module decides each from what it reads before
any write (docs/pve-semantics.md §43, module_utils/src/pve/values.rs): the VM's config with its
pending values, `/cluster/resources` (`hastate`), `GET /nodes` (`maxcpu`), `GET /pools?poolid=`.
pvesim follows PVE in each (tests/pvesim/tests/test_values.py): qemu-server Qemu.pm
`update_vm_api` (the balloon against the memory the VM keeps; `vga`), `move_vm_disk` (both VMs on one node),
`create_vm` and `clone_vm`
(RPCEnvironment.pm `check_pool_exist`), `destroy_vm` (HA without purge), `vm_suspend` (HA, PCI
pass-through), QemuServer.pm `config_to_command` (CPUs, the VNC clipboard) and Memory.pm `config`
(memory hot-plug needs NUMA), QemuMigrate/Helpers.pm `check_non_migratable_resources` (virtiofs), pve-common
Tools.pm `validate_ssh_public_keys` (`sshkeys`, which proxmox_kvm checks as bad input).
"""

from test_check_vs_real import _vm, assert_rows_agree, disk, kvm, one, run_batch, write_seed

NODE_CPUS = {'pve1': 4, 'pve2': 4}


def _ha(vm, state):
    return dict(vm, ha_state=state)


def _without(vm, key):
    vm = dict(vm, config=dict(vm['config']))
    vm['config'].pop(key)
    return vm


# Rows' VMs: 600-616.
VMS = [
    _vm(600, 'row-600', memory='4096', balloon='2048'),
    _without(_vm(601, 'row-601'), 'memory'),
    _vm(602, 'row-602', sockets=2, cores=4),
    _vm(603, 'row-603', hotplug='disk,network,memory'),
    _vm(604, 'row-604'),
    _ha(_vm(605, 'row-605'), 'stopped'),
    _ha(_vm(606, 'row-606', status='running'), 'started'),
    _vm(607, 'row-607', status='running', hostpci0='0000:01:00.0'),
    _vm(608, 'row-608', status='running', virtiofs0='dirid=share'),
    _vm(609, 'row-609', vga='serial0,clipboard=vnc'),
    _vm(616, 'row-616', hotplug='memory', numa=1, memory='512'),
    _vm(614, 'row-614', scsi1='local-lvm:vm-614-disk-1,size=1G'),
    dict(_vm(615, 'row-615'), node='pve2'),
]

BALLOON = 'balloon value too large (must be smaller than assigned memory)'

ROWS = [
    one('balloon: memory lowered below it', kvm(node='pve1', vmid=600, update=True, memory=1024),
        real_failure=BALLOON),
    one('balloon: on a VM without memory', kvm(node='pve1', vmid=601, update=True, balloon=1024),
        real_failure=BALLOON),
    one('pool missing (create)', kvm(node='pve1', vmid=610, name='row-610', pool='prdo', cores=1),
        real_failure="Permission check failed (pool 'prdo' does not exist)"),
    one('pool missing (clone)', kvm(node='pve1', vmid=9000, clone='debian-13-template', newid=611,
                                    name='row-611', pool='prdo'),
        real_failure="Permission check failed (pool 'prdo' does not exist)"),
    one('cpus above the node: start', kvm(node='pve1', vmid=602, state='started'),
        real_failure='MAX 4 vcpus allowed per VM on this node'),
    one('memory hotplug without numa: start', kvm(node='pve1', vmid=603, state='started'),
        real_failure='NUMA needs to be enabled for memory hotplug'),
    one('memory hotplug below 1024 MiB: start', kvm(node='pve1', vmid=616, state='started'),
        real_failure='minimum memory must be 1024MB'),
    one('vnc clipboard: update', kvm(node='pve1', vmid=604, update=True, vga='none,clipboard=vnc'),
        real_failure='vga type none is not compatible with VNC clipboard'),
    one('vnc clipboard: create', kvm(node='pve1', vmid=612, name='row-612', vga='serial1,clipboard=vnc'),
        real_failure='vga type serial1 is not compatible with VNC clipboard'),
    one('vnc clipboard: start', kvm(node='pve1', vmid=609, state='started'),
        real_failure='vga type serial0 is not compatible with VNC clipboard'),
    one('HA: absent without purge', kvm(node='pve1', vmid=605, state='absent'),
        real_failure='unable to remove VM 605 - used in HA resources and purge parameter not set.'),
    one('HA: hibernated', kvm(node='pve1', vmid=606, state='hibernated'),
        real_failure='Cannot suspend HA managed VM to disk'),
    one('PCI pass-through: hibernated', kvm(node='pve1', vmid=607, state='hibernated'),
        real_failure='cannot suspend VM to disk due to passed-through PCI device(s)'),
    one('sshkeys not a key: update', kvm(node='pve1', vmid=604, update=True, sshkeys='ssh-ed25519 AAAA me@host'),
        real_failure='sshkeys: SSH public key validation error'),
    one('sshkeys not a key: create', kvm(node='pve1', vmid=613, name='row-613', sshkeys='# my key'),
        real_failure='sshkeys: SSH public key validation error'),
    one('disk to a VM on another node', disk(vmid=614, disk='scsi1', state='moved', target_vmid=615),
        real_failure='Both VMs need to be on the same node (pve1 != pve2)'),
    one('virtiofs: hibernated', kvm(node='pve1', vmid=608, state='hibernated'),
        real_failure='Cannot live-migrate, snapshot (with RAM), or hibernate a VM with: virtiofs'),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS
CENSUS = {
    'balloon: memory lowered below it': ('R-config-50',),
    'balloon: on a VM without memory': ('R-config-50',),
    'pool missing (create)': ('R-create-02',),
    'pool missing (clone)': ('R-clone-14',),
    'cpus above the node: start': ('R-power-50',),
    'memory hotplug without numa: start': ('R-power-51',),
    'memory hotplug below 1024 MiB: start': ('R-power-51',),
    'vnc clipboard: update': ('R-config-51',),
    'vnc clipboard: create': ('R-create-50',),
    'vnc clipboard: start': ('R-power-52',),
    'HA: absent without purge': ('R-destroy-02',),
    'HA: hibernated': ('R-power-10',),
    'PCI pass-through: hibernated': ('R-power-53',),
    'virtiofs: hibernated': ('R-power-53',),
    'disk to a VM on another node': ('R-move-10',),
    'sshkeys not a key: update': ('R-config-52',),
    'sshkeys not a key: create': ('R-create-51',),
}


def test_check_run_predicts_refusals_decided_by_values(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'values', VMS, node_cpus=NODE_CPUS)
    problems = run_batch(ansible, sim, seed, ROWS, writes_nothing=True)
    assert_rows_agree(summary, 'check-versus-real (issue 32, values)', ROWS, problems)
