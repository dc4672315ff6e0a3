"""pvesim as users get it (issue 35): the wheel installed in a fresh virtualenv with no checkout starts on a
user's seed; the seed schema names the wrong field; `pvesim run` exports the seed's own token; the assertions
and the state; `pvesim seed-from` against pvesim itself gives back the same world, with GET calls only and no
secret. (Packaging and tooling: no PVE behaviour here, so no PVE source to cite; docs/testing-with-pvesim.md.)"""

import glob
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile

import pytest

from pvesim import assertions
from pvesim.seed_from import Cluster, seed_from
from pvesim.seed_schema import errors_of
from pvesim.testing import PvesimError, PvesimProcess

HERE = os.path.dirname(os.path.abspath(__file__))
PVESIM_DIR = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(PVESIM_DIR))
VENV = os.path.dirname(os.path.dirname(sys.executable))
WHEELS = os.path.join(VENV, 'pvesim-wheels')
VERSION = re.search(r'^version:\s*(\S+)', open(os.path.join(ROOT, 'galaxy.yml'), encoding='utf-8').read(), re.M).group(1)

# A user's world: none of pvesim's own names (nodes, bridges, storages, token).
USER_SEED = {
    'nodes': ['hv-a', 'hv-b'], 'bridges': ['vmbr10', 'vmbr20'],
    'storages': {'fast-ssd': {'type': 'lvmthin', 'vgname': 'ssd', 'thinpool': 'data', 'content': 'images'},
                 'nas': {'type': 'nfs', 'server': '10.0.0.5', 'export': '/tank', 'path': '/mnt/pve/nas',
                         'content': 'images,iso', 'files': {'iso/debian.iso': 1000}}},
    'users': {'ci@pve': {'tokens': {'gitlab': 'user-seed-secret-1'}, 'acl': {'/': ['VM.Audit', 'Sys.Audit',
                                                                                  'Datastore.Audit']}}},
    'vms': [{'vmid': 150, 'name': 'db-01', 'node': 'hv-b', 'status': 'running',
             'config': {'scsi0': 'fast-ssd:vm-150-disk-0,size=8G', 'net0': 'virtio=BC:24:11:15:00:01,bridge=vmbr20'}}],
}


def build(backend_dir, out):
    code = 'import sys; sys.path.insert(0, "_build"); import backend; print(backend.build_wheel(sys.argv[1])); ' \
           'print(backend.build_sdist(sys.argv[1]))'
    names = subprocess.run([sys.executable, '-c', code, str(out)], cwd=backend_dir, check=True, capture_output=True,
                           text=True).stdout.split()
    return [os.path.join(str(out), n) for n in names]


@pytest.fixture(scope='module')
def dist(tmp_path_factory):
    return build(PVESIM_DIR, tmp_path_factory.mktemp('dist'))


def test_wheel_and_sdist_carry_the_seeds_the_version_and_the_licence(dist, tmp_path):
    wheel, sdist = dist
    assert os.path.basename(wheel) == 'pvesim-{0}-py3-none-any.whl'.format(VERSION)
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        meta = whl.read('pvesim-{0}.dist-info/METADATA'.format(VERSION)).decode()
    assert {'pvesim/seeds/default.json', 'pvesim/seeds/ceph.json', 'pvesim/seed.schema.json',
            'pvesim/schema_data.json', 'pvesim-{0}.dist-info/licenses/LICENSE'.format(VERSION)} <= names
    assert 'Version: {0}\n'.format(VERSION) in meta
    assert 'License-Expression: AGPL-3.0-or-later\n' in meta
    assert 'Requires-Dist: fakepve==0.5.0\n' in meta
    assert '# pvesim: test your Proxmox VE playbooks without a cluster' in meta     # PYPI.md as description
    # the sdist builds the same wheel, its version from PKG-INFO (no galaxy.yml next to it)
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter='data')
    base = os.path.join(str(tmp_path), 'pvesim-{0}'.format(VERSION))
    (tmp_path / 'again').mkdir()
    again = build(base, tmp_path / 'again')[0]
    with zipfile.ZipFile(again) as whl:
        assert set(whl.namelist()) == names


