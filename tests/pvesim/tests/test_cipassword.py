"""How PVE stores a cloud-init password and where it shows it (docs/pve-semantics.md §29.5).

qemu-server API2/Qemu.pm `update_vm_api` hashes `cipassword` with pve-common Tools.pm `encrypt_pw`
(SHA-256-crypt, `$5$` and an 8-character salt) unless it already matches
`^\\$(?:[156]|2[ay])(\\$.+){2}` or the guest is Windows (QemuServer/Helpers.pm `windows_version`);
`create_vm` stores it as given. `vm_config` / `vm_pending` answer `**********`; Cloudinit.pm
`cloudinit_userdata` (GET .../cloudinit/dump?type=user) shows the stored value, masked without
VM.Config.Cloudinit (`cloudinit_generated_config_dump`).
"""

from conftest import Q

from pvesim import options as o

AUDITOR = 'auditor@pve!readonly=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'


def dump(sim, vmid, **kw):
    return sim.api('GET', Q + '/%d/cloudinit/dump' % vmid, {'type': 'user'}, **kw)


def password_line(text):
    return [line for line in text.splitlines() if line.startswith('password: ')]


def test_sha256_crypt_gives_the_specifications_vectors():
    # Ulrich Drepper, "Unix crypt using SHA-256 and SHA-512", the test vectors of SHA-256
    assert o.sha256_crypt('Hello world!', 'saltstring') == '$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5'
    assert o.sha256_crypt('Hello world!', 'saltstringsaltstring', 10000) == (
        '$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA')
    assert o.sha256_crypt('This is just a test', 'toolongsaltstring') == (
        '$5$toolongsaltstrin$Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5')


def test_an_update_stores_a_sha256_crypt_hash_that_config_reads_mask_and_the_dump_shows(sim):
    sim.api('PUT', Q + '/100/config', {'cipassword': 'hunter2'})
    assert sim.api('GET', Q + '/100/config')['cipassword'] == '**********'
    pending = [i for i in sim.api('GET', Q + '/100/pending') if i['key'] == 'cipassword']
    assert pending == [{'key': 'cipassword', 'value': '**********'}]
    [line] = password_line(dump(sim, 100))
    stored = line[len('password: '):]
    assert stored.startswith('$5$') and len(stored.split('$')[2]) == 8
    assert o.sha256_crypt('hunter2', stored.split('$')[2]) == stored
    # a second update hashes with a new salt
    sim.api('PUT', Q + '/100/config', {'cipassword': 'hunter2'})
    assert password_line(dump(sim, 100)) != [line]


def test_a_hash_a_windows_guest_and_a_create_store_the_value_as_given(sim):
    given = o.sha256_crypt('pw', 'abcdefgh')
    sim.api('PUT', Q + '/100/config', {'cipassword': given})
    assert password_line(dump(sim, 100)) == ['password: ' + given]
    # the applied ostype decides ($conf->{ostype}): a running VM's new ostype is still pending
    upid = sim.api('POST', '/nodes/pve1/qemu', {'vmid': 130, 'name': 'ci', 'cipassword': 'as-given',
                                               'ostype': 'win11'})
    assert sim.wait_task(upid)['exitstatus'] == 'OK'
    assert password_line(dump(sim, 130)) == ['password: as-given']
    sim.api('PUT', Q + '/130/config', {'cipassword': 'plain-for-cloudbase'})
    assert password_line(dump(sim, 130)) == ['password: plain-for-cloudbase']


def test_the_dump_masks_the_password_without_vm_config_cloudinit(sim):
    sim.api('PUT', Q + '/100/config', {'cipassword': 'hunter2'})
    assert password_line(dump(sim, 100, token=AUDITOR)) == ['password: **********']
