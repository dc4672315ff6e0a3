"""The fleet (issue 18): N VMs cloned from one template, a disk grown and started, end to end, by
ferro.proxmox and by community.proxmox the two ways its users can run it, each on a fresh pvesim at
its default time scale; per variant the wall time, the failed hosts, and what pvesim holds at the end.

Each collection runs its own idiomatic playbook, one play on an inventory of N hosts (fleet-01 ...,
local connection), three tasks per host: proxmox_kvm `clone` (with `timeout`, `register`), then
proxmox_disk `state: resized` and proxmox_kvm `state: started` on the registered `vmid`.

First, the floor: the same play with each task replaced by one that makes no API call and only waits
as long as its PVE task runs on pvesim (bench/action_plugins/pve_task_time.py): Ansible's own cost for
this play plus PVE's task time, the wall time no collection can beat on this machine. On the realistic
profile, a second floor: each task is the one write it needs and a wait for its PVE task
(bench/action_plugins/pve_api_task.py), so the profile's latency, worker limits and storage lock are in it.
"""

import collections
import os
import re

import seed as bench_seed
from harness import FQCN, connection, log, play, run_playbook, write_playbook
from pvesim.cli import DEFAULT_TIME_SCALE
from pvesim.tasks import TASK_SECS
from pvesim.testing import PvesimProcess

# The vmids community.proxmox's explicit-vmid variant gives its hosts (fleet-01 gets the first).
EXPLICIT_FIRST_VMID = 2001
# Seconds each task may wait for its PVE task. community.proxmox's proxmox_kvm waits 30 by default,
# tight for 12 clones queued on a loaded 2-core machine; and its waiter polls a failed task until the
# timeout runs out (it only ever looks for a task that ended OK), so a longer one would hold
# `make bench` for minutes whenever clones fail.
TASK_TIMEOUT = 60
# The variants, in the order they run: (key, collection, how it is run, explicit vmids, serial 1).
# The floor has no collection.
VARIANTS = (
    ('floor', None, 'Ansible and PVE task time alone, forks N', True, False),
    ('floor-pve', None, 'one write per task and its PVE task, forks N', True, False),
    ('ferro', 'ferro', 'automatic vmids, forks N', False, False),
    ('community-serial', 'community', 'automatic vmids, serial 1', False, True),
    ('community-explicit', 'community', 'explicit vmids, forks N', True, False),
)
SIZE = re.compile(r'(?:^|,)size=([^,]+)')


