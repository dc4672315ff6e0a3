"""A parameter sent with an empty value or without one, as PVE reads it (docs/pve-semantics.md §74, §32.3):
pve-http-server AnyEvent.pm decode_urlencoded makes `name=` the empty string (its `my ($k, $v) = split(/=/, $kv)`
keeps the trailing empty field) and only a bare `name` an undefined value. The empty string is checked as any
value (JSONSchema.pm check_prop: an integer's type check, a pattern) and reaches the handler; an undefined one
passes where the parameter is optional, and qemu-server Qemu.pm update_vm_api counts the key (so `description`
alone is no `no options specified`), $check_drive_param refuses an undefined drive, and QemuServer.pm
write_vm_config drops an undefined description and refuses any other undefined value (check_type `got undefined
value`)."""

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


def test_an_undefined_description_alone_is_an_option_that_changes_nothing(sim):
    before = config(sim, 100)
    assert raw(sim, 'PUT', Q + '/100/config', 'description') == (200, {'data': None})
    status, body = raw(sim, 'POST', Q + '/100/config', 'description')
    assert status == 200 and sim.wait_task(body['data'])['exitstatus'] == 'OK'
    assert config(sim, 100) == before
    # with nothing at all it is still update_vm_api's refusal
    assert raw(sim, 'PUT', Q + '/100/config', '') == (500, {'data': None, 'message': 'no options specified\n'})


def test_an_empty_value_is_a_value_the_schema_checks_and_the_handler_gets(sim):
    before = config(sim, 100)
    assert raw(sim, 'PUT', Q + '/100/config', 'cores=&memory=4096') == (400, {
        'data': None, 'message': 'Parameter verification failed.\n',
        'errors': {'cores': "type check ('integer') failed - got ''"}})
    assert raw(sim, 'PUT', Q + '/100/resize', 'disk=scsi0&size=') == (400, {
        'data': None, 'message': 'Parameter verification failed.\n',
        'errors': {'size': 'value does not match the regex pattern'}})
    assert config(sim, 100) == before
    # `description=` is the empty description, not an absent parameter: the call is no `no options specified`
    assert raw(sim, 'PUT', Q + '/100/config', 'name=empty-notes;description=') == (200, {'data': None})
    assert config(sim, 100)['name'] == 'empty-notes' and 'description' not in config(sim, 100)
    # an empty description removes one the VM has: write_vm_config prints no comment for it
    assert raw(sim, 'PUT', Q + '/100/config', 'description=notes') == (200, {'data': None})
    assert config(sim, 100)['description'] == 'notes'
    assert raw(sim, 'PUT', Q + '/100/config', 'description=') == (200, {'data': None})
    assert 'description' not in config(sim, 100)


def test_an_undefined_value_of_another_key_is_refused_before_any_change(sim):
    before = config(sim, 100)
    assert raw(sim, 'PUT', Q + '/100/config', 'cores&memory=4096') == (500, {
        'data': None, 'message': "unable to parse value of 'cores' - got undefined value\n"})
    status, body = raw(sim, 'POST', Q + '/100/config', 'cores')
    assert status == 200
    assert sim.wait_task(body['data'])['exitstatus'] == "unable to parse value of 'cores' - got undefined value"
    assert raw(sim, 'PUT', Q + '/100/config', 'scsi1') == (400, {
        'data': None, 'message': 'Parameter verification failed.\n',
        'errors': {'scsi1': 'unable to parse drive options'}})
    assert config(sim, 100) == before and 'pending' not in pending(sim, 100)['memory']


def test_an_undefined_required_parameter_is_missing_and_an_undefined_optional_one_absent(sim):
    assert raw(sim, 'PUT', Q + '/100/resize', 'disk=scsi0&size') == (400, {
        'data': None, 'message': 'Parameter verification failed.\n',
        'errors': {'size': 'property is missing and it is not optional'}})
    # a bare `timeout` on stop is undefined, so absent: the call runs as without it
    status, body = raw(sim, 'POST', Q + '/100/status/stop', 'timeout')
    assert status == 200 and sim.wait_task(body['data'])['exitstatus'] == 'OK'
    assert run(sim, 'POST', Q + '/100/status/start')['exitstatus'] == 'OK'
