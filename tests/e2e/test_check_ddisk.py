"""Check versus real for proxmox_disk's differential reproducers (tests/differential/regressions): a
running VM's drive keeps its media type (QemuServer.pm `vmconfig_update_disk`, docs/pve-semantics.md
§48.3), an ISO kept without `size=` takes its storage's size (Qemu.pm `create_disks`, §48.2), and a
VM's own disk needs no storage privilege (Storage.pm `check_volume_access`, §48.1).

Each row runs the same task with `--check --diff` and for real, from the same pvesim state
(test_check_vs_real.py's `run_batch`).
"""

from test_check_vs_real import Row, _vm, assert_rows_agree, disk, one, run_batch, write_seed

ISO = 'isos:iso/debian-13-netinst.iso'

# Rows' VMs: 191-193.
VMS = [
    _vm(191, 'row-191', status='running', scsi1='local-lvm:vm-191-disk-1,size=1G'),
    _vm(192, 'row-192', status='running', ide2=ISO + ',media=cdrom'),
    _vm(193, 'row-193', status='running'),
]

USERS = {'own@pve': {'acl': {'/': ['VM.Audit', 'VM.Config.Disk', 'VM.Config.CDROM', 'Datastore.AllocateSpace',
                                   'Datastore.Audit', 'Sys.Audit'],
                             '/storage/local-lvm': ['Datastore.AllocateSpace', 'VM.Audit']},
                     'tokens': {'tk': 'd1ff0000-5eed-4c0d-9e1a-000000000002'}}}
OWN = {'PROXMOX_USER': 'own@pve', 'PROXMOX_TOKEN_ID': 'tk', 'PROXMOX_TOKEN_SECRET': 'd1ff0000-5eed-4c0d-9e1a-000000000002'}


def _size_is_listed(check, real):
    want = '754M'
    found = [(mode, (r.get('size') or {}).get('text')) for mode, r in (('check', check), ('real', real))]
    return ['%s size is %r, want %r' % (mode, got, want) for mode, got in found if got != want]


MEDIA_AND_SIZE = [
    one('disk to cd-rom on a running vm', disk(vmid=191, disk='scsi1', iso_image=ISO, media='cdrom'),
        real_failure='hotplug problem - unable to change media type'),
    one('kept iso gets its size', disk(vmid=192, disk='ide2', serial='GEN0001'), real_changed=True,
        expect=_size_is_listed),
]
OWN_DISK = [one('own disk without datastore.audit', disk(vmid=193, disk='scsi0', aio='native'), real_changed=True)]
CENSUS_ROWS = MEDIA_AND_SIZE + OWN_DISK

# case name -> the census rows (docs/refusals.md) it covers
CENSUS = {
    'disk to cd-rom on a running vm': ('R-config-91',),
}


def test_disk_reproducers_are_predicted_by_the_check_run(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'ddisk', VMS, users=USERS)
    rows = CENSUS_ROWS
    problems = {}
    problems.update(run_batch(ansible, sim, seed, MEDIA_AND_SIZE))
    problems.update(run_batch(ansible, sim, seed, OWN_DISK, env=OWN))
    assert_rows_agree(summary, 'check-versus-real (differential, proxmox_disk)', rows, problems)
