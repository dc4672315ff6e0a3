"""ferro.proxmox against community.proxmox on one pvesim, side by side (issue 8). Run by `make bench`.

    run.py --ferro-tarball dist/ferro-proxmox-X.tar.gz --ansible-venv build/bench/venv [--vms 50]
           [--rounds 3] [--build-rounds 1] [--workdir build/bench/run] [--json OUT]

Both collections run under the same ansible-core: the one of the benchmark virtualenv (the `ansible`
package from PyPI, which bundles community.proxmox). ferro.proxmox is installed from its tarball
into a temporary collections path. One pvesim serves every run (tasks end at once, no injected
latency), reset to the benchmark seed (bench/seed.py: the default world plus N VMs) before each
playbook; its request log gives the API requests of each run.

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
Per task = (playbook wall time - empty playbook wall time) / N; medians over the rounds.
Then, ferro.proxmox only: creation of N VMs with automatic vmids at forks 10 against forks 1 (with
qmcreate tasks of FORKS_TASK_SECONDS, as on a real node, and with tasks that end at once), the task
waiter's lag after a task's end, and the module binaries' sizes.
"""

import argparse
import datetime
import glob
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import seed as bench_seed  # noqa: E402
from pvesim.testing import TOKEN_ID, TOKEN_SECRET, PvesimProcess  # noqa: E402

USER, TOKEN = TOKEN_ID.split('!', 1)
FIRST_VMID = 1001
BUILD_FIRST_VMID = 3001
CONVERGE = ('proxmox_kvm', 'proxmox_nic', 'proxmox_disk', 'proxmox_vm_info')
COLLECTIONS = ('ferro', 'community')
FQCN = {'ferro': 'ferro.proxmox', 'community': 'community.proxmox'}
RECAP = re.compile(r'^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+)', re.M)
# Targets of issue 8.
SPEEDUP_TARGET = 10.0
ABOVE_FLOOR_TARGET_MS = 10.0
MAX_REQUESTS = {'proxmox_nic': 2, 'proxmox_disk': 2, 'proxmox_kvm': 3}
BINARY_MAX_BYTES = 3 * 1000 * 1000
WAITER_LAG_TARGET_MS = 100.0
# The qmcreate task time of the forks workload (a real node takes about this long or more to
# create a VM; see bench/README.md).
FORKS_TASK_SECONDS = 0.5


def log(msg):
    print(msg, flush=True)


# --------------------------------------------------------------------------- set-up


def versions(venv):
    out = subprocess.run([os.path.join(venv, 'bin', 'ansible'), '--version'], capture_output=True, text=True,
                         check=True).stdout
    core = re.search(r'ansible \[core ([^\]]+)\]', out).group(1)
    py = re.search(r'python version = (\S+)', out).group(1)
    manifests = glob.glob(os.path.join(venv, 'lib', 'python*', 'site-packages', 'ansible_collections',
                                       'community', 'proxmox', 'MANIFEST.json'))
    if not manifests:
        sys.exit('community.proxmox is not in %s (the `ansible` package bundles it)' % venv)
    with open(manifests[0], encoding='utf-8') as f:
        community = json.load(f)['collection_info']['version']
    try:  # bench/venv.sh notes which `ansible` wheel community.proxmox was taken from
        with open(os.path.join(venv, 'ansible-package.txt'), encoding='utf-8') as f:
            ansible_pkg = f.read().strip()
    except OSError:
        ansible_pkg = subprocess.run([os.path.join(venv, 'bin', 'python'), '-c',
                                      'import importlib.metadata as m; print(m.version("ansible"))'],
                                     capture_output=True, text=True).stdout.strip() or '?'
    proxmoxer = subprocess.run([os.path.join(venv, 'bin', 'python'), '-c',
                                'import importlib.metadata as m; print(m.version("proxmoxer"))'],
                               capture_output=True, text=True).stdout.strip() or '?'
    return {'ansible_core': core, 'python': py, 'ansible': ansible_pkg, 'community_proxmox': community,
            'proxmoxer': proxmoxer}


