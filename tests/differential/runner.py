"""The differential test's runner: one scenario in `--check` and for real from the same pvesim state.

A scenario is a world (world.py, a pvesim seed) and a task (tasks.py). `Runner.scenario(case)`
resets pvesim to the world, runs the task the way the action plugin runs it (its own validation,
environment fallbacks, the defaults it leaves out and the `_ansible_*` keys, then the module's
native binary, target/release/ferro_proxmox, run under the module's name with the arguments on
stdin) with `_ansible_check_mode`, resets to the same world, runs it for real, and returns the
disagreements:

- the outcome (ok / changed / failed) differs;
- `msg` differs (exactly, except that `(known after apply)` in the check run stands for one value);
- the diff differs line by line (same rule);
- a returned value (vmid, mac, pending, ...) differs (same rule); warnings are not compared (a
  check run may say what it cannot know);
- except where the check run said, in a warning, that PVE may refuse the task and with which words
  (`PVE may refuse it: <PVE's words>`, the marker standing for one value): a fact PVE checks with
  root's view that this user cannot see (docs/pve-semantics.md §52). A real run that then fails with
  those words agrees; one that fails otherwise, or a check run that fails, does not;
- the check run sent a write (pvesim's request log);
- the real run did not report `changed` and pvesim's VMs changed;
- the real run's diff is not what pvesim stored (`stored`: each `key: value` of a VM's after text
  is the key's value once pending values apply, a dropped key is gone).

`shrink(case, problems)` makes a failing case smaller while it still disagrees the same way: it
drops the task's options one by one, then the world's VMs, storages, pools and ACL entries the
task does not need.
"""

import copy
import http.client
import json
import os
import re
import ssl
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'e2e'))
sys.path.insert(0, os.path.join(ROOT, 'plugins', 'plugin_utils'))

import native  # noqa: E402  plugins/plugin_utils/native.py: the action plugin's own rules
from tasks import MODULES, STUBS  # noqa: E402
from test_check_vs_real import MARKER, ONE_VALUE, first_diff_difference, matches  # noqa: E402
from pvesim.testing import TOKEN_ID, TOKEN_SECRET  # noqa: E402
from world import token_env  # noqa: E402

BINARY = os.environ.get('FERRO_BINARY') or os.path.join(ROOT, 'target', 'release', 'ferro_proxmox')
# Result keys compared on their own (outcome, msg, diff) or not at all (Ansible's own).
# Seconds a module run may take (pvesim's tasks end in milliseconds at the test's time scale).
RUN_TIMEOUT = int(os.environ.get('DIFF_RUN_TIMEOUT') or 30)
OWN = {'changed', 'failed', 'msg', 'diff', 'invocation', '_ansible_no_log', 'warnings', 'deprecations'}


def _action_classes():
    # native_action imports the stub as the installed collection names it: point that name at the
    # source tree's stub (tasks.STUBS), so the validator is built exactly as the plugin builds it.
    for name, stub in STUBS.items():
        sys.modules['ansible_collections.ferro.proxmox.plugins.modules.%s' % name] = stub
    return dict((name, native.native_action(name)) for name in MODULES)


ACTIONS = _action_classes()


def module_args(module, task_args, environ, check):
    """What the action plugin sends the binary for `task_args` (NativeModuleAction.run, local path),
    or a failure result when its validation refuses the task."""
    action = ACTIONS[module]
    args = native.empty_is_unset(action.ENV_FALLBACKS, action.OPTION_OF_KEY, native.plain(dict(task_args)), dict)
    args = native.resolve_env_fallbacks(action.ENV_FALLBACKS, args, environ)
    validation = action.VALIDATOR.validate(args)
    if validation.error_messages:
        return None, {'failed': True, 'msg': validation.errors.msg}
    given = set(args) | {action.OPTION_OF_KEY.get(key, key) for key in args}
    sent = {}
    for option, value in validation.validated_parameters.items():
        default = action.ARGUMENT_SPEC.get(option, {}).get('default')
        if option in given or default is None or value != default:
            sent[option] = value
    sent.update({'_ansible_check_mode': check, '_ansible_diff': True, '_ansible_no_log': False,
                 '_ansible_verbosity': 0, '_ansible_module_name': 'ferro.proxmox.' + module})
    if check:
        sent[native.PLAN_KEY] = []
    return sent, None


