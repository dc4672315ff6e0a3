"""Every write endpoint pvesim serves gets, for every parameter of its schema, values PVE's schema forbids;
each is refused as PVE refuses it (HTTP 400 `Parameter verification failed.`, `errors` naming the
parameter in JSONSchema.pm's words) and nothing is done. docs/pve-semantics.md §32.

The forbidden values are generated from schema_data.json (the test's own reading of each field: a wrong
type, one past a range, a value outside an enum, a value no pattern takes, one character too long, an
unknown name, a required parameter left out, a bad key or key value inside a property string) and, for the
named formats, from the bad cases below, each with the words of the PVE function that refuses it. The
expected words are written here from pve-common src/PVE/JSONSchema.pm (check_type, check_prop,
check_object, parse_property_string, the registered formats), pve-storage Plugin.pm parse_volume_id and
qemu-server (QemuServer.pm, Drive.pm, CPUConfig.pm, PCI.pm), not computed by pvesim's validation.py.
"""

import hashlib
import json
import os
import re

import pytest

from pvesim.testing import PvesimError

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'pvesim', 'schema_data.json')
METHODS = json.load(open(DATA, encoding='utf-8'))['methods']
WRITES = sorted(k for k in METHODS if k.split(' ')[0] in ('POST', 'PUT', 'DELETE'))
NOT_ALLOWED = 'property is not defined in schema and the schema does not allow additional properties'
MISSING = 'property is missing and it is not optional'
# The URI's values and a valid value of each other required parameter, so that only the value under test
# is wrong.
URI = {'node': 'pve1', 'vmid': '100'}
REQUIRED = {
    'POST /access/ticket': {'username': 'root@pam', 'password': 'secret'},
    'POST /nodes/{node}/qemu': {'vmid': '990'},
    'POST /nodes/{node}/qemu/{vmid}/clone': {'newid': '991'},
    'POST /nodes/{node}/qemu/{vmid}/migrate': {'target': 'pve2'},
    'POST /nodes/{node}/qemu/{vmid}/move_disk': {'disk': 'scsi0'},
    'PUT /nodes/{node}/qemu/{vmid}/resize': {'disk': 'scsi0', 'size': '+1G'},
    'PUT /nodes/{node}/qemu/{vmid}/unlink': {'idlist': 'scsi0'},
}
# Named formats: (bad value, PVE's message after `invalid format - `), from the function PVE registers.
FORMAT_BAD = {
    # JSONSchema.pm pve_verify_node_name, pve_verify_vmid, parse_storage_id/parse_id, pve_verify_configid
    'pve-node': [('-pve1', 'value does not look like a valid node name\n'),
                 ('pve_1', 'value does not look like a valid node name\n')],
    'pve-vmid': [('99', 'value does not look like a valid VM ID\n'),
                 ('1000000000', 'value does not look like a valid VM ID\n')],
    'pve-storage-id': [('x', "storage ID 'x' cannot be shorter than 2 characters\n"),
                       ('local$lvm', "storage ID 'local$lvm' contains illegal characters\n")],
    'pve-configid': [('1scsi', "invalid configuration ID '1scsi'\n")],
    'pve-configid-list': [('scsi0,1scsi', "invalid configuration ID '1scsi'\n")],
    'dns-name': [('web_1', 'value does not look like a valid DNS name\n'),
                 ('web-.example', 'value does not look like a valid DNS name\n')],
    'address-list': [('10.0.0.1 a_b', 'value does not look like a valid address: a_b\n')],
    'CIDR': [('10.0.0.0/99', 'value does not look like a valid CIDR network\n'),
             ('10.0.0.0', 'value does not look like a valid CIDR network\n')],
    'pve-tag-list': [('prod;we b$', 'invalid characters in tag\n')],
    'pve-startup-order': [('order=x', 'unable to parse startup options\n')],
    'urlencoded': [('ssh-ed25519 AAAA', 'invalid urlencoded string: ssh-ed25519 AAAA\n')],
    'pve-volume-id': [('no-colon', "unable to parse volume ID 'no-colon'\n")],
    # pve-access-control AccessControl.pm verify_poolname, Auth/Plugin.pm pve_verify_realm; JSONSchema.pm
    # verify_storagepair (parse_idmap)
    'pve-poolid': [('a/b/c/d', "pool name 'a/b/c/d' nested too deeply (max levels = 3)\n"),
                   ('team 1', "pool name 'team 1' contains invalid characters\n")],
    'pve-realm': [('1pam', 'value does not look like a valid realm\n')],
    'storage-pair-list': [('local-lvm:x', "entry 'local-lvm:x' contains invalid ID - storage ID 'x' cannot be "
                                          "shorter than 2 characters\n\n\n")],
    # QemuServer.pm pve_verify_cpuset (CpuSet.pm parse_cpuset), parse_hotplug_features, verify_bootdev;
    # Drive.pm verify_bootdisk
    'pve-cpuset': [('3-1', 'unable to parse cpuset option\n'), ('0,a', 'unable to parse cpuset option\n')],
    'pve-hotplug-features': [('network,floppy', 'unable to parse hotplug option\n')],
    'pve-qm-bootdisk': [('net0', "invalid boot disk 'net0'\n"), ('scsi31', "invalid boot disk 'scsi31'\n")],
    'pve-qm-boot': [('order=scsi0;efidisk0',
                     "format error\nboot.order: invalid format - invalid boot device 'efidisk0'\n\n"),
                    ('order=scsi0;net32', "format error\nboot.order: invalid format - invalid boot device 'net32'\n\n"),
                    ('legacy=xyz', 'format error\nboot.legacy: value does not match the regex pattern\n')],
    # CPUConfig.pm validate_vm_cpu_conf and $cpu_fmt
    'pve-vm-cpu-conf': [
        ('host,flags=+avx512', 'VM-specific CPU flags must be a subset of: aes, amd-no-ssb, amd-ssbd, hv-evmcs, '
                               'hv-tlbflush, ibpb, md-clear, nested-virt, pcid, pdpe1gb, spec-ctrl, ssbd, virt-ssbd\n'),
        ('Skylake-Ultra', "Built-in cputype 'Skylake-Ultra' is not defined (missing 'custom-' prefix?)\n"),
        ('flags=+aes', 'CPU is missing cputype\n'),
        ('kvm64,reported-model=kvm64', "Property 'reported-model' not allowed in VM-specific CPU config.\n"),
        ('host,hidden=maybe', "format error\ncpu.hidden: type check ('boolean') failed - got 'maybe'\n"),
        ('host,flags=aes', 'format error\ncpu.flags: value does not match the regex pattern\n')],
    # QemuServer/Network.pm $ipconfig_fmt with JSONSchema.pm pve_verify_ipv4_config, pve_verify_ipv4
    'pve-qm-ipconfig': [('ip=10.0.0.5/33', 'format error\n{param}.ip: invalid format - value does not look like a '
                                           'valid ipv4 network configuration\n\n'),
                        ('ip=dhcp,gw=10.0.0.256', 'format error\n{param}.gw: invalid format - value does not look '
                                                  'like a valid IPv4 address\n\n'),
                        ('gw=10.0.0.1', "format error\n{param}.ip: missing property required by '{param}.gw'\n"),
                        ('ip6=fd00::5/130', 'format error\n{param}.ip6: invalid format - value does not look like a '
                                            'valid ipv6 network configuration\n\n')],
    # QemuServer.pm $smbios1_fmt, $watchdog_fmt, $cicustom_fmt
    'pve-qm-smbios1': [('uuid=not-a-uuid', 'format error\nsmbios1.uuid: value does not match the regex pattern\n'),
                       ('base64=maybe', "format error\nsmbios1.base64: type check ('boolean') failed - got 'maybe'\n")],
    'pve-qm-watchdog': [('model=i8042', "format error\nwatchdog.model: value 'i8042' does not have a value in the "
                                        "enumeration 'i6300esb, ib700'\n")],
    'pve-qm-cicustom': [('user=snippets/user.yml', "format error\ncicustom.user: invalid format - unable to parse "
                                                    "volume ID 'snippets/user.yml'\n\n")],
    # RNG.pm $rng_fmt, CPUConfig.pm $tdx_fmt (their `source` and `attestation` are not optional)
    'pve-qm-rng': [('/dev/zero', "format error\nrng0.source: value '/dev/zero' does not have a value in the "
                                 "enumeration '/dev/urandom, /dev/random, /dev/hwrng'\n"),
                   ('max_bytes=1024', 'format error\nrng0.source: property is missing and it is not optional\n')],
    'pve-qemu-tdx-fmt': [('tdx', 'format error\nintel-tdx.attestation: property is missing and it is not optional\n'),
                         ('tdx,attestation=1,vsock-cid=1',
                          'format error\nintel-tdx.vsock-cid: value must have a minimum value of 2\n')],
    # PCI.pm $hostpci_fmt
    'pve-qm-hostpci': [('zz:zz.z', 'format error\n{param}.host: value does not match the regex pattern\n'),
                       ('01:00.0,driver=nouveau', "format error\n{param}.driver: value 'nouveau' does not have a "
                                                  "value in the enumeration 'vfio, keep'\n")],
    # CPUConfig.pm $sev_fmt
    'pve-qemu-sev-fmt': [('type=sev', "format error\namd-sev.type: value 'sev' does not have a value in the "
                                      "enumeration 'std, es, snp'\n"),
                         ('std,bogus=1', 'invalid key in comma-separated list property: bogus\n')],
}


