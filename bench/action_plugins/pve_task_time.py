"""The fleet's floor (bench/fleet.py): a task that makes no API call and only waits as long as the PVE
task it stands for runs on pvesim; a playbook of these costs Ansible's own work plus PVE's task time,
which no collection can beat. Found through ANSIBLE_ACTION_PLUGINS (bench/harness.py)."""

import time

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        time.sleep(float(self._task.args['seconds']))
        result['changed'] = True
        if 'vmid' in self._task.args:
            result['vmid'] = int(self._task.args['vmid'])
        return result
