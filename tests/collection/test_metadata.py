"""The collection's metadata as Galaxy and Automation Hub read it: galaxy.yml (current
description, links, a build_ignore that ships exactly the collection's content) and meta/."""

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import yaml
from ansible.module_utils.compat.version import LooseVersion
from ansible.release import __version__ as ansible_core_version

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
GALAXY = yaml.safe_load((ROOT / 'galaxy.yml').read_text())
MODULES = sorted(p.name for p in (ROOT / 'modules').iterdir() if (p / 'Cargo.toml').exists())


def dev_tarball():
    """The tarball of `make collection` (make test-collection names it in $FERRO_TARBALL)."""
    if os.environ.get('FERRO_TARBALL'):
        return ROOT / os.environ['FERRO_TARBALL']   # make passes it relative to the repository
    found = sorted((ROOT / 'dist').glob('ferro-proxmox-*-dev+*.tar.gz'), key=lambda p: p.stat().st_mtime)
    assert found, 'no development tarball in dist/: run `make collection`'
    return found[-1]


def manifest_version(path):
    with tarfile.open(path) as tar:
        return json.load(tar.extractfile('MANIFEST.json'))['collection_info']['version']


def test_development_build_says_so_in_its_name_and_version():
    # `make collection` is one binary for this machine: it must not pass for the release that
    # `make dist` builds (galaxy.yml's version, three static platforms).
    tarball = dev_tarball()
    sha = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    version = manifest_version(tarball)
    assert version == '%s-dev+%s' % (GALAXY['version'], sha), version
    assert tarball.name == 'ferro-proxmox-%s.tar.gz' % version


def tarball_files(path):
    with tarfile.open(path) as tar:
        return {m.name for m in tar.getmembers() if m.isfile()}


def test_description_names_every_module_and_promises_none():
    description = GALAXY['description']
    assert [m for m in MODULES if m not in description] == []
    assert 'soon' not in description
    assert len(description) <= 255, 'Galaxy shows a short description'


def test_links_and_authors():
    for key in ('repository', 'documentation', 'homepage', 'issues'):
        assert GALAXY[key].startswith('https://github.com/ferro-proxmox/ferro.proxmox'), key
    # The author form ansible-test's validate-modules accepts, as the module docs use it.
    assert all(a.endswith(')') and '(@' in a for a in GALAXY['authors'])


def test_build_from_a_checkout_ships_what_make_collection_ships(tmp_path):
    # `make collection` builds from a tree holding only the collection's content; an
    # `ansible-galaxy collection build` run on the checkout must leave out the same rest.
    subprocess.run([str(VENV_BIN / 'ansible-galaxy'), 'collection', 'build', str(ROOT), '--output-path', str(tmp_path)],
                   check=True, capture_output=True, text=True, timeout=300)
    from_checkout = tarball_files(next(tmp_path.glob('ferro-proxmox-*.tar.gz')))
    shipped = tarball_files(dev_tarball())
    shipped = {f for f in shipped if not f.startswith('native/')}
    assert sorted(from_checkout - shipped) == [] and sorted(shipped - from_checkout) == []
    assert {'MANIFEST.json', 'README.md', 'CHANGELOG.md', 'changelogs/changelog.yaml', 'meta/runtime.yml',
            'meta/execution-environment.yml'} <= from_checkout
    assert not any(f.startswith(('changelogs/fragments/', 'tests/e2e/', 'modules/')) for f in from_checkout)


def test_requires_ansible_admits_the_tested_ansible_core():
    runtime = yaml.safe_load((ROOT / 'meta/runtime.yml').read_text())
    minimum = runtime['requires_ansible'].removeprefix('>=')
    assert LooseVersion(ansible_core_version) >= LooseVersion(minimum)
    assert sorted(runtime['action_groups']['proxmox']) == MODULES


def test_execution_environment_declares_its_dependency_files():
    ee = yaml.safe_load((ROOT / 'meta/execution-environment.yml').read_text())
    assert ee['version'] == 1
    for kind, path in ee.get('dependencies', {}).items():
        assert (ROOT / path).is_file(), '%s dependencies: %s is missing' % (kind, path)
