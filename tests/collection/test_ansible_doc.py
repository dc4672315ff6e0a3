"""The modules' docs as ansible-doc shows them from the installed tarball: every option a module
accepts (its ARGUMENT_SPEC) is documented, the connection options once, in the collection's doc
fragment (plugins/doc_fragments/, which every module extends), not repeated in each module's own
DOCUMENTATION; the fragment's notes reach every module's notes."""

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from test_metadata import dev_tarball

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
MODULES = sorted(p.name for p in (ROOT / 'modules').iterdir() if (p / 'Cargo.toml').exists())


@pytest.fixture(scope='module')
def shown(tmp_path_factory):
    """ansible-doc's JSON of every module, from the tarball installed as a user installs it."""
    path = tmp_path_factory.mktemp('collections')
    subprocess.run([str(VENV_BIN / 'ansible-galaxy'), 'collection', 'install', str(dev_tarball()), '-p', str(path)],
                   check=True, capture_output=True, text=True)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(path))
    out = subprocess.run([str(VENV_BIN / 'ansible-doc'), '--json', '-t', 'module'] +
                         ['ferro.proxmox.' + m for m in MODULES], check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


def python_file(*parts):
    spec = importlib.util.spec_from_file_location('ferro_doc_' + parts[-1][:-3], ROOT.joinpath('plugins', *parts))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def own_documentation(module):
    return yaml.safe_load(python_file('modules', module + '.py').DOCUMENTATION)


def fragment(name):
    return yaml.safe_load(python_file('doc_fragments', name + '.py').ModuleDocFragment.DOCUMENTATION)


def fragments():
    return sorted(p.stem for p in (ROOT / 'plugins' / 'doc_fragments').glob('*.py'))


@pytest.mark.parametrize('module', MODULES)
def test_ansible_doc_shows_every_option_the_module_accepts(shown, module):
    doc = shown['ferro.proxmox.' + module]['doc']
    accepted = python_file('modules', module + '.py').ARGUMENT_SPEC
    assert sorted(doc['options']) == sorted(accepted)
    for name, option in accepted.items():
        assert doc['options'][name]['type'] == option['type'], name
        assert doc['options'][name].get('default') == option.get('default'), name


@pytest.mark.parametrize('module', MODULES)
def test_connection_options_are_documented_once_in_the_fragment(shown, module):
    own = own_documentation(module)
    extended = [f.split('.')[-1] for f in own.get('extends_documentation_fragment') or []]
    assert extended == fragments(), 'every module extends the collection\'s doc fragments'
    for name in extended:
        shared = fragment(name)
        assert 'api_host' in shared['options'] or name != 'proxmox'
        repeated = sorted(set(shared['options']) & set(own['options']))
        assert repeated == [], '%s repeats options of the fragment %s in its own docs' % (module, name)
        notes = shown['ferro.proxmox.' + module]['doc'].get('notes') or []
        assert [n for n in shared.get('notes') or [] if n not in notes] == [], 'fragment notes missing from ansible-doc'


def test_no_module_documents_an_option_of_the_connection_itself():
    # The check above would pass on a fragment no module uses; this names what a stub would repeat.
    for module in MODULES:
        text = (ROOT / 'plugins' / 'modules' / (module + '.py')).read_text()
        documentation = text.split("DOCUMENTATION = r'''", 1)[1].split("'''", 1)[0]
        assert not re.search(r'^  api_(host|user|token_secret):$', documentation, re.M), module
