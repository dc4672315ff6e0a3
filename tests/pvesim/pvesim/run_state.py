"""Pause, hibernation and resume as qemu-server's RunState.pm has them: the locks each lets through, a template never resumed.

Sources: qemu-server 9.2.6 src/PVE/API2/Qemu.pm `vm_suspend` and `vm_resume` (the API handlers: "VM <vmid> not
running" before the fork, a VM hibernated to disk is started instead of resumed), src/PVE/QemuServer/RunState.pm
`vm_suspend` and `vm_resume` (in the task); docs/pve-semantics.md §16, §33.
"""

from fakepve.model import TaskError


class RunStateMixin:
    """status/suspend and status/resume with RunState.pm's lock rules."""

    async def _do_suspend(self, vm, user, p):
        """RunState.pm vm_suspend: the lock is checked unless `skiplock` or a backup holds it (a backup's lock lets a
        pause through), and a hibernation during a backup is refused."""
        skiplock = self._skiplock(user, p)
        self._need_running(vm)
        todisk = str(p.get('todisk', '0')).lower() in ('1', 'true', 'yes', 'on')

        async def body():
            self._suspend_lock(vm, skiplock, todisk)
            if todisk:
                await self.ceph_io(vm)
                vm.status = vm.qmpstatus = 'stopped'
                vm.config['lock'] = 'suspended'
                self._sync_vm(vm)
            else:
                vm.qmpstatus = 'paused'
        return await self.task(vm.node, 'qmsuspend', vm.vmid, user, body, vm=vm)

    @staticmethod
    def _suspend_lock(vm, skiplock, todisk):
        """RunState.pm vm_suspend, in the task: the lock unless `skiplock` or a backup's; no hibernation during a
        backup."""
        backup = vm.lock == 'backup'
        if vm.lock and not (skiplock or backup):
            raise TaskError('VM is locked ({0})'.format(vm.lock))
        if backup and todisk:
            raise TaskError('cannot suspend to disk during backup')

    async def _do_resume(self, vm, user, p):
        """Qemu.pm vm_resume: a VM hibernated to disk (lock `suspended`) is started; else it must run, and
        RunState.pm vm_resume refuses a template, returns at once for a VM that already runs, and checks the lock
        unless `skiplock` or a backup holds it."""
        skiplock = self._skiplock(user, p)
        if vm.lock == 'suspended':
            return await self._do_start(vm, user, p)
        self._need_running(vm)

        async def body():
            if vm.template:
                raise TaskError('VM {0} is a template and cannot be resumed!'.format(vm.vmid))
            if vm.qmpstatus == 'running':
                return
            if vm.lock and not (skiplock or vm.lock == 'backup'):
                raise TaskError('VM is locked ({0})'.format(vm.lock))
            vm.qmpstatus = 'running'
        return await self.task(vm.node, 'qmresume', vm.vmid, user, body, vm=vm)
