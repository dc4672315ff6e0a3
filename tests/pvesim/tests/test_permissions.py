"""GET /access/permissions and the privilege checks behind every call follow pve-access-control 9.x
(docs/pve-semantics.md §24; pvesim/permissions.py)."""

from conftest import Q, error_of

AUDITOR = 'auditor@pve!readonly=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'
READ_ONLY = {'Datastore.Audit': 1, 'Sys.Audit': 1, 'VM.Audit': 1}


def perms(sim, token, **params):
    return sim.api('GET', '/access/permissions', params or None, token=token)


def test_the_read_only_token_sees_its_privileges_on_every_top_level_path(sim):
    # RPCEnvironment.pm get_effective_permissions (fixed top-level paths + ACL paths, empty ones left out),
    # AccessControl.pm roles (an ACL on / with propagate=1 reaches every path)
    assert perms(sim, AUDITOR) == dict((path, READ_ONLY) for path in (
        '/', '/access', '/access/groups', '/nodes', '/pool', '/sdn', '/storage', '/vms'))
    assert perms(sim, AUDITOR, path='/vms/100/') == {'/vms/100': READ_ONLY}


CONFIG_ANY = '/vms/100, ' + '|'.join(('VM.Config.Disk', 'VM.Config.CDROM', 'VM.Config.CPU', 'VM.Config.Memory',
                                      'VM.Config.Network', 'VM.Config.HWType', 'VM.Config.Options',
                                      'VM.Config.Cloudinit'))


def test_the_read_only_token_gets_the_403_of_the_privilege_each_write_needs(sim):
    # Qemu.pm update_vm / update_vm_async `permissions` (`check => ['perm', '/vms/{vmid}', $vm_config_perm_list,
    # any => 1]`, checked before the parameters: RPCEnvironment.pm exec_api2_perm_check, check_any joins the
    # privileges with `|`), then update_vm_api's check_vm_modify_config_perm and check_storage_access;
    # RPCEnvironment.pm check (wording `Permission check failed (<path>, <privilege>)`)
    cases = [('PUT', Q + '/100/config', {'net1': 'virtio,bridge=vmbr0'}, CONFIG_ANY),
             ('POST', Q + '/100/config', {'cores': 2}, CONFIG_ANY),
             ('PUT', Q + '/100/config', {'scsi1': 'local-lvm:1'}, CONFIG_ANY),
             ('POST', Q + '/100/status/stop', None, '/vms/100, VM.PowerMgmt')]
    before = sim.api('GET', Q + '/100/config')
    for method, path, body, why in cases:
        err = error_of(sim.api, method, path, body, token=AUDITOR)
        assert (err.status, err.message) == (403, 'Permission check failed ({0})'.format(why))
    assert sim.api('GET', Q + '/100/config') == before
    # create_vm: VM.Allocate on the VM (or its pool) comes before the bridge check, and fails without detail
    err = error_of(sim.api, 'POST', Q, {'vmid': 311, 'net0': 'virtio,bridge=vmbr0'}, token=AUDITOR)
    assert (err.status, err.message) == (403, 'Permission check failed')
    assert sim.api('GET', Q + '/100/status/current')['status'] == 'running'
    # with one VM.Config.* privilege the method's check passes and each key's own privilege decides
    sim.add_user('cpu@pve', tokens={'t': 's'}, acl={'/': ['VM.Audit', 'VM.Config.CPU']})
    for body, why in (({'net1': 'virtio,bridge=vmbr0'}, '/vms/100, VM.Config.Network'),
                      ({'scsi1': 'local-lvm:1'}, '/storage/local-lvm, Datastore.AllocateSpace')):
        err = error_of(sim.api, 'PUT', Q + '/100/config', body, token='cpu@pve!t=s')
        assert (err.status, err.message) == (403, 'Permission check failed ({0})'.format(why))
    assert sim.api('GET', Q + '/100/config') == before


def test_propagate_0_holds_on_the_path_only_and_shows_as_0(sim):
    # AccessControl.pm roles: an ancestor's entry counts only with propagate; RPCEnvironment.pm permissions
    # (the value is the propagate flag)
    sim.add_user('np@pve', tokens={'t': 's'}, acl={'/vms': {'privs': ['VM.Audit'], 'propagate': 0}})
    assert perms(sim, 'np@pve!t=s') == {'/vms': {'VM.Audit': 0}}
    assert perms(sim, 'np@pve!t=s', path='/vms/100') == {'/vms/100': {}}
    err = error_of(sim.api, 'GET', Q + '/100/config', token='np@pve!t=s')
    assert (err.status, err.message) == (403, 'Permission check failed (/vms/100, VM.Audit)')


def test_a_deeper_acl_replaces_the_inherited_one_and_noaccess_removes_all(sim):
    # AccessControl.pm roles: the deepest level with entries overwrites what came from above; NoAccess wins
    sim.add_user('deep@pve', tokens={'t': 's'}, acl={'/': ['VM.Audit', 'VM.Config.CPU'], '/vms/100': ['PVEAuditor'],
                                                     '/vms/9000': ['NoAccess']})
    token = 'deep@pve!t=s'
    on_100 = perms(sim, token, path='/vms/100')['/vms/100']
    assert 'VM.Config.CPU' not in on_100 and on_100['VM.GuestAgent.Audit'] == 1  # the role's privileges
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'cores': 2}, token=token)
    assert err.message == 'Permission check failed ({0})'.format(CONFIG_ANY)  # no VM.Config.* left on /vms/100
    assert perms(sim, token, path='/vms/9000') == {'/vms/9000': {}}
    assert error_of(sim.api, 'GET', Q + '/9000/config', token=token).status == 403
    assert '/vms/9000' not in perms(sim, token)


