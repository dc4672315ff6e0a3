"""The bad-input table (issue 9): for each module, bad inputs through ansible-playbook, each with
the exact message the user gets, and nothing written to Proxmox.

One ansible-playbook run per module (every row a task with `ignore_errors`), plus one run without
the PROXMOX_* environment for the missing-auth rows of every module. After each run: every task
failed, none changed, each message is exactly the expected one, and pvesim's request log holds
no write (nothing but GETs, and the ticket request of password auth). Counts are printed.
"""

import json
import os

import pytest

from harness import CANARY_SECRETS

NOT_A_PEM = os.path.abspath(__file__)
HUGE = 10 ** 22            # beyond int64: Python's int, JSON's number, serde's f64
LONG = 'x' * 5000


class Starts(str):
    """A message that must start with this text (the rest is a long list of option names)."""


def unsupported(module, name):
    return Starts('Unsupported parameters for (ferro.proxmox.%s) module: %s. Supported parameters include: ' % (module, name))


def type_error(option, typ, value_repr, target):
    return "argument '%s' is of type %s and we were unable to convert to %s: %s" % (option, typ, target, value_repr)


def bad_bool(option, value):
    # ansible-core lists the valid booleans from a set: their order changes from run to run.
    return Starts("argument '%s' is of type str and we were unable to convert to bool: The value '%s' is not a valid "
                  "boolean. Valid booleans include: " % (option, value))


SCHEMA = "Unable to update vm existing-web with vmid 100: %s (Proxmox VE's API schema for PUT /nodes/{node}/qemu/{vmid}/config; nothing was sent)"
DISK_KEY = "disk must be a drive key such as scsi1, virtio0, sata2, ide2, unused0, efidisk0 or tpmstate0, got '%s'"
BAD_SIZE = "size: invalid size '%s': expected a number of GiB or a number with a K, M, G or T suffix"

# (options, exact message). Connection options come from the environment (harness.py) unless a
# row sets them.
AUTH_ROWS = [
    ({'api_port': 'x'}, type_error('api_port', 'str', '"\'x\'" cannot be converted to an int', 'int')),
    ({'api_port': 70000}, 'api_port must be between 1 and 65535, got 70000'),
    ({'api_host': ' '}, 'api_host must not be empty'),
    ({'api_host': 'pve1:http'}, "api_host has an invalid port: 'pve1:http' (expected host or host:port with a port from 1 to 65535)"),
    ({'api_host': 'http://pve1:8006/'}, 'api_host: the Proxmox VE API is served over https only, got a http URL; give the host, e.g. api_host: pve1 (port 8006 is the default)'),
    ({'api_user': 'root'}, "api_user must be of the form user@realm (for example root@pam), got 'root'"),
    ({'api_timeout': 0}, 'api_timeout must be a positive number of seconds, got 0'),
    ({'validate_certs': 'maybe'}, bad_bool('validate_certs', 'maybe')),
    ({'ca_path': '/nonexistent/ca.pem'}, 'ca_path: unable to read the CA file /nonexistent/ca.pem: No such file or directory (os error 2)'),
    ({'ca_path': '/'}, 'ca_path: unable to read the CA file /: Is a directory (os error 21)'),
    ({'ca_path': NOT_A_PEM}, 'ca_path: no certificate found in %s' % NOT_A_PEM),
]

VM_INFO = [
    ({'vmid': 'abc'}, type_error('vmid', 'str', '"\'abc\'" cannot be converted to an int', 'int')),
    ({'vmid': [100]}, type_error('vmid', 'list', '"[100]" cannot be converted to an int', 'int')),
    ({'vmid': -1}, 'vmid must be between 100 and 999999999, got -1'),
    ({'vmid': HUGE}, type_error('vmid', 'float', '"1e+22" cannot be converted to an int', 'int')),
    ({'config': 'bogus'}, 'value of config must be one of: none, current, pending, got: bogus'),
    ({'config': ''}, 'value of config must be one of: none, current, pending, got: '),
    ({'type': 'vm'}, 'value of type must be one of: all, qemu, lxc, got: vm'),
    ({'network': 'maybe'}, bad_bool('network', 'maybe')),
    # Issue 15: a node name is checked against PVE's pve-node format before any call (which has no
    # length limit), and a long value is quoted cut.
    ({'node': 'nöde-ünïcode'}, "node: value does not look like a valid node name, got 'nöde-ünïcode'"),
    ({'node': ''}, "node: value does not look like a valid node name, got ''"),
    ({'node': LONG}, "Node %s... doesn't exist in PVE cluster" % LONG[:120]),
    ({'node': 'pve9'}, "Node pve9 doesn't exist in PVE cluster"),
    ({'bogus_option': 1}, unsupported('proxmox_vm_info', 'bogus_option')),
    ({'vmid': 100, 'ünïcode': 1}, unsupported('proxmox_vm_info', 'ünïcode')),
] + AUTH_ROWS