def run_module(module, task_args, environ, check):
    sent, refused = module_args(module, task_args, environ, check)
    if refused:
        return refused
    try:
        proc = subprocess.run([module], executable=BINARY, input=json.dumps(sent), capture_output=True, text=True,
                              env=environ, check=False, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        # A run this long waits on something (a lock, a task): compared like any failure.
        return {'failed': True, 'msg': 'the module ran longer than %d s' % RUN_TIMEOUT}
    data = native.parse_module_output(proc.stdout, proc.stderr, proc.returncode)
    data.pop(native.RECORDED_KEY, None)
    data.pop('_ansible_no_log', None)
    return data


def outcome(result):
    return 'failed' if result.get('failed') else 'changed' if result.get('changed') else 'ok'


# A check run's warning that PVE may refuse what this user cannot see decide (§52), and with which words.
MAY_REFUSE = 'PVE may refuse it: '


def refusal_foretold(check, real):
    """Whether the real run failed with the words a check-run warning foretold (`MAY_REFUSE`)."""
    if outcome(check) == 'failed' or outcome(real) != 'failed':
        return False
    foretold = [w.split(MAY_REFUSE, 1)[1] for w in check.get('warnings') or () if MAY_REFUSE in w]
    msg = str(real.get('msg'))
    return any(re.search(ONE_VALUE.join(re.escape(part) for part in words.split(MARKER)), msg) for words in foretold)


def compare(check, real):
    """The disagreements of two results: a list of (kind, text)."""
    if refusal_foretold(check, real):
        return []
    problems = []
    if outcome(check) != outcome(real):
        problems.append(('outcome', 'check %s, real %s' % (outcome(check), outcome(real))))
    if not matches(check.get('msg'), real.get('msg')):
        problems.append(('msg', 'check %r, real %r' % (check.get('msg'), real.get('msg'))))
    first = first_diff_difference(check.get('diff'), real.get('diff'))
    if first:
        problems.append(('diff', first))
    for key in sorted((set(check) | set(real)) - OWN):
        c, r = json.dumps(check.get(key), sort_keys=True), json.dumps(real.get(key), sort_keys=True)
        if not matches(c, r):
            problems.append(('value:' + key, 'check %s, real %s' % (c, r)))
    return problems


def signature(problems):
    """What a shrunk case must keep: the kinds of its disagreements."""
    return tuple(sorted(set(kind for kind, _ in problems)))


class Runner:
    """Runs scenarios against one pvesim (a pvesim.testing.PvesimProcess)."""

    def __init__(self, sim, workdir):
        self.sim = sim
        self.workdir = workdir
        self.seed_path = os.path.join(workdir, 'world.json')
        self._conn = None

    def environ(self, world):
        env = dict((k, v) for k, v in os.environ.items() if not k.startswith('PROXMOX_'))
        env.update({'PROXMOX_HOST': self.sim.host, 'PROXMOX_PORT': str(self.sim.port),
                    'PROXMOX_CA_PATH': self.sim.ca_path})
        env.update(token_env(world))
        return env

    def reset(self):
        self.sim.reset(self.seed_path)
        self.sim.clear_requests()

    def _get(self, path):
        """GET /api2/json<path> as root's token, on one kept-alive connection (a TLS handshake per
        read would cost more than the scenario's two module runs)."""
        for attempt in (0, 1):
            if self._conn is None:
                tls = ssl.create_default_context(cafile=self.sim.ca_path)
                self._conn = http.client.HTTPSConnection(self.sim.host, self.sim.port, context=tls, timeout=60)
            try:
                self._conn.request('GET', '/api2/json' + path, headers={
                    'Authorization': 'PVEAPIToken=%s=%s' % (TOKEN_ID, TOKEN_SECRET)})
                resp = self._conn.getresponse()
                body = resp.read()
                return json.loads(body).get('data') if resp.status == 200 else None
            except (OSError, http.client.HTTPException):
                self._conn.close()
                self._conn = None
                if attempt:
                    raise
        return None

    def state(self):
        """Every VM's config and pending values, as the admin token reads them."""
        found = {}
        for res in self._get('/cluster/resources?type=vm') or []:
            path = '/nodes/%s/qemu/%d/pending' % (res['node'], int(res['vmid']))
            found[int(res['vmid'])] = (res['node'], res.get('status'),
                                       sorted(json.dumps(x, sort_keys=True) for x in self._get(path) or []))
        return found

    def writes(self):
        return [(r['method'], r['path'].replace('/api2/json', '')) for r in self.sim.requests()
                if r['method'] != 'GET' and not r['path'].endswith('/access/ticket')]

    def effective(self, vmid):
        """A VM's config as it will be once its pending values apply ({key: value}), or None."""
        for res in self._get('/cluster/resources?type=vm') or []:
            if int(res['vmid']) == vmid:
                items = self._get('/nodes/%s/qemu/%d/pending' % (res['node'], vmid)) or []
                return dict((i['key'], str(i['pending'] if 'pending' in i else i.get('value'))) for i in items
                            if not i.get('delete'))
        return None

    def stored(self, diff):
        """The real run's diff against what pvesim stored: each `key: value` line of a VM's after
        text is that key's value once pending values apply, and a key the after text drops is gone
        (or pending removal)."""
        problems = []
        for part in (diff if isinstance(diff, list) else [diff] if diff else []):
            header = re.match(r'VM (\d+)', str(part.get('after_header', '')))
            if not header:
                continue
            config = self.effective(int(header.group(1)))
            after = dict(line.split(': ', 1) for line in str(part.get('after', '')).splitlines() if ': ' in line)
            before = dict(line.split(': ', 1) for line in str(part.get('before', '')).splitlines() if ': ' in line)
            if config is None:
                if after:
                    problems.append(('stored', '%s: the VM is gone, the diff shows %d keys after' % (
                        part.get('after_header'), len(after))))
                continue
            for key, value in sorted(after.items()):
                if config.get(key) != value:
                    problems.append(('stored', '%s: %s is %r in the diff, %r stored' % (
                        part.get('after_header'), key, value, config.get(key))))
            for key in sorted(set(before) - set(after)):
                if key in config:
                    problems.append(('stored', '%s: the diff drops %s, stored %r' % (
                        part.get('after_header'), key, config[key])))
        return problems

    def scenario(self, case):
        """The disagreements of one case ({'world': seed, 'task': {'module', 'args'}}), and both results."""
        world, task = case['world'], case['task']
        fd, tmp = tempfile.mkstemp(dir=self.workdir, suffix='.json')
        with os.fdopen(fd, 'w') as f:
            json.dump(world, f)
        os.replace(tmp, self.seed_path)
        environ = self.environ(world)
        self.reset()
        check = run_module(task['module'], task['args'], environ, True)
        wrote = self.writes()
        # The world as the check run left it: as it was, unless the check run wrote (itself a problem).
        before = self.state()
        self.reset()
        real = run_module(task['module'], task['args'], environ, False)
        problems = compare(check, real)
        if wrote:
            problems.append(('check-wrote', 'the check run wrote: %s' % wrote))
        after = self.state() if not real.get('changed') else before
        if real.get('changed') and not real.get('failed'):
            problems += self.stored(real.get('diff'))
        if after != before:
            moved = sorted(v for v in set(before) | set(after) if before.get(v) != after.get(v))
            problems.append(('silent-change', 'the real run was %s but changed VMs %s' % (outcome(real), moved)))
        return problems, check, real


def _variants(case):
    """Smaller cases, most promising first: fewer options, then a smaller world."""
    task, world = case['task'], case['world']
    keep = {'state', 'disk', 'interface'}
    for option in sorted(task['args']):
        if option not in keep:
            smaller = copy.deepcopy(case)
            del smaller['task']['args'][option]
            yield smaller
    named = set()
    for value in task['args'].values():
        named.add(str(value))
    for vm in world['vms']:
        if str(vm['vmid']) in named or vm.get('name') in named:
            continue
        smaller = copy.deepcopy(case)
        smaller['world']['vms'] = [v for v in smaller['world']['vms'] if v['vmid'] != vm['vmid']]
        if 'pools' in smaller['world']:
            for pool in smaller['world']['pools'].values():
                pool['vms'] = [v for v in pool.get('vms', []) if v != vm['vmid']]
        yield smaller
    for vm in world['vms']:
        for key in ('pending', 'snapshots', 'qmpstatus'):
            if key in vm:
                smaller = copy.deepcopy(case)
                target = [v for v in smaller['world']['vms'] if v['vmid'] == vm['vmid']][0]
                del target[key]
                if key == 'snapshots':
                    target['config'].pop('parent', None)
                yield smaller
    used = json.dumps([world['vms'], task['args']])
    for sid in sorted(world['storages']):
        if sid + ':' not in used and "'%s'" % sid not in used and '"%s"' % sid not in used:
            smaller = copy.deepcopy(case)
            del smaller['world']['storages'][sid]
            yield smaller
    if 'pools' in world:
        smaller = copy.deepcopy(case)
        del smaller['world']['pools']
        yield smaller
    for userid, user in world['users'].items():
        if userid == TOKEN_ID.split('!')[0]:
            continue  # the runner's own reads (state, effective) go through this user's token
        for path in list((user.get('acl') or {}))[:-1]:
            smaller = copy.deepcopy(case)
            del smaller['world']['users'][userid]['acl'][path]
            yield smaller


def shrink(runner, case, problems, budget=60):
    """The smallest case found (within `budget` runs) that still disagrees with the same signature."""
    want = signature(problems)
    best, best_problems = case, problems
    progress = True
    while progress and budget > 0:
        progress = False
        for smaller in _variants(best):
            budget -= 1
            if budget < 0:
                break
            try:
                found, _, _ = runner.scenario(smaller)
            except Exception:  # noqa: BLE001  a world pvesim refuses is no smaller reproducer
                continue
            if found and signature(found) == want:
                best, best_problems, progress = smaller, found, True
                break
    return best, best_problems


def describe(problems):
    return '; '.join('%s: %s' % p for p in problems)


__all__ = ['Runner', 'shrink', 'describe', 'signature', 'MARKER']
