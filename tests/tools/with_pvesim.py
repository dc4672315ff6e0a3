"""Run one command against a fresh pvesim: start it, export the connection, run, stop it.

    with_pvesim.py [--seed FILE] [--time-scale X] -- COMMAND [ARGS...]

The command gets PROXMOX_HOST, PROXMOX_PORT, PROXMOX_USER, PROXMOX_TOKEN_ID,
PROXMOX_TOKEN_SECRET and PROXMOX_CA_PATH (the modules' environment fallbacks) pointing at the
simulator, and ANSIBLE_COLLECTIONS_PATH at build/collections unless already set. Exits with the
command's exit status. Used by `make demo`.
"""

import argparse
import os
import subprocess
import sys

from pvesim.testing import TOKEN_ID, TOKEN_SECRET, PvesimProcess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def simulator_env(sim):
    user, token = TOKEN_ID.split('!', 1)
    return {
        'PROXMOX_HOST': sim.host,
        'PROXMOX_PORT': str(sim.port),
        'PROXMOX_USER': user,
        'PROXMOX_TOKEN_ID': token,
        'PROXMOX_TOKEN_SECRET': TOKEN_SECRET,
        'PROXMOX_CA_PATH': sim.ca_path,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seed')
    parser.add_argument('--time-scale', type=float)
    parser.add_argument('command', nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ['--'] else args.command
    if not command:
        parser.error('no command given')
    with PvesimProcess(seed=args.seed, time_scale=args.time_scale) as sim:
        print('pvesim (simulated Proxmox VE) running at %s' % sim.url, flush=True)
        env = dict(os.environ)
        env.update(simulator_env(sim))
        env.setdefault('ANSIBLE_COLLECTIONS_PATH', os.path.join(ROOT, 'build', 'collections'))
        return subprocess.call(command, env=env)


if __name__ == '__main__':
    sys.exit(main())
