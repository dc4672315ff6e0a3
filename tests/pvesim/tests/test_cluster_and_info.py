"""Read endpoints the modules use: nextid, resources, nodes, status, agent, tasks, version, auth."""

import json
import ssl
import urllib.request

from conftest import Q, create, error_of, run


def test_nextid_is_a_string_and_the_first_free_id_from_100(sim):
    # pve-manager PVE/API2/Cluster.pm nextid (9.2.11); docs/pve-semantics.md §3, §18
    assert sim.api('GET', '/cluster/nextid') == '101'
    create(sim, 101)
    assert sim.api('GET', '/cluster/nextid') == '102'
    assert sim.api('GET', '/cluster/nextid', {'vmid': 555}) == '555'


def test_nextid_with_a_taken_vmid_is_a_400(sim):
    # Cluster.pm nextid: raise_param_exc({vmid => "VM $vmid already exists"}) (9.2.11); §18
    err = error_of(sim.api, 'GET', '/cluster/nextid', {'vmid': 100})
    assert err.status == 400 and err.errors == {'vmid': 'VM 100 already exists'}


def test_nextid_answers_a_taken_vmid_to_a_user_who_cannot_see_it(sim):
    # Cluster.pm nextid: `permissions => { user => 'all' }`, the answer from the whole vmlist (9.2.11);
    # /cluster/resources hides the VM without VM.Audit; docs/pve-semantics.md §47.2
    sim.add_user('blind@pve', tokens={'t': 's'}, acl={'/': ['VM.Allocate']})
    seen = [r['vmid'] for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}, token='blind@pve!t=s')]
    assert 100 not in seen
    err = error_of(sim.api, 'GET', '/cluster/nextid', {'vmid': 100}, token='blind@pve!t=s')
    assert err.status == 400 and err.errors == {'vmid': 'VM 100 already exists'}
    assert sim.api('GET', '/cluster/nextid', {'vmid': 555}, token='blind@pve!t=s') == '555'


def test_cluster_resources_lists_vms_with_template_flag_lock_and_tags(sim):
    # pve-manager PVE/API2/Cluster.pm resources (9.2.11); docs/pve-semantics.md §3, §4
    sim.fault(kind='lock', vmid=100, lock='backup', seconds=30)
    data = dict((r['vmid'], r) for r in sim.api('GET', '/cluster/resources', {'type': 'vm'}))
    assert set(data) == {100, 9000}
    web = data[100]
    assert (web['id'], web['type'], web['node'], web['name'], web['status'], web['template'], web['lock'],
            web['tags']) == ('qemu/100', 'qemu', 'pve1', 'existing-web', 'running', 0, 'backup', 'prod;web')
    assert data[9000]['template'] == 1 and 'lock' not in data[9000]


def test_nodes_and_the_node_vm_list(sim):
    # pve-manager PVE/API2/Nodes.pm index; qemu-server Qemu.pm vmlist (9.2.x); §4
    assert [n['node'] for n in sim.api('GET', '/nodes')] == ['pve1', 'pve2']
    assert sorted(v['vmid'] for v in sim.api('GET', Q)) == [100, 9000]
    assert sim.api('GET', '/nodes/pve2/qemu') == []


def test_status_current_reports_running_state_and_agent(sim):
    # Qemu.pm vm_status → QemuServer.pm vmstatus (9.2.6); §4
    status = sim.api('GET', Q + '/100/status/current')
    assert (status['status'], status['qmpstatus'], status['agent'], status['vmid']) == ('running', 'running', 1, 100)
    assert sim.api('GET', Q + '/9000/status/current')['template'] == 1


def test_agent_interfaces_answer_for_a_running_vm_with_the_agent(sim):
    # qemu-server src/PVE/API2/Qemu/Agent.pm network-get-interfaces (9.2.6)
    result = sim.api('GET', Q + '/100/agent/network-get-interfaces')['result']
    assert [i['name'] for i in result] == ['lo', 'ens18']
    assert result[1]['hardware-address'] == 'bc:24:11:0a:01:00'


def test_agent_on_a_stopped_vm_or_without_agent_is_a_500_with_pves_message(sim):
    # qemu-server src/PVE/QemuServer/Agent.pm assert_agent_available (9.2.6)
    create(sim, 200, agent=1)
    err = error_of(sim.api, 'GET', Q + '/200/agent/network-get-interfaces')
    assert (err.status, err.message) == (500, 'VM 200 is not running')
    create(sim, 201)
    err = error_of(sim.api, 'GET', Q + '/201/agent/network-get-interfaces')
    assert (err.status, err.message) == (500, 'No QEMU guest agent configured')


def test_unknown_or_malformed_upid_is_a_400(sim):
    # pve-manager PVE/API2/Tasks.pm read_task_status; pve-common UPID.pm decode (9.2.11); §17, §21 D13
    err = error_of(sim.api, 'GET', '/nodes/pve1/tasks/UPID:pve1:00001234:00005678:65000000:qmstart:100:root@pam:/status')
    assert err.status == 400 and err.errors == {'upid': 'no such task'}
    err = error_of(sim.api, 'GET', '/nodes/pve1/tasks/garbage/status')
    assert err.status == 400 and err.errors == {'upid': 'unable to parse worker upid'}


def test_task_log_has_numbered_lines_a_total_and_ends_with_the_task_line(sim):
    # pve-manager PVE/API2/Tasks.pm read_task_log (9.2.11); §3, §17
    upid = sim.api('PUT', Q + '/100/resize', {'disk': 'scsi0', 'size': '1G'})
    status = sim.wait_task(upid)
    assert status['exitstatus'] == 'shrinking disks is not supported'
    req = urllib.request.Request(sim.url + '/api2/json/nodes/pve1/tasks/{0}/log'.format(upid), headers={
        'Authorization': 'PVEAPIToken=ansible@pve!automation=5e3c1f0a-7b2d-4c8e-9f61-0d2a4b6c8e10'})
    body = json.loads(urllib.request.urlopen(req, context=ssl.create_default_context(cafile=sim.ca_path)).read())
    assert body['data'][-1] == {'n': body['total'], 't': 'TASK ERROR: shrinking disks is not supported'}
    assert body['data'][0]['n'] == 1


def test_version_reports_pve_9_2(sim):
    # pve-manager PVE/API2/Version.pm (9.2.11); §4
    version = sim.api('GET', '/version')
    assert version['release'] == '9.2' and version['version'].startswith('9.2')


def test_ticket_login_needs_csrf_for_writes(sim):
    # pve-access-control PVE/API2/AccessControl.pm create_ticket; pve-http-server CSRF check; §2
    data = sim.api('POST', '/access/ticket', {'username': 'root@pam', 'password': 'secret'}, token=False)
    assert data['username'] == 'root@pam'
    ticket = (data['ticket'], data['CSRFPreventionToken'])
    assert sim.api('GET', '/version', token=False, ticket=ticket)['release'] == '9.2'
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'description': 'x'}, token=False,
                   ticket=(data['ticket'], 'bad'))
    assert (err.status, err.message) == (401, 'Permission denied - invalid csrf token')
    err = error_of(sim.api, 'POST', '/access/ticket', {'username': 'root@pam', 'password': 'wrong'}, token=False)
    assert (err.status, err.message) == (401, 'authentication failure')


def test_task_user_is_the_token_that_started_it(sim):
    # pve-common RESTEnvironment.pm fork_worker, UPID.pm (9.2.1); §2, §17
    status = run(sim, 'POST', Q + '/100/status/reboot')
    assert status['user'] == 'ansible@pve!automation' and status['tokenid'] == 'automation'
