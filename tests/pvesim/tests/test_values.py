"""Refusals decided by config values and cluster facts (docs/pve-semantics.md §43), as pvesim/values.py follows them:
qemu-server 9.2.6 src/PVE/API2/Qemu.pm `update_vm_api` (`$load_and_check_config`: the balloon against the merged
memory; the loop's `vga`), `create_vm` (`check_pool_exist`; `assert_clipboard_config` in the task), `clone_vm`
(`check_pool_exist`), `destroy_vm` (`$early_checks`: HA without purge), `vm_suspend` (HA, `hostpciN`);
src/PVE/QemuServer.pm `config_to_command` (CPUs, `assert_clipboard_config`), src/PVE/QemuServer/Memory.pm `config`
(memory hot-plug needs NUMA), src/PVE/QemuServer/RunState.pm `vm_suspend` and QemuMigrate/Helpers.pm
`check_non_migratable_resources` (virtiofs); pve-access-control RPCEnvironment.pm `check_pool_exist`
(`raise_perm_exc`); pve-manager PVE/API2/Cluster.pm `resources` (`hastate`), PVE/API2/Nodes.pm `index` and
API2Tools.pm `extract_node_stats` (`maxcpu` only with Sys.Audit on the node)."""

import json
import os

from conftest import Q, config, error_of, run

SEED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'seeds')
SECRET = '7a1b2c3d-values-secret'


def _vm(vmid, status='stopped', ha_state=None, **extra):
    conf = dict({'cores': 1, 'memory': '1024', 'scsihw': 'virtio-scsi-single'}, **extra)
    spec = {'vmid': vmid, 'name': 'v%d' % vmid, 'node': 'pve1', 'status': status,
            'config': dict((k, v) for k, v in conf.items() if v is not None)}
    if ha_state:
        spec['ha_state'] = ha_state
    return spec


def with_snippet():
    """The default seed's storages, `local` holding the snippet `snippets/hook.pl` (hook_scsi.py)."""
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = json.load(f)['storages']
    storages['local']['files'] = {'snippets/hook.pl': 120}
    return storages


def seed(sim, tmp_path, vms, **more):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        data = json.load(f)
    data['vms'] += vms
    data.update(more)
    path = tmp_path / 'values.json'
    path.write_text(json.dumps(data))
    sim.reset(str(path))


def task_error(status):
    assert status['exitstatus'] != 'OK', status
    return status['exitstatus']


def test_the_balloon_is_checked_against_the_memory_the_vm_keeps(sim, tmp_path):
    # $load_and_check_config: memory = the request's || pending || applied (512 when none), balloon = the
    # request's, else pending || applied; refused above that memory, before anything is written
    seed(sim, tmp_path, [_vm(300, balloon='2048', memory='4096'), _vm(301, memory=None)])
    err = error_of(sim.api, 'PUT', Q + '/300/config', {'memory': '1024'})
    assert 'balloon value too large (must be smaller than assigned memory)' in err.message
    assert config(sim, 300)['memory'] == '4096'
    assert 'memory' not in config(sim, 301)
    err = error_of(sim.api, 'PUT', Q + '/301/config', {'balloon': '1024'})
    assert 'balloon value too large' in err.message and 'balloon' not in config(sim, 301)


def test_a_missing_pool_is_refused_before_a_create_or_a_clone(sim):
    # check_pool_exist: raise_perm_exc, a 403 with the pool in its parentheses
    err = error_of(sim.api, 'POST', Q, {'vmid': 310, 'pool': 'prdo', 'cores': 1})
    assert err.status == 403 and "Permission check failed (pool 'prdo' does not exist)" in err.message
    err = error_of(sim.api, 'POST', Q + '/9000/clone', {'newid': 311, 'pool': 'prdo'})
    assert err.status == 403 and "pool 'prdo' does not exist" in err.message
    assert not [r for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r['vmid'] in (310, 311)]