def install_ferro(venv, tarball, dest):
    subprocess.run([os.path.join(venv, 'bin', 'ansible-galaxy'), 'collection', 'install', tarball, '-p', dest,
                    '--force'], check=True, capture_output=True, text=True,
                   env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=dest))
    root = os.path.join(dest, 'ansible_collections', 'ferro', 'proxmox')
    with open(os.path.join(root, 'MANIFEST.json'), encoding='utf-8') as f:
        version = json.load(f)['collection_info']['version']
    binaries = {os.path.basename(p): os.path.getsize(p) for p in glob.glob(os.path.join(root, 'native', '*', '*'))}
    modules = {m for m in CONVERGE if os.path.isfile(os.path.join(root, 'plugins', 'modules', m + '.py'))
               and m in binaries}
    return version, modules, binaries


# --------------------------------------------------------------------------- playbooks


class Bench:
    def __init__(self, args, sim, venv, collections_path, community_version, workdir):
        self.args = args
        self.native = glob.glob(os.path.join(collections_path, 'ansible_collections', 'ferro', 'proxmox', 'native', '*'))
        self.sim = sim
        self.venv = venv
        self.collections_path = collections_path
        self.workdir = workdir
        self.n = args.vms
        self.seed = os.path.join(workdir, 'seed.json')
        with open(self.seed, 'w', encoding='utf-8') as f:
            json.dump(bench_seed.make_seed(self.n, FIRST_VMID), f)
        # community.proxmox 2.x honours ca_path; 1.x ignores it (upstream-modules.md 2.1), so it
        # runs without verification there.
        self.community_tls = ({'validate_certs': True, 'ca_path': sim.ca_path}
                              if int(community_version.split('.')[0]) >= 2 else {'validate_certs': False})

    def connection(self, coll):
        conn = {'api_host': self.sim.host, 'api_port': self.sim.port, 'api_user': USER, 'api_token_id': TOKEN,
                'api_token_secret': TOKEN_SECRET}
        conn.update({'ca_path': self.sim.ca_path} if coll == 'ferro' else self.community_tls)
        return conn

    def play(self, coll, tasks, hosts='localhost'):
        play = {'name': 'bench', 'hosts': hosts, 'gather_facts': False, 'tasks': tasks}
        if coll:
            play['module_defaults'] = {'group/%s.proxmox' % FQCN[coll]: self.connection(coll)}
        return [play]

    def write(self, name, plays):
        path = os.path.join(self.workdir, name + '.yml')
        with open(path, 'w', encoding='utf-8') as f:
            json.dump(plays, f, indent=1)  # JSON is YAML
        return path

    @staticmethod
    def node(i):
        return bench_seed.NODES[i % len(bench_seed.NODES)]

    def converge_tasks(self, coll, module):
        tasks = []
        for i in range(self.n):
            vmid = FIRST_VMID + i
            if module == 'proxmox_kvm':
                args = {'vmid': vmid, 'name': 'bench-%03d' % (i + 1), 'node': self.node(i), 'cores': 1,
                        'memory': 1024, 'update': True}
            elif module == 'proxmox_nic':
                args = {'vmid': vmid, 'interface': 'net0', 'model': 'virtio', 'bridge': 'vmbr0'}
            elif module == 'proxmox_disk':
                args = {'vmid': vmid, 'disk': 'scsi0', 'storage': 'local-lvm', 'size': 8}
            else:
                args = {'vmid': vmid, 'config': 'current'}
            tasks.append({'name': '%s %d' % (module, vmid), '%s.%s' % (FQCN[coll], module): args})
        return tasks

    def direct(self, module):
        """Run ferro.proxmox's binary for `module` alone, N times, with each converge task's
        arguments on stdin (as the action plugin does): the module's own cost, with its API calls,
        without Ansible. Returns (seconds per run, failures, requests)."""
        self.sim.reset(self.seed)
        binary = os.path.join(self.native[0], module)
        failures = 0
        start = time.perf_counter()
        for task in self.converge_tasks('ferro', module):
            args = dict(self.connection('ferro'), **task['ferro.proxmox.%s' % module])
            proc = subprocess.run([binary], input=json.dumps(args), capture_output=True, text=True, timeout=60,
                                  env={'PATH': os.environ.get('PATH', '/usr/bin:/bin')})
            try:
                result = json.loads(proc.stdout)
            except ValueError:
                result = {'failed': True}
            failures += bool(result.get('failed') or result.get('changed'))
        per = (time.perf_counter() - start) / self.n
        return per, failures, self.sim.requests()

    def start_cost(self, module):
        """The binary run N times on arguments it rejects before any network I/O: process start,
        reading and validating the JSON, printing the answer. Seconds per run."""
        binary = os.path.join(self.native[0], module)
        start = time.perf_counter()
        for _ in range(self.n):
            subprocess.run([binary], input='{}', capture_output=True, text=True, timeout=60,
                           env={'PATH': os.environ.get('PATH', '/usr/bin:/bin')})
        return (time.perf_counter() - start) / self.n

    def build_tasks(self, coll, state):
        tasks = []
        for i in range(self.n):
            vmid = BUILD_FIRST_VMID + i
            if state == 'present':
                args = {'vmid': vmid, 'name': 'build-%03d' % (i + 1), 'node': self.node(i), 'cores': 1,
                        'memory': 1024, 'scsihw': 'virtio-scsi-single', 'scsi': {'scsi0': 'local-lvm:8'},
                        'net': {'net0': 'virtio,bridge=vmbr0'}}
            else:
                args = {'vmid': vmid, 'state': 'absent'}
            tasks.append({'name': 'kvm %s %d' % (state, vmid), '%s.proxmox_kvm' % FQCN[coll]: args})
        return tasks

    # ----------------------------------------------------------------------- running

    def env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(('PROXMOX_', 'ANSIBLE_'))}
        env.update({
            'ANSIBLE_COLLECTIONS_PATH': self.collections_path,
            'ANSIBLE_PYTHON_INTERPRETER': os.path.join(self.venv, 'bin', 'python'),
            'ANSIBLE_NOCOLOR': '1',
            'ANSIBLE_RETRY_FILES_ENABLED': '0',
            'ANSIBLE_LOCALHOST_WARNING': '0',
            'ANSIBLE_INVENTORY_UNPARSED_WARNING': '0',
            'ANSIBLE_HOST_KEY_CHECKING': '0',
            'ANSIBLE_CALLBACK_PLUGINS': os.path.join(HERE, 'callback_plugins'),
            'ANSIBLE_CALLBACKS_ENABLED': 'bench_timer',
        })
        return env

    def run(self, playbook, inventory='localhost,', forks=None, reset=True):
        """Run one playbook on a freshly reset pvesim. Returns wall seconds, recap totals and the
        request log of the run."""
        if reset:
            self.sim.reset(self.seed)
        cmd = [os.path.join(self.venv, 'bin', 'ansible-playbook'), '-i', inventory, '-c', 'local', playbook]
        if forks:
            cmd += ['--forks', str(forks)]
        timer = os.path.join(self.workdir, 'timer.json')
        if os.path.exists(timer):
            os.remove(timer)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(self.env(), BENCH_TIMER_FILE=timer),
                              cwd=self.workdir, timeout=1800)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # CPU seconds of ansible-playbook, its workers and the modules (pvesim is not waited for).
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        try:
            with open(timer, encoding='utf-8') as f:
                elapsed = json.load(f)['elapsed']
        except (OSError, ValueError, KeyError):
            elapsed = wall
        recap = {'ok': 0, 'changed': 0, 'failed': 0, 'unreachable': 0, 'skipped': 0}
        for m in RECAP.finditer(proc.stdout):
            for key, value in zip(('ok', 'changed', 'unreachable', 'failed', 'skipped'), m.groups()[1:]):
                recap[key] += int(value)
        requests = self.sim.requests()
        if proc.returncode != 0 or recap['failed'] or recap['unreachable']:
            out = os.path.join(self.workdir, os.path.basename(playbook) + '.failed.log')
            with open(out, 'w', encoding='utf-8') as f:
                f.write(proc.stdout + '\n--- stderr\n' + proc.stderr)
            log('  ! %s: rc=%d failed=%d (output in %s)' % (os.path.basename(playbook), proc.returncode,
                                                            recap['failed'], out))
        return {'wall': wall, 'elapsed': elapsed, 'cpu': cpu, 'rc': proc.returncode, 'recap': recap, 'requests': requests}


