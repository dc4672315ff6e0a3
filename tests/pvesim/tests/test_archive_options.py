"""A create with `archive`: the options qemu-server 9.2.6 Qemu.pm `create_vm` refuses from the request alone
(docs/pve-semantics.md §45.4, §51.4)."""

from conftest import Q, error_of


def test_an_archive_piped_from_standard_input_is_refused_through_the_api(sim):
    # Qemu.pm create_vm: `-` pipes the backup from stdin, which only `qmrestore` (rpcenv type 'cli') can do
    err = error_of(sim.api, 'POST', Q, {'vmid': 150, 'archive': '-'})
    assert (err.status, err.message) == (500, 'pipe requires cli environment')
    # the drives' conflict comes first
    err = error_of(sim.api, 'POST', Q, {'vmid': 150, 'archive': '-', 'scsi0': 'local-lvm:1'})
    assert err.errors == {'scsi0': "option conflicts with option 'archive'"}
    assert 150 not in [int(r['vmid']) for r in sim.api('GET', '/cluster/resources', {'type': 'vm'})]
