# -*- coding: utf-8 -*-
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A saved plan's run as a whole (issue 33; docs/saved-plans.md "The run"): the plan's key and
its signatures, the run's shape (--limit, --tags, --skip-tags), the files the approval covers,
one check run at a time, a plan applied once, and readable errors for a damaged plan file.

saved_plan.py holds the format of one record; native.py calls this module around each task;
the lookup `ferro.proxmox.saved_plan` closes a real run (every planned task of the host ran).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import time

from ansible import constants as C
from ansible import context

try:
    from ansible_collections.ferro.proxmox.plugins.plugin_utils import plan_cache as cache, plan_files as pf, \
        saved_plan as sp
except ImportError:  # loaded by path, next to saved_plan.py (native.py's fallback)
    import importlib.util as _util

    def _beside(name):
        here = os.path.dirname(os.path.abspath(__file__))
        spec = _util.spec_from_file_location('ferro_' + name, os.path.join(here, name + '.py'))
        module = _util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    sp, pf, cache = _beside('saved_plan'), _beside('plan_files'), _beside('plan_cache')

KEY_VAR = 'ferro_proxmox_plan_key'
KEY_ENV = 'FERRO_PROXMOX_PLAN_KEY'
# PBKDF2-HMAC-SHA256 rounds: a guess of the key material costs this much, offline or not.
KDF_ROUNDS = 200000
MAC_SUFFIX = '.mac'
RUN_FILE = 'run.json'        # the check run that made the plan: its shape, its key's id, its owner
INDEX_FILE = 'index.json'    # every record of the plan, and every file the approval covers
APPLY_FILE = 'apply.json'    # the real run that applied the plan, signed like the plan
SALT_FILE = 'salt'
# With the api_* options, what a record's arguments give plan_verify.connections (its CONNECTION).
CONNECTION_MORE = ('validate_certs', 'ca_path')
RECORD_SHAPE = (('host', str), ('module', str), ('task', str), ('path', str), ('occurrence', int), ('seq', int),
                ('args', dict), ('result', dict), ('reads', list), ('writes', list), ('vms', list))


# --- errors -----------------------------------------------------------------------------------

def load_file(path, what='plan file'):
    """The JSON object of a plan file, or a PlanError naming the file and what is wrong."""
    return _load(path, what)[1]


def _load(path, what):
    """(the bytes of a plan file, their JSON object), read once."""
    try:
        with open(path, 'rb') as f:
            raw = f.read()
    except FileNotFoundError:
        raise sp.PlanError('the saved plan is incomplete: its %s %s is missing' % (what, path))
    except OSError as e:
        raise sp.PlanError('the saved plan\'s %s %s cannot be read: %s' % (what, path, e.strerror or e))
    try:
        data = json.loads(raw.decode('utf-8'))
    except UnicodeDecodeError:
        raise sp.PlanError('the saved plan\'s %s %s is not text (not UTF-8): it is not a ferro.proxmox plan file'
                           % (what, path))
    except ValueError as e:
        kind = 'is empty' if not raw.strip() else 'is not valid JSON (truncated or damaged?): %s' % e
        raise sp.PlanError('the saved plan\'s %s %s %s' % (what, path, kind))
    if not isinstance(data, dict):
        raise sp.PlanError('the saved plan\'s %s %s holds a JSON %s, not an object: it is not a ferro.proxmox '
                           'plan file' % (what, path, type(data).__name__.replace('dict', 'object')))
    return raw, data


def check_record(path, record):
    """A record read from `path`, checked field by field (PlanError names the first bad one)."""
    for field, kind in RECORD_SHAPE:
        value = record.get(field)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise sp.PlanError('the saved plan\'s task record %s is not a ferro.proxmox task record: its field %r is %s, '
                               'not %s' % (path, field, 'missing' if value is None else 'a JSON %s' % type(value).__name__,
                                           {str: 'a string', int: 'a number', dict: 'an object', list: 'a list'}[kind]))
    for field in ('reads', 'writes', 'vms'):
        if any(not isinstance(item, dict) for item in record[field]):
            raise sp.PlanError('the saved plan\'s task record %s is damaged: an entry of %r is not an object'
                               % (path, field))
    return record


