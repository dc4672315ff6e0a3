"""The named formats qemu-server checks in code are refused as PVE refuses them, with its words, and nothing is
written (issue 24; docs/pve-semantics.md §34; pvesim/pve_formats.py)."""

import pytest

from conftest import Q, config, error_of, run

FLAGS = ('VM-specific CPU flags must be a subset of: aes, amd-no-ssb, amd-ssbd, hv-evmcs, hv-tlbflush, ibpb, '
         'md-clear, nested-virt, pcid, pdpe1gb, spec-ctrl, ssbd, virt-ssbd')


@pytest.mark.parametrize('body,key,message', [
    # CPUConfig.pm validate_vm_cpu_conf and $cpu_fmt
    ({'cpu': 'host,flags=+judge'}, 'cpu', 'invalid format - ' + FLAGS),
    ({'cpu': 'Skylake'}, 'cpu', "invalid format - Built-in cputype 'Skylake' is not defined (missing 'custom-' prefix?)"),
    ({'cpu': 'flags=+aes'}, 'cpu', 'invalid format - CPU is missing cputype'),
    ({'cpu': 'host,reported-model=kvm64'}, 'cpu',
     "invalid format - Property 'reported-model' not allowed in VM-specific CPU config."),
    ({'cpu': 'host,phys-bits=99'}, 'cpu',
     "cpu.phys-bits: invalid format - value must be an integer between 8 and 64 or 'host'"),
    # PCI.pm $PCIRE
    ({'hostpci0': 'zz:zz.z'}, 'hostpci0', 'hostpci0.host: value does not match the regex pattern'),
    # QemuServer.pm verify_bootdev, Drive.pm verify_bootdisk
    ({'boot': 'order=judge0'}, 'boot', "boot.order: invalid format - invalid boot device 'judge0'"),
    ({'boot': 'order=efidisk0'}, 'boot', "boot.order: invalid format - invalid boot device 'efidisk0'"),
    ({'bootdisk': 'net0'}, 'bootdisk', "invalid format - invalid boot disk 'net0'"),
    # $smbios1_fmt, $cicustom_fmt, pve_verify_cpuset, $sev_fmt
    ({'smbios1': 'uuid=judge'}, 'smbios1', 'smbios1.uuid: value does not match the regex pattern'),
    ({'cicustom': 'user=user.yaml'}, 'cicustom', "cicustom.user: invalid format - unable to parse volume ID"),
    ({'affinity': '3-1'}, 'affinity', 'invalid format - unable to parse cpuset option'),
    ({'amd-sev': 'no-debug=1'}, 'amd-sev', 'amd-sev.type: property is missing and it is not optional'),
])
def test_named_formats_of_qemu_server_are_400_under_the_key(sim, body, key, message):
    before = config(sim, 100)
    err = error_of(sim.api, 'PUT', Q + '/100/config', body)
    assert err.status == 400 and err.message == 'Parameter verification failed.'
    assert message in err.errors[key], err.errors
    assert config(sim, 100) == before


@pytest.mark.parametrize('body', [
    {'cpu': 'host,flags=+aes;-pcid;+nested-virt'}, {'cpu': 'x86-64-v2-AES,hidden=1'},
    {'hostpci0': '0000:01:00.0;02:00,pcie=1'}, {'boot': 'order=scsi0;net0'}, {'bootdisk': 'scsi0'},
    {'smbios1': 'uuid=5b0f2e4c-6a1d-4c3e-9f00-0123456789ab,manufacturer=QUNNRQ==,base64=1'},
    {'cicustom': 'user=local:snippets/user.yaml'}, {'affinity': '0-1,3'}, {'amd-sev': 'type=std'},
])
def test_valid_values_pass(sim, body):
    # as root@pam itself: a host PCI device is root's only (Qemu.pm check_hostpci_perm, docs/pve-semantics.md §44)
    login = sim.api('POST', '/access/ticket', {'username': 'root@pam', 'password': 'secret'}, token=False)
    sim.api('PUT', Q + '/100/config', body, token=False, ticket=(login['ticket'], login['CSRFPreventionToken']))
    key, value = next(iter(body.items()))
    assert config(sim, 100).get(key) == value


def test_a_boot_order_naming_a_device_the_vm_will_not_have_dies(sim):
    # Qemu.pm update_vm_api: "invalid bootorder: device '<dev>' does not exist'" (a die: 500 on PUT, the task on POST),
    # for a device neither in the config, pending nor the request, or deleted by the same request
    before = config(sim, 100)
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'boot': 'order=scsi0;scsi5'})
    assert (err.status, err.message) == (500, "invalid bootorder: device 'scsi5' does not exist'")
    status = run(sim, 'POST', Q + '/100/config', {'boot': 'order=scsi5'})
    assert status['exitstatus'] == "invalid bootorder: device 'scsi5' does not exist'"
    assert config(sim, 100) == before
    # a device the same request deletes: the delete is written before the die (test_update_loop.py)
    err = error_of(sim.api, 'PUT', Q + '/100/config', {'boot': 'order=scsi0;net0', 'delete': 'net0'})
    assert (err.status, err.message) == (500, "invalid bootorder: device 'net0' does not exist'")
    sim.api('PUT', Q + '/100/config', {'boot': 'order=scsi5;scsi0', 'scsi5': 'local-lvm:1'})
    assert config(sim, 100)['boot'] == 'order=scsi5;scsi0'
