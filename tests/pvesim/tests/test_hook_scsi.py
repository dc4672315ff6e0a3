"""A hook script snippet that is not there and SCSI `product`/`vendor` on an iSCSI volume below machine 4.1
(docs/pve-semantics.md §67), as pvesim/hook_scsi.py follows them: pve-guest-common 6.0.2 src/PVE/GuestHelpers.pm
`check_hookscript` (`-f $path`, raised on the key by qemu-server's `update_vm_api`, before the root-only privilege);
qemu-server 9.2.6 src/PVE/API2/Qemu.pm `assert_scsi_feature_compatibility` with src/PVE/QemuServer/Drive.pm
`get_scsi_device_type` and Machine.pm `get_vm_machine`; pve-storage 9.1.7 ISCSIDirectPlugin.pm and ZFSPlugin.pm
`path` (an `iscsi://` URL), ISCSIDirectPlugin.pm `parse_volname`."""

from conftest import Q, config, error_of

from test_values import _vm, seed, with_snippet

WORDS = "information is only supported for 'scsi-hd' and 'scsi-cd' devices (e.g. not pass-through)."


def iscsi_storages():
    storages = with_snippet()
    storages['ziscsi'] = {'type': 'zfs', 'content': 'images', 'portal': '192.0.2.10', 'target': 'iqn.2026-01.sim:t',
                          'pool': 'tank', 'blocksize': '4k', 'iscsiprovider': 'LIO', 'shared': 1}
    storages['direct'] = {'type': 'iscsidirect', 'content': 'images', 'portal': '192.0.2.11',
                          'target': 'iqn.2026-01.sim:d', 'shared': 1}
    return storages


def test_a_hook_script_that_is_not_there_is_refused_before_the_privileges(sim, tmp_path):
    # check_hookscript dies "script '<volid>' does not exist" when `-f $path` fails, for anyone, before
    # $check_vm_modify_config_perm's root-only refusal of `hookscript`
    seed(sim, tmp_path, [], storages=with_snippet())
    before = config(sim, 100)
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'hookscript': 'local:snippets/gone.pl'})
    assert err.status == 400 and err.errors == {'hookscript': "script 'local:snippets/gone.pl' does not exist"}
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'hookscript': 'local:snippets/hook.pl'})
    assert err.message == "only root can set 'hookscript' config"
    assert config(sim, 100) == before


def test_scsi_identity_on_an_iscsi_url_below_machine_4_1_is_refused(sim, tmp_path):
    # assert_scsi_feature_compatibility against the applied machine: `pc-i440fx-4.0` passes an iscsi:// volume
    # through as scsi-generic, which takes no product or vendor; 4.1, an unpinned machine or a new disk do
    seed(sim, tmp_path, [_vm(360, machine='pc-i440fx-4.0', scsi1='ziscsi:vm-360-disk-1,size=1G',
                             scsi2='direct:lun2,size=1G'),
                         _vm(361, machine='pc-q35-4.1', scsi1='ziscsi:vm-361-disk-1,size=1G'),
                         _vm(362, scsi1='ziscsi:vm-362-disk-1,size=1G')], storages=iscsi_storages())
    root = sim.api('POST', '/access/ticket', {'username': 'root@pam', 'password': 'secret'}, token=False)
    as_root = {'token': False, 'ticket': (root['ticket'], root['CSRFPreventionToken'])}
    err = error_of(sim.api, 'PUT', Q + '/360/config', {'scsi1': 'ziscsi:vm-360-disk-1,product=DISK'})
    assert err.status == 400 and err.errors == {'scsi1': 'Passing of product ' + WORDS}
    err = error_of(sim.api, 'PUT', Q + '/360/config', {'scsi2': 'direct:lun2,vendor=ACME'}, **as_root)
    assert err.status == 400 and err.errors == {'scsi2': 'Passing of vendor ' + WORDS}
    assert 'product' not in config(sim, 360)['scsi1'] and 'vendor' not in config(sim, 360)['scsi2']
    sim.api('PUT', Q + '/360/config', {'scsi3': 'ziscsi:1,product=DISK'})
    for vmid in (361, 362):
        sim.api('PUT', Q + '/%d/config' % vmid, {'scsi1': 'ziscsi:vm-%d-disk-1,product=DISK' % vmid})
        assert 'product=DISK' in config(sim, vmid)['scsi1']
