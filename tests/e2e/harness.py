"""The e2e harness: real ansible-playbook runs of the installed collection against pvesim.

`run_playbook` runs one playbook and returns every task's result (recorded by the test-only
callback in callback_plugins/). `converge` is the check → real → again helper that every module
scenario uses: the `--check --diff` run must predict each task's `changed` and diff exactly,
the real run must succeed, and the third run must change nothing.
"""

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field

import yaml

# Canary credentials (issue 9): every playbook run authenticates with these, and fails if either
# secret appears in its output, its results or pvesim's request log. `add_canary_user` creates
# the user in pvesim after each reset (conftest.py); it has the VM privileges of ansible@pve.
CANARY_USER = 'ferro-canary@pve'
CANARY_TOKEN_ID = 'e2e'
CANARY_TOKEN_SECRET = 'CANARY-token-3b9d0c2e-61f4-4f0a-b7a1'
CANARY_PASSWORD = 'CANARY-password-8e21f7'
CANARY_SECRETS = (CANARY_TOKEN_SECRET, CANARY_PASSWORD)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV_BIN = os.path.join(ROOT, '.venv', 'bin')


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str
    results: list = field(default_factory=list)

    def task(self, name):
        """The one result of the task with that name (fails on none or several)."""
        found = [r for r in self.results if r['task'] == name and r['status'] in ('ok', 'failed', 'skipped')]
        assert len(found) == 1, 'expected one result for task %r, got %d: %s' % (name, len(found), self.stdout[-3000:])
        return found[0]

    @property
    def changed_tasks(self):
        return [r['task'] for r in self.results if r['changed']]

    @property
    def failed_tasks(self):
        return [r['task'] for r in self.results if r['status'] in ('failed', 'item_failed')]


class Ansible:
    """Runs playbooks with the collection installed in `collections_path` against `sim`."""

    def __init__(self, collections_path, sim, workdir, venv_bin=VENV_BIN):
        self.collections_path = collections_path
        self.sim = sim
        self.workdir = workdir
        # Another virtualenv's ansible-playbook and Python (community.proxmox's, for the baseline).
        self.venv_bin = venv_bin

    def env(self, extra=None):
        user, token = CANARY_USER, CANARY_TOKEN_ID
        env = dict(os.environ)
        env.update({
            'ANSIBLE_COLLECTIONS_PATH': self.collections_path,
            'ANSIBLE_CALLBACK_PLUGINS': os.path.join(HERE, 'callback_plugins'),
            'ANSIBLE_CALLBACKS_ENABLED': 'record_results',
            'ANSIBLE_NOCOLOR': '1',
            'ANSIBLE_RETRY_FILES_ENABLED': '0',
            'ANSIBLE_LOCALHOST_WARNING': '0',
            'ANSIBLE_INVENTORY_UNPARSED_WARNING': '0',
            'ANSIBLE_PYTHON_INTERPRETER': os.path.join(self.venv_bin, 'python'),
            'PROXMOX_HOST': self.sim.host,
            'PROXMOX_PORT': str(self.sim.port),
            'PROXMOX_USER': user,
            'PROXMOX_TOKEN_ID': token,
            'PROXMOX_TOKEN_SECRET': CANARY_TOKEN_SECRET,
            'PROXMOX_CA_PATH': self.sim.ca_path,
        })
        # A value of None unsets the variable.
        for key, value in (extra or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def write_playbook(self, plays):
        """Write plays (a list of dicts, or YAML text) to a file and return its path."""
        fd, path = tempfile.mkstemp(suffix='.yml', dir=self.workdir)
        with os.fdopen(fd, 'w') as f:
            f.write(plays if isinstance(plays, str) else yaml.safe_dump(plays, sort_keys=False))
        return path

    def run_playbook(self, playbook, check=False, diff=False, extra_args=(), env=None, inventory=None):
        """Run one playbook (a path, YAML text or a list of plays). Without `inventory`, the
        plays run against an inventory of just localhost on the local connection."""
        path = playbook if os.path.isfile(str(playbook)) else self.write_playbook(playbook)
        fd, record = tempfile.mkstemp(suffix='.jsonl', dir=self.workdir)
        os.close(fd)
        target = ['-i', inventory] if inventory else ['-i', 'localhost,', '-c', 'local']
        cmd = [os.path.join(self.venv_bin, 'ansible-playbook')] + target + [path]
        if check:
            cmd.append('--check')
        if diff:
            cmd.append('--diff')
        cmd += list(extra_args)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=self.env(dict(env or {}, FERRO_RECORD_FILE=record)),
                              cwd=self.workdir, timeout=600)
        with open(record, encoding='utf-8') as f:
            results = [json.loads(line) for line in f if line.strip()]
        record_returned_keys(results)
        assert_no_canary(proc.stdout + proc.stderr, 'the output of ansible-playbook ' + ' '.join(cmd[1:]))
        assert_no_canary(json.dumps(results), 'a task result')
        assert_no_canary(json.dumps(self.sim.requests()), "pvesim's request log")
        return Run(proc.returncode, proc.stdout, proc.stderr, results)

    def converge(self, playbook, unpredictable=(), inventory=None):
        """check → real → again. Returns the three runs after asserting:
        - the check run and the real run succeed, with the same tasks;
        - the check run sends no write request to Proxmox;
        - for every task, the check run's `changed` and `diff` equal the real run's (after
          replacing each pattern in `unpredictable`, e.g. a MAC PVE has yet to generate; see
          `_normalize`);
        - the third run changes nothing.
        """
        self.sim.clear_requests()
        check = self.run_playbook(playbook, check=True, diff=True, inventory=inventory)
        assert check.rc == 0, 'check run failed:\n' + check.stdout[-4000:] + check.stderr[-2000:]
        writes = [(r['method'], r['path']) for r in self.sim.requests()
                  if r['method'] != 'GET' and not r['path'].endswith('/access/ticket')]
        assert writes == [], 'the check run wrote: %s' % writes
        real = self.run_playbook(playbook, diff=True, inventory=inventory)
        assert real.rc == 0, 'real run failed:\n' + real.stdout[-4000:] + real.stderr[-2000:]
        again = self.run_playbook(playbook, diff=True, inventory=inventory)
        assert again.rc == 0, 'third run failed:\n' + again.stdout[-4000:] + again.stderr[-2000:]

        def comparable(run):
            # Hosts run in parallel forks: compare per host, each host's tasks in playbook order.
            rows = [(r['host'], r['task'], r['status'], r['changed'], _normalize(r['result'].get('diff'), unpredictable))
                    for r in run.results]
            return sorted(rows, key=lambda row: row[0])

        assert comparable(check) == comparable(real), (
            'the check run did not predict the real run:\ncheck: %s\nreal:  %s' % (comparable(check), comparable(real)))
        assert again.changed_tasks == [], 'the third run changed: %s' % again.changed_tasks
        return check, real, again