def test_a_vnc_clipboard_needs_a_display_that_takes_it(sim):
    # create_vm: in the task, after the disks are allocated (freed again), as `unable to create VM <vmid> - ...`
    status = run(sim, 'POST', Q, {'vmid': 312, 'vga': 'serial0,clipboard=vnc', 'scsi0': 'local-lvm:1'})
    assert task_error(status) == 'unable to create VM 312 - vga type serial0 is not compatible with VNC clipboard'
    assert not any('vm-312-' in v['volid'] for v in sim.api('GET', '/nodes/pve1/storage/local-lvm/content'))
    # update_vm_api: a 500 when its loop reaches `vga`; a display that takes it is written
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'vga': 'none,clipboard=vnc'})
    assert 'vga type none is not compatible with VNC clipboard' in err.message
    sim.api('PUT', Q + '/100/config', {'vga': 'virtio-gl,clipboard=vnc'})


def test_a_start_needs_the_nodes_cpus_and_numa_for_memory_hotplug(sim, tmp_path):
    seed(sim, tmp_path, [_vm(320, sockets=2, cores=4), _vm(321, cores=2, vcpus=1),
                         _vm(322, hotplug='disk,memory'), _vm(323, hotplug='disk,memory', numa=1),
                         _vm(324, hotplug='memory', numa=1, memory='512'),
                         _vm(325, hotplug='memory', numa=1, numa0='cpus=0,memory=1024'),
                         _vm(326, hotplug='memory', numa=1, virtiofs0='dirid=share')],
         node_cpus={'pve1': 4})
    nodes = dict((n['node'], n) for n in sim.api('GET', '/nodes'))
    assert nodes['pve1']['maxcpu'] == 4
    assert task_error(run(sim, 'POST', Q + '/320/status/start')) == 'MAX 4 vcpus allowed per VM on this node'
    assert task_error(run(sim, 'POST', Q + '/322/status/start')) == 'NUMA needs to be enabled for memory hotplug'
    assert task_error(run(sim, 'POST', Q + '/324/status/start')) == 'minimum memory must be 1024MB'
    assert task_error(run(sim, 'POST', Q + '/325/status/start')) == \
        'cannot enable memory hotplugging with custom NUMA topology'
    assert task_error(run(sim, 'POST', Q + '/326/status/start')) == \
        'Memory hotplug does not work in combination with virtio-fs.'
    for vmid in (321, 323):
        assert run(sim, 'POST', Q + '/%d/status/start' % vmid)['exitstatus'] == 'OK'


def test_a_nodes_cpus_are_shown_only_with_sys_audit(sim):
    sim.add_user('blind@pve', password='x', tokens={'t': SECRET}, acl={'/vms': ['VM.Audit']})
    token = 'blind@pve!t=' + SECRET
    for entry in sim.api('GET', '/nodes', token=token) + sim.api('GET', '/cluster/resources', {'type': 'node'},
                                                                 token=token):
        assert entry['status'] == 'online' and 'maxcpu' not in entry and 'mem' not in entry, entry
    assert all('maxcpu' in n for n in sim.api('GET', '/cluster/resources', {'type': 'node'}))


def test_ha_forbids_a_removal_without_purge_and_a_hibernation(sim, tmp_path):
    seed(sim, tmp_path, [_vm(330, ha_state='stopped'), _vm(331, status='running', ha_state='started')])
    states = dict((r['vmid'], r.get('hastate')) for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}))
    assert (states[330], states[331], states[100]) == ('stopped', 'started', None)
    err = error_of(sim.api, 'DELETE', Q + '/330')
    assert 'unable to remove VM 330 - used in HA resources and purge parameter not set.' in err.message
    err = error_of(sim.api, 'POST', Q + '/331/status/suspend', {'todisk': 1})
    assert 'Cannot suspend HA managed VM to disk' in err.message
    assert run(sim, 'DELETE', Q + '/330', {'purge': 1})['exitstatus'] == 'OK'


