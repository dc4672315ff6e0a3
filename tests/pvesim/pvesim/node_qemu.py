"""A node's QEMU (docs/pve-semantics.md §73): its version (the seed's `node_qemu` {node: "9.2.0"}, else pvesim's
QEMU, `DEFAULT`), the machine versions GET /nodes/{node}/capabilities/qemu/machines lists, the `pve-qemu-kvm` package
GET /nodes/{node}/apt/versions shows, and the start refusal of a pinned machine that QEMU cannot run.

Sources: qemu-server 9.2.6 src/PVE/QemuServer.pm `config_to_command` (its first check: a release candidate, micro 90
and above, skips it; `min_version`; `can_run_pve_machine_version`), src/PVE/QemuServer/Machine.pm
`$PVE_MACHINE_VERSION`, `extract_version_parts`, `get_vm_machine` (an unpinned machine runs the latest version; a
pinned one without `+pveN` gets `+pve0`), src/PVE/QemuServer.pm `vm_start_nolock` (a resumed VM runs its
`runningmachine`), src/PVE/API2/Qemu/Machine.pm `types` (`user => 'all'`, `arch`: the package's
machine-versions-<arch>.json and each version's `+pveN` revisions, newest first); pve-manager 9.2.11
PVE/API2/APT.pm `versions` (Sys.Audit on /nodes/{node}; `Version` the candidate, `OldVersion` the installed one).
"""

import json
import re

from fakepve.model import PveError

ROOT = 'root@pam'
DEFAULT = '10.1.2'  # pvesim's QEMU (qemu-server 9.2.6 builds against pve-qemu-kvm 10.1)

# Machine.pm $PVE_MACHINE_VERSION: the highest +pveN per version and its revisions' notes
PVE_MACHINE_VERSION = {
    '4.1': {'+pve1': 'Introduction of pveX versioning, no changes.',
            '+pve2': 'Increases the number of SCSI drives supported.'},
    '9.2': {'+pve1': 'Disables S3/S4 power states by default.'},
    '10.0': {'+pve1': 'Set host_mtu vNIC option even with default value for migration compat.'},
    '11.0': {'+pve1': 'Use host_tunnel=off by default for VirtIO NICs.',
             '+pve2': 'Enable hv_emcs for Windows 11/2022/2025 to mitigate issues with VBS.'},
}

# QEMU's machine versions (releases major.minor) from 2.0: 2.0-2.12, then three a year (x.0, x.1, x.2)
RELEASES = [(2, m) for m in range(13)] + [(3, 0), (3, 1)] + [(x, m) for x in range(4, 12) for m in range(3)]

# Machine.pm extract_version_parts
VERSION = re.compile(r'^(?:pc(?:-i440fx|-q35)?|virt)-(\d+)\.(\d+)(?:\.(\d+))?(?:\+pve(\d+))?(?:\.pxe)?')


def _parts(version):
    """major, minor, micro of a QEMU version string (micro 0 when not given)."""
    nums = [int(n) for n in re.findall(r'\d+', version)[:3]]
    return tuple(nums + [0] * (3 - len(nums)))


def machine_versions(kvmver):
    """The (major, minor) machine versions a QEMU of `kvmver` has: the releases up to its own; a release candidate
    (micro 90 and above) has the release it leads to."""
    major, minor, micro = _parts(kvmver)
    top = (major, minor)
    if micro >= 90:
        top = (major + 1, 0) if minor == 2 else (major, minor + 1)
    return [r for r in RELEASES if r <= top]


def get_vm_machine(conf, resume):
    """Machine.pm get_vm_machine with vm_start_nolock's forcemachine (`runningmachine` on a resume): the machine type
    a start pins, or None for an unpinned one (the node's latest version; a Windows ostype's pinned version is one
    the node runs: windows_get_pinned_machine_version falls back to the latest)."""
    def kind(value):
        first = (value or '').split(',')
        for i, part in enumerate(first):
            k, eq, v = part.partition('=')
            if eq and k == 'type':
                return v
            if not eq and i == 0:
                return part
        return ''
    machine = (kind(conf.get('runningmachine')) if resume else '') or kind(conf.get('machine'))
    if not VERSION.match(machine):
        return None
    if not re.search(r'\+pve\d+?(?:\.pxe)?$', machine):
        pxe = machine.endswith('.pxe')
        machine = (machine[:-4] if pxe else machine) + '+pve0' + ('.pxe' if pxe else '')
    return machine


