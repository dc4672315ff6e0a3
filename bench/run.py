"""ferro.proxmox against community.proxmox on pvesim, side by side (issues 8 and 18). Run by `make bench`.

    run.py --ferro-tarball dist/ferro-proxmox-X.tar.gz --ansible-venv build/bench/venv [--vms 50]
           [--rounds 3] [--build-rounds 1] [--fleet 12] [--workdir build/bench/run] [--json OUT]
           [--skip converge,build,plan,forks,waiter,fleet]
    run.py --report OUT.json     print a saved run's report again

Both collections run under the same ansible-core: the one of the benchmark virtualenv (the `ansible`
package from PyPI, which bundles community.proxmox). ferro.proxmox is installed from its tarball
into a temporary collections path. One pvesim serves every per-task run (tasks end at once, no
injected latency), reset to the benchmark seed (bench/seed.py: the default world plus N VMs) before
each playbook; its request log gives the API requests of each run.

Workloads, each a playbook of N tasks, the two collections alternating within each round (in the
no-op rounds community.proxmox runs a different 1/rounds slice of the N tasks each round, to keep
`make bench` under 10 minutes: its tasks cost ~0.75 s each):
  empty       a play with no task: the start-up time subtracted from every other run
  floor       N `ansible.builtin.debug` tasks (an action plugin in a worker, no module): what
              Ansible itself costs per task; also N `meta: noop` (no worker at all), for reference
  converge    N no-op tasks of one module: proxmox_kvm (present, update, same values),
              proxmox_nic (present, same), proxmox_disk (present, same), proxmox_vm_info (one VM,
              config current)
  build       create N VMs with a disk and a NIC (explicit vmids), then remove them
  plan        ferro.proxmox only: the build's creates as a plain real run, and as the real run that
              applies a saved plan (`--check -e ferro_proxmox_plan=DIR`, then the same playbook with
              the plan: docs/saved-plans.md); the target is at most 10 % more per task (issue 25)
Per task = (playbook wall time - empty playbook wall time) / N; medians over the rounds.
Then, ferro.proxmox only: creation of N VMs with automatic vmids at forks 10 against forks 1 (with
qmcreate tasks of FORKS_TASK_SECONDS, as on a real node, and with tasks that end at once), the task
waiter's lag after a task's end, and the module binaries' sizes.
Last, the fleet (bench/fleet.py): --fleet VMs cloned from the template, grown and started, by
ferro.proxmox and community.proxmox's two ways, each on a fresh pvesim at its default time scale.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fleet  # noqa: E402
from fleet import run_fleet  # noqa: E402
from harness import (BUILD_FIRST_VMID, COLLECTIONS, CONVERGE, Bench, community_slices, install_ferro,  # noqa: E402
                     log, request_stats, versions)
from pvesim.testing import PvesimProcess  # noqa: E402
from report import report  # noqa: E402

# The qmcreate task time of the forks workload (a real node takes about this long or more to
# create a VM; see bench/README.md).
FORKS_TASK_SECONDS = 0.5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--ferro-tarball', required=True)
    parser.add_argument('--ansible-venv', required=True)
    parser.add_argument('--vms', type=int, default=50)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--build-rounds', type=int, default=1)
    parser.add_argument('--workdir', default=os.path.join(os.path.dirname(HERE), 'build', 'bench', 'run'))
    parser.add_argument('--json', help='write every measurement here')
    parser.add_argument('--fleet', type=int, default=12, help='VMs in the fleet (bench/fleet.py)')
    parser.add_argument('--profile', choices=('none', 'realistic'), default='none',
                        help="pvesim's profile for every run (realistic: latency, 3 workers per daemon, storage locks; "
                             'docs/pve-semantics.md §56)')
    parser.add_argument('--skip', default='', help='comma-separated: converge,build,plan,forks,waiter,fleet')
    args = parser.parse_args()
    if not 1 <= args.rounds <= args.vms:
        # community.proxmox runs one slice of the VMs per round: each round needs at least one.
        parser.error('--rounds must be between 1 and --vms (%d)' % args.vms)
    skip = {s for s in args.skip.split(',') if s}
    venv = os.path.abspath(args.ansible_venv)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    workdir = os.path.abspath(args.workdir)
    n = args.vms

    v = versions(venv)
    collections_path = tempfile.mkdtemp(prefix='ferro-bench-collections-')
    try:
        ferro_version, ferro_modules, binaries = install_ferro(venv, os.path.abspath(args.ferro_tarball),
                                                               collections_path)
    except subprocess.CalledProcessError as e:
        sys.exit('installing %s failed: %s' % (args.ferro_tarball, e.stderr))
    v['ferro_proxmox'] = ferro_version
    started = datetime.datetime.now(datetime.timezone.utc)
    log('bench: %s, %d cores; ansible-core %s (ansible %s, Python %s); community.proxmox %s (proxmoxer %s); '
        'ferro.proxmox %s' % (started.strftime('%Y-%m-%d %H:%M UTC'), os.cpu_count(), v['ansible_core'],
                              v['ansible'], v['python'], v['community_proxmox'], v['proxmoxer'], ferro_version))
    notes = []
    converge_modules = [m for m in CONVERGE if m in ferro_modules]
    for m in CONVERGE:
        if m not in ferro_modules:
            notes.append('skipped %s: ferro.proxmox has no %s in this tree' % (m, m))
    kvm = 'proxmox_kvm' in ferro_modules
    if not kvm:
        notes.append('skipped build, plan, forks, waiter and fleet: they need ferro.proxmox.proxmox_kvm')
        skip |= {'build', 'plan', 'forks', 'waiter', 'fleet'}
    if 'proxmox_disk' not in ferro_modules and 'fleet' not in skip:
        notes.append('skipped fleet: it needs ferro.proxmox.proxmox_disk')
        skip.add('fleet')

    results = {'versions': v, 'date': started.isoformat(timespec='minutes'), 'cores': os.cpu_count(),
               'machine': platform.machine(), 'vms': n, 'rounds': args.rounds, 'build_rounds': args.build_rounds,
               'runs': [], 'notes': notes,
               'profile': args.profile}

    def record(kind, workload, coll, rnd, r, tasks):
        entry = {'kind': kind, 'workload': workload, 'collection': coll, 'round': rnd, 'wall': r['wall'],
                 'elapsed': r['elapsed'], 'cpu': r['cpu'],
                 'tasks': tasks, 'rc': r['rc'], 'recap': r['recap']}
        entry.update(request_stats(r['requests'], max(tasks, 1)))
        results['runs'].append(entry)
        return entry

    with PvesimProcess(seed=None, time_scale=0, extra_args=fleet.profile_args(args.profile)) as sim:
        b = Bench(args, sim, venv, collections_path, v['community_proxmox'], workdir)
        sim.reset(b.seed)
        empty = b.write('empty', b.play(None, []))
        floor = b.write('floor', b.play(None, [{'name': 'noop %d' % i, 'ansible.builtin.debug': {'msg': 'noop'}}
                                              for i in range(n)]))
        floor_meta = b.write('floor_meta', b.play(None, [{'name': 'meta %d' % i, 'ansible.builtin.meta': 'noop'}
                                                        for i in range(n)]))
        books = {}
        # community.proxmox's tasks cost ~0.75 s each: in each round it runs one slice of the N
        # tasks (a different slice each round, all N over the run) where ferro.proxmox runs all
        # N, which keeps `make bench` under 10 minutes. Per-task figures compare the same tasks.
        slices = community_slices(n, args.rounds)
        for m in converge_modules:
            books[('converge', m, 'ferro')] = b.write('converge_%s_ferro' % m, b.play('ferro', b.converge_tasks('ferro', m)))
            for rnd, (lo, hi) in enumerate(slices):
                books[('converge', m, 'community', rnd)] = b.write(
                    'converge_%s_community_%d' % (m, rnd), b.play('community', b.converge_tasks('community', m)[lo:hi]))
        for coll in COLLECTIONS:
            if kvm:
                books[('build', 'create', coll)] = b.write('create_%s' % coll, b.play(coll, b.build_tasks(coll, 'present')))
                books[('build', 'remove', coll)] = b.write('remove_%s' % coll, b.play(coll, b.build_tasks(coll, 'absent')))
        # Warm-up: the first run of each collection pays for cold caches (pyc files, page cache);
        # a few tasks of each module are enough for that.
        log('warm-up')
        b.run(empty)
        for coll in COLLECTIONS:
            b.run(b.write('warmup_%s' % coll, b.play(coll, [t for m in converge_modules
                                                            for t in b.converge_tasks(coll, m)[:2]])))

        if 'converge' not in skip:
            for rnd in range(args.rounds):
                order = COLLECTIONS if rnd % 2 == 0 else tuple(reversed(COLLECTIONS))
                log('round %d/%d (%s first; community.proxmox on tasks %d-%d)' % (
                    rnd + 1, args.rounds, order[0], slices[rnd][0] + 1, slices[rnd][1]))
                record('base', 'empty', '-', rnd, b.run(empty), 0)
                record('base', 'floor_meta', '-', rnd, b.run(floor_meta), n)
                record('base', 'floor', '-', rnd, b.run(floor), n)
                for m in converge_modules:
                    per, failures, reqs = b.direct(m)
                    d = record('direct', m, 'ferro', rnd, {'wall': per * n, 'elapsed': per * n, 'cpu': 0, 'rc': 0,
                                                          'recap': {'failed': failures, 'changed': 0},
                                                          'requests': reqs}, n)
                    d['ms'] = per * 1000
                    d['start_ms'] = b.start_cost(m) * 1000
                    for coll in order:
                        book = books[('converge', m, 'ferro')] if coll == 'ferro' else books[('converge', m, coll, rnd)]
                        tasks = n if coll == 'ferro' else slices[rnd][1] - slices[rnd][0]
                        e = record('converge', m, coll, rnd, b.run(book), tasks)
                        log('  %-16s %-9s %6.1f s  %2d tasks  changed=%d failed=%d  %.1f req/task' % (
                            m, coll, e['elapsed'], tasks, e['recap']['changed'], e['recap']['failed'], e['per_task']))

        if 'build' not in skip:
            for rnd in range(args.build_rounds):
                order = COLLECTIONS if rnd % 2 == 0 else tuple(reversed(COLLECTIONS))
                log('build round %d/%d (%s first)' % (rnd + 1, args.build_rounds, order[0]))
                record('base', 'empty', '-', 'b%d' % rnd, b.run(empty), 0)
                for coll in order:
                    c = record('build', 'create', coll, rnd, b.run(books[('build', 'create', coll)]), n)
                    vms = [x for x in sim.api('GET', '/cluster/resources', {'type': 'vm'})
                           if BUILD_FIRST_VMID <= int(x['vmid']) < BUILD_FIRST_VMID + n]
                    c['vms_after'] = len(vms)
                    sim.clear_requests()
                    r = record('build', 'remove', coll, rnd, b.run(books[('build', 'remove', coll)], reset=False), n)
                    vms = [x for x in sim.api('GET', '/cluster/resources', {'type': 'vm'})
                           if BUILD_FIRST_VMID <= int(x['vmid']) < BUILD_FIRST_VMID + n]
                    r['vms_after'] = len(vms)
                    log('  %-9s create %6.1f s (%d VMs, failed=%d)  remove %6.1f s (%d left, failed=%d)' % (
                        coll, c['elapsed'], c['vms_after'], c['recap']['failed'], r['elapsed'], r['vms_after'],
                        r['recap']['failed']))

        if 'plan' not in skip:
            # The same creates, as a plain real run and as the real run that applies the plan its
            # check run saved (a fresh plan directory each round; the check run is not timed: it is
            # the dry run a person reviews, not part of the run the plan makes).
            for rnd in range(args.build_rounds):
                log('plan round %d/%d' % (rnd + 1, args.build_rounds))
                record('base', 'empty', '-', 'p%d' % rnd, b.run(empty), 0)
                create = books[('build', 'create', 'ferro')]
                plain = record('plan', 'plain', 'ferro', rnd, b.run(create), n)
                plan_dir = os.path.join(workdir, 'plan-%d' % rnd)
                shutil.rmtree(plan_dir, ignore_errors=True)
                with_plan = ['-e', 'ferro_proxmox_plan=%s' % plan_dir]
                saved = b.run(create, extra=['--check'] + with_plan)
                applied = record('plan', 'apply', 'ferro', rnd, b.run(create, extra=with_plan), n)
                log('  plain %6.1f s (failed=%d)  check saving the plan %6.1f s (failed=%d)  applying it %6.1f s '
                    '(failed=%d, changed=%d)' % (plain['elapsed'], plain['recap']['failed'], saved['elapsed'],
                                                saved['recap']['failed'], applied['elapsed'],
                                                applied['recap']['failed'], applied['recap']['changed']))

        if 'forks' not in skip:
            # Twice: with each qmcreate task taking FORKS_TASK_SECONDS, as on a real node, where a
            # create waits on its task (the target's measure: does parallel creation stay
            # parallel, and race-free?); and with tasks that end at once, where the run is only
            # CPU on the controller and pvesim, so the ratio cannot go below 1 / cores.
            log('forks: ferro.proxmox creates %d VMs with automatic vmids, forks 1 then 10' % n)
            inv = os.path.join(workdir, 'forks_hosts.ini')
            with open(inv, 'w', encoding='utf-8') as f:
                f.write('[vms]\n' + ''.join('auto-%03d ansible_connection=local\n' % (i + 1) for i in range(n)))
            book = b.write('forks', b.play('ferro', [{'name': 'create with an automatic vmid',
                                                      'ferro.proxmox.proxmox_kvm': {
                                                          'name': '{{ inventory_hostname }}', 'node': 'pve1',
                                                          'cores': 1, 'memory': 512}}], hosts='vms'))
            results['forks'] = {}
            for task_seconds in (FORKS_TASK_SECONDS, 0):
                for forks in (1, 10):
                    sim.reset(b.seed)
                    if task_seconds:
                        sim.fault(kind='task-slow', type='qmcreate', seconds=task_seconds, count=n)
                    r = b.run(book, inventory=inv, forks=forks, reset=False)
                    vms = [x for x in sim.api('GET', '/cluster/resources', {'type': 'vm'})
                           if str(x.get('name', '')).startswith('auto-')]
                    ids = [int(x['vmid']) for x in vms]
                    names = [x['name'] for x in vms]
                    key = '%d' % forks if task_seconds else '%d-instant' % forks
                    results['forks'][key] = {
                        'task_seconds': task_seconds, 'wall': r['elapsed'], 'process_wall': r['wall'],
                        'cpu': r['cpu'], 'failed': r['recap']['failed'], 'vms': len(vms),
                        'duplicate_ids': len(ids) - len(set(ids)), 'duplicate_names': len(names) - len(set(names)),
                        'requests': len(r['requests'])}
                    log('  forks %-2d %.1f s tasks %6.1f s  VMs=%d failed=%d duplicate ids=%d  (%.1f CPU-s on the '
                        'controller)' % (forks, task_seconds, r['elapsed'], len(vms), r['recap']['failed'],
                                         len(ids) - len(set(ids)), r['cpu']))

        if 'waiter' not in skip:
            # K creates whose qmcreate task runs S real seconds, against the same K creates with
            # tasks that end at once: the difference per task, less S, is how late the waiter
            # notices a task's end.
            k, secs = min(5, n), 0.5
            log('waiter: %d creates with %.1f s tasks against %d with instant tasks' % (k, secs, k))
            book = b.write('waiter', b.play('ferro', b.build_tasks('ferro', 'present')[:k]))
            lags = []
            for _ in range(3):
                fast = b.run(book)['elapsed']
                sim.reset(b.seed)
                for _ in range(k):
                    sim.fault(kind='task-slow', type='qmcreate', seconds=secs)
                slow = b.run(book, reset=False)['elapsed']
                lags.append(((slow - fast) / k - secs) * 1000)
            results['waiter'] = {'tasks': k, 'task_seconds': secs, 'lag_ms': lags}
            log('  lag after a task ends: %s ms' % ', '.join('%.0f' % x for x in lags))

    if 'fleet' not in skip and args.fleet > 0:
        results['fleet'] = run_fleet(args.fleet, venv, collections_path, v['community_proxmox'], workdir,
                                     args.profile)
    shutil.rmtree(collections_path, ignore_errors=True)
    results['binaries'] = binaries
    results['finished'] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='minutes')
    if args.json:
        with open(args.json, 'w', encoding='utf-8') as f:
            json.dump(results, f, indent=1)
    report(results)


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == '--report':
        with open(sys.argv[2], encoding='utf-8') as f:
            report(json.load(f))
    else:
        main()
