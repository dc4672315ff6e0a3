# -*- coding: utf-8 -*-
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Saved plans on the controller: where a plan lives, its header, one record per host and task,
secrets as keyed hashes (docs/saved-plans.md holds the format).

A `--check` run with `ferro_proxmox_plan` (a variable: extra var, play, group or host var) or
`FERRO_PROXMOX_PLAN` (the controller's environment) set to a directory SAVES a plan there; a
real run with the same setting APPLIES it. The module does the comparing
(module_utils/src/check/saved.rs); this side keys the tasks, compares the arguments, keeps
secrets out of the file and refuses a plan from another collection version or playbook.

Every write to the plan directory is made under an exclusive `flock` on `<plan>/.lock` and
renamed into place, so parallel forks are safe.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import re
import shutil
import tempfile
from contextlib import contextmanager

from ansible import constants as C
from ansible import context

# 2: records with inputs, power state and pools, pool moves among the writes, planned_vmid, the
# run, index and apply files, every file signed (docs/saved-plans.md); 1 had none of these.
FORMAT_VERSION = 2
PLAN_VAR = 'ferro_proxmox_plan'
PLAN_ENV = 'FERRO_PROXMOX_PLAN'
# What a real run does when a planned task did not run before the next one: 'fail' (the default)
# or 'warn'.
SKIPPED_VAR = 'ferro_proxmox_plan_skipped'
SAVED_KEY = '_ferro_saved_plan'
RECORDED_KEY = '_ferro_saved_plan_recorded'
KNOWN_AFTER_APPLY = '(known after apply)'
HASH_PREFIX = 'hmac-sha256:'
_HASH_RE = re.compile(re.escape(HASH_PREFIX) + '[0-9a-f]{64}')
# The result fields a record keeps from the check run, to compare with the real run's.
RESULT_FIELDS = ('changed', 'failed', 'msg', 'vmid', 'mac', 'volume', 'interface', 'disk', 'status')


class PlanError(Exception):
    """A saved plan that cannot be used, in words for the user."""


def plan_location(task_vars, templar):
    """The plan directory the run saves or applies, or None: the variable, else the environment."""
    value = task_vars.get(PLAN_VAR)
    if value is not None and templar is not None:
        value = templar.template(value)
    if not value:
        value = os.environ.get(PLAN_ENV)
    return os.path.abspath(os.path.expanduser(str(value))) if value else None


def run_id():
    """This ansible-playbook run: its per-run local temp dir is unique to it."""
    return os.path.basename(C.DEFAULT_LOCAL_TMP.rstrip('/'))


def collection_version(root):
    try:
        with open(os.path.join(root, 'MANIFEST.json'), encoding='utf-8') as f:
            return json.load(f)['collection_info']['version']
    except (OSError, ValueError, KeyError):
        pass
    try:
        with open(os.path.join(root, 'galaxy.yml'), encoding='utf-8') as f:
            for line in f:
                if line.startswith('version:'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return 'unknown'


def playbook_identity():
    """The playbooks of this run, by file name and content: the same in two AWX jobs that check
    out the same project revision into different directories."""
    out = []
    for path in context.CLIARGS.get('args') or ():
        try:
            with open(path, 'rb') as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            digest = None
        out.append({'name': os.path.basename(path), 'sha256': digest})
    return out


def header(root):
    return {
        'format_version': FORMAT_VERSION,
        'collection': 'ferro.proxmox',
        'collection_version': collection_version(root),
        'playbooks': playbook_identity(),
        'run': run_id(),
    }


@contextmanager
def locked(plan_dir):
    os.makedirs(plan_dir, mode=0o700, exist_ok=True)
    with open(os.path.join(plan_dir, '.lock'), 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_json(path, data, hot=False):
    """Write `data` to `path` (a temp file renamed into place) and return the bytes written:
    indented for a file a person reads (the header, the records). `hot`: a file every task of a
    real run rewrites under the plan's lock (the apply file), compact (json's C encoder writes it
    many times faster) and put in place with `into_place(..., hot=True)`."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    if hot:
        raw = json.dumps(data, sort_keys=True, separators=(',', ':')).encode('utf-8')
    else:
        raw = json.dumps(data, indent=1, sort_keys=True).encode('utf-8')
    fd, tmp = tempfile.mkstemp(prefix='.tmp-', dir=os.path.dirname(path))
    with os.fdopen(fd, 'wb') as f:
        f.write(raw)
    into_place(tmp, path, hot)
    return raw


def into_place(tmp, path, hot=False):
    """Rename `tmp` to `path`. `hot` (a file rewritten under the plan's lock, which every reader
    of it holds): the old file is removed first, as ext4 (its default auto_da_alloc) writes a
    file renamed over another out to disk at once, a wait of milliseconds per task on a busy disk.
    A run stopped between the removal and the rename leaves the file missing, which the next run
    refuses ("is missing"; the apply file's signature still there), as it refuses a plan applied."""
    if hot:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    os.replace(tmp, path)


def write_marker(path, data):
    """A task's marker in the run's local temp dir (`applied_dir`): a new file, created and
    written once (no temp file, no rename over an older one); the task's outcome goes to the
    plan's apply file."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        write_json(path, data)
        return
    with os.fdopen(fd, 'wb') as f:
        f.write(json.dumps(data, sort_keys=True).encode('utf-8'))


def read_json(path):
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def _token(key, secret):
    return HASH_PREFIX + hmac.new(key, secret.encode('utf-8'), hashlib.sha256).hexdigest()


def secret_tokens(secrets, key):
    """[secret, its keyed hash] for each secret, for the module (which holds the secrets anyway,
    never the key)."""
    return [[s, _token(key, s)] for s in secrets if s]


def hash_secrets(value, secrets, key):
    """`value` with every secret given as a whole value replaced by its keyed hash: a secret
    inside another string (`web` in `existing-web`) is not the secret, and hashing it there
    would show where the secret occurs (issue 33)."""
    return _hash(value, frozenset(s for s in secrets if s), key)


def _hash(value, secrets, key):
    if isinstance(value, str):
        return _token(key, value) if value in secrets else value
    if isinstance(value, dict):
        return {k: _hash(v, secrets, key) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_hash(v, secrets, key) for v in value]
    if value is not None and not isinstance(value, bool) and secrets and str(value) in secrets:
        return _token(key, str(value))
    return value


def unhash_secrets(value, secrets, key):
    """`value` with each keyed hash of one of this task's secrets given back in clear (for the
    module, which holds them anyway); a hash of another secret stays a hash, so it differs."""
    return _unhash(value, dict((_token(key, s), s) for s in secrets if s))


def _unhash(value, tokens):
    if isinstance(value, dict):
        return dict((k, _unhash(v, tokens)) for k, v in value.items())
    if isinstance(value, list):
        return [_unhash(v, tokens) for v in value]
    if isinstance(value, str) and HASH_PREFIX in value:
        return _HASH_RE.sub(lambda m: tokens.get(m.group(0), m.group(0)), value)
    return value


def task_key(task, task_vars, module):
    """Which task this is, the same in both runs: host, module, task name and its place in the
    playbook (the file relative to the playbook's directory, and the line)."""
    path = task.get_path() or ''
    file_, _sep, line = path.rpartition(':')
    base = task_vars.get('playbook_dir') or ''
    if file_ and base:
        file_ = os.path.relpath(file_, base)
    return {
        'host': str(task_vars.get('inventory_hostname')),
        'module': module,
        'task': task.get_name(),
        'path': '%s:%s' % (file_, line) if file_ else '',
    }


def _digest(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:24]


def record_path(base, key, occurrence):
    """`<base>/<host digest>/<task digest>-<occurrence>.json`: the occurrence tells apart the
    items of a loop and a task run again (an include), counted per host in run order."""
    task_id = _digest(json.dumps([key['module'], key['task'], key['path']]))
    return os.path.join(base, _digest(key['host']), '%s-%04d.json' % (task_id, occurrence))


def next_occurrence(base, key):
    n = 0
    while os.path.exists(record_path(base, key, n)):
        n += 1
    return n


def begin_save(plan_dir, root):
    """Under the lock: a new plan for this run (the directory's older records removed once, by
    the run's first task)."""
    path = os.path.join(plan_dir, 'plan.json')
    try:
        current = read_json(path)
    except (OSError, ValueError):
        current = None
    if not current or current.get('run') != run_id():
        shutil.rmtree(os.path.join(plan_dir, 'tasks'), ignore_errors=True)
        write_json(path, header(root))


def load_header(plan_dir, root):
    """The plan's header, or a PlanError saying why this run cannot apply it."""
    try:
        saved = read_json(os.path.join(plan_dir, 'plan.json'))
    except FileNotFoundError:
        raise PlanError('no saved plan at %s: make one first with ansible-playbook --check and the same %s'
                        % (plan_dir, PLAN_VAR))
    except (OSError, ValueError) as e:
        raise PlanError('the saved plan at %s cannot be read: %s' % (plan_dir, e))
    now = header(root)
    check_format(plan_dir, saved)
    if saved.get('collection_version') != now['collection_version']:
        raise PlanError('the saved plan at %s was made by ferro.proxmox %s; this is %s: make a new plan with this version'
                        % (plan_dir, saved.get('collection_version'), now['collection_version']))
    if saved.get('playbooks') != now['playbooks']:
        def names(h):
            return ', '.join('%s (sha256 %s)' % (p['name'], (p['sha256'] or '?')[:12]) for p in h) or 'none'
        raise PlanError('the saved plan at %s was made for another playbook: planned %s, now %s'
                        % (plan_dir, names(saved.get('playbooks') or []), names(now['playbooks'])))
    return saved


def check_format(plan_dir, saved):
    """PlanError for a header of another format version (read before anything else of the plan,
    whose other files an older version laid out differently)."""
    version = saved.get('format_version') if isinstance(saved, dict) else None
    if version != FORMAT_VERSION:
        raise PlanError('the saved plan at %s has format version %s; this collection reads version %d: make a new plan '
                        'with this version (nothing was written)' % (plan_dir, json.dumps(version), FORMAT_VERSION))


def args_moved(planned, now):
    """The options whose value differs between the plan and this run, in words."""
    def shown(v):
        return 'a changed secret' if isinstance(v, str) and HASH_PREFIX in v else json.dumps(v)
    moved = []
    for option in sorted(set(planned) | set(now)):
        was, is_ = planned.get(option), now.get(option)
        if was != is_:
            moved.append('%s %s → %s' % (option, shown(was), shown(is_)))
    return moved


def host_sequence(base, key):
    """The next place of a record in its host's run order (the records of the host so far)."""
    host_dir = os.path.dirname(record_path(base, key, 0))
    try:
        return len([n for n in os.listdir(host_dir) if n.endswith('.json') and not n.startswith('.')])
    except FileNotFoundError:
        return 0


def applied_dir():
    """The run-local record of the planned tasks this real run applied (for the end-of-run report)."""
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-applied')


def pointer_path():
    """Where the run's plan is named for the callback plugin (it cannot see host variables)."""
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-saved-plan.json')


def point(plan_dir, mode):
    """Name the run's plan for the callback plugin (written by the task that names another plan
    or mode than the file does, usually the run's first)."""
    data = {'plan': plan_dir, 'mode': mode}
    try:
        if read_json(pointer_path()) == data:
            return
    except (OSError, ValueError):
        pass
    write_json(pointer_path(), data)


def bound_values(planned_result, result):
    """The values the plan knew only after apply, as this run bound them."""
    return dict((k, result.get(k)) for k, v in (planned_result or {}).items()
                if isinstance(v, str) and KNOWN_AFTER_APPLY in v)
