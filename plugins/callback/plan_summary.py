# -*- coding: utf-8 -*-
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ferro.proxmox.plan_summary: the saved plan's summary at the end of a run (docs/saved-plans.md)."""

from __future__ import annotations

DOCUMENTATION = r'''
name: plan_summary
type: aggregate
short_description: Summarise a ferro.proxmox saved plan at the end of the run
description:
  - At the end of a C(--check) run that saves a plan (C(ferro_proxmox_plan) or C(FERRO_PROXMOX_PLAN)
    set), prints per host what the plan will create, change, destroy and restart, and the plan's path.
  - At the end of a real run that applies a plan, lists the planned tasks this run did not apply
    (a task the run skipped, one the playbook no longer has, one refused or failed).
  - A callback cannot change the run's exit code; end the playbook with the lookup
    C(ferro.proxmox.saved_plan) for a run that fails when the plan was not applied whole.
  - Enable it in ansible.cfg with C(callbacks_enabled = ferro.proxmox.plan_summary).
author: "ferro.proxmox contributors (@ferro-proxmox)"
requirements:
  - enable in configuration
'''

import json
import os
import re

from ansible.plugins.callback import CallbackBase
from ansible_collections.ferro.proxmox.plugins.plugin_utils import saved_plan

_VM = re.compile(r'^/nodes/[^/]+/qemu/(\d+)(/.*)?$')


def describe(write):
    """(kind, words) for one planned request: create, change, destroy or restart."""
    method, path, params = write['method'], write['path'], dict(write.get('params') or [])
    m = _VM.match(path)
    if method == 'PUT' and path == '/pools':
        return 'change', 'move VM %s to pool %s' % (params.get('vms'), params.get('poolid'))
    if method == 'POST' and re.match(r'^/nodes/[^/]+/qemu$', path):
        return 'create', 'create VM %s (%s)' % (params.get('vmid'), params.get('name') or 'no name')
    if not m:
        return 'change', '%s %s' % (method, path)
    vmid, rest = m.group(1), m.group(2) or ''
    if method == 'DELETE' and rest == '':
        return 'destroy', 'destroy VM %s' % vmid
    if rest == '/clone':
        return 'create', 'clone VM %s to %s' % (vmid, params.get('newid'))
    if rest.startswith('/status/'):
        action = rest.rsplit('/', 1)[1]
        kind = 'restart' if action in ('reboot', 'reset') else 'power'
        return kind, '%s VM %s' % (action, vmid)
    keys = sorted(k for k in params if k not in ('digest', 'skiplock', 'background_delay'))
    return 'change', 'VM %s %s%s: %s' % (vmid, method, rest and ' ' + rest.lstrip('/'), ', '.join(keys))


def summary(plan_dir):
    """The lines of a saved plan's summary, per host."""
    tasks = os.path.join(plan_dir, 'tasks')
    per_host = {}
    for root, _dirs, files in os.walk(tasks):
        for name in sorted(files):
            if not name.endswith('.json') or name.startswith('.'):
                continue
            with open(os.path.join(root, name), encoding='utf-8') as f:
                record = json.load(f)
            per_host.setdefault(record['host'], []).append(record)
    lines = ['ferro.proxmox saved plan: %s' % plan_dir]
    for host in sorted(per_host):
        counts = {}
        details = []
        for record in per_host[host]:
            if record.get('outside_plan'):
                details.append('    ! %s: check_mode: false, runs as written in both runs, outside the plan'
                               % record['task'])
            if (record.get('result') or {}).get('failed'):
                details.append('    ! %s: fails: %s' % (record['task'], record['result'].get('msg')))
            for write in record.get('writes') or []:
                kind, words = describe(write)
                counts[kind] = counts.get(kind, 0) + 1
                details.append('    %s %s  (%s)' % ({'create': '+', 'destroy': '-'}.get(kind, '~'), words, record['task']))
        total = ', '.join('%d to %s' % (counts.get(k, 0), k) for k in ('create', 'change', 'destroy', 'restart'))
        lines.append('  %s: %s%s' % (host, total, ', %d power' % counts['power'] if counts.get('power') else ''))
        lines.extend(details)
    return lines


def not_applied(plan_dir, applied_dir):
    """The planned tasks this run did not apply: not run, refused before their module ran (a
    task's marker is written before its checks), or failed (its outcome in the plan's apply file,
    noted by this run after its module)."""
    outcome = {}
    for root, _dirs, files in os.walk(applied_dir):
        for name in files:
            try:
                with open(os.path.join(root, name), encoding='utf-8') as f:
                    outcome[json.load(f)['record']] = 'refused before its module ran'
            except (OSError, ValueError, KeyError, TypeError):
                continue
    try:
        with open(os.path.join(plan_dir, 'apply.json'), encoding='utf-8') as f:
            applied = json.load(f)
        if (applied.get('owner') or {}).get('run') == saved_plan.run_id():
            for entry in applied.get('attempted') or []:
                outcome[os.path.join(plan_dir, entry['record'])] = entry['outcome']
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    missing = []
    for root, _dirs, files in os.walk(os.path.join(plan_dir, 'tasks')):
        for name in sorted(files):
            path = os.path.join(root, name)
            if not name.endswith('.json') or name.startswith('.') or outcome.get(path) in ('applied', 'preview'):
                continue
            try:
                with open(path, encoding='utf-8') as f:
                    record = json.load(f)
                words = '%s: %r at %s' % (record['host'], record['task'], record['path'])
            except (OSError, ValueError, KeyError, TypeError):
                words = path
            missing.append('%s (%s)' % (words, (outcome.get(path) or 'did not run').split(':')[0]))
    return missing


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'ferro.proxmox.plan_summary'
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_stats(self, stats):
        try:
            with open(saved_plan.pointer_path(), encoding='utf-8') as f:
                pointer = json.load(f)
        except (OSError, ValueError):
            return
        plan_dir = pointer['plan']
        if pointer['mode'] == 'save':
            for line in summary(plan_dir):
                self._display.display(line)
            return
        missing = not_applied(plan_dir, saved_plan.applied_dir())
        if missing:
            self._display.warning('ferro.proxmox saved plan %s: planned tasks this run did not apply: %s'
                                  % (plan_dir, '; '.join(missing)))
        else:
            self._display.display('ferro.proxmox saved plan %s: every planned task ran' % plan_dir)
