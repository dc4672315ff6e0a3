"""Device and directory mappings (docs/pve-semantics.md §64), as pvesim/mappings.py follows pve-manager 9.2.11
PVE/API2/Cluster/Mapping/PCI.pm, USB.pm, Dir.pm `index` (the entries the user may see, `check-node`'s checks),
qemu-server 9.2.6 src/PVE/QemuServer/PCI.pm `parse_hostpci` and src/PVE/QemuServer/USB.pm `parse_usb_device` (a start:
the node's entries, pve-guest-common Mapping/*.pm `find_on_current_node`), src/PVE/QemuServer/Virtiofs.pm
`assert_virtiofs_config` (Mapping/Dir.pm `find_on_current_node`, before the ACL check), src/PVE/QemuMigrate.pm
`prepare` with src/PVE/QemuMigrate/Helpers.pm `check_local_resources` (the target's entries; live migration)."""

from test_migrate import migrate, resource
from test_values import _vm, seed, task_error

from conftest import Q, run

MAPPINGS = {
    'pci': [{'id': 'gpu', 'map': ['node=pve2,path=0000:01:00.0']},
            {'id': 'live', 'map': ['node=pve1,path=0000:03:00.0', 'node=pve2,path=0000:03:00.0'],
             'live-migration-capable': 1},
            {'id': 'fixed', 'map': ['node=pve1,path=0000:02:00.0', 'node=pve2,path=0000:02:00.0']}],
    'usb': [{'id': 'keys', 'map': ['node=pve1,id=1234:5678', 'node=pve1,path=1-2']},
            {'id': 'dongle', 'map': ['node=pve1,id=abcd:0001']}],
    'dir': [{'id': 'docs', 'map': ['node=pve2,path=/srv/docs']},
            {'id': 'twice', 'map': ['node=pve1,path=/srv/a', 'node=pve1,path=/srv/b']}],
}


def _as_root(sim):
    data = sim.api('POST', '/access/ticket', {'username': 'root@pam', 'password': 'secret'}, token=False)
    return dict(token=False, ticket=(data['ticket'], data['CSRFPreventionToken']))


def test_the_lists_show_what_the_user_may_see_and_the_node_s_checks(sim, tmp_path):
    seed(sim, tmp_path, [], mappings=MAPPINGS)
    root = _as_root(sim)
    listed = sim.api('GET', '/cluster/mapping/pci', **root)
    assert [m['id'] for m in listed] == ['fixed', 'gpu', 'live']
    assert listed[1]['map'] == ['node=pve2,path=0000:01:00.0'] and 'checks' not in listed[1]
    checked = {m['id']: m['checks'] for m in sim.api('GET', '/cluster/mapping/pci', {'check-node': 'pve1'}, **root)}
    assert checked['gpu'] == [{'severity': 'warning', 'message': 'No mapping for node pve1.'}]
    assert checked['fixed'] == []
    # the seed's automation token holds no Mapping.* privilege: it sees none
    assert sim.api('GET', '/cluster/mapping/dir') == []


def test_a_start_needs_the_mapped_devices_on_its_node(sim, tmp_path):
    seed(sim, tmp_path, [
        _vm(360, hostpci0='mapping=gpu'),
        _vm(361, usb0='mapping=keys'),
        _vm(362, virtiofs0='dirid=docs'),
        _vm(363, virtiofs0='dirid=nowhere'),
        _vm(364, virtiofs0='dirid=twice'),
        # the directory is looked up before the Windows ACL check
        _vm(365, ostype='win11', virtiofs0='dirid=docs,expose-acl=1'),
        _vm(366, hostpci0='mapping=fixed', usb0='mapping=dongle'),
    ], mappings=MAPPINGS)
    refused = {
        360: "PCI device mapping not found for 'gpu'",
        361: 'More than one USB mapping per host not supported',
        362: 'No directory mapping for node pve1.',
        363: 'Directory ID nowhere does not exist.',
        364: 'More than than one directory mapping for node pve1.',
        365: 'No directory mapping for node pve1.',
    }
    for vmid, words in refused.items():
        assert task_error(run(sim, 'POST', Q + '/%d/status/start' % vmid)) == words, vmid
    assert run(sim, 'POST', Q + '/366/status/start')['exitstatus'] == 'OK'


def test_a_migration_needs_the_mappings_on_the_target_and_live_capable_devices(sim, tmp_path):
    seed(sim, tmp_path, [
        _vm(370, usb0='mapping=dongle'),
        _vm(371, status='running', hostpci0='mapping=fixed'),
        _vm(372, status='running', hostpci0='mapping=live'),
        _vm(373, hostpci0='mapping=fixed'),
    ], mappings=MAPPINGS)
    for vmid, words, online in ((370, "can't migrate to 'pve2': missing mapped devices usb0", 0),
                                (371, "can't live migrate running VM which uses following mapped devices: "
                                      'hostpci0:fixed', 1)):
        status = migrate(sim, vmid, target='pve2', online=online)
        assert status['exitstatus'] == 'migration aborted', status
        assert resource(sim, vmid)['node'] == 'pve1'
    for vmid, online in ((372, 1), (373, 0)):
        assert migrate(sim, vmid, target='pve2', online=online)['exitstatus'] == 'OK', vmid
        assert resource(sim, vmid)['node'] == 'pve2'


