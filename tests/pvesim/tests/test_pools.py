"""Resource pools as proxmox_kvm's `pool` on an existing VM uses them (issue 27): pve-manager
PVE/API2/Pool.pm `index` (GET /pools?poolid=) and `update_pool` (PUT /pools, and the deprecated
PUT /pools/{poolid}), which pvesim takes from fakepve's pools.py; docs/pve-semantics.md §36."""

import json
import os

from conftest import error_of

SEED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'seeds')

POOL_SECRET = '5e1a2b3c-pool-move-secret'


def pool_of(sim, vmid):
    entry = [r for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r['vmid'] == vmid][0]
    return entry.get('pool')


def members(sim, pool):
    return [m['vmid'] for m in sim.api('GET', '/pools', {'poolid': pool})[0]['members'] if 'vmid' in m]


def pools(sim, *names):
    """Create the pools, as the suite's token (ansible@pve) given Pool.Allocate on / for it."""
    sim.add_user('ansible@pve', acl={'/': ['Pool.Allocate', 'Pool.Audit']})
    for name in names:
        sim.api('POST', '/pools', {'poolid': name})


def user(sim, name, acl):
    """A user `name`@pve with the ACL (path -> privileges) and a token; returns the token."""
    sim.add_user(name + '@pve', password='x', tokens={'move': POOL_SECRET}, acl=acl)
    return '{0}@pve!move={1}'.format(name, POOL_SECRET)


def test_a_vm_joins_a_pool_and_moves_only_with_allow_move(sim):
    pools(sim, 'web', 'db')
    assert pool_of(sim, 100) is None
    sim.api('PUT', '/pools', {'poolid': 'web', 'vms': '100'})
    assert (pool_of(sim, 100), members(sim, 'web')) == ('web', [100])
    # update_pool: a guest already in another pool is refused unless allow-move is set, and
    # nothing changes (user.cfg is written only at the end).
    err = error_of(sim.api, 'PUT', '/pools', {'poolid': 'db', 'vms': '100'})
    assert "VM 100 belongs already to pool 'web' and 'allow-move' is not set" in err.message
    assert pool_of(sim, 100) == 'web'
    # allow-move: out of the old pool and into the new one in the same write.
    sim.api('PUT', '/pools', {'poolid': 'db', 'vms': '100', 'allow-move': 1})
    assert (pool_of(sim, 100), members(sim, 'web'), members(sim, 'db')) == ('db', [], [100])
    # Adding a member again is refused too.
    err = error_of(sim.api, 'PUT', '/pools', {'poolid': 'db', 'vms': '100', 'allow-move': 1})
    assert 'VM 100 is already a pool member' in err.message


def test_a_missing_pool_is_refused_and_index_answers_any_user(sim):
    # update_pool: `die "pool '$pool' does not exist\n"` before any change; index with a poolid:
    # check(..., noerr) only, then the same die for a missing pool, for any user.
    pools(sim)
    err = error_of(sim.api, 'PUT', '/pools', {'poolid': 'nope', 'vms': '100'})
    assert "pool 'nope' does not exist" in err.message and pool_of(sim, 100) is None
    token = user(sim, 'auditor1', {'/vms/100': ['VM.Audit']})
    err = error_of(sim.api, 'GET', '/pools', {'poolid': 'nope'}, token=token)
    assert err.status == 500 and "pool 'nope' does not exist" in err.message
    pools(sim, 'web')
    assert sim.api('GET', '/pools', {'poolid': 'web'}, token=token)[0]['poolid'] == 'web'


def test_the_privileges_of_a_move(sim):
    # update_pool: `check => ['perm', '/pool/{poolid}', ['Pool.Allocate']]`; check_perm_modify on
    # /vms/<vmid> (Permissions.Modify or VM.Allocate, RPCEnvironment.pm check_perm_modify); with
    # allow-move, Pool.Allocate on the pool the VM leaves. The first is the method's own check (a
    # 403); the others run inside AccessControl.pm lock_user_config, which dies again with its
    # message in front ("update pools failed: ..."): a plain die, a 500.
    pools(sim, 'web', 'db')
    sim.api('PUT', '/pools', {'poolid': 'web', 'vms': '100'})
    inside = 'update pools failed: Permission check failed ({0})'
    cases = [
        ({'/pool/web': ['Pool.Allocate'], '/vms/100': ['VM.Allocate']},
         403, 'Permission check failed (/pool/db, Pool.Allocate)'),
        ({'/pool/db': ['Pool.Allocate'], '/pool/web': ['Pool.Allocate'], '/vms/100': ['VM.Audit']},
         500, inside.format('/vms/100, Permissions.Modify|VM.Allocate')),
        ({'/pool/db': ['Pool.Allocate'], '/vms/100': ['VM.Allocate']}, 500, inside.format('/pool/web, Pool.Allocate')),
    ]
    for n, (acl, status, message) in enumerate(cases):
        token = user(sim, 'pooler%d' % n, acl)
        err = error_of(sim.api, 'PUT', '/pools', {'poolid': 'db', 'vms': '100', 'allow-move': 1}, token=token)
        assert (err.status, err.message) == (status, message), acl
        assert pool_of(sim, 100) == 'web'
    token = user(sim, 'pooler', {'/pool/db': ['Pool.Allocate'], '/pool/web': ['Pool.Allocate'], '/vms/100': ['VM.Allocate']})
    sim.api('PUT', '/pools', {'poolid': 'db', 'vms': '100', 'allow-move': 1}, token=token)
    assert pool_of(sim, 100) == 'db'


def test_a_seed_holds_pools_and_their_vms(sim, tmp_path):
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        seed = json.load(f)
    seed['pools'] = {'web': {'comment': 'front', 'vms': [100]}, 'empty': {}}
    path = tmp_path / 'pools.json'
    path.write_text(json.dumps(seed))
    sim.reset(str(path))
    assert (pool_of(sim, 100), pool_of(sim, 9000)) == ('web', None)
    assert members(sim, 'web') == [100] and members(sim, 'empty') == []
    assert sim.api('GET', '/pools', {'poolid': 'web'})[0]['comment'] == 'front'
