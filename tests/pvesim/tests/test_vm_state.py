"""The VM's state before a write (docs/pve-semantics.md §33): a template's base volume that a linked clone
uses is not freed (unlinking it with `force` is refused for the drive and leaves it in place; the destroy of
the template is refused), protection refuses a destroy, a linked clone takes neither `storage` nor
`format`, a running VM's full clone cannot copy its TPM state, and a paused VM is not shut down.

Sources: pve-storage 9.1.7 src/PVE/Storage.pm `vdisk_free` ("base volume '<volname>' is still in use by
linked clones") and `volume_is_base_and_used`; qemu-server 9.2.6 src/PVE/QemuServer.pm
`vmconfig_apply_pending` (the error is the option's, "unable to apply pending change <opt> : <error>", the
delete stays pending) and `destroy_vm`; src/PVE/API2/Qemu.pm `update_vm_api` (`raise_param_exc($errors)`).
"""

import json
import os

from conftest import Q, config, error_of, ok, run

IN_USE = "unable to apply pending change scsi0 : base volume '9000/base-9000-disk-0.qcow2' is still in use by linked clones"


def linked_clone(sim):
    ok(run(sim, 'POST', Q + '/9000/clone', {'newid': 310, 'name': 'linked', 'full': 0}))
    assert config(sim, 310)['scsi0'].startswith('vmdata:9000/base-9000-disk-0.qcow2/310/vm-310-disk-0.qcow2')


def test_unlinking_a_base_volume_a_linked_clone_uses_is_refused_and_keeps_it(sim):
    linked_clone(sim)
    err = error_of(sim.api, 'PUT', Q + '/9000/unlink', {'idlist': 'scsi0', 'force': 1})
    assert (err.status, err.errors) == (400, {'scsi0': IN_USE + '\n'})  # die's text ends in a newline
    # the drive stays, its delete pending (GET config without `current` shows the pending state)
    assert config(sim, 9000, current=True)['scsi0'].startswith('vmdata:9000/base-9000-disk-0.qcow2')
    volumes = [v['volid'] for v in sim.api('GET', '/nodes/pve1/storage/vmdata/content')]
    assert 'vmdata:9000/base-9000-disk-0.qcow2' in volumes


def test_once_the_clone_is_gone_the_base_volume_is_freed(sim):
    linked_clone(sim)
    ok(run(sim, 'DELETE', Q + '/310'))
    sim.api('PUT', Q + '/9000/unlink', {'idlist': 'scsi0', 'force': 1})
    assert 'scsi0' not in config(sim, 9000)
    volumes = [v['volid'] for v in sim.api('GET', '/nodes/pve1/storage/vmdata/content')]
    assert 'vmdata:9000/base-9000-disk-0.qcow2' not in volumes


def test_the_template_itself_is_not_destroyed_while_a_linked_clone_uses_it(sim):
    linked_clone(sim)
    status = run(sim, 'DELETE', Q + '/9000')
    assert status['exitstatus'] == "base volume 'vmdata:9000/base-9000-disk-0.qcow2' is still in use by linked cloned"
    assert 'scsi0' in config(sim, 9000)


def test_protection_refuses_the_destroy_before_its_task(sim):
    # qemu-server Qemu.pm destroy_vm API, `$early_checks` (AbstractConfig.pm check_protection)
    sim.api('PUT', Q + '/100/config', {'protection': 1})
    err = error_of(sim.api, 'DELETE', Q + '/100')
    assert (err.status, err.message) == (500, "can't remove VM 100 - protection mode enabled")
    assert 'scsi0' in config(sim, 100)


def test_a_linked_clone_takes_neither_storage_nor_format(sim):
    # qemu-server Qemu.pm clone_vm `$load_and_check`, before the worker
    for extra, words in (({'storage': 'local-lvm'}, "parameter 'storage' not allowed for linked clones"),
                         ({'format': 'raw'}, "parameter 'format' not allowed for linked clones")):
        err = error_of(sim.api, 'POST', Q + '/9000/clone', dict({'newid': 311, 'full': 0}, **extra))
        assert (err.status, err.message) == (500, words)
    assert error_of(sim.api, 'GET', Q + '/311/config').status == 500


def test_a_full_clone_of_a_running_vm_cannot_copy_its_tpm_state(sim):
    # qemu-server Qemu.pm clone_vm: "cannot clone TPM state while VM is running" (a full clone, no snapshot)
    ok(run(sim, 'POST', Q + '/100/status/stop'))
    sim.api('PUT', Q + '/100/config', {'tpmstate0': 'local-lvm:1,version=v2.0'})
    ok(run(sim, 'POST', Q + '/100/status/start'))
    err = error_of(sim.api, 'POST', Q + '/100/clone', {'newid': 312, 'full': 1})
    assert (err.status, err.message) == (500, 'cannot clone TPM state while VM is running')
    assert error_of(sim.api, 'GET', Q + '/312/config').status == 500


def test_a_seeded_paused_vm_is_not_shut_down(sim, tmp_path):
    # qemu-server Qemu.pm vm_shutdown: "VM is paused - cannot shutdown" without forceStop, before the task
    seed_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'seeds')
    with open(os.path.join(seed_dir, 'default.json'), encoding='utf-8') as f:
        seed = json.load(f)
    seed['vms'] = [dict(vm, qmpstatus='paused') if vm['vmid'] == 100 else vm for vm in seed['vms']]
    path = tmp_path / 'paused.json'
    path.write_text(json.dumps(seed))
    sim.reset(str(path))
    assert sim.api('GET', Q + '/100/status/current')['qmpstatus'] == 'paused'
    err = error_of(sim.api, 'POST', Q + '/100/status/shutdown')
    assert (err.status, err.message) == (500, 'VM is paused - cannot shutdown')
