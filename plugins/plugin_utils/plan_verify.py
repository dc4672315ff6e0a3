# -*- coding: utf-8 -*-
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A saved plan verified whole before a real run's first write (docs/saved-plans.md, "Applying").

The first ferro.proxmox task of a real run that applies a plan runs the module's binary once more
per API host of the plan, before its own run, in verify mode (module_utils/src/check/plan_verify.rs):
every record of the plan for that host, each VM config, power state, pool, snapshot, import source
and planned vmid read again and compared. Another host is reached with its first record's
connection options and this task's secret where the record's keyed hash is that secret's. The
answers are kept for the run in markers under ansible-core's per-run local temp dir (the same
directory for every fork and serial batch of the run, none other's), written under an exclusive
lock that is held while the verification runs: a parallel fork's first task waits for it, and
every later task reads them. A plan that moved
refuses every task of the run, the first included, before any write.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re

from ansible import constants as C

from ansible_collections.ferro.proxmox.plugins.plugin_utils import saved_plan as sp

MODE = 'verify'
KNOWN_AFTER_APPLY = '(known after apply)'


def _marker(plan_dir, api_host):
    digest = hashlib.sha256(('%s\0%s' % (os.path.abspath(plan_dir), api_host)).encode('utf-8')).hexdigest()[:16]
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-verified-%s.json' % digest)


def _task_records(plan_dir):
    """Each task record of the plan that reads as a JSON object, in directory and file-name order
    (one that does not is the per-task verification's to name)."""
    for root, _dirs, files in os.walk(os.path.join(plan_dir, 'tasks')):
        for name in sorted(files):
            if not name.endswith('.json') or name.startswith('.'):
                continue
            try:
                with open(os.path.join(root, name), encoding='utf-8') as f:
                    record = json.load(f)
            except (OSError, ValueError):
                continue
            if isinstance(record, dict):
                yield record


def records_for(plan_dir, api_host):
    """The plan's records whose task speaks to `api_host`, in host and run order."""
    out = [dict((k, record.get(k)) for k in ('host', 'task', 'path', 'seq', 'reads', 'inputs', 'writes'))
           for record in _task_records(plan_dir) if (record.get('args') or {}).get('api_host') == api_host]
    return sorted(out, key=lambda r: (str(r['host']), r.get('seq') or 0))


def bind_later(record, recorded):
    """A check run's `record` whose task creates a VM without a vmid: its result's vmid known
    after apply (the real run binds it, never compares it), and the vmid the check run predicted
    kept as `planned_vmid`, for the later tasks that address that VM (`rebound`)."""
    planned = (recorded or {}).get('bound_vmid')
    if planned is not None:
        record['result']['vmid'] = KNOWN_AFTER_APPLY
        record['planned_vmid'] = planned


def _bound_path(plan_dir):
    digest = hashlib.sha256(os.path.abspath(plan_dir).encode('utf-8')).hexdigest()[:16]
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-bound-vmids-%s.json' % digest)


