"""A node's PCI devices, as GET /nodes/{node}/hardware/pci lists them and as a start's `hostpciN` `host` ids are looked
up (docs/pve-semantics.md §72), from the seed's `node_devices` ({node: {"pci": {id: {id: "<vendor>:<device>",
class?}}}}, mappings.py); a node `node_devices` does not list has no PCI device: the list is empty and a start refuses
every `host` id, so the list and the start always agree (tests/pvesim/README.md).

Sources: pve-manager 9.2.11 PVE/API2/Hardware/PCI.pm `pci_scan` (`Sys.Audit` or `Sys.Modify` on `/`; the
`pci-class-blacklist`, by default 05;06;0b, hides those classes); pve-common src/PVE/SysFSTools.pm `lspci` (an id filter
matches the full id's start, its `0000:` domain optional); qemu-server 9.2.6 src/PVE/QemuServer/PCI.pm `parse_hostpci`
(`no PCI device found for '<id>'`).
"""

from fakepve.model import PveError

ROOT = 'root@pam'
DEFAULT_CLASS = '0x030000'  # a VGA controller: what pvesim's seeds pass through


def lspci(devices, filter_id):
    """SysFSTools.pm lspci with an id filter: the ids of `devices` that start with it, `0000:` optional."""
    return [d for d in sorted(devices) if d.startswith(filter_id) or (d.startswith('0000:') and
                                                                      d[5:].startswith(filter_id))]


class NodePciMixin:
    """GET /nodes/{node}/hardware/pci and the `host` ids a start looks up."""

    def _routes_node_pci(self):
        return [('GET', '/nodes/{node}/hardware/pci', self._pci_scan)]

    def _node_pci(self, node):
        """The node's PCI devices ({id: info}); none on a node the seed does not list."""
        return (getattr(self, 'node_devices', {}).get(node) or {}).get('pci', {})

    async def _pci_scan(self, v, user):
        """PCI.pm pci_scan: the node's devices but the blacklisted classes (`^0x(?:<class>|...)`)."""
        who = user or ROOT
        if who != ROOT and not any(self.allowed(who, '/', p) for p in ('Sys.Audit', 'Sys.Modify')):
            raise PveError(403, 'Permission check failed (/, Sys.Audit|Sys.Modify)')
        blacklist = v.get('pci-class-blacklist')
        classes = [c.strip() for c in ('05;06;0b' if blacklist is None else blacklist).replace(',', ';').split(';')]
        classes = [c for c in classes if c]
        verbose = str(v.get('verbose', 1)) not in ('0', 'false', 'no', 'off')
        out = []
        for pid, info in sorted(self._node_pci(v['node']).items()):
            cls = info.get('class', DEFAULT_CLASS)
            if any(cls.startswith('0x' + c) for c in classes):
                continue
            vendor, _, device = info.get('id', '0000:0000').partition(':')
            item = {'id': pid, 'class': cls, 'vendor': '0x' + vendor, 'device': '0x' + device,
                    'iommugroup': info.get('iommugroup', -1)}
            if info.get('mdev'):
                item['mdev'] = 1
            if verbose:
                item.update(vendor_name='vendor ' + vendor, device_name='device ' + device)
            out.append(item)
        return out

    def _pci_missing(self, vm):
        """PCI.pm parse_hostpci's lspci of a `host` id: a function giving the id's error when the VM's node lacks
        it."""
        devices = self._node_pci(vm.node)

        def missing(pid):
            if lspci(devices, pid):
                return None
            return "no PCI device found for '{0}'".format(pid)
        return missing