def forbidden(name, sch):
    """(value, expected message) pairs for one parameter, from its schema."""
    kind = sch.get('type')
    out = []
    if kind == 'boolean':
        out += [(v, "type check ('boolean') failed - got '{0}'".format(v)) for v in ('true', 'yes', 'off', '2')]
    elif kind == 'integer':
        out += [(v, "type check ('integer') failed - got '{0}'".format(v)) for v in ('x1', '1.5', ' 1')]
    elif kind == 'number':
        out += [(v, "type check ('number') failed - got '{0}'".format(v)) for v in ('abc', '1e')]
    fmt = sch.get('format')
    if kind in ('integer', 'number') and not fmt:
        if 'minimum' in sch:
            out.append((str(num(sch['minimum']) - 1), 'value must have a minimum value of {0}'.format(
                num(sch['minimum']))))
        if 'maximum' in sch:
            out.append((str(num(sch['maximum']) + 1), 'value must have a maximum value of {0}'.format(
                num(sch['maximum']))))
    if kind == 'string' and not fmt and not sch.get('keys'):
        if sch.get('enum'):
            out.append(('zz', "value 'zz' does not have a value in the enumeration '{0}'".format(
                ', '.join(str(e) for e in sch['enum']))))
        if sch.get('pattern'):
            out.append(('#!', 'value does not match the regex pattern'))
        elif 'maxLength' in sch:
            out.append(('a' * (int(sch['maxLength']) + 1), 'value may only be {0} characters long'.format(
                sch['maxLength'])))
    if isinstance(fmt, str):
        out += [(v, 'invalid format - ' + m.format(param=name)) for v, m in FORMAT_BAD.get(fmt, ())]
    if sch.get('keys'):
        out += [(v, m if isinstance(m, tuple) else 'invalid format - ' + m)
                for v, m in property_string_cases(name, sch['keys'])]
    return out


