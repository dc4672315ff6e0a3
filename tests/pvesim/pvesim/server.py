"""Pvesim: fakepve's FakePve with the qemu config, disk and power paths made faithful to PVE 9.2.

Everything here overrides or extends fakepve 0.5.0 (never copies it). The references in the
docstrings are to docs/pve-semantics.md (§N) and to the PVE sources it cites:
qemu-server 9.2.6 src/PVE/API2/Qemu.pm (Qemu.pm) and src/PVE/QemuServer.pm (QemuServer.pm),
pve-guest-common 6.0.2 src/PVE/AbstractConfig.pm, pve-manager 9.2.11 PVE/API2/Cluster.pm and
PVE/API2/Tasks.pm.
"""

import asyncio
import hashlib
import re
import time
import uuid

from aiohttp import web
from fakepve import schema as pve_schema
from fakepve.model import PveError, TaskError
from fakepve.lxc import random_mac
from fakepve.qemu import NEW_DISK, volume_ref
from fakepve.routing import DIGEST_CHANGED, die, param_error, split_list
from fakepve.server import API, USER, FakePve, ok, params
from fakepve.storage import _is_file, spec_of

from . import drives as d
from .admin import AdminMixin
from .tfa import TfaMixin

CHECKSUM_MISMATCH = 'checksum mismatch (file change by other user?)'
# PVE seconds each task type runs before its effect lands (scaled by time_scale). The default
# time scale (see cli.py) turns 2 PVE seconds into 0.1 real seconds.
TASK_SECS = {'qmcreate': 3, 'qmconfig': 2, 'qmstart': 3, 'qmstop': 2, 'qmshutdown': 3, 'qmreboot': 5,
             'qmreset': 2, 'qmpause': 2, 'qmsuspend': 2, 'qmresume': 2, 'qmdestroy': 3, 'qmclone': 8,
             'qmmove': 8, 'resize': 2, 'qmtemplate': 3, 'qmigrate': 8, 'qmsnapshot': 3}
DEFAULT_TASK_SECS = 2
# Options a running VM takes at once (QemuServer.pm $fast_plug_option, and the cloud-init keys; §6).
FASTPLUG = ('description', 'hookscript', 'lock', 'migrate_downtime', 'migrate_speed', 'name', 'onboot',
            'protection', 'shares', 'startup', 'tags', 'vmstatestorage', 'citype', 'ciuser', 'cipassword',
            'ciupgrade', 'cicustom', 'searchdomain', 'nameserver', 'sshkeys')
# Request parameters of update_vm that are not config keys.
UPDATE_ONLY = ('node', 'vmid', 'delete', 'revert', 'digest', 'force', 'skiplock', 'background_delay',
               'import-working-storage')
CONFIG_PATH = '/nodes/{node}/qemu/{vmid}/config'


def _is_fastplug(key):
    return key in FASTPLUG or bool(re.fullmatch(r'ipconfig\d+', key))


def _agent_enabled(conf):
    value = conf.get('agent')
    if value is None:
        return False
    first = str(value).split(',')[0]
    if first.startswith('enabled='):
        first = first[len('enabled='):]
    return pve_schema.parse_boolean(first) == '1'


def _config_schema():
    return pve_schema.load().paths[CONFIG_PATH]['PUT']['parameters']['properties']


def _key_type(key):
    sch = pve_schema._prop(_config_schema(), key)
    return (sch or {}).get('type')


def option_exists(key):
    """QemuServer.pm option_exists: a config key of the schema (numbered keys within their range)."""
    return key not in UPDATE_ONLY and pve_schema._prop(_config_schema(), key) is not None


def wire_value(key, value):
    """How GET .../config encodes a value (§3): integers/booleans as numbers, `number` keys and memory
    as strings."""
    kind = _key_type(key)
    if key == 'memory':
        return str(value)
    if kind in ('integer', 'boolean'):
        try:
            return int(value)
        except (TypeError, ValueError):
            return value
    if kind == 'number':
        return str(value)
    return value