def remember_bound(plan_dir, planned, result):
    """In the real run: the vmid PVE gave a VM the plan created as `planned_vmid`, for the run's
    later tasks (kept in the run's local temp dir, under a lock: forks write it in parallel)."""
    was, now = planned.get('planned_vmid'), result.get('vmid')
    if was is None or not isinstance(now, int) or result.get('failed'):
        return
    with open(_bound_path(plan_dir) + '.lock', 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            bound = _read_bound(plan_dir)
            bound[str(was)] = now
            tmp = _bound_path(plan_dir) + '.tmp'
            with open(tmp, 'w', encoding='utf-8') as f:
                json.dump(bound, f)
            os.replace(tmp, _bound_path(plan_dir))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _read_bound(plan_dir):
    try:
        with open(_bound_path(plan_dir), encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def rebound(plan_dir, compared):
    """A record's reads, writes and VMs with each vmid the plan predicted for a VM it creates
    replaced by the one PVE gave it in this run (`remember_bound`): its id, the paths under it
    and its volume names (`vm-<id>-disk-N`)."""
    bound = _read_bound(plan_dir)
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
    `run_module(args)` runs the module's binary with `args`. Every API host of the plan is
    verified by the run's first task when it can reach it (`connections`); one it cannot (its
    secret is not one this task holds) is verified by the first task that speaks to it, and a
    warning says so."""
    refused, later = _verified(plan_dir, args, saved.get('secret'), run_module, saved.get('hosts'))
    if refused:
        return {'failed': refused}
    if later:
        saved['warnings'] = list(saved.get('warnings') or []) + [
            'the saved plan\'s records for API host %s could not be verified before this run\'s first write (their '
            'connection secret is not this task\'s): each is verified by the first task that speaks to that host '
            '(docs/saved-plans.md "Limits")' % ', '.join(later)]
    return saved


# The options that say which API host a task speaks to and how it logs in.
CONNECTION = ('api_host', 'api_port', 'api_user', 'api_password', 'api_otp', 'api_token_id', 'api_token_secret',
              'validate_certs', 'ca_path', 'api_timeout')


def connections(plan_dir, args, key, hosts=None):
    """[(api host, the arguments to verify its records with)], this task's host first: another
    host's from the connection options of its first record, its secret given back in clear when
    it is one of this task's (the same keyed hash); None when it is not (it cannot be reached).
    `hosts`: [api host, its first record's arguments], as the run's first task verified them
    (plan_cache.py), instead of reading every record again."""
    own = args.get('api_host')
    secrets = [str(args[o]) for o in ('api_token_secret', 'api_password', 'api_otp') if args.get(o)]
    base = dict((k, v) for k, v in args.items() if k not in CONNECTION)
    found = {own: args}
    firsts = [h[1] for h in hosts] if hosts is not None else (r.get('args') or {} for r in _task_records(plan_dir))
    for planned in firsts:
        if not isinstance(planned, dict) or planned.get('api_host') in found:
            continue
        host = planned.get('api_host')
        conn = dict((k, v) for k, v in planned.items() if k in CONNECTION)
        if key is not None:
            conn = sp.unhash_secrets(conn, secrets, key)
        known = not any(isinstance(v, str) and v.startswith(sp.HASH_PREFIX) for v in conn.values())
        found[host] = dict(base, **conn) if known and key is not None else None
    return [(own, args)] + sorted(((h, a) for h, a in found.items() if h != own), key=lambda p: str(p[0]))


def _verified(plan_dir, args, key, run_module, hosts=None):
    """(the refusal, or None; the API hosts left to their own first task)."""
    own = args.get('api_host')
    if hosts is not None:  # every host's answer kept already (in `connections`' order): no lock, no record read
        names = [own] + sorted(set(h for h, _args in hosts) - {own}, key=str)
        answers = [_answer(plan_dir, h) for h in names]
        if all(a is not None for a in answers):
            return '; '.join(a['refused'] if h == own else 'API host %s: %s' % (h, a['refused'])
                             for h, a in zip(names, answers) if a.get('refused')) or None, []
    refusals, later = [], []
    with open(os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-verified.lock'), 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            for api_host, host_args in connections(plan_dir, args, key, hosts):
                refused = _host_verified(plan_dir, api_host, host_args, run_module)
                if refused is False:
                    later.append(str(api_host))
                elif refused:
                    refusals.append(refused if api_host == args.get('api_host')
                                    else 'API host %s: %s' % (api_host, refused))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return '; '.join(refusals) or None, later


def _answer(plan_dir, api_host):
    """The kept answer for `api_host`'s records in this run, or None."""
    try:
        with open(_marker(plan_dir, api_host), encoding='utf-8') as f:
            answer = json.load(f)
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


def _host_verified(plan_dir, api_host, args, run_module):
    """The refusal of `api_host`'s records (None when they hold), verified once per run (the
    marker); False when they cannot be verified by this task (`args` None)."""
    marker = _marker(plan_dir, api_host)
    answer = _answer(plan_dir, api_host)
    if answer is not None:
        return answer.get('refused')
    if args is None:
        return False
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
