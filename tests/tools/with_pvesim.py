"""Run one command against a fresh pvesim: start it, export the connection, run, stop it.

    with_pvesim.py [--seed FILE] [--time-scale X] [--token USER@REALM!ID] -- COMMAND [ARGS...]

The command gets PROXMOX_HOST, PROXMOX_PORT, PROXMOX_USER, PROXMOX_TOKEN_ID,
PROXMOX_TOKEN_SECRET and PROXMOX_CA_PATH (the modules' environment fallbacks) pointing at the
simulator with the seed's token (its first, or --token), and ANSIBLE_COLLECTIONS_PATH at
build/collections unless already set. Exits with the command's exit status. Used by `make demo`.
(Users have the same as `pvesim run`, without the checkout's collections path.)
"""

import argparse
import os
import subprocess
import sys

from pvesim.testing import PvesimProcess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seed')
    parser.add_argument('--time-scale', type=float)
    parser.add_argument('--token', help='user@realm!tokenid of the seed (default: its first token)')
    parser.add_argument('command', nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ['--'] else args.command
    if not command:
        parser.error('no command given')
    with PvesimProcess(seed=args.seed, time_scale=args.time_scale, token=args.token) as sim:
        print('pvesim (simulated Proxmox VE) running at %s' % sim.url, flush=True)
        env = dict(os.environ)
        env.update(sim.proxmox_env())
        env.setdefault('ANSIBLE_COLLECTIONS_PATH', os.path.join(ROOT, 'build', 'collections'))
        return subprocess.call(command, env=env)


if __name__ == '__main__':
    sys.exit(main())
