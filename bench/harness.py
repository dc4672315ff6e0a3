"""The benchmark's set-up and playbook runs: the virtualenv's versions, ferro.proxmox's install, the
connection each collection is given, one ansible-playbook run timed and counted, and `Bench`, which
writes the per-task workloads' playbooks and runs them on one pvesim."""

import glob
import json
import os
import re
import resource
import subprocess
import sys
import time

import seed as bench_seed
from pvesim.testing import TOKEN_ID, TOKEN_SECRET

HERE = os.path.dirname(os.path.abspath(__file__))
USER, TOKEN = TOKEN_ID.split('!', 1)
FIRST_VMID = 1001
BUILD_FIRST_VMID = 3001
CONVERGE = ('proxmox_kvm', 'proxmox_nic', 'proxmox_disk', 'proxmox_vm_info')
COLLECTIONS = ('ferro', 'community')
FQCN = {'ferro': 'ferro.proxmox', 'community': 'community.proxmox'}
RECAP = re.compile(r'^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+)', re.M)


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



def connection(coll, sim, community_version):
    """The connection options of `coll` to `sim`: token auth, TLS verified against pvesim's CA.
    community.proxmox 2.x honours ca_path; 1.x ignores it, so it runs without verification there."""
    conn = {'api_host': sim.host, 'api_port': sim.port, 'api_user': USER, 'api_token_id': TOKEN,
            'api_token_secret': TOKEN_SECRET}
    if coll == 'ferro':
        conn['ca_path'] = sim.ca_path
    elif int(community_version.split('.')[0]) >= 2:
        conn.update({'validate_certs': True, 'ca_path': sim.ca_path})
    else:
        conn['validate_certs'] = False
    return conn


def play(coll, conn, tasks, hosts='localhost', **keywords):
    """One play of `tasks` on `hosts`, with `conn` as module_defaults of `coll`'s action group."""
    body = {'name': 'bench', 'hosts': hosts, 'gather_facts': False, 'tasks': tasks}
    body.update(keywords)
    if coll:
        body['module_defaults'] = {'group/%s.proxmox' % FQCN[coll]: conn}
    return [body]


def write_playbook(workdir, name, plays):
    path = os.path.join(workdir, name + '.yml')
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(plays, f, indent=1)  # JSON is YAML
    return path


def ansible_env(venv, collections_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(('PROXMOX_', 'ANSIBLE_'))}
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': collections_path,
        'ANSIBLE_PYTHON_INTERPRETER': os.path.join(venv, 'bin', 'python'),
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_RETRY_FILES_ENABLED': '0',
        'ANSIBLE_LOCALHOST_WARNING': '0',
        'ANSIBLE_INVENTORY_UNPARSED_WARNING': '0',
        'ANSIBLE_HOST_KEY_CHECKING': '0',
        'ANSIBLE_CALLBACK_PLUGINS': os.path.join(HERE, 'callback_plugins'),
        'ANSIBLE_ACTION_PLUGINS': os.path.join(HERE, 'action_plugins'),  # the fleet's floor
        'ANSIBLE_CALLBACKS_ENABLED': 'bench_timer',
    })
    return env


def run_playbook(venv, collections_path, workdir, playbook, inventory='localhost,', forks=None, extra=()):
    """Run one ansible-playbook. Returns its wall seconds, the play's time inside ansible-playbook
    (bench_timer: start-up left out), CPU seconds, exit code, recap totals and per host, and the
    `vmid` each host's tasks returned (bench_timer). A failed run's output is kept in `workdir`."""
    cmd = [os.path.join(venv, 'bin', 'ansible-playbook'), '-i', inventory, '-c', 'local', playbook]
    if forks:
        cmd += ['--forks', str(forks)]
    cmd += list(extra)
    timer = os.path.join(workdir, 'timer.json')
    if os.path.exists(timer):
        os.remove(timer)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env=dict(ansible_env(venv, collections_path), BENCH_TIMER_FILE=timer),
                          cwd=workdir, timeout=1800)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds of ansible-playbook, its workers and the modules (pvesim is not waited for).
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        with open(timer, encoding='utf-8') as f:
            timed = json.load(f)
    except (OSError, ValueError):
        timed = {}
    recap = {'ok': 0, 'changed': 0, 'failed': 0, 'unreachable': 0, 'skipped': 0}
    hosts = {}
    for m in RECAP.finditer(proc.stdout):
        counts = dict(zip(('ok', 'changed', 'unreachable', 'failed', 'skipped'), map(int, m.groups()[1:])))
        hosts[m.group(1)] = counts
        for key, value in counts.items():
            recap[key] += value
    if proc.returncode != 0 or recap['failed'] or recap['unreachable']:
        out = os.path.join(workdir, os.path.basename(playbook) + '.failed.log')
        with open(out, 'w', encoding='utf-8') as f:
            f.write(proc.stdout + '\n--- stderr\n' + proc.stderr)
        log('  ! %s: rc=%d failed=%d (output in %s)' % (os.path.basename(playbook), proc.returncode,
                                                        recap['failed'], out))
    return {'wall': wall, 'elapsed': timed.get('elapsed', wall), 'cpu': cpu, 'rc': proc.returncode,
            'recap': recap, 'hosts': hosts, 'vmids': timed.get('vmids', {})}


# --------------------------------------------------------------------------- the per-task workloads


class Bench:
    """The per-task workloads (converge, build, forks, waiter) on one pvesim, reset to the benchmark
    seed (bench/seed.py) before each playbook."""

    def __init__(self, args, sim, venv, collections_path, community_version, workdir):
        self.args = args
        self.native = glob.glob(os.path.join(collections_path, 'ansible_collections', 'ferro', 'proxmox', 'native', '*'))
        self.sim = sim
        self.venv = venv
        self.collections_path = collections_path
        self.community_version = community_version
        self.workdir = workdir
        self.n = args.vms
        self.seed = os.path.join(workdir, 'seed.json')
        with open(self.seed, 'w', encoding='utf-8') as f:
            json.dump(bench_seed.make_seed(self.n, FIRST_VMID), f)

    def connection(self, coll):
        return connection(coll, self.sim, self.community_version)

    def play(self, coll, tasks, hosts='localhost'):
        return play(coll, self.connection(coll) if coll else None, tasks, hosts)

    def write(self, name, plays):
        return write_playbook(self.workdir, name, plays)

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

    def run(self, playbook, inventory='localhost,', forks=None, reset=True, extra=()):
        """Run one playbook on a freshly reset pvesim (run_playbook), with the request log of the run;
        `extra`: more ansible-playbook arguments (`--check`, `-e ...`)."""
        if reset:
            self.sim.reset(self.seed)
        r = run_playbook(self.venv, self.collections_path, self.workdir, playbook, inventory, forks, extra)
        r['requests'] = self.sim.requests()
        return r


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

