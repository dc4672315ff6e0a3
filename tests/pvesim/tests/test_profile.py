"""The realistic cluster profile (docs/pve-semantics.md §56): pve-manager PVE/Service/pveproxy.pm and
PVE/Service/pvedaemon.pm `%daemon_options` (max_workers 3 each), PVE/HTTPServer.pm `rest_handler` (`protected`
methods proxied to pvedaemon), pve-cluster src/PVE/Cluster.pm `$cfs_lock` / `cfs_lock_storage` (10 s, `got
lock request timeout`) under pve-storage src/PVE/Storage.pm `vdisk_alloc` and Plugin.pm `cluster_lock_storage`,
pve-common src/PVE/Tools.pm `lock_file_full` (10 s), pve-guest-common src/PVE/AbstractConfig.pm `lock_config`."""

from concurrent.futures import ThreadPoolExecutor

from conftest import Q, ok

from pvesim import profile

CFS_TIMEOUT = "clone failed: cfs-lock 'storage-truenas' error: got lock request timeout"


def profile_state(sim):
    return sim.admin('GET', '/_sim/profile')['data']


def realistic(sim, seed='default', scale=0.02):
    sim.reset(seed)
    sim.time_scale(scale)
    sim.admin('POST', '/_sim/profile', {'profile': 'realistic'})


def test_the_profile_is_off_by_default_and_its_constants_are_pves(sim):
    # pveproxy.pm / pvedaemon.pm: max_workers => 3; Cluster.pm $cfs_lock and Tools.pm lock_file_full: 10 s;
    # AbstractConfig.pm lock_config: 10 s
    state = profile_state(sim)
    assert state['profile'] == 'none'
    assert state['max_workers'] == {'pveproxy': 3, 'pvedaemon': 3}
    assert state['cfs_lock_timeout'] == 10
    assert (profile.FLOCK_TIMEOUT, profile.CONFIG_LOCK_TIMEOUT) == (10, 10)
    sim.api('GET', Q + '/100/config')
    assert profile_state(sim)['stats']['requests'] == 0


def test_protected_calls_go_through_pvedaemon_and_the_others_stay_in_pveproxy():
    # HTTPServer.pm rest_handler: `protected` methods are proxied to pvedaemon (127.0.0.1:85)
    assert profile.legs('GET', '/api2/json/nodes/pve1/qemu/100/config') == ('pveproxy',)
    assert profile.legs('GET', '/api2/json/nodes/pve1/qemu/100/pending') == ('pveproxy',)
    assert profile.legs('GET', '/api2/json/cluster/resources') == ('pveproxy',)
    assert profile.legs('GET', '/api2/json/access/permissions') == ('pveproxy',)
    assert profile.legs('GET', '/api2/json/nodes/pve1/qemu/100/status/current') == ('pveproxy', 'pvedaemon')
    assert profile.legs('GET', '/api2/json/nodes/pve1/tasks/UPID:x/status') == ('pveproxy', 'pvedaemon')
    assert profile.legs('POST', '/api2/json/nodes/pve1/qemu/100/clone') == ('pveproxy', 'pvedaemon')
    assert profile.legs('PUT', '/api2/json/nodes/pve1/qemu/100/config') == ('pveproxy', 'pvedaemon')


def test_requests_queue_behind_three_workers(sim):
    realistic(sim)
    with ThreadPoolExecutor(12) as pool:
        list(pool.map(lambda _: sim.api('GET', Q + '/100/config'), range(24)))
        list(pool.map(lambda _: sim.api('GET', Q + '/100/status/current'), range(24)))
    stats = profile_state(sim)['stats']
    assert stats['requests'] == 48
    assert stats['max_busy']['pve1/pveproxy'] == 3
    assert stats['max_busy']['pve1/pvedaemon'] == 3
    assert stats['queued'] > 0


def test_a_seed_turns_the_profile_on(sim, tmp_path):
    import json
    with open(profile.__file__.replace('profile.py', '../seeds/default.json'), encoding='utf-8') as fh:
        seed = json.load(fh)
    seed['profile'] = 'realistic'
    path = tmp_path / 'busy.json'
    path.write_text(json.dumps(seed))
    sim.reset(str(path))
    assert profile_state(sim)['profile'] == 'realistic'
    sim.reset('default')
    assert profile_state(sim)['profile'] == 'none'


def clones(sim, ids):
    def one(newid):
        upid = sim.api('POST', Q + '/9000/clone', {'newid': newid, 'name': 'fleet-{0}'.format(newid),
                                                   'full': 1, 'storage': 'truenas'})
        return sim.wait_task(upid, timeout=60)
    return one


def truenas_volumes(sim):
    return sorted(v['volid'] for v in sim.api('GET', '/nodes/pve1/storage/truenas/content')
                  if v.get('vmid') not in (120,))


def test_many_full_clones_onto_one_nas_time_out_on_its_storage_lock_and_leave_nothing(sim):
    # Storage.pm vdisk_alloc holds cfs_lock_storage('truenas') for each allocation; a waiter gives up after
    # 10 s with `cfs-lock 'storage-truenas' error: got lock request timeout`, and clone_vm frees what it made
    realistic(sim, 'ceph', scale=0.01)
    ids = list(range(500, 524))
    with ThreadPoolExecutor(24) as pool:
        statuses = dict(zip(ids, pool.map(clones(sim, ids), ids)))
    failed = [vmid for vmid, s in statuses.items() if s['exitstatus'] != 'OK']
    assert failed, 'no clone waited past the 10 s storage lock'
    assert set(statuses[vmid]['exitstatus'] for vmid in failed) == {CFS_TIMEOUT}
    vms = set(vm['vmid'] for vm in sim.api('GET', '/cluster/resources', {'type': 'vm'}))
    assert not vms & set(failed)
    done = [vmid for vmid in ids if vmid not in failed]
    assert done and set(done) <= vms
    owners = set(int(v.split('/')[0].split(':')[1]) for v in truenas_volumes(sim))
    assert owners == set(done)
    assert profile_state(sim)['stats']['lock_timeouts'] == len(failed)


def test_three_clones_at_a_time_all_get_the_lock(sim):
    realistic(sim, 'ceph', scale=0.01)
    ids = list(range(600, 612))
    with ThreadPoolExecutor(3) as pool:
        statuses = list(pool.map(clones(sim, ids), ids))
    assert [s['exitstatus'] for s in statuses] == ['OK'] * 12
    spans = [t for t in profile_state(sim)['tasks'] if t['type'] == 'qmclone']
    assert len(spans) == 12
    edges = sorted([(t['start'], 1) for t in spans] + [(t['end'], -1) for t in spans])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    assert peak <= 3
    assert profile_state(sim)['stats']['lock_timeouts'] == 0
    ok({'exitstatus': statuses[0]['exitstatus']})