NIC = [({**{'vmid': 100, 'interface': 'net0'}, **opts}, msg) for opts, msg in [
    ({'interface': 'net32'}, "interface must be one of net0 to net31, got 'net32'"),
    ({'interface': ''}, "interface must be one of net0 to net31, got ''"),
    ({'interface': 'eth0'}, "interface must be one of net0 to net31, got 'eth0'"),
    ({'interface': 'nét0'}, "interface must be one of net0 to net31, got 'nét0'"),
    ({'interface': 'net01'}, "interface must be one of net0 to net31, got 'net01'"),
    ({'tag': 0}, 'tag must be between 1 and 4094, got 0'),
    ({'tag': 4095}, 'tag must be between 1 and 4094, got 4095'),
    ({'tag': 'ten'}, type_error('tag', 'str', '"\'ten\'" cannot be converted to an int', 'int')),
    ({'tag': HUGE}, type_error('tag', 'float', '"1e+22" cannot be converted to an int', 'int')),
    ({'vmid': 99}, 'vmid must be between 100 and 999999999, got 99'),
    ({'vmid': 1000000000}, 'vmid must be between 100 and 999999999, got 1000000000'),
    ({'vmid': 4242}, 'VM with vmid 4242 does not exist in cluster'),
    ({'mac': 'zz:zz:zz:zz:zz:zz'}, "mac must be a unicast MAC address like BC:24:11:00:00:01, got 'zz:zz:zz:zz:zz:zz'"),
    ({'mac': '01:00:00:00:00:00'}, "mac must be a unicast MAC address like BC:24:11:00:00:01, got '01:00:00:00:00:00'"),
    ({'mac': ''}, "mac must be a unicast MAC address like BC:24:11:00:00:01, got ''"),
    ({'model': 'e1000e'}, 'value of model must be one of: e1000, e1000-82540em, e1000-82544gc, e1000-82545em, i82551, i82557b, i82559er, ne2k_isa, ne2k_pci, pcnet, rtl8139, virtio, vmxnet3, got: e1000e'),
    ({'mtu': 100}, 'mtu must be 1 (use the bridge\'s MTU) or between 576 and 65520, got 100'),
    ({'queues': 65}, 'queues must be between 0 and 64, got 65'),
    ({'rate': -1}, 'rate must be a number of MB/s, 0 or more, got -1'),
    ({'trunks': [0, 5000]}, 'trunks must be VLAN ids between 1 and 4094, got 0'),
    ({'bridge': ''}, 'bridge must not be empty (leave it out for user-mode networking)'),
    ({'firewall': 'maybe'}, bad_bool('firewall', 'maybe')),
    ({'state': 'gone'}, 'value of state must be one of: present, absent, got: gone'),
    ({'bogus_option': 1}, unsupported('proxmox_nic', 'bogus_option')),
    ({'name': 'no-such-vm', 'vmid': None}, 'No VM with name no-such-vm found'),
    ({'bridge': 'vmbr0', 'ca_path': '/nonexistent/ca.pem'}, 'ca_path: unable to read the CA file /nonexistent/ca.pem: No such file or directory (os error 2)'),
    ({'api_user': 'root'}, "api_user must be of the form user@realm (for example root@pam), got 'root'"),
]] + [({'interface': 'net0'}, 'one of the following is required: name, vmid')]

