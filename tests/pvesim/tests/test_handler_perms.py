"""The privileges qemu-server checks inside its handlers and workers, and the auth id: a token of root@pam is not
root@pam (docs/pve-semantics.md §44; pvesim/handler_perms.py).

Sources: qemu-server 9.2.6 src/PVE/API2/Qemu.pm (`create_vm`, `update_vm_api`, `$check_vm_create_serial_perm`,
`check_usb_perm`, `check_hostpci_perm`, `check_rng_perm`, `$check_cpu_model_access`, `resize_vm`, `vm_suspend`),
src/PVE/QemuServer.pm `try_deallocate_drive`, src/PVE/QemuConfig.pm `find_vmstate_storage`; pve-storage
src/PVE/Storage.pm `check_volume_access` (a restore's archive).
"""

import json
import os

from conftest import Q, config, create, error_of, ok, run

SEEDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'seeds')

ROOT_TOKEN = 'root@pam!ci=9a8b7c6d'
ALL_VM = ['VM.Audit', 'VM.Config.Disk', 'VM.Config.HWType', 'VM.Config.CPU', 'VM.Config.Options', 'VM.PowerMgmt',
          'VM.Allocate', 'Datastore.Audit']


def _as_root(sim):
    """root@pam itself: a ticket of its password login."""
    data = sim.api('POST', '/access/ticket', {'username': 'root@pam', 'password': 'secret'}, token=False)
    return dict(token=False, ticket=(data['ticket'], data['CSRFPreventionToken']))


def _root_token(sim):
    # a token of root@pam without privilege separation: it holds every privilege root@pam holds
    sim.add_user('root@pam', tokens={'ci': '9a8b7c6d'})


def test_a_root_token_is_not_root_for_skiplock_or_real_devices(sim):
    # Qemu.pm update_vm_api: `raise_param_exc({ skiplock => "Only root may use this option." }) if $skiplock &&
    # $authuser ne 'root@pam'`; the set loop's "only root can modify '<key>' config for real devices";
    # $check_vm_create_serial_perm ("set") at create
    _root_token(sim)
    before = config(sim, 100)
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'cores': 3, 'skiplock': 1}, token=ROOT_TOKEN)
    assert err.status == 400 and err.errors == {'skiplock': 'Only root may use this option.'}
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'serial0': '/dev/ttyS0'}, token=ROOT_TOKEN)
    assert err.message == "only root can modify 'serial0' config for real devices"
    err = error_of(sim.api, 'POST', Q, {'vmid': 320, 'serial0': '/dev/ttyS0'}, token=ROOT_TOKEN)
    assert err.message == "only root can set 'serial0' config for real devices"
    assert config(sim, 100) == before
    assert 320 not in [int(r['vmid']) for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})]
    # root@pam itself may
    # root@pam itself may; deleting it is root's too, in the delete loop's words
    ok(run(sim, 'POST', Q + '/100/status/stop'))
    sim.api('PUT', Q + '/100/config', {'serial1': '/dev/ttyS1'}, **_as_root(sim))
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'delete': 'serial1'}, token=ROOT_TOKEN)
    assert err.message == "only root can delete 'serial1' config for real devices"
    assert config(sim, 100)['serial1'] == '/dev/ttyS1'


def test_resize_needs_space_on_the_volume_s_storage(sim):
    # Qemu.pm resize_vm: `$rpcenv->check($authuser, "/storage/$storeid", ['Datastore.AllocateSpace'])` in its
    # task, after the lock and CD-ROM checks
    sim.add_user('grow@pve', tokens={'t': 's'}, acl={'/': ALL_VM})
    upid = sim.api('PUT', Q + '/100/resize', {'disk': 'scsi0', 'size': '+1G'}, token='grow@pve!t=s')
    status = sim.wait_task(upid)
    assert status['exitstatus'] == 'Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)'
    assert config(sim, 100)['scsi0'].endswith('size=32G')


