"""Well-typed input that is wrong for this cluster is refused as PVE refuses it, with its wording, and
writes nothing (issue 17; docs/pve-semantics.md §19, §24)."""

import pytest

from conftest import Q, config, error_of, run

LOOKUP = "hostname lookup 'pve9' failed - failed to get address info for: pve9: Name or service not known"


@pytest.mark.parametrize('method,path,body', [
    ('GET', '/nodes/pve9/qemu/100/config', None),
    ('PUT', '/nodes/pve9/qemu/100/config', {'cores': 0}),   # proxied before its parameters are checked
    ('POST', '/nodes/pve9/qemu', {'vmid': 300}),
    ('POST', '/nodes/pve9/qemu/100/status/start', None),
])
def test_a_node_the_cluster_does_not_know_fails_the_hostname_lookup(sim, method, path, body):
    # pve-manager PVE/HTTPServer.pm rest_handler (`proxyto`), pve-cluster PVE/Cluster.pm remote_node_ip,
    # pve-common PVE/Network.pm get_ip_from_hostname
    err = error_of(sim.api, method, path, body)
    assert (err.status, err.message) == (500, LOOKUP)


def test_a_clone_to_an_unknown_node_is_refused(sim):
    # qemu-server Qemu.pm clone_vm (PVE::Cluster::check_node_exists)
    err = error_of(sim.api, 'POST', Q + '/9000/clone', {'newid': 305, 'target': 'pve9'})
    assert (err.status, err.message) == (500, "no such cluster node 'pve9'")


def test_storages_that_are_missing_or_hold_no_vm_images_are_refused_before_any_write(sim):
    # pve-storage PVE/Storage.pm storage_config ("storage '<id>' does not exist"); qemu-server Qemu.pm
    # $check_storage_access / create_disks via PVE/Storage.pm (content check "does not support vm images")
    before = config(sim, 100)
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'scsi1': 'nosuch:4'})
    assert (err.status, err.message) == (500, "storage 'nosuch' does not exist")
    for sid in ('isos', 'local'):
        err = error_of(sim.api, 'PUT', Q + '/100/config', {'scsi1': sid + ':4'})
        assert (err.status, err.errors) == (400, {'storage': "storage '{0}' does not support vm images".format(sid)})
    err = error_of(sim.api, 'POST', Q, {'vmid': 301, 'scsi0': 'isos:4'})
    assert err.errors == {'storage': "storage 'isos' does not support vm images"}
    assert config(sim, 100) == before
    assert error_of(sim.api, 'GET', Q + '/301/config').status == 500  # no VM 301 was created


def test_a_move_to_a_missing_or_imageless_storage_is_refused(sim):
    # qemu-server Qemu.pm move_vm_disk (storage_config, check of `images` content)
    err = error_of(sim.api, 'POST', Q + '/100/move_disk', {'disk': 'scsi0', 'storage': 'nosuch'})
    assert (err.status, err.message) == (500, "storage 'nosuch' does not exist")
    err = error_of(sim.api, 'POST', Q + '/100/move_disk', {'disk': 'scsi0', 'storage': 'isos'})
    assert err.errors == {'storage': "storage 'isos' does not support vm images"}


@pytest.mark.parametrize('body,key,message', [
    ({'cores': 0}, 'cores', 'value must have a minimum value of 1'),
    ({'memory': 1}, 'memory', 'invalid format - format error\nmemory.current: value must have a minimum value of 16'),
    ({'ipconfig0': 'ip=10.0.0.300/24'}, 'ipconfig0', 'ipconfig0.ip: invalid format - value does not look like a '
                                                     'valid ipv4 network configuration'),
    ({'ipconfig0': 'ip=10.0.0.3'}, 'ipconfig0', 'ipconfig0.ip: invalid format - value does not look like a valid '
                                                'ipv4 network configuration'),
    ({'scsi1': '5'}, 'scsi1', "scsi1.file: invalid format - unable to parse volume ID '5'"),
])
def test_schema_limits_and_formats_are_400_under_the_key(sim, body, key, message):
    # pve-common PVE/JSONSchema.pm check_prop / parse_property_string; qemu-server PVE/QemuServer.pm
    # (cores minimum 1, pve-qm-memory current minimum 16, pve-qm-ipconfig ip = pve-ipv4-config CIDR or dhcp,
    # drive `file` a volume id or STORAGE:SIZE)
    err = error_of(sim.api, 'PUT', Q + '/100/config', body)
    assert err.status == 400 and err.message == 'Parameter verification failed.'
    assert message in err.errors[key]


def test_balloon_above_memory_is_refused_on_update(sim):
    # qemu-server Qemu.pm update_vm_api ("balloon value too large (must be smaller than assigned memory)")
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'memory': 1024, 'balloon': 2048})
    assert (err.status, err.message) == (500, 'balloon value too large (must be smaller than assigned memory)')


def test_an_iso_missing_on_its_storage_is_refused(sim):
    # qemu-server Qemu.pm create_disks activates the attached volume before it asks its size: on a directory
    # storage pve-storage Plugin.pm activate_volume dies first (docs/pve-semantics.md §68)
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'ide2': 'isos:iso/nope.iso,media=cdrom'})
    assert (err.status, err.message) == (500, "volume 'isos:iso/nope.iso' does not exist")
    status = run(sim, 'POST', Q, {'vmid': 303, 'ide2': 'isos:iso/nope.iso,media=cdrom'})
    assert status['exitstatus'] == "unable to create VM 303 - volume 'isos:iso/nope.iso' does not exist"
