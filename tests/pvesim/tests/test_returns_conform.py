"""Every answer our modules read conforms to the `returns` schema PVE publishes for it (schema_data.json keeps
each method's return types, optional flags and property names): the right JSON type at every level, every
property the schema does not mark optional present. docs/pve-semantics.md §32.4.

PVE itself does not check its answers (PVE::RESTHandler handle runs result verification only on request,
and pve-http-server never asks), so where PVE's code answers otherwise than its schema, pvesim answers as the
code does; those places are listed in KNOWN with their source, and checked to stay as listed.
"""

import json
import os
import re

from conftest import Q, ok, run

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'pvesim', 'schema_data.json')
METHODS = json.load(open(DATA, encoding='utf-8'))['methods']
# (endpoint, path in the answer) -> why PVE answers otherwise than its schema.
KNOWN = {
    # pve-manager PVE/API2/Cluster.pm nextid: `return $vmid` of a string (docs/pve-semantics.md §18, D18)
    ('GET /cluster/nextid', ''): 'a string',
    # qemu-server QemuServer.pm parse_vm_config numifies integer and boolean keys (check_type) and
    # pve-guest-common GuestHelpers.pm config_with_pending_array copies them: numbers where the schema says
    # string (docs/pve-semantics.md §3)
    ('GET /nodes/{node}/qemu/{vmid}/pending', '[].value'): 'an integer key',
    ('GET /nodes/{node}/qemu/{vmid}/pending', '[].pending'): 'an integer key',
}


def problems_of(value, sch, path=''):
    """Where value breaks the returns schema sch: [(path, what)]."""
    kind = sch.get('type')
    found = []
    if value is None:
        return [] if kind in (None, 'null', 'any') or sch.get('optional') else [(path, 'null')]
    ok_type = {
        'array': isinstance(value, list), 'object': isinstance(value, dict), 'string': isinstance(value, str),
        'integer': isinstance(value, int) and not isinstance(value, bool),
        'number': isinstance(value, (int, float)) and not isinstance(value, bool),
        'boolean': isinstance(value, bool) or value in (0, 1), 'null': False,
    }.get(kind, True)
    if not ok_type:
        return [(path, '{0} is not {1}'.format(type(value).__name__, kind))]
    if kind == 'array' and 'items' in sch:
        for n, item in enumerate(value):
            found += problems_of(item, sch['items'], '{0}[{1}]'.format(path, n))
    if kind == 'object':
        for key, sub in (sch.get('properties') or {}).items():
            where = '{0}.{1}'.format(path, key) if path else key
            if key not in value:
                if not sub.get('optional'):
                    found.append((where, 'missing'))
            else:
                found += problems_of(value[key], sub, where)
    return found


def check(seen, key, value):
    problems = problems_of(value, METHODS[key]['returns'])
    seen.append(key)
    unexplained = [p for p in problems if (key, re.sub(r'\[\d+\]', '[]', p[0])) not in KNOWN
                   or p[1] not in ('int is not string', 'str is not integer')]
    assert not unexplained, (key, unexplained)
    return problems


def test_every_answer_the_modules_read_conforms_to_the_returns_schema(sim, summary):
    seen = []
    ok(run(sim, 'POST', Q + '/100/status/stop'))
    upid = sim.api('POST', Q + '/100/status/start')
    sim.wait_task(upid)
    check(seen, 'GET /cluster/resources', sim.api('GET', '/cluster/resources'))
    check(seen, 'GET /cluster/resources', sim.api('GET', '/cluster/resources', {'type': 'vm'}))
    check(seen, 'GET /nodes', sim.api('GET', '/nodes'))
    check(seen, 'GET /storage', sim.api('GET', '/storage'))
    for store in ('local-lvm', 'vmdata', 'isos'):
        check(seen, 'GET /nodes/{node}/storage/{storage}/content',
              sim.api('GET', '/nodes/pve1/storage/{0}/content'.format(store)))
        check(seen, 'GET /nodes/{node}/storage/{storage}/status',
              sim.api('GET', '/nodes/pve1/storage/{0}/status'.format(store)))
    check(seen, 'GET /nodes/{node}/qemu', sim.api('GET', '/nodes/pve1/qemu'))
    check(seen, 'GET /nodes/{node}/lxc', sim.api('GET', '/nodes/pve1/lxc'))
    for vmid in (100, 9000):
        check(seen, 'GET /nodes/{node}/qemu/{vmid}/config', sim.api('GET', '{0}/{1}/config'.format(Q, vmid)))
        check(seen, 'GET /nodes/{node}/qemu/{vmid}/pending', sim.api('GET', '{0}/{1}/pending'.format(Q, vmid)))
        check(seen, 'GET /nodes/{node}/qemu/{vmid}/status/current',
              sim.api('GET', '{0}/{1}/status/current'.format(Q, vmid)))
    check(seen, 'GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces',
          sim.api('GET', Q + '/100/agent/network-get-interfaces'))
    check(seen, 'GET /nodes/{node}/network', sim.api('GET', '/nodes/pve1/network', {'type': 'any_bridge'}))
    assert check(seen, 'GET /cluster/nextid', sim.api('GET', '/cluster/nextid')) == [('', 'str is not integer')]
    check(seen, 'GET /access/permissions', sim.api('GET', '/access/permissions', {'path': '/vms/100'}))
    check(seen, 'GET /nodes/{node}/tasks/{upid}/status', sim.api('GET', '/nodes/pve1/tasks/{0}/status'.format(upid)))
    check(seen, 'GET /nodes/{node}/tasks/{upid}/log', sim.api('GET', '/nodes/pve1/tasks/{0}/log'.format(upid)))
    check(seen, 'POST /access/ticket', sim.api('POST', '/access/ticket', {'username': 'root@pam',
                                                                         'password': 'secret'}, token=False))
    # the writes' answers: a task's UPID, or null
    check(seen, 'PUT /nodes/{node}/qemu/{vmid}/config', sim.api('PUT', Q + '/100/config', {'cores': 2}))
    check(seen, 'POST /nodes/{node}/qemu/{vmid}/config', sim.api('POST', Q + '/100/config', {'cores': 3}))
    check(seen, 'POST /nodes/{node}/qemu', sim.api('POST', Q, {'vmid': 990}))
    check(seen, 'POST /nodes/{node}/qemu/{vmid}/clone', sim.api('POST', Q + '/9000/clone', {'newid': 991}))
    reads = sorted(k for k in METHODS if k.startswith('GET '))
    summary('{0} answers checked over {1} endpoints ({2} of the {3} GET endpoints the modules read)'.format(
        len(seen), len(set(seen)), len(set(seen) & set(reads)), len(reads)))
    # the reads left out: the container ones (pvesim's seeds hold no container)
    assert set(reads) - set(seen) == {'GET /nodes/{node}/lxc/{vmid}/config', 'GET /nodes/{node}/lxc/{vmid}/interfaces'}
