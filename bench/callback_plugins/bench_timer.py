"""Benchmark timer (bench/run.py): when the play started and when the playbook ended, in this
ansible-playbook process, so a run's time per task leaves out the interpreter's start-up; and the
`vmid` each host's tasks returned, in order (the fleet counts hosts told the same vmid).

Enabled by ANSIBLE_CALLBACKS_ENABLED=bench_timer; writes JSON to $BENCH_TIMER_FILE.
"""

import json
import os
import time
from collections.abc import Mapping

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = '''
name: bench_timer
type: aggregate
short_description: times the plays of a benchmark run
description: Writes the play's start and the playbook's end (time.perf_counter), and the vmids each host's
  tasks returned, to $BENCH_TIMER_FILE.
'''


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'bench_timer'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._play_start = None
        self._tasks = 0
        self._vmids = {}

    def v2_playbook_on_play_start(self, play):
        if self._play_start is None:
            self._play_start = time.perf_counter()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._tasks += 1

    def v2_runner_on_ok(self, result):
        # `host` and `result` from ansible-core 2.19; `_host` and `_result` before it.
        answer = getattr(result, 'result', None)
        answer = answer if isinstance(answer, Mapping) else result._result
        if answer.get('vmid') is not None:
            host = getattr(result, 'host', None) or result._host
            self._vmids.setdefault(host.get_name(), []).append(str(answer['vmid']))

    def v2_playbook_on_stats(self, stats):
        end = time.perf_counter()
        path = os.environ.get('BENCH_TIMER_FILE')
        if path and self._play_start is not None:
            with open(path, 'w', encoding='utf-8') as f:
                json.dump({'elapsed': end - self._play_start, 'tasks_started': self._tasks, 'vmids': self._vmids}, f)