DEVICES = {'pve1': {'pci': {'0000:04:00.0': {'id': '10de:2204', 'iommugroup': 12}},
                    'usb': {'1-4': '1234:9999'}, 'dirs': ['/srv/here']}}
CHANGED = {
    'pci': [{'id': 'moved', 'map': ['node=pve1,path=0000:05:00.0,id=10de:2204,iommugroup=12']},
            {'id': 'other', 'map': ['node=pve1,path=0000:04:00,id=10de:2205,iommugroup=12']},
            {'id': 'same', 'map': ['node=pve1,path=0000:04:00.0,id=10de:2204,iommugroup=12']}],
    'usb': [{'id': 'stick', 'map': ['node=pve1,path=1-4,id=1234:5678']}],
    'dir': [{'id': 'gone', 'map': ['node=pve1,path=/srv/gone']}],
}


def test_assert_valid_compares_each_entry_with_the_node_s_hardware_and_directories(sim, tmp_path):
    seed(sim, tmp_path, [
        _vm(380, hostpci0='mapping=moved'),
        _vm(381, hostpci0='mapping=other'),
        _vm(382, usb0='mapping=stick'),
        _vm(383, virtiofs0='dirid=gone'),
        # the Windows ACL check comes before assert_valid
        _vm(384, ostype='win11', virtiofs0='dirid=gone,expose-acl=1'),
        _vm(385, hostpci0='mapping=same'),
    ], mappings=CHANGED, node_devices=DEVICES)
    refused = {
        380: "PCI device mapping invalid (hardware probably changed): pci device '0000:05:00.0' not found",
        381: "PCI device mapping invalid (hardware probably changed): 'id' does not match for 'other' "
             '(10de:2204 != 10de:2205)',
        382: "USB Mapping invalid (hardware probably changed): 'id' does not match for 'stick' "
             '(1234:9999 != 1234:5678)',
        383: 'directory mapping invalid: Path /srv/gone does not exist',
        384: 'Please disable ACLs for virtiofs on Windows VMs, otherwise the virtiofs shared directory cannot be '
             'mounted.',
    }
    for vmid, words in refused.items():
        assert task_error(run(sim, 'POST', Q + '/%d/status/start' % vmid)) == words, vmid
    assert run(sim, 'POST', Q + '/385/status/start')['exitstatus'] == 'OK'
    root = _as_root(sim)
    usb = sim.api('GET', '/cluster/mapping/usb', {'check-node': 'pve1'}, **root)
    assert usb[0]['errors'] == [{'severity': 'error', 'message': "Invalid configuration: 'id' does not match for "
                                 "'stick' (1234:9999 != 1234:5678)\n"}]


def test_legacy_igd_on_a_mapping_with_several_devices_on_the_node_is_refused_in_the_start(sim, tmp_path):
    """PCI.pm `parse_hostpci` (one alternative per entry of the mapping on the node) and `parse_hostpci_devices`
    (`alternate devices`, after the mapping's own checks and the multifunction rule; docs/pve-semantics.md §70)."""
    maps = dict(MAPPINGS, pci=MAPPINGS['pci'] + [
        {'id': 'igds', 'map': ['node=pve1,path=0000:00:02.0', 'node=pve1,path=0000:01:00.0',
                               'node=pve2,path=0000:00:02.0']},
        {'id': 'igd', 'map': ['node=pve1,path=0000:00:02.0', 'node=pve2,path=0000:00:02.0;0000:00:02.1']}])
    seed(sim, tmp_path, [
        _vm(390, vga='none', hostpci0='mapping=igds,legacy-igd=1'),
        _vm(391, vga='none', hostpci0='mapping=gpu,legacy-igd=1'),
        _vm(392, hostpci0='mapping=igds,legacy-igd=1'),
        _vm(393, vga='none', hostpci0='mapping=igd,legacy-igd=1'),
        _vm(394, vga='none', hostpci0='mapping=igds'),
    ], mappings=maps)
    refused = {
        390: 'legacy IGD assignment is not compatible with alternate devices',
        391: "PCI device mapping not found for 'gpu'",
        392: "legacy IGD assignment requires VGA mode to be 'none'",
    }
    for vmid, words in refused.items():
        assert task_error(run(sim, 'POST', Q + '/%d/status/start' % vmid)) == words, vmid
    for vmid in (393, 394):
        assert run(sim, 'POST', Q + '/%d/status/start' % vmid)['exitstatus'] == 'OK', vmid
