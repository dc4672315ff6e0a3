# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
"""Test-only callback: appends every task result as one JSON line to $FERRO_RECORD_FILE."""

from __future__ import annotations

import json
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = '''
name: record_results
type: aggregate
short_description: record task results as JSON lines (ferro.proxmox tests)
description: [Appends each task result to the file named by FERRO_RECORD_FILE.]
requirements: [FERRO_RECORD_FILE in the environment]
'''


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'record_results'
    CALLBACK_NEEDS_ENABLED = True

    def _record(self, result, status):
        path = os.environ.get('FERRO_RECORD_FILE')
        if not path:
            return
        data = dict(result._result)
        entry = {
            'host': result._host.get_name(),
            'task': result._task.get_name(),
            'action': result._task.action,
            # The module the action resolved to (its FQCN), whatever name the task used.
            'resolved': getattr(result._task, 'resolved_action', None) or result._task.action,
            'status': status,
            'changed': bool(data.get('changed', False)),
            'result': data,
        }
        with open(path, 'a', encoding='utf-8') as f:
            f.write(json.dumps(entry, default=str) + '\n')

    def v2_runner_on_ok(self, result):
        self._record(result, 'ok')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, 'failed')

    def v2_runner_on_skipped(self, result):
        self._record(result, 'skipped')

    def v2_runner_item_on_ok(self, result):
        self._record(result, 'item_ok')

    def v2_runner_item_on_failed(self, result):
        self._record(result, 'item_failed')
