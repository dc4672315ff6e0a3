"""pvesim's subcommands for a user's tests: run a command against a fresh pvesim, check a seed, read the state and
the request log, assert on them, inject a fault, write a seed from a real cluster.

    pvesim run [--seed FILE] [--token USER@REALM!ID] [--time-scale X] [--save DIR] -- COMMAND [ARGS...]
    pvesim check-seed FILE            pvesim schema
    pvesim state | requests [--writes]
    pvesim assert no-writes | assert config VM EXPR...
    pvesim fault '{"kind": "http", ...}' | fault --clear
    pvesim seed-from --url URL --token USER@REALM!ID=SECRET [--ca-path FILE | --insecure] [-o FILE]

`state`, `requests`, `assert` and `fault` talk to the pvesim `pvesim run` started (PVESIM_URL, PVESIM_CA_PATH in
the command's environment) or to --url and --ca-path.
"""

import argparse
import json
import os
import ssl
import subprocess
import sys
import urllib.error
import urllib.request

from . import assertions
from .seed_schema import SeedError, check_seed, schema

COMMANDS = ('run', 'check-seed', 'schema', 'state', 'requests', 'assert', 'fault', 'seed-from')


def _admin(args, method, path, body=None):
    url = args.url or os.environ.get('PVESIM_URL')
    if not url:
        raise SystemExit('pvesim {0}: no pvesim to ask: run it under `pvesim run` (PVESIM_URL) or give --url'
                         .format(args.command))
    ca = args.ca_path or os.environ.get('PVESIM_CA_PATH') or os.environ.get('PROXMOX_CA_PATH')
    ctx = ssl.create_default_context(cafile=ca) if url.startswith('https') else None
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url.rstrip('/') + path, data=data, method=method,
                                 headers={'Content-Type': 'application/json'} if data else {})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=60) as resp:
            return json.loads(resp.read())['data']
    except urllib.error.HTTPError as e:
        raise SystemExit('pvesim {0}: {1} {2}: {3}'.format(args.command, method, path, e.read().decode(errors='replace')))


def _print(data):
    print(json.dumps(data, indent=2, sort_keys=True))


def cmd_run(args):
    from .testing import PvesimProcess
    command = args.cmd[1:] if args.cmd[:1] == ['--'] else args.cmd
    if not command:
        raise SystemExit('pvesim run: no command given (pvesim run [options] -- COMMAND [ARGS...])')
    if args.seed:
        _load_checked(args.seed)
    try:
        sim = PvesimProcess(seed=args.seed, time_scale=args.time_scale, token=args.token)
    except ValueError as e:                     # --token names no token of the seed
        raise SystemExit('pvesim run: {0}'.format(e)) from None
    with sim:
        env = dict(os.environ)
        env.update(sim.proxmox_env())
        # `pvesim assert` and friends inside the command, also when pvesim's virtualenv is not activated
        env['PATH'] = os.pathsep.join(p for p in (env.get('PATH'), os.path.dirname(sys.executable)) if p)
        print('pvesim running at {0} (seed {1}, token {2})'.format(sim.url, args.seed or 'default', sim.token_id),
              file=sys.stderr, flush=True)
        try:
            status = subprocess.call(command, env=env)
        except FileNotFoundError:
            raise SystemExit('pvesim run: command not found: {0}'.format(command[0])) from None
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            for name, data in (('requests.json', sim.requests()), ('state.json', sim.world())):
                with open(os.path.join(args.save, name), 'w', encoding='utf-8') as fh:
                    json.dump(data, fh, indent=2, sort_keys=True)
        return status


def _load_checked(path):
    from .seed_schema import seed_path
    full = seed_path(path)
    try:
        with open(full, encoding='utf-8') as fh:
            seed = json.load(fh)
    except OSError as e:
        raise SystemExit('pvesim: seed {0}: {1}'.format(path, e.strerror)) from None
    except ValueError as e:
        raise SystemExit('pvesim: seed {0}: not JSON: {1}'.format(path, e)) from None
    try:
        return check_seed(seed, path)
    except SeedError as e:
        raise SystemExit('pvesim: seed {0} does not match the seed schema (pvesim schema):\n{1}'.format(
            path, '\n'.join('  {0}: {1}'.format(f, m) for f, m in e.errors))) from None


def cmd_check_seed(args):
    seed = _load_checked(args.file)
    print('{0}: a valid seed ({1} nodes, {2} storages, {3} VMs)'.format(
        args.file, len(seed.get('nodes', ['pve1'])), len(seed.get('storages', {})), len(seed.get('vms', []))))
    return 0


