#!/usr/bin/env python3
"""Write pvesim/schema_data.json, the request schema pvesim's validation layer checks, from PVE's API schema.

    extract_schema.py APIDOC_JSON [OUT]     OUT defaults to tests/pvesim/pvesim/schema_data.json

APIDOC_JSON is the `apiSchema` array of PVE's API viewer (pve-docs apidoc.js) as JSON. The
endpoints kept are those of SECURITY.md's endpoint table (every row: the calls our modules make,
all of which pvesim serves), a `{a,b}` alternative and `{type}` (qemu, lxc) expanded. Per method
only what a request is checked against is kept (pve-common JSONSchema.pm check_object /
check_prop / check_type / parse_property_string): each parameter's type, optional, minimum,
maximum, enum, pattern, maxLength, minLength, requires, a named format or an inline property-string
format (its keys with the same fields plus default_key, alias, keyAlias), array items, and the
method's additionalProperties; plus the `returns` schema's types and property names (for the
conformance test). No description or other prose. Output is stable (sorted keys).

This is pvesim's own extractor; it shares nothing with tools/schema/extract.py (the modules'),
so that a misreading of the schema cannot hide in both.
"""

import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DEFAULT_OUT = os.path.join(REPO, 'tests', 'pvesim', 'pvesim', 'schema_data.json')
CHECKED = ('type', 'optional', 'minimum', 'maximum', 'enum', 'pattern', 'maxLength', 'minLength', 'requires')
KEY_CHECKED = CHECKED + ('default_key', 'alias', 'keyAlias')
RETURNED = ('type', 'optional')
# How many numbered keys a `name[n]` parameter stands for: the schema collapses net0..net31 into
# net[n] and gives the range only in some descriptions ("n is 0 to 30"); the rest are qemu-server
# constants: QemuServer.pm $MAX_NETS (net, ipconfig), PCI.pm $MAX_HOSTPCI_DEVICES, Memory.pm
# $MAX_NUMA, QemuServer.pm $MAX_UNUSED_DISKS, USB.pm $MAX_USB_DEVICES, Virtiofs.pm max_virtiofs.
COUNTS = {'net': 32, 'ipconfig': 32, 'hostpci': 16, 'numa': 8, 'unused': 256, 'usb': 14, 'virtiofs': 10}
RANGE = re.compile(r'\(n is 0 to (\d+)')


def endpoints(security_md):
    """(method, path) of every row of SECURITY.md's endpoint table."""
    text = open(security_md, encoding='utf-8').read()
    table = text.split('<!-- endpoints: begin -->', 1)[1].split('<!-- endpoints: end -->', 1)[0]
    out = set()
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) != 3 or cells[1] not in ('GET', 'POST', 'PUT', 'DELETE'):
            continue
        todo = [cells[2].strip('`')]
        while todo:
            path = todo.pop()
            alt = re.search(r'\{([^{}]*,[^{}]*)\}', path)
            if alt:
                todo += [path[:alt.start()] + a + path[alt.end():] for a in alt.group(1).split(',')]
            elif '{type}' in path:
                todo += [path.replace('{type}', t) for t in ('qemu', 'lxc')]
            else:
                out.add((cells[1], path))
    return sorted(out)


def checked(schema, fields=CHECKED):
    out = {k: schema[k] for k in fields if k in schema}
    for flag in ('optional', 'default_key'):
        if flag in out:
            out[flag] = 1 if out[flag] else 0
    fmt = schema.get('format')
    if isinstance(fmt, str):
        out['format'] = fmt
    elif isinstance(fmt, dict):
        out['keys'] = {k: checked(v, KEY_CHECKED) for k, v in sorted(fmt.items())}
    if isinstance(schema.get('items'), dict):
        out['items'] = checked(schema['items'])
    return out


def numbered(name, schema):
    out = checked(schema)
    if name.endswith('[n]'):
        base = name[:-3]
        found = RANGE.search(schema.get('description', ''))
        if base not in COUNTS and not found:
            sys.exit('no range known for {0}: add it to COUNTS with its qemu-server source'.format(name))
        out['count'] = COUNTS[base] if base in COUNTS else int(found.group(1)) + 1
    return out


def returned(schema):
    """The shape of a `returns` schema: types, optional flags, property names, items."""
    if not isinstance(schema, dict):
        return {}
    out = {k: schema[k] for k in RETURNED if k in schema}
    if 'optional' in out:
        out['optional'] = 1 if out['optional'] else 0
    if isinstance(schema.get('properties'), dict):
        out['properties'] = {k: returned(v) for k, v in sorted(schema['properties'].items())}
    if isinstance(schema.get('items'), dict):
        out['items'] = returned(schema['items'])
    return out


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    src, out = argv[1], argv[2] if len(argv) == 3 else DEFAULT_OUT
    raw = open(src, 'rb').read()
    tree = json.loads(raw)
    infos = {}

    def walk(node):
        if node.get('info'):
            infos[node['path']] = node['info']
        for child in node.get('children') or []:
            walk(child)
    for node in tree:
        walk(node)
    methods = {}
    for method, path in endpoints(os.path.join(REPO, 'SECURITY.md')):
        info = (infos.get(path) or {}).get(method)
        if info is None:
            sys.exit('{0} {1} is not in the schema'.format(method, path))
        params = info.get('parameters') or {}
        props = {k: numbered(k, v) for k, v in sorted((params.get('properties') or {}).items())}
        for sch in props.values():
            # `cdrom` names qemu-server's pve-qm-ide, which the schema spells out on ide[n] (Drive.pm $ide_fmt)
            if sch.get('format') == 'pve-qm-ide' and 'ide[n]' in props:
                del sch['format']
                sch['keys'] = props['ide[n]']['keys']
        methods['{0} {1}'.format(method, path)] = {
            'additionalProperties': 1 if params.get('additionalProperties', 1) else 0,
            'properties': props,
            'returns': returned(info.get('returns')),
        }
    data = {'source_sha256': hashlib.sha256(raw).hexdigest(), 'methods': methods}
    with open(out, 'w', encoding='utf-8') as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
        fh.write('\n')
    print('{0}: {1} methods, {2} parameters'.format(
        out, len(methods), sum(len(m['properties']) for m in methods.values())))


if __name__ == '__main__':
    main(sys.argv)
