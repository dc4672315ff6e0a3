"""Concurrent config writers: where PVE checks the digest and holds the config lock (issue 15)."""

import time

from conftest import Q, config, create, error_of, ok, pending

CONFLICT = 'checksum mismatch (file change by other user?)'


def test_a_post_is_answered_without_the_lock_and_its_task_rechecks_the_digest(sim):
    # qemu-server src/PVE/API2/Qemu.pm update_vm_api (9.2.6): `$load_and_check_config->(0); # early
    # checks before forking/locking`, then the qmconfig worker runs `lock_config($vmid, $updatefn)`,
    # whose `$load_and_check_config->(1)` dies with "checksum mismatch (file change by other user?)"
    # before any write when the digest went stale in between.
    sim.time_scale(0.05)
    create(sim, 200, name='t')
    digest = sim.api('GET', Q + '/200/config')['digest']
    sim.fault(kind='task-slow', type='qmconfig', seconds=0.3)
    first = sim.api('POST', Q + '/200/config', {'scsi1': 'local-lvm:1', 'digest': digest})
    started = time.monotonic()
    second = sim.api('POST', Q + '/200/config', {'scsi2': 'local-lvm:1', 'digest': digest})
    answered = time.monotonic() - started
    assert second.startswith('UPID:') and answered < 0.2, answered
    ok(sim.wait_task(first))
    status = sim.wait_task(second)
    assert status['exitstatus'] == CONFLICT, status
    cfg = config(sim, 200)
    assert cfg['scsi1'] == 'local-lvm:vm-200-disk-0,size=1G'
    assert 'scsi2' not in cfg and 'unused0' not in cfg
    assert not any(v['volid'].startswith('local-lvm:vm-200-disk-1')
                   for v in sim.api('GET', '/nodes/pve1/storage/local-lvm/content'))


def test_reads_and_writes_with_a_fresh_digest_interleave_with_a_running_task(sim):
    # Qemu.pm update_vm_api: GET .../pending takes no lock (GuestHelpers.pm config_with_pending_array);
    # a PUT waits for the config lock a running qmconfig task holds (PVE::AbstractConfig lock_config,
    # 10 s), then checks the digest it was given against the config that task wrote.
    sim.time_scale(0.05)
    create(sim, 200, name='t')
    digest = sim.api('GET', Q + '/200/config')['digest']
    sim.fault(kind='task-slow', type='qmconfig', seconds=0.2)
    upid = sim.api('POST', Q + '/200/config', {'scsi1': 'local-lvm:1', 'digest': digest})
    started = time.monotonic()
    assert pending(sim, 200)['digest']['value'] == digest
    assert time.monotonic() - started < 0.15
    err = error_of(sim.api, 'PUT', Q + '/200/config', {'cores': 2, 'digest': digest})
    ok(sim.wait_task(upid))
    assert (err.status, err.message) == (500, CONFLICT)
    fresh = sim.api('GET', Q + '/200/config')['digest']
    assert fresh != digest
    assert sim.api('PUT', Q + '/200/config', {'cores': 2, 'digest': fresh}) is None
    assert config(sim, 200)['cores'] == 2
