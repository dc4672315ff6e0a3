"""Tasks and locks: PVE tasks that take visible time and honour the admin API's task faults, the task
log, UPID lookup, and the VM config lock.

Sources: pve-manager 9.2.11 PVE/API2/Tasks.pm, qemu-server 9.2.6 src/PVE/API2/Qemu.pm (Qemu.pm) `clone_vm`;
docs/pve-semantics.md §13, §15, §17.
"""

import asyncio
import re

from aiohttp import web
from fakepve.model import PveError, TaskError
from fakepve.qemu import volume_ref
from fakepve.routing import param_error
from fakepve.server import USER, params

from . import drives as d

# PVE seconds each task type runs before its effect lands (scaled by time_scale). The default
# time scale (see cli.py) turns 2 PVE seconds into 0.1 real seconds.
TASK_SECS = {'qmcreate': 3, 'qmconfig': 2, 'qmstart': 3, 'qmstop': 2, 'qmshutdown': 3, 'qmreboot': 5,
             'qmreset': 2, 'qmpause': 2, 'qmsuspend': 2, 'qmresume': 2, 'qmdestroy': 3, 'qmclone': 8,
             'qmmove': 8, 'resize': 2, 'qmtemplate': 3, 'qmigrate': 8, 'qmsnapshot': 3}
DEFAULT_TASK_SECS = 2


class TasksMixin:
    """Task timing, task faults and the config lock."""

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

    def _running_task(self, ttype, tid):
        """The running task of this type and id (one at most: it holds the VM's config lock)."""
        return next(r for r in reversed(self.tasklog) if r['type'] == ttype and r['id'] == str(tid)
                    and r['status'] == 'running')

    async def _lock_config(self, vm):
        try:
            await self.acquire(vm, 'config')
        except TaskError as e:
            raise PveError(500, str(e)) from e
