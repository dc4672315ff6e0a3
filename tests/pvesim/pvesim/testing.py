"""Run pvesim as a subprocess from any test suite.

    from pvesim.testing import PvesimProcess
    with PvesimProcess() as sim:
        sim.api('GET', '/version')                      # token auth (ansible@pve!automation)
        sim.fault(kind='http', method='GET', path='^/version$', status=500, message='boom')
        sim.requests()                                  # the request log
"""

import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

# The default seed's token (seeds/default.json); a PvesimProcess uses its own seed's (`seed_token`).
TOKEN_ID = 'ansible@pve!automation'
TOKEN_SECRET = '5e3c1f0a-7b2d-4c8e-9f61-0d2a4b6c8e10'
READY = 'pvesim listening on '
START_TIMEOUT = 30.0


def seed_token(seed=None, token=None):
    """(`user@realm!tokenid`, secret) of a seed: the token named `token` (`user@realm!tokenid`), else the seed's
    first (its users in order, each user's tokens in order). ValueError when the seed has no such token."""
    from .seed_schema import seed_path
    path = seed_path(seed)
    with open(path, encoding='utf-8') as fh:
        users = json.load(fh).get('users') or {}
    found = []
    for userid, info in users.items():
        for tokenid, spec in ((info or {}).get('tokens') or {}).items():
            found.append(('{0}!{1}'.format(userid, tokenid), spec['secret'] if isinstance(spec, dict) else spec))
    for authid, secret in found:
        if token is None or authid == token:
            return authid, secret
    if token is None:
        raise ValueError('seed {0} has no API token: add one to a user (users.<user@realm>.tokens)'.format(path))
    raise ValueError('seed {0} has no token {1} (it has: {2})'.format(path, token, ', '.join(a for a, _ in found)))


def connection_env(host, port, ca_path, token_id, secret):
    """The modules' environment fallbacks (PROXMOX_*) for this simulator and token."""
    user, tokenid = token_id.split('!', 1)
    return {'PROXMOX_HOST': host, 'PROXMOX_PORT': str(port), 'PROXMOX_USER': user, 'PROXMOX_TOKEN_ID': tokenid,
            'PROXMOX_TOKEN_SECRET': secret, 'PROXMOX_CA_PATH': ca_path}


class PvesimError(Exception):
    """An HTTP error answer: status, message, errors (per-parameter) and the parsed body."""

    def __init__(self, status, message, errors=None, body=None):
        super().__init__('{0} {1}'.format(status, message))
        self.status = status
        self.message = message
        self.errors = errors or {}
        self.body = body


