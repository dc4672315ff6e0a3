"""proxmox_kvm's `pool` on an existing VM (issue 27): with `update: true` the VM moves into the
task's pool, out of the one it is in, through check → real → again with `--diff`; a pool that
does not exist is refused before any write, in check and real runs alike, with one message.

PVE behaviour (docs/pve-semantics.md §36; tests/pvesim/tests/test_pools.py): pve-manager
PVE/API2/Pool.pm `update_pool` (PUT /pools: `vms`, `allow-move` out of another pool; Pool.Allocate
on both pools, VM.Allocate or Permissions.Modify on the VM) and `index` (GET /pools?poolid=, which
dies with `pool '<pool>' does not exist`).
"""

import json
import os

import pytest

from harness import CANARY_USER, add_canary_user

SEED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'pvesim', 'seeds')


def play(**options):
    task = {'name': 'pool', 'delegate_to': 'localhost', 'register': 'out',
            'ferro.proxmox.proxmox_kvm': dict({'vmid': 100, 'node': 'pve1', 'update': True}, **options)}
    return [{'name': 'e2e pool', 'hosts': 'localhost', 'gather_facts': False, 'tasks': [task]}]


def pool_of(sim, vmid):
    entry = [r for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}) if r['vmid'] == vmid][0]
    return entry.get('pool')


def writes(sim):
    return [(r['method'], r['path']) for r in sim.requests()
            if r['method'] != 'GET' and not r['path'].endswith('/access/ticket')]


@pytest.fixture
def pools(sim, tmp_path):
    """The default seed with pools `db` (holding VM 100) and `web`, and the canary user allowed to
    move VMs between pools (Pool.Allocate; it holds VM.Allocate already)."""
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        seed = json.load(f)
    seed['pools'] = {'db': {'vms': [100]}, 'web': {}}
    path = tmp_path / 'pools.json'
    path.write_text(json.dumps(seed))
    sim.reset(str(path))
    add_canary_user(sim)
    sim.add_user(CANARY_USER, acl={'/pool': ['Pool.Allocate', 'Pool.Audit']})
    sim.clear_requests()
    return sim


def test_update_moves_the_vm_into_the_task_pool_out_of_its_old_one(ansible, pools):
    check, real, again = ansible.converge(play(pool='web'))
    for run in (check, real):
        result = run.task('pool')
        assert result['changed'] and result['result']['msg'].endswith('updated'), result['result']
        diff = result['result']['diff']
        assert 'pool: db\n' in diff['before'] and 'pool: web\n' in diff['after'], diff
    assert pool_of(pools, 100) == 'web'
    members = pools.api('GET', '/pools', {'poolid': 'web'})[0]['members']
    assert [m['vmid'] for m in members] == [100]
    assert pools.api('GET', '/pools', {'poolid': 'db'})[0]['members'] == []
    assert not again.task('pool')['changed']
    # The move was one write: PUT /pools (with allow-move: the VM left db).
    assert [w for w in writes(pools) if w[1].endswith('/pools')] == [('PUT', '/api2/json/pools')]


def test_a_vm_in_no_pool_joins_one(ansible, pools):
    pools.add_user('ansible@pve', acl={'/pool': ['Pool.Allocate']})
    pools.api('PUT', '/pools', {'poolid': 'db', 'vms': '100', 'delete': 1})
    assert pool_of(pools, 100) is None
    pools.clear_requests()
    ansible.converge(play(pool='web'))
    assert pool_of(pools, 100) == 'web'


def test_a_missing_pool_is_refused_before_any_write_in_check_and_real_runs(ansible, pools):
    # With a config change in the same task: nothing of it is written either.
    msgs = []
    for check in (True, False):
        pools.clear_requests()
        run = ansible.run_playbook(play(pool='nope', cores=3), check=check, diff=True)
        result = run.task('pool')
        assert result['status'] == 'failed', result
        msgs.append(result['result']['msg'])
        assert writes(pools) == [], writes(pools)
    assert msgs[0] == msgs[1] == "pool: pool 'nope' does not exist (nothing was changed)"
    assert pool_of(pools, 100) == 'db'
    assert pools.api('GET', '/nodes/pve1/qemu/100/config').get('cores') != 3


def test_update_false_leaves_the_pool(ansible, pools):
    run = ansible.run_playbook(play(pool='web', update=False))
    assert run.task('pool')['status'] == 'ok' and not run.task('pool')['changed']
    assert 'pool: VM 100 is in pool db, not in web; set update: true to move it' in \
        run.task('pool')['result'].get('warnings', [])
    assert pool_of(pools, 100) == 'db'
