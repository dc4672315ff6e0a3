#!/usr/bin/env python3
"""Write tests/collection/community_proxmox_2.0.0.json: the facts the migration-table test
(tests/collection/test_migration_table.py) compares ferro.proxmox's modules with, taken from
community.proxmox's own sources: per module, each option's type, elements, choices, default and
aliases, and the constraints between options (mutually_exclusive, required_if, ...), as its
argument spec declares them (what AnsibleModule gets, captured by running the module's main()
against a stand-in AnsibleModule), and the top-level keys of its RETURN
documentation with the keys of each one's elements. Facts only: no code and no prose.

Usage: tools/migration/community_proxmox.py GIT_DIR REF [OUT]
  GIT_DIR  a clone of github.com/ansible-collections/community.proxmox (its .git, or a bare repo)
  REF      the tag to read, e.g. 2.0.0
Run with a Python that has ansible-core (.venv/bin/python). The tests never read GIT_DIR: they
read the JSON this writes, which records GIT_DIR's commit for REF.
"""

import importlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile

import yaml

MODULES = ('proxmox_kvm', 'proxmox_disk', 'proxmox_nic', 'proxmox_vm_info')
FIELDS = ('type', 'elements', 'choices', 'default', 'aliases')
CONSTRAINTS = ('mutually_exclusive', 'required_together', 'required_one_of', 'required_if', 'required_by')


class Captured(Exception):
    pass


class CapturingModule:
    """Stands in for AnsibleModule: keeps the argument spec and stops the module there."""

    spec = None
    constraints = None

    def __init__(self, argument_spec, **kwargs):
        CapturingModule.spec = argument_spec
        CapturingModule.constraints = dict(
            (key, sorted(json.loads(json.dumps(kwargs[key]))) if key != 'required_by' else kwargs[key])
            for key in CONSTRAINTS if kwargs.get(key))
        raise Captured()


def option_facts(spec):
    out = {}
    for name, opt in sorted(spec.items()):
        facts = {'type': opt.get('type', 'str')}
        for field in FIELDS[1:]:
            if opt.get(field) not in (None, [], ()):
                value = opt[field]
                facts[field] = list(value) if isinstance(value, (list, tuple)) else value
        if opt.get('options'):
            facts['suboptions'] = option_facts(opt['options'])
        out[name] = facts
    return out


def module_facts(name):
    import ansible.module_utils.basic as basic
    basic.AnsibleModule = CapturingModule
    mod = importlib.import_module('ansible_collections.community.proxmox.plugins.modules.%s' % name)
    # A module_utils that imported the name before the swap keeps the original: swap there too.
    for loaded in list(sys.modules.values()):
        if getattr(loaded, '__name__', '').startswith('ansible_collections.community.proxmox.') and \
                hasattr(loaded, 'AnsibleModule'):
            loaded.AnsibleModule = CapturingModule
    CapturingModule.spec = None
    try:
        mod.main()
    except Captured:
        pass
    if CapturingModule.spec is None:
        raise SystemExit('%s: main() built no AnsibleModule' % name)
    return {'options': option_facts(CapturingModule.spec), 'constraints': CapturingModule.constraints,
            'returns': return_facts(mod.RETURN)}


def return_facts(text):
    """Each top-level RETURN key -> the keys of its dict (or list-of-dicts) value: its `contains`,
    else the keys of its `sample` (community.proxmox documents proxmox_vms by a sample only)."""
    out = {}
    for key, doc in (yaml.safe_load(text) or {}).items():
        inner = set((doc.get('contains') or {}).keys())
        if not inner:
            sample = doc.get('sample')
            for item in sample if isinstance(sample, list) else [sample]:
                if isinstance(item, dict):
                    inner.update(item)
        out[key] = sorted(inner)
    return out


def main(argv):
    if len(argv) not in (3, 4):
        raise SystemExit(__doc__)
    git_dir, ref = argv[1], argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    out = argv[3] if len(argv) == 4 else os.path.join(here, '..', '..', 'tests', 'collection',
                                                       'community_proxmox_%s.json' % ref)
    commit = subprocess.run(['git', '--git-dir', git_dir, 'rev-parse', ref + '^{commit}'],
                            capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, 'ansible_collections', 'community', 'proxmox')
        os.makedirs(root)
        archive = os.path.join(tmp, 'plugins.tar')
        subprocess.run(['git', '--git-dir', git_dir, 'archive', '-o', archive, commit, 'plugins'], check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(root)
        sys.path.insert(0, tmp)
        facts = {
            'provenance': {
                'collection': 'community.proxmox',
                'version': ref,
                'source': 'https://github.com/ansible-collections/community.proxmox',
                'commit': commit,
                'extracted_by': 'tools/migration/community_proxmox.py',
            },
            'modules': dict((name, module_facts(name)) for name in MODULES),
        }
    with open(out, 'w', encoding='utf-8') as f:
        json.dump(facts, f, indent=1, sort_keys=True)
        f.write('\n')
    print('wrote %s (community.proxmox %s, %s)' % (os.path.normpath(out), ref, commit))


if __name__ == '__main__':
    main(sys.argv)