# --- the key and the signatures ----------------------------------------------------------------

def key_material(task_vars, templar, args):
    """(where the key comes from, its material): `ferro_proxmox_plan_key` (a variable), else
    FERRO_PROXMOX_PLAN_KEY (the controller's environment), else the connection's secret (the API
    token's secret, else the password). None of them is ever written to the plan directory."""
    value = task_vars.get(KEY_VAR)
    if value is not None and templar is not None:
        value = templar.template(value)
    if value:
        return KEY_VAR, str(value)
    if os.environ.get(KEY_ENV):
        return KEY_ENV, os.environ[KEY_ENV]
    for option in ('api_token_secret', 'api_password'):
        if args.get(option):
            return option, str(args[option])
    raise sp.PlanError('a saved plan needs a key to sign it, and this task has none: set %s (a variable) or %s, '
                       'or give the connection an api_token_secret or api_password' % (KEY_VAR, KEY_ENV))


def plan_key(plan_dir, material, salt=None):
    """The plan's HMAC key: PBKDF2 of the material with the plan's salt (public, in the plan
    directory; `salt` when the caller read it), cached for this run in ansible-core's per-run
    local temp dir (mode 0700, removed when the run ends), as each task runs in its own process."""
    salt = read_salt(plan_dir) if salt is None else salt
    name = hashlib.sha256(salt + b'\0' + material.encode('utf-8')).hexdigest()[:32]
    cache = os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-plan-keys', name)
    try:
        with open(cache, 'rb') as f:
            return f.read()
    except OSError:
        pass
    key = hashlib.pbkdf2_hmac('sha256', material.encode('utf-8'), b'ferro.proxmox saved plan\0' + salt, KDF_ROUNDS)
    _cache_key(cache, key)
    return key


def _run_key_path(plan_dir):
    digest = hashlib.sha256(os.path.abspath(plan_dir).encode('utf-8')).hexdigest()[:32]
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-plan-keys', 'dir-' + digest)


def run_key(plan_dir):
    """The key this run's tasks applied the plan at `plan_dir` with (for the closing lookup,
    which has no connection secret), or None when no task of the run got that far."""
    try:
        with open(_run_key_path(plan_dir), 'rb') as f:
            return f.read() or None
    except OSError:
        return None


def _cache_key(cache, key):
    try:
        os.makedirs(os.path.dirname(cache), mode=0o700, exist_ok=True)
        fd = os.open(cache, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, 'wb') as f:
            f.write(key)
    except OSError:
        pass


def read_salt(plan_dir):
    try:
        with open(os.path.join(plan_dir, SALT_FILE), 'rb') as f:  # bytes: no text codec to look up per process
            return bytes.fromhex(f.read().decode('ascii').strip())
    except FileNotFoundError:
        raise sp.PlanError('no saved plan at %s: make one first with ansible-playbook --check and the same %s'
                           % (plan_dir, sp.PLAN_VAR))
    except (OSError, ValueError):
        raise sp.PlanError('the saved plan\'s file %s is damaged: make a new plan'
                           % os.path.join(plan_dir, SALT_FILE))


def key_id(key):
    return hmac.new(key, b'key id', hashlib.sha256).hexdigest()[:16]


def _mac(key, plan_dir, path, raw):
    name = os.path.relpath(path, plan_dir).encode('utf-8')
    return hmac.new(key, name + b'\0' + raw, hashlib.sha256).hexdigest()


def write_signed(plan_dir, path, data, key, hot=False):
    """Write a plan file and its signature (`<file>.mac`: HMAC-SHA256 under the plan's key of
    its name in the directory and its bytes), each renamed into place (`hot`: saved_plan.write_json)."""
    raw = sp.write_json(path, data, hot)
    tmp = path + MAC_SUFFIX + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(_mac(key, plan_dir, path, raw).encode('ascii'))
    sp.into_place(tmp, path + MAC_SUFFIX, hot)


