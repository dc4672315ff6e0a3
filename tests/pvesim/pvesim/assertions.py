"""What a user asserts after a playbook ran against pvesim: the writes in the request log, and a VM's config.

    from pvesim.assertions import assert_no_writes, assert_config
    assert_no_writes(sim.requests())                      # a --check run sent no write
    assert_config(sim.world(), 'web-01', 'net0.bridge=vmbr10', 'memory=4096', '!net1')

The same checks from a shell: `pvesim assert no-writes`, `pvesim assert config web-01 net0.bridge=vmbr10`.
"""

# A POST to these paths changes nothing on PVE: logins (a ticket) and reading a VM's agent-less data.
READ_ONLY_POSTS = ('/access/ticket',)
WRITE_METHODS = ('POST', 'PUT', 'DELETE')


def _rel(path):
    for prefix in ('/api2/json', '/api2/extjs'):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


def writes(requests):
    """The requests of the log (GET /_sim/requests) that ask PVE to change something: POST, PUT and DELETE,
    logins excepted, and refused ones included (a refused write was still sent)."""
    return [r for r in requests if r['method'] in WRITE_METHODS and _rel(r['path']) not in READ_ONLY_POSTS]


def describe(request):
    return '{0} {1} -> {2}'.format(request['method'], _rel(request['path']), request.get('status'))


def assert_no_writes(requests):
    """AssertionError listing the writes, if any."""
    found = writes(requests)
    if found:
        raise AssertionError('{0} write(s) sent: {1}'.format(len(found), '; '.join(describe(r) for r in found)))


def find_vm(world, ref):
    """The VM of the state (GET /_sim/world) with this name or VMID."""
    for vm in world['vms']:
        if str(vm['vmid']) == str(ref) or vm['name'] == ref:
            return vm
    raise AssertionError('no VM {0} (VMs: {1})'.format(ref, ', '.join(
        '{0} {1}'.format(vm['vmid'], vm['name']) for vm in world['vms'])))


def properties(value):
    """A property string as a dict: `virtio=BC:24:11:00:00:01,bridge=vmbr10` -> {virtio, bridge}; a first item
    without `=` (a drive's volume) is `volume`."""
    out = {}
    for i, item in enumerate(str(value).split(',')):
        key, sep, val = item.partition('=')
        if not sep and i == 0:
            out['volume'] = key
        else:
            out[key] = val
    return out


def check(vm, expr):
    """One expression on a VM's config: `KEY` (set), `!KEY` (not set), `KEY=VALUE` (that value), `KEY.PROP=VALUE`
    (a property of a property string, e.g. `net0.bridge=vmbr10`, `scsi0.size=32G`). Returns an error or None."""
    config = vm['config']
    if expr.startswith('!'):
        key = expr[1:]
        return None if key not in config else '{0} is set: {1}'.format(key, config[key])
    lhs, sep, want = expr.partition('=')
    key, _, prop = lhs.partition('.')
    if key not in config:
        return '{0} is not set'.format(key)
    if not sep:
        return None
    have = properties(config[key]).get(prop) if prop else config[key]
    if str(have) != want:
        return '{0} is {1}, expected {2} ({3}: {4})'.format(lhs, have, want, key, config[key])
    return None


def assert_config(world, ref, *exprs):
    """AssertionError naming each expression the VM's config (its current one, pending changes aside) fails."""
    vm = find_vm(world, ref)
    errors = [e for e in (check(vm, x) for x in exprs) if e]
    if errors:
        raise AssertionError('VM {0} ({1}): {2}'.format(vm['vmid'], vm['name'], '; '.join(errors)))
