"""The /_sim admin API: reset, request log, faults, time scale; and the CLI contract."""

import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from conftest import Q, config, create, error_of, ok, run


def test_reset_restores_the_seed_and_clears_the_log(sim):
    create(sim, 200)
    sim.reset('default')
    assert sorted(v['vmid'] for v in sim.api('GET', Q)) == [100, 9000]
    assert [r['path'] for r in sim.requests()] == ['/api2/json/nodes/pve1/qemu']


def test_request_log_records_each_call_with_secrets_masked(sim):
    sim.clear_requests()
    sim.api('POST', '/access/ticket', {'username': 'root@pam', 'password': 'secret'}, token=False)
    sim.api('PUT', Q + '/100/config', {'cipassword': 'hunter2', 'description': 'x'})
    sim.api('GET', Q + '/100/config', {'current': 1})
    log = sim.requests()
    assert [(r['method'], r['path'], r['status']) for r in log] == [
        ('POST', '/api2/json/access/ticket', 200), ('PUT', '/api2/json/nodes/pve1/qemu/100/config', 200),
        ('GET', '/api2/json/nodes/pve1/qemu/100/config', 200)]
    assert log[0]['body'] == {'username': 'root@pam', 'password': '**********'} and log[0]['user'] is None
    assert log[1]['body'] == {'cipassword': '**********', 'description': 'x'}
    assert log[1]['user'] == 'ansible@pve!automation' and log[2]['query'] == {'current': '1'}
    assert all(isinstance(r['duration_ms'], float) for r in log)
    assert '5e3c1f0a' not in str(log) and 'hunter2' not in str(log) and 'secret' not in str(log)


def test_http_fault_answers_the_next_n_matching_requests_with_pves_envelope(sim):
    sim.fault(kind='http', method='PUT', path=r'/qemu/100/config$', status=500, message='cluster not ready - no quorum?',
              count=2)
    for _ in range(2):
        err = error_of(sim.api, 'PUT', Q + '/100/config', {'cores': 3})
        assert (err.status, err.message, err.body['data']) == (500, 'cluster not ready - no quorum?', None)
    assert config(sim, 100, current=True)['cores'] == 2
    assert sim.api('PUT', Q + '/100/config', {'description': 'ok'}) is None


def test_a_fault_with_skip_lets_the_first_matching_requests_pass(sim):
    sim.fault(kind='http', method='GET', path=r'/qemu/100/pending$', status=500, message='gone', skip=1, count=1)
    assert sim.api('GET', Q + '/100/pending')
    assert error_of(sim.api, 'GET', Q + '/100/pending').status == 500
    assert sim.api('GET', Q + '/100/pending')


def test_reset_fault_drops_the_connection(sim):
    sim.fault(kind='reset', method='GET', path='^/version$', count=1)
    with pytest.raises((ConnectionError, urllib.error.URLError, OSError)):
        sim.api('GET', '/version')
    assert sim.api('GET', '/version')['release'] == '9.2'


def test_reset_after_fault_applies_the_write_and_loses_its_answer(sim):
    """A reset after sending (docs/pve-semantics.md §55): PVE did the write (its config changed, its task runs
    and is in the node's task list, Tasks.pm node_tasks), only the answer never came back."""
    sim.fault(kind='reset', after=True, method='PUT', path=r'/qemu/100/config$', count=1)
    with pytest.raises((ConnectionError, urllib.error.URLError, OSError)):
        sim.api('PUT', Q + '/100/config', {'description': 'lost answer'})
    assert sim.api('GET', Q + '/100/config')['description'] == 'lost answer'
    sim.fault(kind='reset', after=True, method='POST', path=r'/qemu/9000/clone$', count=1)
    with pytest.raises((ConnectionError, urllib.error.URLError, OSError)):
        sim.api('POST', Q + '/9000/clone', {'newid': 301})
    tasks = sim.api('GET', '/nodes/pve1/tasks', {'source': 'all', 'vmid': 9000, 'typefilter': 'qmclone'})
    assert len(tasks) == 1
    assert sim.wait_task(tasks[0]['upid'])['exitstatus'] == 'OK'
    assert 301 in [v['vmid'] for v in sim.api('GET', Q)]


def test_task_fault_fails_the_next_task_of_a_type_without_its_effect(sim):
    sim.fault(kind='task', type='qmclone', exitstatus='clone failed: out of space', count=1)
    status = run(sim, 'POST', Q + '/9000/clone', {'newid': 300})
    assert status['exitstatus'] == 'clone failed: out of space'
    log = sim.api('GET', '/nodes/pve1/tasks/{0}/log'.format(status['upid']))
    assert log[-1]['t'] == 'TASK ERROR: clone failed: out of space'
    assert 300 not in [v['vmid'] for v in sim.api('GET', Q)]
    ok(run(sim, 'POST', Q + '/9000/clone', {'newid': 300}))


