"""The realistic cluster profile (off by default; `--profile realistic` or a seed's `"profile"`): request latency,
pveproxy's and pvedaemon's worker limits, and the storage lock allocations hold (docs/pve-semantics.md §56).

Sources: pve-manager PVE/Service/pveproxy.pm and PVE/Service/pvedaemon.pm (`%daemon_options` max_workers, the
pvedaemon socket on 127.0.0.1:85), PVE/HTTPServer.pm `rest_handler` (a `protected` method is proxied to
pvedaemon, a `proxyto => 'node'` one to that node); pve-http-server src/PVE/APIServer/AnyEvent.pm
`handle_api2_request`, `proxy_request`; pve-cluster src/PVE/Cluster.pm `$cfs_lock`, `cfs_lock_storage`;
pve-storage src/PVE/Storage.pm `vdisk_alloc`, src/PVE/Storage/Plugin.pm `cluster_lock_storage`; pve-common
src/PVE/Tools.pm `lock_file_full`; pve-guest-common src/PVE/AbstractConfig.pm `lock_config`.
"""

import asyncio
import json
import math
import random
import re
import time

from aiohttp import web
from fakepve.model import TaskError

from . import drives as d

PROFILES = ('none', 'realistic')

# pveproxy.pm and pvedaemon.pm `%daemon_options`: `max_workers => 3, # may be overridden in init` (MAX_WORKERS in
# /etc/default/pveproxy). A worker runs one API handler at a time (AnyEvent.pm handle_api2_request calls the
# handler synchronously); a proxied request does not hold the pveproxy worker while pvedaemon answers
# (proxy_request is asynchronous); a task's work runs in a forked worker (RPCEnvironment fork_worker), so a
# task holds a daemon worker only until it is forked.
MAX_WORKERS = {'pveproxy': 3, 'pvedaemon': 3}

# Cluster.pm $cfs_lock: `$timeout = 10 if !$timeout`, and Storage.pm vdisk_alloc passes no timeout.
CFS_LOCK_TIMEOUT = 10
# Tools.pm lock_file_full: `$timeout = 10 if !$timeout` (Plugin.pm cluster_lock_storage on local storage).
FLOCK_TIMEOUT = 10
# AbstractConfig.pm lock_config: lock_config_full($vmid, 10, ...).
CONFIG_LOCK_TIMEOUT = 10

# Not from PVE's source (which sets no durations): the PVE seconds one allocation holds its storage's lock
# (`qemu-img create` of a qcow2 on NFS, an `rbd create`, an `lvcreate`), our model's assumption.
ALLOC_SECS = 1.0

# Not from PVE's source either: the real milliseconds of each leg, a log-normal (median, sigma) per leg. pveproxy:
# the TLS record, the token or ticket check (token.cfg, read through pmxcfs) and a handler that reads pmxcfs;
# pvedaemon: the HTTP hop to 127.0.0.1:85 and a handler that forks or reads a config; node: the hop to the
# pveproxy of the node a `proxyto` call names, when it is not the node the client talks to (a LAN round trip).
LATENCY_MS = {'pveproxy': (6.0, 0.5), 'pvedaemon': (10.0, 0.5), 'node': (3.0, 0.5)}

# The methods pvesim answers that pve-manager's API schema marks `protected => 1` (run by pvedaemon) and those
# with `proxyto => 'node'` (qemu-server src/PVE/API2/Qemu.pm, pve-manager PVE/API2/Nodes.pm, Tasks.pm,
# Network.pm, pve-storage src/PVE/API2/Storage/Content.pm and Status.pm, pve-access-control
# src/PVE/API2/AccessControl.pm). Every method under /nodes/{node}/ but `GET .../network`, `GET .../config` and
# `GET .../pending` below is both; the cluster-wide ones (/cluster/resources, /cluster/nextid, /access/permissions,
# /storage, /nodes) are neither.
PROTECTED = re.compile(r'^(POST /access/ticket|GET /nodes/[^/]+/(qemu|lxc)(/\d+/(status/current|interfaces|'
                       r'agent/.*))?|GET /nodes/[^/]+/storage/.*|GET /nodes/[^/]+/tasks/.*|'
                       r'(POST|PUT|DELETE) /nodes/[^/]+/.*)$')
