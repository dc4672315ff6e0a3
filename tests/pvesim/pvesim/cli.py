"""pvesim --host 127.0.0.1 --port PORT [--seed FILE] [--time-scale X] [--tls-dir DIR] [--key-order-seed N]
       [--profile realistic]
pvesim run|check-seed|schema|state|requests|assert|fault|seed-from ...   (user_cli.py)

Serves the simulated PVE API on https://HOST:PORT/api2/json and the admin API on /_sim/, then
prints `pvesim listening on https://HOST:PORT` (the real port with --port 0). SIGTERM or SIGINT stop it.
"""

import argparse
import asyncio
import logging
import shutil
import signal
import sys
import tempfile

from . import user_cli
from .seed_schema import DEFAULT_SEED

# Real seconds per PVE second: a 2 PVE-second task (most of them) takes 0.1 s; clone and move_disk 0.4 s.
DEFAULT_TIME_SCALE = 0.05


async def serve(args):
    from .certs import make_tls   # the server's imports (aiohttp, fakepve) only when serving: `pvesim assert` is quick
    from .server import Pvesim
    tmp = None
    tls_dir = args.tls_dir
    if not tls_dir:
        tmp = tls_dir = tempfile.mkdtemp(prefix='pvesim-')
    try:
        _ca, cert, key = make_tls(tls_dir, hosts=(args.host,))
        sim = Pvesim(host=args.host, port=args.port, seed=args.seed, time_scale=args.time_scale,
                     key_order_seed=args.key_order_seed, profile=args.profile)
        await sim.start(cert, key)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # the order PVE walks a request's keys in is drawn from this seed (key_order.py): a run's orders replay with it
    print('pvesim key order seed {0}'.format(sim.key_order_seed), file=sys.stderr, flush=True)
    print('pvesim listening on https://{0}:{1}'.format(args.host, sim.port), flush=True)
    await stop.wait()
    await sim.stop()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in user_cli.COMMANDS:
        return user_cli.main(argv)
    parser = argparse.ArgumentParser(
        prog='pvesim', description='A simulated Proxmox VE 9.2 API for tests.',
        epilog='pvesim is free software under the GNU Affero General Public License, version 3 or later '
               '(AGPL-3.0-or-later), as fakepve, which it builds on; it is a test tool of ferro.proxmox and '
               'not part of the collection (GPL-3.0-or-later). A network service run from it must offer its '
               'source to its users (AGPL section 13). Subcommands for your tests: pvesim run, check-seed, '
               'schema, state, requests, assert, fault, seed-from (pvesim run --help).')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=8006, help='0 picks a free port (default 8006)')
    parser.add_argument('--seed', default=DEFAULT_SEED,
                        help='a name in seeds/ (default, ceph) or a seed JSON file (default: seeds/default.json)')
    parser.add_argument('--time-scale', type=float, default=DEFAULT_TIME_SCALE,
                        help='real seconds per simulated PVE second; 0 ends tasks before the call returns '
                             '(default {0})'.format(DEFAULT_TIME_SCALE))
    parser.add_argument('--tls-dir', help='write ca.pem (and cert.pem, key.pem) here')
    parser.add_argument('--key-order-seed', type=int, default=None,
                        help='the seed of the order PVE walks a request\'s keys in (default: PVESIM_KEY_ORDER_SEED, '
                             'else random; printed on stderr at start)')
    parser.add_argument('--profile', choices=('none', 'realistic'), default='none',
                        help='realistic: request latency, pveproxy\'s and pvedaemon\'s 3 workers each, and the '
                             'storage lock each allocation holds (docs/pve-semantics.md §56; a seed\'s "profile" '
                             'wins; default none)')
    parser.add_argument('--log-level', default='WARNING')
    args = parser.parse_args(argv)
    user_cli._load_checked(args.seed)  # the seed's errors, each naming its field, before anything starts
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format='pvesim %(levelname)s %(name)s: %(message)s')
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == '__main__':
    sys.exit(main())
