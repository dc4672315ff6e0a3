"""Drive values the create and config handlers refuse beyond the schema (docs/pve-semantics.md §63), as
pvesim/drive_rules.py follows them: qemu-server 9.2.6 src/PVE/API2/Qemu.pm `$check_drive_param` (an `import-from`
drive's new-disk syntax with size 0, `efitype` and `pre-enrolled-keys` on `efidisk0`, `version` on `tpmstate0`),
`$check_storage_access` (a source of content `images` or `import`), `create_disks` and `$import_from_volid` (no
cloud-init disk as a source; no new `efidisk0` on an SEV-SNP guest), `prohibit_tpm_version_change`; Drive.pm
`drive_is_cloudinit`; CPUConfig.pm `get_cvm_type`."""

import json
import os

from conftest import Q, config, error_of, run

from test_values import SEED_DIR, _vm, seed, task_error


def test_an_import_needs_the_new_disk_syntax_its_options_and_an_image_or_import_source(sim):
    # $check_drive_param: a 400 on the drive's key, before anything is written, in create and update alike
    cases = [
        ({'scsi1': 'local-lvm:8,import-from=vmdata:9000/base-9000-disk-0.qcow2'},
         "scsi1: 'import-from' requires special syntax - use <storage ID>:0,import-from=<source>"),
        ({'efidisk0': 'local-lvm:0,import-from=vmdata:9000/base-9000-disk-0.qcow2,efitype=4m'},
         "efidisk0: need to specify 'pre-enrolled-keys' when using 'import-from'"),
        ({'tpmstate0': 'local-lvm:0,import-from=vmdata:9000/base-9000-disk-0.qcow2'},
         "tpmstate0: need to specify 'version' when using 'import-from'"),
        ({'scsi1': 'local-lvm:0,import-from=isos:iso/debian-13-netinst.iso'},
         "scsi1: isos:iso/debian-13-netinst.iso has wrong type 'iso' - needs to be 'images' or 'import'"),
        # an OVA's disk is extracted first, onto the source's storage: `local` takes no images
        ({'scsi1': 'local-lvm:0,import-from=local:import/appliance.ova/disk1.vmdk'},
         "scsi1: import working storage 'local' does not support 'images' content type or is not file based."),
    ]
    for params, words in cases:
        key, text = words.split(': ', 1)
        err = error_of(sim.api, 'PUT', Q + '/100/config', params)
        assert err.status == 400 and err.errors == {key: text}, (params, err.errors)
        err = error_of(sim.api, 'POST', Q, dict(params, vmid=120))
        assert err.status == 400 and err.errors == {key: text}, (params, err.errors)
    assert set(config(sim, 100)) & {'scsi1', 'efidisk0', 'tpmstate0'} == set()
    assert all(vm['vmid'] != 120 for vm in sim.api('GET', '/cluster/resources', {'type': 'vm'}))


def test_a_cloud_init_disk_is_no_import_source(sim):
    # create_disks: $import_from_volid dies inside the eval that prefixes "cannot import from '<source>' - "
    source = 'vmdata:9000/vm-9000-cloudinit.qcow2'
    status = run(sim, 'POST', Q + '/100/config', {'scsi1': 'local-lvm:0,import-from=' + source})
    assert "cannot import from '{0}' - cannot import from cloudinit disk".format(source) in task_error(status)
    assert 'scsi1' not in config(sim, 100)


def test_a_tpm_state_keeps_its_version_and_an_snp_guest_takes_no_new_efi_disk(sim, tmp_path):
    seed(sim, tmp_path, [_vm(330, tpmstate0='local-lvm:vm-330-disk-1,size=4M,version=v2.0'),
                         _vm(331, **{'amd-sev': 'type=snp'})])
    status = run(sim, 'POST', Q + '/330/config', {'tpmstate0': 'local-lvm:vm-330-disk-1,version=v1.2'})
    assert 'cannot change TPM state version after creation' in task_error(status)
    assert config(sim, 330)['tpmstate0'].endswith('version=v2.0')
    status = run(sim, 'POST', Q + '/331/config', {'efidisk0': 'local-lvm:1,efitype=4m'})
    assert 'SEV-SNP uses consolidated read-only firmware and does not require an EFI disk' in task_error(status)
    assert 'efidisk0' not in config(sim, 331)


def test_an_existing_volume_takes_no_format_but_its_own(sim, tmp_path):
    # create_disks: `format=` on a drive naming an existing volume must be checked_parse_volname's format
    seed(sim, tmp_path, [_vm(332, unused0='local-lvm:vm-332-disk-1')])
    status = run(sim, 'POST', Q + '/332/config', {'scsi1': 'local-lvm:vm-332-disk-1,format=qcow2'})
    words = "drive 'scsi1' - volume 'local-lvm:vm-332-disk-1' - 'format=qcow2' option different from storage format 'raw'"
    assert words in task_error(status)
    assert 'scsi1' not in config(sim, 332)


def test_a_drive_is_not_detached_when_every_unused_slot_is_taken(sim, tmp_path):
    # pve-guest-common AbstractConfig.pm add_unused_volume: unused0 to unused255, then it dies
    unused = dict(('unused%d' % n, 'local-lvm:vm-333-disk-%d' % (n + 2)) for n in range(256))
    seed(sim, tmp_path, [_vm(333, scsi1='local-lvm:vm-333-disk-1,size=1G', **unused)])
    err = error_of(sim.api, 'PUT', Q + '/333/config', {'delete': 'scsi1'})
    assert 'Too many unused volumes - please delete them first.' in str(err.message) + str(err.errors)
    # vmconfig_apply_pending: the error is the option's; the drive stays, its delete pending
    assert config(sim, 333, current=True)['scsi1'].startswith('local-lvm:vm-333-disk-1')


def test_an_image_is_imported_only_on_the_node_of_its_owner_vm(sim, tmp_path):
    # $import_from_volid: `assert_config_exists_on_node($src_vmid)` fails: "owner VM <n> not on local node",
    # inside create_disks' eval ("cannot import from '<source>' - ")
    seed(sim, tmp_path, [dict(_vm(334, scsi0='isos:334/vm-334-disk-0.qcow2,size=1G'), node='pve2')])
    source = 'isos:334/vm-334-disk-0.qcow2'
    status = run(sim, 'POST', Q + '/100/config', {'scsi1': 'local-lvm:0,import-from=' + source})
    assert "cannot import from '{0}' - owner VM 334 not on local node".format(source) in task_error(status)
    assert 'scsi1' not in config(sim, 100)


def test_an_ova_s_disk_needs_space_on_the_storage_it_is_extracted_onto(sim, tmp_path):
    # $check_storage_access: the extraction storage (the source's own) must take images and have a path, and then
    # the user needs Datastore.AllocateSpace on it, before the source's own privileges
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        storages = json.load(f)['storages']
    storages['work'] = {'type': 'dir', 'path': '/var/lib/work', 'content': 'images,import'}
    seed(sim, tmp_path, [], storages=storages)
    acl = {'/vms': ['VM.Audit', 'VM.Config.Disk'], '/storage': ['Datastore.Audit'],
           '/storage/local-lvm': ['Datastore.AllocateSpace']}
    sim.add_user('ova@pve', tokens={'t': 's'}, acl=acl)
    params = {'scsi1': 'local-lvm:0,import-from=work:import/appliance.ova/disk1.vmdk'}
    err = error_of(sim.api, 'PUT', Q + '/100/config', params, token='ova@pve!t=s')
    assert (err.status, err.message) == (403, 'Permission check failed (/storage/work, Datastore.AllocateSpace)')
    assert 'scsi1' not in config(sim, 100)
