"""The guide docs/testing-with-pvesim.md run as written (issue 35): its GitHub Actions and GitLab CI examples,
each in a fresh virtualenv holding only what the example installs (ansible-core and the pvesim wheel of this
checkout, offline from the wheels `make venv` keeps), with the collection tarball of this checkout in place of
Galaxy. They run the guide's playbook on the guide's seed, whose node, bridge, storage and token names are none
of pvesim's own, through `pvesim run`: --check (no write sent), real, rerun (changed=0)."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from harness import ROOT

GUIDE = os.path.join(ROOT, 'docs', 'testing-with-pvesim.md')
WHEELS = os.path.join(ROOT, '.venv', 'pvesim-wheels')
PVESIM_DIR = os.path.join(ROOT, 'tests', 'pvesim')
# A fenced block of the guide named by its info string: ```yaml site.yml
BLOCK = re.compile(r'^```(\w+) (\S+)\n(.*?)^```$', re.M | re.S)


def guide_files():
    with open(GUIDE, encoding='utf-8') as fh:
        return dict((name, body) for _lang, name, body in BLOCK.findall(fh.read()))


def tarball():
    """The collection as tests/e2e/conftest.py finds it: $FERRO_TARBALL, else the newest in dist/."""
    found = sorted(glob.glob(os.path.join(ROOT, 'dist', 'ferro-proxmox-*.tar.gz')), key=os.path.getmtime)
    path = os.environ.get('FERRO_TARBALL') or (found[-1] if found else None)
    assert path, 'no collection tarball in dist/: run `make collection` first (make test-e2e does)'
    return os.path.join(ROOT, path)


def substitute(line, wheel):
    """The guide's install lines, pointed at this checkout: the pvesim wheel and the wheels `make venv` kept instead
    of PyPI, the collection tarball instead of Galaxy. Every other line runs as written."""
    if re.match(r'^\s*pip install ', line):
        words = ['--quiet', '--no-compile', '--no-index', '--find-links', WHEELS] + \
            [wheel if w == 'pvesim' else w for w in line.split()[2:]]
        return line[:line.index('pip install')] + 'pip install ' + ' '.join(words)
    return line.replace('ansible-galaxy collection install ferro.proxmox', 'ansible-galaxy collection install ' +
                        tarball())


@pytest.fixture(scope='module')
def fresh_venv(tmp_path_factory):
    """An empty virtualenv whose `pip` is the test venv's pip installing into it (python -m venv --without-pip)."""
    assert os.path.isdir(WHEELS), 'no {0}: run `make venv` (it keeps pvesim\'s and ansible-core\'s wheels)'.format(WHEELS)
    base = tmp_path_factory.mktemp('user')
    code = 'import sys; sys.path.insert(0, "_build"); import backend; print(backend.build_wheel(sys.argv[1]))'
    wheel = os.path.join(str(base), subprocess.run([sys.executable, '-c', code, str(base)], cwd=PVESIM_DIR, check=True,
                                                   capture_output=True, text=True).stdout.strip())
    venv = base / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True)
    pip = venv / 'bin' / 'pip'
    pip.write_text('#!/bin/sh\nexec {0} -m pip --disable-pip-version-check --python {1} "$@"\n'.format(
        sys.executable, venv / 'bin' / 'python'))
    pip.chmod(0o755)
    return str(venv), wheel