DISK = [({**{'vmid': 100, 'disk': 'scsi1'}, **opts}, msg) for opts, msg in [
    ({'disk': 'scsi31'}, 'Disk scsi31 number not in range 0..30'),
    ({'disk': ''}, "disk must be a drive key such as scsi1, virtio0, sata2, ide2, unused0, efidisk0 or tpmstate0, got ''"),
    ({'disk': 'foo0'}, 'Unsupported disk bus: foo'),
    ({'disk': 'SCSI0'}, DISK_KEY % 'SCSI0'),
    ({'disk': 'scsi٣'}, DISK_KEY % 'scsi٣'),
    ({'size': '10X'}, BAD_SIZE % '10X'),
    ({'size': '0', 'storage': 'local-lvm'}, 'size must be larger than 0'),
    ({'size': '-1G'}, BAD_SIZE % '-1G'),
    ({'size': '+5G'}, "size '+5G': a relative size (+N) only makes sense with state: resized"),
    ({'size': '99999999999999999999T'}, BAD_SIZE % '99999999999999999999T'),
    ({'size': '１０G'}, BAD_SIZE % '１０G'),
    ({'state': 'resized'}, 'state is resized but all of the following are missing: size'),
    ({'create': 'forced'}, 'create is forced but all of the following are missing: storage'),
    ({'import_from': 'local:import/x.qcow2', 'size': '10G'}, 'parameters are mutually exclusive: import_from|size'),
    ({'state': 'moved', 'target_vmid': 101, 'target_storage': 'nvme-pool'}, 'parameters are mutually exclusive: target_vmid|target_storage'),
    ({'target_disk': 'scsi2'}, "missing parameter(s) required by 'target_disk': target_vmid"),
    ({'format': 'cow'}, 'format cow is not an image format Proxmox VE knows: use raw, qcow, qed, qcow2, vmdk or cloop'),
    ({'wwn': '0x12'}, "wwn must be 0x followed by 16 hex digits, got '0x12'"),
    ({'iso_image': 'isos:iso/debian-13-netinst.iso'}, "missing parameter(s) required by 'iso_image': media"),
    ({'state': 'moved'}, 'state is moved but any of the following are missing: target_storage, target_vmid'),
    ({'vmid': 99}, 'vmid must be between 100 and 999999999, got 99'),
    ({'timeout': 0}, 'timeout must be a positive number of seconds, got 0'),
    ({'disk': 'unused0'}, 'unused0 holds a volume no drive uses: it can only be detached (already is) or absent (destroyed); attach the volume to a drive slot instead'),
    ({'iops': -1}, 'iops must be 0 or more, got -1'),
    ({'mbps': 10, 'mbps_rd': 5}, 'parameters are mutually exclusive: mbps|mbps_rd'),
    ({'bogus_option': 1}, unsupported('proxmox_disk', 'bogus_option')),
    ({'api_timeout': -5}, 'api_timeout must be a positive number of seconds, got -5'),
    ({'ca_path': '/'}, 'ca_path: unable to read the CA file /: Is a directory (os error 21)'),
]]

