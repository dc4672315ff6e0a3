"""Every key a module returns is in its RETURN documentation as ansible-doc shows it (issue 34).

The harness records the key paths each of the collection's modules returned in every run of the
suite (harness.py `RETURNED_KEYS`; under pytest-xdist each worker writes its own into
FERRO_E2E_REQUEST_LOG with its request log, conftest.py). The whole-suite audit, run last, compares
them with ansible-doc's RETURN of the installed collection: a nested key must be in the `contains`
of its parent when the parent documents one (a dict or list without `contains` is free-form). A
small run of one task per module and outcome (created, updated, read, failed) gives the audit
something to compare when this file runs alone."""

import json
import os
import subprocess

import pytest

from conftest import logged_returned_keys
from harness import COLLECTION_PREFIX, VENV_BIN, key_paths

MODULES = ['proxmox_kvm', 'proxmox_disk', 'proxmox_nic', 'proxmox_vm_info']
# What ansible-core itself adds to a task's result (its common return values), not the module.
ANSIBLE_KEYS = {'changed', 'failed', 'msg', 'diff', 'invocation', 'warnings', 'deprecations', 'skipped',
                'skip_reason', 'false_condition', 'exception', 'item', 'ansible_loop_var', 'ansible_index_var',
                'attempts', '_ansible_no_log', '_ansible_verbose_always', '_ansible_verbose_override',
                '_ansible_delegated_vars', '_ansible_item_label'}


def return_docs(collections_path):
    """{module FQCN: its RETURN as ansible-doc shows it from the installed collection}."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path)
    out = subprocess.run([os.path.join(VENV_BIN, 'ansible-doc'), '--json', '-t', 'module'] +
                         [COLLECTION_PREFIX + m for m in MODULES], check=True, capture_output=True, text=True, env=env)
    return {name: shown.get('return') or {} for name, shown in json.loads(out.stdout).items()}


def documented(returns, path):
    """Whether `path` (harness.key_paths) is in the RETURN docs `returns`."""
    node = returns
    for part in path.split('.'):
        name = part.replace('[]', '')
        if node is None:
            return True   # below a documented dict or list that says nothing of its keys
        if name not in node:
            return False
        node = node[name].get('contains')
    return True


def undocumented(returned, docs):
    """[(module, key path, a task that returned it)] for every returned key its RETURN lacks."""
    out = []
    for module, paths in sorted(returned.items()):
        for path, task in sorted(paths.items()):
            if path.split('.')[0].split('[')[0] not in ANSIBLE_KEYS and not documented(docs.get(module, {}), path):
                out.append((module, path, task))
    return out


def test_the_comparison_finds_an_undocumented_key():
    docs = {'m': {'vmid': {'type': 'int'}, 'size': {'type': 'dict', 'contains': {'text': {}}},
                  'devices': {'type': 'dict'}}}
    result = {'vmid': 1, 'changed': True, 'size': {'text': '1G', 'bytes': 1}, 'devices': {'any': {'x': 1}},
              'extra': [{'a': 1}], 'diff': {'before': {}}}
    found = undocumented({'m': {p: 't' for p in key_paths(result)}}, docs)
    assert found == [('m', 'extra', 't'), ('m', 'extra[].a', 't'), ('m', 'size.bytes', 't')]


def play(*tasks):
    return [{'name': 'returns', 'hosts': 'localhost', 'gather_facts': False, 'tasks': list(tasks)}]


def task(_name, module, **options):
    return {'name': _name, COLLECTION_PREFIX + module: options, 'delegate_to': 'localhost', 'ignore_errors': True}


def test_one_task_per_module_and_outcome_returns_documented_keys(ansible, sim, collections_path):
    book = play(
        task('create', 'proxmox_kvm', node='pve1', vmid=150, name='returns', cores=1),
        task('update', 'proxmox_kvm', node='pve1', vmid=100, cores=3, update=True),
        task('disk', 'proxmox_disk', vmid=100, disk='scsi1', storage='local-lvm', size='1'),
        task('nic', 'proxmox_nic', vmid=100, interface='net1', bridge='vmbr0'),
        task('info', 'proxmox_vm_info', vmid=100, config='current'),
        task('missing', 'proxmox_kvm', node='pve1', vmid=999, state='started'),
        task('refused', 'proxmox_disk', vmid=100, disk='scsi2', storage='no-such-storage', size='1'),
    )
    for check in (True, False):
        run = ansible.run_playbook(book, check=check, diff=True)
        assert {r['task'] for r in run.results} >= {'create', 'update', 'disk', 'nic', 'info', 'missing', 'refused'}
    returned = {}
    for r in run.results:
        returned.setdefault(r['resolved'], {}).update({p: r['task'] for p in key_paths(r['result'])})
    assert sorted(returned) == sorted(COLLECTION_PREFIX + m for m in MODULES)
    bad = undocumented(returned, return_docs(collections_path))
    assert bad == [], 'returned keys missing from RETURN: %s' % bad


def test_whole_suite_returns_only_documented_keys(collections_path, summary):
    """Runs last (conftest.py), over what every test of this session returned and, under xdist, what
    every worker's tests returned (FERRO_E2E_REQUEST_LOG, make test-e2e)."""
    if os.environ.get('PYTEST_XDIST_WORKER'):
        pytest.fail('the whole-suite audit on an xdist worker would see only that worker\'s runs: run it alone '
                    'after the workers, with FERRO_E2E_REQUEST_LOG (as make test-e2e does)')
    returned = logged_returned_keys()
    assert returned, 'no module result recorded this session: run the audit after the suite (make test-e2e)'
    bad = undocumented(returned, return_docs(collections_path))
    assert bad == [], 'returned keys missing from the module\'s RETURN (module, key, a task that returned it): %s' % bad
    summary('returns: whole-suite audit: %d key paths returned by %d modules, all in their RETURN docs' % (
        sum(len(p) for p in returned.values()), len(returned)))