def read_signed(plan_dir, path, key, what='plan file'):
    """A plan file, verified against its signature: PlanError on any change made after the
    check run (by hand or otherwise) or a file the check run did not write. The signature is
    checked on the very bytes the object was parsed from (one read)."""
    raw, data = _load(path, what)
    try:
        with open(path + MAC_SUFFIX, 'rb') as f:
            mac = f.read().decode('ascii', 'replace').strip()
    except OSError:
        raise sp.PlanError('the saved plan\'s %s %s has no signature: it was not written by the check run; '
                           'nothing was written' % (what, path))
    if not hmac.compare_digest(mac, _mac(key, plan_dir, path, raw)):
        raise sp.PlanError('the saved plan\'s %s %s was changed after the check run made it (its signature does not '
                           'match; or this run\'s key differs from the plan\'s: %s, %s or the connection\'s secret): '
                           'nothing was written; make and approve a new plan' % (what, path, KEY_VAR, KEY_ENV))
    return data


def load_record(plan_dir, path, key):
    return check_record(path, read_signed(plan_dir, path, key, 'task record'))


def planned_record(plan_dir, path, key, key_info, occurrence):
    """The verified record of this task's `occurrence`, or a PlanError (none: not in the plan)."""
    if not os.path.exists(path):
        raise sp.PlanError('the saved plan no longer holds: this task is not in it (host %s, task %r at %s, run %d of '
                           'it on this host): nothing was written; make and approve a new plan'
                           % (key_info['host'], key_info['task'], key_info['path'], occurrence + 1))
    return load_record(plan_dir, path, key)


# --- the run's shape ---------------------------------------------------------------------------

def selection():
    """What of the playbook this run runs: --limit, --tags, --skip-tags as given."""
    args = context.CLIARGS
    return {'limit': args.get('subset') or None,
            'tags': sorted(set(args.get('tags') or ()) - {'all'}),
            'skip_tags': sorted(args.get('skip_tags') or ())}


def selection_moved(planned, now):
    words = []
    for option in ('limit', 'tags', 'skip_tags'):
        if planned.get(option) != now.get(option):
            words.append('--%s %s → %s' % (option.replace('_', '-'), json.dumps(planned.get(option)),
                                           json.dumps(now.get(option))))
    return words


def _alive(owner):
    """Whether the run described by `owner` still runs: its per-run local temp dir exists
    (ansible-playbook removes it on exit) on this machine."""
    return bool(owner) and owner.get('machine') == socket.gethostname() and os.path.isdir(owner.get('tmp') or '')


def owner():
    return {'run': sp.run_id(), 'tmp': C.DEFAULT_LOCAL_TMP, 'machine': socket.gethostname(), 'pid': os.getppid(),
            'started': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}


def _peek(path):
    try:
        return load_file(path)
    except sp.PlanError:
        return None


def read_applied(plan_dir, key):
    """The plan's apply file, verified against its signature (None when no real run applied the
    plan): an apply file edited, or removed while its signature or the run file says a run
    applied, is a PlanError."""
    path = os.path.join(plan_dir, APPLY_FILE)
    if os.path.exists(path) or os.path.exists(path + MAC_SUFFIX):
        return read_signed(plan_dir, path, key, 'apply record')
    return None


# --- the files the approval covers: plan_files.py -----------------------------------------------

loaded_files, files_moved = pf.loaded_files, pf.files_moved


# --- the check run ------------------------------------------------------------------------------

CLOSING_FILE = 'closing.json'   # the hosts whose check run ended with the lookup (a warning only)