def test_lock_fault_holds_a_lock_for_t_seconds(sim):
    sim.fault(kind='lock', vmid=100, lock='backup', seconds=0.3)
    assert sim.api('GET', Q + '/100/status/current')['lock'] == 'backup'
    time.sleep(0.5)
    assert 'lock' not in sim.api('GET', Q + '/100/status/current')
    assert sim.admin('GET', '/_sim/faults')['data'] == []


def test_latency_fault_slows_matching_requests(sim):
    sim.fault(kind='latency', ms=300, path='^/version$', count=1)
    sim.clear_requests()
    started = time.monotonic()
    sim.api('GET', '/version')
    assert time.monotonic() - started >= 0.3
    assert sim.requests()[0]['duration_ms'] >= 300


def test_task_slow_fault_makes_the_next_task_run_s_seconds(sim):
    sim.fault(kind='task-slow', type='qmstop', seconds=0.4)
    started = time.monotonic()
    ok(run(sim, 'POST', Q + '/100/status/stop'))
    assert time.monotonic() - started >= 0.4


def test_time_scale_sets_task_duration(sim):
    sim.time_scale(0)
    upid = sim.api('POST', Q + '/100/status/stop')
    assert sim.api('GET', '/nodes/pve1/tasks/{0}/status'.format(upid))['status'] == 'stopped'
    assert sim.admin('GET', '/_sim/time-scale')['data'] == {'scale': 0.0}


def test_admin_calls_are_not_logged_and_bad_admin_input_is_a_400(sim):
    sim.clear_requests()
    sim.admin('GET', '/_sim/faults')
    assert sim.requests() == []
    err = error_of(sim.admin, 'POST', '/_sim/faults', {'kind': 'nonsense'})
    assert err.status == 400


def test_cli_prints_the_ready_line_serves_tls_from_its_ca_and_stops_on_sigterm(tmp_path):
    proc = subprocess.Popen([sys.executable, '-m', 'pvesim.cli', '--port', '0', '--tls-dir', str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith('pvesim listening on https://127.0.0.1:') and not line.endswith(':0')
        ctx = ssl.create_default_context(cafile=os.path.join(str(tmp_path), 'ca.pem'))
        for host in ('127.0.0.1', 'localhost'):
            url = 'https://{0}:{1}/api2/json/version'.format(host, line.rsplit(':', 1)[1])
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(url, context=ctx)
            assert info.value.code == 401
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()


def test_users_call_adds_a_user_with_password_token_and_acl_until_reset(sim):
    sim.add_user('canary@pve', password='pw-1', tokens={'e2e': 'tok-1'}, acl={'/': ['VM.Audit']})
    assert sorted(v['vmid'] for v in sim.api('GET', Q, token='canary@pve!e2e=tok-1')) == [100, 9000]
    ticket = sim.api('POST', '/access/ticket', {'username': 'canary@pve', 'password': 'pw-1'}, token=False)
    assert ticket['username'] == 'canary@pve'
    with pytest.raises(Exception) as e:
        sim.api('PUT', Q + '/100/config', {'cores': 4}, token='canary@pve!e2e=tok-1')
    assert getattr(e.value, 'status', None) == 403
    sim.reset('default')
    with pytest.raises(Exception) as e:
        sim.api('GET', Q, token='canary@pve!e2e=tok-1')
    assert getattr(e.value, 'status', None) == 401
    with pytest.raises(Exception) as e:
        sim.admin('POST', '/_sim/users', {'userid': 'no-realm'})
    assert getattr(e.value, 'status', None) == 400


def test_a_seed_carries_a_vms_snapshots(sim, tmp_path):
    """A seed's `snapshots` are the VM's snapshot sections: listed by GET .../snapshot (qemu-server
    API2/Qemu.pm `snapshot_list`, with `current`), and a template conversion is refused for them
    (API2/Qemu.pm `template`)."""
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'seeds', 'default.json')) as f:
        seed = json.load(f)
    config = {'memory': '512', 'scsi0': 'local-lvm:vm-300-disk-0,size=1G', 'parent': 'before'}
    section = dict((k, v) for k, v in config.items() if k != 'parent')
    seed['vms'].append({'vmid': 300, 'name': 'snapped', 'node': 'pve1', 'status': 'stopped', 'config': config,
                        'snapshots': {'before': dict(section, snaptime=1767225600, description='x')}})
    path = tmp_path / 'snapped.json'
    path.write_text(json.dumps(seed))
    sim.reset(str(path))
    names = sorted(s['name'] for s in sim.api('GET', Q + '/300/snapshot'))
    assert names == ['before', 'current']
    assert error_of(sim.api, 'POST', Q + '/300/template').message == \
        'unable to create template, because VM contains snapshots'
