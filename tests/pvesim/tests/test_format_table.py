"""pvesim's named formats are read from one table (pvesim/pve_formats.py) by both of its checks: its request
check (validation.py) and fakepve's own, which is the only one on the endpoints outside schema_data.json
(docs/pve-semantics.md §39)."""

import pytest
from fakepve import formats, schema

import pvesim.server  # noqa: F401 - fills fakepve's tables, as in the running pvesim
from conftest import Q, error_of
from pvesim import pve_formats, validation

# The formats fakepve 0.5.0 lacks, which pvesim puts into its tables.
CODE = ('pve-qm-bootdev', 'pve-qm-bootdisk', 'pve-cpuset', 'pve-phys-bits', 'storage-pair')
KEYS = ('pve-qm-hostpci', 'pve-qm-smbios1', 'pve-qm-cicustom', 'pve-qemu-sev-fmt', 'pve-qemu-tdx-fmt')
VALUES = ('', '0', '1', 'host', 'host\n', '7', '64', '65', 'scsi0', 'scsi31', 'efidisk0', 'net31', 'usb14',
          'hostpci15', '3-1', '0-3,5', 'a', 'a:b', 'local', 'local:other', 'x:y:z', 'kvm64', 'custom-foo',
          'host,flags=+aes', 'host,flags=+judge', 'flags=+aes', 'host,reported-model=kvm64', 'host,phys-bits=99',
          'cputype=0', 'host,level=-1', 'host,host')


def answer(check):
    try:
        check()
    except pve_formats.FormatError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize('name', CODE + ('pve-vm-cpu-conf',))
def test_fakepves_check_of_a_format_it_lacks_is_wired_to_the_one_table(name):
    """The registration, not the reading: both checks call the one table (pve_formats.py), so this
    fails when fakepve's check of a format it lacks is not the table's (a format left unregistered
    or registered from another reading)."""
    path = validation.FORMAT_PARAMETER.get(name, '')
    for value in VALUES:
        ours = answer(lambda: validation.check_format(name, value, path))
        assert schema._check_format(name, value, path) == ours, (name, value)


@pytest.mark.parametrize('name', KEYS)
def test_fakepve_parses_the_tables_key_schemas(name):
    assert formats.REGISTERED[name] is pve_formats.HASH[name][0]
    assert pve_formats.HASH[name][1] is None


def test_a_storage_pair_is_refused_in_pves_words_inside_and_outside_the_request_check(sim):
    # pve-common JSONSchema.pm parse_idmap dies "entry '$entry' contains invalid ID - $@\n" over parse_id's
    # message, and $verify_idpair (verify_storagepair) dies again with "$@\n". POST .../qemu/{vmid}/migrate is
    # in schema_data.json (pvesim's check), POST .../lxc/{vmid}/migrate is not (fakepve's check).
    words = "invalid format - entry 'a:b' contains invalid ID - storage ID 'a' cannot be shorter than 2 characters\n\n\n"
    qemu = error_of(sim.api, 'POST', Q + '/100/migrate', {'target': 'pve2', 'targetstorage': 'a:b'})
    lxc = error_of(sim.api, 'POST', '/nodes/pve1/lxc/200/migrate', {'target': 'pve2', 'target-storage': 'a:b'})
    assert qemu.status == lxc.status == 400
    assert qemu.errors['targetstorage'] == lxc.errors['target-storage'] == words


def test_phys_bits_outside_the_request_check_follow_parse_phys_bits(sim):
    # qemu-server CPUConfig.pm parse_phys_bits: m/^(host|\d{1,2})$/ (whose $ also matches before a final
    # newline), then 8..64. POST /cluster/qemu/custom-cpu-models is checked by fakepve's check only.
    path = '/cluster/qemu/custom-cpu-models'
    body = {'cputype': 'judge', 'reported-model': 'kvm64'}
    bad = error_of(sim.api, 'POST', path, dict(body, **{'phys-bits': '65'}))
    assert bad.status == 400
    assert bad.errors == {'phys-bits': "invalid format - value must be an integer between 8 and 64 or 'host'\n"}
    for taken in ('host', 'host\n', '8'):
        err = error_of(sim.api, 'POST', path, dict(body, **{'phys-bits': taken}))
        assert 'phys-bits' not in err.errors, (taken, err.status, err.message, err.errors)


@pytest.mark.parametrize('cpu,words', [
    # qemu-server CPUConfig.pm validate_cpu_conf: `die "CPU is missing cputype\n" if !$cpu->{cputype}` ('0' is false)
    ('0', 'CPU is missing cputype'),
    ('cputype=0,flags=+aes', 'CPU is missing cputype'),
    # $cpu_fmt's reported-model enum is get_all_cpu_models, host included (initialize_cpu_models), so
    # validate_vm_cpu_conf's own refusal is the one a VM's `cpu` meets
    ('host,reported-model=host', "Property 'reported-model' not allowed in VM-specific CPU config."),
])
def test_cpu_is_refused_as_cpuconfig_refuses_it(sim, cpu, words):
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'cpu': cpu})
    assert (err.status, err.errors) == (400, {'cpu': 'invalid format - ' + words + '\n'})
