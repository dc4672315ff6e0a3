"""PVE's named formats, one definition each: the code formats of pve-common, pve-storage and qemu-server as
functions that raise FormatError with PVE's words (CODE), and the property-string formats (pve-vm-cpu-conf,
pve-qm-hostpci, pve-qm-boot, ...) as key schemas with their validators (HASH). The request check
(validation.py) reads them; validation.register_formats puts those fakepve 0.5.0 lacks into fakepve's own
tables, so that fakepve's check says the same (docs/pve-semantics.md §32, §34, §39).

Written from PVE's sources (pve-common 9.x src/PVE/JSONSchema.pm, CpuSet.pm, ParseUtils.pm; pve-storage
src/PVE/Storage/Plugin.pm; qemu-server 9.2.6 src/PVE/QemuServer.pm (`verify_bootdev`, `$smbios1_fmt`,
`$cicustom_fmt`, `pve_verify_cpuset`), QemuServer/Drive.pm (`verify_bootdisk`, `is_valid_drivename`),
CPUConfig.pm (`$cpu_fmt`, `validate_vm_cpu_conf`, `parse_phys_bits`, `$sev_fmt`, `$tdx_fmt`), CPUFlags.pm,
PCI.pm (`$PCIRE`, `$hostpci_fmt`)), independently of module_utils' checks. A named format pvesim does not
know is not checked; §32 lists them.
"""

import re


class FormatError(Exception):
    """A format's `die "...\\n"`: str() is PVE's text with its newline."""


def split_list(text):
    """PVE::Tools::split_list (ParseUtils.pm): items between commas, semicolons, white space or NUL."""
    return [item for item in re.split(r'[\s,;\0]+', text) if item]


def _match(rx, text):
    # Perl's m/^...$/ also matches before a final newline.
    return re.fullmatch(rx, text[:-1] if text.endswith('\n') else text) is not None


def _parse_id(kind, text):
    """JSONSchema.pm parse_id (pve-storage-id)."""
    if len(text) < 2:
        raise FormatError("{0} ID '{1}' cannot be shorter than 2 characters\n".format(kind, text))
    if not _match(r'(?i)[a-z][a-z0-9\-_.]*[a-z0-9]', text):
        raise FormatError("{0} ID '{1}' contains illegal characters\n".format(kind, text))


def _die_unless(rx, message):
    def check(text):
        if not _match(rx, text):
            raise FormatError(message.format(text) + '\n')
    return check


IPV4 = r'(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)'
DNS_LABEL = r'[a-zA-Z0-9](?:[a-zA-Z0-9\-]*[a-zA-Z0-9])?'
DRIVE_COUNTS = {'ide': 4, 'sata': 6, 'scsi': 31, 'virtio': 16}
DEVICE_COUNTS = {'net': 32, 'usb': 14, 'hostpci': 16}


def _numbered(name, counts):
    found = re.fullmatch(r'([a-z]+)(\d+)', name)
    return bool(found) and found.group(1) in counts and str(int(found.group(2))) == found.group(2) and \
        int(found.group(2)) < counts[found.group(1)]


def is_valid_drivename(name):
    """Drive.pm is_valid_drivename: ideN, sataN, scsiN, virtioN, efidisk0, tpmstate0 (not unusedN)."""
    return name in ('efidisk0', 'tpmstate0') or _numbered(name, DRIVE_COUNTS)


def _ipv6(text):
    import ipaddress
    try:
        ipaddress.IPv6Address(text)
        return '%' not in text
    except ValueError:
        return False


def _cidr(text, v4):
    addr, slash, bits = text.partition('/')
    if not slash or not bits.isdigit():
        return False
    ok = _match(IPV4, addr) if v4 else _ipv6(addr)
    return ok and 7 < int(bits) <= (32 if v4 else 128)


def _verify_cidr(text):
    if not (_cidr(text, True) or _cidr(text, False)):
        raise FormatError('value does not look like a valid CIDR network\n')


def _verify_ip(text):
    if not (_match(IPV4, text) or _ipv6(text)):
        raise FormatError('value does not look like a valid IP address\n')


def _verify_address(text):
    if not (_match(IPV4, text) or _ipv6(text) or _match(r'(?:' + DNS_LABEL + r'\.)*' + DNS_LABEL, text)):
        raise FormatError('value does not look like a valid address: {0}\n'.format(text))