def num(text):
    value = float(text)
    return int(value) if value == int(value) else value


def property_string_cases(name, keys):
    """An unknown key, and each typed key with a wrong value (its error is one line of the `format error`
    list, which PVE prints in hash order: the expected message is that line, checked with `in`)."""
    cases = [('bogus-key=1', 'invalid key in comma-separated list property: bogus-key\n')]
    for key, sub in sorted(keys.items()):
        if sub.get('alias'):
            continue
        if sub.get('type') == 'boolean':
            cases.append(('{0}=maybe'.format(key), ("format error\n", "{0}.{1}: type check ('boolean') failed - "
                                                     "got 'maybe'\n".format(name, key))))
        elif sub.get('type') == 'integer':
            cases.append(('{0}=x'.format(key), ("format error\n", "{0}.{1}: type check ('integer') failed - got "
                                                 "'x'\n".format(name, key))))
        elif sub.get('enum') and not sub.get('format'):
            cases.append(('{0}=zz'.format(key), ("format error\n", "{0}.{1}: value 'zz' does not have a value in "
                                                  "the enumeration '{2}'\n".format(name, key, ', '.join(sub['enum'])))))
    return cases


def numbered(name, sch):
    return name[:-3] + '0' if name.endswith('[n]') else name


def cases():
    """(endpoint, parameter, value, expected) for every parameter of every write endpoint."""
    out = []
    for key in WRITES:
        spec = METHODS[key]
        if not spec['additionalProperties']:
            out.append((key, 'bogus-param', '1', NOT_ALLOWED))
        for pname, sch in sorted(spec['properties'].items()):
            if '{' + pname + '}' in key:
                continue
            name = numbered(pname, sch)
            if not sch.get('optional'):
                out.append((key, name, None, MISSING))
            for value, expected in forbidden(name, sch):
                out.append((key, name, value, expected))
        if '{vmid}' in key:
            out.append((key, 'vmid', 'abc', "type check ('integer') failed - got 'abc'"))
            out.append((key, 'vmid', '99', 'invalid format - value does not look like a valid VM ID\n'))
    return out