def _in_use(plan_dir, run):
    """PlanError when another live run (a check run saving, or a real run applying) owns the
    directory."""
    for name, doing in ((RUN_FILE, 'a --check run saving a plan'), (APPLY_FILE, 'a real run applying the plan')):
        other = (_peek(os.path.join(plan_dir, name)) or {}).get('owner')
        if isinstance(other, dict) and other.get('run') != run and _alive(other):
            raise sp.PlanError('the plan directory %s is in use by %s (pid %s, started %s): two runs cannot use one '
                               'plan directory at once; wait for it to end, or give this run another %s'
                               % (plan_dir, doing, other.get('pid'), other.get('started'), sp.PLAN_VAR))


def start_save(plan_dir, root, material):
    """Under the lock, each task of a check run: the first one starts a new plan (refused while
    another run uses the directory); every one gets the plan's key, the same for every task."""
    run = sp.run_id()
    header = _peek(os.path.join(plan_dir, 'plan.json')) or {}
    if header.get('run') != run:
        _in_use(plan_dir, run)
        for name in (RUN_FILE, INDEX_FILE, APPLY_FILE, CLOSING_FILE, 'plan.json', 'key'):
            for path in (os.path.join(plan_dir, name), os.path.join(plan_dir, name + MAC_SUFFIX)):
                if os.path.exists(path):
                    os.remove(path)
        tmp = os.path.join(plan_dir, '.tmp-' + SALT_FILE)
        with open(tmp, 'w', encoding='ascii') as f:
            f.write(os.urandom(16).hex())
        os.replace(tmp, os.path.join(plan_dir, SALT_FILE))
        sp.begin_save(plan_dir, root)
        key = plan_key(plan_dir, material[1])
        write_signed(plan_dir, os.path.join(plan_dir, 'plan.json'), load_file(os.path.join(plan_dir, 'plan.json')), key)
        write_signed(plan_dir, os.path.join(plan_dir, RUN_FILE),
                     {'owner': owner(), 'selection': selection(), 'key_id': key_id(key), 'key_from': material[0]}, key)
        write_signed(plan_dir, os.path.join(plan_dir, INDEX_FILE), {'records': [], 'files': {}}, key)
        return key
    key = plan_key(plan_dir, material[1])
    info = load_file(os.path.join(plan_dir, RUN_FILE))
    if info.get('key_id') != key_id(key):
        raise sp.PlanError('this task signs the plan with another key than the plan\'s first task (this one\'s from %s, '
                           'the first\'s from %s): the tasks of one plan share one key; set %s (a variable) or %s'
                           % (material[0], info.get('key_from'), KEY_VAR, KEY_ENV))
    return key


def save_record(plan_dir, key, path, record, task, loader):
    """Under the lock: a task's record, signed, listed in the index with the files it loaded."""
    write_signed(plan_dir, path, record, key)
    index_path = os.path.join(plan_dir, INDEX_FILE)
    index = read_signed(plan_dir, index_path, key, 'index')
    index['records'] = sorted(set(index.get('records') or []) | {os.path.relpath(path, plan_dir)})
    files = dict(index.get('files') or {})
    files.update(loaded_files(task, loader, plan_dir))
    index['files'] = files
    write_signed(plan_dir, index_path, index, key)


def host_digest(host):
    """The name of a host's directory of records (saved_plan.record_path's)."""
    return os.path.basename(os.path.dirname(sp.record_path('', {'host': host, 'module': '', 'task': '', 'path': ''}, 0)))


def mark_closing(plan_dir, host):
    with sp.locked(plan_dir):
        path = os.path.join(plan_dir, CLOSING_FILE)
        data = _peek(path) or {}
        data['hosts'] = sorted(set(data.get('hosts') or []) | {host})
        sp.write_json(path, data)


# --- the real run -------------------------------------------------------------------------------

def _same_key(plan_dir, material, key, planned_id, planned_from):
    if planned_id != key_id(key):
        raise sp.PlanError('the saved plan at %s was signed with another key than this run\'s (this run\'s from %s, '
                           'the plan\'s from %s): give this run the key the check run had (%s, %s or the same '
                           'connection secret); nothing was written'
                           % (plan_dir, material[0], planned_from, KEY_VAR, KEY_ENV))


