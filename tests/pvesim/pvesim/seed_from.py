"""`pvesim seed-from`: a seed written from a real cluster's read-only API answers, so a user's tests start from
their own world: nodes, bridges, storages (options, size, ISO and import files), VMs (node, status, template,
config, pending) and pools. Only GET calls; the token needs Sys.Audit, Datastore.Audit and VM.Audit to see all.

Secrets are left out: the cluster's token secret is never written (the seed's token gets a fresh one), nor a
config's `cipassword`, nor storage options holding credentials (password, keyring, keys). The seed's token has the
privileges GET /access/permissions gives the token on the cluster.
"""

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
import uuid

# Storage options that hold credentials, or that only the cluster's own files hold.
SECRET_OPTIONS = ('password', 'keyring', 'encryption-key', 'master-pubkey', 'fingerprint', 'digest', 'username')
SECRET_CONFIG = ('cipassword', 'digest')
# The files a seed lists on a storage (the rest, VM images, come from the VMs' configs).
FILE_CONTENT = ('iso', 'import', 'vztmpl')


class Cluster(object):
    """GET calls to /api2/json with an API token."""

    def __init__(self, url, token, ca_path=None, insecure=False):
        self.base = url.rstrip('/') + ('' if url.rstrip('/').endswith('/api2/json') else '/api2/json')
        self.token = token
        if insecure:
            self.ctx = ssl._create_unverified_context()  # noqa: S323 - the user asked for it (--insecure)
        else:
            self.ctx = ssl.create_default_context(cafile=ca_path)

    def get(self, path, params=None):
        url = self.base + path + ('?' + urllib.parse.urlencode(params) if params else '')
        req = urllib.request.Request(url, headers={'Authorization': 'PVEAPIToken=' + self.token})
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=60) as resp:
                return json.loads(resp.read())['data']
        except urllib.error.HTTPError as e:
            raise RuntimeError('GET {0}: HTTP {1} {2}'.format(path, e.code, e.reason)) from None


def _try(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except RuntimeError:
        return None


def _acl(permissions):
    """GET /access/permissions {path: {priv: propagate}} as a seed's acl."""
    acl = {}
    for path, privs in sorted((permissions or {}).items()):
        if privs:
            propagate = 1 if all(int(p) for p in privs.values()) else 0
            acl[path] = {'privs': sorted(privs), 'propagate': propagate}
    return acl


def seed_from(cluster, token_id):
    """The seed (a dict) of what `cluster` answers to `token_id` (user@realm!tokenid)."""
    seed = {'_comment': 'written by pvesim seed-from; secrets left out (the token secret below is new)'}
    version = _try(cluster.get, '/version') or {}
    if version.get('version'):
        seed['version'] = version['version']
    if version.get('release'):
        seed['release'] = version['release']
    for item in _try(cluster.get, '/cluster/status') or []:
        if item.get('type') == 'cluster' and item.get('name'):
            seed['cluster_name'] = item['name']
    nodes = sorted(n['node'] for n in cluster.get('/nodes'))
    seed['nodes'] = nodes
    bridges = []
    for node in nodes:
        for iface in _try(cluster.get, '/nodes/{0}/network'.format(node), {'type': 'any_bridge'}) or []:
            if iface.get('iface') and iface['iface'] not in bridges:
                bridges.append(iface['iface'])
    seed['bridges'] = sorted(bridges)
    seed['storages'] = storages = {}
    for store in cluster.get('/storage'):
        sid = store['storage']
        spec = dict((k, v) for k, v in store.items() if k not in SECRET_OPTIONS and k != 'storage')
        for node in nodes:
            status = _try(cluster.get, '/nodes/{0}/storage/{1}/status'.format(node, sid))
            if not status:
                continue
            if status.get('total'):
                spec['total'] = int(status['total'])
            files = {}
            for item in _try(cluster.get, '/nodes/{0}/storage/{1}/content'.format(node, sid)) or []:
                if item.get('content') in FILE_CONTENT:
                    files[item['volid'].split(':', 1)[1]] = int(item.get('size') or 0)
            if files:
                spec['files'] = files
            break
        storages[sid] = spec
    seed['vms'] = vms = []
    pools = {}
    for res in sorted(cluster.get('/cluster/resources', {'type': 'vm'}), key=lambda r: int(r['vmid'])):
        if res.get('type') != 'qemu':
            continue
        base = '/nodes/{0}/qemu/{1}'.format(res['node'], res['vmid'])
        config = dict((k, v) for k, v in cluster.get(base + '/config', {'current': 1}).items() if k not in SECRET_CONFIG)
        template = bool(res.get('template')) or str(config.pop('template', 0)) == '1'
        vm = {'vmid': int(res['vmid']), 'name': res.get('name') or config.get('name', 'VM {0}'.format(res['vmid'])),
              'node': res['node'], 'status': 'running' if res.get('status') == 'running' else 'stopped',
              'template': template, 'config': config}
        pending = {}
        for row in _try(cluster.get, base + '/pending') or []:
            if row.get('key') in SECRET_CONFIG:
                continue
            if row.get('delete'):
                pending[row['key']] = None
            elif 'pending' in row:
                pending[row['key']] = row['pending']
        if pending:
            vm['pending'] = pending
        vms.append(vm)
        if res.get('pool'):
            pools.setdefault(res['pool'], {'vms': []})['vms'].append(int(res['vmid']))
    if pools:
        seed['pools'] = pools
    userid, tokenid = token_id.split('!', 1)
    permissions = _try(cluster.get, '/access/permissions')
    seed['users'] = {userid: {'tokens': {tokenid: {'secret': str(uuid.uuid4()), 'privsep': 0}},
                              'acl': _acl(permissions) or {'/': ['PVEAuditor']}}}
    return seed
