"""The installed collection's action plugin picks the shipped binary for each controller
platform (os, machine as Python's platform module or `uname -s -m` report them), and an
unsupported platform fails with the list of shipped platforms."""

import importlib.util
import os

import pytest
from ansible.errors import AnsibleActionFail


@pytest.fixture(scope='module')
def native(collection_root):
    path = os.path.join(collection_root, 'plugins', 'plugin_utils', 'native.py')
    spec = importlib.util.spec_from_file_location('ferro_dist_native', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PLATFORMS = [
    ('Linux', 'x86_64', 'x86_64-unknown-linux-musl'),
    ('Linux', 'amd64', 'x86_64-unknown-linux-musl'),
    ('Linux', 'aarch64', 'aarch64-unknown-linux-musl'),
    ('Linux', 'arm64', 'aarch64-unknown-linux-musl'),
    ('Darwin', 'arm64', 'universal2-apple-darwin'),
    ('Darwin', 'x86_64', 'universal2-apple-darwin'),
]


@pytest.mark.parametrize('system,machine,triple', PLATFORMS)
def test_controller_platform_gets_its_binary(native, collection_root, triples, system, machine, triple):
    if triple not in triples:
        pytest.skip('this build does not ship %s' % triple)
    path = native.find_binary('proxmox_vm_info', system, machine, root=collection_root)
    assert path == os.path.join(collection_root, 'native', triple, 'proxmox_vm_info')


def test_this_machine_runs_the_musl_binary(native, collection_root):
    # What the e2e suite runs on this x86_64 Linux machine: the static musl build.
    import platform
    path = native.find_binary('proxmox_vm_info', platform.system(), platform.machine(), root=collection_root)
    assert os.path.basename(os.path.dirname(path)).endswith('-unknown-linux-musl'), path


@pytest.mark.parametrize('system,machine', [('FreeBSD', 'amd64'), ('Linux', 'riscv64'), ('Windows', 'AMD64')])
def test_unsupported_platform_names_the_shipped_ones(native, collection_root, triples, system, machine):
    with pytest.raises(AnsibleActionFail) as e:
        native.find_binary('proxmox_vm_info', system, machine, root=collection_root)
    msg = str(e.value)
    assert '%s %s' % (system, machine) in msg
    assert 'ships binaries for: %s' % ', '.join(sorted(triples)) in msg, msg