def begin_apply(plan_dir, root, material, task, loader):
    """Under the lock, each task of a real run, before the plan's other checks: returns the
    plan's key, warnings and the run's note of the plan (plan_cache.py). The run's first task
    verifies the whole plan (`_verify_whole`) and writes the note; a later task takes from the
    note what that task verified, unless a file of the plan changed since, when it verifies the
    whole plan again. Every task: its key the plan's, no file loaded now that the plan did not cover."""
    note = cache.read(plan_dir)
    if note is None:
        key, warnings, note = _verify_whole(plan_dir, root, material)
    else:
        key, warnings = plan_key(plan_dir, material[1], bytes.fromhex(note['salt'])), []
        _same_key(plan_dir, material, key, note['key_id'], note.get('key_from'))
    unknown = files_moved({}, pf.loaded_paths(task, loader, plan_dir) - set(note['files']))
    if unknown:
        raise sp.PlanError('this task loads files the plan was not approved with: %s. Nothing was written; make and '
                           'approve a new plan' % '; '.join(unknown))
    return key, warnings, note


def _verify_whole(plan_dir, root, material):
    """The whole plan verified: the header's format first, the key, every file's signature, the
    records listed, the run's shape, the plan not applied before, the covered files unchanged.
    Returns the key, warnings and the run's note of what it verified."""
    run, taken = sp.run_id(), cache.stamps(plan_dir)
    if os.path.exists(os.path.join(plan_dir, 'plan.json')):
        sp.check_format(plan_dir, load_file(os.path.join(plan_dir, 'plan.json'), 'header'))
    salt = read_salt(plan_dir)
    key = plan_key(plan_dir, material[1], salt)
    info = load_file(os.path.join(plan_dir, RUN_FILE), 'run file')
    _same_key(plan_dir, material, key, info.get('key_id'), info.get('key_from'))
    info = read_signed(plan_dir, os.path.join(plan_dir, RUN_FILE), key, 'run file')
    index = read_signed(plan_dir, os.path.join(plan_dir, INDEX_FILE), key, 'index')
    warnings = []
    read_signed(plan_dir, os.path.join(plan_dir, 'plan.json'), key, 'header')
    sp.load_header(plan_dir, root)   # another collection version or playbook, in its words
    _in_use(plan_dir, run)
    applied = read_applied(plan_dir, key)
    if applied and (applied.get('owner') or {}).get('run') != run and used(applied):
        raise sp.PlanError(once_refusal(plan_dir, applied))
    by = info.get('applied_by') or {}
    if not applied and by.get('run') not in (None, run):
        raise sp.PlanError('the saved plan at %s was applied by a run started %s, and its record of what it applied '
                           '(%s) was removed: a plan applies once; nothing was written; make and approve a new '
                           'plan' % (plan_dir, by.get('started'), APPLY_FILE))
    moved = selection_moved(info.get('selection') or {}, selection())
    if moved:
        raise sp.PlanError('the saved plan at %s was made for another part of the playbook: %s. Run it with the '
                           'options of the check run; nothing was written' % (plan_dir, '; '.join(moved)))
    listed = set(index.get('records') or [])
    present = set()
    for top, _dirs, files in os.walk(os.path.join(plan_dir, 'tasks')):
        present.update(os.path.relpath(os.path.join(top, f), plan_dir) for f in files
                       if f.endswith('.json') and not f.startswith('.'))
    if listed != present:
        raise sp.PlanError('the saved plan at %s does not hold the records its check run wrote: %s; nothing was '
                           'written; make and approve a new plan'
                           % (plan_dir, '; '.join(['%s is missing' % p for p in sorted(listed - present)]
                                                  + ['%s was added' % p for p in sorted(present - listed)])))
    # What later tasks take from the note: each record's place, and each API host's first record's
    # arguments (plan_verify.connections).
    records, hosts = {}, []
    for rel in sorted(listed):
        record = load_record(plan_dir, os.path.join(plan_dir, rel), key)
        records[rel] = [record['seq'], record['task'], record['path']]
        if record['args'].get('api_host') not in [h for h, _args in hosts]:
            conn = dict((k, v) for k, v in record['args'].items() if k.startswith('api_') or k in CONNECTION_MORE)
            hosts.append([record['args'].get('api_host'), conn])
    changed = files_moved(index.get('files') or {})
    if changed:
        raise sp.PlanError('the files the plan was approved with changed since the check run: %s. Nothing was '
                           'written; make and approve a new plan' % '; '.join(changed))
    closing = set((_peek(os.path.join(plan_dir, CLOSING_FILE)) or {}).get('hosts') or [])
    if set(rel.split(os.sep)[1] for rel in listed) - set(host_digest(h) for h in closing):
        warnings.append('the playbook of the saved plan %s does not end with the check "ferro.proxmox.saved_plan" '
                        'on every host: a planned task skipped after the last task that runs would not fail '
                        'the run (docs/saved-plans.md "The run")' % plan_dir)
    _cache_key(_run_key_path(plan_dir), key)
    note = {'plan': plan_dir, 'salt': salt.hex(), 'key_id': info.get('key_id'), 'key_from': info.get('key_from'),
            'files': sorted(index.get('files') or {}), 'records': records, 'hosts': hosts}
    cache.write(plan_dir, note, taken)
    return key, warnings, note


