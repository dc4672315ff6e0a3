"""The /_sim admin API (loopback only, no auth), the request log, fault injection and seeds.

    POST   /_sim/reset        {"seed": "default" | "/abs/path.json", "key_order_seed"?: N}
    POST   /_sim/key-order    {"seed": N}: the seed of the order PVE walks a request's keys in (key_order.py); GET: it
    GET    /_sim/requests     the request log; DELETE clears it
    POST   /_sim/faults       one fault (kinds: http, reset, task, task-slow, lock, latency, race, rewrite)
    GET    /_sim/faults       the active faults; DELETE clears them
    POST   /_sim/users        {"userid", "password"?, "tokens"? {id: secret | {secret, privsep, acl}}, "acl"?, "totp"?}
    POST   /_sim/time-scale   {"scale": X}
    GET    /_sim/state        a summary (vmids, time scale) for debugging
    POST   /_sim/stale-lock   {"vmid", "lock": "create" | "clone", ...}: a lock its dead task left (stale_lock.py)
"""

import asyncio
import ipaddress
import json
import logging
import os
import re
import time
import urllib.parse

from aiohttp import web

from fakepve.model import FakeVm, PveError
from fakepve.server import EXTJS, USER, FakePve, error

from . import drives as d
from .seed_schema import DEFAULT_SEED, SEEDS, SeedError, check_seed, seed_path  # noqa: F401 (admin's names)
from .tasks import TASK_SECS
from .world import world

LOG = logging.getLogger('pvesim')
API_PREFIXES = ('/api2/json', '/api2/extjs')
# Parameter names whose values never reach the request log.
SECRET_NAME = re.compile(r'(password|secret|ticket|otp|tfa-challenge|token|key$|keyring)', re.I)
MASK = '**********'
FAULT_KINDS = ('http', 'reset', 'task', 'task-slow', 'lock', 'latency', 'race', 'rewrite')
# What another client does in a `race` fault, just as the matching request arrives (after the module's
# reads, before PVE handles its write): each needs these fields besides `method`/`path`.
RACE_ACTS = {'lock': ('vmid', 'lock', 'seconds'), 'flock': ('vmid', 'seconds'), 'migrate': ('vmid', 'target'),
             'vm': ('vm',)}


def mask(values):
    out = {}
    for key, value in values.items():
        if SECRET_NAME.search(key) and key not in ('sshkeys',):
            out[key] = MASK
        else:
            out[key] = value
    return out


def _is_loopback(remote):
    try:
        return ipaddress.ip_address((remote or '').split('%')[0]).is_loopback
    except ValueError:
        return False


