"""What a storage's plugin refuses by a volume's name (docs/pve-semantics.md §57), on
`tests/seeds/every_storage_type.json`: a name its `parse_volname` cannot parse, before PVE looks for the
volume (pve-storage 9.1.7 Storage.pm `check_volume_access`, LVMPlugin.pm / LvmThinPlugin.pm `parse_volname`
after Plugin.pm `parse_lvm_name`), and a resize of a format the plugin cannot resize (Plugin.pm
`volume_resize`: only `.raw` and `.qcow2` files)."""

import os

import pytest

from conftest import Q, config, create, error_of, ok, run

EVERY = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'seeds', 'every_storage_type.json')
pytestmark = pytest.mark.pvesim_seed(EVERY)


@pytest.mark.parametrize('volume, message', [
    # LvmThinPlugin.pm parse_volname: vm- or base- names only; thick LVM (LVMPlugin.pm): vm- only
    ('thin:foo', "unable to parse lvm volume name 'foo'"),
    ('lvm-thick:base-300-disk-0', "unable to parse lvm volume name 'base-300-disk-0'"),
    # Plugin.pm parse_lvm_name, called first by both
    ('thin:vm-300-disk+0!', "lvm name 'vm-300-disk+0!' contains illegal characters"),
    # Plugin.pm parse_volname: a file storage's image is <vmid>/<file>
    ('dirs:vm-300-disk-0.raw', "unable to parse directory volume name 'vm-300-disk-0.raw'"),
    ('ceph:disk0', "unable to parse rbd volume name 'disk0'"),
])
def test_a_name_the_plugin_cannot_parse_is_refused_before_the_volume_is_looked_for(sim, volume, message):
    before = create(sim, 300, memory=512)
    err = error_of(sim.api, 'POST', Q + '/300/config', {'scsi5': volume})
    assert message in err.message
    assert config(sim, 300) == before


def test_a_file_storage_resizes_raw_and_qcow2_files_only(sim):
    create(sim, 301, memory=512, scsi0='dirs:1,format=vmdk', scsi1='dirs:1,format=qcow2')
    status = run(sim, 'PUT', Q + '/301/resize', {'disk': 'scsi0', 'size': '+1G'})
    assert status['exitstatus'] == "can't resize this image format"
    assert 'size=1G' in config(sim, 301)['scsi0']
    ok(run(sim, 'PUT', Q + '/301/resize', {'disk': 'scsi1', 'size': '+1G'}))
    assert 'size=2G' in config(sim, 301)['scsi1']


def test_a_sized_subvolume_is_refused_where_storage_cfg_makes_subvol_the_default(sim):
    # Qemu.pm create_disks: `format` else Storage.pm storage_default_format (Plugin.pm get_formats: storage.cfg's
    # `format`); Plugin.pm alloc_image: a subvol only without a size (docs/pve-semantics.md §57.3)
    sim.api('POST', '/storage', {'storage': 'subdir', 'type': 'dir', 'path': '/mnt/subdir', 'content': 'images',
                                 'format': 'subvol'})
    status = run(sim, 'POST', Q, {'vmid': 302, 'memory': 512, 'scsi0': 'subdir:1'})
    assert status['exitstatus'] == 'unable to create VM 302 - storage does not support subvol quotas'
    create(sim, 303, memory=512, scsi0='subdir:1,format=raw')
    assert config(sim, 303)['scsi0'].startswith('subdir:303/vm-303-disk-0.raw')
