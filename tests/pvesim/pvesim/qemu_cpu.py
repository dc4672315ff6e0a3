"""What QEMU's command line build refuses of a VM's CPU, machine, firmware and memory settings alone: OVMF on a 32-bit
CPU type, an EFI disk path without a format, CPU hot-plug on aarch64, the vIOMMU machine options (also at create and
config write), a NUMA node's reversed range, hot-plugged memory's DIMM alignment (docs/pve-semantics.md §61).

Sources: qemu-server 9.2.6 src/PVE/QemuServer.pm `config_to_command` (the order: OVMF, USB, the CPU count,
`print_cpu_device`, Memory.pm `config`, the clipboard, the NICs, `assert_valid_machine_property`, Virtiofs.pm);
src/PVE/QemuServer/CPUConfig.pm `get_cpu_bitness` (`$cputypes_32bit`), `print_cpu_device`; src/PVE/QemuServer/OVMF.pm
`print_ovmf_commandline`, `generate_ovmf_blockdev`; src/PVE/QemuServer/Machine.pm `assert_valid_machine_property`;
src/PVE/QemuServer/Memory.pm `parse_numa`, `foreach_dimm`, `config`; src/PVE/QemuServer/Helpers.pm
`parse_number_sets`. pvesim's nodes are x86_64, have no custom CPU models and no hugepages: where PVE would look at
them, it stops.
"""

import json
import re

from . import options as o
from . import pve_formats
from .pve_formats import CPU_MODELS
from . import qemu_command as qc  # its helpers, used at call time (qemu_command.py imports this module)

ROOT = 'root@pam'
CPU_32BIT = ('486', 'pentium', 'pentium2', 'pentium3', 'coreduo', 'athlon', 'kvm32', 'qemu32')
# CPUConfig.pm initialize_cpu_models' list without QEMU's model files (pve_formats.CPU_MODELS): aarch64's models, `max`
# in both, `host` only for the host's architecture (pvesim's nodes are x86_64); $builtin_models_by_arch for x86_64.
ARM = re.compile(r'(cortex-|neoverse-|a64fx)')
BUILTIN = sorted(m for m in CPU_MODELS if m.startswith('x86-64-v'))
MODELS = {'aarch64': sorted(m for m in CPU_MODELS if ARM.match(m) or m == 'max'),
          'x86_64': sorted(m for m in CPU_MODELS if not ARM.match(m) and m not in BUILTIN and m != 'host')}
VENDOR_AMD = re.compile(r'(athlon|phenom|Opteron|EPYC)')


def _machine_version(conf):
    """The pinned machine's version (`pc-i440fx-8.1+pve1`: (8, 1)); None for an unpinned one (the node's QEMU)."""
    machine = qc._props(conf.get('machine') or '')
    found = re.search(r'-(\d+)\.(\d+)', machine.get('type', machine.get('', '')))
    return (int(found.group(1)), int(found.group(2))) if found else None


def resolve_custom(conf):
    """CPUConfig.pm get_custom_model: a custom `cpu` stands for the model its definition reports (`reported-model`,
    which write_config stores, kvm64 when none was named), in get_cpu_bitness and get_cpu_options."""
    cpu = qc._props(conf.get('cpu') or '')
    name = (cpu.get('cputype', cpu.get('')) or '')
    model = pve_formats.CUSTOM_CPU_MODELS.get(name[len('custom-'):]) if name.startswith('custom-') else None
    return dict(conf, cpu=model.get('reported-model', 'kvm64')) if model is not None else conf