def _verify_size(text):
    if not _match(r'\d+(?:\.\d+)?(?:[KMGT](?:iB)?)?', text):
        raise FormatError('value does not look like a valid disk size: {0}\n'.format(text))


def _verify_volume_id(text):
    """pve-storage Plugin.pm parse_volume_id."""
    if not _match(r'(?is)[a-z][a-z0-9\-_.]*[a-z0-9]:(.+)', text):
        raise FormatError("unable to parse volume ID '{0}'\n".format(text))


def _verify_volume_or_path(text):
    """QemuServer.pm verify_volume_id_or_absolute_path."""
    if not text.startswith('/'):
        _verify_volume_id(text)


def _verify_volume_or_qm_path(text):
    """QemuServer.pm verify_volume_id_or_qm_path."""
    if text not in ('none', 'cdrom'):
        _verify_volume_or_path(text)


def _verify_startup(text):
    """JSONSchema.pm pve_parse_startup_order (an empty value is not one)."""
    parts = [p for p in text.split(',') if not re.fullmatch(r'\s*', p)]
    if not text or text == '0' or not all(re.fullmatch(r'(?:order=)?\d+|up=\d+|down=\d+', p) for p in parts):
        raise FormatError('unable to parse startup options\n')


def _verify_cpuset(text):
    """QemuServer.pm pve_verify_cpuset over CpuSet.pm parse_cpuset."""
    for part in text.split(','):
        found = re.fullmatch(r'\s*(\d+)(?:-(\d+))?\s*', part)
        if not found or (found.group(2) is not None and int(found.group(2)) < int(found.group(1))):
            raise FormatError('unable to parse cpuset option\n')


def _verify_hotplug(text):
    """QemuServer.pm parse_hotplug_features: '0', '1' or a list of known features."""
    if text in ('0', '1'):
        return
    for feature in split_list(text):
        if feature not in ('network', 'disk', 'cpu', 'memory', 'usb', 'cloudinit'):
            raise FormatError('unable to parse hotplug option\n')


def _verify_bootdisk(text):
    if not is_valid_drivename(text):
        raise FormatError("invalid boot disk '{0}'\n".format(text))


def _verify_bootdev(text):
    """QemuServer.pm verify_bootdev: a drive (not efidisk/tpmstate), netN, usbN or hostpciN."""
    if is_valid_drivename(text) and not text.startswith(('efidisk', 'tpmstate')):
        return
    if not _numbered(text, DEVICE_COUNTS):
        raise FormatError("invalid boot device '{0}'\n".format(text))


def _verify_urlencoded(text):
    if not _match(r"[-%a-zA-Z0-9_.!~*'()]*", text):
        raise FormatError('invalid urlencoded string: {0}\n'.format(text))


# Code formats: name -> check(text). A `-list` suffix checks each split_list item; `-opt` an empty value
# passes (JSONSchema.pm check_format).
CODE = {
    'string': lambda text: None,
    'urlencoded': _verify_urlencoded,
    'pve-configid': _die_unless(r'(?i)[a-z][a-z0-9_-]+', "invalid configuration ID '{0}'"),
    'pve-storage-id': lambda text: _parse_id('storage', text),
    'pve-bridge-id': _die_unless(r'[-_.\w\d]+', "invalid bridge ID '{0}'"),
    'pve-vmid': _die_unless(r'[1-9][0-9]{2,8}', 'value does not look like a valid VM ID'),
    'pve-node': _die_unless(r'[a-zA-Z0-9](?:[a-zA-Z0-9\-]*[a-zA-Z0-9])?',
                            'value does not look like a valid node name'),
    'mac-addr': _die_unless(r'(?i)[a-f0-9][02468ace](?::[a-f0-9]{2}){5}',
                            'value does not look like a valid unicast MAC address'),
    'ip': _verify_ip,
    'CIDR': _verify_cidr,
    'dns-name': _die_unless(r'(?:' + DNS_LABEL + r'\.)*' + DNS_LABEL, 'value does not look like a valid DNS name'),
    'address': _verify_address,
    'disk-size': _verify_size,
    'pve-startup-order': _verify_startup,
    'pve-tag': _die_unless(r'(?i)[a-z0-9_][a-z0-9_\-+.]*', 'invalid characters in tag'),
    'pve-volume-id': _verify_volume_id,
    'pve-volume-id-or-absolute-path': _verify_volume_or_path,
    'pve-volume-id-or-qm-path': _verify_volume_or_qm_path,
    'pve-cpuset': _verify_cpuset,
    'pve-hotplug-features': _verify_hotplug,
    'pve-qm-bootdisk': _verify_bootdisk,
    'pve-qm-bootdev': _verify_bootdev,
}

