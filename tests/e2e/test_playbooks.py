"""The user's playbooks (playbooks/) end to end: each through check → real → again against pvesim,
with the example inventory, as a user would run them after copying the directory."""

import os

import pytest

from harness import ROOT

PLAYBOOKS = os.path.join(ROOT, 'playbooks')
INVENTORY = os.path.join(PLAYBOOKS, 'inventory', 'hosts.yml')
MAC_RE = r'[0-9A-F]{2}(?::[0-9A-F]{2}){5}'
# A clone's new smbios1 uuid and vmgenid (Qemu.pm clone_vm): known only after apply.
UUID_RE = r'[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}'
PLANNED = {'web01': 201, 'web02': 202, 'db01': 203}


def playbook(name):
    return os.path.join(PLAYBOOKS, name)


def vmids(sim):
    return {r['vmid'] for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})}


def converge(ansible, name):
    return ansible.converge(playbook(name), unpredictable=[MAC_RE, UUID_RE], inventory=INVENTORY)


def test_create_vms_predicts_builds_and_then_changes_nothing(ansible, sim):
    check, real, again = converge(ansible, 'create_vms.yml')
    assert set(PLANNED.values()) <= vmids(sim)
    # Every host: create, disk, NIC, start changed; in check mode too, on a cluster without the VMs.
    for host in PLANNED:
        changed = [r['task'] for r in check.results if r['host'] == host and r['changed']]
        assert changed == ['Create the bare VM', 'Add the system disk', 'Add the NIC', 'Start the VM'], (host, changed)
    for host, vmid in PLANNED.items():
        node = 'pve2' if host == 'db01' else 'pve1'
        cfg = sim.api('GET', '/nodes/%s/qemu/%d/config' % (node, vmid))
        assert cfg['name'] == host and 'scsi0' in cfg and 'net0' in cfg
        status = sim.api('GET', '/nodes/%s/qemu/%d/status/current' % (node, vmid))
        assert status['status'] == 'running'
        mac_line = [r for r in again.results if r['host'] == host and r['task'] == 'Show the MAC to record in the source of truth']
        assert cfg['net0'].split(',')[0].split('=')[1] in mac_line[0]['result']['msg']


def test_day2_changes_keep_the_mac(ansible, sim):
    ansible.run_playbook(playbook('create_vms.yml'), inventory=INVENTORY)
    before = sim.api('GET', '/nodes/pve1/qemu/201/config')
    check, real, again = converge(ansible, 'day2.yml')
    after = sim.api('GET', '/nodes/pve1/qemu/201/config')
    assert after['net0'].split(',')[0] == before['net0'].split(',')[0]
    assert 'tag=110' in after['net0']
    assert after['scsi0'].startswith('nvme-pool:vm-201-disk-0,cache=writeback')
    assert after['scsi0'].endswith('size=30G')
    assert after['unused0'] == 'local-lvm:vm-201-disk-0'


def test_remove_vms_is_idempotent_and_really_removes(ansible, sim):
    ansible.run_playbook(playbook('create_vms.yml'), inventory=INVENTORY)
    converge(ansible, 'remove_vms.yml')
    assert not set(PLANNED.values()) & vmids(sim)


def test_clone_vms_clones_with_cloud_init_in_one_task(ansible, sim):
    check, real, again = converge(ansible, 'clone_vms.yml')
    cfg = sim.api('GET', '/nodes/pve1/qemu/301/config')
    assert cfg['name'] == 'app01' and cfg['cores'] == 2 and str(cfg['memory']) == '4096'
    assert cfg['ciuser'] == 'debian' and cfg['ipconfig0'] == 'ip=192.0.2.31/24,gw=192.0.2.1'
    assert 'ssh-ed25519' in __import__('urllib.parse').parse.unquote(cfg['sshkeys'])


@pytest.mark.parametrize('name', ['demo.yml'])
def test_demo_playbook_reads_the_cluster(ansible, sim, name):
    run = ansible.run_playbook(playbook(name), inventory=INVENTORY)
    assert run.rc == 0, run.stdout[-3000:]
    msgs = [r['result'].get('msg', '') for r in run.results if r['task'] == 'Show each VM with its NICs']
    assert any(m.startswith('100 existing-web on pve1 (running): net0=') for m in msgs), msgs
