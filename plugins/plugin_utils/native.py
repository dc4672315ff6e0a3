# -*- coding: utf-8 -*-
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The action plugin behind every ferro.proxmox module: runs the module's native binary.

Per task, on the controller:
1. validate the task's arguments with ansible-core's own validator against the spec in the
   module's stub (plugins/modules/<name>.py, generated from the Rust spec), so users get
   AnsibleModule's defaults, coercion, messages and no_log handling; the `PROXMOX_*` fallbacks
   read the environment the module will run with (see `module_environment`);
2. pick the binary for the platform that will run it (native/<target-triple>/<name>: a link to
   that platform's one binary, ferro_proxmox, which runs the module named by its argv[0]);
3. run it: directly as a subprocess with the arguments on stdin when the connection is local
   (the delegate_to: localhost case; no temp dir, no shell), otherwise the way ansible-core runs
   binary modules (copy the binary, named after the module, and the args through the
   connection, execute, clean up);
4. parse its one JSON object and mask every no_log value before returning.

In check mode it also carries the run's predictions (module_utils/src/check/predictions.rs) from
task to task: it hands the module every prediction of the run in its arguments
(`_ferro_check_plan`) and stores what the module returns as recorded
(`_ferro_check_plan_recorded`, removed from the result), in a directory of ansible-core's per-run
local temp dir. Only this process, as the controller's user, reads or writes that directory, so
the predictions reach the module however it runs (directly, under `become`, through the
connection, on another host).

Each plugins/action/<name>.py is `ActionModule = native_action('<name>')`: the module's stub is
imported and its validator built when ansible-playbook first loads the action class, in the main
process, so every task's worker (a fork of it) inherits them instead of importing and compiling
the stub again on each task.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import re
import subprocess
import tempfile

from ansible import constants as C
from ansible.errors import AnsibleActionFail
from ansible.module_utils import basic
from ansible.module_utils.common import json as ansible_json
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.parameters import env_fallback, remove_values
from ansible.module_utils.errors import UnsupportedError
from ansible.plugins.action import ActionBase

try:
    from ansible_collections.ferro.proxmox.plugins.plugin_utils import plan_run, plan_verify, saved_plan
except ImportError:  # this file loaded from the source tree, outside an installed collection (its tests)
    import importlib.util
    _spec = importlib.util.spec_from_file_location(
        'ferro_plan_run', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'plan_run.py'))
    plan_run = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(plan_run)
    saved_plan = plan_run.sp
    plan_verify = None  # its tests call no task's run()

COLLECTION = 'ferro.proxmox'
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (system, machine) -> target triples to look for, best first.
_TRIPLES = {
    ('linux', 'x86_64'): ['x86_64-unknown-linux-musl', 'x86_64-unknown-linux-gnu'],
    ('linux', 'aarch64'): ['aarch64-unknown-linux-musl', 'aarch64-unknown-linux-gnu'],
    ('darwin', 'x86_64'): ['universal2-apple-darwin', 'x86_64-apple-darwin'],
    ('darwin', 'aarch64'): ['universal2-apple-darwin', 'aarch64-apple-darwin'],
}
_MACHINE_ALIASES = {'amd64': 'x86_64', 'x64': 'x86_64', 'arm64': 'aarch64'}


def candidate_triples(system, machine):
    """The target triples whose binaries can run on this OS and CPU, best first."""
    machine = machine.strip().lower()
    key = (system.strip().lower(), _MACHINE_ALIASES.get(machine, machine))
    return _TRIPLES.get(key, [])


def shipped_platforms(root=COLLECTION_ROOT):
    native = os.path.join(root, 'native')
    try:
        return sorted(d for d in os.listdir(native) if os.path.isdir(os.path.join(native, d)))
    except OSError:
        return []


