"""Check versus real, issue 32 (the machine a start pins): qemu-server QemuServer.pm `config_to_command`'s first check
refuses a pinned machine the node's QEMU cannot run, a version above QEMU's (`Installed QEMU version '<kvmver>' is too
old to run machine type '<machine>', please upgrade node '<node>'`) or a `+pveN` above the highest qemu-server has for
that version (Machine.pm `can_run_pve_machine_version`: `Installed qemu-server (max feature level for <x.y> is
pve<n>) ...`), before every other check of the command line; a release candidate (micro 90 and above) skips it.

The module reads `GET /nodes/{node}/capabilities/qemu/machines` (qemu-server API2/Qemu/Machine.pm `types`, every user)
only for a start that pins a machine, and `GET /nodes/{node}/apt/versions` (pve-manager APT.pm `versions`, Sys.Audit on
/nodes/{node}) only when the list refuses it, for the QEMU version PVE's words name and to tell a release candidate
(`pve::machine`, `preflight::node_qemu`); without Sys.Audit both runs refuse with the micro part `x`, said so.
pvesim: `node_qemu.py` (seed `node_qemu`), tests/pvesim/tests/test_node_qemu.py; docs/pve-semantics.md §73.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must agree
task by task (test_check_vs_real.py's `run_batch`).
"""

from harness import CANARY_PRIVILEGES
from test_check_vs_real import _vm, assert_rows_agree, kvm, one, reset, run_batch, write_seed
from test_kvm import kvm as kvm_task, play

# pve1 runs QEMU 9.2.0, pve2 a release candidate of 10.1 (10.0.90)
NODE_QEMU = {'pve1': '9.2.0', 'pve2': '10.0.90'}
TOO_OLD = "Installed QEMU version '9.2.0' is too old to run machine type 'pc-q35-10.0+pve0', please upgrade node 'pve1'"
# without Sys.Audit on the node: PVE's sentence, the micro version `x`, said so (the module's refusal in both runs)
HIDDEN = ("Installed QEMU version '9.2.x' is too old to run machine type 'pc-q35-10.0+pve0', please upgrade node 'pve1' "
          "(x: the micro version, shown only with Sys.Audit on /nodes/pve1)")


def _on(node, vm):
    return dict(vm, node=node)


# Rows' VMs: 780-787 (786: the requests' test).
VMS = [
    _vm(780, 'row-780', machine='pc-q35-10.0'),
    _vm(781, 'row-781', machine='type=pc-i440fx-9.2+pve2,viommu=virtio'),
    _vm(782, 'row-782', machine='pc-q35-10.0', bios='ovmf', cpu='pentium', hostpci0='host=07:00.0'),
    _vm(783, 'row-783', machine='pc-q35-9.2+pve1', ostype='win11'),
    _on('pve2', _vm(784, 'row-784', machine='pc-q35-10.1')),
    _vm(785, 'row-785', machine='pc-q35-10.0'),
    _vm(786, 'row-786', machine='q35', ostype='win11'),
    # hibernated on a newer node: the resume runs its runningmachine (vm_start_nolock)
    _vm(787, 'row-787', machine='q35', lock='suspended', vmstate='local-lvm:vm-787-state-suspend-2026-12-01',
        runningmachine='pc-q35-10.0+pve1'),
]

ROWS = [
    one('machine newer than the node\'s qemu: start', kvm(node='pve1', vmid=780, state='started'),
        real_failure=TOO_OLD),
    one('machine revision above qemu-server\'s: start', kvm(node='pve1', vmid=781, state='started'),
        real_failure="Installed qemu-server (max feature level for 9.2 is pve1) is too old to run machine type "
                     "'pc-i440fx-9.2+pve2', please upgrade node 'pve1'"),
    one('machine refused before the firmware and devices: start', kvm(node='pve1', vmid=782, state='started'),
        real_failure=TOO_OLD),
    one('machine the node runs: start', kvm(node='pve1', vmid=783, state='started'), real_changed=True),
    one('running machine of a hibernated vm newer than the node\'s qemu: resume',
        kvm(node='pve1', vmid=787, state='started'),
        real_failure="Installed QEMU version '9.2.0' is too old to run machine type 'pc-q35-10.0+pve1', please upgrade "
                     "node 'pve1'"),
    one('machine on a release candidate qemu: start', kvm(node='pve2', vmid=784, state='started'), real_changed=True),
]

# Without Sys.Audit on /nodes/pve1 the package version is not shown: the refusal stands, its micro part `x`.
USERS = {'noaudit@pve': {'tokens': {'rows': '2c4e6a8b-noaudit-rows'},
                         'acl': {'/': [p for p in CANARY_PRIVILEGES if p != 'Sys.Audit']}}}
NOAUDIT = {'PROXMOX_USER': 'noaudit@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '2c4e6a8b-noaudit-rows'}
NOAUDIT_ROWS = [
    one('machine newer than the node\'s qemu, package hidden: start', kvm(node='pve1', vmid=785, state='started'),
        real_failure=HIDDEN),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS + NOAUDIT_ROWS
CENSUS = {
    'machine newer than the node\'s qemu: start': ('R-power-171',),
    'machine revision above qemu-server\'s: start': ('R-power-171',),
    'running machine of a hibernated vm newer than the node\'s qemu: resume': ('R-power-171',),
    'machine newer than the node\'s qemu, package hidden: start': ('R-power-171',),
}


def test_check_run_predicts_a_pinned_machine_the_node_s_qemu_cannot_run(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'machine', VMS, node_qemu=NODE_QEMU, users=USERS)
    problems = run_batch(ansible, sim, seed, ROWS, writes_nothing=True)
    problems.update(run_batch(ansible, sim, seed, NOAUDIT_ROWS, env=NOAUDIT, writes_nothing=True))
    assert_rows_agree(summary, 'check-versus-real (issue 32, the machine a start pins)', ROWS + NOAUDIT_ROWS,
                      problems)


MACHINES = ('GET', '/nodes/pve1/capabilities/qemu/machines')
PACKAGES = ('GET', '/nodes/pve1/apt/versions')


def test_only_a_start_that_pins_a_machine_reads_the_node_s_qemu(ansible, sim, tmp_path):
    """An unpinned machine (786: q35 with a Windows ostype) reads neither list; a pinned one the node runs (783) the
    machine list once; a refused one (780) the package versions too, once; in check and real runs alike."""
    seed = write_seed(tmp_path, 'machine-requests', VMS, node_qemu=NODE_QEMU, users=USERS)
    expected = {786: (0, 0), 783: (1, 0), 780: (1, 1)}
    for check in (True, False):
        for vmid, (machines, packages) in expected.items():
            reset(sim, seed)
            task = dict(kvm_task(node='pve1', vmid=vmid, state='started'), ignore_errors=True)
            result = ansible.run_playbook(play(task), check=check).task('kvm')['result']
            calls = [(r['method'], r['path'].replace('/api2/json', '').split('?')[0]) for r in sim.requests()]
            assert (calls.count(MACHINES), calls.count(PACKAGES)) == (machines, packages), (check, vmid, result, calls)