NODE_PATH = re.compile(r'^/nodes/([^/]+)/')
API = re.compile(r'^/api2/(json|extjs)')


def legs(method, path):
    """The daemons a request goes through: ('pveproxy',) or ('pveproxy', 'pvedaemon')."""
    rel = API.sub('', path)
    return ('pveproxy', 'pvedaemon') if PROTECTED.match('{0} {1}'.format(method, rel)) else ('pveproxy',)


class ProfileMixin:
    """The profile's switch (flag, seed, /_sim/profile), and every request through the daemons' workers."""

    def profile_init(self, profile):
        self.profile_flag = profile or 'none'
        self.profile = self.profile_flag
        self._profile_random = random.Random(0)
        self.profile_reset()

    def profile_reset(self):
        self.workers = {}
        self.profile_stats = {'requests': 0, 'queued': 0, 'max_busy': {}, 'lock_waits': 0, 'lock_timeouts': 0}
        self.task_spans = []
        self.storage_locks = {}

    def load_seed(self, path=None):
        """AdminMixin's load_seed, then the seed's `profile` (else the flag's)."""
        path = super().load_seed(path)
        with open(path, encoding='utf-8') as fh:
            seeded = json.load(fh).get('profile')
        if hasattr(self, 'profile_flag'):
            self.profile = seeded or self.profile_flag
            self.profile_reset()
        return path

    def _pool(self, node, daemon):
        key = (node, daemon)
        if key not in self.workers:
            self.workers[key] = {'sem': asyncio.Semaphore(MAX_WORKERS[daemon]), 'busy': 0}
        return self.workers[key]

    def _leg_secs(self, leg):
        median, sigma = LATENCY_MS[leg]
        return median * math.exp(self._profile_random.gauss(0, sigma)) / 1000.0

    async def _work(self, node, daemon, handler=None):
        """One handler run on a worker of `daemon` on `node`: queue while all its workers are busy."""
        pool = self._pool(node, daemon)
        if pool['sem'].locked():
            self.profile_stats['queued'] += 1
        async with pool['sem']:
            pool['busy'] += 1
            name = '{0}/{1}'.format(node, daemon)
            self.profile_stats['max_busy'][name] = max(self.profile_stats['max_busy'].get(name, 0), pool['busy'])
            try:
                await asyncio.sleep(self._leg_secs(daemon))
                if handler is not None:
                    return await handler()
                return None
            finally:
                pool['busy'] -= 1

    async def _answer(self, request, handler, generic, path_node):
        if self.profile != 'realistic':
            return await super()._answer(request, handler, generic, path_node)
        self.profile_stats['requests'] += 1
        entry = next(iter(self.nodes))
        target = path_node if path_node in self.nodes else entry
        answer = lambda: super(ProfileMixin, self)._answer(request, handler, generic, path_node)  # noqa: E731
        if legs(request.method, request.path) == ('pveproxy',) and target == entry:
            return await self._work(entry, 'pveproxy', answer)
        # HTTPServer.pm rest_handler: the entry pveproxy parses and checks the request, then proxies it
        await self._work(entry, 'pveproxy')
        if target != entry:
            await asyncio.sleep(self._leg_secs('node'))
            if legs(request.method, request.path) == ('pveproxy',):
                return await self._work(target, 'pveproxy', answer)
            await self._work(target, 'pveproxy')
        return await self._work(target, 'pvedaemon', answer)

    async def _sim_dispatch(self, request):
        """GET /_sim/profile: the profile, its constants, the workers' high-water marks, the lock waits and
        timeouts, and each task's span (real seconds since pvesim started); POST {"profile": NAME} switches it."""
        if request.match_info['tail'].strip('/') != 'profile':
            return await super()._sim_dispatch(request)
        if request.method == 'POST':
            body = json.loads(await request.read() or b'{}')
            name = body.get('profile') if isinstance(body, dict) else None
            if name not in PROFILES:
                return web.json_response({'errors': {'profile': 'one of ' + ', '.join(PROFILES)}, 'data': None},
                                         status=400)
            self.profile = name
            self.profile_reset()
        return web.json_response({'data': {
            'profile': self.profile, 'max_workers': MAX_WORKERS, 'latency_ms': LATENCY_MS,
            'cfs_lock_timeout': CFS_LOCK_TIMEOUT, 'alloc_secs': ALLOC_SECS, 'stats': self.profile_stats,
            'tasks': list(self.task_spans)}})


