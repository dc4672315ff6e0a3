"""The order a config update walks its keys in, and the one result that depends on it (docs/pve-semantics.md §46):
qemu-server 9.2.6 src/PVE/API2/Qemu.pm `update_vm_api` loops `foreach my $opt (keys %$param)` (Perl's hash order,
random per process) and appends each new CD-ROM drive (`drive_is_cdrom($drive, 1)`) to the boot order it read before
the loop; a `boot` met before that drive is overwritten. `create_vm` has no such append. pvesim draws the order from a
seeded RNG (key_order.py); the `rewrite` fault (admin.py) stores another value than a write asked for."""

from conftest import Q, config, create, ok, run

CD = 'isos:iso/debian-13-netinst.iso,media=cdrom'


def _boot_after_one_write(sim, key_order_seed):
    sim.reset('default', key_order_seed=key_order_seed)
    create(sim, 300, name='cd', memory=512, scsi0='local-lvm:1', net0='virtio,bridge=vmbr0', boot='order=scsi0;net0')
    sim.api('PUT', Q + '/300/config', {'ide2': CD, 'boot': 'order=ide2;scsi0;net0'})
    return config(sim, 300)['boot']


def test_a_cdrom_and_a_boot_order_in_one_write_end_as_the_keys_were_walked(sim):
    # boot met first: the CD-ROM met after it is appended to the order read before the loop; met last: as asked
    seen = {seed: _boot_after_one_write(sim, seed) for seed in range(12)}
    assert set(seen.values()) == {'order=scsi0;net0;ide2', 'order=ide2;scsi0;net0'}, seen
    # the same seed walks the same order again (a failing order replays)
    some = next(iter(seen))
    assert _boot_after_one_write(sim, some) == seen[some]


def test_a_cdrom_alone_joins_the_order_and_boot_after_it_wins(sim):
    create(sim, 301, name='cd2', memory=512, scsi0='local-lvm:1', net0='virtio,bridge=vmbr0', boot='order=scsi0;net0')
    sim.api('PUT', Q + '/301/config', {'ide2': CD})
    assert config(sim, 301)['boot'] == 'order=scsi0;net0;ide2'
    # the order the task asks for, sent after the drive, is the order stored
    sim.api('PUT', Q + '/301/config', {'boot': 'order=ide2;scsi0;net0'})
    assert config(sim, 301)['boot'] == 'order=ide2;scsi0;net0'
    # a cloud-init drive is no CD-ROM here, nor is a drive already in the order; no order (legacy): nothing appended
    sim.api('PUT', Q + '/301/config', {'ide0': 'local-lvm:cloudinit', 'ide2': 'none,media=cdrom'})
    assert config(sim, 301)['boot'] == 'order=ide2;scsi0;net0'
    create(sim, 302, name='cd3', memory=512, scsi0='local-lvm:1', boot='c')
    sim.api('PUT', Q + '/302/config', {'ide2': CD})
    assert config(sim, 302)['boot'] == 'c'


def test_create_keeps_the_boot_order_it_is_given(sim):
    for seed in range(4):
        sim.reset('default', key_order_seed=seed)
        cfg = create(sim, 303, name='cd4', memory=512, scsi0='local-lvm:1', ide2=CD, boot='order=ide2;scsi0')
        assert cfg['boot'] == 'order=ide2;scsi0'


def test_the_key_order_seed_is_set_and_read_through_the_admin_api(sim):
    assert sim.key_order_seed(41) == 41
    assert sim.key_order_seed() == 41
    assert sim.reset('default')['key_order_seed'] == 41
    assert sim.admin('GET', '/_sim/state')['data']['key_order_seed'] == 41


def test_a_rewrite_fault_stores_another_value_once(sim):
    sim.fault(kind='rewrite', vmid=100, key='cores', value='3')
    sim.api('PUT', Q + '/100/config', {'cores': 2})
    assert config(sim, 100)['cores'] == 3
    ok(run(sim, 'POST', Q + '/100/config', {'cores': 4}))
    assert config(sim, 100)['cores'] == 4, 'the fault is spent (count 1)'
