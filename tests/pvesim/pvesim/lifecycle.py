"""VM lifecycle: create with canonical strings, and the power calls (start, stop, shutdown, reboot).

Sources: qemu-server 9.2.6 src/PVE/API2/Qemu.pm (Qemu.pm) `vm_start`, `vm_stop`, `vm_shutdown`,
`vm_reboot`; src/PVE/QemuServer.pm `vm_start_nolock`, `vm_stop_cleanup`, `destroy_vm`; docs/pve-semantics.md
§9, §16, §47.3.
"""

import json
import time

from fakepve import schema as pve_schema
from fakepve.lxc import random_mac
from fakepve.model import PveError, TaskError
from fakepve.routing import die, param_error
from fakepve.server import API, USER, ok, params

from . import activation, drives as d, mirror, nets, options as o, qemu_devices as qd


class LifecycleMixin:
    """Create and the power calls."""

    async def _qm_create(self, v, user):
        """fakepve's create with PVE's canonical NIC and drive strings (Network.pm print_net, §9)."""
        v = dict(v)
        for key in list(v):
            if nets.NET_KEY.match(key):
                v[key] = nets.canon_net(v[key], random_mac)
            elif d.is_drive(key):
                v[key] = d.canon_drive(v[key])
        self._create_allocate_check(v, user)
        self._value_perms_create(user, int(v['vmid']), v.get('pool'), v)
        if v.get('archive'):
            # Qemu.pm create_vm: a restore takes its drives from the archive; the first drive option beside it
            # (is_valid_drivename, in sort order) is refused, after the privilege checks
            drives = sorted(k for k in v if d.is_drive(k))
            if drives:
                raise param_error(**{drives[0]: "option conflicts with option 'archive'"})
            if v['archive'] == '-':  # Qemu.pm create_vm: a pipe from stdin only where the rpcenv type is 'cli'
                raise die('pipe requires cli environment')
            self._archive_access(user, int(v['vmid']), v['archive'])  # volume_access.py
        self._check_bridge_access(user, v)
        return await super()._qm_create(v, user)

    def _create_allocate_check(self, v, user):
        """Qemu.pm create_vm's first privilege checks, which come before check_bridge_access: the default
        storage (Datastore.AllocateSpace), `start` (VM.PowerMgmt), then VM.Allocate on the VM or its pool,
        failing without detail (`raise_perm_exc()`: `Permission check failed`) (docs/pve-semantics.md §27.2).
        fakepve's create makes the same checks again, after the bridge check pvesim adds."""
        vmid, pool, default = int(v['vmid']), v.get('pool'), v.get('storage')
        if default:
            self.require(user, '/storage/' + default, 'Datastore.AllocateSpace')
        if v.get('start'):
            self._qm_perm(user, vmid, pool, 'VM.PowerMgmt')
        if not (self.allowed(user, '/vms/{0}'.format(vmid), 'VM.Allocate')
                or (pool and self.allowed(user, '/pool/' + pool, 'VM.Allocate'))):
            raise PveError(403, 'Permission check failed')

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
        answer = await super()._status_current(request)
        # QemuServer.pm vmstatus (full): a running VM's `running-machine` from QMP query-machines ($machinecb)
        vm = self._vm(request, 'VM.Audit')
        if vm.status == 'running':
            data = json.loads(answer.body)
            data['data']['running-machine'] = mirror.running_machine(vm)
            return ok(data['data'])
        return answer

    async def _qm_destroy(self, v, user):
        """QemuServer.pm destroy_vm: `check_lock` runs only when the config's lock is not `suspended`
        (`has_lock($conf, 'suspended')`), so a hibernated VM is removed like an unlocked one (fakepve's destroy
        refuses every lock). The lock is set aside for fakepve's destroy, which then locks the VM `destroyed`,
        and put back when one of its checks refuses before the task (§47.3)."""
        try:
            vm = self.find(v['node'], v['vmid'])
        except Exception:  # noqa: BLE001 - fakepve's own answer for a VM it does not find
            vm = None
        if vm is None or vm.lock != 'suspended' or v.get('skiplock'):
            return await super()._qm_destroy(v, user)
        vm.lock = None
        try:
            return await super()._qm_destroy(v, user)
        except BaseException:
            vm.lock = 'suspended'
            raise

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
            # vm_start_nolock: get_current_vm_volumes checks each volume's content type (qemu_devices.py), then
            # activates the volumes (activation.py), before config_to_command
            content = qd.content_error(vm.config, self.storages, self._parse_volname)
            words = content or self.missing_volume(activation.current_volumes(vm.config)) or self._start_refusal(vm)
            if words:
                raise TaskError(words)
            # vm_start_nolock applies pending first; QEMU's pve-bridge script then fails on a missing bridge
            for key in sorted(vm.config, key=o.natural):
                if nets.NET_KEY.match(key):
                    try:
                        self._check_bridge(nets.parse_net(vm.config[key]))
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
            vm.__dict__.pop('running_machine', None)  # a seeded running machine was the last start's
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
