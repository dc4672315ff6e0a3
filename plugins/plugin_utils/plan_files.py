# -*- coding: utf-8 -*-
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The files a saved plan's approval covers (docs/saved-plans.md "The files the approval covers"):
every file a task's play loads, their digests, and the ones that changed or were not covered.

plan_run.py hashes them into the plan's index in the check run and compares them in the real run.
"""

from __future__ import annotations

import hashlib
import os

from ansible import context


def _sha256(path):
    try:
        with open(path, 'rb') as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def loaded_paths(task, loader, plan_dir):
    """Every file this task's play depends on, as the run has loaded it so far: the files
    ansible-core parsed (playbooks, imported and included task files, inventory variables), the
    play's vars_files, the task's own file and those of the includes around it, each role's whole
    directory, and the playbook directory's templates/, files/ (where lookup('template') and
    lookup('file') look), vars/, group_vars/ and host_vars/."""
    paths = set()
    for name in list(getattr(loader, '_FILE_CACHE', {}) or {}):
        if isinstance(name, str):
            paths.add(name)
    for playbook in context.CLIARGS.get('args') or ():
        paths.add(os.path.abspath(playbook))
    dirs = set()
    node = task
    while node is not None:
        path = getattr(node, 'get_path', lambda: '')() or ''
        if path:
            paths.add(path.rpartition(':')[0] or path)
        role = getattr(node, '_role', None)
        if role is not None and getattr(role, '_role_path', None):
            dirs.add(role._role_path)
        node = getattr(node, '_parent', None)
    for role in task.get_dep_chain() or ():
        if getattr(role, '_role_path', None):
            dirs.add(role._role_path)
    for playbook in context.CLIARGS.get('args') or ():
        base = os.path.dirname(os.path.abspath(playbook))
        dirs.update(os.path.join(base, d) for d in ('templates', 'files', 'vars', 'group_vars', 'host_vars'))
    # A play's vars_files are read uncached (ansible-core's VariableManager): by their names.
    play = getattr(task, 'play', None) or getattr(getattr(task, '_parent', None), '_play', None)
    for entry in getattr(play, 'vars_files', None) or ():
        for name in entry if isinstance(entry, list) else [entry]:
            if isinstance(name, str) and '{{' not in name:
                paths.add(loader.path_dwim(name))
    for top in dirs:
        for root, subdirs, files in os.walk(top):
            subdirs[:] = [d for d in subdirs if not d.startswith('.')]
            paths.update(os.path.join(root, f) for f in files if not f.startswith('.'))
    plan_dir = os.path.realpath(plan_dir) + os.sep
    out = set()
    for path in paths:
        real = os.path.realpath(path)
        if os.path.isfile(real) and not real.startswith(plan_dir) and not real.endswith('.retry'):
            out.add(real)
    return out


def loaded_files(task, loader, plan_dir):
    """`loaded_paths` with each file's sha256 (the check run's record of what it approved)."""
    return dict((path, _sha256(path)) for path in loaded_paths(task, loader, plan_dir))


def files_moved(planned, now_paths=None):
    """The covered files whose content differs from the plan's (re-read now), in words; with
    `now_paths`, also the files this run loads that the plan did not cover."""
    words = []
    for path in sorted(planned):
        now = _sha256(path)
        if now != planned[path]:
            words.append('%s %s' % (path, 'was removed' if now is None else 'changed'))
    for path in sorted(set(now_paths or ()) - set(planned)):
        words.append('%s is loaded now and was not when the plan was made' % path)
    return words