class Pvesim(TfaMixin, AdminMixin, FakePve):
    """The simulated PVE: fakepve's server with PVE 9.2's qemu semantics, two-factor login (tfa.py)
    and the /_sim admin API."""

    def __init__(self, host='127.0.0.1', port=8006, seed=None, time_scale=0.05):
        super().__init__(user='root@pam', password='secret', host=host, port=port)
        self.time_scale = time_scale
        self._sim_init()
        self.load_seed(seed)

    # ------------------------------------------------------------------ tasks

    async def task(self, node, ttype, tid, user, body, vm=None, lock=True, log=()):
        """fakepve's task, made to take visible time and to honour the task faults of the admin API.

        A task runs TASK_SECS[type] PVE seconds before its effect lands. A clone also holds the
        source's config lock while it runs and shows only `lock: clone` on the target until its disks
        are copied (Qemu.pm clone_vm; §15).
        """
        fault = self.take_task_fault(ttype)
        slow = self.take_slow_fault(ttype)
        generation = self.generation
        source = None
        saved = None
        if ttype == 'qmclone' and vm is not None:
            source = self.vm(int(tid)) if str(tid).isdigit() else None
            saved = dict(vm.config)
            vm.config = {'lock': 'clone'}

        async def wrapped():
            holder = ('clone', id(vm))
            held = False
            try:
                if source is not None:
                    await self.acquire(source, holder)
                    held = True
                if slow is not None:
                    await asyncio.sleep(slow)
                else:
                    await self.pause(self.task_secs.get(ttype, DEFAULT_TASK_SECS))
                if generation != self.generation:
                    raise TaskError('simulator state was reset')
                if saved is not None:
                    vm.config = saved
                if fault is not None:
                    raise TaskError(fault)
                if ttype == 'qmdestroy' and vm is not None and vm.template and not vm.lock:
                    self._check_base_unused(vm)
                note = await body()
                self._after_task(ttype, vm)
                return note
            except TaskError:
                if ttype in ('qmcreate', 'qmclone') and vm is not None and generation == self.generation \
                        and vm.lock in ('create', 'clone') and vm in self.vms:
                    # create/clone failed before or inside the worker: the new config goes (§13, §15)
                    self._free_all_volumes(vm)
                    self.vms.remove(vm)
                raise
            finally:
                if held:
                    self.release(source, holder)
        return await super().task(node, ttype, tid, user, wrapped, vm=vm, lock=lock, log=log)

    def _after_task(self, ttype, vm):
        if ttype == 'qmclone' and vm is not None:
            # The clone gets its own cloud-init drive (Qemu.pm clone_vm → clone_disk).
            for key in sorted(vm.config):
                if d.is_drive(key) and d.is_cloudinit(vm.config[key]):
                    volume, props = d.parse_drive(vm.config[key])
                    sid = volume_ref(volume)[0]
                    volid = self._alloc_cloudinit(sid, vm.vmid)
                    props['size'] = props.get('size', '4M')
                    vm.config[key] = d.print_drive(volid, props)
        if ttype == 'qmdestroy' and vm is not None and vm not in self.vms:
            for value in list(vm.pending.values()):
                if value is not None and d.volume_owner(d.parse_drive(value)[0]) == vm.vmid:
                    self._qm_free(d.parse_drive(value)[0])

    def _qm_alloc(self, sid, vmid, fmt, size, linked_from=None):
        """fakepve's allocation; a linked clone also remembers its base volume (on every storage type)."""
        volid, fmt = super()._qm_alloc(sid, vmid, fmt, size, linked_from=linked_from)
        if linked_from:
            vol = self._qm_volume(volid)
            if vol is not None:
                vol['linked_from'] = linked_from
        return volid, fmt

    def _check_base_unused(self, vm):
        """QemuServer.pm destroy_vm: a template whose base volume a linked clone uses is not destroyed (§14)."""
        for key in sorted(vm.config, key=d.natural):
            if not (d.is_drive(key) or d.UNUSED_KEY.match(key)) or d.is_cdrom(vm.config[key]):
                continue
            volid = d.parse_drive(vm.config[key])[0]
            sid, name = volume_ref(volid or '')
            if sid is None or sid not in self.storages:
                continue
            link = '{0}/{1}'.format(vm.vmid, name.split('/')[-1])
            for other, vol in self.storages[sid].get('volumes', {}).items():
                if other != name and (vol.get('linked_from') == link or other.startswith(name + '/')):
                    raise TaskError("base volume '{0}' is still in use by linked cloned".format(volid))

    def _free_all_volumes(self, vm):
        for key, value in list(vm.config.items()) + list(vm.pending.items()):
            if value is None or not (d.is_drive(key) or d.UNUSED_KEY.match(key)):
                continue
            volume = d.parse_drive(value)[0]
            if d.volume_owner(volume) == vm.vmid:
                self._qm_free(volume)

    def _get_task(self, request):
        """Tasks.pm: a malformed UPID or an unknown one is a 400 on `upid` (§17)."""
        upid = request.match_info['upid']
        task = self.tasks.get(upid)
        if task is None or task['node'] != request.match_info['node']:
            if not re.fullmatch(r'UPID:[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?:[0-9A-Fa-f]{8}:[0-9A-Fa-f]{8,9}:'
                                r'[0-9A-Fa-f]{8}:[^:\s]+:[^:\s]*:[^:\s]+:', upid):
                raise param_error(upid='unable to parse worker upid')
            raise param_error(upid='no such task')
        user = request[USER]
        if not self._task_owner(user, task):
            self.require(user, '/nodes/' + task['node'], 'Sys.Audit')
        return task

    async def _task_log(self, request):
        """Tasks.pm read_task_log: [{n, t}] from 1, `limit` default 50, and the line count as `total`."""
        p = self._verify(request, await params(request))
        task = self._get_task(request)
        lines = []
        for entry in task['log']:
            lines.extend(str(entry).split('\n'))
        start, limit = p.get('start', 0), p.get('limit', 50)
        data = [{'n': n + 1, 't': t} for n, t in enumerate(lines)][start:start + limit]
        return web.json_response({'data': data, 'total': len(lines)})

    # ---------------------------------------------------------- config state

    @staticmethod
    def _forced(vm):
        if not hasattr(vm, 'pending_force'):
            vm.pending_force = set()
        return vm.pending_force

    def _digest(self, vm):
        """SHA1 of the whole config file: main section, [PENDING] and snapshots (§7, D14)."""
        lines = ['{0}: {1}'.format(k, vm.config[k]) for k in sorted(vm.config)]
        if vm.pending:
            lines.append('[PENDING]')
            lines += ['{0}: {1}'.format(k, v) for k, v in sorted(vm.pending.items()) if v is not None]
            dels = ['!' + k if k in self._forced(vm) else k for k, v in sorted(vm.pending.items()) if v is None]
            if dels:
                lines.append('delete: ' + ','.join(dels))
        for name in sorted(vm.snapshots):
            lines.append('[{0}]'.format(name))
            lines += ['{0}: {1}'.format(k, v) for k, v in sorted(vm.snapshots[name].items())]
        return hashlib.sha1(('\n'.join(lines) + '\n').encode()).hexdigest()

    def _sync_vm(self, vm):
        """Keep fakepve's VM attributes in step with the config (D17: `lock` in the config locks)."""
        vm.lock = vm.config.get('lock') or None
        vm.name = vm.config.get('name') or 'VM {0}'.format(vm.vmid)

    def _add_unused(self, vm, volid):
        """AbstractConfig.pm add_unused_volume: lowest free unusedN, no duplicates, at most 256."""
        for key, value in vm.config.items():
            if d.UNUSED_KEY.match(key) and d.parse_drive(value)[0] == volid:
                return key
        for n in range(256):
            key = 'unused{0}'.format(n)
            if key not in vm.config:
                vm.config[key] = volid
                return key
        raise die('Too many unused volumes - please delete them first.')

    def _register_unused(self, vm, value):
        """QemuServer.pm vmconfig_register_unused_drive: cloud-init is freed, owned disks become unusedN."""
        volume, _props = d.parse_drive(value)
        if d.is_cloudinit(value):
            self._qm_free(volume)
            return None
        if d.is_cdrom(value):
            return None
        if d.volume_owner(volume) == vm.vmid and volume_ref(volume)[0] in self.storages:
            return self._add_unused(vm, volume)
        return None

    def _delete_or_detach(self, vm, value, force):
        """QemuServer.pm vmconfig_delete_or_detach_drive: free with force, else register as unused."""
        if value is None or d.is_cdrom(value) and not d.is_cloudinit(value):
            return
        volume = d.parse_drive(value)[0]
        if force:
            if d.volume_owner(volume) == vm.vmid:
                self._qm_free(volume)
        else:
            self._register_unused(vm, value)

    def _apply_pending(self, vm, errors=None):
        """QemuServer.pm vmconfig_apply_pending: every pending delete and value goes to the config (§6)."""
        conf, pend, forced = vm.config, vm.pending, self._forced(vm)
        for key in sorted(pend, key=d.natural):
            value = pend[key]
            if value is None:
                if d.is_drive(key):
                    self._delete_or_detach(vm, conf.get(key), key in forced)
                conf.pop(key, None)
            else:
                old = conf.get(key)
                if d.is_drive(key) and old is not None and not d.is_cdrom(old) \
                        and d.parse_drive(old)[0] != d.parse_drive(value)[0]:
                    self._register_unused(vm, old)
                conf[key] = value
        pend.clear()
        forced.clear()
        self._sync_vm(vm)

    def _cleanup_pending(self, vm):
        """AbstractConfig.pm cleanup_pending: drop values equal to the current ones and deletes of unset keys."""
        conf, pend, forced = vm.config, vm.pending, self._forced(vm)
        for key in list(pend):
            if pend[key] is not None and key in conf and str(conf[key]) == str(pend[key]):
                del pend[key]
            elif pend[key] is None and key not in conf:
                del pend[key]
                forced.discard(key)

    # ------------------------------------------------------------- GET config

    async def _config_get(self, request):
        """Qemu.pm vm_config: pending overlaid unless current=1; digest of the whole file (§7, D3)."""
        vm = self._vm(request, 'VM.Audit')
        v = self._verify(request, await params(request))
        if v.get('current') and v.get('snapshot'):
            msg = "cannot use 'snapshot' parameter with 'current'"
            raise param_error(snapshot=msg, current=msg)
        if v.get('snapshot'):
            snap = vm.snapshots.get(v['snapshot'])
            if snap is None:
                raise die("snapshot '{0}' does not exist".format(v['snapshot']))
            cfg = dict(snap)
        else:
            cfg = dict(vm.config)
            if not v.get('current'):
                for key, value in vm.pending.items():
                    if value is None:
                        cfg.pop(key, None)
                    else:
                        cfg[key] = value
        out = dict((k, wire_value(k, x)) for k, x in cfg.items())
        if 'cipassword' in out:
            out['cipassword'] = '**********'
        out['digest'] = self._digest(vm)
        return ok(out)

    async def _pending(self, request):
        """GuestHelpers.pm config_with_pending_array, with the digest row and `delete: 2` (§7, D12)."""
        vm = self._vm(request, 'VM.Audit')
        self._verify(request, await params(request))
        forced = self._forced(vm)
        conf = dict(vm.config, digest=self._digest(vm))
        data = []
        for key in sorted(conf):
            item = {'key': key, 'value': wire_value(key, conf[key])}
            if key in vm.pending:
                if vm.pending[key] is None:
                    item['delete'] = 2 if key in forced else 1
                else:
                    item['pending'] = wire_value(key, vm.pending[key])
            data.append(item)
        for key in sorted(vm.pending):
            if key in conf:
                continue
            if vm.pending[key] is None:
                data.append({'key': key, 'delete': 2 if key in forced else 1})
            else:
                data.append({'key': key, 'pending': wire_value(key, vm.pending[key])})
        for item in data:
            if item['key'] == 'cipassword':
                for field in ('value', 'pending'):
                    if field in item:
                        item[field] = '**********'
        return ok(data)

    # ---------------------------------------------------------- update config

    def _check_config_perms(self, user, vm, keys, values):
        for key in keys:
            priv = self._config_priv(key)
            if priv == 'root':
                if user != 'root@pam':
                    raise PveError(403, "only root can set '{0}' config".format(key))
            elif key.startswith(('ide', 'sata', 'scsi')) and 'media=cdrom' in str(values.get(key, '')):
                self.require(user, '/vms/{0}'.format(vm.vmid), 'VM.Config.CDROM')
            elif _is_fastplug(key) and key.startswith(('ci', 'ipconfig', 'searchdomain', 'nameserver', 'sshkeys')):
                self.require(user, '/vms/{0}'.format(vm.vmid), 'VM.Config.Cloudinit')
            else:
                self.require(user, '/vms/{0}'.format(vm.vmid), priv)

    def _update_prepare(self, vm, user, v):
        """Qemu.pm update_vm_api, the checks before the config is written (§5), in PVE's order."""
        p = dict((k, x) for k, x in v.items() if k not in ('node', 'vmid'))
        digest = p.pop('digest', None)
        p.pop('background_delay', None)
        p.pop('import-working-storage', None)
        skiplock = p.pop('skiplock', None)
        if skiplock and user != 'root@pam':
            raise param_error(skiplock='Only root may use this option.')
        delete_str = p.pop('delete', None)
        revert_str = p.pop('revert', None)
        force = p.pop('force', None)
        if not delete_str and not revert_str and not p:
            raise die('no options specified')
        if p.get('cdrom') is not None:
            # resolve_cdrom_alias
            value = str(p.pop('cdrom'))
            p['ide2'] = value if 'media=' in value else value + ',media=cdrom'
        revert = []
        for opt in split_list(revert_str):
            if not option_exists(opt):
                raise param_error(revert="unknown option '{0}'".format(opt))
            if opt in p:
                raise param_error(delete="you can't use '-{0}' and -revert {0}' at the same time".format(opt))
            revert.append(opt)
        deletes = []
        for opt in split_list(delete_str):
            if opt == 'cdrom':
                opt = 'ide2'
            if opt in p:
                raise param_error(delete="you can't use '-{0}' and -delete {0}' at the same time".format(opt))
            if opt in revert:
                raise param_error(revert="you can't use '-delete {0}' and -revert {0}' at the same time".format(opt))
            if not option_exists(opt):
                raise param_error(delete="unknown option '{0}'".format(opt))
            deletes.append(opt)
        for key in sorted(p):
            if d.is_drive(key):
                p[key] = d.canon_drive(p[key])
                self._qm_check_drive(user, vm.vmid, None, key, str(p[key]), None)
            elif d.NET_KEY.match(key):
                # parse_net + print_net: a NIC without a MAC gets a new one, also on update (§9, D2)
                p[key] = d.canon_net(p[key], random_mac)
            elif key == 'tags':
                p[key] = d.normalise_tags(p[key])
            elif key == 'vmgenid' and str(p[key]) == '1':
                # Qemu.pm update_vm_api: vmgenid=1 asks for a fresh generation id
                p[key] = str(uuid.uuid4())
            elif _key_type(key) == 'number':
                p[key] = str(v[key]) if not isinstance(v[key], float) else repr(v[key])
        self._check_config_perms(user, vm, list(p) + deletes + revert, p)
        if 'boot' in p and str(p['boot']).startswith('order='):
            known = set(vm.devices({**vm.config, **{k: x for k, x in vm.pending.items() if x is not None}, **p}))
            for dev in str(p['boot'])[len('order='):].split(';'):
                if dev and dev not in known:
                    raise param_error(boot="invalid bootorder: device '{0}' does not exist'".format(dev))
        return {'p': p, 'deletes': deletes, 'revert': revert, 'force': bool(force), 'digest': digest,
                'skiplock': bool(skiplock)}

    def _update_check_state(self, vm, plan):
        """The checks on the loaded config: digest, lock, balloon (§5.1 step 8, D10)."""
        if plan['digest'] and plan['digest'] != self._digest(vm):
            raise die(CHECKSUM_MISMATCH)
        if vm.lock and not plan['skiplock']:
            raise die('VM is locked ({0})'.format(vm.lock))
        p = plan['p']
        if p.get('memory') or p.get('balloon') is not None:
            # Qemu.pm $load_and_check_config: checked whenever memory or balloon is set
            memory = p.get('memory') or vm.pending.get('memory') or vm.config.get('memory')
            maxmem = d.current_memory(memory)
            balloon = p['balloon'] if p.get('balloon') is not None else \
                (vm.pending.get('balloon') or vm.config.get('balloon'))
            if balloon and int(balloon) > maxmem:
                raise die('balloon value too large (must be smaller than assigned memory)')

    def _update_apply(self, vm, plan):
        """Qemu.pm update_vm_api $updatefn: deletes, sets, cleanup_pending, then hotplug or apply (§5, §6).

        Returns the warnings. Raises a 400 PveError for hotplug/apply problems (after writing)."""
        conf, pend, forced = vm.config, vm.pending, self._forced(vm)
        p, deletes, force = dict(plan['p']), list(plan['deletes']), plan['force']
        warnings = []
        for opt in plan['revert']:
            if opt in conf:
                p[opt] = conf[opt]
            elif pend.get(opt) is not None:
                deletes.append(opt)
        modified = set()
        # Qemu.pm update_vm_api: the boot order of the main section; a deleted device leaves it and a
        # new CD-ROM joins it, both as a pending `boot` (§5)
        bootorder = d.boot_order(conf.get('boot'))
        for opt in deletes:
            if opt not in conf and pend.get(opt) is None:
                warnings.append("cannot delete '{0}' - not set in current configuration!".format(opt))
                continue
            modified.add(opt)
            if opt in bootorder:
                bootorder = [dev for dev in bootorder if dev != opt]
                pend['boot'] = d.print_bootorder(bootorder)
                forced.discard('boot')
                modified.add('boot')
            if d.UNUSED_KEY.match(opt):
                volume = d.parse_drive(conf.get(opt))[0]
                if conf.get('protection') in (1, '1'):
                    raise die("can't remove unused disk '{0}' - protection mode enabled".format(volume))
                if volume and d.volume_owner(volume) == vm.vmid:
                    self._qm_free(volume)
                conf.pop(opt, None)
                pend.pop(opt, None)
            elif opt == 'tags':
                conf.pop(opt, None)
                pend.pop(opt, None)
            elif d.is_drive(opt):
                if conf.get('protection') in (1, '1'):
                    raise die("can't remove drive '{0}' - protection mode enabled".format(opt))
                if pend.get(opt) is not None:
                    self._register_unused(vm, pend[opt])
                pend[opt] = None
                (forced.add if force else forced.discard)(opt)
            else:
                pend[opt] = None
                (forced.add if force else forced.discard)(opt)
        made = []
        try:
            for opt in sorted(p, key=d.natural):
                modified.add(opt)
                value = p[opt]
                if pend.get(opt) is not None and str(pend[opt]) == str(value):
                    continue
                if d.is_drive(opt):
                    if re.fullmatch(r'(?:[^/:\s]+:)?cloudinit', d.parse_drive(value)[0] or ''):
                        # Qemu.pm create_disks: one cloud-init drive per VM
                        for other, there in sorted(list(conf.items()) + list(pend.items())):
                            if other != opt and d.is_drive(other) and there is not None and d.is_cloudinit(there):
                                raise die("{0} - cloud-init drive is already attached at '{1}'".format(opt, other))
                    # create_disks: STORAGE:N is allocated now, even if the change stays pending (§8.9, D1)
                    new_value, volids = self._qm_new_drive(vm.vmid, opt, str(value), None)
                    made.extend(volids)
                    if volids and str(conf.get('template', '0')) == '1' and not d.is_cloudinit(new_value):
                        # create_disks: on a template the new volume becomes a base volume
                        volume, props = d.parse_drive(new_value)
                        base = self._qm_rename_volume(volume)
                        made[made.index(volume)] = base
                        new_value = d.print_drive(base, props)
                    old_pending = pend.get(opt)
                    if old_pending is not None and d.parse_drive(old_pending)[0] != d.parse_drive(new_value)[0]:
                        self._register_unused(vm, old_pending)
                    pend[opt] = new_value
                    # drive_is_cdrom($drive, 1): a cloud-init drive is not a CD-ROM here
                    if bootorder and d.is_cdrom(new_value) and not d.is_cloudinit(new_value) and opt not in bootorder:
                        bootorder.append(opt)
                        pend['boot'] = d.print_bootorder(bootorder)
                        forced.discard('boot')
                        modified.add('boot')
                elif opt == 'cipassword':
                    # hashed and written straight to the main section (Qemu.pm update_vm_api)
                    conf[opt] = '$5$pvesim$' + hashlib.sha256(str(value).encode()).hexdigest()[:43]
                    if pend.get(opt, 0) is None:
                        del pend[opt]
                elif opt == 'boot' and d.boot_order(value):
                    # a new boot order drops the legacy bootdisk (Qemu.pm update_vm_api)
                    pend[opt] = d.print_bootorder(d.boot_order(value))
                    if conf.get('bootdisk') is not None:
                        pend['bootdisk'] = None
                else:
                    pend[opt] = value
                # remove_from_pending_delete: the new value replaces any pending delete
                forced.discard(opt)
        except PveError:
            for volid in made:
                self._qm_free(volid)
            raise
        self._cleanup_pending(vm)
        errors = {}
        if pend:
            if vm.status == 'running':
                self._hotplug_pending(vm, modified, errors)
            else:
                self._apply_pending(vm, errors)
        self._sync_vm(vm)
        if errors:
            raise PveError(400, 'Parameter verification failed.', errors)
        return warnings

    def _usb_hotplug_ok(self, vm, feats):
        ostype = str(vm.config.get('ostype', 'other'))
        return 'usb' in feats and (ostype == 'l26' or ostype in ('win8', 'win10', 'win11'))

    def _hotplug_pending(self, vm, modified, errors):
        """QemuServer.pm vmconfig_hotplug_pending: only the keys of this request, by `hotplug` (§6, D4)."""
        conf, pend, forced = vm.config, vm.pending, self._forced(vm)
        feats = d.hotplug_features(conf.get('hotplug'))
        for opt in sorted(modified, key=d.natural):
            if opt not in pend:
                continue
            value = pend[opt]
            applied = False
            try:
                if value is None:
                    applied = self._hot_delete_ok(vm, opt, feats)
                    if applied and d.is_drive(opt):
                        self._delete_or_detach(vm, conf.get(opt), opt in forced)
                else:
                    applied = self._hot_set_ok(vm, opt, value, feats)
            except PveError as e:
                errors[opt] = 'hotplug problem - {0}'.format(e.message)
                continue
            if applied:
                if value is None:
                    conf.pop(opt, None)
                    forced.discard(opt)
                else:
                    conf[opt] = value
                del pend[opt]

    def _hot_delete_ok(self, vm, opt, feats):
        conf = vm.config
        if _is_fastplug(opt):
            return True
        if opt == 'hotplug':
            return not re.search(r'cpu|memory', str(conf.get('hotplug', '')))
        if opt == 'tablet':
            return 'usb' in feats
        if d.USB_KEY.match(opt):
            return self._usb_hotplug_ok(vm, feats)
        if opt == 'vcpus':
            return 'cpu' in feats
        if opt == 'balloon':
            return str(conf.get('balloon', '')) != '0'
        if d.NET_KEY.match(opt):
            return 'network' in feats
        if d.is_drive(opt):
            return 'disk' in feats and opt.startswith(('scsi', 'virtio'))
        if opt == 'memory':
            return 'memory' in feats
        return opt in ('cpuunits', 'cpulimit')

    def _check_bridge(self, net):
        """PVE::Network tap_plug: plugging a NIC into a bridge the node lacks fails (hotplug and start)."""
        bridge = net.get('bridge')
        if bridge and bridge not in self.bridges:
            raise die("bridge '{0}' does not exist".format(bridge))

    def _hot_set_ok(self, vm, opt, value, feats):
        conf = vm.config
        if _is_fastplug(opt):
            return True
        if opt == 'hotplug':
            return not (re.search(r'cpu|memory', str(conf.get('hotplug', ''))) or re.search(r'cpu|memory', str(value)))
        if opt == 'tablet':
            return 'usb' in feats
        if d.USB_KEY.match(opt):
            return self._usb_hotplug_ok(vm, feats)
        if opt == 'vcpus':
            return 'cpu' in feats
        if opt == 'balloon':
            old = conf.get('balloon')
            return not ((old is None or str(old) != '0') and str(value) == '0') and not (str(old) == '0' and str(value) != '0')
        if opt in ('cpuunits', 'cpulimit'):
            return True
        if opt == 'agent':
            strip = lambda text: dict((k, x) for k, x in (part.partition('=')[::2] for part in str(text or '').split(','))
                                      if k != 'fstrim_cloned_disks')
            return strip(conf.get('agent')) == strip(value)
        if d.NET_KEY.match(opt):
            old = conf.get(opt)
            after = d.parse_net(value)
            if old is None:
                if 'network' in feats:
                    self._check_bridge(after)
                return 'network' in feats
            before = d.parse_net(old)
            replug = any(before.get(k) != after.get(k) for k in d.NET_REPLUG_OPTS) \
                or (('bridge' in before) != ('bridge' in after))
            if replug and 'network' not in feats:
                return False
            if replug or before.get('bridge') != after.get('bridge'):
                self._check_bridge(after)
            return True
        if d.is_drive(opt):
            if opt in ('efidisk0', 'tpmstate0') or d.is_cloudinit(value):
                return False
            old = conf.get(opt)
            if old is not None:
                old_vol, old_props = d.parse_drive(old)
                new_vol, new_props = d.parse_drive(value)
                if (old_props.get('media') or 'disk') != (new_props.get('media') or 'disk'):
                    raise die('unable to change media type')
                if d.is_cdrom(old):
                    return True
                if new_vol != old_vol:
                    if 'disk' not in feats:
                        return False
                    self._register_unused(vm, old)
                    return True
                return not any(old_props.get(k) != new_props.get(k) for k in d.DISK_COLD_OPTS)
            return 'disk' in feats and not opt.startswith(('ide', 'sata'))
        if opt == 'memory':
            return 'memory' in feats
        return False

    async def _lock_config(self, vm):
        try:
            await self.acquire(vm, 'config')
        except TaskError as e:
            raise PveError(500, str(e)) from e

    async def _config_put(self, request):
        """Qemu.pm update_vm (PUT): synchronous, returns null (§5)."""
        p = await params(request)
        v = self._verify(request, p)
        vm = self._vm(request)
        user = request[USER]
        self.need_quorum()
        plan = self._update_prepare(vm, user, v)
        await self._lock_config(vm)
        try:
            self._update_check_state(vm, plan)
            self._update_apply(vm, plan)
        finally:
            self.release(vm, 'config')
        return ok()

    async def _config_post(self, request):
        """Qemu.pm update_vm_async (POST): the same checks as HTTP errors, then a `qmconfig` task (§5, D10).

        Qemu.pm update_vm_api runs `$load_and_check_config->(0)` "before forking/locking" (no config
        lock: a task holding it does not delay the answer), and the worker runs them again under
        lock_config in `$updatefn` (`$load_and_check_config->(1)`): a digest that was current when
        the POST was answered but went stale before the task got the lock fails the task with
        `checksum mismatch (file change by other user?)`, and nothing is written."""
        p = await params(request)
        v = self._verify(request, p)
        vm = self._vm(request)
        user = request[USER]
        self.need_quorum()
        plan = self._update_prepare(vm, user, v)
        self._update_check_state(vm, plan)

        async def body():
            try:
                self._update_check_state(vm, plan)
                self._update_apply(vm, plan)
            except PveError as e:
                text = '{0}'.format(e.message)
                if e.errors:
                    text = '{0} {1}\n'.format(e.status, e.message) + ''.join(
                        '{0}: {1}\n'.format(k, str(x).rstrip('\n')) for k, x in sorted(e.errors.items()))
                raise TaskError(' '.join(text.rstrip('\n').split('\n'))) from e
        upid = await self.task(vm.node, 'qmconfig', vm.vmid, user, body, vm=vm)
        delay = v.get('background_delay')
        if delay:
            deadline = time.monotonic() + float(delay) * (self.time_scale or 0)
            task = self.tasks[upid]
            while task['status'] == 'running' and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            if task['status'] != 'running':
                if task['exitstatus'] == 'OK':
                    return ok(None)
                raise die('failed to update VM {0}: {1}'.format(vm.vmid, task['exitstatus']))
        return ok(upid)

    # ----------------------------------------------------------- disk calls

    def _routes_pvesim(self):
        one = '/nodes/{node}/qemu/{vmid}'
        return [('PUT', one + '/resize', self._sim_resize), ('POST', one + '/move_disk', self._sim_move_disk),
                ('PUT', one + '/unlink', self._sim_unlink), ('GET', '/nodes/{node}/network', self._sim_network),
                ('POST', one + '/migrate', self._sim_migrate)]

    def _vm_on(self, node, vmid):
        vm = self.vm(int(vmid))
        return vm if vm is not None and vm.node == node else None

    async def _sim_unlink(self, v, user):
        """Qemu.pm unlink: update_vm_api with delete=<idlist>, force, synchronous; null (§11)."""
        vm = self.find(v['node'], v['vmid'])
        values = {'delete': v['idlist']}
        if v.get('force'):
            values['force'] = 1
        plan = self._update_prepare(vm, user, values)
        await self._lock_config(vm)
        try:
            self._update_check_state(vm, plan)
            self._update_apply(vm, plan)
        finally:
            self.release(vm, 'config')
        return None

    async def _sim_resize(self, v, user):
        """Qemu.pm resize_vm: a `resize` task; every check runs inside it (§10, D7)."""
        node, vmid = v['node'], int(v['vmid'])
        if v.get('skiplock') and user != 'root@pam':
            raise param_error(skiplock='Only root may use this option.')
        self.need_quorum()
        disk, sizestr, digest = v['disk'], str(v['size']), v.get('digest')

        async def body():
            try:
                vm = self.find(node, vmid)
            except PveError as e:
                raise TaskError(e.message) from e
            if digest and digest != self._digest(vm):
                raise TaskError(CHECKSUM_MISMATCH)
            if vm.lock and not v.get('skiplock'):
                raise TaskError('VM is locked ({0})'.format(vm.lock))
            value = vm.config.get(disk)
            if value is None:
                raise TaskError("disk '{0}' does not exist".format(disk))
            volume, props = d.parse_drive(value)
            if not volume:
                raise TaskError("disk '{0}' has no associated volume".format(disk))
            if d.is_cdrom(value):
                raise TaskError("you can't resize a cdrom")
            sid = volume_ref(volume)[0]
            if sid:
                try:
                    self.require(user, '/storage/' + sid, 'Datastore.AllocateSpace')
                except PveError as e:
                    raise TaskError(e.message) from e
            vol = self._qm_volume(volume)
            size = int(vol['size']) if vol and vol.get('size') is not None else d.parse_size(props.get('size'))
            if size is None:
                raise TaskError("Could not determine current size of volume '{0}'".format(volume))
            found = re.fullmatch(r'(\+)?(\d+(?:\.\d+)?)([KMGT])?', sizestr)
            amount = float(found.group(2)) * d.SIZE_UNITS.get(found.group(3) or '', 1)
            newsize = int(size + amount if found.group(1) else amount)
            if newsize < size:
                raise TaskError('shrinking disks is not supported')
            if newsize == size:
                return None
            if vol is not None:
                store = self.storages.get(sid, {})
                if 'avail' in store:
                    store['avail'] -= newsize - size
                vol['size'] = newsize
            props['size'] = d.format_size(newsize)
            vm.config[disk] = d.print_drive(volume, props)
            return 'Image resized.'
        return await self.task(node, 'resize', vmid, user, body, vm=self._vm_on(node, vmid))

    def _target_format(self, sid, want, current):
        store = self.storages[sid]
        spec = spec_of(store) or {}
        supported = spec.get('formats') or ['raw']
        default = store.get('format') or spec.get('format') or 'raw'
        # QemuServer.pm resolve_dst_disk_format: "test if requested format is supported - else use default"
        if want:
            return want if want in supported else default
        if current in supported:
            return current
        return default

    async def _sim_move_disk(self, v, user):
        """Qemu.pm move_vm_disk: checks before the fork, then a `qmmove` task (§12, D7, D16)."""
        node, vmid, disk = v['node'], int(v['vmid']), v['disk']
        storage, target_vmid = v.get('storage'), v.get('target-vmid')
        if storage is None and target_vmid is None:
            msg = "both 'storage' and 'target-vmid' missing, either needs to be set"
            raise param_error(**{'storage': msg, 'target-vmid': msg})
        if storage is not None and target_vmid is not None:
            msg = "either set 'storage' or 'target-vmid', but not both"
            raise param_error(**{'storage': msg, 'target-vmid': msg})
        self.need_quorum()
        if target_vmid is not None:
            return await self._sim_reassign(v, user)
        vm = self.find(node, vmid)
        self._check_lock(vm)
        if v.get('digest') and v['digest'] != self._digest(vm):
            raise die(DIGEST_CHANGED)
        value = vm.config.get(disk)
        if value is None:
            raise die("disk '{0}' does not exist".format(disk))
        volume, props = d.parse_drive(value)
        if not volume:
            raise die("disk '{0}' has no associated volume".format(disk))
        if d.is_cdrom(value):
            raise die("you can't move a cdrom")
        old_sid = volume_ref(volume)[0]
        old_vol = self._qm_volume(volume) or {}
        fmt = v.get('format')
        if old_sid == storage and (not fmt or fmt == old_vol.get('format')):
            raise die("you can't move to the same storage with same format")
        if storage not in self.storages:
            raise die("storage '{0}' does not exist".format(storage))
        store = self.storages[storage]
        if 'images' not in split_list(store.get('content')) or str(store.get('disable', 0)) == '1':
            raise param_error(storage="storage '{0}' does not support vm images".format(storage))
        self.require(user, '/storage/' + storage, 'Datastore.AllocateSpace')
        delete = bool(v.get('delete'))
        if delete and any(volume == d.parse_drive(s.get(k))[0] for s in vm.snapshots.values() for k in s
                          if d.is_drive(k)):
            raise die("you can't move a disk with snapshots and delete the source")

        async def body():
            current = vm.config.get(disk)
            cur_volume, cur_props = d.parse_drive(current)
            src = self._qm_volume(cur_volume) or {}
            size = int(src.get('size') or d.parse_size(cur_props.get('size')) or 0)
            target_fmt = self._target_format(storage, fmt, src.get('format'))
            try:
                newvol, _ = self._qm_alloc(storage, vmid, target_fmt, size)
            except PveError as e:
                raise TaskError('storage migration failed: {0}'.format(e.message)) from e
            lines = ["copying volume '{0}' from current storage '{1}' to target storage '{2}'".format(
                cur_volume, volume_ref(cur_volume)[0], storage),
                "create full clone of drive {0} ({1})".format(disk, cur_volume)]
            cur_props.pop('format', None)
            cur_props['size'] = d.format_size(size)
            if str(vm.config.get('template', 0)) == '1':
                # move_vm_disk: "convert moved disk to base if part of template"
                newvol = self._qm_rename_volume(newvol)
            vm.config[disk] = d.print_drive(newvol, cur_props)
            if delete:
                lines.append("removing source volume '{0}' after successful copy".format(cur_volume))
                if d.volume_owner(cur_volume) == vmid:
                    self._qm_free(cur_volume)
            else:
                key = self._add_unused(vm, cur_volume)
                lines.append("adding source volume '{0}' as '{1}' to config".format(cur_volume, key))
            return '\n'.join(lines)
        return await self.task(node, 'qmmove', vmid, user, body, vm=vm)

    def _reassign_checks(self, v, user):
        """Qemu.pm move_vm_disk $load_and_check_reassign_configs, in PVE's order and wording (§12)."""
        node, vmid, disk = v['node'], int(v['vmid']), v['disk']
        target = int(v['target-vmid'])
        target_disk = v.get('target-disk') or disk
        if self.vm(vmid) is None:
            raise die('could not find VM {0}'.format(vmid))
        if self.vm(target) is None:
            raise die('could not find target VM {0}'.format(target))
        if self.vm(vmid).node != self.vm(target).node:
            raise die('Both VMs need to be on the same node ({0} != {1})'.format(self.vm(vmid).node,
                                                                                  self.vm(target).node))
        src = self.find(node, vmid)
        self._check_lock(src)
        dst = self.find(node, target)
        self._check_lock(dst)
        if src.template or dst.template or str(src.config.get('template', 0)) == '1' \
                or str(dst.config.get('template', 0)) == '1':
            raise die("Can't move disks from or to template VMs")
        if v.get('digest') and v['digest'] != self._digest(src):
            raise die('VM {0}: {1}'.format(vmid, DIGEST_CHANGED))
        if v.get('target-digest') and v['target-digest'] != self._digest(dst):
            raise die('VM {0}: {1}'.format(target, DIGEST_CHANGED))
        value = src.config.get(disk)
        if value is None:
            raise die("Disk '{0}' for VM '{1}' does not exist".format(disk, vmid))
        if dst.config.get(target_disk):
            raise die("Target disk key '{0}' is already in use for VM '{1}'".format(target_disk, target))
        volume = d.parse_drive(value)[0]
        if not volume:
            raise die("disk '{0}' has no associated volume".format(disk))
        if d.is_cdrom(value) and not d.is_cloudinit(value):
            raise die("CD drive contents can't be moved to another VM")
        sid = volume_ref(volume)[0]
        if sid is None:
            raise die("Volume '{0}' not managed by PVE".format(volume))
        if any(volume == d.parse_drive(snap.get(k))[0] for snap in src.snapshots.values() for k in snap
               if d.is_drive(k)):
            raise die("Can't move disk used by a snapshot to another VM")
        if src.status == 'running' and not d.UNUSED_KEY.match(disk):
            raise die('Cannot move disk to another VM while the source VM is running - detach first')
        return src, dst, target, target_disk, sid

    async def _sim_reassign(self, v, user):
        """Qemu.pm move_vm_disk with target-vmid: checks before the fork, then the volume is renamed for the
        target, leaves the source (and its boot order) and is added to the target by update_vm_api (§12)."""
        node, vmid, disk = v['node'], int(v['vmid']), v['disk']
        if int(v['target-vmid']) == vmid:
            raise param_error(**{'target-vmid': 'must be different than source VMID to reassign disk'})
        src, dst, target, target_disk, sid = self._reassign_checks(v, user)
        self.require(user, '/storage/' + sid, 'Datastore.AllocateSpace')
        tid = '{0}-{1}>{2}-{3}'.format(vmid, disk, target, target_disk)

        async def body():
            try:
                src_, dst_, _t, _k, _s = self._reassign_checks(v, user)
            except PveError as e:
                raise TaskError(e.message) from e
            lines = ["reassign disk '{0}' from VM '{1}' as '{2}' to VM '{3}'".format(disk, vmid, target_disk, target)]
            volume, props = d.parse_drive(src.config.get(disk))
            sid_, name = volume_ref(volume)
            store = self.storages[sid_]
            vol = store.setdefault('volumes', {}).pop(name, None) or {}
            fmt = vol.get('format') or 'raw'
            newname = self._qm_free_name(sid_, target, fmt)
            if _is_file(store):
                newname = '{0}/{1}'.format(target, newname)
            vol['vmid'] = target
            store['volumes'][newname] = vol
            newvol = '{0}:{1}'.format(sid_, newname)
            order = d.boot_order(src.config.get('boot'))
            if disk in order:
                lines.append("removing disk '{0}' from boot order config".format(disk))
                src.config['boot'] = d.print_bootorder([dev for dev in order if dev != disk])
            del src.config[disk]
            lines.append("removing disk '{0}' from VM '{1}' config".format(disk, vmid))
            if d.UNUSED_KEY.match(target_disk):
                dst.config[target_disk] = newvol
            else:
                values = {target_disk: d.print_drive(newvol, props)}
                if v.get('target-digest'):
                    values['digest'] = v['target-digest']
                try:
                    plan = self._update_prepare(dst, user, values)
                    self._update_check_state(dst, plan)
                    self._update_apply(dst, plan)
                except PveError as e:
                    text = e.message
                    if e.errors:
                        text = '{0} {1} '.format(e.status, e.message) + ' '.join(
                            '{0}: {1}'.format(k, str(x).rstrip('\n')) for k, x in sorted(e.errors.items()))
                    raise TaskError(text) from e
            self._sync_vm(src)
            return '\n'.join(lines)
        return await self.task(node, 'qmmove', tid, user, body, vm=src)

    # -------------------------------------------------------------- migrate

    def _migrate_local_volumes(self, vm):
        """QemuMigrate.pm scan_local_volumes: the config's volumes on storage that is not shared, each with
        how it is referenced ('attached', 'unused' or 'generated' for cloud-init), and the errors PVE logs."""
        found, errors = {}, {}
        for key in sorted(vm.config, key=d.natural):
            value = vm.config[key]
            if not (d.is_drive(key) or d.UNUSED_KEY.match(key)):
                continue
            volume = d.parse_drive(value)[0]
            if not volume or volume == 'none':
                continue
            if volume == 'cdrom':
                # a physical drive on the host: "can't migrate local cdrom drive"
                errors[None] = "can't migrate local cdrom drive"
                continue
            sid = volume_ref(volume)[0]
            if sid is None or sid not in self.storages or self.storages[sid].get('shared'):
                # shared storage is seen by both nodes: nothing to copy
                continue
            if d.is_drive(key) and d.is_cdrom(value):
                if d.is_cloudinit(value):
                    found[volume] = 'generated'
                else:
                    errors[volume] = 'local cdrom image'
                continue
            found[volume] = 'unused' if d.UNUSED_KEY.match(key) else 'attached'
        return found, errors

    async def _sim_migrate(self, v, user):
        """Qemu.pm migrate_vm: checks before the fork (HTTP errors), then a `qmigrate` task that runs
        QemuMigrate.pm (prepare, phase1 with lock 'migrate', config moved to the target in phase3_cleanup)."""
        node, vmid, target = v['node'], int(v['vmid']), v['target']
        if target == node:
            raise param_error(target='target is local node.')
        self.need_quorum()
        if target not in self.nodes:
            # PVE::Cluster::check_node_exists
            raise die("no such cluster node '{0}'".format(target))
        for opt in ('force', 'migration_type', 'migration_network'):
            if v.get(opt) and user != 'root@pam':
                raise param_error(**{opt: 'Only root may use this option.'})
        vm = self.find(node, vmid)
        self._check_lock(vm)
        online = bool(v.get('online'))
        if vm.status == 'running':
            if not online:
                raise die("can't migrate running VM without --online")
        else:
            # "VM isn't running. Doing offline migration instead." is a warning of the API daemon, not the task
            online = False
        for key in sorted(vm.config, key=d.natural):
            # QemuServer.pm check_storage_availability: every drive's storage must be enabled on the target
            if d.is_drive(key):
                sid = volume_ref(d.parse_drive(vm.config[key])[0] or '')[0]
                if sid in self.storages:
                    self._check_enabled(sid, node)
                    self._check_enabled(sid, target)
        with_local = bool(v.get('with-local-disks'))

        async def body():
            started = time.monotonic()
            log = self._running_task('qmigrate', vmid)['log']

            def say(msg, err=False):
                # AbstractMigrate.pm $msg2text: a timestamp on every line, "ERROR: " for level err
                log.append('{0} {1}{2}'.format(time.strftime('%Y-%m-%d %H:%M:%S'), 'ERROR: ' if err else '', msg))

            def duration():
                secs = int((time.monotonic() - started) / (self.time_scale or 1))
                return '{0:02d}:{1:02d}:{2:02d}'.format(secs // 3600, secs // 60 % 60, secs % 60)

            def abort(err):
                # AbstractMigrate.pm migrate: any error ends the task "migration aborted"
                say('migration aborted (duration {0}): {1}'.format(duration(), err), err=True)
                return TaskError('migration aborted')
            # prepare, under the config lock the task holds (QemuMigrate.pm lock_vm): the same checks again
            try:
                self.find(node, vmid)
                self._check_lock(vm)
            except PveError as e:
                raise abort(e.message) from e
            running = vm.status == 'running'
            if running and not online:
                raise abort("can't migrate running VM without --online")
            say("starting migration of VM {0} to node '{1}'".format(vmid, target))
            # phase1: "set migrate lock in config file", then scan_local_volumes
            vm.config['lock'] = 'migrate'
            self._sync_vm(vm)
            local, errors = self._migrate_local_volumes(vm)
            for volume, ref in sorted(local.items()):
                if ref == 'attached' and running and not with_local:
                    errors[volume] = "can't live migrate attached local disks without with-local-disks option"
                if ref == 'generated':
                    say("found generated disk '{0}' (in current VM config)".format(volume))
                else:
                    say("found local disk '{0}' ({1})".format(volume, ref))
            if errors:
                for volume, msg in sorted((k, x) for k, x in errors.items() if k is not None):
                    say("can't migrate local disk '{0}': {1}".format(volume, msg))
                if None in errors:
                    say(errors[None])
                err = "Problem found while scanning volumes - can't migrate VM - check log"
                say(err, err=True)
                say('aborting phase 1 - cleanup resources')
                # phase1_cleanup: "delete $conf->{lock}"
                vm.config.pop('lock', None)
                self._sync_vm(vm)
                raise abort(err)
            # sync_offline_local_volumes: a stopped VM's disks (and cloud-init always) are copied to the same
            # storage id on the target; a running VM's attached disks go over NBD in phase2. The simulated
            # storage is one namespace for every node, so the volume ids stay as they are.
            offline = [vol for vol, ref in sorted(local.items()) if not (running and ref == 'attached')]
            if offline:
                say('copying local disk images')
            for volume in offline:
                say("volume '{0}' is '{0}' on the target".format(volume))
            if running:
                say("starting VM {0} on remote node '{1}'".format(vmid, target))
            # phase3_cleanup: move_config_to_node, then "qm unlock" on the target clears the migrate lock; a
            # live-migrated VM runs on the target
            vm.node = target
            vm.config.pop('lock', None)
            self._sync_vm(vm)
            say('migration finished successfully (duration {0})'.format(duration()))
            return None
        return await self.task(node, 'qmigrate', vmid, user, body, vm=vm)

    def _running_task(self, ttype, tid):
        """The running task of this type and id (one at most: it holds the VM's config lock)."""
        return next(r for r in reversed(self.tasklog) if r['type'] == ttype and r['id'] == str(tid)
                    and r['status'] == 'running')

    async def _sim_network(self, v, user):
        """GET /nodes/{node}/network: the seed's bridges, as pve-manager PVE/API2/Network.pm `index` lists them.

        `type` keeps the interfaces of that type; `any_bridge` and `any_local_bridge` keep Linux and OVS
        bridges (`any_bridge` and `include_sdn` would add the node's SDN VNets; pvesim models none). Then,
        "always check bridge access": a bridge the user holds neither SDN.Audit nor SDN.Use on
        (`/sdn/zones/localnetwork/<bridge>`, `check_sdn_bridge`) is left out, except for root@pam."""
        out = []
        for n, name in enumerate(self.bridges):
            item = {'iface': name, 'type': 'bridge', 'method': 'manual', 'families': ['inet'], 'active': 1,
                    'autostart': 1, 'bridge_ports': 'eno{0}'.format(n + 1), 'bridge_stp': 'off', 'bridge_fd': '0',
                    'priority': n + 3}
            if v.get('type') not in (None, 'bridge', 'any_bridge', 'any_local_bridge', 'include_sdn'):
                continue
            zone = '/sdn/zones/localnetwork/' + name
            if user != 'root@pam' and not (self.allowed(user, zone, 'SDN.Audit') or self.allowed(user, zone, 'SDN.Use')):
                continue
            out.append(item)
        return out

    # ---------------------------------------------------------------- disks

    def _alloc_cloudinit(self, sid, vmid):
        """A cloud-init volume: vm-<vmid>-cloudinit, qcow2 on file storages, 4 MiB (§8.5)."""
        store = self.storages[sid]
        if _is_file(store):
            name, fmt = '{0}/vm-{0}-cloudinit.qcow2'.format(vmid), 'qcow2'
        else:
            name, fmt = 'vm-{0}-cloudinit'.format(vmid), 'raw'
        volumes = store.setdefault('volumes', {})
        if name in volumes:
            raise die("volume '{0}:{1}' already exists".format(sid, name))
        volumes[name] = {'content': 'images', 'format': fmt, 'size': 4 * 1024 ** 2, 'vmid': vmid,
                         'ctime': int(time.time())}
        return '{0}:{1}'.format(sid, name)

    def _qm_new_drive(self, vmid, key, value, default):
        """fakepve's drive allocation with PVE's cloud-init volume name and EFI disk sizes (§8.5, D15)."""
        volume, props = d.parse_drive(value)
        found = re.fullmatch(r'(?:([^/:\s]+):)?cloudinit', volume or '')
        if found:
            sid = found.group(1) or default
            if sid not in self.storages:
                raise die("storage '{0}' does not exist".format(sid))
            volid = self._alloc_cloudinit(sid, vmid)
            props.pop('format', None)
            props.update(media='cdrom', size='4M')
            return d.print_drive(volid, props), [volid]
        if props.get('import-from') and NEW_DISK.match(volume or ''):
            return self._qm_import_drive(vmid, volume, props, default)
        out, made = super()._qm_new_drive(vmid, key, value, default)
        if key == 'efidisk0' and NEW_DISK.match(volume or ''):
            newvol, newprops = d.parse_drive(out)
            sid = volume_ref(newvol)[0]
            size = 528 * 1024 if props.get('efitype') == '4m' else 128 * 1024
            if self.storages[sid].get('type') in ('lvm', 'lvmthin'):
                size = 4 * 1024 ** 2
            vol = self._qm_volume(newvol)
            if vol is not None:
                vol['size'] = size
            newprops['size'] = d.format_size(size)
            out = d.print_drive(newvol, newprops)
        return out, made

    def _qm_import_drive(self, vmid, volume, props, default):
        """Qemu.pm create_disks, import path: `STORAGE:0,import-from=<source>` copies the source
        into a new volume of the source's size on STORAGE, in the target storage's format; the
        drive keeps the new volume, its size, and no `import-from` (docs/pve-semantics.md §4.1, §8)."""
        props = dict(props)
        source = props.pop('import-from')
        sid = NEW_DISK.match(volume).group(1) or default
        if sid not in self.storages:
            raise die("storage '{0}' does not exist".format(sid))
        src = self._qm_volume(source) if not source.startswith('/') else None
        if src is None:
            raise die('volume {0} does not exist'.format(source))
        size = int(src.get('size') or 0)
        volid, _fmt = self._qm_alloc(sid, vmid, props.pop('format', None), size)
        props['size'] = d.format_size(size)
        return d.print_drive(volid, props), [volid]

    async def _qm_create(self, v, user):
        """fakepve's create with PVE's canonical NIC and drive strings (Network.pm print_net, §9)."""
        v = dict(v)
        for key in list(v):
            if d.NET_KEY.match(key):
                v[key] = d.canon_net(v[key], random_mac)
            elif d.is_drive(key):
                v[key] = d.canon_drive(v[key])
        return await super()._qm_create(v, user)

    async def _qm_clone(self, v, user):
        """Qemu.pm clone_vm: a clone to another node needs every source volume on shared storage (§15)."""
        target, storage = v.get('target'), v.get('storage')
        src = self.vm(int(v['vmid']))
        if target and target not in (v['node'], 'localhost') and target in self.nodes and src is not None \
                and src.node == v['node'] and not src.lock \
                and (not storage or self.storages.get(storage, {}).get('shared')):
            conf = src.snapshots.get(v['snapname']) if v.get('snapname') else src.config
            for key in sorted(conf or {}):
                if not d.is_drive(key):
                    continue
                volume = d.parse_drive(conf[key])[0]
                sid = volume_ref(volume or 'none')[0]
                if sid is not None and not str(self.storages.get(sid, {}).get('shared', 0)) in ('1', 'True'):
                    raise die("can't clone VM to node '{0}' (VM uses local storage)".format(target))
        return await super()._qm_clone(v, user)

    # ---------------------------------------------------------------- power

    def _skiplock(self, user, p):
        skiplock = p.get('skiplock') is not None and pve_schema.parse_boolean(str(p['skiplock'])) == '1'
        if skiplock and user != 'root@pam':
            raise param_error(skiplock='Only root may use this option.')
        return skiplock

    async def _status_action(self, request):
        """POST .../status/{action}: the parameters are checked against the schema like every PVE call
        (unknown ones, bad booleans and integers are a 400), then fakepve's dispatch runs the action."""
        vm = self._vm(request, 'VM.PowerMgmt')
        action = request.match_info['action']
        handler = getattr(self, '_do_' + action, None)
        if handler is None:
            raise PveError(501, "Method 'POST /nodes/{0}/qemu/{1}/status/{2}' not implemented".format(
                vm.node, vm.vmid, action))
        info = self.resolve(request, API).methods[request.method]
        values = dict(await params(request))
        values.update((k, x) for k, x in request.match_info.items() if k != 'action')
        v, errs = pve_schema.validate(info.get('parameters'), values)
        if errs:
            raise PveError(400, 'Parameter verification failed.', errs)
        v = dict((k, x) for k, x in v.items() if k not in ('node', 'vmid'))
        self.need_quorum()
        return ok(await handler(vm, request[USER], v))

    async def _status_current(self, request):
        """GET .../status/current, with its parameters checked against the schema."""
        self._verify(request, await params(request))
        return await super()._status_current(request)

    async def _do_start(self, vm, user, p):
        """Qemu.pm vm_start / QemuServer.pm vm_start_nolock: checks in the task, pending applied (§16)."""
        if vm.ha_managed and not vm.template:
            return await super()._do_start(vm, user, p)
        skiplock = self._skiplock(user, p)

        async def body():
            if vm.template:
                raise TaskError("you can't start a vm if it's a template")
            if vm.lock and vm.lock != 'suspended' and not skiplock:
                raise TaskError('VM is locked ({0})'.format(vm.lock))
            if vm.status == 'running':
                raise TaskError('VM {0} already running'.format(vm.vmid))
            await self.pause(vm.start_secs)
            if vm.start_error:
                raise TaskError(vm.start_error)
            self._apply_pending(vm)
            # vm_start_nolock applies pending first; QEMU's pve-bridge script then fails on a missing bridge
            for key in sorted(vm.config, key=d.natural):
                if d.NET_KEY.match(key):
                    try:
                        self._check_bridge(d.parse_net(vm.config[key]))
                    except PveError as e:
                        running = [t for t in self.tasklog if t['type'] == 'qmstart' and t['id'] == str(vm.vmid)
                                   and t['status'] == 'running']
                        if running:
                            running[-1]['log'].append(e.message)
                        raise TaskError('start failed: QEMU exited with code 1') from e
            if vm.lock == 'suspended':
                vm.config.pop('lock', None)
                self._sync_vm(vm)
            vm.status = vm.qmpstatus = 'running'
            vm.started_at = time.time()
        return await self.task(vm.node, 'qmstart', vm.vmid, user, body, vm=vm)

    async def _do_stop(self, vm, user, p):
        """Qemu.pm vm_stop: not running → task OK doing nothing; lock checked in the task (§16, D8, D11)."""
        if vm.ha_managed:
            return await self._ha_request(vm, user, 'stopped')
        skiplock = self._skiplock(user, p)

        async def body():
            if vm.status != 'running':
                return None
            if vm.lock and not skiplock:
                raise TaskError('VM is locked ({0})'.format(vm.lock))
            await self.pause(vm.stop_secs)
            vm.status = vm.qmpstatus = 'stopped'
            vm.started_at = None
            self._apply_pending(vm)
        return await self.task(vm.node, 'qmstop', vm.vmid, user, body, vm=vm)

    async def _do_shutdown(self, vm, user, p):
        """Qemu.pm vm_shutdown: a stopped VM → task OK (D9); pending applied in cleanup (§16)."""
        skiplock = self._skiplock(user, p)
        force = str(p.get('forceStop', '0')).lower() in ('1', 'true', 'yes', 'on')
        if vm.status == 'running' and vm.qmpstatus == 'paused' and not force:
            raise die('VM is paused - cannot shutdown')
        if vm.ha_managed:
            return await self._ha_request(vm, user, 'stopped')

        async def body():
            if vm.status != 'running':
                return None
            if vm.lock and not skiplock:
                raise TaskError('VM is locked ({0})'.format(vm.lock))
            note = await self._powerdown(vm, p)
            vm.started_at = None
            self._apply_pending(vm)
            return note
        return await self.task(vm.node, 'qmshutdown', vm.vmid, user, body, vm=vm)

    async def _do_reboot(self, vm, user, p):
        """Qemu.pm vm_reboot: not running → 500 before the fork; shutdown + start applies pending (§16)."""
        if vm.status == 'running' and vm.qmpstatus == 'paused':
            raise die('VM is paused - cannot shutdown')
        self._need_running(vm)

        async def body():
            if vm.lock:
                raise TaskError('VM is locked ({0})'.format(vm.lock))
            await self._powerdown(vm, p)
            self._apply_pending(vm)
            vm.status = vm.qmpstatus = 'running'
            vm.started_at = time.time()
        return await self.task(vm.node, 'qmreboot', vm.vmid, user, body, vm=vm)

    # ---------------------------------------------------------- guest agent

    async def _agent_call(self, match, values):
        """QemuServer/Agent.pm assert_agent_available: not configured, not running, agent down (500)."""
        vm = self.find(values['node'], values['vmid'])
        command = match.template.rsplit('/', 1)[1]
        if not _agent_enabled(vm.config):
            raise PveError(500, 'No QEMU guest agent configured')
        if vm.status != 'running':
            raise PveError(500, 'VM {0} is not running'.format(vm.vmid))
        if getattr(vm, 'agent_down', False):
            raise PveError(500, 'QEMU guest agent is not running')
        if vm.agent is None:
            vm.agent = {}
        if command == 'network-get-interfaces' and 'interfaces' not in vm.agent:
            return {'result': self._guest_interfaces(vm)}
        return await super()._agent_call(match, values)

    @staticmethod
    def _guest_interfaces(vm):
        """A plausible guest-network-get-interfaces answer built from the VM's NICs."""
        out = [{'name': 'lo', 'hardware-address': '00:00:00:00:00:00', 'statistics': {},
                'ip-addresses': [{'ip-address': '127.0.0.1', 'ip-address-type': 'ipv4', 'prefix': 8},
                                 {'ip-address': '::1', 'ip-address-type': 'ipv6', 'prefix': 128}]}]
        nics = sorted((k for k in vm.config if d.NET_KEY.match(k)), key=d.natural)
        for n, key in enumerate(nics):
            mac = (d.parse_net(vm.config[key]).get('macaddr') or '').lower()
            host = (vm.vmid % 200) + 10
            out.append({'name': 'ens{0}'.format(18 + n), 'hardware-address': mac,
                        'statistics': {'rx-bytes': 1024, 'tx-bytes': 2048, 'rx-packets': 10, 'tx-packets': 20,
                                       'rx-errs': 0, 'tx-errs': 0, 'rx-dropped': 0, 'tx-dropped': 0},
                        'ip-addresses': [
                            {'ip-address': '192.0.{0}.{1}'.format(2 + n, host), 'ip-address-type': 'ipv4',
                             'prefix': 24},
                            {'ip-address': 'fe80::be24:11ff:fe{0}:{1}'.format(mac[12:14] or '00',
                                                                              (mac[15:17] or '00')),
                             'ip-address-type': 'ipv6', 'prefix': 64}]})
        return out

    # ------------------------------------------------------------- cluster

    async def _nextid(self, v, user):
        """Cluster.pm nextid: a string; first free id in datacenter next-id [lower, upper) (§18, D18)."""
        if v.get('vmid') not in (None, ''):
            if self.guest(int(v['vmid'])):
                raise param_error(vmid='VM {0} already exists'.format(v['vmid']))
            return str(v['vmid'])
        rng = self.datacenter.get('next-id') or {}
        lower, upper = int(rng.get('lower', 100)), int(rng.get('upper', 1000000))
        taken = set(vm.vmid for vm in self.vms) | set(ct.vmid for ct in self.cts)
        for vmid in range(lower, upper):
            if vmid not in taken:
                return str(vmid)
        raise die('unable to get any free VMID in range [{0}, {1}]'.format(lower, upper))

    async def _version(self, request):
        return ok({'version': self.version, 'release': self.release_version, 'repoid': self.repoid})