def state(sim):
    """Everything a request could change: VMs' configs and pending values, storage contents, tasks."""
    seen = []
    for vm in sim.api('GET', '/cluster/resources', {'type': 'vm'}):
        path = '/nodes/{0}/qemu/{1}'.format(vm['node'], vm['vmid'])
        seen.append((vm['vmid'], vm.get('name'), vm['status'], sim.api('GET', path + '/pending')))
    for store in sim.api('GET', '/storage'):
        seen.append(sorted(v['volid'] for v in sim.api('GET', '/nodes/pve1/storage/{0}/content'.format(
            store['storage']))) if 'images' in store.get('content', '') else store['storage'])
    seen.append(len(sim.api('GET', '/nodes/pve1/tasks', {'limit': 1000})))
    seen.append(len(sim.api('GET', '/nodes/pve2/tasks', {'limit': 1000})))
    return hashlib.sha256(json.dumps(seen, sort_keys=True).encode()).hexdigest()


def send(sim, key, values):
    method, template = key.split(' ', 1)
    vmid = values.pop('vmid', URI['vmid']) if '{vmid}' in template else None
    path = template.replace('{node}', URI['node']).replace('{vmid}', str(vmid))
    return sim.api(method, path, values, token=path != '/access/ticket')


ALL = cases()


@pytest.mark.parametrize('key', WRITES)
def test_every_forbidden_value_is_refused_with_nothing_done(sim, key, summary):
    before = state(sim)
    mine = [c for c in ALL if c[0] == key]
    for _key, name, value, expected in mine:
        values = dict(REQUIRED.get(key, {}))
        values.pop(name, None)
        if value is not None:
            values[name] = value
        with pytest.raises(PvesimError) as info:
            send(sim, key, values)
        err = info.value
        assert (err.status, err.message) == (400, 'Parameter verification failed.'), (name, value, err)
        if isinstance(expected, tuple):
            head, line = expected
            assert list(err.errors) == [name] and err.errors[name].startswith('invalid format - ' + head) \
                and line in err.errors[name], (name, value, err.errors)
        else:
            want = {name: expected}
            need = METHODS[key]['properties'].get(name, {}).get('requires')
            if need and value is not None and need not in values:
                want[need] = "missing property required by '{0}'".format(name)  # JSONSchema.pm check_object
            assert err.errors == want, (name, value)
    assert state(sim) == before, key
    summary('{0}: {1} forbidden requests refused'.format(key, len(mine)))


def test_the_generated_set_covers_every_parameter(summary):
    writes = [(k, p) for k in WRITES for p in METHODS[k]['properties'] if '{' + p + '}' not in k]
    covered = set((k, numbered(p, METHODS[k]['properties'][p])) for k, p in writes)
    refused = set((c[0], c[1]) for c in ALL)
    typed = [(k, p) for k, p in writes if METHODS[k]['properties'][p].get('type') != 'string'
             or METHODS[k]['properties'][p].get('format') or METHODS[k]['properties'][p].get('keys')
             or METHODS[k]['properties'][p].get('enum') or METHODS[k]['properties'][p].get('pattern')
             or 'maxLength' in METHODS[k]['properties'][p]]
    summary('{0} forbidden requests over {1} write endpoints; {2} schema parameters, {3} with a forbidden '
            'value'.format(len(ALL), len(WRITES), len(writes), len(covered & refused)))
    assert len(ALL) >= 1200 and len(WRITES) >= 16
    # every constrained parameter gets at least one forbidden value (a free string may be anything)
    missing = [(k, p) for k, p in typed if (k, numbered(p, METHODS[k]['properties'][p])) not in refused]
    unknown_formats = sorted(set(METHODS[k]['properties'][p].get('format') for k, p in missing))
    assert all(f in NOT_MODELLED for f in unknown_formats), unknown_formats


# Named formats pvesim does not check (docs/pve-semantics.md §32.1): their parameters get only the type,
# name and required-parameter cases.
NOT_MODELLED = {'pve-priv-list', None}


def test_ticket_refuses_unknown_parameters_and_a_missing_password(sim):
    # AccessControl.pm create_ticket's schema (additionalProperties 0, password not optional), checked by
    # RESTHandler handle before the handler: 400, not the handler's 401
    err = pytest.raises(PvesimError, sim.api, 'POST', '/access/ticket', {'username': 'root@pam'}, token=False).value
    assert (err.status, err.errors) == (400, {'password': MISSING})
    err = pytest.raises(PvesimError, sim.api, 'POST', '/access/ticket',
                        {'username': 'root@pam', 'password': 'secret', 'remember': '1'}, token=False).value
    assert (err.status, err.errors) == (400, {'remember': NOT_ALLOWED})
    assert re.match(r'PVE:root@pam:', sim.api('POST', '/access/ticket', {'username': 'root@pam',
                                                                         'password': 'secret'}, token=False)['ticket'])