def run_example(tmp_path, fresh_venv, lines):
    """Run the example's lines in one bash -e (as a CI job runs its steps) in a checkout of the user's repository
    (the guide's seed and playbook), with only the fresh venv's bin before the system's PATH."""
    venv, wheel = fresh_venv
    files = guide_files()
    repo = tmp_path / 'repo'
    (repo / 'tests').mkdir(parents=True)
    (repo / 'tests' / 'pvesim-seed.json').write_text(files['tests/pvesim-seed.json'])
    (repo / 'site.yml').write_text(files['site.yml'])
    home = tmp_path / 'home'
    home.mkdir()
    env = dict((k, v) for k, v in os.environ.items()
               if not k.startswith(('PROXMOX_', 'PVESIM_', 'ANSIBLE_', 'VIRTUAL_ENV', 'PYTHON')))
    path = [p for p in os.environ.get('PATH', '').split(os.pathsep) if p and not p.startswith(ROOT)]
    env.update(HOME=str(home), PATH=os.pathsep.join([os.path.join(venv, 'bin')] + path), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_INVENTORY_UNPARSED_WARNING='0')
    script = '\n'.join(substitute(line, wheel) for block in lines for line in block.splitlines())
    proc = subprocess.run(['bash', '-ec', script], cwd=str(repo), env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, 'the example failed:\n{0}\n--- stdout\n{1}\n--- stderr\n{2}'.format(
        script, proc.stdout[-6000:], proc.stderr[-4000:])
    return repo, proc


def check_outcome(repo, proc):
    """What the user's CI proves: the dry run predicted and wrote nothing, the real run built web-01 in the user's
    world with the user's token, the rerun changed nothing."""
    out = proc.stdout
    assert 'no write sent' in out                                   # pvesim assert no-writes after --check
    assert 'VM web-01: net0.bridge=vmbr10' in out                   # pvesim assert config after the real run
    recaps = re.findall(r'^localhost\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)', out, re.M)
    assert [(c, f) for _ok, c, f in recaps] == [('3', '0'), ('3', '0'), ('0', '0')], recaps   # check, real, rerun
    with open(repo / 'pvesim-out' / 'state.json', encoding='utf-8') as fh:
        state = json.load(fh)
    web = [vm for vm in state['vms'] if vm['name'] == 'web-01']
    assert len(web) == 1 and (web[0]['vmid'], web[0]['node']) == (210, 'hv-a')
    assert 'bridge=vmbr10' in web[0]['config']['net0']
    assert web[0]['config']['scsi0'].startswith('fast-ssd:vm-210-disk-0,') and 'size=16G' in web[0]['config']['scsi0']
    assert 'vm-210-disk-0' in state['storages']['fast-ssd']['volumes']
    with open(repo / 'pvesim-out' / 'requests.json', encoding='utf-8') as fh:
        requests = json.load(fh)
    writes = [r for r in requests if r['method'] in ('POST', 'PUT', 'DELETE')]
    assert writes and {r['user'] for r in writes} == {'ci@pve!gitlab'}      # the seed's token, exported by pvesim run
    assert all(r['path'].startswith('/api2/json/nodes/hv-a/') for r in writes)


def test_github_actions_example_runs_as_written(tmp_path, fresh_venv):
    workflow = yaml.safe_load(guide_files()['.github/workflows/playbooks.yml'])
    steps = workflow['jobs']['pvesim']['steps']
    assert [s['uses'].split('@')[0] for s in steps if 'uses' in s] == \
        ['actions/checkout', 'actions/setup-python', 'actions/upload-artifact']       # what the job itself runs
    lines = [step['run'] for step in steps if 'run' in step]
    assert len(lines) == 4
    check_outcome(*run_example(tmp_path, fresh_venv, lines))


def test_gitlab_ci_example_runs_as_written(tmp_path, fresh_venv):
    job = yaml.safe_load(guide_files()['.gitlab-ci.yml'])['playbooks']
    assert job['artifacts']['paths'] == ['pvesim-out/']
    repo, proc = run_example(tmp_path, fresh_venv, job['script'])
    check_outcome(repo, proc)


def test_the_guides_seed_is_another_world_than_pvesims():
    """The guide's seed shares no node, bridge, storage or token name with pvesim's own seeds."""
    seed = json.loads(guide_files()['tests/pvesim-seed.json'])
    with open(os.path.join(PVESIM_DIR, 'seeds', 'default.json'), encoding='utf-8') as fh:
        default = json.load(fh)
    assert not set(seed['nodes']) & set(default['nodes'])
    assert not set(seed['bridges']) & set(default['bridges'])
    assert not set(seed['storages']) & set(default['storages'])
    assert not set(seed['users']) & set(default['users'])
    assert shutil.which('bash')
