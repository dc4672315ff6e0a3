"""Which existing volume a drive may name without storage privileges: a VM's own image needs none
(docs/pve-semantics.md §48.1; pvesim/volume_access.py).

Sources: pve-storage 9.1.7 src/PVE/Storage.pm `check_volume_access` ("we are owner - allow access" before the
`Datastore.Audit` + `VM.Config.Disk` rule for another VM's image), called with the VM's id by qemu-server 9.2.6
src/PVE/API2/Qemu.pm `$check_storage_access` (from `update_vm_api`).
"""

from conftest import Q, config, create, error_of, ok

VM_PRIVS = ['VM.Audit', 'VM.Config.Disk', 'VM.Config.CDROM', 'VM.Config.Options', 'Datastore.AllocateSpace',
            'Datastore.Audit']
TOKEN = 'own@pve!t=s'


def _user(sim):
    # everything on /, but on /storage/local-lvm neither Datastore.Audit nor Datastore.Allocate
    sim.add_user('own@pve', tokens={'t': 's'},
                 acl={'/': VM_PRIVS, '/storage/local-lvm': ['Datastore.AllocateSpace', 'VM.Audit']})


def test_a_vm_s_own_disk_needs_no_storage_audit(sim):
    # update_vm_api sends scsi0 (its own local-lvm:vm-100-disk-0) through check_volume_access with vmid 100
    _user(sim)
    value = 'local-lvm:vm-100-disk-0,aio=native,discard=on,iothread=1,size=32G'
    ok(sim.wait_task(sim.api('POST', Q + '/100/config', {'scsi0': value}, token=TOKEN)))
    assert config(sim, 100)['scsi0'].startswith('local-lvm:vm-100-disk-0,aio=native')


def test_another_vm_s_disk_still_needs_datastore_audit(sim):
    # the same volume sent to VM 300 is VM 100's image: Datastore.Audit on its storage, VM.Config.Disk on VM 100
    _user(sim)
    before = create(sim, 300, memory=512)
    err = error_of(sim.api, 'POST', Q + '/300/config', {'scsi5': 'local-lvm:vm-100-disk-0'}, token=TOKEN)
    assert err.status == 403 and err.message == 'Permission check failed (/storage/local-lvm, Datastore.Audit)'
    assert config(sim, 300) == before
