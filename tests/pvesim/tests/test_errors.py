"""Bad input gets PVE's own answer, never a traceback (issue 2 "Done when"; docs/pve-semantics.md §2, §19)."""

from conftest import Q, error_of


def test_a_bad_parameter_is_a_400_with_per_parameter_errors(sim):
    # pve-common JSONSchema.pm check_prop / validate, raised by RESTHandler (9.2.1); §2, §19
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'cores': 'many', 'bogus': 1})
    assert err.status == 400 and err.message == 'Parameter verification failed.'
    assert err.errors == {'cores': "type check ('integer') failed - got 'many'",
                          'bogus': 'property is not defined in schema and the schema does not allow additional '
                                   'properties'}


def test_a_bad_property_string_is_a_400_under_its_key(sim):
    # pve-common JSONSchema.pm parse_property_string (9.2.1); docs/pve-semantics.md §19
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'net1': 'virtio,bridge=vmbr0,tag=5000'})
    assert err.status == 400
    assert err.errors['net1'].startswith('invalid format - format error')
    assert 'net1.tag: value must have a maximum value of 4094' in err.errors['net1']


def test_a_wrong_token_is_a_401(sim):
    # pve-access-control PVE/AccessControl.pm verify_token via pve-http-server (9.x); §2
    err = error_of(sim.api, 'GET', '/version', token='ansible@pve!automation=wrong')
    assert (err.status, err.message) == (401, 'authentication failure')
    err = error_of(sim.api, 'GET', '/version', token=False)
    assert err.status == 401


def test_missing_privileges_are_a_403(sim):
    # pve-access-control PVE/RPCEnvironment.pm check_vm_perm (9.x); §2
    auditor = 'auditor@pve!readonly=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'
    assert sim.api('GET', Q + '/100/config', token=auditor)['name'] == 'existing-web'
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'cores': 4}, token=auditor)
    assert err.status == 403 and err.message.startswith('Permission check failed')


def test_a_missing_vm_is_a_500_naming_its_config_file(sim):
    # pve-guest-common AbstractConfig.pm load_config (6.0.2); §19
    err = error_of(sim.api, 'GET', Q + '/4242/config')
    assert (err.status, err.message) == (500, "Configuration file 'nodes/pve1/qemu-server/4242.conf' does not exist")


def test_skiplock_by_a_non_root_user_is_a_400(sim):
    # Qemu.pm update_vm_api: "Only root may use this option." (9.2.6); §4.1
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'cores': 4, 'skiplock': 1})
    assert err.status == 400 and err.errors == {'skiplock': 'Only root may use this option.'}


def test_an_unexpected_exception_is_a_500_with_a_message_not_a_traceback(sim):
    # pve-http-server Formatter/Standard.pm: every die is a 500 with its text; §2
    err = error_of(sim.api, 'POST', Q + '/100/config', {'balloon': 'x' * 3})
    assert err.status == 400
    err = error_of(sim.api, 'GET', '/nodes/pve1/qemu/notanumber/config')
    assert err.status in (400, 500) and 'Traceback' not in err.message