# The keys each of the collection's modules returned in this process's runs, for the audit of
# test_returns_documented.py: {module: {key path: the task that returned it}}. A path names a
# nested key as `key.sub`, and a list's elements as `key[]`.
RETURNED_KEYS = {}
COLLECTION_PREFIX = 'ferro.proxmox.'


def key_paths(value, prefix='', depth=3):
    """The key paths of a result's value, down to `depth` levels."""
    if depth == 0:
        return
    if isinstance(value, dict):
        for key, sub in value.items():
            path = prefix + '.' + key if prefix else key
            yield path
            yield from key_paths(sub, path, depth - 1)
    elif isinstance(value, list):
        for item in value:
            yield from key_paths(item, prefix + '[]', depth)


def record_returned_keys(results):
    for r in results:
        module = r.get('resolved') or ''
        if module.startswith(COLLECTION_PREFIX) and 'results' not in r['result']:
            seen = RETURNED_KEYS.setdefault(module, {})
            for path in key_paths(r['result']):
                seen.setdefault(path, r['task'])


def assert_no_canary(text, where):
    for secret in CANARY_SECRETS:
        assert secret not in text, 'a canary secret (%s...) leaked into %s' % (secret[:12], where)


def add_canary_user(sim):
    """The canary user with its password and token, privileged like ansible@pve (seed)."""
    sim.add_user(CANARY_USER, password=CANARY_PASSWORD, tokens={CANARY_TOKEN_ID: CANARY_TOKEN_SECRET},
                 acl={'/': CANARY_PRIVILEGES})


CANARY_PRIVILEGES = [
    'VM.Allocate', 'VM.Audit', 'VM.Clone', 'VM.Config.CDROM', 'VM.Config.CPU', 'VM.Config.Cloudinit',
    'VM.Config.Disk', 'VM.Config.HWType', 'VM.Config.Memory', 'VM.Config.Network', 'VM.Config.Options',
    'VM.Console', 'VM.GuestAgent.Audit', 'VM.Migrate', 'VM.PowerMgmt', 'VM.Snapshot', 'VM.Backup',
    'Datastore.AllocateSpace', 'Datastore.Audit', 'Sys.Audit', 'SDN.Use', 'SDN.Audit', 'Pool.Audit']


# What PVE draws on every create and clone (a check run marks it known after apply): the smbios1
# uuid and the vmgenid (a UUID), and `meta` (the QEMU version and the creation time); Qemu.pm
# create_vm, docs/pve-semantics.md §35.2.
PVE_DRAWN = [r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
             (r'creation-qemu=[^,"\\]+,ctime=\d+', 'creation-qemu=<unpredictable>,ctime=<unpredictable>')]


def _normalize(value, patterns):
    """Replace each unpredictable part: a regex (by `<unpredictable>`) or a (regex, replacement)
    pair, e.g. (',size=\\w+', '') for a size PVE fills in from the storage. A check run shows such
    a part as `(known after apply)` (README, check mode), which stands for it too."""
    if value is None:
        return value
    text = json.dumps(value, sort_keys=True).replace('(known after apply)', '<unpredictable>')
    for p in PVE_DRAWN + list(patterns):
        pattern, replacement = p if isinstance(p, tuple) else (p, '<unpredictable>')
        text = re.sub(pattern, replacement, text)
    return json.loads(text)
