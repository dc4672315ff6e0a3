"""A config update that dies in its loop over the request's keys keeps what it wrote before
(docs/pve-semantics.md §39.2): qemu-server src/PVE/API2/Qemu.pm `update_vm_api`, `$updatefn`, writes each delete
and then each set key with `PVE::QemuConfig->write_config` before it takes the next, and dies for a boot order
naming a device the VM will not have when the loop reaches `boot`; it then neither cleans up nor applies the
pending section."""

from conftest import Q, config, create, error_of, pending, run

MISSING = "invalid bootorder: device '{0}' does not exist'"


def test_a_delete_is_written_before_the_boot_order_dies(sim):
    # the delete loop runs first: net0 becomes a pending delete and leaves the boot order (a pending `boot`),
    # both written; the sets' loop then dies at `boot` (running VM 100)
    current = config(sim, 100, current=True)
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'boot': 'order=scsi0;net0', 'delete': 'net0'})
    assert (err.status, err.message) == (500, MISSING.format('net0'))
    assert config(sim, 100, current=True) == current
    left = pending(sim, 100)
    assert left['net0'].get('delete') == 1
    assert left['boot']['pending'] == 'order=scsi0'


def test_a_stopped_vm_keeps_the_written_keys_pending(sim):
    # on a stopped VM an update is applied at its end (vmconfig_apply_pending); the die comes before that, so what
    # the loop wrote stays pending, and the refused boot order is not written at all
    create(sim, 300, name='loop', memory=1024, scsi0='local-lvm:1', net0='virtio,bridge=vmbr0', boot='order=scsi0')
    current = config(sim, 300, current=True)
    err = error_of(sim.api, 'PUT', Q + '/300/config', {'delete': 'net0', 'boot': 'order=scsi0;scsi5'})
    assert (err.status, err.message) == (500, MISSING.format('scsi5'))
    assert config(sim, 300, current=True) == current
    left = pending(sim, 300)
    assert left['net0'].get('delete') == 1
    assert 'pending' not in left['boot'] and left['boot']['value'] == 'order=scsi0'
    # the next update finds them there and applies them with its own
    sim.api('PUT', Q + '/300/config', {'cores': 2})
    now = config(sim, 300, current=True)
    assert 'net0' not in now and now['cores'] == 2 and now['boot'] == 'order=scsi0'


def test_a_set_key_is_pending_or_untouched_never_applied(sim):
    # the sets' loop goes in Perl's hash order, which is not fixed, so PVE may or may not have written `cores` before
    # reaching `boot`; either way nothing is applied and `boot` is not written; the task of a POST fails alike
    create(sim, 301, name='loop2', memory=1024, cores=1, scsi0='local-lvm:1', boot='order=scsi0')
    current = config(sim, 301, current=True)
    status = run(sim, 'POST', Q + '/301/config', {'cores': 4, 'boot': 'order=scsi0;net3'})
    assert status['exitstatus'] == MISSING.format('net3')
    assert config(sim, 301, current=True) == current
    left = pending(sim, 301)
    assert left['cores'].get('pending') in (None, 4)
    assert 'pending' not in left['boot']