# CPUConfig.pm initialize_cpu_models (the list used without QEMU's model files) and $builtin_models;
# CPUFlags.pm $supported_vm_specific_cpu_flags_by_arch (the flags a VM's own `cpu` may set).
CPU_MODELS = set((
    '486 pentium pentium2 pentium3 coreduo core2duo Conroe Penryn Nehalem Nehalem-IBRS Westmere Westmere-IBRS '
    'SandyBridge SandyBridge-IBRS IvyBridge IvyBridge-IBRS Haswell Haswell-IBRS Haswell-noTSX Haswell-noTSX-IBRS '
    'Broadwell Broadwell-IBRS Broadwell-noTSX Broadwell-noTSX-IBRS Skylake-Client Skylake-Client-IBRS '
    'Skylake-Client-noTSX-IBRS Skylake-Client-v4 Skylake-Server Skylake-Server-IBRS Skylake-Server-noTSX-IBRS '
    'Skylake-Server-v4 Skylake-Server-v5 Cascadelake-Server Cascadelake-Server-v2 Cascadelake-Server-noTSX '
    'Cascadelake-Server-v4 Cascadelake-Server-v5 Cooperlake Cooperlake-v2 KnightsMill Icelake-Client '
    'Icelake-Client-noTSX Icelake-Server Icelake-Server-noTSX Icelake-Server-v3 Icelake-Server-v4 '
    'Icelake-Server-v5 Icelake-Server-v6 Icelake-Server-v7 SapphireRapids SapphireRapids-v2 SapphireRapids-v3 '
    'SapphireRapids-v4 GraniteRapids GraniteRapids-v2 GraniteRapids-v3 SierraForest SierraForest-v2 '
    'SierraForest-v3 ClearwaterForest athlon phenom Opteron_G1 Opteron_G2 Opteron_G3 Opteron_G4 Opteron_G5 EPYC '
    'EPYC-IBPB EPYC-v3 EPYC-v4 EPYC-v5 EPYC-Rome EPYC-Rome-v2 EPYC-Rome-v3 EPYC-Rome-v4 EPYC-Rome-v5 EPYC-Milan '
    'EPYC-Milan-v2 EPYC-Milan-v3 EPYC-Genoa EPYC-Genoa-v2 EPYC-Turin kvm32 kvm64 qemu32 qemu64 max host '
    'a64fx cortex-a35 cortex-a53 cortex-a55 cortex-a57 cortex-a710 cortex-a72 cortex-a76 neoverse-n1 '
    'neoverse-n2 neoverse-v1 x86-64-v2 x86-64-v2-AES x86-64-v3 x86-64-v4').split())
CUSTOM_CPU_MODELS = {}  # cpu-models.conf: the running pvesim's seed's `custom_cpu_models` (qemu_cpu.py load_seed)
VM_CPU_FLAGS = sorted(('nested-virt md-clear pcid spec-ctrl ssbd ibpb virt-ssbd amd-ssbd amd-no-ssb pdpe1gb '
                       'hv-tlbflush hv-evmcs aes').split())
CPU_FLAG_ANY = r'[+-][a-zA-Z0-9\-_.]+'


def _validate_vm_cpu(res):
    """CPUConfig.pm validate_vm_cpu_conf."""
    cputype = res.get('cputype')
    if not cputype or cputype == '0':  # validate_cpu_conf `!$cpu->{cputype}`: Perl's false is '' or '0'
        raise FormatError('CPU is missing cputype\n')
    if cputype.startswith('custom-'):
        # get_custom_model: the seed's `custom_cpu_models` (qemu_cpu.py)
        if cputype[len('custom-'):] not in CUSTOM_CPU_MODELS:
            raise FormatError("Custom cputype '{0}' not found\n".format(cputype[len('custom-'):]))
    elif cputype not in CPU_MODELS:
        raise FormatError("Built-in cputype '{0}' is not defined (missing 'custom-' prefix?)\n".format(cputype))
    flag = '[+-](?:' + '|'.join(re.escape(f) for f in VM_CPU_FLAGS) + ')'
    if res.get('flags') and not _match(flag + '(?:;' + flag + ')*', res['flags']):
        raise FormatError('VM-specific CPU flags must be a subset of: {0}\n'.format(', '.join(VM_CPU_FLAGS)))
    if res.get('reported-model') is not None:
        raise FormatError("Property 'reported-model' not allowed in VM-specific CPU config.\n")


