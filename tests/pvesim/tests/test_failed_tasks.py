"""Tasks that PVE starts and that then fail before their effect, applying nothing (issue 23; the
module side: docs/pve-semantics.md §31). Each case is made the way it happens on PVE: another client
acts just as the write arrives (pvesim's `race` fault), so the call answers a UPID and the task then
fails with PVE's words.

Sources: qemu-server 9.2.6 src/PVE/API2/Qemu.pm (Qemu.pm) `vm_start`, `resize_vm`, `move_vm_disk`,
`destroy_vm`; src/PVE/QemuServer.pm `vm_start`, `destroy_vm`; pve-guest-common AbstractConfig.pm
`lock_config` (10 s), `lock_config_full`, `check_lock`, `load_config`.
"""

from conftest import Q, config, error_of, run

LINKED = {'vmid': 141, 'name': 'linked-141', 'config': {
    'scsi0': 'vmdata:9000/base-9000-disk-0.qcow2/141/vm-141-disk-0.qcow2,size=8G'}}


def volumes(sim, storage='vmdata', node='pve1'):
    return sorted((v['volid'], v['size']) for v in sim.api('GET', '/nodes/%s/storage/%s/content' % (node, storage)))


def status(sim, vmid, node='pve1'):
    return sim.api('GET', '%s/%d/status/current' % (Q.replace('pve1', node), vmid))['status']


def test_a_start_refused_by_a_lock_taken_as_it_arrives_fails_in_its_task(sim):
    # Qemu.pm vm_start forks `qmstart` without a lock check; QemuServer.pm vm_start checks the lock
    # inside lock_config, in the worker: the call answers a UPID, the task fails, nothing starts.
    assert run(sim, 'POST', Q + '/100/status/stop')['exitstatus'] == 'OK'
    before = config(sim, 100)
    sim.fault(kind='race', method='POST', path=r'/qemu/100/status/start$', act='lock', vmid=100, lock='backup',
              seconds=60)
    done = run(sim, 'POST', Q + '/100/status/start')
    assert done['exitstatus'] == 'VM is locked (backup)'
    assert status(sim, 100) == 'stopped'
    after = config(sim, 100)
    assert after.pop('lock') == 'backup' and after == before


def test_a_resize_refused_by_a_lock_or_a_lock_timeout_fails_in_its_task(sim):
    # Qemu.pm resize_vm: every check is in the `resize` worker, under lock_config: check_lock, and
    # before it the flock itself, which lock_config waits 10 s for ("can't lock file ... got timeout").
    before, vols = config(sim, 100), volumes(sim, 'local-lvm')
    sim.fault(kind='race', method='PUT', path=r'/qemu/100/resize$', act='lock', vmid=100, lock='backup', seconds=60)
    assert run(sim, 'PUT', Q + '/100/resize', {'disk': 'scsi0', 'size': '+1G'})['exitstatus'] == \
        'VM is locked (backup)'
    sim.clear_faults()
    sim.fault(kind='race', method='PUT', path=r'/qemu/100/resize$', act='flock', vmid=100, seconds=5)
    assert run(sim, 'PUT', Q + '/100/resize', {'disk': 'scsi0', 'size': '+1G'})['exitstatus'] == \
        "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout"
    assert config(sim, 100) == before and volumes(sim, 'local-lvm') == vols


def test_a_move_that_times_out_on_the_flock_copies_nothing(sim):
    # Qemu.pm move_vm_disk: the early checks pass (no config lock), then the `qmmove` worker waits
    # for lock_config and gives up before the copy.
    before, vols = config(sim, 100), volumes(sim, 'local-lvm') + volumes(sim, 'vmdata')
    sim.fault(kind='race', method='POST', path=r'/qemu/100/move_disk$', act='flock', vmid=100, seconds=5)
    done = run(sim, 'POST', Q + '/100/move_disk', {'disk': 'scsi0', 'storage': 'vmdata'})
    assert done['exitstatus'] == "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout"
    assert config(sim, 100) == before and volumes(sim, 'local-lvm') + volumes(sim, 'vmdata') == vols


def test_a_move_refused_by_a_config_lock_is_an_http_error_before_any_task(sim):
    # Qemu.pm move_vm_disk runs $load_and_check_move (check_lock) before it forks.
    sim.fault(kind='race', method='POST', path=r'/qemu/100/move_disk$', act='lock', vmid=100, lock='backup',
              seconds=60)
    err = error_of(sim.api, 'POST', Q + '/100/move_disk', {'disk': 'scsi0', 'storage': 'vmdata'})
    assert (err.status, err.message) == (500, 'VM is locked (backup)')


def test_a_resize_after_the_vm_migrated_away_fails_in_its_task(sim):
    # Qemu.pm resize_vm proxies to the node named and forks there; its worker's load_config finds no
    # config on that node (AbstractConfig.pm load_config).
    before = config(sim, 100)
    sim.fault(kind='race', method='PUT', path=r'/qemu/100/resize$', act='migrate', vmid=100, target='pve2')
    done = run(sim, 'PUT', Q + '/100/resize', {'disk': 'scsi0', 'size': '+1G'})
    assert done['exitstatus'] == "Configuration file 'nodes/pve1/qemu-server/100.conf' does not exist"
    assert config(sim, 100, node='pve2') == before


def test_a_template_destroy_refused_for_a_linked_clone_made_meanwhile_removes_nothing(sim):
    # Qemu.pm destroy_vm's early checks know nothing of linked clones; QemuServer.pm destroy_vm, in the
    # `qmdestroy` worker, refuses a template whose base volume a linked clone uses, before any removal.
    before, vols = config(sim, 9000), volumes(sim)
    sim.fault(kind='race', method='DELETE', path=r'/qemu/9000$', act='vm', vm=LINKED)
    done = run(sim, 'DELETE', Q + '/9000')
    assert done['exitstatus'] == "base volume 'vmdata:9000/base-9000-disk-0.qcow2' is still in use by linked cloned"
    assert config(sim, 9000) == before
    assert set(vols) <= set(volumes(sim)) and any('141/vm-141-disk-0' in v for v, _ in volumes(sim))


def test_a_race_fault_is_checked_when_it_is_made(sim):
    for spec, field in [(dict(path='x', act='dance'), 'act'), (dict(path='x', act='lock', vmid=100), 'lock'),
                        (dict(act='migrate', vmid=100, target='pve2'), 'path')]:
        err = error_of(sim.fault, kind='race', **spec)
        assert err.status == 400 and field in err.body['errors'], (spec, err.body)
