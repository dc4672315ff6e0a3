"""The fleet's floor with PVE in it (bench/fleet.py, realistic profile): one API write and a wait for the
PVE task it starts, nothing else; a playbook of these costs Ansible's own work, PVE's task time and the one
request each task cannot do without, on the same pvesim and profile as the collections. Found through
ANSIBLE_ACTION_PLUGINS (bench/harness.py)."""

import json
import ssl
import time
import urllib.parse
import urllib.request

from ansible.plugins.action import ActionBase

# How often the task's status is read: a client learns that a task ended only by asking, so the floor asks
# at the pace ferro.proxmox's waiter starts with (docs/pve-semantics.md §55).
POLL_SECONDS = 0.05

# A task that ended on a lock PVE could not take in time changed nothing, and any correct client sends it
# again (the realistic profile's storage lock makes 40 parallel clones meet it): the floor does it with
# ferro.proxmox's pauses, 250 ms doubling to 4 s, for at most 30 s (module_utils pve/transient.rs, §55).
RETRY_PAUSES = (0.25, 0.5, 1, 2, 4, 4, 4, 4, 4, 4)


def lock_timeout(exitstatus):
    """PVE's words for a lock not taken in time (pve-common Tools.pm lock_file_full, pve-cluster cfs_lock)."""
    return ("can't lock file '" in exitstatus and 'got timeout' in exitstatus) or \
        ("cfs-lock '" in exitstatus and 'got lock request timeout' in exitstatus)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        conn = args['connection']
        base = 'https://%s:%s/api2/json' % (conn['api_host'], conn['api_port'])
        headers = {'Authorization': 'PVEAPIToken=%s!%s=%s' % (conn['api_user'], conn['api_token_id'],
                                                             conn['api_token_secret'])}
        context = ssl.create_default_context(cafile=conn['ca_path'])

        def call(method, path, data=None):
            body = urllib.parse.urlencode(data).encode() if data else None
            req = urllib.request.Request(base + path, data=body, method=method, headers=headers)
            with urllib.request.urlopen(req, context=context, timeout=120) as resp:
                return json.load(resp)['data']

        def write_and_wait():
            upid = call(args['method'], args['path'], args.get('data'))
            node = upid.split(':')[1]
            status_path = '/nodes/%s/tasks/%s/status' % (node, urllib.parse.quote(upid, safe=''))
            while True:
                status = call('GET', status_path)
                if status.get('status') == 'stopped':
                    return upid, status
                time.sleep(POLL_SECONDS)

        upid, status = write_and_wait()
        for pause in RETRY_PAUSES:
            if not lock_timeout(status.get('exitstatus') or ''):
                break
            time.sleep(pause)
            upid, status = write_and_wait()
        result['changed'] = True
        result['failed'] = status.get('exitstatus') != 'OK'
        if result['failed']:
            result['msg'] = 'PVE task %s: %s' % (upid, status.get('exitstatus'))
        if 'vmid' in args:
            result['vmid'] = int(args['vmid'])
        return result
