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
(bench/action_plugins/pve_api_task.py), so the profile's latency, worker limits and storage lock are in it;
and a third, the floor with the checks' reads: each task sends the requests ferro.proxmox's own task sends, in its
order (its GETs, its write, its waiter's polls, its read-back), taken from pvesim's log of ferro's fleet tasks for
one host (`trace_ferro`), with no module logic: ferro's time above it is ferro's own work on top of its requests.
"""

import collections
import json
import os
import re

import seed as bench_seed
from harness import FQCN, connection, log, play, run_playbook, write_playbook
from pvesim.cli import DEFAULT_TIME_SCALE
from pvesim.tasks import TASK_SECS
from pvesim.testing import PvesimProcess

from action_plugins.pve_api_task import DIGEST_SLOT, UPID_SLOT

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
    ('floor-reads', None, "ferro's requests per task, forks N", True, False),
    ('floor-reads-50ms', None, "its reads, polls every 50 ms", True, False),
    ('ferro', 'ferro', 'automatic vmids, forks N', False, False),
    ('community-serial', 'community', 'automatic vmids, serial 1', False, True),
    ('community-explicit', 'community', 'explicit vmids, forks N', True, False),
)
SIZE = re.compile(r'(?:^|,)size=([^,]+)')
# The host whose ferro.proxmox tasks are traced for the floor with the checks' reads (`trace_ferro`).
TRACE_HOST = 'fleet-01'
# A UPID in a logged path (pvesim logs it decoded), and a task status poll.
UPID = re.compile(r'UPID:[^/]+')
TASK_STATUS = re.compile(r'/tasks/UPID:[^/]+/status$')


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


def trace_ferro(venv, collections_path, community_version, workdir, template, grown, profile):
    """pvesim's log of ferro.proxmox's own fleet tasks (`fleet_tasks`) for one host, TRACE_HOST with an automatic
    vmid, on a fresh pvesim with `profile`: each task alone in its playbook so that the log splits at the tasks
    (the later two given the clone's vmid as its `register` gives it). Returns ([each task's requests], the clone's
    vmid), or (None, None) when a task failed."""
    inventory = os.path.join(workdir, 'fleet_trace_hosts.ini')
    with open(inventory, 'w', encoding='utf-8') as f:
        f.write('[fleet]\n%s ansible_connection=local\n' % TRACE_HOST)
    logs, vmid = [], None
    with PvesimProcess(seed=bench_seed.DEFAULT_SEED, extra_args=profile_args(profile)) as sim:
        conn = connection('ferro', sim, community_version)
        for i, task in enumerate(fleet_tasks('ferro', template, grown, False)):
            sim.clear_requests()
            book = write_playbook(workdir, 'fleet_trace_%d' % i, play('ferro', conn, [task], hosts='fleet'))
            r = run_playbook(venv, collections_path, workdir, book, inventory,
                             extra=['-e', json.dumps({'fleet_vm': {'vmid': vmid}})] if vmid else [])
            if r['rc'] or not (vmid or r['vmids'].get(TRACE_HOST)):
                return None, None
            vmid = vmid or int(r['vmids'][TRACE_HOST][0])
            # the module's requests alone (its User-Agent), not the harness's
            logs.append([q for q in sim.requests() if q.get('agent', '').startswith('ferro.proxmox/')])
    return logs, vmid


def traced_plan(logs, vmid):
    """Each traced task as the floor with the checks' reads sends it: the GETs before its one write, the write, the
    number of its task's status polls (the floor polls live, on ferro's waiter's schedule), the GETs after them;
    the traced VM's id and host name turned into each host's own (Jinja, filled by Ansible), the write's UPID and
    config digest into the plugin's slots (filled from the floor's own write and reads). None when a traced task did
    not make exactly one write."""
    own = re.compile(r'(?<!\d)%d(?!\d)' % vmid)

    def mine(value):
        if not isinstance(value, str):
            return value
        return '{{ inventory_hostname }}' if value == TRACE_HOST else own.sub('{{ fleet_vmid }}', value)

    def path(q):
        return mine(UPID.sub(UPID_SLOT, q['path'].replace('/api2/json', '', 1)))

    def body(q):
        return {k: DIGEST_SLOT if k == 'digest' else mine(v) for k, v in (q.get('body') or {}).items()}

    def read(q):
        return {'path': path(q), 'query': {k: mine(v) for k, v in (q.get('query') or {}).items()}}

    plan = []
    for log in logs:
        writes = [i for i, q in enumerate(log) if q['method'] != 'GET']
        if len(writes) != 1:
            return None
        w = writes[0]
        after = log[w + 1:]
        polls = 0
        while polls < len(after) and TASK_STATUS.search(after[polls]['path']):
            polls += 1
        plan.append({'reads_before': [read(q) for q in log[:w]], 'method': log[w]['method'], 'path': path(log[w]),
                     'data': body(log[w]), 'polls': polls,
                     'reads_after': [read(q) for q in after[polls:]]})
    return plan


def floor_reads_tasks(plan, conn, ferro_polls):
    """The fleet's three tasks as ferro.proxmox's traced requests (`traced_plan`) sent by pve_api_task: the floor
    with PVE and the checks' reads; its polls on ferro's waiter's schedule (`ferro_polls`), or else every 50 ms as
    the floor with PVE polls (which sees a task's end sooner: the reads' cost alone)."""
    names = ('clone the template', 'grow its disk', 'start it')
    tasks = []
    for name, step in zip(names, plan):
        args = {'connection': conn}
        if ferro_polls:
            args['poll'] = 'ferro'
        args.update({k: v for k, v in step.items() if k != 'polls'})
        tasks.append({'name': name, 'pve_api_task': args})
    tasks[0]['pve_api_task']['vmid'] = '{{ fleet_vmid }}'
    tasks[0]['register'] = 'fleet_vm'
    return tasks


def fleet_tasks(coll, template, grown, explicit):
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
        if key != 'floor' and coll is None and (not profile or profile == 'none'):
            continue  # without the profile, PVE's task time is the floor's: nothing to add
        if key.startswith('floor-reads') and 'traced' not in out:
            logs, vmid = trace_ferro(venv, collections_path, community_version, workdir, template, grown, profile)
            plan = traced_plan(logs, vmid) if logs else None
            out['traced'] = plan and [{k: len(step[k]) if k.startswith('reads') else step[k]
                                       for k in ('reads_before', 'method', 'path', 'polls', 'reads_after')}
                                      for step in plan]
            log('  ferro.proxmox\'s requests traced for one host: %s' % ('; '.join(
                '%d GET, %s %s, %d polls, %d GET' % (t['reads_before'], t['method'], t['path'], t['polls'],
                                                    t['reads_after']) for t in out['traced'])
                if plan else 'a task failed or did not make one write: no floor with the checks\' reads'))
        if key.startswith('floor-reads') and not out['traced']:
            continue
        with PvesimProcess(seed=bench_seed.DEFAULT_SEED, extra_args=profile_args(profile)) as sim:
            conn = connection(coll or 'ferro', sim, community_version)
            if coll:
                tasks = fleet_tasks(coll, template, grown, explicit)
            elif key == 'floor':
                tasks = floor_tasks()
            elif key == 'floor-pve':
                tasks = floor_pve_tasks(template, grown, conn)
            else:
                tasks = floor_reads_tasks(plan, conn, ferro_polls=key == 'floor-reads')
            plays = play(coll, conn if coll else None, tasks, hosts='fleet', **({'serial': 1} if serial else {}))
            r = run_playbook(venv, collections_path, workdir, write_playbook(workdir, 'fleet_' + key, plays),
                             inventory, forks=n)
            sent = len(sim.requests())  # before end_state's own reads
            not_built = end_state(sim, hosts, template['disk'], grown) if key != 'floor' else []
        failed = sorted(h for h in hosts if h not in r['hosts'] or r['hosts'][h]['failed'] or r['hosts'][h]['unreachable'])
        # Each host's first `vmid`: the clone task's (a failed clone returns none).
        vmids = {h: v[0] for h, v in r['vmids'].items() if v}
        shared = shared_vmids(vmids)
        v = out['variants'][key] = {
            'key': key, 'collection': coll, 'how': how.replace('N', str(n)), 'wall': r['wall'], 'elapsed': r['elapsed'],
            'cpu': r['cpu'], 'rc': r['rc'], 'failed_hosts': failed, 'shared_vmids': shared, 'not_built': not_built,
            'vmids': vmids, 'requests': sent}
        log('  %s' % fleet_line(v, n))
    return out


def fleet_line(v, n):
    # the requests pvesim logged during the run (a floor without requests, and results from before, have none)
    sent = '  requests %d' % v['requests'] if v.get('requests') else ''
    if v['collection'] is None:
        label = {'floor-pve': 'floor with PVE', 'floor-reads': 'floor with reads',
                 'floor-reads-50ms': 'floor reads 50ms'}.get(v.get('key'), 'floor')
        return '%-17s %-26s %6.1f s (play %5.1f s)%s%s' % (
            label, v['how'], v['wall'], v['elapsed'],
            '  failed hosts %d/%d  VM missing or not running %d/%d' % (len(v['failed_hosts']), n, len(v['not_built']), n)
            if v['failed_hosts'] or v['not_built'] else '', sent)
    return ('%-17s %-26s %6.1f s (play %5.1f s)  failed hosts %d/%d  duplicate vmids %d  VM missing or not '
            'running %d/%d%s' % (FQCN[v['collection']], v['how'], v['wall'], v['elapsed'], len(v['failed_hosts']), n,
                                 len(v['shared_vmids']), len(v['not_built']), n, sent))


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
    floor, pve, reads = variants.get('floor'), variants.get('floor-pve'), variants.get('floor-reads')
    if ferro and better:
        ratio = ferro['wall'] / better['wall']
        lines.append('  ferro / community.proxmox\'s better way (%s, %.1f s): %.2f' % (better['how'], better['wall'], ratio))
        if floor and not floor['rc'] and better['wall'] > floor['wall']:
            lines.append('  the floor alone is %.2f of community.proxmox\'s better way; above the floor: ferro.proxmox '
                         '%.1f s, community.proxmox %.1f s: %.2f' % (
                             floor['wall'] / better['wall'], ferro['wall'] - floor['wall'],
                             better['wall'] - floor['wall'],
                             (ferro['wall'] - floor['wall']) / (better['wall'] - floor['wall'])))
        if pve and built(pve) and better['wall'] > pve['wall']:
            lines.append('  the floor with PVE (one write per task, its task waited for) is %.2f of it; above that floor: '
                         'ferro.proxmox %.1f s, community.proxmox %.1f s: %.2f' % (
                             pve['wall'] / better['wall'], ferro['wall'] - pve['wall'], better['wall'] - pve['wall'],
                             (ferro['wall'] - pve['wall']) / (better['wall'] - pve['wall'])))
    elif ferro and community:
        fastest = min(community, key=lambda v: v['wall'])
        lines.append('  neither community.proxmox way built the fleet; against its fastest (%s, %.1f s, unfinished) '
                     'ferro takes %.2f' % (fastest['how'], fastest['wall'], ferro['wall'] / fastest['wall']))
    if ferro and reads and built(reads):
        # ferro's requests without ferro: what is left above it is ferro's own work (binary, planning, JSON)
        lines.append('  the floor with the checks\' reads (ferro.proxmox\'s own requests per task, traced, its '
                     'waiter\'s polls, no module) %.1f s%s; above the floor with the checks\' reads: ferro.proxmox '
                     '%.1f s' % (
                         reads['wall'], ', %.1f s above the floor with PVE' % (reads['wall'] - pve['wall'])
                         if pve and built(pve) else '', ferro['wall'] - reads['wall']))
    fast = variants.get('floor-reads-50ms')
    if ferro and fast and built(fast):
        # the same reads, each task's end seen within 50 ms: what the reads cost, apart from when the waiter looks
        lines.append('  the same reads with the floor with PVE\'s 50 ms polls %.1f s%s; above it: ferro.proxmox '
                     '%.1f s' % (
                         fast['wall'], ' (the reads: %.1f s above the floor with PVE)' % (fast['wall'] - pve['wall'])
                         if pve and built(pve) else '', ferro['wall'] - fast['wall']))
    for v in variants.values():
        if v['collection'] is None:
            continue
        others = [h for h in v['not_built'] if h not in v['failed_hosts']]
        if v['failed_hosts'] or others:
            lines.append('  %s %s: failed %s%s' % (
                FQCN[v['collection']], v['how'], ', '.join(v['failed_hosts']) or '-',
                '; not failed, but VM missing or not running: ' + ', '.join(others) if others else ''))
    return lines, ratio, ferro