KVM = [({**{'vmid': 100, 'name': 'existing-web', 'node': 'pve1'}, **opts}, msg) for opts, msg in [
    ({'vmid': 99}, 'vmid must be between 100 and 999999999, got 99'),
    ({'newid': 5, 'clone': 'debian-13-template'}, 'newid must be between 100 and 999999999, got 5'),
    ({'net': {'net0': 'virtio,tag=0'}}, "net.net0: invalid format - tag: value must have a minimum value of 1 (in net value 'virtio,tag=0')"),
    ({'net': {'net0': 'virtio,bridge=vmbr0,tag=4095'}}, "net.net0: invalid format - tag: value must have a maximum value of 4094 (in net value 'virtio,bridge=vmbr0,tag=4095')"),
    ({'net': {'net32': 'virtio,bridge=vmbr0'}}, "net: 'net32' is not a valid key, expected net0 to net31"),
    ({'net': {'net0': 'bogus=1'}}, "net.net0: invalid format - invalid key in comma-separated list property: bogus (in net value 'bogus=1')"),
    ({'net': {'net0': 'virtio=01:00:00:00:00:00,bridge=vmbr0'}}, "net.net0: invalid format - macaddr: value does not look like a valid unicast MAC address (in net value 'virtio=01:00:00:00:00:00,bridge=vmbr0')"),
    ({'net': {'net0': ''}}, "net.net0: invalid format - empty value (in net value '')"),
    ({'net': {'net0': {'model': 'virtio'}}}, 'net: the value of net0 must be a string'),
    ({'net': 'net0'}, "argument 'net' is of type str and we were unable to convert to dict: dictionary requested, could not parse JSON or key=value"),
    ({'scsi': {'scsi0': 'local-lvm:vm-100-disk-0,size=1.G'}}, "scsi.scsi0: invalid format - size: value does not look like a valid disk size: 1.G (in drive value 'local-lvm:vm-100-disk-0,size=1.G')"),
    ({'scsi': {'scsi31': 'local-lvm:10'}}, "scsi: 'scsi31' is not a valid key, expected scsi0 to scsi30"),
    ({'scsi': {'scsi0': 'local-lvm:10,iothread=maybe'}}, "scsi.scsi0: invalid format - iothread: type check ('boolean') failed - got 'maybe' (in drive value 'local-lvm:10,iothread=maybe')"),
    ({'scsi': {'scsi0': 'local-lvm:10,cache=fast'}}, "scsi.scsi0: invalid format - cache: value 'fast' does not have a value in the enumeration 'none, writethrough, writeback, unsafe, directsync' (in drive value 'local-lvm:10,cache=fast')"),
    # The volume is checked too (pve-volume-id-or-qm-path, issue 15): its storage part is no storage id.
    ({'scsi': {'scsi0': 'ünï:10,size=1Ğ'}}, "scsi.scsi0: invalid format - file: unable to parse volume ID 'ünï:10' (in drive value 'ünï:10,size=1Ğ')"),
    ({'scsi': {'scsi0': 'local-lvm:10,size=1Ğ'}}, "scsi.scsi0: invalid format - size: value does not look like a valid disk size: 1Ğ (in drive value 'local-lvm:10,size=1Ğ')"),
    ({'scsi': ['local-lvm:10']}, Starts("argument 'scsi' is of type list and we were unable to convert to dict: ")),
    ({'delete': 'net1', 'revert': 'cores'}, 'parameters are mutually exclusive: delete|revert'),
    ({'clone': 'debian-13-template', 'delete': 'net1'}, 'parameters are mutually exclusive: clone|delete'),
    ({'update': True, 'delete': 'net1'}, 'parameters are mutually exclusive: delete|update'),
    ({'tags': ['bad tag!']}, 'tags: `bad tag!` is not a valid tag'),
    ({'state': 'gone'}, 'value of state must be one of: present, absent, stopped, started, restarted, current, template, paused, hibernated, got: gone'),
    ({'cores': 'many'}, type_error('cores', 'str', '"\'many\'" cannot be converted to an int', 'int')),
    ({'memory': HUGE}, type_error('memory', 'float', '"1e+22" cannot be converted to an int', 'int')),
    ({'args': '-no-reboot'}, 'args parameter require root@pam user. '),
    ({'skiplock': True}, 'skiplock parameter require root@pam user. '),
    ({'efidisk0': {'storage': 'local-lvm'}}, 'efidisk0 cannot be used if bios is not set to ovmf. '),
    ({'bios': 'ovmf', 'efidisk0': {'format': 'raw'}}, 'missing required arguments: storage found in efidisk0'),
    ({'tpmstate0': {'storage': 'local-lvm', 'version': '3.0'}}, 'value of version must be one of: 2.0, 1.2, got: 3.0 found in tpmstate0'),
    ({'bios': 'ovmf', 'efidisk0': {'storage': 'local-lvm', 'eftype': '4m'}}, 'Unsupported parameters for (ferro.proxmox.proxmox_kvm) module: efidisk0.eftype. Supported parameters include: efitype, format, pre_enrolled_keys, storage.'),
    ({'bios': 'ovmf', 'efidisk0': {'storage': 'local-lvm', 'efitype': '8m'}}, 'value of efitype must be one of: 2m, 4m, got: 8m found in efidisk0'),
    ({'timeout': 0}, 'timeout must be a number of seconds above 0, got 0'),
    ({'name': 'web_01'}, "name must be a valid DNS name (letters, digits, inner hyphens, dot-separated labels), got 'web_01'"),
    ({'bogus_option': 1}, unsupported('proxmox_kvm', 'bogus_option')),
    # Issue 17: values the module passes on are checked against PVE's API schema by the client,
    # with PVE's words, before the write is sent (docs/pve-semantics.md §28).
    ({'update': True, 'cores': 0}, SCHEMA % 'cores: value must have a minimum value of 1'),
    ({'update': True, 'memory': 1}, SCHEMA % 'memory: invalid format - format error memory.current: value must have a minimum value of 16'),
    ({'update': True, 'memory': 1024, 'balloon': 2048}, SCHEMA % 'balloon: balloon value too large (must be smaller than assigned memory)'),
    ({'update': True, 'ipconfig': {'ipconfig0': 'ip=10.0.0.300/24'}},
     SCHEMA % 'ipconfig0: invalid format - format error ipconfig0.ip: invalid format - value does not look like a valid ipv4 network configuration'),
    ({'node': None}, 'state is present but all of the following are missing: node'),
    ({'ca_path': '/nonexistent/ca.pem'}, 'ca_path: unable to read the CA file /nonexistent/ca.pem: No such file or directory (os error 2)'),
]]

