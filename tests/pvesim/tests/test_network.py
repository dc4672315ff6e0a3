"""GET /nodes/{node}/network: the bridges a NIC can use (issue 15)."""

from conftest import Q, error_of, pending

AUDITOR = 'auditor@pve!readonly=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'


def test_any_bridge_lists_the_bridges_the_user_may_use(sim):
    # pve-manager PVE/API2/Network.pm index: `type=any_bridge` keeps bridge and OVSBridge interfaces
    # (plus SDN VNets), then drops each bridge without SDN.Audit/SDN.Use on /sdn/zones/localnetwork/<id>
    # (check_sdn_bridge), root@pam excepted.
    names = [i['iface'] for i in sim.api('GET', '/nodes/pve1/network', {'type': 'any_bridge'})]
    assert names == ['vmbr0', 'vmbr1']
    assert [i['type'] for i in sim.api('GET', '/nodes/pve1/network', {'type': 'any_bridge'})] == ['bridge'] * 2
    assert sim.api('GET', '/nodes/pve1/network', {'type': 'bond'}) == []
    assert sim.api('GET', '/nodes/pve1/network', {'type': 'any_bridge'}, token=AUDITOR) == []
    err = error_of(sim.api, 'GET', '/nodes/pve1/network', {'type': 'bridges'})
    assert err.status == 400 and 'type' in err.errors


def test_a_nic_on_a_missing_bridge_is_written_then_left_pending_on_a_running_vm(sim):
    # qemu-server QemuServer.pm vmconfig_hotplug_pending → vmconfig_update_net/tap_plug: the config
    # is written first, the failed plug answers 400 {net1: "hotplug problem - ..."} and the value stays
    # in [PENDING] (PVE::Network tap_plug: "bridge '<id>' does not exist").
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'net1': 'virtio,bridge=vmbr7'})
    assert err.status == 400 and 'hotplug problem' in err.errors['net1'] and 'vmbr7' in err.errors['net1']
    assert 'bridge=vmbr7' in pending(sim, 100)['net1']['pending']
