"""The shipped Linux binaries answer a real proxmox_vm_info call against pvesim: x86_64 natively,
aarch64 under qemu-aarch64 (Debian's qemu-user). Arguments go as JSON on stdin, the connection
through the PROXMOX_* environment fallbacks, as the action plugin's direct mode runs them. The
one binary runs the module its link's name says, and says so when run under another name."""

import json
import os
import platform
import shutil
import subprocess

import pytest

from pvesim.testing import TOKEN_ID, TOKEN_SECRET, PvesimProcess

from conftest import module_names

LINUX = ['x86_64-unknown-linux-musl', 'aarch64-unknown-linux-musl']


def runner(triple):
    """The command prefix that runs a binary of that triple here, or None."""
    arch = triple.split('-', 1)[0]
    if platform.system() == 'Linux' and platform.machine() in (arch, {'aarch64': 'arm64', 'x86_64': 'amd64'}[arch]):
        return []
    for qemu in ('qemu-%s' % arch, 'qemu-%s-static' % arch):
        if shutil.which(qemu):
            return [qemu]
    return None


@pytest.fixture(scope='module')
def sim():
    with PvesimProcess() as sim:
        yield sim


def prefix_for(triple):
    prefix = runner(triple)
    assert prefix is not None, ('no way to run %s binaries here: install qemu-user '
                                '(apt-get install qemu-user) for qemu-%s' % (triple, triple.split('-')[0]))
    return prefix


def call(native_dir, triple, sim, args):
    prefix = prefix_for(triple)
    user, token = TOKEN_ID.split('!', 1)
    env = dict(os.environ, PROXMOX_HOST=sim.host, PROXMOX_PORT=str(sim.port), PROXMOX_USER=user,
               PROXMOX_TOKEN_ID=token, PROXMOX_TOKEN_SECRET=TOKEN_SECRET, PROXMOX_CA_PATH=sim.ca_path)
    proc = subprocess.run(prefix + [os.path.join(native_dir, triple, 'proxmox_vm_info')], input=json.dumps(args),
                          capture_output=True, text=True, env=env, timeout=120)
    result = json.loads(proc.stdout)
    assert proc.returncode == 0 and not result.get('failed'), (proc.returncode, result, proc.stderr)
    assert TOKEN_SECRET not in proc.stdout + proc.stderr
    return result


@pytest.mark.parametrize('triple', LINUX)
def test_vm_info_lists_the_clusters_vms(native_dir, triples, sim, triple):
    if triple not in triples:
        pytest.skip('this build does not ship %s' % triple)
    result = call(native_dir, triple, sim, {})
    expected = sorted(r['vmid'] for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}))
    assert expected, 'the default seed has VMs'
    assert sorted(vm['vmid'] for vm in result['proxmox_vms']) == expected
    assert result['changed'] is False


@pytest.mark.parametrize('triple', LINUX)
def test_vm_info_parses_the_config_of_one_vm(native_dir, triples, sim, triple):
    if triple not in triples:
        pytest.skip('this build does not ship %s' % triple)
    with_nic = [(vm, config) for vm, config in
                ((r, sim.api('GET', '/nodes/%s/qemu/%d/config' % (r['node'], r['vmid'])))
                 for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r.get('type') == 'qemu')
                if 'net0' in config]
    assert with_nic, 'the default seed has a QEMU VM with net0'
    vm, config = with_nic[0]
    result = call(native_dir, triple, sim, {'vmid': vm['vmid'], 'config': 'current'})
    [got] = result['proxmox_vms']
    assert got['vmid'] == vm['vmid'] and got['name'] == vm['name']
    assert got['config']['net0'] == config['net0']
    nic = next(n for n in got['nics'] if n['interface'] == 'net0')
    assert nic['mac'].lower() in config['net0'].lower()


@pytest.mark.parametrize('triple', LINUX)
def test_each_link_runs_its_module(native_dir, triples, triple):
    if triple not in triples:
        pytest.skip('this build does not ship %s' % triple)
    for name in module_names():
        proc = subprocess.run(prefix_for(triple) + [os.path.join(native_dir, triple, name)], input='{"bogus": 1}',
                              capture_output=True, text=True, timeout=120)
        result = json.loads(proc.stdout)
        assert proc.returncode == 1 and result['failed'] is True, (name, result)
        assert result['msg'].startswith('Unsupported parameters for (%s) module: bogus.' % name), (name, result)


@pytest.mark.parametrize('triple', LINUX)
def test_the_binary_under_its_own_name_says_how_it_is_run(native_dir, triples, triple):
    if triple not in triples:
        pytest.skip('this build does not ship %s' % triple)
    proc = subprocess.run(prefix_for(triple) + [os.path.join(native_dir, triple, 'ferro_proxmox')], input='{}',
                          capture_output=True, text=True, timeout=120)
    result = json.loads(proc.stdout)
    assert proc.returncode == 1 and result['failed'] is True, result
    assert 'argv[0]' in result['msg'] and ', '.join(module_names()) in result['msg'], result
