"""The order PVE walks a request's keys in: Qemu.pm `update_vm_api` loops `foreach my $opt (keys %$param)`,
Perl's hash order, which Perl randomises per process (PERL_HASH_SEED). pvesim draws that order from a seeded
RNG, so a write whose result depends on it (a CD-ROM drive and a boot order in one request,
docs/pve-semantics.md §46) shows up in tests, and a failing order can be replayed.

The seed: `--key-order-seed N` or `PVESIM_KEY_ORDER_SEED=N`, else a random one; pvesim prints it on stderr at
start (`pvesim key order seed N`). Every `/_sim/reset` restarts the draw from it, so a test sees the same orders
whatever ran before it; `POST /_sim/reset {"key_order_seed": N}` (or `POST /_sim/key-order {"seed": N}`) sets
another seed for what follows.
"""

import logging
import os
import random

from . import options as o

LOG = logging.getLogger('pvesim')


def initial_seed(given=None):
    """The seed given, else PVESIM_KEY_ORDER_SEED, else a random one."""
    if given is None or given == '':
        given = os.environ.get('PVESIM_KEY_ORDER_SEED')
    if given is None or given == '':
        return random.SystemRandom().randrange(2 ** 32)
    return int(given)


class KeyOrderMixin:
    """`walk_keys`: a request's keys in the order PVE's loop meets them."""

    def key_order_seed_set(self, seed):
        """Use `seed` from now on (and at each reset)."""
        self.key_order_seed = int(seed)
        self.key_order_restart()

    def key_order_restart(self):
        """Start the draw again from the seed (at every reset)."""
        if getattr(self, 'key_order_seed', None) is None:
            self.key_order_seed = initial_seed()
        self.key_order_rng = random.Random(self.key_order_seed)
        LOG.info('key order seed %d', self.key_order_seed)

    def walk_keys(self, keys):
        """`keys` (a request's parameter names) in a random order drawn from the seeded RNG."""
        if getattr(self, 'key_order_rng', None) is None:
            self.key_order_restart()
        out = sorted(keys, key=o.natural)
        self.key_order_rng.shuffle(out)
        return out