def cmd_assert(args):
    try:
        if args.what == 'no-writes':
            if args.exprs:
                raise SystemExit('pvesim assert no-writes takes no argument')
            assertions.assert_no_writes(_admin(args, 'GET', '/_sim/requests'))
            print('no write sent')
        elif args.what == 'config':
            if len(args.exprs) < 2:
                raise SystemExit('pvesim assert config VM EXPR... (e.g. web-01 net0.bridge=vmbr10)')
            assertions.assert_config(_admin(args, 'GET', '/_sim/world'), args.exprs[0], *args.exprs[1:])
            print('VM {0}: {1}'.format(args.exprs[0], ', '.join(args.exprs[1:])))
        else:
            raise SystemExit('pvesim assert: no-writes or config, not {0}'.format(args.what))
    except AssertionError as e:
        print('pvesim assert {0} failed: {1}'.format(args.what, e), file=sys.stderr)
        return 1
    return 0


def cmd_seed_from(args):
    from .seed_from import Cluster, seed_from
    token_id, sep, secret = args.token.partition('=')
    if not sep or '!' not in token_id:
        raise SystemExit('pvesim seed-from: --token is USER@REALM!TOKENID=SECRET')
    seed = seed_from(Cluster(args.url, args.token, ca_path=args.ca_path, insecure=args.insecure), token_id)
    check_seed(seed, args.url)
    text = json.dumps(seed, indent=2, sort_keys=True) + '\n'
    if args.output:
        with open(args.output, 'w', encoding='utf-8') as fh:
            fh.write(text)
        print('wrote {0}: {1} nodes, {2} bridges, {3} storages, {4} VMs'.format(
            args.output, len(seed['nodes']), len(seed['bridges']), len(seed['storages']), len(seed['vms'])),
            file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def main(argv):
    parser = argparse.ArgumentParser(prog='pvesim', description='pvesim for your own tests (see pvesim --help for the server).')
    sub = parser.add_subparsers(dest='command', required=True)
    run = sub.add_parser('run', help='start pvesim on a free port, run COMMAND with PROXMOX_* set, stop')
    run.add_argument('--seed', help='a seed file (default: the default seed)')
    run.add_argument('--token', help='USER@REALM!TOKENID of the seed to export (default: its first token)')
    run.add_argument('--time-scale', type=float)
    run.add_argument('--save', metavar='DIR', help='write requests.json and state.json there after the command')
    run.add_argument('cmd', nargs=argparse.REMAINDER)
    sub.add_parser('check-seed', help='validate a seed file').add_argument('file')
    sub.add_parser('schema', help='print the seed JSON Schema')
    for name, what in (('state', 'the whole state as JSON'), ('requests', 'the request log as JSON'),
                       ('assert', 'no-writes | config VM EXPR...'), ('fault', 'add a fault (JSON) or --clear')):
        p = sub.add_parser(name, help=what)
        p.add_argument('--url', help='pvesim base URL (default: $PVESIM_URL)')
        p.add_argument('--ca-path', help='its CA (default: $PVESIM_CA_PATH)')
        if name == 'requests':
            p.add_argument('--writes', action='store_true', help='only the writes (POST, PUT, DELETE but logins)')
        if name == 'assert':
            p.add_argument('what', choices=('no-writes', 'config'))
            p.add_argument('exprs', nargs='*', help='config: VM then KEY, !KEY, KEY=VALUE or KEY.PROP=VALUE')
        if name == 'fault':
            p.add_argument('spec', nargs='?', help='a fault as JSON (README "Faults")')
            p.add_argument('--clear', action='store_true')
    sf = sub.add_parser('seed-from', help='write a seed from a real cluster (read-only calls, secrets left out)')
    sf.add_argument('--url', required=True, help='https://HOST:8006')
    sf.add_argument('--token', required=True, help='USER@REALM!TOKENID=SECRET (read-only is enough)')
    sf.add_argument('--ca-path')
    sf.add_argument('--insecure', action='store_true', help='do not verify the certificate')
    sf.add_argument('-o', '--output')
    args = parser.parse_args(argv)
    if args.command == 'run':
        return cmd_run(args)
    if args.command == 'check-seed':
        return cmd_check_seed(args)
    if args.command == 'schema':
        _print(schema())
        return 0
    if args.command == 'state':
        _print(_admin(args, 'GET', '/_sim/world'))
        return 0
    if args.command == 'requests':
        log = _admin(args, 'GET', '/_sim/requests')
        _print(assertions.writes(log) if args.writes else log)
        return 0
    if args.command == 'assert':
        return cmd_assert(args)
    if args.command == 'fault':
        if args.clear:
            _admin(args, 'DELETE', '/_sim/faults')
            return 0
        if not args.spec:
            raise SystemExit('pvesim fault: give a fault as JSON, or --clear')
        _print(_admin(args, 'POST', '/_sim/faults', json.loads(args.spec)))
        return 0
    return cmd_seed_from(args)