def test_removing_an_unused_volume_needs_space_on_its_storage(sim):
    # Qemu.pm update_vm_api's delete loop (unusedN: VM.Config.Disk, then try_deallocate_drive), QemuServer.pm
    # try_deallocate_drive: Datastore.AllocateSpace on the storage of a volume the VM owns
    create(sim, 321, scsi0='local-lvm:1')
    sim.api('PUT', Q + '/321/config', {'delete': 'scsi0'})
    assert config(sim, 321)['unused0'] == 'local-lvm:vm-321-disk-0'
    sim.add_user('tidy@pve', tokens={'t': 's'}, acl={'/': ALL_VM})
    err = error_of(sim.api, 'PUT', Q + '/321/config', {'delete': 'unused0'}, token='tidy@pve!t=s')
    assert err.message == 'Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)'
    assert config(sim, 321)['unused0'] == 'local-lvm:vm-321-disk-0'


def test_a_hardware_rng_needs_its_mapping(sim):
    # Qemu.pm check_rng_perm: `/mapping/hwrng`
    sim.add_user('hw@pve', tokens={'t': 's'}, acl={'/': ALL_VM})
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'rng0': 'source=/dev/hwrng'}, token='hw@pve!t=s')
    assert err.message == 'Permission check failed (/mapping/hwrng, Mapping.Use)'
    # (a custom CPU model cannot be tried: pvesim's cluster defines none, so the schema refuses it first)
    # another source needs VM.Config.HWType only
    sim.api('PUT', Q + '/100/config', {'rng0': 'source=/dev/urandom'}, token='hw@pve!t=s')
    assert sim.api('GET', Q + '/100/config')['rng0'] == 'source=/dev/urandom'


def test_a_rom_file_on_a_mapped_pci_device_is_root_at_pam_s(sim):
    # Qemu.pm check_hostpci_perm: after Mapping.Use and VM.Config.HWType, `raise_param_exc({ $opt => "only
    # root\@pam can set 'romfile' option" })` when the device has `romfile`; root@pam itself returns first
    sim.add_user('pci@pve', tokens={'t': 's'}, acl={'/': ALL_VM + ['Mapping.Use']})
    before = config(sim, 100)
    for method, path, params in (('PUT', Q + '/100/config', {'hostpci0': 'mapping=gpu,romfile=vbios.bin'}),
                                 ('POST', Q, {'vmid': 322, 'hostpci0': 'mapping=gpu,romfile=vbios.bin'})):
        err = error_of(sim.api, method, path, params, token='pci@pve!t=s')
        assert err.status == 400 and err.errors == {'hostpci0': "only root@pam can set 'romfile' option"}
    assert config(sim, 100) == before
    # without the ROM file the mapped device is this user's to set
    sim.api('PUT', Q + '/100/config', {'hostpci0': 'mapping=gpu'}, token='pci@pve!t=s')
    assert config(sim, 100)['hostpci0'] == 'mapping=gpu'


def test_hibernation_needs_space_where_the_state_goes(sim):
    # Qemu.pm vm_suspend (`todisk`: VM.Config.Disk, then Datastore.AllocateSpace on find_vmstate_storage's pick)
    sim.add_user('sleep@pve', tokens={'t': 's'}, acl={'/': ['VM.Audit', 'VM.PowerMgmt', 'VM.Config.Disk']})
    err = error_of(sim.api, 'POST', Q + '/100/status/suspend', {'todisk': 1}, token='sleep@pve!t=s')
    assert err.message == 'Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)'
    sim.add_user('nap@pve', tokens={'t': 's'}, acl={'/': ['VM.Audit', 'VM.PowerMgmt']})
    err = error_of(sim.api, 'POST', Q + '/100/status/suspend', {'todisk': 1}, token='nap@pve!t=s')
    assert err.message == 'Permission check failed (/vms/100, VM.Config.Disk)'
    assert sim.api('GET', Q + '/100/status/current')['status'] == 'running'


def _policy_seed(tmp_path, datacenter):
    with open(os.path.join(SEEDS, 'default.json'), encoding='utf-8') as f:
        seed = json.load(f)
    seed['datacenter'] = dict(seed.get('datacenter', {}), **datacenter)
    path = tmp_path / 'tags.json'
    path.write_text(json.dumps(seed))
    return str(path)