class AdminMixin(object):
    """Mixin for Pvesim (in front of FakePve)."""

    def _sim_init(self):
        self.request_log = []
        self.faults = []
        # config flocks held by the other client of a `race` fault: (vm, holder)
        self.race_holds = []
        self.generation = 0
        self.bridges = ['vmbr0']
        self.datacenter = {}
        self.task_secs = {}
        # the `storage` and `format` each clone asked for, by new vmid (clone_migrate.py, tasks.py)
        self.clone_storage = {}
        # the source config of each clone in progress, by new vmid: its drives are what clone_disk copies
        self.clone_sources = {}
        self.repoid = '14a22df35955'
        self._fault_ids = 0
        self._permissions_init()

    # ------------------------------------------------------------------ seed

    def load_seed(self, path=None):
        """Replace the whole state with the seed's (nodes, storages, users, VMs)."""
        path = seed_path(path)
        with open(path, encoding='utf-8') as fh:
            seed = json.load(fh)
        check_seed(seed, path)  # seed.schema.json: SeedError naming the fields, before any state changes
        runner, host, port, scale = self.runner, self.host, self.port, self.time_scale
        request_log = getattr(self, 'request_log', [])
        generation = getattr(self, 'generation', 0)
        FakePve.__init__(self, user='root@pam', password='secret', host=host, port=port)
        self.runner, self.time_scale = runner, scale
        self._sim_init()
        self.request_log = request_log
        self.generation = generation + 1
        self.key_order_restart()
        self.task_secs = dict(TASK_SECS, **seed.get('task_secs', {}))
        self.seed_file = path
        self.version = seed.get('version', '9.2.11')
        self.release_version = seed.get('release', '9.2')
        self.cluster_name = seed.get('cluster_name', 'pvesim')
        self.nodes = dict((name, {'online': True}) for name in seed.get('nodes', ['pve1']))
        # `node_cpus` {node: n}: each node's CPU count (`maxcpu`; fakepve's 4 otherwise; values.py)
        self.node_cpus = dict(seed.get('node_cpus', {}))
        self.bridges = list(seed.get('bridges', ['vmbr0']))
        self.datacenter = dict(seed.get('datacenter', {}))
        self.storages = {}
        for name, spec in seed.get('storages', {}).items():
            store = dict((k, v) for k, v in spec.items() if k not in ('files', 'volumes'))
            store.setdefault('active', 1)
            store['files'] = set()
            store['volumes'] = {}
            for volname, size in (spec.get('files') or {}).items():
                content = volname.split('/', 1)[0]
                ext = volname.rsplit('.', 1)[-1]
                fmt = 'iso' if content == 'iso' else ext if ext in ('qcow2', 'vmdk', 'raw') else 'raw'
                store['volumes'][volname] = {'content': content, 'format': fmt, 'size': int(size),
                                             'ctime': 1767225600}
            # VM images no config names (a VM destroyed without destroy-unreferenced-disks, a failed
            # create): listed with their owner, counted in the storage's space, skipped by find_free_diskname
            for volname, vol in (spec.get('volumes') or {}).items():
                ext = volname.rsplit('/', 1)[-1].rsplit('.', 1)
                store['volumes'][volname] = {'content': 'images', 'format': ext[1] if len(ext) == 2 else 'raw',
                                             'size': int(vol['size']), 'vmid': int(vol['vmid']), 'ctime': 1767225600}
            self._storage_defaults(store)
            self.storages[name] = store
        for userid, info in seed.get('users', {}).items():
            self.add_user(userid, info)
        for spec in seed.get('vms', []):
            self._seed_vm(spec)
        # `pools` {poolid: {"comment"?, "vms"?: [vmid]}}: user.cfg's pools and their guests, as
        # fakepve's pools.py keeps them (pve-manager PVE/API2/Pool.pm; a guest is in one pool).
        for name, spec in seed.get('pools', {}).items():
            self.pools[name] = set()
            self.pool_info[name] = {'comment': spec.get('comment'), 'storage': set()}
            for vmid in spec.get('vms', []):
                self._pool_join(name, int(vmid))
        return path

    def add_user(self, userid, info):
        """A user as in a seed's `users`: `password`, `tokens` {id: secret or {secret, privsep, acl}}, `acl`
        {path: [privileges or roles] or {privs, propagate}} (README "Users, tokens and ACLs")."""
        if info.get('password') is not None:
            if userid == self.user:
                self.password = info['password']
            else:
                self.users[userid] = info['password']
        for tokenid, token in (info.get('tokens') or {}).items():
            # A token given as a bare secret has no privilege separation (its user's privileges); the
            # object form {secret, privsep, acl} gives one with its own ACL, intersected with its user's.
            authid = '{0}!{1}'.format(userid, tokenid)
            token = token if isinstance(token, dict) else {'secret': token, 'privsep': 0}
            self.apitokens[authid] = token['secret']
            self.token_privsep[authid] = bool(token.get('privsep', 1))
            self._seed_acl(authid, token.get('acl'))
        self._seed_acl(userid, info.get('acl'))

    def _seed_acl(self, ugid, acl):
        """`acl` {path: [privileges or role names]} (propagating) or {path: {"privs": [...], "propagate": 0}}."""
        for acl_path, entry in (acl or {}).items():
            if isinstance(entry, dict):
                self.grant_acl(ugid, acl_path, entry.get('privs', []), entry.get('propagate', 1))
            else:
                self.grant_acl(ugid, acl_path, entry)

    def _seed_vm(self, spec):
        config = dict(spec.get('config', {}))
        vm = FakeVm(int(spec['vmid']), spec.get('name') or config.get('name'), node=spec.get('node', 'pve1'),
                    status=spec.get('status', 'stopped'), config=config, template=bool(spec.get('template')))
        if spec.get('name'):
            vm.config['name'] = spec['name']
        if vm.template:
            vm.config['template'] = 1
        vm.pending = dict(spec.get('pending', {}))
        # `snapshots` {name: config section}: the VM's snapshots, the config's `parent` naming the last
        vm.snapshots = dict((k, dict(v)) for k, v in (spec.get('snapshots') or {}).items())
        vm.lock = vm.config.get('lock')
        # `ha_state` (`started`, `stopped`, ...): an HA resource, whose state /cluster/resources shows as `hastate`
        vm.ha_state = spec.get('ha_state')
        if vm.status == 'running' and spec.get('qmpstatus'):
            vm.qmpstatus = spec['qmpstatus']  # a running VM's QEMU state, e.g. `paused` (status/current)
        if vm.status == 'running' and spec.get('running_machine'):
            vm.running_machine = spec['running_machine']  # the machine QEMU runs it with (status/current, mirror.py)
        if spec.get('agent_running') is False:
            vm.agent_down = True
        self.vms.append(vm)
        self.nodes.setdefault(vm.node, {'online': True})
        # Register every volume the config names, with its size= and owner.
        for key, value in list(vm.config.items()) + list(vm.pending.items()):
            if value is None or not (d.is_drive(key) or d.UNUSED_KEY.match(key)):
                continue
            volume, props = d.parse_drive(value)
            if not volume or ':' not in volume or d.is_cdrom(value) and not d.is_cloudinit(value):
                continue
            sid, name = volume.split(':', 1)
            store = self.storages.get(sid)
            if store is None:
                raise ValueError('seed: VM {0} uses unknown storage {1}'.format(vm.vmid, sid))
            fmt = name.rsplit('.', 1)[1] if '.' in name.rsplit('/', 1)[-1] else 'raw'
            vol = store['volumes'].setdefault(name, {
                'content': 'images', 'format': fmt, 'size': d.parse_size(props.get('size')) or 0,
                'vmid': d.volume_owner(volume) or vm.vmid, 'ctime': 1767225600})
            if key in spec.get('written', {}):
                # the bytes the guest wrote in that disk (storage_types.py `_footprint`); unset: full
                vol['written'] = int(spec['written'][key])

    # ------------------------------------------------------------------ app

    def _build_app(self):
        app = super()._build_app()
        app.middlewares.insert(0, self._sim_middleware)
        app.router.add_route('*', '/_sim/{tail:.*}', self._sim_admin)
        return app

    # ------------------------------------------------------------- faults

    def _fault_matches(self, fault, request, rel):
        if fault.get('method') and fault['method'].upper() != request.method:
            return False
        if fault.get('path') and not re.search(fault['path'], rel):
            return False
        if fault.get('skip'):
            # `skip: N`: the first N matching requests pass untouched (e.g. fail only a read-back)
            fault['skip'] = int(fault['skip']) - 1
            return False
        return True

    def _consume(self, fault):
        if fault.get('count') is not None:
            fault['count'] -= 1
            if fault['count'] <= 0 and fault in self.faults:
                self.faults.remove(fault)

    def take_task_fault(self, ttype):
        for fault in list(self.faults):
            if fault['kind'] == 'task' and fault['type'] == ttype:
                self._consume(fault)
                return fault['exitstatus']
        return None

    def take_slow_fault(self, ttype):
        for fault in list(self.faults):
            if fault['kind'] == 'task-slow' and fault['type'] == ttype:
                self._consume(fault)
                return float(fault['seconds'])
        return None

    def add_fault(self, spec):
        """Validate and register a fault; returns it (with an id)."""
        kind = spec.get('kind')
        if kind not in FAULT_KINDS:
            raise PveError(400, 'Parameter verification failed.',
                           {'kind': 'value must be one of {0}'.format(', '.join(FAULT_KINDS))})
        need = {'http': ('status',), 'reset': (), 'task': ('type', 'exitstatus'), 'task-slow': ('type', 'seconds'),
                'lock': ('vmid', 'lock', 'seconds'), 'latency': ('ms',), 'race': ('path', 'act'),
                'rewrite': ('vmid', 'key', 'value')}[kind]
        if kind == 'race' and spec.get('act') is not None:
            if spec['act'] not in RACE_ACTS:
                raise PveError(400, 'Parameter verification failed.',
                               {'act': 'value must be one of {0}'.format(', '.join(sorted(RACE_ACTS)))})
            need = need + RACE_ACTS[spec['act']]
        missing = dict((k, 'property is missing and it is not optional') for k in need if spec.get(k) is None)
        if missing:
            raise PveError(400, 'Parameter verification failed.', missing)
        fault = dict(spec)
        if fault.get('path'):
            try:
                re.compile(fault['path'])
            except re.error as e:
                raise PveError(400, 'Parameter verification failed.', {'path': 'invalid regex: {0}'.format(e)})
        if kind in ('http', 'reset', 'task', 'task-slow', 'race', 'rewrite') and fault.get('count') is None:
            fault['count'] = 1
        self._fault_ids += 1
        fault['id'] = self._fault_ids
        if kind == 'lock':
            vm = self.vm(int(fault['vmid']))
            if vm is None:
                raise PveError(500, "Configuration file 'nodes/pve1/qemu-server/{0}.conf' does not exist".format(
                    fault['vmid']))
            vm.config['lock'] = fault['lock']
            vm.lock = fault['lock']
            generation = self.generation

            async def later():
                await asyncio.sleep(float(fault['seconds']))
                if generation == self.generation and vm.config.get('lock') == fault['lock']:
                    vm.config.pop('lock', None)
                    vm.lock = None
                if fault in self.faults:
                    self.faults.remove(fault)
            fault['until'] = time.time() + float(fault['seconds'])
            asyncio.ensure_future(later())
        self.faults.append(fault)
        return fault

    def apply_rewrite_faults(self, vm):
        """A `rewrite` fault: once a config update of VM `vmid` is written, its `key` holds `value` instead of what
        the update wrote (in the pending section when the key is pending there, else in the main section): a PVE
        that stores other than it was asked, for the modules' read-back of every write (docs/pve-semantics.md §46)."""
        for fault in list(self.faults):
            if fault['kind'] != 'rewrite' or int(fault['vmid']) != vm.vmid:
                continue
            key, value = fault['key'], str(fault['value'])
            if vm.pending.get(key) is not None:
                vm.pending[key] = value
            else:
                vm.config[key] = value
            self._consume(fault)

    async def _race(self, fault):
        """Another client acts on the VM just as the matching request arrives: it takes the config `lock`
        (a backup starting: vzdump sets `lock: backup`), holds the config file's flock for `seconds` (a task
        of its own, AbstractConfig.pm lock_config_full, so PVE's tasks wait for it and time out), migrates
        the VM to `target`, or creates the VM `vm` (a seed spec, e.g. a linked clone of a template)."""
        act = fault['act']
        if act == 'vm':
            self._seed_vm(fault['vm'])
            return
        vm = self.vm(int(fault['vmid']))
        if vm is None:
            return
        if act == 'lock':
            self.add_fault({'kind': 'lock', 'vmid': vm.vmid, 'lock': fault['lock'], 'seconds': fault['seconds']})
        elif act == 'migrate':
            vm.node = fault['target']
            self._sync_vm(vm)
        elif act == 'flock':
            holder = ('race', fault['id'])
            await self.acquire(vm, holder, wait=0)
            generation = self.generation
            self.race_holds.append((vm, holder))

            async def later():
                await asyncio.sleep(float(fault['seconds']))
                if generation == self.generation and (vm, holder) in self.race_holds:
                    self.race_holds.remove((vm, holder))
                    self.release(vm, holder)
            asyncio.ensure_future(later())

    # --------------------------------------------------------- middleware

    @web.middleware
    async def _sim_middleware(self, request, handler):
        if request.path.startswith('/_sim/') or request.path == '/_sim':
            return await self._sim_admin(request)
        started = time.monotonic()
        entry = {'method': request.method, 'path': request.path, 'query': mask(dict(request.query)), 'body': {},
                 'status': 0, 'duration_ms': 0.0, 'user': None,
                 'at_ms': round(started * 1000.0, 3)}  # when it arrived (monotonic): windows between requests
        try:
            raw = await request.read()
        except Exception:  # noqa: BLE001 - a broken body is logged as empty
            raw = b''
        entry['body'] = mask(self._body_dict(request, raw))
        entry['agent'] = request.headers.get('User-Agent', '')  # who sent it: a module, the test harness, ...
        self.request_log.append(entry)
        rel = request.path
        for prefix in API_PREFIXES:
            if rel.startswith(prefix):
                rel = rel[len(prefix):] or '/'
        try:
            for fault in list(self.faults):
                if fault['kind'] == 'latency' and self._fault_matches(fault, request, rel):
                    self._consume(fault)
                    await asyncio.sleep(float(fault['ms']) / 1000.0)
            for fault in list(self.faults):
                if fault['kind'] == 'race' and self._fault_matches(fault, request, rel):
                    self._consume(fault)
                    await self._race(fault)
            lose_answer = False
            for fault in list(self.faults):
                if fault['kind'] not in ('http', 'reset') or not self._fault_matches(fault, request, rel):
                    continue
                self._consume(fault)
                if fault['kind'] == 'reset' and fault.get('after'):
                    # The request is handled, then its answer is lost (docs/pve-semantics.md §55).
                    lose_answer = True
                    break
                if fault['kind'] == 'reset':
                    entry['status'] = 0
                    if request.transport is not None:
                        request.transport.abort()
                    raise ConnectionResetError('pvesim: connection dropped by fault')
                status = int(fault['status'])
                message = fault.get('message') or {401: 'authentication failure', 403: 'Permission check failed',
                                                   400: 'Parameter verification failed.'}.get(status, 'internal error')
                response = error(status, message, fault.get('errors'))
                entry['status'] = status
                return response
            try:
                response = await handler(request)
            except web.HTTPException as exc:
                if request.path.startswith(EXTJS + '/'):
                    raise
                response = error(exc.status, exc.reason or 'error')
            except (ConnectionResetError, asyncio.CancelledError):
                raise
            except PveError as e:
                response = error(e.status, e.message, e.errors)
            except Exception as e:  # noqa: BLE001 - never a traceback to the client
                LOG.exception('unhandled error in %s %s', request.method, request.path)
                response = error(500, 'internal error: {0}'.format(e))
            entry['status'] = getattr(response, 'status', 0)
            if lose_answer:
                entry['status'] = 0
                if request.transport is not None:
                    request.transport.abort()
                raise ConnectionResetError('pvesim: answer lost by fault')
            return response
        finally:
            entry['user'] = request.get(USER)
            entry['duration_ms'] = round((time.monotonic() - started) * 1000.0, 3)

    @staticmethod
    def _body_dict(request, raw):
        if not raw:
            return {}
        if request.content_type == 'application/json':
            try:
                data = json.loads(raw)
                return data if isinstance(data, dict) else {'_': data}
            except ValueError:
                return {'_unparsed': True}
        if request.content_type == 'multipart/form-data':
            return {'_multipart': len(raw)}
        try:
            return dict(urllib.parse.parse_qsl(raw.decode(), keep_blank_values=True))
        except UnicodeDecodeError:
            return {'_unparsed': True}

    # ------------------------------------------------------------ handlers

    async def _sim_admin(self, request):
        if not _is_loopback(request.remote):
            return error(403, 'pvesim admin API is loopback only')
        try:
            return await self._sim_dispatch(request)
        except PveError as e:
            return error(e.status, e.message, e.errors)
        except Exception as e:  # noqa: BLE001
            LOG.exception('admin error')
            return error(500, 'internal error: {0}'.format(e))

    async def _sim_dispatch(self, request):
        route = request.match_info['tail'].strip('/')
        method = request.method
        body = {}
        raw = await request.read()
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                raise PveError(400, 'Parameter verification failed.', {'body': 'request body is not JSON'}) from None
            if not isinstance(body, dict):
                raise PveError(400, 'Parameter verification failed.', {'body': 'request body is not a JSON object'})
        answer = web.json_response
        if route == 'reset' and method == 'POST':
            path = seed_path(body.get('seed') or 'default')
            if not os.path.exists(path):
                raise PveError(400, 'Parameter verification failed.', {'seed': 'no such seed: {0}'.format(path)})
            if body.get('key_order_seed') is not None:
                self.key_order_seed = int(body['key_order_seed'])
            try:
                self.load_seed(path)
            except SeedError as e:
                raise PveError(400, 'Parameter verification failed.', {'seed': str(e)}) from None
            self.request_log.clear()
            return answer({'data': {'seed': path, 'key_order_seed': self.key_order_seed}})
        if route == 'key-order':
            if method == 'POST':
                try:
                    self.key_order_seed_set(int(body['seed']))
                except (KeyError, TypeError, ValueError):
                    raise PveError(400, 'Parameter verification failed.', {'seed': 'an integer is required'}) from None
            return answer({'data': {'seed': self.key_order_seed}})
        if route == 'requests':
            if method == 'GET':
                return answer({'data': list(self.request_log)})
            if method == 'DELETE':
                self.request_log.clear()
                return answer({'data': None})
        if route == 'faults':
            if method == 'GET':
                return answer({'data': list(self.faults)})
            if method == 'POST':
                return answer({'data': self.add_fault(body)})
            if method == 'DELETE':
                for fault in self.faults:
                    if fault['kind'] == 'lock':
                        vm = self.vm(int(fault['vmid']))
                        if vm is not None and vm.config.get('lock') == fault['lock']:
                            vm.config.pop('lock', None)
                            vm.lock = None
                self.faults.clear()
                # the other client of a `race` fault lets go of the config flocks it holds
                while self.race_holds:
                    self.release(*self.race_holds.pop())
                return answer({'data': None})
        if route == 'users' and method == 'POST':
            userid = body.get('userid')
            if not isinstance(userid, str) or '@' not in userid or '!' in userid:
                raise PveError(400, 'Parameter verification failed.', {'userid': 'a user id user@realm is required'})
            info = dict((k, body[k]) for k in ('password', 'tokens', 'acl', 'totp') if k in body)
            self.add_user(userid, info)
            return answer({'data': {'userid': userid, 'tokens': sorted((body.get('tokens') or {}).keys())}})
        if route == 'time-scale':
            if method == 'POST':
                try:
                    scale = float(body['scale'])
                except (KeyError, TypeError, ValueError):
                    raise PveError(400, 'Parameter verification failed.', {'scale': 'a number is required'}) from None
                if scale < 0:
                    raise PveError(400, 'Parameter verification failed.', {'scale': 'must be >= 0'})
                self.time_scale = scale
                return answer({'data': {'scale': scale}})
            if method == 'GET':
                return answer({'data': {'scale': self.time_scale}})
        if route == 'world' and method == 'GET':
            return answer({'data': world(self)})  # world.py: the whole state, for a user's assertions
        if route == 'stale-lock' and method == 'POST':
            return answer({'data': self.leave_stale_lock(body)})
        if route == 'state' and method == 'GET':
            return answer({'data': {'seed': self.seed_file, 'time_scale': self.time_scale,
                                    'vms': sorted(vm.vmid for vm in self.vms), 'faults': len(self.faults),
                                    'key_order_seed': self.key_order_seed,
                                    'requests': len(self.request_log)}})
        return error(404, 'no such admin call: {0} /_sim/{1}'.format(method, route))