def find_binary(name, system, machine, root=COLLECTION_ROOT):
    """The path of the module's binary for that platform, or an AnsibleActionFail that says
    which platforms this build of the collection ships.

    The path is native/<triple>/<name>, a link to the platform's multi-call binary
    (native/<triple>/ferro_proxmox); run under the file name <name>, it runs that module."""
    tried = []
    for triple in candidate_triples(system, machine):
        path = os.path.join(root, 'native', triple, name)
        tried.append(path)
        if os.path.isfile(path):
            return path
    shipped = ', '.join(shipped_platforms(root)) or 'none'
    raise AnsibleActionFail(
        "%s.%s has no native binary for %s %s (looked for: %s). This build of the collection "
        "ships binaries for: %s. Install a release built for this platform, or build one with "
        "'make collection' (see the collection's README)."
        % (COLLECTION, name, system, machine, ', '.join(tried) or 'no known target triple', shipped)
    )


def _module_args_encoder():
    """The JSON encoder ansible-core itself uses for the arguments it sends a module, which turns
    its wrapper types into plain JSON: an inline vault value into its plain text, a template's
    unsafe or tagged string into a string, a date into its ISO form.

    ansible-core 2.19 and later: `get_module_encoder(profile, Direction.CONTROLLER_TO_MODULE)`
    (what `ActionBase._execute_module` writes a binary module's args file with; a module's
    profile is 'legacy' unless it declares another), which knows the new templating's types
    (EncryptedString, the tagged str/int/..., the lazy containers). 2.17 and 2.18:
    `AnsibleJSONEncoder(vault_to_text=True)`, what `modify_module` serialises a module's args
    with (AnsibleVaultEncryptedUnicode is no str and no JSON type: neither ansible-core's
    validator nor `json.dumps` takes it as it is)."""
    get_module_encoder = getattr(ansible_json, 'get_module_encoder', None)
    direction = getattr(ansible_json, 'Direction', None)
    if get_module_encoder is not None and direction is not None:
        return get_module_encoder('legacy', direction.CONTROLLER_TO_MODULE)

    class VaultToTextEncoder(ansible_json.AnsibleJSONEncoder):
        def __init__(self, **kwargs):
            super().__init__(vault_to_text=True, **kwargs)

    return VaultToTextEncoder


_ARGS_ENCODER = _module_args_encoder()


def plain(value):
    """`value` (task arguments, an environment) as plain Python types, the way the module would
    read them from the JSON ansible-core sends it: the one conversion every value goes through
    before validation, so that ansible-core's validator, no_log masking and the binary all see
    the same plain text on every supported ansible-core."""
    return json.loads(json.dumps(value, cls=_ARGS_ENCODER))


def module_environment(base, task_environment):
    """The environment a module process sees: `base` (the environment it inherits) with the
    task's `environment:` on top, as ansible-core's `VAR=value` command prefix puts it there
    (values as text, the way the shell plugin's env_prefix writes them)."""
    env = dict(base)
    env.update((str(k), str(v)) for k, v in task_environment.items())
    return env


def resolve_env_fallbacks(env_fallbacks, args, environ):
    """The task's arguments with each unset option that has an environment fallback filled from
    `environ`, by ansible-core's own rule (`set_fallbacks`: an option not among the arguments
    takes the first of its variables that is set). An option the task sets, even to null, keeps
    it: an explicit option beats the environment, as in AnsibleModule."""
    resolved = dict(args)
    for option, names in env_fallbacks.items():
        if option not in args:
            for name in names:
                # An empty variable counts as unset (`empty_is_unset`).
                if environ.get(name, '') != '':
                    resolved[option] = environ[name]
                    break
    return resolved


PLAN_KEY = '_ferro_check_plan'
RECORDED_KEY = '_ferro_check_plan_recorded'


def check_plan_dir():
    """The run's check-mode plan directory: inside ansible-core's per-run local temp dir
    (`DEFAULT_LOCAL_TMP`, a `mkdtemp` made, mode 0700, when ansible-core's constants load in the
    ansible-playbook process, before it forks the task workers, and removed when that process
    exits; the same in ansible-core 2.17 to 2.21), so every task of the run, in every fork and
    serial batch, finds the same directory and no run sees another's."""
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'ferro-proxmox-check-plan')