def firmware_error(conf):
    """config_to_command with `bios: ovmf`: CPUConfig.pm get_cpu_bitness (a `cpu` type of $cputypes_32bit on x86_64;
    the default qemu64 and the built-in x86-64-v* are 64-bit) dies "OVMF (UEFI) BIOS is not supported on 32-bit CPU
    types"; then OVMF.pm print_ovmf_commandline, unless SEV-SNP or TDX boot with -bios: an efidisk0 that is no volume
    (parse_volume_id with noerr) and has no `format` dies "efidisk format must be specified"."""
    if conf.get('bios') != 'ovmf':
        return None
    cpu = qc._props(resolve_custom(conf).get('cpu') or '')
    cputype = cpu.get('cputype', cpu.get('')) or 'qemu64'
    if conf.get('arch', 'x86_64') == 'x86_64' and cputype in CPU_32BIT:
        return 'OVMF (UEFI) BIOS is not supported on 32-bit CPU types'
    sev, tdx = qc._props(conf.get('amd-sev') or ''), qc._props(conf.get('intel-tdx') or '')
    if sev.get('type', sev.get('')) == 'snp' or tdx.get('type', tdx.get('')) == 'tdx':
        return None
    efidisk = qc._props(conf.get('efidisk0') or '')
    path = efidisk.get('file', efidisk.get(''))
    if path and not re.match(r'^[a-z][a-z0-9\-_.]*[a-z0-9]:.+$', path, re.I) and 'format' not in efidisk:
        return 'efidisk format must be specified'
    return None


def cpu_hotplug_error(conf):
    """config_to_command after the CPU count: with `cpu` hot-plug and a machine version from 2.7, print_cpu_device for
    each vCPU from the second (`vcpus`, else sockets x cores) dies on any arch but x86_64 (without a newline: PVE
    appends the file and line, which pvesim leaves out)."""
    maxcpus = int(conf.get('sockets') or conf.get('smp') or 1) * int(conf.get('cores') or 1)
    vcpus = int(conf.get('vcpus') or maxcpus)
    version = _machine_version(conf)
    if (conf.get('arch', 'x86_64') != 'x86_64' and 'cpu' in o.hotplug_features(conf.get('hotplug')) and vcpus >= 2
            and (version is None or version >= (2, 7))):
        return 'Hotplug of non x86_64 CPU not yet supported'
    return None


def machine_error(value):
    """Machine.pm assert_valid_machine_property: Intel's vIOMMU needs a q35 type and an aw-bits of 39 or 48; aw-bits
    needs a vIOMMU."""
    props = qc._props(value or '')
    viommu, aw = props.get('viommu'), props.get('aw-bits')
    if viommu == 'intel':
        if 'q35' not in (props.get('type') or props.get('') or ''):
            return 'to use Intel vIOMMU please set the machine type to q35'
        if aw and float(aw) not in (39, 48):
            return 'Intel vIOMMU supports only 39 or 48 bits as address width'
    if aw and not viommu:
        return 'cannot set aw-bits if no vIOMMU is configured'
    return None


def numa_range_error(node):
    """Memory.pm parse_numa, Helpers.pm parse_number_sets on `cpus`, then `hostnodes`: die "invalid range: $part ($2 <
    $1)" for a range whose end is below its start."""
    props = qc._props(node)
    for key in ('cpus', 'hostnodes'):
        for part in (props.get(key) or '').split(';'):
            found = re.fullmatch(r'\s*(\d+)-(\d+)\s*', part)
            if found and int(found.group(2)) < int(found.group(1)):
                return 'invalid range: {0} ({1} < {2})'.format(part, found.group(2), found.group(1))
    return None


def dimm_error(conf):
    """Memory.pm config with memory hot-plug, last: foreach_dimm adds DIMMs to the static 1024 MiB (32 of 512 MiB,
    then 32 of each double size) until the memory is reached; the one that goes past it dies "memory size ($memory)
    must be aligned to $dimm_size for hotplugging". pvesim has no hugepages; its nodes' address bits allow more
    memory than any seed gives."""
    if 'memory' not in o.hotplug_features(conf.get('hotplug')) or qc._set(conf.get('hugepages')):
        return None
    memory = o.current_memory(conf.get('memory'))
    current, size = 1024, 512
    for _ in range(8):
        for _ in range(32):
            if current >= memory:
                return None
            current += size
            if current > memory:
                return 'memory size ({0}) must be aligned to {1} for hotplugging'.format(memory, size)
        size *= 2
    return None


def _vendor(model):
    """initialize_cpu_models' vendors: the generic types `default`, aarch64's `ARM`, AMD's and Intel's."""
    if model in ('kvm32', 'kvm64', 'qemu32', 'qemu64', 'max', 'host'):
        return 'default'
    return 'ARM' if ARM.match(model) else 'AuthenticAMD' if VENDOR_AMD.match(model) else 'GenuineIntel'