PCI = r'(?:[a-f0-9]{4,}:)?[a-f0-9]{2}:[a-f0-9]{2}(?:\.[a-f0-9])?'
OPT_BOOL = {'type': 'boolean', 'optional': 1}
PCI_ID = {'type': 'string', 'optional': 1, 'pattern': r'^0x[0-9a-fA-F]{4}$'}

# Property-string formats: name -> (key schemas, validator or None), as JSONSchema.pm parse_property_string
# reads them.
HASH = {
    'pve-vm-cpu-conf': ({
        'cputype': {'type': 'string', 'default_key': 1, 'optional': 1},
        # $cpu_fmt: every model of get_all_cpu_models, which initialize_cpu_models ends with `host`
        'reported-model': {'type': 'string', 'optional': 1, 'enum': sorted(CPU_MODELS, key=str.lower)},
        'hidden': OPT_BOOL,
        'hv-vendor-id': {'type': 'string', 'optional': 1, 'pattern': r'[a-zA-Z0-9]{1,12}'},
        'flags': {'type': 'string', 'optional': 1, 'pattern': CPU_FLAG_ANY + '(;' + CPU_FLAG_ANY + ')*'},
        'guest-phys-bits': {'type': 'integer', 'optional': 1, 'minimum': 32, 'maximum': 64},
        'phys-bits': {'type': 'string', 'optional': 1, 'format': 'pve-phys-bits'},
        'level': {'type': 'integer', 'optional': 1, 'minimum': 0, 'maximum': 4294967295},
    }, _validate_vm_cpu),
    'pve-qemu-sev-fmt': ({
        'type': {'type': 'string', 'default_key': 1, 'enum': ['std', 'es', 'snp'], 'maxLength': 3},
        'no-debug': OPT_BOOL, 'no-key-sharing': OPT_BOOL, 'allow-smt': OPT_BOOL, 'kernel-hashes': OPT_BOOL,
    }, None),
    'pve-qm-hostpci': ({
        'host': {'type': 'string', 'default_key': 1, 'optional': 1, 'pattern': PCI + '(;' + PCI + ')*'},
        'mapping': {'type': 'string', 'optional': 1, 'format': 'pve-configid'},
        'rombar': OPT_BOOL, 'pcie': OPT_BOOL, 'x-vga': OPT_BOOL, 'legacy-igd': OPT_BOOL,
        'romfile': {'type': 'string', 'optional': 1, 'pattern': '[^,;]+'},
        'mdev': {'type': 'string', 'optional': 1, 'pattern': r'[^/\.:]+'},
        'vendor-id': PCI_ID, 'device-id': PCI_ID, 'sub-vendor-id': PCI_ID, 'sub-device-id': PCI_ID,
        'driver': {'type': 'string', 'optional': 1, 'enum': ['vfio', 'keep']},
    }, None),
    'pve-qm-boot': ({
        'legacy': {'type': 'string', 'default_key': 1, 'optional': 1, 'pattern': '[acdn]{1,4}'},
        'order': {'type': 'string', 'optional': 1, 'format': 'pve-qm-bootdev-list'},
    }, None),
}


def _verify_ipv4_config(text):
    """JSONSchema.pm pve_verify_ipv4_config: dhcp, manual or an IPv4 CIDR (prefix 8 to 32)."""
    if text not in ('dhcp', 'manual') and not _cidr(text, True):
        raise FormatError('value does not look like a valid ipv4 network configuration\n')


def _verify_ipv6_config(text):
    """JSONSchema.pm pve_verify_ipv6_config: auto, dhcp, manual or an IPv6 CIDR (prefix 8 to 128)."""
    if text not in ('auto', 'dhcp', 'manual') and not _cidr(text, False):
        raise FormatError('value does not look like a valid ipv6 network configuration\n')


def _verify_ipv4(text):
    if not _match(IPV4, text):
        raise FormatError('value does not look like a valid IPv4 address\n')


def _verify_ipv6(text):
    if not _ipv6(text):
        raise FormatError('value does not look like a valid IPv6 address\n')


CODE.update({'ipv4': _verify_ipv4, 'ipv6': _verify_ipv6, 'pve-ipv4-config': _verify_ipv4_config,
             'pve-ipv6-config': _verify_ipv6_config})