def load_plan(plan_dir):
    """Every prediction recorded in `plan_dir` so far: a list of objects, and the reason the
    directory could not be read (None when it could; a missing directory is an empty plan).
    An unreadable file is skipped, as a half-written one cannot be (writes rename into place)."""
    try:
        names = sorted(n for n in os.listdir(plan_dir) if n.startswith('vm-') and n.endswith('.json'))
    except FileNotFoundError:
        return [], None
    except OSError as e:
        return [], str(e)
    plan = []
    for n in names:
        try:
            with open(os.path.join(plan_dir, n), encoding='utf-8') as f:
                plan.append(json.load(f))
        except (OSError, ValueError):
            continue
    return plan, None


def save_predictions(plan_dir, recorded):
    """Store the predictions a task returned, one file per VM, each written to a temp file and
    renamed into place so that a parallel fork never reads a torn file. The file name takes the
    vmid as an integer, so no value of the result names a path outside `plan_dir`. Returns the
    reason they could not be stored, or None."""
    if not isinstance(recorded, list):
        return 'the module returned no list of predictions'
    try:
        os.makedirs(plan_dir, mode=0o700, exist_ok=True)
        for vm in recorded:
            vmid = vm.get('vmid') if isinstance(vm, dict) else None
            if not isinstance(vmid, int) or isinstance(vmid, bool) or vmid < 0:
                return 'a prediction without a vmid: %r' % (vm,)
            fd, tmp = tempfile.mkstemp(prefix='.vm-%d.' % vmid, suffix='.tmp', dir=plan_dir)
            with os.fdopen(fd, 'w', encoding='utf-8') as f:
                json.dump(vm, f)
            os.replace(tmp, os.path.join(plan_dir, 'vm-%d.json' % vmid))
    except OSError as e:
        return str(e)
    return None


def plan_warning(name, reason):
    return ('%s.%s: --check cannot carry predictions between the tasks of this run (%s): a later task '
            'reads Proxmox VE as it is, without what this one would change.' % (COLLECTION, name, reason))


def empty_is_unset(env_fallbacks, option_of_key, args, module_defaults):
    """The task's arguments under the one rule for empty values (issue 27; the binary's
    `validate::empty_is_unset`): an option with an environment fallback (the connection options)
    given as '' counts as unset, as a `lookup('env', ...)` of an unset variable yields. ansible-core
    has merged module_defaults into the task's arguments, the task's '' winning: such an option
    takes its module_defaults value instead (`module_defaults()` gives them, asked only when an
    option is empty), or stays unset, so that the environment applies."""
    empty = [k for k, v in args.items() if v == '' and option_of_key.get(k, k) in env_fallbacks]
    if not empty:
        return args
    defaults = module_defaults()
    resolved = dict((k, v) for k, v in args.items() if k not in empty)
    for key in empty:
        if defaults.get(key) not in (None, ''):
            resolved[key] = defaults[key]
    return resolved


def remote_connection_hint(msg, local, host):
    """What to add to a missing-connection-option message when the task runs on another host: the
    controller's PROXMOX_* variables are not that host's, and delegate_to: localhost is the usual fix."""
    if local or not re.search(r'missing required arguments: .*\bapi_(host|user)\b', msg):
        return ''
    return ('. This task runs on %s, not on the controller: the connection options are not in the task, '
            'module_defaults or the task\'s environment:, and the controller\'s PROXMOX_* variables are not seen '
            'there. Add `delegate_to: localhost` to the task (the usual fix), or give the connection in '
            'module_defaults' % host)


def parse_module_output(stdout, stderr, rc):
    """One JSON object from the module's stdout, as ansible-core would take it; a failure
    result that shows the raw output otherwise."""
    text = stdout.strip()
    start = text.find('{')
    end = text.rfind('}')
    if start != -1 and end > start:
        try:
            data = json.loads(text[start:end + 1])
            if isinstance(data, dict):
                return data
        except ValueError:
            pass
    return {
        'failed': True,
        'msg': 'Module result deserialization failed: the module did not print a JSON object (rc=%s)' % rc,
        'module_stdout': stdout,
        'module_stderr': stderr,
        'rc': rc,
    }