def cpu_model_error(conf):
    """CPUConfig.pm get_cpu_options (config_to_command after the CPU count, before Memory.pm config): the `cpu` type
    (without one get_default_cpu_type: kvm64 or qemu64, on aarch64 host or max, by `kvm`, on by default only for the
    host's architecture), a built-in one as its reported model (qemu64), `Icelake-Client` as `Icelake-Server`
    ($depreacated_cpu_map), must be a model of the VM's architecture."""
    arch = conf.get('arch', 'x86_64')
    kvm = conf.get('kvm', '1' if arch == 'x86_64' else None) not in (None, '0', 0)
    cpu = qc._props(resolve_custom(conf).get('cpu') or '')
    cputype = cpu.get('cputype', cpu.get('')) or (('kvm64' if kvm else 'qemu64') if arch == 'x86_64' else
                                                   ('host' if kvm else 'max'))
    if arch == 'x86_64' and cputype in BUILTIN:
        cputype = 'qemu64'
    cputype = {'Icelake-Client': 'Icelake-Server', 'Icelake-Client-noTSX': 'Icelake-Server-noTSX'}.get(cputype, cputype)
    if not cputype.startswith('custom-') and cputype not in MODELS[arch] + (['host'] if arch == 'x86_64' else []):
        return "CPU model '{0}' does not exist for configured vCPU architecture '{1}'".format(cputype, arch)
    return None


class CpuModelsMixin:
    """The custom CPU models of the seed's `custom_cpu_models` (cpu-models.conf) and the two reads of CPU models:
    GET /nodes/{node}/capabilities/qemu/cpu (qemu-server src/PVE/API2/Qemu/CPU.pm `index`) and GET
    /cluster/qemu/custom-cpu-models (pve-manager PVE/API2/Cluster/Qemu/CustomCPUModels.pm `config`)."""

    def load_seed(self, path=None):
        path = super().load_seed(path)
        with open(path, encoding='utf-8') as fh:
            models = json.load(fh).get('custom_cpu_models', {})
        pve_formats.CUSTOM_CPU_MODELS.clear()
        pve_formats.CUSTOM_CPU_MODELS.update((k, dict(v)) for k, v in models.items())
        return path

    def _routes_cpu_models(self):
        return [('GET', '/nodes/{node}/capabilities/qemu/cpu', self._cpu_models_index),
                ('GET', '/cluster/qemu/custom-cpu-models', self._custom_cpu_models)]

    def _sees_custom(self, user, name):
        """CustomCPUModels.pm: any of Mapping.Modify, Mapping.Use, Mapping.Audit on /mapping/cpu/<name>."""
        return (user or ROOT) == ROOT or any(self.allowed(user, '/mapping/cpu/' + name, p)
                                              for p in ('Mapping.Modify', 'Mapping.Use', 'Mapping.Audit'))

    async def _custom_cpu_models(self, v, user):
        """CustomCPUModels.pm config (`user => 'all'`): the definitions this user may see, sorted by name, with
        `cputype` custom-<name> (parse_section_header) and the file's digest."""
        return [dict(m, cputype='custom-' + name, **{'reported-model': m.get('reported-model', 'kvm64')},
                     digest='0' * 40)
                for name, m in sorted(pve_formats.CUSTOM_CPU_MODELS.items()) if self._sees_custom(user, name)]

    async def _cpu_models_index(self, v, user):
        arch = v.get('arch') or 'x86_64'
        names = MODELS[arch] + (['host'] if arch == 'x86_64' else [])
        out = [{'name': m, 'custom': 0, 'vendor': _vendor(m)} for m in names]
        if arch == 'x86_64':
            out += [{'name': m, 'custom': 0, 'abstract': 1, 'vendor': 'default'} for m in BUILTIN]
        # custom models whose reported model the architecture has, to a user with Sys.Audit on /nodes or one who
        # sees the definition
        for name, m in sorted(pve_formats.CUSTOM_CPU_MODELS.items()):
            reported = m.get('reported-model', 'kvm64')
            seen = self.allowed(user or ROOT, '/nodes', 'Sys.Audit') or self._sees_custom(user, name)
            if reported in names and seen:
                out.append({'name': 'custom-' + name, 'custom': 1, 'vendor': _vendor(reported)})
        return out
