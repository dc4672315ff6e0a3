"""API requests per task, ferro.proxmox beside community.proxmox, against a committed baseline (issue 36).

    requests.py --ferro-tarball dist/ferro-proxmox-X.tar.gz --ansible-venv build/bench/venv-upstream
                [--tasks 3] [--baseline bench/requests-baseline.json] [--json OUT] [--write-baseline]
                [--only WORKLOAD ...] [--trace]

On a real cluster every request is a round trip through pveproxy (TLS, the token check, a pmxcfs read, often a
proxy hop), so requests per task is time per task. Each workload is a playbook of --tasks tasks, run by each
collection under the same ansible-core on a pvesim reset to the benchmark seed (bench/seed.py) at pvesim's default
time scale (0.05: a clone's task runs 0.4 s, so task polls count as on a node); requests per task is pvesim's
request log over the tasks. --trace prints each collection's requests in the order pvesim received them (method,
path, query, the body's parameter names, status): bench/README.md's reason for each request is read from it;
--only runs the workloads named. Exits 1 when ferro.proxmox's figure of any workload rises above the baseline's (the
committed bench/requests-baseline.json); --write-baseline writes the figures measured as the new baseline.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import seed as bench_seed  # noqa: E402
from harness import FQCN, connection, install_ferro, play, request_stats, run_playbook, versions, write_playbook  # noqa: E402
from pvesim.testing import PvesimProcess  # noqa: E402

FIRST_VMID = 1001
# proxmox_disk and proxmox_nic have no `node` option in community.proxmox: ferro.proxmox's addition, sent to it alone
FERRO_NODE = '_ferro_node'
TEMPLATE = 'debian-13-template'


def workloads(n):
    """(name, module, [args per task]) for each workload; the no-op ones name the node (issue 36's one-request
    target applies where the task names it; `FERRO_NODE`: where only ferro.proxmox has the option)."""
    node = bench_seed.NODES
    vm = [(FIRST_VMID + i, node[i % len(node)]) for i in range(n)]
    return [
        ('no-op proxmox_kvm', 'proxmox_kvm', [dict(vmid=v, name='bench-%03d' % (i + 1), node=nd, cores=1, memory=1024,
                                                   update=True) for i, (v, nd) in enumerate(vm)]),
        ('no-op proxmox_nic', 'proxmox_nic', [dict(vmid=v, interface='net0', model='virtio', bridge='vmbr0',
                                                   **{FERRO_NODE: nd}) for v, nd in vm]),
        ('no-op proxmox_disk', 'proxmox_disk', [dict(vmid=v, disk='scsi0', storage='local-lvm', size=8, **{FERRO_NODE: nd})
                                                for v, nd in vm]),
        ('no-op proxmox_vm_info', 'proxmox_vm_info', [dict(vmid=v, node=nd, config='current') for v, nd in vm]),
        ('create', 'proxmox_kvm', [dict(vmid=3001 + i, name='build-%03d' % (i + 1), node='pve1', cores=1, memory=1024,
                                        scsihw='virtio-scsi-single', scsi={'scsi0': 'local-lvm:8'},
                                        net={'net0': 'virtio,bridge=vmbr0'}, timeout=60) for i in range(n)]),
        ('clone', 'proxmox_kvm', [dict(node='pve1', clone=TEMPLATE, newid=2001 + i, name='fleet-%02d' % (i + 1),
                                       timeout=60) for i in range(n)]),
        ('remove', 'proxmox_kvm', [dict(vmid=v, state='absent', timeout=60) for v, _ in vm]),
    ]


def args_for(coll, task):
    """A task's arguments for `coll`: ferro.proxmox's own `node` option given to it alone."""
    args = {k: v for k, v in task.items() if k != FERRO_NODE}
    if coll == 'ferro' and FERRO_NODE in task:
        args['node'] = task[FERRO_NODE]
    return args


def print_trace(title, log):
    """Each request of `log` on one line, in the order pvesim received it."""
    print('== %s: %d requests' % (title, len(log)))
    for i, q in enumerate(log, 1):
        query = '&'.join('%s=%s' % kv for kv in sorted(q.get('query', {}).items()))
        body = ','.join(sorted(q.get('body') or {}))
        print('%3d %-6s %s%s%s %s' % (i, q['method'], q['path'].replace('/api2/json', ''), '?' + query if query else '',
                                      ' (%s)' % body if body else '', q.get('status')))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--ferro-tarball', required=True)
    parser.add_argument('--ansible-venv', required=True)
    parser.add_argument('--tasks', type=int, default=3)
    parser.add_argument('--baseline', default=os.path.join(HERE, 'requests-baseline.json'))
    parser.add_argument('--json')
    parser.add_argument('--write-baseline', action='store_true')
    parser.add_argument('--only', nargs='+', metavar='WORKLOAD', help='run these workloads alone (never with '
                        '--write-baseline)')
    parser.add_argument('--trace', action='store_true', help="print every request of each run in order")
    parser.add_argument('--workdir', default=os.path.join(os.path.dirname(HERE), 'build', 'bench', 'requests'))
    args = parser.parse_args()
    if args.only and args.write_baseline:
        parser.error('--write-baseline writes every workload: run it without --only')
    venv = os.path.abspath(args.ansible_venv)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    workdir = os.path.abspath(args.workdir)
    v = versions(venv)
    collections_path = tempfile.mkdtemp(prefix='ferro-requests-collections-')
    install_ferro(venv, os.path.abspath(args.ferro_tarball), collections_path)
    seed_path = os.path.join(workdir, 'seed.json')
    with open(seed_path, 'w', encoding='utf-8') as f:
        json.dump(bench_seed.make_seed(args.tasks, FIRST_VMID), f)
    figures = {}
    with PvesimProcess(seed=None) as sim:
        for name, module, tasks in workloads(args.tasks):
            if args.only and name not in args.only:
                continue
            row = figures.setdefault(name, {})
            for coll in ('ferro', 'community'):
                sim.reset(seed_path)
                body = [{'name': '%s %d' % (module, i), '%s.%s' % (FQCN[coll], module): args_for(coll, t)}
                        for i, t in enumerate(tasks)]
                path = write_playbook(workdir, '%s-%s' % (coll, name.replace(' ', '-')),
                                      play(coll, connection(coll, sim, v['community_proxmox']), body))
                sim.clear_requests()
                r = run_playbook(venv, collections_path, workdir, path)
                log = sim.requests()
                if args.trace:
                    print_trace('%s, %s' % (name, coll), log)
                stats = request_stats(log, len(tasks))
                polls = sum(1 for q in log if q['method'] == 'GET' and q['path'].endswith('/status')
                            and '/tasks/' in q['path'])
                row[coll] = {'per_task': round(stats['per_task'], 2), 'polls': round(polls / len(tasks), 2),
                             'by_path': stats['by_path'], 'failed': r['recap']['failed'] + (r['rc'] != 0)}
    shutil.rmtree(collections_path, ignore_errors=True)
    baseline, base_polls = {}, {}
    if os.path.exists(args.baseline):
        with open(args.baseline, encoding='utf-8') as f:
            saved = json.load(f)
        baseline, base_polls = saved['ferro_requests_per_task'], saved.get('ferro_task_polls_per_task', {})
    print('requests per task (pvesim request log / tasks, %d tasks each; ansible-core %s, community.proxmox %s)'
          % (args.tasks, v['ansible_core'], v['community_proxmox']))
    print('| workload | ferro.proxmox (task polls) | community.proxmox (task polls) | ferro baseline (task polls) |')
    print('| --- | --- | --- | --- |')
    risen = []
    for name, row in figures.items():
        base, polls = baseline.get(name), base_polls.get(name, 0)
        f, c = row['ferro'], row['community']
        print('| %s | %.2f (%.2f)%s | %.2f (%.2f)%s | %s |' % (
            name, f['per_task'], f['polls'], ' (failed)' if f['failed'] else '', c['per_task'], c['polls'],
            ' (failed)' if c['failed'] else '', '-' if base is None else '%.2f (%.2f)' % (base, polls)))
        # The task polls depend on how long the tasks ran on this machine: one more per task is noise;
        # every other request is counted exactly.
        if base is not None and (f['per_task'] - f['polls'] > base - polls + 1e-9 or f['polls'] > polls + 1):
            risen.append('%s: %.2f (%.2f polls) > %.2f (%.2f polls)' % (name, f['per_task'], f['polls'], base, polls))
        if f['failed']:
            risen.append('%s: ferro.proxmox failed (output in %s)' % (name, workdir))
    for name, row in figures.items():
        print('  %s, ferro: %s' % (name, ', '.join('%s x%d' % kv for kv in row['ferro']['by_path'].items())))
    if args.json:
        with open(args.json, 'w', encoding='utf-8') as f:
            json.dump({'versions': v, 'tasks': args.tasks, 'figures': figures}, f, indent=1)
    if args.write_baseline:
        with open(args.baseline, 'w', encoding='utf-8') as f:
            json.dump({'ferro_requests_per_task': {n: r['ferro']['per_task'] for n, r in figures.items()},
                       'ferro_task_polls_per_task': {n: r['ferro']['polls'] for n, r in figures.items()},
                       'community_requests_per_task': {n: r['community']['per_task'] for n, r in figures.items()}},
                      f, indent=1, sort_keys=True)
            f.write('\n')
        print('baseline written: %s' % args.baseline)
        return 0
    if risen:
        print('FAILED: ferro.proxmox sends more requests per task than the baseline: ' + '; '.join(risen))
        return 1
    print('ferro.proxmox at or below the baseline in every workload')
    return 0


if __name__ == '__main__':
    sys.exit(main())
