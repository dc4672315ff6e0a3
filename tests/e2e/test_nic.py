"""proxmox_nic end to end: check → real → again through ansible-playbook against pvesim.

The behaviour each scenario relies on is real PVE's: a net value without a MAC gets a new one
(qemu-server Network.pm add_random_macs, docs/pve-semantics.md §9); bridge/tag/link changes apply live
on a running VM, new NICs need `network` hotplug (QemuServer.pm vmconfig_hotplug_pending, §6).
"""

import re

import pytest

MAC_RE = r'[0-9A-F]{2}(?::[0-9A-F]{2}){5}'


def nic_task(_task='nic', **options):
    return {'name': _task, 'ferro.proxmox.proxmox_nic': options, 'delegate_to': 'localhost', 'register': 'out'}


def play(*tasks):
    return [{'name': 'e2e', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def net(sim, vmid, key, current=False):
    config = sim.api('GET', '/nodes/pve1/qemu/%d/config' % vmid, {'current': 1} if current else None)
    return config.get(key)


def mac_of(value):
    return re.match(r'^[a-z0-9_-]+=(' + MAC_RE + ')', value).group(1)


def create_vm(sim, vmid, name, node='pve1', **config):
    upid = sim.api('POST', '/nodes/%s/qemu' % node, dict({'vmid': vmid, 'name': name}, **config))
    assert sim.wait_task(upid)['exitstatus'] == 'OK'


def test_add_a_nic_then_rerun_unchanged(ansible, sim):
    check, real, again = ansible.converge(play(nic_task(vmid=100, interface='net1', bridge='vmbr1', tag=20)),
                                          unpredictable=[MAC_RE])
    result = real.task('nic')['result']
    assert result['changed'] is True
    assert result['msg'] == 'Nic net1 updated on VM with vmid 100'
    value = net(sim, 100, 'net1')
    assert result['config'] == value and result['mac'] == mac_of(value)
    assert value == 'virtio=%s,bridge=vmbr1,tag=20' % result['mac']
    assert result['pending'] == [] and result['reboot_required'] is False
    # In check mode the MAC of a new NIC is not known yet: marked where it will stand, never invented.
    assert check.task('nic')['result']['mac'] == '(known after apply)'
    assert check.task('nic')['result']['config'] == 'virtio=(known after apply),bridge=vmbr1,tag=20'
    assert check.task('nic')['result']['diff']['after'] == 'net1: virtio=(known after apply),bridge=vmbr1,tag=20\n'
    assert real.task('nic')['result']['diff']['before'] == ''
    assert again.task('nic')['result']['msg'] == 'Nic net1 unchanged on VM with vmid 100'
    assert again.task('nic')['result']['mac'] == result['mac']


def test_change_bridge_and_tag_keeps_the_mac(ansible, sim):
    before = net(sim, 100, 'net0')
    _, real, _ = ansible.converge(play(nic_task(vmid=100, interface='net0', bridge='vmbr1', tag=30, firewall=True)))
    result = real.task('nic')['result']
    after = net(sim, 100, 'net0')
    assert mac_of(after) == mac_of(before) == result['mac']
    assert after == 'virtio=%s,bridge=vmbr1,firewall=1,tag=30' % mac_of(before)
    assert result['diff']['before'] == 'net0: %s\n' % before
    assert result['diff']['after'] == 'net0: %s\n' % after
    # Bridge and tag changes apply live on the running VM (§6): nothing pending.
    assert result['pending'] == []
    assert net(sim, 100, 'net0', current=True) == after


def test_lowercase_mac_equal_to_current_is_unchanged(ansible, sim):
    mac = mac_of(net(sim, 100, 'net0'))
    check, real, _ = ansible.converge(play(nic_task(vmid=100, interface='net0', bridge='vmbr0', firewall=True,
                                                    mac=mac.lower())))
    assert real.task('nic')['changed'] is False
    assert real.task('nic')['result']['mac'] == mac


def test_rate_10_twice_is_unchanged(ansible, sim):
    _, real, again = ansible.converge(play(nic_task(vmid=100, interface='net0', bridge='vmbr0', firewall=True, rate=10)))
    assert real.task('nic')['changed'] is True
    assert 'rate=10' in net(sim, 100, 'net0')
    assert again.task('nic')['changed'] is False


def test_link_down_on_a_running_vm(ansible, sim):
    _, real, _ = ansible.converge(play(nic_task(vmid=100, interface='net0', bridge='vmbr0', firewall=True, link_down=True)))
    result = real.task('nic')['result']
    assert 'link_down=1' in net(sim, 100, 'net0', current=True)
    assert result['pending'] == []


def test_remove_then_remove_again(ansible, sim):
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'net1': 'e1000,bridge=vmbr1'})
    check, real, again = ansible.converge(play(nic_task(vmid=100, interface='net1', state='absent')))
    assert real.task('nic')['result']['msg'] == 'Nic net1 deleted on VM with vmid 100'
    assert net(sim, 100, 'net1') is None
    assert again.task('nic')['result']['msg'] == 'Nic net1 does not exist on VM with vmid 100'
    assert again.task('nic')['result']['mac'] is None


