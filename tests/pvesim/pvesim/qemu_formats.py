"""The named formats qemu-server defines in code that fakepve 0.5.0 does not check: registered into fakepve's tables
at import, so that pvesim refuses what PVE refuses, with PVE's words (docs/pve-semantics.md §34).

Sources: qemu-server 9.2.6 src/PVE/QemuServer.pm (`verify_bootdev`, `$smbios1_fmt`, `$cicustom_fmt`,
`pve_verify_cpuset`), src/PVE/QemuServer/Drive.pm (`verify_bootdisk`, `is_valid_drivename`),
src/PVE/QemuServer/PCI.pm (`$PCIRE`, `$hostpci_fmt`), src/PVE/QemuServer/CPUConfig.pm (`$cpu_fmt`,
`validate_vm_cpu_conf`, `parse_phys_bits`, `$sev_fmt`, `$tdx_fmt`) and CPUFlags.pm (the VM-specific flags);
pve-common src/PVE/CpuSet.pm (`parse_cpuset`), src/PVE/JSONSchema.pm (`parse_idmap`, `verify_storagepair`).
"""

import re

from fakepve import formats, schema

# Drive.pm is_valid_drivename, and the NIC, USB and PCI keys verify_bootdev also takes (QemuServer.pm $confdesc).
DRIVE = re.compile(r'(?:ide[0-3]|scsi(?:[0-9]|[12][0-9]|30)|virtio(?:[0-9]|1[0-5])|sata[0-5]|efidisk0|tpmstate0)')
BOOT_OTHER = re.compile(r'(?:net(?:[0-9]|[12][0-9]|3[01])|usb(?:[0-9]|1[0-3])|hostpci(?:[0-9]|1[0-5]))')

PCI_ID = r'(?:[a-f0-9]{4,}:)?[a-f0-9]{2}:[a-f0-9]{2}(?:\.[a-f0-9])?'
HEX_ID = {'type': 'string', 'optional': 1, 'pattern': r'^0x[0-9a-fA-F]{4}$'}
BASE64 = {'type': 'string', 'optional': 1, 'pattern': r'[A-Za-z0-9+/]+={0,2}'}
VOLUME = {'type': 'string', 'optional': 1, 'format': 'pve-volume-id'}
BOOLEAN = {'type': 'boolean', 'optional': 1}

# CPUConfig.pm: the QEMU models of qemu-server 9.1 and 9.2 (x86_64 and aarch64), the built-in x86-64-v* ones, host.
CPU_MODELS = frozenset('''
486 Broadwell Broadwell-IBRS Broadwell-noTSX Broadwell-noTSX-IBRS Cascadelake-Server Cascadelake-Server-noTSX
Cascadelake-Server-v2 Cascadelake-Server-v4 Cascadelake-Server-v5 ClearwaterForest Conroe Cooperlake Cooperlake-v2
EPYC EPYC-Genoa EPYC-Genoa-v2 EPYC-IBPB EPYC-Milan EPYC-Milan-v2 EPYC-Milan-v3 EPYC-Rome EPYC-Rome-v2 EPYC-Rome-v3
EPYC-Rome-v4 EPYC-Rome-v5 EPYC-Turin EPYC-v3 EPYC-v4 EPYC-v5 GraniteRapids GraniteRapids-v2 GraniteRapids-v3 Haswell
Haswell-IBRS Haswell-noTSX Haswell-noTSX-IBRS Icelake-Client Icelake-Client-noTSX Icelake-Server Icelake-Server-noTSX
Icelake-Server-v3 Icelake-Server-v4 Icelake-Server-v5 Icelake-Server-v6 Icelake-Server-v7 IvyBridge IvyBridge-IBRS
KnightsMill Nehalem Nehalem-IBRS Opteron_G1 Opteron_G2 Opteron_G3 Opteron_G4 Opteron_G5 Penryn SandyBridge
SandyBridge-IBRS SapphireRapids SapphireRapids-v2 SapphireRapids-v3 SapphireRapids-v4 SierraForest SierraForest-v2
SierraForest-v3 Skylake-Client Skylake-Client-IBRS Skylake-Client-noTSX-IBRS Skylake-Client-v4 Skylake-Server
Skylake-Server-IBRS Skylake-Server-noTSX-IBRS Skylake-Server-v4 Skylake-Server-v5 Westmere Westmere-IBRS a64fx athlon
core2duo coreduo cortex-a35 cortex-a53 cortex-a55 cortex-a57 cortex-a710 cortex-a72 cortex-a76 host kvm32 kvm64 max
neoverse-n1 neoverse-n2 neoverse-v1 pentium pentium2 pentium3 phenom qemu32 qemu64 x86-64-v2 x86-64-v2-AES x86-64-v3
x86-64-v4'''.split())
VM_CPU_FLAGS = ('aes', 'amd-no-ssb', 'amd-ssbd', 'hv-evmcs', 'hv-tlbflush', 'ibpb', 'md-clear', 'nested-virt', 'pcid',
                'pdpe1gb', 'spec-ctrl', 'ssbd', 'virt-ssbd')
FLAG = r'[+-][a-zA-Z0-9\-_.]+'

CPU = {
    'cputype': {'type': 'string', 'optional': 1, 'default_key': 1},
    'reported-model': {'type': 'string', 'optional': 1, 'enum': sorted(CPU_MODELS, key=str.lower)},
    'hidden': BOOLEAN,
    'hv-vendor-id': {'type': 'string', 'optional': 1, 'pattern': '[a-zA-Z0-9]{1,12}'},
    'flags': {'type': 'string', 'optional': 1, 'pattern': '{0}(;{0})*'.format(FLAG)},
    'guest-phys-bits': {'type': 'integer', 'optional': 1, 'minimum': 32, 'maximum': 64},
    'phys-bits': {'type': 'string', 'optional': 1, 'format': 'pve-phys-bits'},
    'level': {'type': 'integer', 'optional': 1, 'minimum': 0, 'maximum': 4294967295},
}