def machine_error(machine, kvmver, node):
    """config_to_command's first check of `machine` on a node whose QEMU is `kvmver`, its words or None."""
    major, minor, micro = _parts(kvmver)
    if micro >= 90:
        return None  # "warning: Installed QEMU version (...) is a release candidate, ignoring version checks"
    m = VERSION.match(machine)
    mmajor, mminor, pve = int(m.group(1)), int(m.group(2)), int(m.group(4) or 0)
    if (major, minor) < (mmajor, mminor):
        return ("Installed QEMU version '{0}' is too old to run machine type '{1}', please upgrade node '{2}'"
                .format(kvmver, machine, node))
    highest = len(PVE_MACHINE_VERSION.get('{0}.{1}'.format(mmajor, mminor), {}))
    if pve and pve > highest:
        return ("Installed qemu-server (max feature level for {0}.{1} is pve{2}) is too old to run machine type "
                "'{3}', please upgrade node '{4}'".format(mmajor, mminor, highest, machine, node))
    return None


class NodeQemuMixin:
    """The node's QEMU version, its machine list, its package versions and the start's machine check."""

    def load_seed(self, path=None):
        path = super().load_seed(path)
        with open(path, encoding='utf-8') as fh:
            self.node_qemu = dict(json.load(fh).get('node_qemu', {}))
        return path

    def _routes_node_qemu(self):
        return [('GET', '/nodes/{node}/capabilities/qemu/machines', self._machine_types),
                ('GET', '/nodes/{node}/apt/versions', self._apt_versions)]

    def _kvm_version(self, node):
        """kvm_user_version on `node`: the seed's `node_qemu`, else pvesim's QEMU."""
        return getattr(self, 'node_qemu', {}).get(node, DEFAULT)

    async def _machine_types(self, v, user):
        """Machine.pm types: the machine-versions list of `arch` (the node's, x86_64, by default) with each
        version's +pveN revisions, sorted by machine_version_cmp, newest first."""
        arch = v.get('arch') or 'x86_64'
        kinds = [('virt', 'virt')] if arch == 'aarch64' else [('pc-i440fx', 'i440fx'), ('pc-q35', 'q35')]
        out = []
        for major, minor in machine_versions(self._kvm_version(v['node'])):
            version = '{0}.{1}'.format(major, minor)
            for prefix, kind in kinds:
                out.append({'id': '{0}-{1}'.format(prefix, version), 'type': kind, 'version': version})
                for rev, changes in sorted(PVE_MACHINE_VERSION.get(version, {}).items()):
                    out.append({'id': '{0}-{1}{2}'.format(prefix, version, rev), 'type': kind,
                                'version': version + rev, 'changes': changes})

        def key(item):
            m = VERSION.match(item['id'])
            return (int(m.group(1)), int(m.group(2)), int(m.group(4) or 0))
        return sorted(out, key=key, reverse=True)

    async def _apt_versions(self, v, user):
        """APT.pm versions: Sys.Audit on /nodes/{node}; the important packages, installed (`OldVersion`)."""
        who, node = user or ROOT, v['node']
        if who != ROOT and not self.allowed(who, '/nodes/' + node, 'Sys.Audit'):
            raise PveError(403, 'Permission check failed (/nodes/{0}, Sys.Audit)'.format(node))
        packages = [('proxmox-ve', '9.1.0'), ('pve-manager', self.version), ('pve-qemu-kvm',
                    self._kvm_version(node) + '-1'), ('qemu-server', '9.2.6')]
        return [{'Package': name, 'Title': name, 'Version': version, 'OldVersion': version, 'Origin': 'Proxmox',
                 'Section': 'admin', 'Arch': 'amd64', 'Priority': 'optional', 'Description': name,
                 'CurrentState': 'Installed'} for name, version in packages]

    def _start_refusal(self, vm):
        """config_to_command's first check: the machine the start pins against the node's QEMU, before the rest
        (values.py)."""
        conf = vm.config
        resume = vm.lock == 'suspended' or bool(conf.get('vmstate'))
        machine = get_vm_machine(conf, resume)
        words = machine and machine_error(machine, self._kvm_version(vm.node), vm.node)
        return words or super()._start_refusal(vm)
