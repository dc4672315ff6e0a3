"""Lifecycle details found in review: destroy of a template with linked clones, clone to another node,
schema checks on power and read calls (docs/pve-semantics.md §2, §14-§16; qemu-server 9.2.6)."""

from conftest import Q, create, error_of, ok, run, volumes


def test_destroying_a_template_with_linked_clones_fails_in_the_task(sim):
    # QemuServer.pm destroy_vm: "base volume '$volid' is still in use by linked cloned" (task error); §14
    ok(run(sim, 'POST', Q + '/9000/clone', {'newid': 300}))
    status = run(sim, 'DELETE', Q + '/9000')
    assert status['exitstatus'] == "base volume 'vmdata:9000/base-9000-disk-0.qcow2' is still in use by linked cloned"
    assert sim.api('GET', Q + '/9000/config')['template'] == 1
    # once the clone is gone the template can go
    ok(run(sim, 'DELETE', Q + '/300'))
    ok(run(sim, 'DELETE', Q + '/9000'))


def test_linked_clone_on_thin_lvm_does_not_keep_the_template(sim):
    # QemuServer.pm destroy_vm -> Storage.pm volume_is_base_and_used: LvmThinPlugin.pm clone_image names the
    # clone's thin snapshot vm-<vmid>-disk-<n>, whose parse_volname names no base, so the base is never in
    # use on lvmthin; the template goes and the clone keeps its volume; §14, §32.2
    create(sim, 200, scsi0='local-lvm:1')
    ok(run(sim, 'POST', Q + '/200/template'))
    ok(run(sim, 'POST', Q + '/200/clone', {'newid': 201}))
    assert volumes(sim, 'local-lvm')['local-lvm:vm-201-disk-0']['vmid'] == 201
    ok(run(sim, 'DELETE', Q + '/200'))
    listed = volumes(sim, 'local-lvm')
    assert 'local-lvm:base-200-disk-0' not in listed and 'local-lvm:vm-201-disk-0' in listed
    ok(run(sim, 'POST', Q + '/201/status/start'))


def test_clone_to_another_node_from_local_storage_is_refused(sim):
    # Qemu.pm clone_vm: "can't clone VM to node '$target' (VM uses local storage)" before the fork; §15
    err = error_of(sim.api, 'POST', Q + '/9000/clone', {'newid': 300, 'target': 'pve2'})
    assert (err.status, err.message) == (500, "can't clone VM to node 'pve2' (VM uses local storage)")
    assert error_of(sim.api, 'GET', Q + '/300/config').status == 500


def test_power_calls_check_their_parameters_against_the_schema(sim):
    # pve-common JSONSchema.pm validate (RESTHandler): unknown or ill-typed parameters are a 400; §2, §4.1
    err = error_of(sim.api, 'POST', Q + '/100/status/stop', {'bogus': 1})
    assert err.status == 400 and err.errors == {
        'bogus': 'property is not defined in schema and the schema does not allow additional properties'}
    err = error_of(sim.api, 'POST', Q + '/100/status/shutdown', {'forceStop': 'maybe'})
    assert err.status == 400 and err.errors == {'forceStop': "type check ('boolean') failed - got 'maybe'"}
    # a parameter's boolean is 0 or 1 only (JSONSchema.pm check_type; parse_boolean's no/off/false are for
    # property strings); docs/pve-semantics.md §32
    err = error_of(sim.api, 'POST', Q + '/100/status/stop', {'skiplock': 'no'})
    assert err.status == 400 and err.errors == {'skiplock': "type check ('boolean') failed - got 'no'"}
    ok(run(sim, 'POST', Q + '/100/status/stop', {'skiplock': 0}))


def test_read_calls_reject_unknown_parameters(sim):
    # pve-common JSONSchema.pm: additionalProperties => 0 on pending and status/current; §2
    for path in ('/100/pending', '/100/status/current'):
        err = error_of(sim.api, 'GET', Q + path, {'bogus': 1})
        assert err.status == 400 and 'bogus' in err.errors, path


def test_a_nic_on_a_missing_bridge_fails_hotplug_and_start(sim):
    # QemuServer.pm vmconfig_hotplug_pending -> PVE::Network tap_plug: "hotplug problem - ..." 400, the NIC
    # stays pending (§5.2 step 4, §6); at start the pending NIC is applied, then QEMU fails (§16)
    from conftest import pending
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'net1': 'virtio,bridge=vmbr9'})
    assert err.status == 400 and err.errors == {'net1': "hotplug problem - bridge 'vmbr9' does not exist"}
    assert pending(sim, 100)['net1']['pending'].endswith(',bridge=vmbr9')
    create(sim, 200, net0='virtio,bridge=vmbr9')
    status = run(sim, 'POST', Q + '/200/status/start')
    assert status['exitstatus'] == 'start failed: QEMU exited with code 1'
    log = [line['t'] for line in sim.api('GET', '/nodes/pve1/tasks/{0}/log'.format(status['upid']))]
    assert "bridge 'vmbr9' does not exist" in log
    assert sim.api('GET', Q + '/200/status/current')['status'] == 'stopped'


def test_a_hibernated_vm_is_destroyed_despite_its_suspended_lock(sim):
    # qemu-server 9.2.6 QemuServer.pm destroy_vm: check_lock is skipped for has_lock($conf, 'suspended');
    # any other lock still refuses in the task (AbstractConfig.pm check_lock); §47.3
    create(sim, 208, scsi0='local-lvm:1')
    sim.api('PUT', Q + '/208/config', {'lock': 'suspended'})
    ok(run(sim, 'DELETE', Q + '/208'))
    assert 208 not in [r['vmid'] for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})]
    create(sim, 209, scsi0='local-lvm:1')
    sim.api('PUT', Q + '/209/config', {'lock': 'backup'})
    status = run(sim, 'DELETE', Q + '/209')
    assert status['exitstatus'] == 'VM is locked (backup)'