def test_wheel_in_a_fresh_venv_starts_on_a_user_seed(dist, tmp_path):
    """Done when: in a fresh venv with no checkout, install the wheel, `pvesim --seed my-seed.json` starts."""
    assert os.path.isdir(WHEELS), 'no {0}: run `make venv` (it keeps pvesim\'s runtime wheels)'.format(WHEELS)
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True)
    # the test venv's pip installs into the fresh one (--python), offline, from the wheels `make venv` kept
    subprocess.run([sys.executable, '-m', 'pip', '--python', str(venv / 'bin' / 'python'), 'install', '--quiet',
                    '--disable-pip-version-check', '--no-compile', '--no-index', '--find-links', WHEELS, dist[0]],
                   check=True, capture_output=True)
    work = tmp_path / 'ci'
    work.mkdir()
    (work / 'my-seed.json').write_text(json.dumps(USER_SEED))
    env = dict((k, v) for k, v in os.environ.items() if k not in ('PYTHONPATH', 'VIRTUAL_ENV'))
    env['PATH'] = str(venv / 'bin') + os.pathsep + env.get('PATH', '')
    proc = subprocess.Popen(['pvesim', '--seed', 'my-seed.json', '--port', '0'], cwd=str(work), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith('pvesim listening on https://127.0.0.1:'), line + proc.stderr.read()
    finally:
        proc.terminate()
        proc.wait(10)
    # `pvesim run` in that venv: the user seed's token, the CA, and pvesim's own commands on PATH
    script = ('import json, os, pvesim; print(json.dumps({k: v for k, v in os.environ.items() '
              'if k.startswith(("PROXMOX_", "PVESIM_"))})); print(pvesim.__file__)')
    run = subprocess.run(['pvesim', 'run', '--seed', 'my-seed.json', '--', 'sh', '-ec',
                          'python -c \'{0}\' && pvesim assert config db-01 net0.bridge=vmbr20 scsi0.size=8G'
                          .format(script)],
                         cwd=str(work), env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    exported = json.loads(run.stdout.splitlines()[0])
    assert run.stdout.splitlines()[1].startswith(str(venv))      # the installed package, not the checkout
    assert (exported['PROXMOX_USER'], exported['PROXMOX_TOKEN_ID'], exported['PROXMOX_TOKEN_SECRET']) == \
        ('ci@pve', 'gitlab', 'user-seed-secret-1')
    assert exported['PROXMOX_HOST'] == '127.0.0.1' and int(exported['PROXMOX_PORT']) > 0
    assert exported['PVESIM_URL'] == 'https://127.0.0.1:' + exported['PROXMOX_PORT']
    assert 'VM db-01: net0.bridge=vmbr20, scsi0.size=8G' in run.stdout


def test_a_wrong_seed_is_refused_at_start_naming_the_field(tmp_path):
    bad = dict(USER_SEED, vms=[{'vmid': '210', 'name': 'web-01'}], storage={})
    bad['storages'] = dict(USER_SEED['storages'], extra={'type': 'lvm-thin'})
    (tmp_path / 'bad.json').write_text(json.dumps(bad))
    proc = subprocess.run([sys.executable, '-m', 'pvesim.cli', '--seed', str(tmp_path / 'bad.json'), '--port', '0'],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0 and 'listening' not in proc.stdout
    assert 'vms[0].vmid: expected integer, got "210"' in proc.stderr
    assert 'storage: unknown key (known here: bridges, cluster_name' in proc.stderr
    assert 'storages.extra.type: "lvm-thin" is not one of "dir"' in proc.stderr
    proc = subprocess.run([sys.executable, '-m', 'pvesim.cli', 'check-seed', str(tmp_path / 'missing.json')],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0 and 'missing.json: No such file or directory' in proc.stderr


def test_every_seed_of_the_repository_matches_the_schema():
    seeds = glob.glob(os.path.join(PVESIM_DIR, 'seeds', '*.json')) + glob.glob(os.path.join(HERE, 'seeds', '*.json'))
    assert len(seeds) >= 5
    for path in seeds:
        with open(path, encoding='utf-8') as fh:
            assert errors_of(json.load(fh)) == [], path
    assert errors_of(USER_SEED) == []
    assert errors_of(dict(USER_SEED, vms=USER_SEED['vms'] * 2)) == [('vms[1].vmid', '150 is already vms[0]')]
    assert errors_of({'users': {'ci@pve': {'tokens': {'gitlab': 5}}}}) == [
        ('users["ci@pve"].tokens.gitlab', 'expected string or object, got 5')]
    jsonschema = pytest.importorskip('jsonschema')     # in the test venv through ansible-lint
    with open(os.path.join(PVESIM_DIR, 'pvesim', 'seed.schema.json'), encoding='utf-8') as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    for path in seeds:
        with open(path, encoding='utf-8') as fh:
            jsonschema.validate(json.load(fh), schema)


def test_reset_to_a_wrong_seed_is_a_400_naming_the_field(pvesim, tmp_path):
    (tmp_path / 'bad.json').write_text(json.dumps({'nodes': 'pve1'}))
    with pytest.raises(PvesimError) as info:
        pvesim.reset(str(tmp_path / 'bad.json'))
    assert info.value.status == 400
    assert 'nodes: expected array, got "pve1"' in info.value.errors['seed']
    assert pvesim.world()['nodes'] == ['pve1', 'pve2']       # the state it had


def test_process_and_with_pvesim_use_the_seeds_own_token(tmp_path):
    """A user's seed: PvesimProcess.api() and with_pvesim.py authenticate with its token, not the default's."""
    seed = tmp_path / 'user.json'
    seed.write_text(json.dumps(USER_SEED))
    with PvesimProcess(seed=str(seed), time_scale=0) as sim:
        assert [n['node'] for n in sorted(sim.api('GET', '/nodes'), key=lambda n: n['node'])] == ['hv-a', 'hv-b']
        assert sim.token_id == 'ci@pve!gitlab'
    out = subprocess.run([sys.executable, os.path.join(ROOT, 'tests', 'tools', 'with_pvesim.py'), '--seed', str(seed),
                          '--', sys.executable, '-c', 'import os; print(os.environ["PROXMOX_USER"], '
                          'os.environ["PROXMOX_TOKEN_ID"], os.environ["PROXMOX_TOKEN_SECRET"])'],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.splitlines()[-1] == 'ci@pve gitlab user-seed-secret-1'


def test_assertions_on_the_request_log_and_the_state(pvesim):
    assertions.assert_no_writes(pvesim.requests())
    pvesim.api('GET', '/nodes/pve1/qemu/100/config')
    pvesim.api('PUT', '/nodes/pve1/qemu/100/config', {'net0': 'virtio=BC:24:11:0A:01:00,bridge=vmbr1', 'memory': 4096})
    with pytest.raises(AssertionError) as info:
        assertions.assert_no_writes(pvesim.requests())
    assert str(info.value) == '1 write(s) sent: PUT /nodes/pve1/qemu/100/config -> 200'
    world = pvesim.world()
    assertions.assert_config(world, 'existing-web', 'net0.bridge=vmbr1', 'memory=2048', 'scsi0.size=32G', '!net1')
    assert assertions.find_vm(world, 100)['pending'] == {'memory': '4096'}   # a running VM's memory waits (§6)
    assertions.assert_config(world, 100, 'net0.virtio=BC:24:11:0A:01:00', 'scsi0.volume=local-lvm:vm-100-disk-0')
    with pytest.raises(AssertionError) as info:
        assertions.assert_config(world, 'existing-web', 'net0.bridge=vmbr0', 'net1')
    assert str(info.value) == ('VM 100 (existing-web): net0.bridge is vmbr1, expected vmbr0 '
                               '(net0: virtio=BC:24:11:0A:01:00,bridge=vmbr1); net1 is not set')
    vm = assertions.find_vm(world, 'existing-web')
    assert (vm['node'], vm['status'], vm['lock']) == ('pve1', 'running', None)
    assert world['storages']['local-lvm']['volumes']['vm-100-disk-0'] == {
        'content': 'images', 'format': 'raw', 'size': 32 * 1024 ** 3, 'vmid': 100}
    assert 'secret' not in json.dumps(world) and '5e3c1f0a' not in json.dumps(world)
    # the same from a shell
    cli = [sys.executable, '-m', 'pvesim.cli', 'assert', '--url', pvesim.url, '--ca-path', pvesim.ca_path]
    ok = subprocess.run(cli + ['config', 'existing-web', 'net0.bridge=vmbr1'], capture_output=True, text=True)
    bad = subprocess.run(cli + ['no-writes'], capture_output=True, text=True)
    assert ok.returncode == 0 and bad.returncode == 1
    assert 'PUT /nodes/pve1/qemu/100/config -> 200' in bad.stderr


def test_seed_from_pvesim_gives_back_the_same_world(pvesim, tmp_path):
    """Done when: seed-from against pvesim as the "cluster" writes a seed pvesim loads, with the same VMs,
    storages and bridges; only GET calls, no secret."""
    pvesim.reset('ceph')
    pvesim.api('PUT', '/nodes/pve1/qemu/9000/config', {'cipassword': 'cluster-only-pw'})
    before = pvesim.world()
    pvesim.clear_requests()
    out = tmp_path / 'from-cluster.json'
    proc = subprocess.run([sys.executable, '-m', 'pvesim.cli', 'seed-from', '--url', pvesim.url, '--token',
                           '{0}={1}'.format(pvesim.token_id, pvesim.token_secret), '--ca-path', pvesim.ca_path,
                           '-o', str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert {r['method'] for r in pvesim.requests()} == {'GET'}
    text = out.read_text()
    for secret in (pvesim.token_secret, 'cluster-only-pw', '0f1e2d3c-4b5a'):
        assert secret not in text
    seed = json.loads(text)
    assert 'cipassword' not in seed['vms'][0]['config']
    pvesim.reset(str(out))
    after = pvesim.world()
    assert after['nodes'] == before['nodes'] and after['bridges'] == before['bridges']
    assert after['cluster_name'] == before['cluster_name'] == 'pvesim-ceph'
    assert sorted(after['storages']) == sorted(before['storages'])
    for sid, store in before['storages'].items():
        assert after['storages'][sid]['type'] == store['type']
        assert after['storages'][sid]['content'] == store['content']
        assert set(after['storages'][sid]['volumes']) == set(store['volumes']), sid

    def vms(world):
        return [(v['vmid'], v['name'], v['node'], v['status'], v['template'],
                 dict((k, x) for k, x in v['config'].items() if k not in ('cipassword', 'digest'))) for v in world['vms']]
    assert vms(after) == vms(before)
    # the seed's token (a new secret) works, with the privileges the token had
    token_id, secret = next((u + '!' + t, s['secret']) for u, info in seed['users'].items()
                            for t, s in info['tokens'].items())
    assert token_id == pvesim.token_id and secret != pvesim.token_secret
    nodes = pvesim.api('GET', '/nodes', token='{0}={1}'.format(token_id, secret))
    assert sorted(n['node'] for n in nodes) == ['pve1', 'pve2']
    assert Cluster(pvesim.url, '{0}={1}'.format(token_id, secret), ca_path=pvesim.ca_path).get('/version')['version']
    assert seed_from.__module__ == 'pvesim.seed_from'


def test_pytest_plugin_in_a_users_suite(tmp_path):
    """A user's suite: the seed from pytest.ini, `pvesim_env` with that seed's token, the assertions."""
    (tmp_path / 'my-seed.json').write_text(json.dumps(USER_SEED))
    (tmp_path / 'pytest.ini').write_text('[pytest]\npvesim_seed = my-seed.json\n')
    (tmp_path / 'conftest.py').write_text("pytest_plugins = ['pvesim.pytest_plugin']\n")
    (tmp_path / 'test_mine.py').write_text(
        'import subprocess, sys\n'
        'from pvesim.assertions import assert_config, assert_no_writes\n'
        'def test_env_and_world(pvesim, pvesim_env):\n'
        '    assert (pvesim_env["PROXMOX_USER"], pvesim_env["PROXMOX_TOKEN_ID"]) == ("ci@pve", "gitlab")\n'
        '    assert pvesim_env["PROXMOX_TOKEN_SECRET"] == "user-seed-secret-1"\n'
        '    assert sorted(n["node"] for n in pvesim.api("GET", "/nodes")) == ["hv-a", "hv-b"]\n'
        '    assert_config(pvesim.world(), "db-01", "net0.bridge=vmbr20")\n'
        '    assert_no_writes(pvesim.requests())\n')
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith('PYTEST'))
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-p', 'no:xdist',
                           'test_mine.py'], cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '1 passed' in proc.stdout