def _task_words(entry):
    return '%r at %s (host %s)' % (entry.get('task'), entry.get('path'), entry.get('host'))


def used(applied):
    """Whether a run wrote with the plan: it closed, or a task applied, failed after a write, or
    never reported (a task refused before any write, or a preview, leaves the plan usable)."""
    return bool(applied.get('complete')) or any(
        not str(e.get('outcome')).startswith(('refused', 'preview')) for e in applied.get('attempted') or [])


def once_refusal(plan_dir, applied):
    started = (applied.get('owner') or {}).get('started')
    entries = applied.get('attempted') or []
    if applied.get('complete'):
        return ('the saved plan at %s was applied already (a run started %s; every planned task ran): a plan applies '
                'once; nothing was written; make and approve a new plan' % (plan_dir, started))
    done = [_task_words(e) for e in entries if e.get('outcome') == 'applied']
    failed = [_task_words(e) + ': ' + str(e.get('outcome')) for e in entries if e.get('outcome') != 'applied']
    return ('the saved plan at %s was applied in part by a run started %s (applied: %s; failed or stopped: %s): a plan '
            'applies once, and one that stopped part-way cannot be applied again; nothing was written; make and '
            'approve a new plan' % (plan_dir, started, '; '.join(done) or 'none', '; '.join(failed) or 'none'))


def mark_attempt(plan_dir, record_path, key_info, key, outcome=None):
    """Under the lock: the plan's apply file (made by the run's first task that reaches its
    module, which also notes the run in the signed run file) notes this task: before its module
    runs (outcome None), then its outcome. Signed with the plan's key."""
    path = os.path.join(plan_dir, APPLY_FILE)
    applied = read_applied(plan_dir, key) or {}
    if (applied.get('owner') or {}).get('run') != sp.run_id():
        applied = {'owner': owner(), 'attempted': [], 'closed': []}
        run_path = os.path.join(plan_dir, RUN_FILE)
        write_signed(plan_dir, run_path, dict(read_signed(plan_dir, run_path, key, 'run file'),
                                              applied_by=applied['owner']), key)
        cache.restamp(plan_dir, (RUN_FILE, RUN_FILE + MAC_SUFFIX))
    rel = os.path.relpath(record_path, plan_dir)
    entries = [e for e in applied.get('attempted') or [] if e.get('record') != rel]
    entries.append(dict(record=rel, host=key_info['host'], task=key_info['task'], path=key_info['path'],
                        outcome=outcome or 'started'))
    applied['attempted'] = entries
    write_signed(plan_dir, path, applied, key, hot=True)
    return applied