def test_a_token_with_privilege_separation_holds_what_it_and_its_user_both_hold(sim):
    # RPCEnvironment.pm $compile_acl_path (intersection for privsep tokens), API2/User.pm `privsep` (default 1)
    sim.add_user('sep@pve', tokens={'both': {'secret': 's', 'privsep': 1, 'acl': {'/': ['VM.Config.CPU',
                                                                                         'VM.Config.Memory']}},
                                    'bare': {'secret': 's'}},
                 acl={'/': ['VM.Audit', 'VM.Config.CPU']})
    assert perms(sim, 'sep@pve!both=s', path='/vms/100') == {'/vms/100': {'VM.Config.CPU': 1}}
    assert perms(sim, 'sep@pve!bare=s') == {}
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'memory': 4096}, token='sep@pve!both=s')
    assert err.message == 'Permission check failed (/vms/100, VM.Config.Memory)'
    # Without privilege separation (a seed's bare secret) a token holds its user's privileges.
    assert perms(sim, 'ansible@pve!automation=5e3c1f0a-7b2d-4c8e-9f61-0d2a4b6c8e10',
                 path='/vms/100')['/vms/100']['VM.Config.Network'] == 1


def test_another_users_permissions_need_sys_audit_on_access_and_root_holds_all(sim):
    # API2/AccessControl.pm permissions (own user and own tokens free, else Sys.Audit on /access);
    # AccessControl.pm roles (root@pam is Administrator everywhere)
    root = perms(sim, AUDITOR, userid='root@pam', path='/vms/100')['/vms/100']
    assert root['VM.Allocate'] == 1 and root['Sys.Modify'] == 1 and root['Permissions.Modify'] == 1
    # (a token id has two characters at least: AccessControl.pm token_subid_regex in the userid pattern, §32)
    sim.add_user('plain@pve', tokens={'tk': {'secret': 's'}}, acl={'/vms': ['VM.Audit']})
    err = error_of(perms, sim, 'plain@pve!tk=s', userid='auditor@pve')
    assert (err.status, err.message) == (403, 'Permission check failed (/access, Sys.Audit)')
    # A user may read its tokens' permissions, a token not its user's.
    assert perms(sim, 'plain@pve!tk=s', userid='plain@pve!tk') == {}
    assert error_of(perms, sim, 'plain@pve!tk=s', userid='plain@pve').status == 403


def test_a_nic_needs_sdn_use_on_its_bridge_or_its_vlan(sim):
    # qemu-server PVE/QemuServer.pm check_bridge_access (called by Qemu.pm create_vm and update_vm_api),
    # pve-guest-common PVE/GuestHelpers.pm check_vnet_access (/sdn/zones/localnetwork/<bridge>[/<tag>])
    sim.add_user('nic@pve', tokens={'t': 's'},
                 acl={'/': ['VM.Audit', 'VM.Allocate', 'VM.Config.Network'],
                      '/sdn/zones/localnetwork/vmbr0': {'privs': ['SDN.Use'], 'propagate': 0},
                      '/sdn/zones/localnetwork/vmbr1': ['SDN.Use']})
    token = 'nic@pve!t=s'
    sim.api('PUT', Q + '/100/config', {'net1': 'virtio,bridge=vmbr0'}, token=token)
    sim.api('PUT', Q + '/100/config', {'net2': 'virtio,bridge=vmbr1,tag=10'}, token=token)
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'net3': 'virtio,bridge=vmbr0,tag=10'}, token=token)
    assert (err.status, err.message) == (403, 'Permission check failed (/sdn/zones/localnetwork/vmbr0/10, SDN.Use)')
    err = error_of(sim.api, 'POST', Q, {'vmid': 310, 'net0': 'virtio,bridge=vmbr9'}, token=token)
    assert err.message == 'Permission check failed (/sdn/zones/localnetwork/vmbr9, SDN.Use)'
    assert 'net3' not in sim.api('GET', Q + '/100/config')


def test_the_whole_tree_lists_pool_members_and_leaves_out_what_is_inherited(sim):
    # RPCEnvironment.pm get_effective_permissions: without `path`, the top-level paths, every ACL path and every
    # pool member's path; $compile_acl_path: a pool's roles reach its members without propagation (flag 0). A VM
    # with no ACL of its own and in no pool is left out: it holds what /vms passes down (AccessControl.pm roles).
    sim.add_user('ansible@pve', acl={'/': ['Pool.Allocate', 'Pool.Audit']})
    sim.api('POST', '/pools', {'poolid': 'web'})
    sim.api('PUT', '/pools', {'poolid': 'web', 'vms': '100'})
    sim.add_user('pooled@pve', tokens={'t': 's'},
                 acl={'/pool/web': ['VM.Config.CPU'], '/vms': ['VM.Audit'], '/vms/9000': ['NoAccess']})
    tree = perms(sim, 'pooled@pve!t=s')
    assert tree['/vms/100'] == {'VM.Audit': 1, 'VM.Config.CPU': 0}
    assert tree['/vms'] == {'VM.Audit': 1} and tree['/pool/web'] == {'VM.Config.CPU': 1}
    # NoAccess leaves nothing, and a path where nothing is held is left out like an inherited one
    assert '/vms/9000' not in tree and perms(sim, 'pooled@pve!t=s', path='/vms/9000') == {'/vms/9000': {}}
    assert set(tree) == {'/pool/web', '/vms', '/vms/100'}
