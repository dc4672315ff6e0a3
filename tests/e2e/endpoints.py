"""The API endpoints the modules document (SECURITY.md, between the `endpoints` markers), as
patterns, and the check of a pvesim request log against them (issue 15)."""

import os
import re

from harness import ROOT

PLACEHOLDERS = {
    'node': r'[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?',
    'vmid': r'[1-9][0-9]{2,8}',
    'upid': r'UPID(?:%3A|:)[^/?#]+',
    'type': r'(?:qemu|lxc)',
    'storage': r'[a-z][a-z0-9._-]*[a-z0-9]',  # pve-storage-id (pve-storage PVE/Storage/Plugin.pm)
}
ROW = re.compile(r'^\| [^|]+ \| (GET|POST|PUT|DELETE) \| `(/[^`]*)` \|$')


def documented_endpoints(path=os.path.join(ROOT, 'SECURITY.md')):
    """[(method, template, compiled regex)] from the table in SECURITY.md."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    begin, end = text.index('<!-- endpoints: begin -->'), text.index('<!-- endpoints: end -->')
    rows = []
    for line in text[begin:end].splitlines():
        m = ROW.match(line.strip())
        if not m:
            continue
        method, template = m.groups()

        def part(match):
            name = match.group(1)
            if ',' in name:  # {start,stop,...}: one of these words
                return '(?:%s)' % '|'.join(re.escape(w) for w in name.split(','))
            return PLACEHOLDERS[name]

        pattern = re.sub(r'\{([^}]+)\}', part, re.escape(template).replace(r'\{', '{').replace(r'\}', '}'))
        rows.append((method, template, re.compile('^/api2/json' + pattern + '$')))
    assert len(rows) >= 20, 'the endpoint table of SECURITY.md was not found or is incomplete'
    return rows


def outside(requests, endpoints=None):
    """The (method, path) pairs of `requests` (pvesim's log entries) no documented endpoint has."""
    endpoints = endpoints or documented_endpoints()
    bad = []
    for r in requests:
        path = r['path'].split('?')[0]
        if not any(method == r['method'] and rx.match(path) for method, _, rx in endpoints):
            bad.append((r['method'], r['path']))
    return bad
