"""Issue 2 "Done when": create a VM, add a disk and a NIC by config update, resize, detach, move and
delete the disk, and see exactly the config PVE would show after each step."""

import re

from conftest import MAC, Q, config, ok, run, strip_meta, volumes


def test_walk_create_add_disk_and_nic_resize_detach_move_and_delete(sim):
    # Qemu.pm create_vm, update_vm_api, resize_vm, unlink, move_vm_disk (9.2.6);
    # QemuServer.pm vmconfig_apply_pending; docs/pve-semantics.md §5, §8-§13
    vmid = int(sim.api('GET', '/cluster/nextid'))
    assert vmid == 101
    ok(run(sim, 'POST', Q, {'vmid': vmid, 'name': 'walk', 'memory': 2048, 'cores': 2,
                            'scsihw': 'virtio-scsi-single', 'scsi0': 'local-lvm:8,iothread=1',
                            'net0': 'virtio,bridge=vmbr0'}))
    cfg = config(sim, vmid)
    mac0 = cfg['net0'].split(',')[0].split('=')[1]
    assert MAC.match(mac0)
    assert re.fullmatch(r'uuid=[0-9a-f-]{36}', cfg['smbios1'])
    assert strip_meta(cfg) == {'name': 'walk', 'memory': '2048', 'cores': 2, 'scsihw': 'virtio-scsi-single',
                               'scsi0': 'local-lvm:vm-101-disk-0,iothread=1,size=8G',
                               'net0': 'virtio={0},bridge=vmbr0'.format(mac0), 'boot': 'order=scsi0;net0'}
    base = dict(strip_meta(cfg))

    # add a disk (POST, qmconfig task) and a NIC (PUT)
    ok(sim.wait_task(sim.api('POST', Q + '/101/config', {'scsi1': 'vmdata:4,discard=on'})))
    sim.api('PUT', Q + '/101/config', {'net1': 'e1000,bridge=vmbr1,tag=20'})
    cfg = strip_meta(config(sim, vmid))
    mac1 = cfg['net1'].split(',')[0].split('=')[1]
    assert MAC.match(mac1) and mac1 != mac0
    assert cfg == dict(base, scsi1='vmdata:101/vm-101-disk-0.qcow2,discard=on,size=4G',
                       net1='e1000={0},bridge=vmbr1,tag=20'.format(mac1))
    step = dict(cfg)

    # resize +2G
    ok(run(sim, 'PUT', Q + '/101/resize', {'disk': 'scsi1', 'size': '+2G'}))
    cfg = strip_meta(config(sim, vmid))
    assert cfg == dict(step, scsi1='vmdata:101/vm-101-disk-0.qcow2,discard=on,size=6G')

    # detach: the volume becomes unused0
    sim.api('PUT', Q + '/101/unlink', {'idlist': 'scsi1'})
    cfg = strip_meta(config(sim, vmid))
    detached = dict(step)
    del detached['scsi1']
    assert cfg == dict(detached, unused0='vmdata:101/vm-101-disk-0.qcow2')

    # move the boot disk to vmdata; the old volume stays as unused1
    ok(run(sim, 'POST', Q + '/101/move_disk', {'disk': 'scsi0', 'storage': 'vmdata', 'format': 'raw'}))
    cfg = strip_meta(config(sim, vmid))
    assert cfg == dict(detached, unused0='vmdata:101/vm-101-disk-0.qcow2',
                       scsi0='vmdata:101/vm-101-disk-1.raw,iothread=1,size=8G',
                       unused1='local-lvm:vm-101-disk-0')

    # delete the detached disks for good
    sim.api('PUT', Q + '/101/config', {'delete': 'unused0,unused1'})
    cfg = strip_meta(config(sim, vmid))
    assert cfg == dict(detached, scsi0='vmdata:101/vm-101-disk-1.raw,iothread=1,size=8G')
    assert [v for v in volumes(sim, 'vmdata') if '/vm-101-' in v] == ['vmdata:101/vm-101-disk-1.raw']
    assert [v for v in volumes(sim, 'local-lvm') if 'vm-101-' in v] == []
    assert [item for item in sim.api('GET', Q + '/101/pending') if 'pending' in item or 'delete' in item] == []
