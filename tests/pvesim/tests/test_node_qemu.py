"""A node's QEMU and the machines a start may pin (docs/pve-semantics.md §73), as pvesim/node_qemu.py follows
qemu-server 9.2.6 src/PVE/QemuServer.pm `config_to_command` (its first check: `Installed QEMU version ... is too old`,
then `Installed qemu-server (max feature level for X.Y is pveN) is too old`; a release candidate skips it),
src/PVE/QemuServer/Machine.pm `get_vm_machine` (`+pve0` appended; unpinned and Windows machines never refused) and
`$PVE_MACHINE_VERSION`, `vm_start_nolock` (a resume runs `runningmachine`), src/PVE/API2/Qemu/Machine.pm `types`
(every user) and pve-manager 9.2.11 PVE/API2/APT.pm `versions` (Sys.Audit on /nodes/{node})."""

from test_values import _vm, seed, task_error

from conftest import Q, error_of, run


def test_the_machine_list_shows_the_node_s_qemu_and_qemu_server_s_revisions(sim, tmp_path):
    seed(sim, tmp_path, [], node_qemu={'pve1': '9.2.0'})
    sim.add_user('blind@pve', tokens={'t': 's'}, acl={'/vms': ['VM.Audit']})
    listed = sim.api('GET', '/nodes/pve1/capabilities/qemu/machines', token='blind@pve!t=s')
    ids = [m['id'] for m in listed]
    assert sorted(ids[:4]) == ['pc-i440fx-9.2', 'pc-i440fx-9.2+pve1', 'pc-q35-9.2', 'pc-q35-9.2+pve1']
    assert [m['version'] for m in listed[:2]] == ['9.2+pve1', '9.2+pve1']
    assert 'pc-q35-10.0' not in ids and 'pc-q35-4.1+pve2' in ids and 'pc-q35-8.1' in ids
    assert listed[0]['changes'] == 'Disables S3/S4 power states by default.'
    virt = sim.api('GET', '/nodes/pve1/capabilities/qemu/machines', {'arch': 'aarch64'})
    assert virt[0]['id'] == 'virt-9.2+pve1'
    # the default QEMU, 10.1
    assert sim.api('GET', '/nodes/pve2/capabilities/qemu/machines')[0]['version'] == '10.1'


def test_the_package_versions_need_sys_audit_on_the_node(sim, tmp_path):
    seed(sim, tmp_path, [], node_qemu={'pve1': '9.2.0'})
    packages = dict((p['Package'], p) for p in sim.api('GET', '/nodes/pve1/apt/versions'))
    assert packages['pve-qemu-kvm']['OldVersion'] == '9.2.0-1'
    sim.add_user('blind@pve', tokens={'t': 's'}, acl={'/vms': ['VM.Audit']})
    err = error_of(sim.api, 'GET', '/nodes/pve1/apt/versions', token='blind@pve!t=s')
    assert err.status == 403 and 'Sys.Audit' in err.message


def test_a_start_refuses_a_machine_the_node_s_qemu_cannot_run_first(sim, tmp_path):
    seed(sim, tmp_path, [
        _vm(390, machine='pc-q35-10.0', bios='ovmf', cpu='pentium'),
        _vm(391, machine='type=pc-i440fx-9.2+pve2,viommu=virtio'),
        _vm(392, machine='pc-q35-8.1+pve1'),
        _vm(393, machine='pc-q35-9.2+pve1'),
        _vm(394, machine='q35', ostype='win11'),
        _vm(395, machine='pc-i440fx-4.1+pve2'),
    ], node_qemu={'pve1': '9.2.0'})
    words = {
        390: "Installed QEMU version '9.2.0' is too old to run machine type 'pc-q35-10.0+pve0', please upgrade node "
             "'pve1'",
        391: "Installed qemu-server (max feature level for 9.2 is pve1) is too old to run machine type "
             "'pc-i440fx-9.2+pve2', please upgrade node 'pve1'",
        392: "Installed qemu-server (max feature level for 8.1 is pve0) is too old to run machine type "
             "'pc-q35-8.1+pve1', please upgrade node 'pve1'",
    }
    for vmid, expected in words.items():
        assert task_error(run(sim, 'POST', Q + '/%d/status/start' % vmid)) == expected, vmid
    for vmid in (393, 394, 395):
        assert run(sim, 'POST', Q + '/%d/status/start' % vmid)['exitstatus'] == 'OK', vmid


def test_a_release_candidate_skips_the_check(sim, tmp_path):
    seed(sim, tmp_path, [_vm(397, machine='pc-q35-11.0')], node_qemu={'pve1': '10.0.90'})
    assert run(sim, 'POST', Q + '/397/status/start')['exitstatus'] == 'OK'


def test_a_resume_runs_its_running_machine(sim, tmp_path):
    # vm_start_nolock: a resumed VM (a vmstate, or a suspended lock) is forced to its runningmachine; a VM not resumed
    # runs its config's machine, whatever runningmachine says
    state = 'local-lvm:vm-398-state-suspend-2026-12-01'
    seed(sim, tmp_path, [_vm(398, machine='q35', vmstate=state, runningmachine='pc-q35-10.0+pve1'),
                         _vm(399, machine='q35', runningmachine='pc-q35-10.0+pve1')], node_qemu={'pve1': '9.2.0'})
    assert task_error(run(sim, 'POST', Q + '/398/status/start')) == (
        "Installed QEMU version '9.2.0' is too old to run machine type 'pc-q35-10.0+pve1', please upgrade node 'pve1'")
    assert run(sim, 'POST', Q + '/399/status/start')['exitstatus'] == 'OK'