REGISTERED = {
    'pve-qm-hostpci': {
        'host': {'type': 'string', 'optional': 1, 'default_key': 1, 'pattern': '{0}(;{0})*'.format(PCI_ID)},
        'mapping': {'type': 'string', 'optional': 1, 'format': 'pve-configid'},
        'rombar': BOOLEAN, 'pcie': BOOLEAN, 'x-vga': BOOLEAN, 'legacy-igd': BOOLEAN,
        'romfile': {'type': 'string', 'optional': 1, 'pattern': '[^,;]+'},
        'mdev': {'type': 'string', 'optional': 1, 'pattern': r'[^/\.:]+'},
        'vendor-id': HEX_ID, 'device-id': HEX_ID, 'sub-vendor-id': HEX_ID, 'sub-device-id': HEX_ID,
        'driver': {'type': 'string', 'optional': 1, 'enum': ['vfio', 'keep']},
    },
    'pve-qm-smbios1': {
        'uuid': {'type': 'string', 'optional': 1, 'pattern': '[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}'},
        'version': BASE64, 'serial': BASE64, 'manufacturer': BASE64, 'product': BASE64, 'sku': BASE64,
        'family': BASE64, 'base64': BOOLEAN,
    },
    'pve-qm-cicustom': {'meta': VOLUME, 'network': VOLUME, 'user': VOLUME, 'vendor': VOLUME},
    'pve-qemu-sev-fmt': {
        'type': {'type': 'string', 'default_key': 1, 'enum': ['std', 'es', 'snp'], 'maxLength': 3},
        'no-debug': BOOLEAN, 'no-key-sharing': BOOLEAN, 'allow-smt': BOOLEAN, 'kernel-hashes': BOOLEAN,
    },
    'pve-qemu-tdx-fmt': {
        'type': {'type': 'string', 'default_key': 1, 'enum': ['tdx']},
        'attestation': {'type': 'boolean'},
        'vsock-cid': {'type': 'integer', 'optional': 1, 'minimum': 2},
        'vsock-port': {'type': 'integer', 'optional': 1, 'minimum': 0},
    },
}


def _bootdev(dev):
    """QemuServer.pm verify_bootdev: a drive but the EFI disk and TPM state, or a NIC, USB or PCI device."""
    drive = DRIVE.fullmatch(dev) and not dev.startswith(('efidisk', 'tpmstate'))
    return None if drive or BOOT_OTHER.fullmatch(dev) else "invalid boot device '{0}'".format(dev)


def _cpuset(text):
    """CpuSet.pm parse_cpuset, as QemuServer.pm pve_verify_cpuset reports it."""
    for part in text.split(','):
        m = re.fullmatch(r'\s*(\d+)(?:-(\d+))?\s*', part)
        if not m or int(m.group(2) or m.group(1)) < int(m.group(1)):
            return 'unable to parse cpuset option'
    return None


def _phys_bits(text):
    ok = text == 'host' or (re.fullmatch(r'\d{1,2}', text) and 8 <= int(text) <= 64)
    return None if ok else "value must be an integer between 8 and 64 or 'host'"


def _storage_pair(entry):
    """JSONSchema.pm verify_storagepair: `1`, `source:target` or one storage id."""
    if entry == '1':
        return None
    m = re.fullmatch(r'([^:]+):([^:]+)', entry)
    for sid in (m.groups() if m else (entry,)):
        why = formats.NAMED['pve-storage-id'](sid)
        if why:
            return "entry '{0}' contains invalid ID - {1}".format(entry, why)
    return None


def _vm_cpu_conf(text):
    """CPUConfig.pm: the keys of $cpu_fmt, then validate_vm_cpu_conf on the parsed value."""
    why = schema._property_string(CPU, text, 'cpu')
    if why:
        return why.rstrip('\n')
    parsed = {}
    for part in filter(None, text.split(',')):
        key, eq, val = part.partition('=')
        parsed[key if eq else 'cputype'] = val if eq else part
    cputype = parsed.get('cputype')
    if not cputype or cputype == '0':
        return 'CPU is missing cputype'
    if not cputype.startswith('custom-') and cputype not in CPU_MODELS:
        return "Built-in cputype '{0}' is not defined (missing 'custom-' prefix?)".format(cputype)
    flags = parsed.get('flags')
    if flags and flags != '0' and not all(f[:1] in '+-' and f[1:] in VM_CPU_FLAGS for f in flags.split(';')):
        return 'VM-specific CPU flags must be a subset of: ' + ', '.join(VM_CPU_FLAGS)
    if 'reported-model' in parsed:
        return "Property 'reported-model' not allowed in VM-specific CPU config."
    return None


def register():
    """Add the formats to fakepve's tables (idempotent; before fakepve first looks a format up)."""
    formats.REGISTERED.update(REGISTERED)
    formats.NAMED.update({
        'pve-qm-bootdev': _bootdev,
        'pve-qm-bootdisk': lambda v: None if DRIVE.fullmatch(v) else "invalid boot disk '{0}'".format(v),
        'pve-cpuset': _cpuset,
        'pve-phys-bits': _phys_bits,
        'storage-pair': _storage_pair,
        'pve-vm-cpu-conf': _vm_cpu_conf,
    })
    schema.registered.cache_clear()


register()