def test_address_the_vm_by_name(ansible, sim):
    _, real, _ = ansible.converge(play(nic_task(name='existing-web', interface='net2', bridge='vmbr0')),
                                  unpredictable=[MAC_RE])
    assert real.task('nic')['result']['vmid'] == 100
    assert net(sim, 100, 'net2').endswith(',bridge=vmbr0')


def test_a_name_shared_by_two_vms_is_an_error_listing_them(ansible, sim):
    create_vm(sim, 101, 'existing-web', node='pve2')
    run = ansible.run_playbook(play(nic_task(name='existing-web', interface='net0', bridge='vmbr0')))
    assert run.task('nic')['status'] == 'failed'
    assert run.task('nic')['result']['msg'] == \
        'Multiple VMs with name existing-web found (vmids 100, 101), provide vmid instead'


def test_change_waits_for_reboot_when_network_hotplug_is_off(ansible, sim):
    # hotplug 0 on a running VM: a new NIC goes to pending (QemuServer.pm vmconfig_hotplug_pending; §6).
    sim.api('PUT', '/nodes/pve1/qemu/100/config', {'hotplug': '0'})
    check, real, again = ansible.converge(play(nic_task(vmid=100, interface='net1', bridge='vmbr1')),
                                          unpredictable=[MAC_RE])
    for run in (check, real, again):
        result = run.task('nic')['result']
        assert result['pending'] == ['net1'] and result['reboot_required'] is True, result
        assert any('pending' in w for w in result['warnings'])
    assert net(sim, 100, 'net1', current=True) is None
    assert net(sim, 100, 'net1') == real.task('nic')['result']['config']


def test_stopped_vm_applies_at_once(ansible, sim):
    create_vm(sim, 150, 'fresh')
    _, real, _ = ansible.converge(play(nic_task(vmid=150, interface='net0', bridge='vmbr0', model='e1000', queues=2)),
                                  unpredictable=[MAC_RE])
    result = real.task('nic')['result']
    assert result['pending'] == []
    assert net(sim, 150, 'net0', current=True) == 'e1000=%s,bridge=vmbr0,queues=2' % result['mac']


def test_only_the_calls_it_needs(ansible, sim):
    sim.clear_requests()
    ansible.run_playbook(play(nic_task(vmid=100, interface='net0', bridge='vmbr1', firewall=True)))
    calls = [(r['method'], r['path'].replace('/api2/json', '')) for r in sim.requests()]
    assert calls == [
        ('GET', '/cluster/resources'),
        ('GET', '/nodes/pve1/qemu/100/pending'),
        # what the token holds, every path in one read (§52), asked as the token itself: the VM's
        # privileges and SDN.Use on the bridge (§27)
        ('GET', '/access/permissions'),
        ('GET', '/nodes/pve1/network'),
        ('PUT', '/nodes/pve1/qemu/100/config'),
        ('GET', '/nodes/pve1/qemu/100/pending'),
    ], calls


@pytest.mark.parametrize('options,message', [
    ({'vmid': 100, 'interface': 'net32'}, "interface must be one of net0 to net31, got 'net32'"),
    ({'vmid': 100, 'interface': 'net0', 'tag': 5000}, 'tag must be between 1 and 4094, got 5000'),
    ({'vmid': 4242, 'interface': 'net0'}, 'VM with vmid 4242 does not exist in cluster'),
    ({'interface': 'net0'}, 'one of the following is required: name, vmid'),
    ({'vmid': 100, 'interface': 'net0', 'model': 'e1000e'}, 'value of model must be one of:'),
], ids=['net32', 'tag 5000', 'unknown VM', 'no VM', 'bad model'])
def test_bad_input_fails_without_writes(ansible, sim, options, message):
    sim.clear_requests()
    run = ansible.run_playbook(play(nic_task(**options)))
    assert run.task('nic')['status'] == 'failed'
    assert message in run.task('nic')['result']['msg']
    assert [r for r in sim.requests() if r['method'] != 'GET'] == []
