"""Fixtures of the release tests (`make dist-test`, not part of `make test`): the dist tarball
installed with ansible-galaxy like a user would, and its native binaries.

FERRO_DIST_TARBALL names the tarball (default: the one `make dist` writes for galaxy.yml's
version); FERRO_DIST_TRIPLES the platforms it must ship (default: the three `make dist` builds);
FERRO_DIST_MAX_BYTES the size budget (mk/dist.mk's DIST_MAX_BYTES, passed by `make dist-test`).
"""

import os
import re
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV_BIN = os.path.join(ROOT, '.venv', 'bin')
DEFAULT_TRIPLES = 'x86_64-unknown-linux-musl aarch64-unknown-linux-musl universal2-apple-darwin'


def version():
    with open(os.path.join(ROOT, 'galaxy.yml')) as f:
        return re.search(r'^version:\s*(\S+)', f.read(), re.M).group(1)


def module_names():
    return sorted(d for d in os.listdir(os.path.join(ROOT, 'modules'))
                  if os.path.isdir(os.path.join(ROOT, 'modules', d)))


@pytest.fixture(scope='session')
def tarball():
    path = os.environ.get('FERRO_DIST_TARBALL') or os.path.join(ROOT, 'dist', 'ferro-proxmox-%s.tar.gz' % version())
    path = os.path.abspath(path)
    assert os.path.isfile(path), 'no %s: run `make dist` first' % path
    return path


@pytest.fixture(scope='session')
def triples():
    return os.environ.get('FERRO_DIST_TRIPLES', DEFAULT_TRIPLES).split()


@pytest.fixture(scope='session')
def collection_root(tarball, tmp_path_factory):
    """The installed collection: <tmp>/ansible_collections/ferro/proxmox."""
    path = tmp_path_factory.mktemp('collections')
    proc = subprocess.run([os.path.join(VENV_BIN, 'ansible-galaxy'), 'collection', 'install', tarball, '-p', str(path)],
                          capture_output=True, text=True, cwd=str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return os.path.join(str(path), 'ansible_collections', 'ferro', 'proxmox')


@pytest.fixture(scope='session')
def native_dir(collection_root):
    return os.path.join(collection_root, 'native')
