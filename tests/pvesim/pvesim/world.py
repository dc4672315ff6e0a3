"""`GET /_sim/world`: pvesim's whole state as JSON (nodes, bridges, storages with their volumes, VMs with their
config and pending changes, tasks, pools), for a user's assertions after a playbook ran (README "State")."""

import json


def _plain(value):
    """JSON-safe: sets become sorted lists."""
    if isinstance(value, dict):
        return dict((str(k), _plain(v)) for k, v in value.items())
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    try:
        json.dumps(value)
        return value
    except TypeError:
        return str(value)


def world(sim):
    """The state a test asserts on; secrets (passwords, token secrets) are not part of it."""
    storages = {}
    for sid, store in sim.storages.items():
        options = dict((k, v) for k, v in store.items() if k not in ('files', 'volumes'))
        volumes = dict((name, dict((k, vol[k]) for k in ('content', 'format', 'size', 'vmid') if k in vol))
                       for name, vol in sorted(store.get('volumes', {}).items()))
        storages[sid] = dict(_plain(options), volumes=_plain(volumes))
    vms = []
    for vm in sorted(sim.vms, key=lambda v: v.vmid):
        vms.append({'vmid': vm.vmid, 'name': vm.config.get('name', vm.name), 'node': vm.node, 'status': vm.status,
                    'template': bool(vm.template), 'lock': vm.config.get('lock'),
                    'config': _plain(vm.config), 'pending': _plain(vm.pending),
                    'snapshots': sorted(getattr(vm, 'snapshots', {}) or {})})
    tasks = [dict((k, t.get(k)) for k in ('upid', 'node', 'type', 'id', 'user', 'status', 'exitstatus'))
             for t in getattr(sim, 'tasklog', [])]
    pools = dict((name, {'vms': _plain(members)}) for name, members in getattr(sim, 'pools', {}).items())
    return {'seed': sim.seed_file, 'cluster_name': sim.cluster_name, 'nodes': sorted(sim.nodes),
            'bridges': list(sim.bridges), 'storages': storages, 'vms': vms, 'tasks': tasks, 'pools': pools}