def test_the_tag_policy_as_get_options_shows_it_and_assert_tag_permissions_applies_it(sim, tmp_path):
    # pve-manager PVE/API2/Cluster.pm get_options (`user => 'all'`; datacenter.cfg only with Sys.Audit on /),
    # pve-guest-common GuestHelpers.pm get_allowed_tags, assert_tag_permissions
    sim.reset(_policy_seed(tmp_path, {'user-tag-access': {'user-allow': 'list', 'user-allow-list': ['web', 'db']},
                                      'registered-tags': ['prod']}))
    try:
        sim.add_user('tagger@pve', tokens={'t': 's'}, acl={'/': ['VM.Audit', 'VM.Config.Options', 'Sys.Audit']})
        sim.add_user('blind@pve', tokens={'t': 's'}, acl={'/vms': ['VM.Audit', 'VM.Config.Options']})
        full = sim.api('GET', '/cluster/options', token='tagger@pve!t=s')
        assert full['registered-tags'] == ['prod'] and full['allowed-tags'] == ['db', 'web']
        assert sim.api('GET', '/cluster/options', token='blind@pve!t=s') == {'allowed-tags': ['db', 'web']}
        before = config(sim, 100)
        for tags, tag in (('prod;web;other', 'other'), ('web', 'prod')):
            err = error_of(sim.api, 'PUT', Q + '/100/config', {'tags': tags}, token='tagger@pve!t=s')
            assert (err.status, err.message) == (
                403, "Permission check failed (/, Sys.Modify for modifying tag '{0}')".format(tag))
        assert config(sim, 100) == before
        sim.api('PUT', Q + '/100/config', {'tags': 'prod;web;db'}, token='tagger@pve!t=s')
        assert config(sim, 100)['tags'] == 'db;prod;web'
        # Sys.Modify on / may set any tag
        sim.add_user('admin@pve', tokens={'t': 's'}, acl={'/': ['VM.Audit', 'VM.Config.Options', 'Sys.Modify']})
        sim.api('PUT', Q + '/100/config', {'tags': 'other'}, token='admin@pve!t=s')
        assert config(sim, 100)['tags'] == 'other'
    finally:
        sim.reset()


def test_a_restore_needs_access_to_the_archive(sim):
    # Qemu.pm create_vm with `archive`, after VM.Allocate and the drive and pipe checks: Storage.pm
    # check_volume_access($rpcenv, $authuser, $storecfg, $vmid, $archive, 'backup')
    sim.add_user('restore@pve', tokens={'t': 's'}, acl={'/': ALL_VM + ['Datastore.Audit']})
    archive = 'local:backup/vzdump-qemu-100-2026_12_01-00_00_00.vma.zst'
    err = error_of(sim.api, 'POST', Q, {'vmid': 323, 'archive': archive}, token='restore@pve!t=s')
    assert err.message == 'Permission check failed (/storage/local, Datastore.AllocateSpace)'
    sim.add_user('restore@pve', tokens={'t': 's'}, acl={'/': ALL_VM, '/storage': ['Datastore.AllocateSpace']})
    err = error_of(sim.api, 'POST', Q, {'vmid': 323, 'archive': archive}, token='restore@pve!t=s')
    assert err.message == 'Permission check failed (/vms/100, VM.Backup)'
    err = error_of(sim.api, 'POST', Q, {'vmid': 323, 'archive': 'local-lvm:vm-100-disk-0'}, token='restore@pve!t=s')
    assert err.message == "unable to use volume local-lvm:vm-100-disk-0 - content type needs to be 'backup'"
    err = error_of(sim.api, 'POST', Q, {'vmid': 323, 'archive': '/root/dump.vma'}, token='restore@pve!t=s')
    assert err.message == 'Only root can pass arbitrary filesystem paths.'
    assert 323 not in [int(r['vmid']) for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})]


def test_bios_is_a_general_option_not_a_hardware_type(sim):
    # Qemu.pm $check_vm_modify_config_perm: `bios` is in $generaloptions (VM.Config.Options), `scsihw` in
    # $hwtypeoptions (found by the differential run, seed 13: pvesim asked VM.Config.HWType for `bios`)
    sim.add_user('opts@pve', tokens={'t': 's'}, acl={'/vms': ['VM.Allocate', 'VM.Config.Options', 'VM.Audit']})
    token = 'opts@pve!t=s'
    upid = sim.api('POST', Q, {'vmid': 730, 'name': 'b', 'bios': 'seabios'}, token=token)
    assert sim.wait_task(upid)['exitstatus'] == 'OK'
    err = error_of(sim.api, 'POST', Q, {'vmid': 731, 'scsihw': 'virtio-scsi-single'}, token=token)
    assert err.status == 403 and 'VM.Config.HWType' in str(err), err