class NativeModuleAction(ActionBase):
    """Runs the native binary of MODULE (set by native_action)."""

    _supports_check_mode = True
    _supports_async = False

    MODULE = None            # the module's short name, e.g. 'proxmox_nic'
    ARGUMENT_SPEC = {}       # from its stub
    VALIDATOR = None         # ArgumentSpecValidator over that spec
    OPTION_OF_KEY = {}       # every option name and alias -> the option it sets
    ENV_FALLBACKS = {}       # option -> the environment variables it falls back to, in order
    SECRET_ENV = frozenset()  # the variables of no_log options (PROXMOX_PASSWORD, ...)

    def _connection_is_local(self):
        transport = getattr(self._connection, 'transport', None) or getattr(self._connection, '_load_name', '')
        return transport in ('local', 'ansible.builtin.local')

    def _is_local(self):
        # FERRO_PROXMOX_EXEC=connection forces the copy-and-execute path even on a local
        # connection (used by the tests, and a way out should direct execution ever misbehave).
        if os.environ.get('FERRO_PROXMOX_EXEC') == 'connection':
            return False
        return self._connection_is_local() and not self._play_context.become

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        del tmp

        name = self.MODULE
        # The task's environment (play, role, block and task `environment:`, templated and
        # merged by ansible-core, the innermost winning) is what the module process gets, on top
        # of what it inherits: on a local connection the controller's own environment; on a
        # remote target that target's, which the controller cannot see, so only the task's counts.
        raw_env = {}
        self._compute_environment_string(raw_env)
        task_env = plain(raw_env)
        inherited = os.environ if self._connection_is_local() else {}
        environ = module_environment(inherited, task_env)
        task_args = empty_is_unset(self.ENV_FALLBACKS, self.OPTION_OF_KEY, plain(dict(self._task.args)),
                                   self._module_defaults)
        task_args = resolve_env_fallbacks(self.ENV_FALLBACKS, task_args, environ)
        validation = self.VALIDATOR.validate(task_args)
        no_log_values = set(validation._no_log_values)
        if validation.error_messages:
            # AnsibleModule's wording, naming the module as the user called it.
            msg = validation.errors.msg
            if isinstance(validation.errors[0], UnsupportedError):
                msg = 'Unsupported parameters for (%s.%s) module: %s' % (COLLECTION, name, msg)
            msg += remote_connection_hint(msg, self._connection_is_local(),
                                          self._task.delegate_to or task_vars.get('inventory_hostname'))
            result.update(failed=True, msg=msg)
            return remove_values(result, no_log_values)
        # Send what the task set (coerced, aliases resolved, environment fallbacks filled) and
        # leave documented defaults to the binary, which applies the same ones: a default passed
        # explicitly would count as "set" in the binary's mutually_exclusive / required_* checks.
        # Options filled from the environment count as set, as they do in AnsibleModule.
        given = set(task_args) | {self.OPTION_OF_KEY.get(key, key) for key in task_args}
        args = {}
        for option, value in validation.validated_parameters.items():
            default = self.ARGUMENT_SPEC.get(option, {}).get('default')
            if option in given or default is None or value != default:
                args[option] = value
        # Options the task did not set arrive as null, which the binary treats as unset.
        self._update_module_args(name, args, task_vars)
        warnings = []
        plan_dir = check_plan_dir() if self._task.check_mode else None
        if plan_dir:
            # The predictions travel in the arguments, so the module needs no access to the
            # directory: it may run as another user or on another host.
            args[PLAN_KEY], problem = load_plan(plan_dir)
            if problem:
                warnings.append(plan_warning(name, problem))

        saved = None
        plan_location = saved_plan.plan_location(task_vars, self._templar)
        if plan_location:
            saved = self._saved_plan_before(plan_location, task_vars, args, no_log_values)
            if saved.get('mode') == 'apply':  # the whole plan verified before the run's first write
                saved = plan_verify.whole_run(plan_location, args, saved, lambda a: (
                    self._run_local(name, a, environ) if self._is_local() else self._run_remote(name, a, task_env)))
            if saved.get('failed'):
                result.update(failed=True, changed=False, msg=saved['failed'])
                return remove_values(result, no_log_values)
            plan_run.started(saved)  # after every refusal: the plan notes the task its module runs

        if self._is_local():
            data = self._run_local(name, args, environ)
        else:
            data = self._run_remote(name, args, task_env)

        recorded_plan = data.pop(saved_plan.RECORDED_KEY, None)
        if saved:
            self._saved_plan_after(saved, data, recorded_plan, no_log_values)

        recorded = data.pop(RECORDED_KEY, None)
        if plan_dir and recorded is not None:
            problem = save_predictions(plan_dir, recorded)
            if problem:
                warnings.append(plan_warning(name, problem))
        data.pop('_ansible_no_log', None)
        result.update(remove_values(data, no_log_values))
        if warnings:
            result['warnings'] = list(result.get('warnings') or []) + warnings
        return result

    def _module_defaults(self):
        """What this task's `module_defaults` give the module (its group's, then its own;
        templated, as plain values), by ansible-core's own merge: `_apply_action_arg_defaults`
        (2.19 and later, what its gather_facts and package actions use) or
        `get_action_args_with_defaults` (2.17, 2.18). Both are ansible-core internals: where
        neither works, {} (an empty option is then unset and the environment applies)."""
        from ansible.executor import module_common
        fqcn = '%s.%s' % (COLLECTION, self.MODULE)
        try:
            apply_defaults = getattr(module_common, '_apply_action_arg_defaults', None)
            if apply_defaults is not None:
                return plain(apply_defaults(fqcn, self._task, {}, self._templar))
            return plain(module_common.get_action_args_with_defaults(
                fqcn, {}, self._task.module_defaults, self._templar,
                action_groups=self._task._parent._play._action_groups))
        except Exception:  # pylint: disable=broad-except
            return {}

    def _saved_plan_before(self, plan_dir, task_vars, args, no_log_values):
        """A saved plan, before the module runs (plugin_utils/saved_plan.py, plan_run.py): in a
        check run the module is told to record, in a real run handed the task's record to
        compare with, after the plan and the task's arguments are checked here. Returns the state
        `_saved_plan_after` needs, or `{'failed': message}`."""
        sp = saved_plan
        key_info = sp.task_key(self._task, task_vars, self.MODULE)
        user_args = dict((k, v) for k, v in args.items() if not k.startswith('_'))
        tasks = os.path.join(plan_dir, 'tasks')
        try:
            material = plan_run.key_material(task_vars, self._templar, args)
            with sp.locked(plan_dir):
                if not plan_run.real_run():
                    secret = plan_run.start_save(plan_dir, COLLECTION_ROOT, material)
                    # A `check_mode: false` task writes in the check run already: it is recorded
                    # as outside the plan (its arguments only), and runs as written in both runs.
                    outside = not self._task.check_mode
                    if not outside:
                        # The module returns its record with each secret already as its keyed hash.
                        args[sp.SAVED_KEY] = {'mode': 'save', 'tokens': sp.secret_tokens(no_log_values, secret)}
                    sp.point(plan_dir, 'save')
                    return {'mode': 'save', 'dir': plan_dir, 'key': key_info, 'args': user_args, 'secret': secret,
                            'outside': outside}
                secret, warnings, note = plan_run.begin_apply(plan_dir, COLLECTION_ROOT, material, self._task, self._loader)
                occurrence = sp.next_occurrence(sp.applied_dir(), key_info)
                path = sp.record_path(tasks, key_info, occurrence)
                marker = sp.record_path(sp.applied_dir(), key_info, occurrence)
                sp.write_marker(marker, {'record': path})
                sp.point(plan_dir, 'apply')
            planned = plan_run.planned_record(plan_dir, path, secret, key_info, occurrence)
        except sp.PlanError as e:
            return {'failed': str(e)}
        except OSError as e:
            return {'failed': 'the saved plan at %s cannot be used: %s' % (plan_dir, e)}
        skipped = plan_run.cache.skipped_before(note, os.path.dirname(marker), os.path.basename(os.path.dirname(path)), planned.get('seq', 0))
        if skipped:
            words = ('the saved plan no longer holds: planned tasks of host %s did not run before this one: %s'
                     % (key_info['host'], '; '.join(skipped)))
            if str(task_vars.get(sp.SKIPPED_VAR, 'fail')) != 'warn':
                return {'failed': words + '. Nothing was written; make and approve a new plan, or set %s: warn'
                        % sp.SKIPPED_VAR}
            warnings.append(words)
        moved = sp.args_moved(planned.get('args') or {}, sp.hash_secrets(user_args, no_log_values, secret))
        if moved:
            return {'failed': "the saved plan no longer holds: the task's arguments changed since the plan: %s. "
                              'Nothing was written; make and approve a new plan' % '; '.join(moved)}
        state = {'mode': 'apply', 'planned': planned, 'warnings': warnings, 'dir': plan_dir, 'path': path,
                 'marker': marker, 'key': key_info, 'secret': secret, 'hosts': note.get('hosts')}
        if self._task.check_mode:
            # `check_mode: true` in the real run: the task previews again and applies nothing.
            state['mode'] = 'preview'
        elif not planned.get('outside_plan'):
            compared = plan_verify.rebound(plan_dir, dict((k, planned.get(k) or []) for k in ('reads', 'writes', 'vms', 'inputs')))
            args[sp.SAVED_KEY] = dict(sp.unhash_secrets(compared, no_log_values, secret), mode='apply')
        return state

    def _saved_plan_after(self, saved, data, recorded, no_log_values):
        """A saved plan, after the module ran: the check run stores the task's record (secrets as keyed
        hashes); the real run notes the task's outcome in the plan and reports the values bound at apply."""
        sp = saved_plan
        if saved['mode'] in ('apply', 'preview'):
            plan_run.finish_apply(saved, data)
            if saved['mode'] == 'apply':
                plan_verify.remember_bound(saved['dir'], saved['planned'], data)
            return
        plan_dir, secret = saved['dir'], saved['secret']
        with sp.locked(plan_dir):
            tasks = os.path.join(plan_dir, 'tasks')
            occurrence = sp.next_occurrence(tasks, saved['key'])
            seq = sp.host_sequence(tasks, saved['key'])
            record = dict(saved['key'], occurrence=occurrence, seq=seq, args=saved['args'],
                          result=dict((k, data[k]) for k in sp.RESULT_FIELDS if k in data),
                          **dict((k, (recorded or {}).get(k) or []) for k in ('reads', 'writes', 'vms', 'inputs')))
            plan_verify.bind_later(record, recorded)
            if saved['outside']:
                record['outside_plan'] = True
            plan_run.save_record(plan_dir, secret, sp.record_path(tasks, saved['key'], occurrence),
                                 sp.hash_secrets(record, no_log_values, secret), self._task, self._loader)

    def _run_local(self, name, args, env):
        binary = find_binary(name, platform.system(), platform.machine())
        try:
            # Run through the link, so argv[0] names the module.
            proc = subprocess.run(
                [binary], input=json.dumps(args), capture_output=True, text=True, env=env, check=False,
            )
        except OSError as e:
            raise AnsibleActionFail('%s.%s: cannot run %s: %s' % (COLLECTION, name, binary, e))
        return parse_module_output(proc.stdout, proc.stderr, proc.returncode)

    def _run_remote(self, name, args, task_env):
        uname = self._low_level_execute_command('uname -s -m', sudoable=False)
        parts = (uname.get('stdout') or '').split()
        if uname.get('rc') != 0 or len(parts) != 2:
            raise AnsibleActionFail('%s.%s: cannot tell the platform of the target (uname -s -m: %s)'
                                    % (COLLECTION, name, (uname.get('stderr') or uname.get('stdout') or '').strip()))
        binary = find_binary(name, parts[0], parts[1])

        tmpdir = self._make_tmp_path()
        try:
            remote_binary = self._connection._shell.join_path(tmpdir, name)
            remote_args = self._connection._shell.join_path(tmpdir, 'args')
            # The binary itself (not the link, which a connection may copy as a link), named
            # after the module: its argv[0] says which module to run, as for ansible-core's own
            # binary modules.
            self._transfer_file(os.path.realpath(binary), remote_binary)
            self._transfer_data(remote_args, json.dumps(args))
            self._fixup_perms2((tmpdir, remote_binary, remote_args), execute=True)
            # The environment goes on the command line, which -vvv shows (EXEC ...) and `ps`
            # lists: leave out the variables of no_log options. Their values, when they count,
            # were resolved above and travel in the args file.
            env_string = self._connection._shell.env_prefix(
                **dict((k, v) for k, v in task_env.items() if k not in self.SECRET_ENV))
            cmd = self._connection._shell.build_module_command(env_string, None, remote_binary, arg_path=remote_args)
            res = self._low_level_execute_command(cmd, sudoable=True)
        finally:
            self._remove_tmp_path(tmpdir)
        return parse_module_output(res.get('stdout', ''), res.get('stderr', ''), res.get('rc'))