def grown_size(size):
    """The template's disk size plus 2 GiB, written as PVE writes a size (the largest unit that divides
    it: `8G` -> `10G`): what every VM's disk must show at the end."""
    units = 'KMGT'
    number, unit = re.fullmatch(r'(\d+)([KMGT]?)', size).groups()
    total = int(number) * 1024 ** (units.index(unit) + 1 if unit else 0) + 2 * 1024 ** 3
    for power in range(len(units), 0, -1):
        if total % 1024 ** power == 0:
            return '%d%s' % (total // 1024 ** power, units[power - 1])
    return str(total)


def task_seconds(task_type):
    """How long a PVE task of `task_type` runs on pvesim at its default time scale."""
    return TASK_SECS[task_type] * DEFAULT_TIME_SCALE


def floor_tasks():
    """The fleet's three tasks as waits of their PVE tasks' time (clone, resize, start), no API call."""
    wait = 'pve_task_time'
    return [
        {'name': 'clone the template', wait: {'seconds': task_seconds('qmclone'), 'vmid': '{{ fleet_vmid }}'},
         'register': 'fleet_vm'},
        {'name': 'grow its disk', wait: {'seconds': task_seconds('resize')}},
        {'name': 'start it', wait: {'seconds': task_seconds('qmstart')}},
    ]


def floor_pve_tasks(template, grown, conn):
    """The fleet's three tasks as the one write each needs and a wait for its PVE task (bench/action_plugins/
    pve_api_task.py): on the realistic profile, the floor with PVE's latency, workers and storage lock in it."""
    node, vm = template['node'], '/nodes/%s/qemu/{{ fleet_vmid }}' % template['node']
    task = 'pve_api_task'
    return [
        {'name': 'clone the template', task: {
            'connection': conn, 'method': 'POST', 'path': '/nodes/%s/qemu/%d/clone' % (node, template['vmid']),
            'data': {'newid': '{{ fleet_vmid }}', 'name': '{{ inventory_hostname }}'}, 'vmid': '{{ fleet_vmid }}'},
         'register': 'fleet_vm'},
        {'name': 'grow its disk', task: {'connection': conn, 'method': 'PUT', 'path': vm + '/resize',
                                         'data': {'disk': template['disk'], 'size': grown}}},
        {'name': 'start it', task: {'connection': conn, 'method': 'POST', 'path': vm + '/status/start'}},
    ]


def fleet_tasks(coll, template, grown, explicit, conn=None):
    if coll is None:
        return floor_tasks() if conn is None else floor_pve_tasks(template, grown, conn)
    fq = FQCN[coll]
    clone = {'node': template['node'], 'clone': template['name'], 'name': '{{ inventory_hostname }}',
             'timeout': TASK_TIMEOUT}
    if explicit:
        clone['newid'] = '{{ fleet_vmid }}'
    return [
        {'name': 'clone the template', fq + '.proxmox_kvm': clone, 'register': 'fleet_vm'},
        {'name': 'grow its disk', fq + '.proxmox_disk': {
            'vmid': '{{ fleet_vm.vmid }}', 'disk': template['disk'], 'state': 'resized', 'size': grown,
            'timeout': TASK_TIMEOUT}},
        {'name': 'start it', fq + '.proxmox_kvm': {'vmid': '{{ fleet_vm.vmid }}', 'state': 'started',
                                                   'timeout': TASK_TIMEOUT}},
    ]


def end_state(sim, hosts, disk, grown):
    """Hosts whose VM (by name) is not there exactly once, running, with its disk grown: read from
    pvesim after the run."""
    vms = sim.api('GET', '/cluster/resources', {'type': 'vm'})
    not_built = []
    for host in hosts:
        mine = [v for v in vms if v.get('name') == host]
        if len(mine) != 1 or mine[0].get('status') != 'running':
            not_built.append(host)
            continue
        config = sim.api('GET', '/nodes/%s/qemu/%d/config' % (mine[0]['node'], int(mine[0]['vmid'])))
        size = SIZE.search(config.get(disk, ''))
        if not size or size.group(1) != grown:
            not_built.append(host)
    return not_built


def shared_vmids(vmids):
    """Hosts that were told the same vmid as another host (each host's first task result's `vmid`)."""
    counts = collections.Counter(vmids.values())
    return sorted(h for h, vmid in vmids.items() if counts[vmid] > 1)


def profile_args(profile):
    """pvesim's command-line arguments for `profile` (none: pvesim's default, no latency nor worker limit)."""
    return ['--profile', profile] if profile and profile != 'none' else []


def run_fleet(n, venv, collections_path, community_version, workdir, profile='none'):
    template = bench_seed.template()
    grown = grown_size(template['size'])
    hosts = ['fleet-%02d' % (i + 1) for i in range(n)]
    inventory = os.path.join(workdir, 'fleet_hosts.ini')
    with open(inventory, 'w', encoding='utf-8') as f:
        f.write('[fleet]\n' + ''.join('%s ansible_connection=local fleet_vmid=%d\n' % (h, EXPLICIT_FIRST_VMID + i)
                                      for i, h in enumerate(hosts)))
    log('fleet: %d VMs cloned from %s (vmid %d), %s grown to %s, started; a fresh pvesim per variant' % (
        n, template['name'], template['vmid'], template['disk'], grown))
    out = {'vms': n, 'template': template, 'grown': grown, 'variants': {}}
    for key, coll, how, explicit, serial in VARIANTS:
        if key == 'floor-pve' and (not profile or profile == 'none'):
            continue  # without the profile, PVE's task time is the floor's: nothing to add
        with PvesimProcess(seed=bench_seed.DEFAULT_SEED, extra_args=profile_args(profile)) as sim:
            conn = connection(coll or 'ferro', sim, community_version)
            floor_conn = conn if key == 'floor-pve' else None
            plays = play(coll, conn if coll else None, fleet_tasks(coll, template, grown, explicit, floor_conn),
                         hosts='fleet', **({'serial': 1} if serial else {}))
            r = run_playbook(venv, collections_path, workdir, write_playbook(workdir, 'fleet_' + key, plays),
                             inventory, forks=n)
            not_built = end_state(sim, hosts, template['disk'], grown) if coll or floor_conn else []
        failed = sorted(h for h in hosts if h not in r['hosts'] or r['hosts'][h]['failed'] or r['hosts'][h]['unreachable'])
        # Each host's first `vmid`: the clone task's (a failed clone returns none).
        vmids = {h: v[0] for h, v in r['vmids'].items() if v}
        shared = shared_vmids(vmids)
        v = out['variants'][key] = {
            'key': key, 'collection': coll, 'how': how.replace('N', str(n)), 'wall': r['wall'], 'elapsed': r['elapsed'],
            'cpu': r['cpu'], 'rc': r['rc'], 'failed_hosts': failed, 'shared_vmids': shared, 'not_built': not_built,
            'vmids': vmids}
        log('  %s' % fleet_line(v, n))
    return out


def fleet_line(v, n):
    if v['collection'] is None:
        return '%-17s %-26s %6.1f s (play %5.1f s)%s' % (
            'floor with PVE' if v.get('key') == 'floor-pve' else 'floor', v['how'], v['wall'], v['elapsed'],
            '  failed hosts %d/%d  VM missing or not running %d/%d' % (len(v['failed_hosts']), n, len(v['not_built']), n)
            if v['failed_hosts'] or v['not_built'] else '')
    return ('%-17s %-26s %6.1f s (play %5.1f s)  failed hosts %d/%d  duplicate vmids %d  VM missing or not '
            'running %d/%d' % (FQCN[v['collection']], v['how'], v['wall'], v['elapsed'], len(v['failed_hosts']), n,
                               len(v['shared_vmids']), len(v['not_built']), n))


def built(v):
    return not (v['failed_hosts'] or v['shared_vmids'] or v['not_built'] or v['rc'])


def fleet_report(fleet):
    """The fleet's lines and its ratio: ferro.proxmox's wall time over community.proxmox's better way
    (the fastest community.proxmox variant that built the whole fleet: no failed host, every VM there,
    running and grown). Returns (lines, ratio or None, ferro's variant)."""
    n = fleet['vms']
    t = fleet['template']
    lines = ['fleet: %d VMs cloned from %s, %s grown to %s, started (wall time of ansible-playbook; a fresh pvesim '
             'at its default time scale per variant)' % (n, t['name'], t['disk'], fleet['grown'])]
    variants = fleet['variants']
    lines += ['  ' + fleet_line(v, n) for v in variants.values()]
    ferro = variants.get('ferro')
    community = [v for v in variants.values() if v['collection'] == 'community']
    better = min((v for v in community if built(v)), key=lambda v: v['wall'], default=None)
    ratio = None
    floor = variants.get('floor')
    if ferro and better:
        ratio = ferro['wall'] / better['wall']
        lines.append('  ferro / community.proxmox\'s better way (%s, %.1f s): %.2f' % (better['how'], better['wall'], ratio))
        if floor and not floor['rc'] and better['wall'] > floor['wall']:
            lines.append('  the floor alone is %.2f of community.proxmox\'s better way; above the floor: ferro.proxmox '
                         '%.1f s, community.proxmox %.1f s: %.2f' % (
                             floor['wall'] / better['wall'], ferro['wall'] - floor['wall'],
                             better['wall'] - floor['wall'],
                             (ferro['wall'] - floor['wall']) / (better['wall'] - floor['wall'])))
        pve = variants.get('floor-pve')
        if pve and built(pve) and better['wall'] > pve['wall']:
            lines.append('  the floor with PVE (one write per task, its task waited for) is %.2f of it; above that floor: '
                         'ferro.proxmox %.1f s, community.proxmox %.1f s: %.2f' % (
                             pve['wall'] / better['wall'], ferro['wall'] - pve['wall'], better['wall'] - pve['wall'],
                             (ferro['wall'] - pve['wall']) / (better['wall'] - pve['wall'])))
    elif ferro and community:
        fastest = min(community, key=lambda v: v['wall'])
        lines.append('  neither community.proxmox way built the fleet; against its fastest (%s, %.1f s, unfinished) '
                     'ferro takes %.2f' % (fastest['how'], fastest['wall'], ferro['wall'] / fastest['wall']))
    for v in variants.values():
        if v['collection'] is None:
            continue
        others = [h for h in v['not_built'] if h not in v['failed_hosts']]
        if v['failed_hosts'] or others:
            lines.append('  %s %s: failed %s%s' % (
                FQCN[v['collection']], v['how'], ', '.join(v['failed_hosts']) or '-',
                '; not failed, but VM missing or not running: ' + ', '.join(others) if others else ''))
    return lines, ratio, ferro
