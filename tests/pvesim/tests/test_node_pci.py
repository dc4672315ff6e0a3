"""A node's PCI devices (docs/pve-semantics.md §72), as pvesim/node_pci.py follows pve-manager 9.2.11
PVE/API2/Hardware/PCI.pm `pci_scan` (Sys.Audit or Sys.Modify on /, the class blacklist), pve-common
src/PVE/SysFSTools.pm `lspci` (an id's start, `0000:` optional) and qemu-server 9.2.6 src/PVE/QemuServer/PCI.pm
`parse_hostpci` (`no PCI device found for '<id>'`, before the option rules of `parse_hostpci_devices`)."""

from test_mappings import _as_root
from test_values import _vm, seed, task_error

from conftest import Q, run

NODE_DEVICES = {'pve1': {'pci': {'0000:01:00.0': {'id': '10de:2204', 'iommugroup': 12},
                                 '0000:01:00.1': {'id': '10de:1aef', 'iommugroup': 12},
                                 '0000:00:1c.0': {'id': '8086:a110', 'class': '0x060400'}}}}


def test_the_list_needs_sys_audit_and_hides_the_blacklisted_classes(sim, tmp_path):
    seed(sim, tmp_path, [], node_devices=NODE_DEVICES)
    root = _as_root(sim)
    path = '/nodes/pve1/hardware/pci'
    assert [d['id'] for d in sim.api('GET', path, **root)] == ['0000:01:00.0', '0000:01:00.1']
    every = sim.api('GET', path, {'pci-class-blacklist': '', 'verbose': 0}, **root)
    assert [d['id'] for d in every] == ['0000:00:1c.0', '0000:01:00.0', '0000:01:00.1']
    assert 'vendor_name' not in every[0] and every[1]['vendor'] == '0x10de'


def test_a_start_refuses_a_host_id_the_node_lacks_before_the_option_rules(sim, tmp_path):
    seed(sim, tmp_path, [
        _vm(380, hostpci0='host=02:00.0,pcie=1'),
        _vm(381, hostpci0='01:00;0000:04:00.0'),
        _vm(382, hostpci0='01:00,pcie=1'),
        _vm(383, hostpci0='0000:01:00.1', hostpci1='00:1c'),
    ], node_devices=NODE_DEVICES)
    refused = {380: "no PCI device found for '02:00.0'", 381: "no PCI device found for '0000:04:00.0'",
               382: 'q35 machine model is not enabled'}
    for vmid, words in refused.items():
        assert task_error(run(sim, 'POST', Q + '/%d/status/start' % vmid)) == words, vmid
    assert run(sim, 'POST', Q + '/383/status/start')['exitstatus'] == 'OK'


def test_a_node_the_seed_does_not_list_has_no_pci_device_in_the_list_and_at_a_start(sim, tmp_path):
    seed(sim, tmp_path, [dict(_vm(383, hostpci0='01:00.0'), node='pve2')], node_devices=NODE_DEVICES)
    root = _as_root(sim)
    assert sim.api('GET', '/nodes/pve2/hardware/pci', {'pci-class-blacklist': ''}, **root) == []
    q2 = Q.replace('pve1', 'pve2')
    assert "no PCI device found for '01:00.0'" in task_error(run(sim, 'POST', q2 + '/383/status/start'))
