"""README's "Migrating from community.proxmox" table, kept complete against community.proxmox 2.0.0.

The facts of community.proxmox 2.0.0 (each module's options with type, choices and default, the
constraints between options, the return keys) are in community_proxmox_2.0.0.json, extracted from
its sources by tools/migration/community_proxmox.py (provenance in the file). Ours are the
generated stubs (plugins/modules/<name>.py: ARGUMENT_SPEC, the constraint lists, RETURN). Every
difference must have its row in the table:
- an option one side lacks, or with another type: a row naming `option`;
- another default or other choices: a row naming `option` whose community.proxmox cell holds
  upstream's value and whose ferro.proxmox cell holds ours;
- a pair of options one side declares mutually exclusive: a row naming `a` + `b`;
- return keys we add (top level, and in each element of a list of dicts): the `result keys
  (<module>)` row's ferro.proxmox cell names each.
And a row naming an option with a default must not misstate community.proxmox 2.0.0's default
(its cell holds the value).
"""

import importlib.util
import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = json.loads((Path(__file__).parent / 'community_proxmox_2.0.0.json').read_text())
MODULES = sorted(UPSTREAM['modules'])
SHORT = {'proxmox_kvm': 'kvm', 'proxmox_disk': 'disk', 'proxmox_nic': 'nic', 'proxmox_vm_info': 'vm_info'}


def stub(name):
    spec = importlib.util.spec_from_file_location('ferro_stub_' + name, ROOT / 'plugins' / 'modules' / (name + '.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table():
    """The migration table's rows: (first cell, community.proxmox cell, ferro.proxmox cell)."""
    text = (ROOT / 'README.md').read_text()
    section = text.split('## Migrating from community.proxmox', 1)[1].split('\n## ', 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if line.startswith('|') and len(cells) == 3 and not set(cells[0]) <= set('- '):
            rows.append(tuple(cells))
    assert len(rows) > 20, 'no migration table found in README.md'
    return rows


def rows_naming(rows, name, module):
    """Rows whose first cell names `name` (in backticks), for `module` or for every module."""
    found = []
    for row in rows:
        scope = re.findall(r'\((kvm|disk|nic|vm_info)\)', row[0])
        if '`%s`' % name in row[0] and (not scope or SHORT[module] in scope):
            found.append(row)
    return found


def shown(value):
    return str(value).lower() if isinstance(value, bool) else str(value)


def in_cell(value, cell):
    """`value` as a word of the cell (300 is not in 3000)."""
    return re.search(r'(?<![\w.])%s(?![\w.])' % re.escape(shown(value)), cell) is not None


def option_differences(module):
    """(option, kind, upstream value, our value) for each difference in the options."""
    ours = stub(module).ARGUMENT_SPEC
    theirs = UPSTREAM['modules'][module]['options']
    out = []
    for option in sorted(set(ours) | set(theirs)):
        if option not in ours or option not in theirs:
            out.append((option, 'only one side has it', option in theirs, option in ours))
            continue
        a, b = theirs[option], ours[option]
        if a.get('type', 'str') != b.get('type', 'str'):
            out.append((option, 'type', a.get('type', 'str'), b.get('type', 'str')))
        if shown(a.get('default')) != shown(b.get('default')):
            out.append((option, 'default', a.get('default'), b.get('default')))
        if set(map(str, a.get('choices') or ())) != set(map(str, b.get('choices') or ())):
            out.append((option, 'choices', sorted(a.get('choices') or ()), sorted(b.get('choices') or ())))
    return out


def pairs(groups):
    return {tuple(sorted(g)) for group in groups for g in _pairs_of(group)}


def _pairs_of(group):
    return [(a, b) for i, a in enumerate(group) for b in group[i + 1:]]


def return_keys(doc):
    out = {}
    for key, value in (yaml.safe_load(doc) or {}).items():
        out[key] = sorted((value.get('contains') or {}).keys())
    return out


def test_every_option_difference_has_its_row():
    rows = table()
    missing = []
    for module in MODULES:
        for option, kind, theirs, ours in option_differences(module):
            found = rows_naming(rows, option, module)
            if not found:
                missing.append('%s %s: %s (community.proxmox %r, ours %r)' % (module, option, kind, theirs, ours))
            elif kind in ('default', 'choices'):
                values = [v for v in (theirs, ours) if v not in (None, [])]
                if not any(all(in_cell(x, cell) for v, cell in zip((theirs, ours), row[1:]) if v not in (None, [])
                               for x in (v if isinstance(v, list) else [v])) for row in found):
                    missing.append('%s %s: the row does not show %s %r' % (module, option, kind, values))
    assert missing == [], 'README migration table misses:\n' + '\n'.join(missing)


def test_every_constraint_difference_has_its_row():
    rows = table()
    missing = []
    for module in MODULES:
        theirs = pairs(UPSTREAM['modules'][module]['constraints'].get('mutually_exclusive', []))
        ours = pairs(stub(module).MUTUALLY_EXCLUSIVE)
        for a, b in sorted(theirs ^ ours):
            if not any('`%s` + `%s`' % (a, b) in r[0] or '`%s` + `%s`' % (b, a) in r[0] for r in rows):
                missing.append('%s: %s + %s mutually exclusive on one side only' % (module, a, b))
    assert missing == [], 'README migration table misses:\n' + '\n'.join(missing)


def test_every_return_key_we_add_is_in_its_row():
    rows = table()
    missing = []
    for module in MODULES:
        theirs = UPSTREAM['modules'][module]['returns']
        ours = return_keys(stub(module).RETURN)
        added = set(ours) - set(theirs)
        for key in set(ours) & set(theirs):
            added |= set(ours[key]) - set(theirs[key])
        row = [r for r in rows if r[0] == 'result keys (%s)' % SHORT[module]]
        if not row:
            missing.append('%s: no "result keys (%s)" row' % (module, SHORT[module]))
            continue
        missing += ['%s: result key %s' % (module, k) for k in sorted(added) if '`%s`' % k not in row[0][2]]
        # Nothing community.proxmox documents is gone.
        assert set(theirs) <= set(ours), (module, sorted(set(theirs) - set(ours)))
    assert missing == [], 'README migration table misses:\n' + '\n'.join(missing)


def test_rows_state_community_proxmox_defaults_as_2_0_0_has_them():
    wrong = []
    for row in table():
        m = re.fullmatch(r'`(\w+)`(?: \((kvm|disk|nic|vm_info)\))?', row[0])
        if not m:
            continue
        option, scope = m.groups()
        for module in MODULES:
            facts = UPSTREAM['modules'][module]['options'].get(option)
            if facts and 'default' in facts and (scope is None or SHORT[module] == scope):
                if not in_cell(facts['default'], row[1]):
                    wrong.append('%s: community.proxmox 2.0.0 %s defaults to %r: %r' % (row[0], module, facts['default'], row[1]))
    assert wrong == [], '\n'.join(wrong)


def test_facts_record_their_source():
    prov = UPSTREAM['provenance']
    assert prov['version'] == '2.0.0' and re.fullmatch(r'[0-9a-f]{40}', prov['commit'])
    assert (ROOT / prov['extracted_by']).is_file()