def native_action(name):
    """The action plugin class of module `name`: NativeModuleAction with the module's stub loaded
    and its validator built, once, when ansible-core first loads the class."""
    stub = importlib.import_module('ansible_collections.ferro.proxmox.plugins.modules.%s' % name)
    option_of_key = {}
    env_fallbacks = {}
    secret_env = set()
    spec_without_env = {}
    for option, spec in stub.ARGUMENT_SPEC.items():
        option_of_key[option] = option
        for alias in spec.get('aliases') or ():
            option_of_key[alias] = option
        fallback = spec.get('fallback') or (None,)
        if fallback[0] is env_fallback:
            env_fallbacks[option] = list(fallback[1])
            if spec.get('no_log'):
                secret_env.update(fallback[1])
            spec = dict((k, v) for k, v in spec.items() if k != 'fallback')
        spec_without_env[option] = spec
    # The validator gets the spec without its environment fallbacks: env_fallback reads this
    # process's os.environ, not the task's environment; resolve_env_fallbacks applies them instead.
    validator = ArgumentSpecValidator(
        spec_without_env,
        mutually_exclusive=stub.MUTUALLY_EXCLUSIVE,
        required_together=stub.REQUIRED_TOGETHER,
        required_one_of=stub.REQUIRED_ONE_OF,
        required_if=stub.REQUIRED_IF,
        required_by=stub.REQUIRED_BY,
    )
    return type('ActionModule', (NativeModuleAction,), {
        '__doc__': 'Runs the native binary of %s.%s.' % (COLLECTION, name),
        'MODULE': name,
        'ARGUMENT_SPEC': stub.ARGUMENT_SPEC,
        'VALIDATOR': validator,
        'OPTION_OF_KEY': option_of_key,
        'ENV_FALLBACKS': env_fallbacks,
        'SECRET_ENV': frozenset(secret_env),
    })