# qemu-server QemuServer/Network.pm $ipconfig_fmt
HASH['pve-qm-ipconfig'] = ({
    'ip': {'type': 'string', 'optional': 1, 'format': 'pve-ipv4-config'},
    'gw': {'type': 'string', 'optional': 1, 'format': 'ipv4', 'requires': 'ip'},
    'ip6': {'type': 'string', 'optional': 1, 'format': 'pve-ipv6-config'},
    'gw6': {'type': 'string', 'optional': 1, 'format': 'ipv6', 'requires': 'ip6'},
}, None)

B64 = {'type': 'string', 'optional': 1, 'pattern': r'[A-Za-z0-9+\/]+={0,2}'}
VOLUME = {'type': 'string', 'optional': 1, 'format': 'pve-volume-id'}
# qemu-server QemuServer.pm $smbios1_fmt, $watchdog_fmt, $cicustom_fmt
HASH['pve-qm-smbios1'] = ({
    'uuid': {'type': 'string', 'optional': 1, 'pattern': '[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}'},
    'version': B64, 'serial': B64, 'manufacturer': B64, 'product': B64, 'sku': B64, 'family': B64,
    'base64': OPT_BOOL,
}, None)
HASH['pve-qm-watchdog'] = ({
    'model': {'type': 'string', 'default_key': 1, 'optional': 1, 'enum': ['i6300esb', 'ib700']},
    'action': {'type': 'string', 'optional': 1, 'enum': ['reset', 'shutdown', 'poweroff', 'pause', 'debug', 'none']},
}, None)
# qemu-server QemuServer/RNG.pm $rng_fmt (`source` is not optional); CPUConfig.pm $tdx_fmt (nor is `attestation`,
# though it has a default: check_prop asks only `optional`)
HASH['pve-qm-rng'] = ({
    'source': {'type': 'string', 'default_key': 1, 'enum': ['/dev/urandom', '/dev/random', '/dev/hwrng']},
    'max_bytes': {'type': 'integer', 'optional': 1}, 'period': {'type': 'integer', 'optional': 1},
}, None)
HASH['pve-qemu-tdx-fmt'] = ({
    'type': {'type': 'string', 'default_key': 1, 'enum': ['tdx']},
    'attestation': {'type': 'boolean'},
    'vsock-cid': {'type': 'integer', 'optional': 1, 'minimum': 2},
    'vsock-port': {'type': 'integer', 'optional': 1, 'minimum': 0},
}, None)
HASH['pve-qm-cicustom'] = ({'meta': VOLUME, 'network': VOLUME, 'user': VOLUME, 'vendor': VOLUME}, None)


def _verify_poolname(text):
    """pve-access-control AccessControl.pm verify_poolname (Perl's split drops trailing empty fields)."""
    levels = text.split('/')
    while levels and levels[-1] == '':
        levels.pop()
    if len(levels) > 3:
        raise FormatError("pool name '{0}' nested too deeply (max levels = 3)\n".format(text))
    if not _match(r'[A-Za-z0-9.\-_]+(?:/[A-Za-z0-9.\-_]+){0,2}', text):
        raise FormatError("pool name '{0}' contains invalid characters\n".format(text))


def _verify_storage_pair(text):
    """JSONSchema.pm verify_storagepair: one entry through parse_idmap with pve-storage-id, whose error is
    wrapped twice (`entry ... contains invalid ID - <why>\\n`, then `die \"$@\\n\"`)."""
    if text == '1':
        return
    pair = re.fullmatch(r'([^:]+):([^:]+)', text)
    try:
        for part in (pair.groups() if pair else (text,)):
            _parse_id('storage', part)
    except FormatError as exc:
        raise FormatError("entry '{0}' contains invalid ID - {1}\n\n".format(text, exc)) from exc


CODE.update({
    'pve-poolid': _verify_poolname,
    # pve-access-control Auth/Plugin.pm pve_verify_realm with $realm_regex
    'pve-realm': _die_unless(r'[A-Za-z][A-Za-z0-9.\-_]+', 'value does not look like a valid realm'),
    'storage-pair': _verify_storage_pair,
})


def _phys_bits(text):
    """CPUConfig.pm parse_phys_bits."""
    if not _match(r'host|\d{1,2}', text) or (text.isdigit() and not 8 <= int(text) <= 64):
        raise FormatError("value must be an integer between 8 and 64 or 'host'\n")


CODE['pve-phys-bits'] = _phys_bits
