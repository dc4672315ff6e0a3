"""Fixtures of the e2e suite: the collection installed from its tarball, one pvesim per session
(reset to the default seed before each test), and the `ansible` runner of harness.py."""

import glob
import os
import subprocess

import pytest

from pvesim.testing import PvesimProcess

from harness import ROOT, VENV_BIN, Ansible, add_canary_user


@pytest.fixture(scope='session')
def collections_path(tmp_path_factory):
    """Install dist/ferro-proxmox-*.tar.gz (built by `make collection`) like a user would."""
    tarballs = sorted(glob.glob(os.path.join(ROOT, 'dist', 'ferro-proxmox-*.tar.gz')))
    assert tarballs, 'no collection tarball in dist/: run `make collection` first (make test-e2e does)'
    path = tmp_path_factory.mktemp('collections')
    subprocess.run([os.path.join(VENV_BIN, 'ansible-galaxy'), 'collection', 'install', tarballs[-1], '-p', str(path)],
                   check=True, capture_output=True, text=True, cwd=str(path))
    return str(path)


@pytest.fixture(scope='session')
def sim_session():
    with PvesimProcess() as sim:
        yield sim


@pytest.fixture
def sim(sim_session):
    sim_session.reset('default')
    sim_session.clear_faults()
    add_canary_user(sim_session)
    yield sim_session


@pytest.fixture
def ansible(collections_path, sim, tmp_path):
    return Ansible(collections_path, sim, str(tmp_path))
