"""A stale `lock: create` / `lock: clone`: what PVE leaves when the worker of a create or clone dies (killed, or
its node rebooted) before its end, made on demand by the admin API (`POST /_sim/stale-lock`).

Sources (docs/pve-semantics.md §38): the worker writes the finished config without the lock only at its end
(qemu-server Qemu.pm `create_vm` realcmd `write_config`, `clone_vm` `delete $newconf->{lock}`), and its error
paths only run when it dies in Perl, so a killed worker leaves the placeholder config holding only the lock.
pvestatd's `update_status` → pve-common RESTEnvironment.pm `active_workers` finds the process gone and archives
the task into the index with `endtime` and the status `PVE::UPID::read_status` reads from the log's last line:
without a `TASK OK` / `TASK ERROR: ...` line, `unexpected status`. Nothing clears the lock but `qm unlock`
(qm.pm `unlock`).
"""

import time

from fakepve.model import FakeVm, PveError

# PVE's status of a task whose log ends without a TASK line (pve-common UPID.pm `read_status`)
DEAD_TASK_STATUS = 'unexpected status'


class StaleLockMixin:
    """The admin API's stale lock."""

    def leave_stale_lock(self, spec):
        """`{"vmid", "lock": "create" | "clone", "node"?: "pve1", "user"?: "root@pam", "source"?: vmid}`: VM
        `vmid` (a vmid no guest has) holding only `lock`, and the dead task that took it in the task index:
        `qmcreate` with the vmid as its id, or `qmclone` with `source`'s (its log names the target, as
        clone_vm's first line does), ended with `unexpected status`. Answers the vmid and the task's UPID."""
        lock, node, user = spec.get('lock'), spec.get('node') or 'pve1', spec.get('user') or 'root@pam'
        try:
            vmid = int(spec['vmid'])
        except (KeyError, TypeError, ValueError):
            raise PveError(400, 'Parameter verification failed.', {'vmid': 'an integer vmid is required'}) from None
        if lock not in ('create', 'clone'):
            raise PveError(400, 'Parameter verification failed.', {'lock': "'create' or 'clone'"})
        if node not in self.nodes:
            raise PveError(400, 'Parameter verification failed.', {'node': 'no such node: {0}'.format(node)})
        if self.guest(vmid) is not None:
            raise PveError(400, 'Parameter verification failed.', {'vmid': 'VM {0} already exists'.format(vmid)})
        source = spec.get('source', 9000)
        if lock == 'clone' and self.vm(int(source)) is None:
            raise PveError(400, 'Parameter verification failed.', {'source': 'no such VM: {0}'.format(source)})
        vm = FakeVm(vmid, self.placeholder_name(vmid), node=node)
        vm.config, vm.lock = {'lock': lock}, lock
        self.vms.append(vm)
        ttype, tid = ('qmcreate', vmid) if lock == 'create' else ('qmclone', int(source))
        upid, pid, start = self._upid(node, ttype, tid, user)
        log = [] if lock == 'create' else ['creating a clone of VM {0} with ID {1}'.format(source, vmid)]
        record = {'upid': upid, 'node': node, 'pid': pid, 'pstart': pid * 7, 'starttime': start, 'type': ttype,
                  'id': str(tid), 'user': user, 'status': 'stopped', 'exitstatus': DEAD_TASK_STATUS,
                  'endtime': int(time.time()), 'log': log}
        self.tasks[upid] = record
        self.tasklog.append(record)
        return {'vmid': vmid, 'upid': upid}