class ProfileTasksMixin:
    """Each task's span, and the storage lock a new VM's allocations hold (after TasksMixin in the MRO)."""

    async def task(self, node, ttype, tid, user, body, vm=None, lock=True, log=()):
        span = {'type': ttype, 'node': node, 'id': str(tid), 'vmid': getattr(vm, 'vmid', None),
                'start': time.monotonic(), 'end': None, 'status': None}
        spans = getattr(self, 'task_spans', None)
        if spans is not None:
            spans.append(span)

        async def timed():
            try:
                note = await body()
                span['status'] = 'OK'
                return note
            except TaskError as e:
                span['status'] = str(e)
                raise
            finally:
                span['end'] = time.monotonic()
        return await super().task(node, ttype, tid, user, timed, vm=vm, lock=lock, log=log)

    async def ceph_io(self, vm, keys=None):
        """Inside a create or clone task, once its volumes are allocated: each allocation held its storage's
        lock for ALLOC_SECS (Storage.pm vdisk_alloc under Plugin.pm cluster_lock_storage: cfs_lock_storage on
        shared storage, lock_file on local), and a waiter gave up after PVE's timeout with PVE's words; the
        task then fails and frees what it allocated (Qemu.pm clone_vm: `clone failed: ...`)."""
        if getattr(self, 'profile', 'none') == 'realistic' and vm.lock in ('create', 'clone'):
            counts = {}
            for key in sorted(vm.config):
                if not d.is_drive(key):
                    continue
                volume = d.parse_drive(vm.config[key])[0] or ''
                if ':' in volume and d.volume_owner(volume) == vm.vmid:
                    sid = volume.split(':', 1)[0]
                    counts[sid] = counts.get(sid, 0) + 1
            for sid in sorted(counts):
                await self.hold_storage_lock(sid, ALLOC_SECS * counts[sid], vm.node)
        await super().ceph_io(vm, keys)

    async def hold_storage_lock(self, sid, secs, node=None):
        """Plugin.pm cluster_lock_storage for `secs` PVE seconds: one holder per storage, waiters wait up to
        PVE's timeout (Cluster.pm $cfs_lock: `cfs-lock 'storage-ID' error: got lock request timeout`; Tools.pm
        lock_file_full: `can't lock file '/var/lock/pve-manager/pve-storage-ID' - got timeout`)."""
        shared = str(self.storages.get(sid, {}).get('shared', 0)) in ('1', 'True')
        # a shared storage's lock is cluster-wide (pmxcfs); a local one's is a file under the node's /var/lock
        lock = self.storage_locks.setdefault(sid if shared else (sid, node), {'held': False, 'released': None})
        loop = asyncio.get_running_loop()
        timeout = CFS_LOCK_TIMEOUT if shared else FLOCK_TIMEOUT
        deadline = loop.time() + timeout * (self.time_scale or 0)
        if lock['held']:
            self.profile_stats['lock_waits'] += 1
        while lock['held'] and self.time_scale:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            lock['released'] = lock['released'] or asyncio.Event()
            try:
                await asyncio.wait_for(lock['released'].wait(), remaining)
            except asyncio.TimeoutError:
                break
        if lock['held']:
            self.profile_stats['lock_timeouts'] += 1
            if shared:
                raise TaskError("cfs-lock 'storage-{0}' error: got lock request timeout".format(sid))
            raise TaskError("can't lock file '/var/lock/pve-manager/pve-storage-{0}' - got timeout".format(sid))
        lock['held'] = True
        try:
            await self.pause(secs)
        finally:
            lock['held'] = False
            if lock['released'] is not None:
                lock['released'].set()
                lock['released'] = None
