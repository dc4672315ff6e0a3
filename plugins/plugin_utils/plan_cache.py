# -*- coding: utf-8 -*-
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A real run's note of the saved plan its first task verified whole (docs/saved-plans.md, "What
a run keeps between its tasks"): what every later task of the run takes from it instead of reading
and verifying the plan's files again, and the test (each file's inode, size, modification and change times)
that sends a task back to reading and verifying them when one of them changed.

Each task runs in its own process (a fork of ansible-playbook), so the note is a file in
ansible-core's per-run local temp dir (mode 0700, this run's only, removed when the run ends),
written by plan_run.begin_apply under the plan's lock. No plan file is ever written from it.
"""

from __future__ import annotations

import hashlib
import json
import os

from ansible import constants as C

# The plan files the note stands for: a change to any of them (an edit, a rename into place, a
# new check run) and the note is not used; the task verifies them as the first task did.
STAMPED = ('plan.json', 'plan.json.mac', 'run.json', 'run.json.mac', 'index.json', 'index.json.mac', 'salt')


def _digest(plan_dir):
    return hashlib.sha256(os.path.abspath(plan_dir).encode('utf-8')).hexdigest()[:32]


def note_path(plan_dir):
    """Where this run keeps its note of the plan at `plan_dir` (one per plan: a play variable may
    give each play its own)."""
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-plan-verified', 'dir-' + _digest(plan_dir))


def stamps(plan_dir):
    """[device, inode, size, mtime and ctime in ns] of each stamped file (None for one that is
    missing): a rename into place gives another inode, an edit in place another ctime, which no
    user can set back (utime sets the mtime only)."""
    out = {}
    for name in STAMPED:
        try:
            st = os.stat(os.path.join(plan_dir, name))
            out[name] = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        except OSError:
            out[name] = None
    return out


def write(plan_dir, note, taken):
    """Write the note (under the plan's lock) with `taken`, the stamps taken before the files
    were read and verified: a file changed while they were is not the one the note stands for."""
    path = note_path(plan_dir)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(json.dumps(dict(note, stamps=taken)))
    os.replace(tmp, path)


def verified(plan_dir):
    """Whether a task of this run verified the plan at `plan_dir` whole (the note exists)."""
    return os.path.exists(note_path(plan_dir))


def read(plan_dir):
    """The note, when no stamped file changed since it was written; else None (the task reads
    and verifies the plan's files)."""
    try:
        with open(note_path(plan_dir), encoding='utf-8') as f:
            note = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(note, dict) or note.get('stamps') != stamps(plan_dir):
        return None
    return note


def restamp(plan_dir, names):
    """After this run itself rewrote the stamped files `names` (run.json's `applied_by`): the
    note stands for them as they are now, and for the others as they were. Under the plan's
    lock, right after the write it follows."""
    try:
        with open(note_path(plan_dir), encoding='utf-8') as f:
            note = json.load(f)
        now = stamps(plan_dir)
        kept = dict(note['stamps'], **dict((n, now[n]) for n in names))
    except (OSError, ValueError, KeyError, TypeError):
        return
    path = note_path(plan_dir)
    with open(path + '.tmp', 'w', encoding='utf-8') as f:
        f.write(json.dumps(dict(note, stamps=kept)))
    os.replace(path + '.tmp', path)


def skipped_before(note, applied_dir, host_dir, seq):
    """The planned tasks of one host (`host_dir`, its records' directory name) placed before
    `seq` in the plan that this run did not hand to a module (no marker of the same name in
    `applied_dir`, the run's markers of that host), in words."""
    try:
        ran = set(n for n in os.listdir(applied_dir) if not n.startswith('.'))
    except FileNotFoundError:
        ran = set()
    missing = []
    for rel, (order, task, path) in (note.get('records') or {}).items():
        parts = rel.split(os.sep)
        if len(parts) == 3 and parts[1] == host_dir and parts[2] not in ran and order < seq:
            missing.append((order, '%r at %s' % (task, path)))
    return [words for _order, words in sorted(missing)]
