"""The fleet's floors with PVE in them (bench/fleet.py, realistic profile): an API write and a wait for the PVE
task it starts, and with `reads_before`/`reads_after` the GET requests ferro.proxmox's own task sends around it
(traced from its requests by bench/fleet.py), nothing else; a playbook of these costs Ansible's own work, PVE's task
time and the requests, on the same pvesim and profile as the collections. Found through ANSIBLE_ACTION_PLUGINS
(bench/harness.py)."""

import http.client
import json
import ssl
import time
import urllib.parse

from ansible.plugins.action import ActionBase

# How often the task's status is read by the floor with PVE: a client learns that a task ended only by asking, so
# that floor asks at the pace ferro.proxmox's waiter starts with (docs/pve-semantics.md §55).
POLL_SECONDS = 0.05

# `poll: ferro`, the floor with the checks' reads: ferro.proxmox's waiter's polls, so that the floor sends the polls
# ferro's task sends: the first after 100 ms, then a pause as long as the wait so far, at most 1 s (module_utils
# pve/tasks.rs `Waiter::new` and `Waiter::pause`, §66).
FERRO_FIRST_POLL, FERRO_MAX_POLL = 0.1, 1.0

# A task that ended on a lock PVE could not take in time changed nothing, and any correct client sends it
# again (the realistic profile's storage lock makes 40 parallel clones meet it): the floor does it with
# ferro.proxmox's pauses, 250 ms doubling to 4 s, for at most 30 s (module_utils pve/transient.rs, §55).
RETRY_PAUSES = (0.25, 0.5, 1, 2, 4, 4, 4, 4, 4, 4)

# In a traced request, where the UPID of the task's own write goes, and in a traced write, where the config digest
# goes that ferro.proxmox's write carries (bench/fleet.py writes them): the floor's reads answer with its own VM's.
UPID_SLOT = '{upid}'
DIGEST_SLOT = '{digest}'


class ApiError(Exception):
    """An error answer (HTTP status 400 or above)."""


def digest_of(answer):
    """A read's config digest: a config's `digest`, or the `digest` row of a pending array (qemu-server
    API2/Qemu.pm vm_config, pve-guest-common GuestHelpers.pm config_with_pending_array)."""
    if isinstance(answer, dict):
        return answer.get('digest')
    if isinstance(answer, list):
        return next((e.get('value') for e in answer if isinstance(e, dict) and e.get('key') == 'digest'), None)
    return None


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
        headers = {'Authorization': 'PVEAPIToken=%s!%s=%s' % (conn['api_user'], conn['api_token_id'],
                                                             conn['api_token_secret'])}
        context = ssl.create_default_context(cafile=conn['ca_path'])
        # One connection for the task's requests, kept alive, as ferro.proxmox's client keeps its own for a task
        # (a ureq Agent, module_utils pve/client.rs): a TLS handshake per request would put in the floor what ferro
        # does not pay.
        https = http.client.HTTPSConnection(conn['api_host'], int(conn['api_port']), context=context, timeout=120)
        ferro_polls = args.get('poll') == 'ferro'

        def call(method, path, data=None):
            body = urllib.parse.urlencode(data) if data else None
            sent = dict(headers, **({'Content-Type': 'application/x-www-form-urlencoded'} if body else {}))
            https.request(method, '/api2/json' + path, body=body, headers=sent)
            resp = https.getresponse()
            payload = resp.read()
            if resp.status >= 400:
                raise ApiError('%s %s: %d %s' % (method, path, resp.status, resp.reason))
            return json.loads(payload)['data']

        def reads(requests, upid=None):
            """The traced GETs in order; an error answer is read and passed over, as the request was sent.
            Returns the last config digest read."""
            digest = None
            for q in requests or ():
                path = q['path']
                if upid is not None:
                    path = path.replace(UPID_SLOT, urllib.parse.quote(upid, safe=''))
                query = urllib.parse.urlencode({k: str(v) for k, v in (q.get('query') or {}).items()})
                try:
                    digest = digest_of(call('GET', path + ('?' + query if query else ''))) or digest
                except ApiError:
                    pass
            return digest

        def write_and_wait(data):
            upid = call(args['method'], args['path'], data)
            node = upid.split(':')[1]
            status_path = '/nodes/%s/tasks/%s/status' % (node, urllib.parse.quote(upid, safe=''))
            started = time.monotonic()
            if ferro_polls:
                time.sleep(FERRO_FIRST_POLL)
            while True:
                status = call('GET', status_path)
                if status.get('status') == 'stopped':
                    return upid, status
                pause = POLL_SECONDS
                if ferro_polls:
                    pause = min(max(time.monotonic() - started, FERRO_FIRST_POLL), FERRO_MAX_POLL)
                time.sleep(pause)

        try:
            digest = reads(args.get('reads_before'))
            data = {k: digest if v == DIGEST_SLOT else v for k, v in (args.get('data') or {}).items()
                    if v != DIGEST_SLOT or digest is not None}
            upid, status = write_and_wait(data)
            for pause in RETRY_PAUSES:
                if not lock_timeout(status.get('exitstatus') or ''):
                    break
                time.sleep(pause)
                upid, status = write_and_wait(data)
            result['changed'] = True
            result['failed'] = status.get('exitstatus') != 'OK'
            if result['failed']:
                result['msg'] = 'PVE task %s: %s' % (upid, status.get('exitstatus'))
            else:
                reads(args.get('reads_after'), upid)
        finally:
            https.close()
        if 'vmid' in args:
            result['vmid'] = int(args['vmid'])
        return result
