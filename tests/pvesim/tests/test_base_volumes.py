"""A template's base volume a linked clone uses is not freed on any path (docs/pve-semantics.md §32.2):
pve-storage Storage.pm vdisk_free refuses (`base volume '<volname>' is still in use by linked clones`,
volume_is_base_and_used); qemu-server QemuServer.pm vmconfig_apply_pending turns a forced delete's error into
`unable to apply pending change <key> : ...` and keeps the delete pending, try_deallocate_drive lets an
`unusedN` delete fail as a whole, and Qemu.pm move_vm_disk only warns when `delete` cannot free the source."""

import json

from conftest import Q, config, error_of, ok, pending, run, volumes
from test_strict_drives import USERS, _vm

BASE = 'vmdata:9000/base-9000-disk-0.qcow2'
IN_USE = "base volume '9000/base-9000-disk-0.qcow2' is still in use by linked clones\n"


def linked_clone(sim, newid=300):
    ok(run(sim, 'POST', Q + '/9000/clone', {'newid': newid, 'name': 'c{0}'.format(newid)}))
    assert config(sim, newid)['scsi0'].startswith(BASE + '/')


def test_unlink_force_of_a_used_base_disk_is_refused_and_frees_nothing(sim):
    # proxmox_disk state=absent sends unlink force=1 (the case)
    linked_clone(sim)
    err = error_of(sim.api, 'PUT', Q + '/9000/unlink', {'idlist': 'scsi0', 'force': 1})
    assert (err.status, err.errors) == (400, {'scsi0': 'unable to apply pending change scsi0 : ' + IN_USE})
    assert BASE in volumes(sim, 'vmdata')
    assert config(sim, 9000, current=True)['scsi0'].startswith(BASE)
    assert pending(sim, 9000)['scsi0'].get('delete') == 2  # the forced delete stays pending


def test_deleting_the_unused_base_volume_is_refused_whole(sim):
    linked_clone(sim)
    sim.api('PUT', Q + '/9000/config', {'delete': 'scsi0'})  # detached: unused0
    assert config(sim, 9000)['unused0'] == BASE
    err = error_of(sim.api, 'PUT', Q + '/9000/config', {'delete': 'unused0'})
    assert (err.status, err.message) == (500, IN_USE.rstrip('\n'))
    assert config(sim, 9000)['unused0'] == BASE and BASE in volumes(sim, 'vmdata')


def test_a_base_volume_no_clone_uses_is_freed(sim):
    linked_clone(sim)
    ok(run(sim, 'DELETE', Q + '/300'))
    sim.api('PUT', Q + '/9000/unlink', {'idlist': 'scsi0', 'force': 1})
    assert BASE not in volumes(sim, 'vmdata') and 'scsi0' not in config(sim, 9000)


def test_move_with_delete_keeps_a_used_base_volume_with_a_warning(sim):
    linked_clone(sim)
    status = ok(run(sim, 'POST', Q + '/9000/move_disk', {'disk': 'scsi0', 'storage': 'local-lvm', 'delete': 1}))
    log = [line['t'] for line in sim.api('GET', '/nodes/pve1/tasks/{0}/log'.format(status['upid']))]
    # Perl's warn, printed bare by pvedaemon's __WARN__ handler; the task ends OK (docs/pve-semantics.md §39.3)
    assert IN_USE.rstrip('\n') in log and log[-1] == 'TASK OK'
    assert BASE in volumes(sim, 'vmdata')  # the clone keeps its backing volume


def _template_and_clone(gone):
    """A template on a directory storage and its linked clone 205, whose file may be `gone` from the storage."""
    clone = '9000/base-9000-disk-0.qcow2/205/vm-205-disk-0.qcow2'
    template = dict(_vm(9000, scsi0=BASE + ',size=1G'), template=True)
    return {'nodes': ['pve1'], 'bridges': ['vmbr0'], 'users': USERS,
            'storages': {'vmdata': {'type': 'dir', 'path': '/mnt/vmdata', 'content': 'images', 'format': 'qcow2',
                                    'gone': [clone] if gone else []}},
            'vms': [template, _vm(205, scsi0='vmdata:{0},size=1G'.format(clone))]}


def test_a_template_is_destroyed_when_its_clone_file_is_gone_and_not_while_it_is_listed(sim, tmp_path):
    # Storage.pm volume_is_base_and_used asks the plugin's list_images (Plugin.pm globs the image directory),
    # not the guests' configs: a clone's file removed behind PVE's back holds the base no more
    clone = 'vmdata:9000/base-9000-disk-0.qcow2/205/vm-205-disk-0.qcow2'
    path = tmp_path / 'linked.json'
    path.write_text(json.dumps(_template_and_clone(gone=False)))
    sim.reset(str(path))
    listed = volumes(sim, 'vmdata')
    assert listed[clone]['vmid'] == 205  # the content listing names the base in the clone's volid
    assert run(sim, 'DELETE', Q + '/9000')['exitstatus'] == "base volume '{0}' is still in use by linked cloned".format(BASE)
    path.write_text(json.dumps(_template_and_clone(gone=True)))
    sim.reset(str(path))
    assert clone not in volumes(sim, 'vmdata')
    ok(run(sim, 'DELETE', Q + '/9000'))
    assert BASE not in volumes(sim, 'vmdata')