def test_passed_through_devices_and_virtiofs_forbid_a_hibernation(sim, tmp_path):
    seed(sim, tmp_path, [_vm(340, status='running', hostpci0='0000:01:00.0'),
                         _vm(341, status='running', virtiofs0='dirid=share')])
    err = error_of(sim.api, 'POST', Q + '/340/status/suspend', {'todisk': 1})
    assert 'cannot suspend VM to disk due to passed-through PCI device(s)' in err.message
    status = run(sim, 'POST', Q + '/341/status/suspend', {'todisk': 1})
    assert task_error(status) == 'Cannot live-migrate, snapshot (with RAM), or hibernate a VM with: virtiofs'
    assert 'lock' not in config(sim, 341)
    # pausing (not to disk) is not refused
    assert run(sim, 'POST', Q + '/340/status/suspend')['exitstatus'] == 'OK'


# `ssh-keygen -t ed25519`'s output, and an ed25519 blob of 32 bytes written by hand
KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO0OWM0AXYaRJtcmVMDbb37SUwicXNYEFrJOk8K7XekV me@host'
EXAMPLE = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyForTheE2eTestsExampleKeyForTheE2e me@host'


def test_sshkeys_must_be_keys_ssh_keygen_reads(sim):
    # validate_ssh_public_keys (pve-common Tools.pm): ssh-keygen -l on each line not blank, after uri_unescape
    from urllib.parse import quote
    for bad in ('ssh-ed25519 AAAA me@host', '# a comment', KEY + '\nnot a key',
                'ssh-rsa ' + KEY.split()[1]):
        err = error_of(sim.api, 'PUT', Q + '/100/config', {'sshkeys': quote(bad, safe='')})
        assert 'SSH public key validation error' in err.message, bad
        err = error_of(sim.api, 'POST', Q, {'vmid': 313, 'sshkeys': quote(bad, safe='')})
        assert 'SSH public key validation error' in err.message, bad
    keys = '\n'.join([KEY, '', EXAMPLE, 'no-pty,command="a b" ' + KEY])
    sim.api('PUT', Q + '/100/config', {'sshkeys': quote(keys, safe='')})
    assert config(sim, 100)['sshkeys'] == quote(keys, safe='')


def test_a_disk_moves_only_to_a_vm_on_the_same_node(sim, tmp_path):
    # move_vm_disk's $load_and_check_reassign_configs: the cluster's VM list places both, before either lock
    seed(sim, tmp_path, [_vm(350, scsi1='local-lvm:vm-350-disk-1,size=1G'), dict(_vm(351), node='pve2')])
    err = error_of(sim.api, 'POST', Q + '/350/move_disk', {'disk': 'scsi1', 'target-vmid': 351})
    assert 'Both VMs need to be on the same node (pve1 != pve2)' in err.message
    assert 'scsi1' in config(sim, 350)


def test_a_hookscript_must_be_a_snippet(sim, tmp_path):
    # Qemu.pm update_vm_api: `eval { PVE::GuestHelpers::check_hookscript($param->{$opt}, $storecfg) };
    # raise_param_exc({ $opt => $@ }) if $@;` (GuestHelpers.pm: "'<volid>' is not in the snippets directory")
    seed(sim, tmp_path, [], storages=with_snippet())
    before = config(sim, 100)
    for volid in ('local-lvm:vm-100-disk-0', 'isos:iso/debian-13-netinst.iso'):
        err = error_of(sim.api, 'PUT', Q + '/100/config', {'hookscript': volid})
        assert err.status == 400 and err.errors == {'hookscript': "'%s' is not in the snippets directory" % volid}
    assert config(sim, 100) == before
    # a snippet passes on to the privileges: `hookscript` has no class, so it is root@pam's
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'hookscript': 'local:snippets/hook.pl'})
    assert err.message == "only root can set 'hookscript' config"
    root = sim.api('POST', '/access/ticket', {'username': 'root@pam', 'password': 'secret'}, token=False)
    sim.api('PUT', Q + '/100/config', {'hookscript': 'local:snippets/hook.pl'}, token=False,
            ticket=(root['ticket'], root['CSRFPreventionToken']))
    assert config(sim, 100)['hookscript'] == 'local:snippets/hook.pl'
