# -*- coding: utf-8 -*-
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A saved plan verified whole before a real run's first write (docs/saved-plans.md, "Applying").

The first ferro.proxmox task of a real run that applies a plan runs the module's binary once more,
before its own run, in verify mode (module_utils/src/check/plan_verify.rs): every record of the
plan for that task's API host, each VM config, power state, pool, snapshot, import source and
planned vmid read again and compared. The answer is kept for the run in a marker under
ansible-core's per-run local temp dir (the same directory for every fork and serial batch of the
run, none other's), written under an exclusive lock that is held while the verification runs:
a parallel fork's first task waits for it, and every later task reads it. A plan that moved
refuses every task of the run, the first included, before any write.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re

from ansible import constants as C

MODE = 'verify'
KNOWN_AFTER_APPLY = '(known after apply)'


def _marker(api_host):
    digest = hashlib.sha256(str(api_host).encode('utf-8')).hexdigest()[:16]
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-verified-%s.json' % digest)


def records_for(plan_dir, api_host):
    """The plan's records whose task speaks to `api_host`, in host and run order."""
    out = []
    for root, _dirs, files in os.walk(os.path.join(plan_dir, 'tasks')):
        for name in sorted(files):
            if not name.endswith('.json') or name.startswith('.'):
                continue
            try:
                with open(os.path.join(root, name), encoding='utf-8') as f:
                    record = json.load(f)
            except (OSError, ValueError):
                continue
            if not isinstance(record, dict) or (record.get('args') or {}).get('api_host') != api_host:
                continue
            out.append(dict((k, record.get(k)) for k in ('host', 'task', 'path', 'seq', 'reads', 'inputs', 'writes')))
    return sorted(out, key=lambda r: (str(r['host']), r.get('seq') or 0))


def bind_later(record, recorded):
    """A check run's `record` whose task creates a VM without a vmid: its result's vmid known
    after apply (the real run binds it, never compares it), and the vmid the check run predicted
    kept as `planned_vmid`, for the later tasks that address that VM (`rebound`)."""
    planned = (recorded or {}).get('bound_vmid')
    if planned is not None:
        record['result']['vmid'] = KNOWN_AFTER_APPLY
        record['planned_vmid'] = planned


def _bound_path():
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-bound-vmids.json')


def remember_bound(planned, result):
    """In the real run: the vmid PVE gave a VM the plan created as `planned_vmid`, for the run's
    later tasks (kept in the run's local temp dir, under a lock: forks write it in parallel)."""
    was, now = planned.get('planned_vmid'), result.get('vmid')
    if was is None or not isinstance(now, int) or result.get('failed'):
        return
    with open(_bound_path() + '.lock', 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            bound = _read_bound()
            bound[str(was)] = now
            tmp = _bound_path() + '.tmp'
            with open(tmp, 'w', encoding='utf-8') as f:
                json.dump(bound, f)
            os.replace(tmp, _bound_path())
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _read_bound():
    try:
        with open(_bound_path(), encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def rebound(compared):
    """A record's reads, writes and VMs with each vmid the plan predicted for a VM it creates
    replaced by the one PVE gave it in this run (`remember_bound`): its id, the paths under it
    and its volume names (`vm-<id>-disk-N`)."""
    bound = _read_bound()
    if not bound:
        return compared

    def ids(text):
        for was, now in bound.items():
            text = re.sub(r'(/qemu/)%s(?=/|$)' % was, r'\g<1>%d' % now, text)
            text = re.sub(r'\b(vm|base)-%s-disk' % was, r'\g<1>-%d-disk' % now, text)
        return text

    def walk(value, key=None):
        if isinstance(value, dict):
            return dict((k, walk(v, k)) for k, v in value.items())
        if isinstance(value, list):
            return [walk(v) for v in value]
        if key == 'vmid' and str(value) in bound:
            return bound[str(value)] if isinstance(value, int) else str(bound[str(value)])
        if isinstance(value, str):
            return ids(value)
        return value
    out = walk(compared)
    for write in out.get('writes') or []:
        write['params'] = [[k, str(bound[v]) if k in ('vmid', 'newid') and v in bound else v]
                           for k, v in write.get('params') or []]
    return out


def whole_run(plan_dir, args, saved, run_module):
    """`saved` (the task's state for the saved plan) when the plan holds, verified now by this
    task or earlier in the run by another; else `{'failed': the message refusing the run}`.
    `run_module(args)` runs the module's binary with `args`."""
    refused = _verified(plan_dir, args, run_module)
    return {'failed': refused} if refused else saved


def _verified(plan_dir, args, run_module):
    api_host = args.get('api_host')
    marker = _marker(api_host)
    with open(marker + '.lock', 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            try:
                with open(marker, encoding='utf-8') as f:
                    return json.load(f).get('refused')
            except (OSError, ValueError):
                pass
            records = records_for(plan_dir, api_host)
            verify_args = dict(args, _ferro_saved_plan={'mode': MODE, 'records': records})
            verify_args.pop('_ferro_check_plan', None)
            answer = run_module(verify_args)
            refused = (answer.get('msg') or 'the saved plan could not be verified') if answer.get('failed') else None
            tmp = marker + '.tmp'
            with open(tmp, 'w', encoding='utf-8') as f:
                json.dump({'refused': refused, 'records': len(records)}, f)
            os.replace(tmp, marker)
            return refused
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