# --------------------------------------------------------------------------- measures


def request_stats(requests, tasks):
    paths = {}
    for r in requests:
        path = r['path'].replace('/api2/json', '')
        path = re.sub(r'UPID:[^/]+', '{upid}', path)
        path = re.sub(r'^/nodes/[^/]+', '/nodes/{node}', path)
        path = re.sub(r'/\d+(?=/|$)', '/{vmid}', path)
        key = '%s %s' % (r['method'], path)
        paths[key] = paths.get(key, 0) + 1
    return {
        'per_task': len(requests) / tasks,
        'api_ms_per_task': sum(r.get('duration_ms') or 0 for r in requests) / tasks,
        'version_calls': sum(1 for r in requests if r['path'].endswith('/version')),
        'errors': sum(1 for r in requests if not 200 <= (r.get('status') or 0) < 300),
        'by_path': dict(sorted(paths.items(), key=lambda kv: -kv[1])),
    }


def community_slices(n, rounds):
    """The [lo, hi) task ranges community.proxmox runs in each converge round: N split in `rounds`
    near-equal parts (each round a different part; every task once over the run)."""
    bounds = [round(i * n / rounds) for i in range(rounds + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(rounds)]


def med(values):
    return statistics.median(values) if values else float('nan')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--ferro-tarball', required=True)
    parser.add_argument('--ansible-venv', required=True)
    parser.add_argument('--vms', type=int, default=50)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--build-rounds', type=int, default=1)
    parser.add_argument('--workdir', default=os.path.join(os.path.dirname(HERE), 'build', 'bench', 'run'))
    parser.add_argument('--json', help='write every measurement here')
    parser.add_argument('--skip', default='', help='comma-separated: converge,build,forks,waiter')
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
        notes.append('skipped build, forks and waiter: they need ferro.proxmox.proxmox_kvm')
        skip |= {'build', 'forks', 'waiter'}

    results = {'versions': v, 'date': started.isoformat(timespec='minutes'), 'cores': os.cpu_count(),
               'machine': platform.machine(), 'vms': n, 'rounds': args.rounds, 'build_rounds': args.build_rounds,
               'runs': [], 'notes': notes}

    def record(kind, workload, coll, rnd, r, tasks):
        entry = {'kind': kind, 'workload': workload, 'collection': coll, 'round': rnd, 'wall': r['wall'],
                 'elapsed': r['elapsed'], 'cpu': r['cpu'],
                 'tasks': tasks, 'rc': r['rc'], 'recap': r['recap']}
        entry.update(request_stats(r['requests'], max(tasks, 1)))
        results['runs'].append(entry)
        return entry

    with PvesimProcess(seed=None, time_scale=0) as sim:
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
        # Warm-up: the first run of each pays for cold caches (pyc files, page cache).
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

    shutil.rmtree(collections_path, ignore_errors=True)
    results['binaries'] = binaries
    results['finished'] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='minutes')
    if args.json:
        with open(args.json, 'w', encoding='utf-8') as f:
            json.dump(results, f, indent=1)
    report(results)