class PvesimProcess(object):
    """pvesim in a subprocess on a free port, with its own CA; a context manager.

    `api()` authenticates with the seed's token (`token`, `user@realm!tokenid`, picks one; default: the seed's
    first, `seed_token`); `proxmox_env()` is the PROXMOX_* connection for it."""

    def __init__(self, seed=None, time_scale=None, host='127.0.0.1', extra_args=(), env=None, token=None):
        try:
            self.token_id, self.token_secret = seed_token(seed, token)
        except (ValueError, OSError):
            if token:
                raise
            # a seed without tokens (or one that will not load, whose error pvesim gives at start)
            self.token_id, self.token_secret = TOKEN_ID, TOKEN_SECRET
        self.host = host
        self.port = None
        self.url = None
        self._tmp = tempfile.TemporaryDirectory(prefix='pvesim-test-')
        self.tls_dir = self._tmp.name
        self.ca_path = os.path.join(self.tls_dir, 'ca.pem')
        args = [sys.executable, '-m', 'pvesim.cli', '--host', host, '--port', '0', '--tls-dir', self.tls_dir]
        if seed:
            args += ['--seed', seed]
        if time_scale is not None:
            args += ['--time-scale', str(time_scale)]
        self.args = args + list(extra_args)
        self.env = env
        self.proc = None
        self._ctx = None
        self.stderr_lines = []

    # ------------------------------------------------------------ lifecycle

    def start(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=self.env)
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        line = [None]

        def read():
            line[0] = self.proc.stdout.readline()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(START_TIMEOUT)
        text = (line[0] or '').strip()
        if not text.startswith(READY):
            self.stop()
            raise RuntimeError('pvesim did not start: {0!r}; stderr: {1}'.format(text, ''.join(self.stderr_lines)))
        self.url = text[len(READY):]
        self.port = int(self.url.rsplit(':', 1)[1])
        self._ctx = ssl.create_default_context(cafile=self.ca_path)
        return self

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc is not None and self.proc.stdout:
            self.proc.stdout.close()
        self._tmp.cleanup()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ----------------------------------------------------------------- HTTP

    def _request(self, method, url, data=None, headers=None):
        req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, context=self._ctx, timeout=60) as resp:
                return resp.status, json.loads(resp.read() or b'null')
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                body = json.loads(raw)
            except ValueError:
                body = {'message': raw.decode(errors='replace')}
            raise PvesimError(e.code, (body or {}).get('message', '').rstrip('\n'), (body or {}).get('errors'),
                              body) from None

    def admin(self, method, path, body=None):
        """Call /_sim/<path> with a JSON body; returns the parsed JSON answer."""
        path = path if path.startswith('/_sim') else '/_sim/' + path.lstrip('/')
        data = json.dumps(body).encode() if body is not None else None
        headers = {'Content-Type': 'application/json'} if data is not None else {}
        return self._request(method, self.url + path, data, headers)[1]

    def api(self, method, path, params=None, token=True, ticket=None):
        """Call /api2/json<path>; returns `data`. Token auth by default, or a (ticket, csrf) pair.

        Raises PvesimError on an HTTP error (status, message, errors)."""
        headers = {}
        if token:
            headers['Authorization'] = 'PVEAPIToken={0}={1}'.format(self.token_id, self.token_secret) \
                if token is True else 'PVEAPIToken=' + token
        if ticket:
            headers['Cookie'] = 'PVEAuthCookie=' + ticket[0]
            headers['CSRFPreventionToken'] = ticket[1]
        url = self.url + '/api2/json' + path
        data = None
        if params:
            encoded = urllib.parse.urlencode(params, doseq=True)
            if method in ('GET', 'DELETE'):
                url += '?' + encoded
            else:
                data = encoded.encode()
                headers['Content-Type'] = 'application/x-www-form-urlencoded'
        return self._request(method, url, data, headers)[1].get('data')

    def wait_task(self, upid, timeout=30.0):
        """Poll a task until it is stopped; returns its status object."""
        node = upid.split(':')[1]
        deadline = time.monotonic() + timeout
        while True:
            status = self.api('GET', '/nodes/{0}/tasks/{1}/status'.format(node, urllib.parse.quote(upid, safe='')))
            if status['status'] == 'stopped':
                return status
            if time.monotonic() > deadline:
                raise TimeoutError('task {0} still running'.format(upid))
            time.sleep(0.02)

    # ---------------------------------------------------------------- admin

    def requests(self):
        return self.admin('GET', '/_sim/requests')['data']

    def clear_requests(self):
        return self.admin('DELETE', '/_sim/requests')['data']

    def reset(self, seed='default', key_order_seed=None):
        body = {'seed': seed}
        if key_order_seed is not None:
            body['key_order_seed'] = key_order_seed
        return self.admin('POST', '/_sim/reset', body)['data']

    def key_order_seed(self, seed=None):
        """The seed of the order pvesim walks a request's keys in; set it when `seed` is given."""
        if seed is None:
            return self.admin('GET', '/_sim/key-order')['data']['seed']
        return self.admin('POST', '/_sim/key-order', {'seed': seed})['data']['seed']

    def fault(self, **spec):
        return self.admin('POST', '/_sim/faults', spec)['data']

    def clear_faults(self):
        return self.admin('DELETE', '/_sim/faults')['data']

    def add_user(self, userid, password=None, tokens=None, acl=None, totp=None):
        """Add a user (and its API tokens, ACL and TOTP second factor, a base32 secret) until the next reset."""
        body = dict((k, v) for k, v in (('userid', userid), ('password', password), ('tokens', tokens), ('acl', acl),
                                        ('totp', totp)) if v is not None)
        return self.admin('POST', '/_sim/users', body)['data']

    def proxmox_env(self):
        """PROXMOX_HOST, _PORT, _USER, _TOKEN_ID, _TOKEN_SECRET, _CA_PATH for this simulator and its seed's token,
        plus PVESIM_URL and PVESIM_CA_PATH (what `pvesim assert`, `state` and `requests` read)."""
        env = connection_env(self.host, self.port, self.ca_path, self.token_id, self.token_secret)
        env.update(PVESIM_URL=self.url, PVESIM_CA_PATH=self.ca_path)
        return env

    def world(self):
        """The whole state as JSON (GET /_sim/world): nodes, bridges, storages and volumes, VMs, tasks, pools."""
        return self.admin('GET', '/_sim/world')['data']

    def time_scale(self, scale):
        return self.admin('POST', '/_sim/time-scale', {'scale': scale})['data']
