"""A parameter sent without a value, as PVE reads it (docs/pve-semantics.md §32.3): pve-http-server
AnyEvent.pm decode_urlencoded makes `name=` an undefined value; JSONSchema.pm check_prop refuses it only
where the parameter is required; qemu-server Qemu.pm update_vm_api counts the key (so `description=` alone is
no `no options specified`), $check_drive_param refuses an undefined drive, and QemuServer.pm write_vm_config
drops an undefined description and refuses any other undefined value (check_type `got undefined value`)."""

import json
import urllib.error
import urllib.request

from conftest import Q, config, pending, run
from pvesim.testing import TOKEN_ID, TOKEN_SECRET


def raw(sim, method, path, body):
    """The form as written (sim.api would leave nothing out, but this keeps `name=` exactly)."""
    req = urllib.request.Request(sim.url + '/api2/json' + path, data=body.encode(), method=method, headers={
        'Authorization': 'PVEAPIToken={0}={1}'.format(TOKEN_ID, TOKEN_SECRET),
        'Content-Type': 'application/x-www-form-urlencoded'})
    try:
        with urllib.request.urlopen(req, context=sim._ctx) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_an_empty_description_alone_is_an_option_that_changes_nothing(sim):
    before = config(sim, 100)
    assert raw(sim, 'PUT', Q + '/100/config', 'description=') == (200, {'data': None})
    status, body = raw(sim, 'POST', Q + '/100/config', 'description=')
    assert status == 200 and sim.wait_task(body['data'])['exitstatus'] == 'OK'
    assert config(sim, 100) == before
    # with nothing at all it is still update_vm_api's refusal
    assert raw(sim, 'PUT', Q + '/100/config', '') == (500, {'data': None, 'message': 'no options specified\n'})


def test_an_empty_value_of_another_key_is_refused_before_any_change(sim):
    before = config(sim, 100)
    assert raw(sim, 'PUT', Q + '/100/config', 'cores=&memory=4096') == (500, {
        'data': None, 'message': "unable to parse value of 'cores' - got undefined value\n"})
    status, body = raw(sim, 'POST', Q + '/100/config', 'cores=')
    assert status == 200
    assert sim.wait_task(body['data'])['exitstatus'] == "unable to parse value of 'cores' - got undefined value"
    assert raw(sim, 'PUT', Q + '/100/config', 'scsi1=') == (400, {
        'data': None, 'message': 'Parameter verification failed.\n',
        'errors': {'scsi1': 'unable to parse drive options'}})
    assert config(sim, 100) == before and 'pending' not in pending(sim, 100)['memory']


def test_an_empty_required_parameter_is_missing_and_an_empty_optional_one_absent(sim):
    assert raw(sim, 'PUT', Q + '/100/resize', 'disk=scsi0&size=') == (400, {
        'data': None, 'message': 'Parameter verification failed.\n',
        'errors': {'size': 'property is missing and it is not optional'}})
    # `timeout=` on stop is undefined, so absent: the call runs as without it
    status, body = raw(sim, 'POST', Q + '/100/status/stop', 'timeout=')
    assert status == 200 and sim.wait_task(body['data'])['exitstatus'] == 'OK'
    assert run(sim, 'POST', Q + '/100/status/start')['exitstatus'] == 'OK'