# --------------------------------------------------------------------------- report


def per_task(results, kind, workload, coll):
    """Medians over the rounds: time per task = (play time - that round's empty play time) / tasks,
    where the play time runs from the play's start to the playbook's end in ansible-playbook (so
    the interpreter's start-up is left out); CPU per task (ansible-playbook, its workers and the
    modules, less the empty playbook's); and the request figures."""
    empties = {r['round']: r for r in results['runs'] if r['workload'] == 'empty'}
    runs = [r for r in results['runs'] if r['kind'] == kind and r['workload'] == workload and r['collection'] == coll]
    if not runs:
        return None
    fallback = {'elapsed': med([e['elapsed'] for e in empties.values()]),
                'cpu': med([e.get('cpu', 0) for e in empties.values()])}
    times, cpus = [], []
    for r in runs:
        base = empties.get(r['round'] if kind != 'build' else 'b%d' % r['round'], fallback)
        times.append((r['elapsed'] - base['elapsed']) / r['tasks'])
        cpus.append((r.get('cpu', 0) - base.get('cpu', 0)) / r['tasks'])
    return {
        'ms': med(times) * 1000,
        'ms_all': [t * 1000 for t in times],
        'cpu_ms': med(cpus) * 1000,
        'req': med([r['per_task'] for r in runs]),
        'api_ms': med([r['api_ms_per_task'] for r in runs]),
        'version': max(r['version_calls'] for r in runs),
        'changed': sum(r['recap']['changed'] for r in runs),
        'tasks': sum(r['tasks'] for r in runs),
        'failed': max(r['recap']['failed'] + (1 if r['rc'] else 0) for r in runs),
        'by_path': runs[-1]['by_path'],
        'by_path_tasks': runs[-1]['tasks'],
    }


