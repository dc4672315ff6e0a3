#!/usr/bin/env python3
"""Derive module_utils/src/pve/schema/params.json from Proxmox VE's API schema (apidoc JSON).

    extract.py APIDOC_JSON [OUT]     OUT defaults to module_utils/src/pve/schema/params.json

The endpoints are the writes our modules make: the POST/PUT/DELETE rows of SECURITY.md's
endpoint table (between `<!-- endpoints: begin -->` and `<!-- endpoints: end -->`), with a
`{a,b}` alternative expanded. For each, every parameter keeps only what a value is checked
against (type, optional, minimum, maximum, enum, pattern, maxLength, minLength, a named format
or the keys of an inline property-string format with the same fields plus default_key, alias,
keyAlias); descriptions and every other prose field are dropped. The output is stable
(sorted keys, one field a line) so that a new schema shows as a readable diff.
"""

import hashlib
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO, 'module_utils', 'src', 'pve', 'schema', 'params.json')

# The fields a value is checked against (pve-common JSONSchema.pm check_prop, check_type,
# parse_property_string; `requires` only as a key name); nothing else is kept.
KEPT = ('type', 'optional', 'minimum', 'maximum', 'enum', 'pattern', 'maxLength', 'minLength', 'requires')
SUB_KEPT = KEPT + ('default_key', 'alias', 'keyAlias')

# How many numbered keys a `name[n]` parameter stands for. The schema collapses `net0` ...
# `net31` into `net[n]` and says the range only in some descriptions ("n is 0 to 30"); the
# others are qemu-server constants (PVE 9.1): QemuServer.pm $MAX_NETS (net, ipconfig),
# $MAX_HOSTPCI_DEVICES, $MAX_NUMA, $MAX_UNUSED_DISKS, QemuServer/USB.pm $MAX_USB_DEVICES,
# QemuServer/Virtiofs.pm $MAX_VIRTIOFS.
COUNTS = {'net': 32, 'ipconfig': 32, 'hostpci': 16, 'numa': 8, 'unused': 256, 'usb': 14, 'virtiofs': 10}
RANGE_RE = re.compile(r'\(n is 0 to (\d+)')


def write_endpoints(security_md):
    """(method, path template) of every write row in SECURITY.md's endpoint table."""
    text = open(security_md, encoding='utf-8').read()
    table = text.split('<!-- endpoints: begin -->', 1)[1].split('<!-- endpoints: end -->', 1)[0]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) != 3 or cells[1] not in ('POST', 'PUT', 'DELETE'):
            continue
        path = cells[2].strip('`')
        alt = re.search(r'\{([^{}]*,[^{}]*)\}', path)
        if alt:
            rows += [(cells[1], path[:alt.start()] + a + path[alt.end():]) for a in alt.group(1).split(',')]
        else:
            rows.append((cells[1], path))
    return rows


def keep(schema, fields):
    out = {k: schema[k] for k in fields if k in schema}
    if 'optional' in out:
        out['optional'] = 1 if out['optional'] else 0
    fmt = schema.get('format')
    if isinstance(fmt, str):
        out['format'] = fmt
    elif isinstance(fmt, dict):
        out['keys'] = {k: keep(v, SUB_KEPT) for k, v in sorted(fmt.items())}
    return out


def count_of(name, schema):
    if name in COUNTS:
        return COUNTS[name]
    found = RANGE_RE.search(schema.get('description', ''))
    if not found:
        sys.exit(f'no range known for {name}[n]: add it to COUNTS with its qemu-server source')
    return int(found.group(1)) + 1


def share(endpoints):
    """Write a parameter definition that several endpoints have once (create, POST config and
    PUT config carry the same ~150 qemu keys): such a parameter becomes the name of its entry
    in `shared`, which `schema.rs` resolves when it loads the table. It halves the table and so
    what it adds to the binary."""
    seen = {}
    for schema in endpoints.values():
        for name, entry in schema['params'].items():
            seen.setdefault((name, json.dumps(entry, sort_keys=True)), []).append(entry)
    shared, ids = {}, {}
    for (name, text), entries in sorted(seen.items()):
        if len(entries) < 2:
            continue
        ident = name if name not in shared else f'{name}#{sum(1 for k in shared if k.split("#")[0] == name)}'
        shared[ident] = entries[0]
        ids[(name, text)] = ident
    for schema in endpoints.values():
        for name, entry in list(schema['params'].items()):
            ident = ids.get((name, json.dumps(entry, sort_keys=True)))
            if ident is not None:
                schema['params'][name] = ident
    return shared


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    source = sys.argv[1]
    out_path = sys.argv[2] if len(sys.argv) == 3 else DEFAULT_OUT
    raw = open(source, 'rb').read()
    api = json.loads(raw)

    nodes = {}
    stack = list(api)
    while stack:
        node = stack.pop()
        nodes[node['path']] = node
        stack += node.get('children') or []

    endpoints = {}
    for method, path in write_endpoints(os.path.join(REPO, 'SECURITY.md')):
        info = nodes.get(path, {}).get('info', {}).get(method)
        if info is None:
            sys.exit(f'{method} {path} (SECURITY.md) is not in {source}')
        params = info.get('parameters', {})
        props = {}
        for name, schema in sorted(params.get('properties', {}).items()):
            entry = keep(schema, KEPT)
            if name.endswith('[n]'):
                entry['count'] = count_of(name[:-3], schema)
            props[name] = entry
        endpoints[f'{method} {path}'] = {
            'additional': 1 if params.get('additionalProperties', 1) else 0,
            'params': props,
        }

    table = {'source_sha256': hashlib.sha256(raw).hexdigest(), 'endpoints': endpoints, 'shared': share(endpoints)}
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, 'w', encoding='utf-8') as f:
        json.dump(table, f, sort_keys=True, indent=0, separators=(',', ':'))
        f.write('\n')
    print(f'{out_path}: {len(endpoints)} endpoints, {os.path.getsize(out_path)} bytes')


if __name__ == '__main__':
    main()
