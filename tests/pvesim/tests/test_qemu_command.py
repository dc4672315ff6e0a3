"""Start refusals of QEMU's command line decided by the config alone (docs/pve-semantics.md §59), as
pvesim/qemu_command.py follows them: qemu-server 9.2.6 src/PVE/QemuServer/Memory.pm `config` (hugepages need NUMA; a
custom `numaN` needs `memory` and `cpus`, and the nodes' total is the static memory), src/PVE/QemuServer/USB.pm
`get_usb_devices` (usb5 and above need qemu-xhci), src/PVE/QemuServer.pm
`print_netdevice_full` (a virtio NIC's MTU below 576), src/PVE/QemuServer/Virtiofs.pm `assert_virtiofs_config`
(ACLs on a Windows guest), in `config_to_command`'s order."""

from test_values import _vm, seed, task_error

from conftest import Q, run

ACL = 'Please disable ACLs for virtiofs on Windows VMs, otherwise the virtiofs shared directory cannot be mounted.'


def test_a_start_is_refused_for_what_the_config_alone_tells(sim, tmp_path):
    seed(sim, tmp_path, [
        _vm(330, hugepages='2'),
        _vm(331, numa=1, numa0='cpus=0'),
        _vm(332, numa=1, numa0='memory=1024'),
        _vm(333, numa=1, numa0='cpus=0,memory=512', numa1='cpus=1,memory=256'),
        _vm(334, numa=1, numa0='cpus=0,memory=512', numa1='cpus=1,memory=512'),
        _vm(335, net0='virtio=BC:24:11:00:03:35,bridge=vmbr0,mtu=500'),
        _vm(336, net0='virtio=BC:24:11:00:03:36,bridge=vmbr0,mtu=1'),
        _vm(337, ostype='win11', virtiofs0='dirid=share,expose-acl=1'),
        _vm(338, ostype='l26', virtiofs0='dirid=share,expose-acl=1'),
        # the clipboard comes before the NICs and virtio-fs in config_to_command
        _vm(339, vga='serial0,clipboard=vnc', net0='virtio=BC:24:11:00:03:39,bridge=vmbr0,mtu=500'),
        _vm(350, ostype='other', usb5='spice'),
        _vm(351, ostype='l26', machine='pc-i440fx-6.2', usb0='spice', usb6='spice', sockets=64),
        _vm(352, ostype='win11', usb5='spice'),
    ], mappings={'dir': [{'id': 'share', 'map': ['node=pve1,path=/srv/share']}]})  # mappings.py (§64)
    refused = {
        330: 'numa needs to be enabled to use hugepages',
        331: 'missing NUMA node0 memory value',
        332: 'missing NUMA node0 cpus',
        333: 'total memory for NUMA nodes must be equal to vm static memory',
        335: "netdev net0: MTU '500' is smaller than the IP minimum MTU '576'",
        337: ACL,
        339: 'vga type serial0 is not compatible with VNC clipboard',
        350: 'using usb5 is only possible with machine type >= 7.1 and ostype l26 or windows > 7',
        # USB.pm comes before the CPU count
        351: 'using usb6 is only possible with machine type >= 7.1 and ostype l26 or windows > 7',
    }
    for vmid, words in refused.items():
        assert task_error(run(sim, 'POST', Q + '/%d/status/start' % vmid)) == words, vmid
    for vmid in (334, 336, 338, 352):
        assert run(sim, 'POST', Q + '/%d/status/start' % vmid)['exitstatus'] == 'OK', vmid