def direct_ms(results, module, key='ms'):
    runs = [r[key] for r in results['runs'] if r['kind'] == 'direct' and r['workload'] == module]
    return med(runs) if runs else None


def report(results):
    v = results['versions']
    n = results['vms']
    out = []
    out.append('')
    out.append('ferro.proxmox %s vs community.proxmox %s on ansible-core %s (Python %s), pvesim, N=%d, '
               '%d cores, %s; medians of %d rounds (community.proxmox: a 1/%d slice of the no-op tasks per round; '
               'build: %d round)' % (
                   v['ferro_proxmox'], v['community_proxmox'], v['ansible_core'], v['python'], n, results['cores'],
                   results['date'], results['rounds'], results['rounds'], results['build_rounds']))
    floor = per_task(results, 'base', 'floor', '-')
    floor_meta = per_task(results, 'base', 'floor_meta', '-')
    if floor:
        out.append('floor (Ansible per task): ansible.builtin.debug %.1f ms, meta: noop %.1f ms' % (
            floor['ms'], floor_meta['ms']))
    out.append('')
    hdr = '| workload | ferro ms/task | community ms/task | community/ferro | ferro above floor ms | ' \
          'ferro API ms/task | ferro binary alone ms | req/task ferro | req/task community | ' \
          'CPU ms/task ferro / community | ' \
          'changed/tasks ferro; community |'
    out.append(hdr)
    out.append('| --- |' + ' ---: |' * 10)
    rows = {}
    for kind, workloads in (('converge', CONVERGE), ('build', ('create', 'remove'))):
        for w in workloads:
            f = per_task(results, kind, w, 'ferro')
            c = per_task(results, kind, w, 'community')
            if not f or not c:
                continue
            rows[(kind, w)] = (f, c)
            label = ('no-op %s' % w) if kind == 'converge' else ('build: %s VM' % w)
            above = f['ms'] - floor['ms'] if floor else float('nan')
            d = direct_ms(results, w) if kind == 'converge' else None
            out.append('| %s | %.1f | %.1f | %.1fx | %.1f | %.1f | %s | %.2f | %.2f | %.0f / %.0f | %d/%d; %d/%d |' % (
                label, f['ms'], c['ms'], c['ms'] / f['ms'], above, f['api_ms'], '%.1f' % d if d else '', f['req'],
                c['req'], f['cpu_ms'], c['cpu_ms'], f['changed'], f['tasks'], c['changed'], c['tasks']))
    if floor:
        out.append('| floor: ansible.builtin.debug | %.1f | | | | | | | | %.0f | |' % (floor['ms'], floor['cpu_ms']))
    for note in results['notes']:
        out.append('note: ' + note)
    out.append('')
    out.append('API requests per no-op task, by call (ferro | community):')
    for (kind, w), (f, c) in rows.items():
        if kind != 'converge':
            continue
        fp = ', '.join('%s x%.3g' % (p, cnt / f['by_path_tasks']) for p, cnt in f['by_path'].items())
        cp = ', '.join('%s x%.3g' % (p, cnt / c['by_path_tasks']) for p, cnt in c['by_path'].items())
        out.append('  %s: %s | %s' % (w, fp, cp))

    out.append('')
    out.append('Targets (issue 8):')

    def target(ok, text):
        out.append('  [%s] %s' % ('met' if ok else 'MISSED', text))

    for (kind, w), (f, c) in rows.items():
        if kind != 'converge':
            continue
        speedup = c['ms'] / f['ms']
        target(speedup >= SPEEDUP_TARGET, '%s no-op: %.1fx faster than community.proxmox (target >= %.0fx)' % (
            w, speedup, SPEEDUP_TARGET))
    for (kind, w), (f, c) in rows.items():
        if kind != 'converge' or not floor:
            continue
        d = direct_ms(results, w)
        if d is None:
            above = f['ms'] - floor['ms'] - f['api_ms']
            target(above <= ABOVE_FLOOR_TARGET_MS, '%s: %.1f ms above the floor less %.1f ms of API calls = %.1f ms '
                   '(target <= %.0f)' % (w, f['ms'] - floor['ms'], f['api_ms'], above, ABOVE_FLOOR_TARGET_MS))
            continue
        # The API calls as the module makes them: the binary alone on the same task (TLS
        # connection, requests, answers) less the binary's start on arguments it rejects.
        start = direct_ms(results, w, 'start_ms')
        api = d - start
        above = f['ms'] - floor['ms'] - api
        target(above <= ABOVE_FLOOR_TARGET_MS, '%s: %.1f ms above the floor, less %.1f ms of API calls (binary alone '
               '%.1f ms - its start %.1f ms; pvesim handler time %.1f ms) = %.1f ms (target <= %.0f)' % (
                   w, f['ms'] - floor['ms'], api, d, start, f['api_ms'], above, ABOVE_FLOOR_TARGET_MS))
    for (kind, w), (f, c) in rows.items():
        if kind != 'converge':
            continue
        limit = MAX_REQUESTS.get(w)
        ok = f['req'] <= c['req'] and (limit is None or f['req'] <= limit) and f['version'] == 0
        target(ok, '%s: %.2f requests per no-op task (community %.2f%s), %d /version calls' % (
            w, f['req'], c['req'], ', limit %d' % limit if limit else '', f['version']))
    forks = results.get('forks')
    if forks:
        one, ten = forks['1'], forks['10']
        secs = one.get('task_seconds', 0)
        ok = (ten['failed'] == 0 and ten['duplicate_ids'] == 0 and ten['vms'] == n and ten['wall'] <= one['wall'] / 3)
        target(ok, 'create %d VMs with automatic vmids at forks 10%s: %d VMs, %d failed, %d duplicate ids, '
               '%.1f s = %.2f of forks 1 (%.1f s; target <= 0.33)' % (
                   n, ', %.1f s qmcreate tasks' % secs if secs else '', ten['vms'], ten['failed'],
                   ten['duplicate_ids'], ten['wall'], ten['wall'] / one['wall'], one['wall']))
        if '10-instant' in forks:
            one, ten = forks['1-instant'], forks['10-instant']
            out.append('         the same with tasks that end at once: %d VMs, %d failed, %d duplicate ids, %.1f s = '
                       '%.2f of forks 1 (%.1f s); CPU-bound, so no lower than 1/%d on %d cores' % (
                           ten['vms'], ten['failed'], ten['duplicate_ids'], ten['wall'], ten['wall'] / one['wall'],
                           one['wall'], results['cores'], results['cores']))
    if results.get('binaries'):
        biggest = max(results['binaries'].items(), key=lambda kv: kv[1])
        target(biggest[1] <= BINARY_MAX_BYTES, 'binary size: largest %s %.2f MB (%s; target <= 3 MB)' % (
            biggest[0], biggest[1] / 1e6, ', '.join('%s %.2f' % (k, s / 1e6) for k, s in sorted(results['binaries'].items()))))
    waiter = results.get('waiter')
    if waiter:
        lag = med(waiter['lag_ms'])
        target(lag <= WAITER_LAG_TARGET_MS, 'task waiter: returns %.0f ms (median) after a %.1f s task ends '
               '(target <= %.0f ms)' % (lag, waiter['task_seconds'], WAITER_LAG_TARGET_MS))
    print('\n'.join(out), flush=True)


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == '--report':
        with open(sys.argv[2], encoding='utf-8') as f:
            report(json.load(f))
    else:
        main()