TABLES = {'proxmox_vm_info': VM_INFO, 'proxmox_nic': NIC, 'proxmox_disk': DISK, 'proxmox_kvm': KVM}

# Without any PROXMOX_* variable: the connection options each module needs, per module.
MISSING_AUTH = [
    ({}, 'missing required arguments: api_host, api_user'),
    ({'api_host': '127.0.0.1', 'api_user': 'ferro-canary@pve'}, 'one of the following is required: api_password, api_token_id'),
    ({'api_host': '127.0.0.1', 'api_user': 'ferro-canary@pve', 'api_token_id': 'e2e'},
     'parameters are required together: api_token_id, api_token_secret'),
    # An empty connection option counts as unset (issue 27): still missing.
    ({'api_host': '', 'api_user': ''}, 'missing required arguments: api_host, api_user'),
]
ANCHORS = {'proxmox_vm_info': {}, 'proxmox_nic': {'vmid': 100, 'interface': 'net0'},
           'proxmox_disk': {'vmid': 100, 'disk': 'scsi1'}, 'proxmox_kvm': {'vmid': 100, 'name': 'x', 'node': 'pve1'}}


def task(module, index, options):
    return {'name': 'bad %02d' % index, 'ferro.proxmox.' + module: options, 'delegate_to': 'localhost',
            'ignore_errors': True}


def play(tasks):
    return [{'name': 'bad input', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}]


def writes(sim):
    return [(r['method'], r['path']) for r in sim.requests()
            if r['method'] != 'GET' and not r['path'].endswith('/access/ticket')]


def check_table(run, sim, rows, label):
    mismatches = []
    for i, (options, expected) in enumerate(rows):
        r = run.task('bad %02d' % i)
        msg = r['result'].get('msg', '')
        if r['status'] != 'failed' or r['changed']:
            mismatches.append('%s row %d %s: %s, changed=%s: %s' % (label, i, json.dumps(options)[:200], r['status'], r['changed'], msg))
        elif expected is None or (msg != expected if not isinstance(expected, Starts) else not msg.startswith(expected)):
            mismatches.append('%s row %d %s:\n    got:  %r\n    want: %r' % (label, i, json.dumps(options)[:200], msg, expected))
        for secret in CANARY_SECRETS:
            assert secret not in json.dumps(r['result'])
    assert not mismatches, '\n'.join(mismatches)
    assert writes(sim) == [], 'bad input wrote to Proxmox: %s' % writes(sim)


@pytest.mark.parametrize('module', sorted(TABLES))
def test_bad_input_table(ansible, sim, module, summary):
    rows = TABLES[module]
    assert len(rows) >= 20
    sim.clear_requests()
    run = ansible.run_playbook(play([task(module, i, opts) for i, (opts, _) in enumerate(rows)]))
    check_table(run, sim, rows, module)
    summary('bad input: %s: %d inputs tried, each rejected with its exact message, %d writes'
            % (module, len(rows), len(writes(sim))))


def test_missing_auth_for_every_module(ansible, sim, summary):
    rows = [(dict(ANCHORS[m], **opts), msg) for m in sorted(TABLES) for opts, msg in MISSING_AUTH]
    modules = [m for m in sorted(TABLES) for _ in MISSING_AUTH]
    sim.clear_requests()
    env = {k: None for k in os.environ if k.startswith('PROXMOX_')}
    env.update({k: None for k in ('PROXMOX_HOST', 'PROXMOX_PORT', 'PROXMOX_USER', 'PROXMOX_TOKEN_ID',
                                  'PROXMOX_TOKEN_SECRET', 'PROXMOX_CA_PATH')})
    run = ansible.run_playbook(play([task(m, i, opts) for i, (m, (opts, _)) in enumerate(zip(modules, rows))]), env=env)
    check_table(run, sim, rows, 'missing auth')
    assert sim.requests() == []
    summary('bad input: missing auth: %d inputs tried (%d modules), no request sent' % (len(rows), len(TABLES)))