def started(saved):
    """A real run's task that passed every check of the plan, just before its module runs: noted
    in the plan's apply file (a check run's task: nothing)."""
    if saved.get('mode') in ('apply', 'preview'):
        with sp.locked(saved['dir']):
            mark_attempt(saved['dir'], saved['path'], saved['key'], saved['secret'],
                         'preview' if saved['mode'] == 'preview' else None)


def applied_words(applied):
    return '; '.join(_task_words(e) for e in (applied.get('attempted') or []) if e.get('outcome') == 'applied') or 'none'


def close_host(plan_dir, host):
    """The real run's lookup: the planned tasks of `host` this run did not apply (words), and
    the plan marked used (complete when every host of the plan closed with none missing). A run
    none of whose tasks reached a module (no key: `run_key`) applied nothing, and notes nothing."""
    host_dir = os.path.join(plan_dir, 'tasks', host_digest(host))
    key = run_key(plan_dir)
    with sp.locked(plan_dir):
        path = os.path.join(plan_dir, APPLY_FILE)
        applied = (read_applied(plan_dir, key) if key else None) or {'owner': owner(), 'attempted': [], 'closed': []}
        done = set(e.get('record') for e in applied.get('attempted') or [] if e.get('outcome') in ('applied', 'preview'))
        missing = []
        for name in sorted(os.listdir(host_dir)) if os.path.isdir(host_dir) else ():
            if not name.endswith('.json') or name.startswith('.'):
                continue
            rel = os.path.relpath(os.path.join(host_dir, name), plan_dir)
            if rel not in done:
                record = load_file(os.path.join(host_dir, name), 'task record')
                missing.append((record.get('seq', 0), '%r at %s' % (record.get('task'), record.get('path'))))
        applied['closed'] = sorted(set(applied.get('closed') or []) | {host})
        if not missing:
            hosts = set(os.listdir(os.path.join(plan_dir, 'tasks'))) if os.path.isdir(os.path.join(plan_dir, 'tasks')) else set()
            applied['complete'] = hosts <= set(host_digest(h) for h in applied['closed']) and not applied.get('incomplete')
        else:
            applied['incomplete'] = True
            applied['complete'] = False
        if key:
            write_signed(plan_dir, path, applied, key, hot=True)
    return [words for _seq, words in sorted(missing)], applied


def real_run():
    """Whether this ansible-playbook run applies (no --check): a task's own `check_mode` is not
    the run's."""
    return not context.CLIARGS.get('check')


def finish_apply(saved, data):
    """After the module of a real run's task: its outcome noted in the plan and for the end of
    the run, the values bound at apply time reported, and a failure saying what the run applied."""
    planned = saved['planned']
    data['saved_plan'] = {'planned_changed': (planned.get('result') or {}).get('changed'),
                          'bound': sp.bound_values(planned.get('result'), data)}
    if saved['mode'] == 'preview':
        data['saved_plan'].update(preview=True)
    if planned.get('outside_plan'):
        data['saved_plan'].update(outside_plan=True)
    if saved['warnings']:
        data['warnings'] = list(data.get('warnings') or []) + saved['warnings']
    if saved['mode'] == 'preview':
        outcome = 'preview'
    elif not data.get('failed'):
        outcome = 'applied'
    else:
        # A module reports `changed` on a failure when Proxmox VE accepted a write before it.
        outcome = '%s: %s' % ('failed' if data.get('changed') else 'refused', data.get('msg'))
    with sp.locked(saved['dir']):
        applied = mark_attempt(saved['dir'], saved['path'], saved['key'], saved['secret'], outcome)
    if data.get('failed') and used(applied):
        data['msg'] = ('%s (the saved plan stopped part-way; the tasks it applied before: %s; a plan that stopped '
                       'part-way cannot be applied again)' % (data.get('msg'), applied_words(applied)))