def argument_check_main(name):
    """The `main()` of plugins/action/<name>.py, for ansible-lint's `args` rule only.

    The rule finds a module's action plugin before the module, imports it and calls its `main()`
    with the task's options as AnsibleModule input, having swapped AnsibleModule for a class that
    stops once the options are valid; an action plugin without `main` is skipped, taken for one
    that rewrites its options. Ours hands them to the binary unchanged, checked against the stub's
    spec, so this `main` runs the same check: a misspelled option, a wrong type or a value outside
    the choices fails lint with AnsibleModule's message. The options that usually come from
    `module_defaults` (group/ferro.proxmox.proxmox) or PROXMOX_* variables, which lint cannot
    see, are not required here: the connection options with an environment fallback, and the
    groups made of them. ansible-core never calls it.
    """
    def main():
        stub = importlib.import_module('ansible_collections.ferro.proxmox.plugins.modules.%s' % name)
        from_outside = {option for option, spec in stub.ARGUMENT_SPEC.items() if spec.get('fallback')}
        spec = {option: dict(s, required=False) if option in from_outside else s
                for option, s in stub.ARGUMENT_SPEC.items()}
        groups = [g for g in stub.REQUIRED_ONE_OF if not from_outside.intersection(g)]
        together = [g for g in stub.REQUIRED_TOGETHER if not from_outside.intersection(g)]
        # Looked up on `basic` at call time, so that ansible-lint's stand-in is the one called.
        module = basic.AnsibleModule(
            argument_spec=spec,
            mutually_exclusive=stub.MUTUALLY_EXCLUSIVE,
            required_together=together,
            required_one_of=groups,
            required_if=stub.REQUIRED_IF,
            required_by=stub.REQUIRED_BY,
            supports_check_mode=True,
        )
        module.fail_json(msg='%s.%s runs as a native binary through its action plugin; this only checks arguments'
                         % (COLLECTION, name))
    return main
