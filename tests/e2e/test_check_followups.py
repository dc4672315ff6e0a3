"""Check versus real, issue 28: where `--check` said yes and the real run says no, across the tasks of one run.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and
the two must agree task by task (test_check_vs_real.py's `run_batch` and `compare_row`):

1. the power state an earlier task of the run predicts (paused, hibernated, stopped, running) is
   what the later tasks read (Qemu.pm `vm_shutdown`: "VM is paused - cannot shutdown"; the power
   table of modules/proxmox_kvm/src/plan/power.rs), also for a NIC or disk hot-plug decision
   (QemuServer.pm `vmconfig_hotplug_pending`, docs/pve-semantics.md §6);
2. two allocations on one thick storage that fit alone but not together (LVMPlugin.pm
   `alloc_lvm_image`, docs/pve-semantics.md §22.4, §37.3).

The second gap of issue 28, a clone whose boot order names a device the clone will not have, is a
row of test_check_vs_real.py's STATE_AND_COMPOSITE (census row R-config-16).
"""

import copy
import json
import os

from test_check_vs_real import Row, SEED_DIR, _vm, assert_rows_agree, disk, kvm, nic, run_batch, write_seed

GIB = 1024 ** 3

# Rows' VMs: 172-177 and 181-183 for the power rows, 179-180 for the space rows.
VMS = [
    _vm(172, 'row-172', status='running'),
    _vm(173, 'row-173', status='running'),
    _vm(174, 'row-174', status='running'),
    _vm(175, 'row-175', status='running'),
    _vm(176, 'row-176', status='running'),
    _vm(177, 'row-177'),
    _vm(179, 'row-179'),
    _vm(180, 'row-180'),
    _vm(181, 'row-181', status='running'),
    _vm(182, 'row-182', status='running'),
    _vm(183, 'row-183', status='running'),
]

# Two thick LVM volume groups of 10 GiB each (empty): a 6 GiB volume fits alone, two do not.
THICK = {'thick-a': {'type': 'lvm', 'vgname': 'thicka', 'content': 'images', 'shared': 0, 'total': 10 * GIB},
         'thick-b': {'type': 'lvm', 'vgname': 'thickb', 'content': 'images', 'shared': 0, 'total': 10 * GIB}}


def _seed(tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = copy.deepcopy(json.load(f)['storages'])
    storages.update(copy.deepcopy(THICK))
    return write_seed(tmp_path, 'followups', VMS, storages=storages)


def _power(name, vmid, first, then, **kw):
    return Row(name, [('first', kvm(node='pve1', vmid=vmid, state=first)), ('then', then)], **kw)


POWER = [
    _power('predicted paused: stopped', 172, 'paused', kvm(node='pve1', vmid=172, state='stopped'),
           real_failure='VM is paused - cannot shutdown'),
    _power('predicted paused: started', 173, 'paused', kvm(node='pve1', vmid=173, state='started'),
           real_changed=True),
    _power('predicted hibernated: started', 174, 'hibernated', kvm(node='pve1', vmid=174, state='started'),
           real_changed=True),
    _power('predicted stopped: paused', 175, 'stopped', kvm(node='pve1', vmid=175, state='paused', force=True),
           real_failure='is not running, so it cannot be paused'),
    _power('predicted hibernated: hibernated', 182, 'hibernated', kvm(node='pve1', vmid=182, state='hibernated'),
           real_changed=False),
    # a hibernated VM's config is locked (RunState.pm vm_suspend writes `lock: suspended`)
    _power('predicted hibernated: update', 183, 'hibernated', kvm(node='pve1', vmid=183, update=True, cores=2),
           real_failure='locked'),
    _power('predicted paused: current', 181, 'paused', kvm(node='pve1', vmid=181, state='current'),
           real_changed=False),
    # a NIC added to a VM an earlier task stops: written to the config, not pending
    _power('predicted stopped: nic added', 176, 'stopped', nic(vmid=176, interface='net1', bridge='vmbr0',
                                                              mac='BC:24:11:00:B0:01'),
           real_changed=True),
    # a disk added to a VM an earlier task starts: hot-plugged, not pending
    _power('predicted running: disk added', 177, 'started', disk(vmid=177, disk='scsi1', storage='local-lvm', size='1'),
           real_changed=True),
]

# Two 6 GiB volumes on one 10 GiB thick storage: the second fails, whichever module allocates it.
SPACE = [
    Row('thick lvm: create then disk', [
        ('create', kvm(node='pve1', vmid=253, name='row-253', scsi={'scsi0': 'thick-a:6'})),
        ('disk', disk(vmid=179, disk='scsi1', storage='thick-a', size='6')),
    ], real_failure='insufficient free space'),
    Row('thick lvm: disk then create', [
        ('disk', disk(vmid=180, disk='scsi1', storage='thick-b', size='6')),
        ('create', kvm(node='pve1', vmid=254, name='row-254', scsi={'scsi0': 'thick-b:6'})),
    ], real_failure='insufficient free space'),
]


def test_check_run_follows_its_own_predictions(ansible, sim, tmp_path, summary):
    seed = _seed(tmp_path)
    problems = {}
    problems.update(run_batch(ansible, sim, seed, POWER))
    problems.update(run_batch(ansible, sim, seed, SPACE))
    rows = POWER + SPACE
    assert_rows_agree(summary, 'check-versus-real (issue 28)', rows, problems)


def test_a_clone_from_a_snapshot_is_planned_and_checked_from_that_snapshot(ansible, sim):
    """clone_vm copies the snapshot's config when the task names one (Qemu.pm `clone_vm`: `$conf->
    {snapshots}->{$snapname}`), so the boot order of a clone's configuring write is checked against
    the snapshot's devices, and the clone's predicted config is the snapshot's (docs/pve-semantics.md
    §37.2; a review of issue 28 found the current config used)."""
    for path, params in (('/nodes/pve1/qemu/100/status/stop', None),
                         ('/nodes/pve1/qemu/100/snapshot', {'snapname': 's1'})):
        assert sim.wait_task(sim.api('POST', path, params))['exitstatus'] == 'OK'
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'delete': 'net0'})
    assert 'net0' not in sim.api('GET', '/nodes/pve1/qemu/100/config')
    clone = {'name': 'kvm', 'delegate_to': 'localhost', 'ferro.proxmox.proxmox_kvm': {
        'node': 'pve1', 'vmid': 100, 'clone': 'existing-web', 'snapname': 's1', 'newid': 301, 'name': 'from-s1',
        'boot': 'order=net0;scsi0', 'timeout': 120}}
    play = [{'name': 'e2e', 'hosts': 'localhost', 'gather_facts': False, 'tasks': [clone]}]
    results = {}
    for mode in ('check', 'real'):
        run = ansible.run_playbook(play, check=mode == 'check', diff=True)
        assert run.rc == 0, run.stdout[-3000:]
        results[mode] = run.task('kvm')['result']
    made = sim.api('GET', '/nodes/pve1/qemu/301/config')
    assert made['boot'] == 'order=net0;scsi0' and made['net0'].startswith('virtio=')
    # the check run predicted the snapshot's NIC (its MAC only PVE knows) and the boot order
    predicted = results['check']['diff']['after'] if 'diff' in results['check'] else ''
    assert 'net0: virtio=(known after apply),bridge=vmbr0,firewall=1' in predicted, predicted
    assert results['real']['changed'] is True and results['check']['changed'] is True
