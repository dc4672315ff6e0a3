"""Tasks and locks: PVE tasks that take visible time and honour the admin API's task faults, the task
log, UPID lookup, and the VM config lock.

Sources: pve-manager 9.2.11 PVE/API2/Tasks.pm, qemu-server 9.2.6 src/PVE/API2/Qemu.pm (Qemu.pm) `clone_vm`;
docs/pve-semantics.md §13, §15, §17.
"""

import asyncio
import re

from aiohttp import web
from fakepve.model import PveError, TaskError, lock_timeout
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

        A task runs TASK_SECS[type] PVE seconds before its effect lands. A clone shows only `lock: clone` on
        the target until its disks are copied, and holds two config-file locks for its whole run (Qemu.pm
        clone_vm `$lock_source_vm`, `$lock_target_vm`; §15, §23): the source's, shared if the source was
        stopped when the clone was asked for (a template, so many clones of it run at once) and exclusive if
        it was running, then the target's, exclusive; each waited for 1 PVE second at most.
        """
        fault = self.take_task_fault(ttype)
        slow = self.take_slow_fault(ttype)
        generation = self.generation
        source = None
        saved = None
        saved_name = None
        if ttype in ('qmcreate', 'qmclone') and vm is not None:
            # The new VM's placeholder (§30): until the task ends its config holds only the lock, so the
            # name shown is the one vmstatus gives a config without one
            saved_name, vm.name = vm.name, self.placeholder_name(vm.vmid)
        if ttype == 'qmclone' and vm is not None:
            source = self.vm(int(tid)) if str(tid).isdigit() else None
            saved = dict(vm.config)
            vm.config = {'lock': 'clone'}
        # clone_vm reads `$running` once, before the worker starts
        source_running = source is not None and source.status == 'running'

        async def wrapped():
            holder = ('clone', id(vm))
            held = []
            try:
                if source is not None:
                    await self.acquire(source, holder, wait=1, shared=not source_running)
                    held.append(source)
                    await self.acquire(vm, holder, wait=1)
                    held.append(vm)
                if slow is not None:
                    await asyncio.sleep(slow)
                else:
                    await self.pause(self.task_secs.get(ttype, DEFAULT_TASK_SECS))
                if generation != self.generation:
                    raise TaskError('simulator state was reset')
                if saved is not None:
                    vm.config = saved
                if ttype == 'qmclone' and saved_name is not None:
                    vm.name = saved_name
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
                for item in held:
                    self.release(item, holder)
        return await super().task(node, ttype, tid, user, wrapped, vm=vm, lock=lock, log=log)

    @staticmethod
    def placeholder_name(vmid):
        """The name PVE shows for a VM whose config has none: QemuServer.pm vmstatus `$conf->{name} || "VM
        $vmid"`, which pvestatd (update_qemu_status) broadcasts and /cluster/resources reads back (pve-manager
        API2/Cluster.pm resources → API2Tools.pm extract_vm_stats: `name` from the rrd data); §30."""
        return 'VM {0}'.format(vmid)

    async def _task_list(self, request):
        """Tasks.pm node_tasks: `source` archive (the default: ended tasks only, from the task index), active
        (the running ones, `status: RUNNING`) or all; `typefilter` and `vmid` match the UPID's type and id
        exactly (a clone's id is its source); the caller's own tasks, all of them with Sys.Audit on the node;
        newest first, `start`/`limit` (default 50) applied after the filters (§30)."""
        node, user = request.match_info['node'], request[USER]
        p = self._verify(request, await params(request))
        source, vmid, ttype = p.get('source') or 'archive', p.get('vmid'), p.get('typefilter')
        audit = self.allowed(user, '/nodes/' + node, 'Sys.Audit')
        data = []
        for t in self.tasklog:
            running = t['status'] == 'running'
            if t['node'] != node or (running and source == 'archive') or (not running and source == 'active'):
                continue
            if (vmid is not None and t['id'] != str(vmid)) or (ttype and t['type'] != ttype):
                continue
            if not (audit or self._task_owner(user, t)):
                continue
            view = self._task_view(t, True)
            if running:
                view['status'] = 'RUNNING'
            data.append(view)
        data.sort(key=lambda t: -t['starttime'])
        start = p.get('start', 0)
        return web.json_response({'data': data[start:start + p.get('limit', 50)], 'total': len(data)})

    async def acquire(self, vm, holder, wait=None, shared=False):
        """AbstractConfig.pm lock_config_full / lock_config_shared over pve-common Tools.pm lock_file_full
        (a flock): any number of shared holders, or one exclusive holder; a waiter gives up after `wait` PVE
        seconds (fakepve's lock_wait, 10, by default) with `can't lock file ... - got timeout` (§17, §23)."""
        wait = self.lock_wait if wait is None else wait
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait * (self.time_scale or 0)

        def busy():
            return vm.lock_holder is not None or (not shared and bool(getattr(vm, 'lock_sharers', None)))
        while busy() and self.time_scale and wait:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            vm.lock_released = vm.lock_released or asyncio.Event()
            try:
                await asyncio.wait_for(vm.lock_released.wait(), remaining)
            except asyncio.TimeoutError:
                break
        if busy():
            raise TaskError(getattr(vm, 'lock_error', None) or lock_timeout(vm.vmid))
        if shared:
            vm.lock_sharers = set(getattr(vm, 'lock_sharers', None) or ()) | {holder}
        else:
            vm.lock_holder = holder

    def release(self, vm, holder):
        """Release a shared or exclusive hold; waiters wake when nobody holds the lock any more."""
        sharers = getattr(vm, 'lock_sharers', None) or set()
        if holder in sharers:
            sharers.discard(holder)
        elif vm.lock_holder == holder:
            vm.lock_holder = None
        else:
            return
        if not sharers and vm.lock_holder is None and vm.lock_released:
            vm.lock_released.set()
            vm.lock_released = None

    def _after_task(self, ttype, vm):
        if ttype == 'qmclone' and vm is not None:
            # The clone gets its own cloud-init drive, on the clone's `storage` if given, else beside the
            # source's, in the `format` asked or the source's, where that storage takes it (Qemu.pm clone_vm →
            # QemuServer.pm clone_disk, resolve_dst_disk_format).
            for key in sorted(vm.config):
                if d.is_drive(key) and d.is_cloudinit(vm.config[key]):
                    volume, props = d.parse_drive(vm.config[key])
                    storage, requested = self.clone_storage.get(vm.vmid) or (None, None)
                    sid = storage or volume_ref(volume)[0]
                    fmt = self._target_format(sid, requested, (self._qm_volume(volume) or {}).get('format'))
                    volid = self._alloc_cloudinit(sid, vm.vmid, fmt)
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
