#!/usr/bin/env python3
"""The census rows of the refusal sites: docs/refusals/map.json's rules applied to
docs/refusals/sites.json (tools/refusals/inventory.py's output). Reads files only.

    mapping.py            print each row with its number of sites, then every site no rule maps,
                          every rule that maps none and every census row that names no site

A rule names census rows and matches sites by any of `function` (a glob on the function's
qualified name), `file` (a glob), `kind`, `template` (a regular expression searched in the
message template) and `handler` (a glob one of the handlers reaching the site matches); the
first rule that matches a site gives its rows. `outside` lists the rows whose refusal lies
outside the sources the inventory reads, each with the reason.
"""

import fnmatch
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SITES = os.path.join(REPO, 'docs', 'refusals', 'sites.json')
MAP = os.path.join(REPO, 'docs', 'refusals', 'map.json')
CENSUS = os.path.join(REPO, 'docs', 'refusals.md')
ROW = re.compile(r'^\| (R-[a-z]+-\d{2,3}) \|')
FIELDS = ('function', 'file', 'kind', 'template', 'handler')


def load(sites=SITES, rules=MAP):
    with open(sites, encoding='utf-8') as f:
        data = json.load(f)
    with open(rules, encoding='utf-8') as f:
        mapping = json.load(f)
    return data, mapping


def matches(rule, site):
    if 'function' in rule and not fnmatch.fnmatchcase(site['function'], rule['function']):
        return False
    if 'file' in rule and not fnmatch.fnmatchcase(site['file'], rule['file']):
        return False
    if 'kind' in rule and site['kind'] != rule['kind']:
        return False
    if 'template' in rule and not re.search(rule['template'], site['template']):
        return False
    if 'handler' in rule and not any(fnmatch.fnmatchcase(h, rule['handler']) for h in site['handlers']):
        return False
    return True


def assign(data, mapping):
    """({site id: (rule index, rows)}, [ids of sites no rule matches], {rule index: number of sites})."""
    rules = mapping['rules']
    for i, rule in enumerate(rules):
        unknown = set(rule) - set(FIELDS) - {'rows', 'note'}
        assert not unknown and rule.get('rows'), 'rule %d of map.json: unknown fields %s or no rows' % (i, unknown)
    found, unmapped, used = {}, [], {}
    for site in data['sites']:
        for i, rule in enumerate(rules):
            if matches(rule, site):
                found[site['id']] = (i, rule['rows'])
                used[i] = used.get(i, 0) + 1
                break
        else:
            unmapped.append(site['id'])
    return found, unmapped, used


def rows_to_sites(found):
    out = {}
    for sid, (_, rows) in found.items():
        for r in rows:
            out.setdefault(r, []).append(sid)
    return out


def main():
    data, mapping = load()
    found, unmapped, used = assign(data, mapping)
    for row, sids in sorted(rows_to_sites(found).items()):
        print('%-14s %4d' % (row, len(sids)))
    for i, rule in enumerate(mapping['rules']):
        if i not in used:
            print('rule %d matches no site: %s' % (i, rule))
    by_id = {s['id']: s for s in data['sites']}
    for sid in unmapped:
        s = by_id[sid]
        print('UNMAPPED %s %s:%d %s %s' % (s['function'], s['file'], s['line'], s['kind'], s['template'][:100]))
    with open(CENSUS, encoding='utf-8') as f:
        rows = [m.group(1) for m in map(ROW.match, f) if m]
    siteless = [r for r in rows if r not in rows_to_sites(found) and r not in mapping['outside']]
    for row in siteless:
        print('ROW WITHOUT SITE %s: give it a rule in docs/refusals/map.json, before the rule of its family' % row)
    print('%d sites, %d unmapped; %d rows, %d without a site' % (len(data['sites']), len(unmapped), len(rows),
                                                               len(siteless)))
    return 1 if unmapped or siteless else 0


if __name__ == '__main__':
    sys.exit(main())
