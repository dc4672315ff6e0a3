"""Device and directory mappings (mapping/pci.cfg, usb.cfg, dir.cfg) and what PVE refuses of a VM that names one: a
start on a node the mapping does not cover, a migration to a node it does not cover, a running VM's mapped device that
cannot migrate live.

The mappings come from the seed's `mappings` ({"pci"|"usb"|"dir": [{id, map: ["node=pve1,path=...", ...],
live-migration-capable?, mdev?}]}); a node's hardware and directories from `node_devices` ({node: {"pci": {path: {id,
iommugroup, subsystem-id?, mdev?}}, "usb": {"<bus>-<port>": "<vendor>:<product>"}, "dirs": [path]}}), which each
`assert_valid` compares an entry with; on a node `node_devices` does not list, every entry is valid.

Sources: pve-manager 9.2.11 PVE/API2/Cluster/Mapping/PCI.pm, USB.pm, Dir.pm `index` (the entries the user holds
Mapping.Modify, Mapping.Use or Mapping.Audit on; `check-node` adds `checks`, USB.pm `errors`); pve-guest-common
src/PVE/Mapping/PCI.pm, USB.pm `find_on_current_node`, `get_node_mapping` and `assert_valid`, Dir.pm
`find_on_current_node` and `assert_valid`; qemu-server 9.2.6
src/PVE/QemuServer/PCI.pm `parse_hostpci`, src/PVE/QemuServer/USB.pm `parse_usb_device`, src/PVE/QemuServer/Virtiofs.pm
`assert_virtiofs_config`, src/PVE/QemuMigrate.pm `prepare`, src/PVE/QemuMigrate/Helpers.pm `check_local_resources`;
docs/pve-semantics.md §64.
"""

import json
import re

from .qemu_command import _props

ROOT = 'root@pam'
SEE = ('Mapping.Modify', 'Mapping.Use', 'Mapping.Audit')


def named(key, value):
    """check_local_resources: (kind, id) of a mapped usbN (not SPICE), hostpciN or virtiofsN (dirid)."""
    if re.fullmatch(r'usb\d+', key):
        props = _props(value, 'host')
        if props.get('host', '').lower() == 'spice' or not props.get('mapping'):
            return None
        return 'usb', props['mapping']
    if re.fullmatch(r'hostpci\d+', key):
        mapping = _props(value, 'host').get('mapping')
        return ('pci', mapping) if mapping else None
    if re.fullmatch(r'virtiofs\d+', key):
        return 'dir', _props(value, 'dirid').get('dirid')
    return None


class MappingsMixin:
    """The cluster's mappings, their lists, and the start and migration refusals they decide."""

    def load_seed(self, path=None):
        path = super().load_seed(path)
        with open(path, encoding='utf-8') as fh:
            seed = json.load(fh)
        self.mappings = {kind: {m['id']: dict(m) for m in seed.get('mappings', {}).get(kind, [])}
                         for kind in ('pci', 'usb', 'dir')}
        self.node_devices = dict(seed.get('node_devices', {}))
        return path

    def _invalid(self, kind, mid, entry, node):
        """Mapping/<kind>.pm assert_valid of one entry on `node`: its error, with Perl's newline, or None."""
        devices = self.node_devices.get(node)
        if devices is None:
            return None
        props = _props(entry, 'node')
        if kind == 'dir':
            # Dir.pm assert_valid (pve_verify_path aside: pvesim's seeds hold no such path)
            return None if props.get('path') in devices.get('dirs', []) else 'Path {0} does not exist\n'.format(
                props.get('path'))
        if kind == 'usb':
            usb = devices.get('usb', {})
            if props.get('path'):
                real = usb.get(props['path'])
                if real is None:
                    return "usb device '{0}' not found\n".format(props['path'])
                return None if real == props.get('id') else "'id' does not match for '{0}' ({1} != {2})\n".format(
                    mid, real, props.get('id'))
            return None if props.get('id') in usb.values() else "usb device '{0}' not found\n".format(props.get('id'))
        # PCI.pm assert_valid: each `;`-separated device; `iommugroup` on the first only; mdev from the mapping
        for idx, path in enumerate(props.get('path', '').split(';')):
            path = path if re.search(r'\.[a-f0-9]', path, re.I) else path + '.0'
            info = devices.get('pci', {}).get(path)
            if info is None:
                return "pci device '{0}' not found\n".format(path)
            expected = {'id': info.get('id'), 'iommugroup': info.get('iommugroup'),
                        'subsystem-id': info.get('subsystem-id'), 'mdev': 1 if info.get('mdev') else 0}
            configured = {k: props.get(k) for k in ('id', 'iommugroup', 'subsystem-id')}
            configured['mdev'] = 1 if str(self.mappings['pci'][mid].get('mdev', 0)) == '1' else 0
            for prop in sorted(expected):
                want, have = expected[prop], configured[prop]
                if (prop == 'iommugroup' and idx > 0) or (want is None and have is None):
                    continue
                if have is None:
                    return "missing expected property '{0}' for device '{1}'\n".format(prop, path)
                if want is None:
                    return "unexpected property '{0}' configured for device '{1}'\n".format(prop, path)
                want, have = str(want).replace('0x', ''), str(have).replace('0x', '')
                if want != have:
                    return "'{0}' does not match for '{1}' ({2} != {3})\n".format(prop, mid, want, have)
        return None

    def _routes_mappings(self):
        return [('GET', '/cluster/mapping/' + kind, self._mapping_index(kind)) for kind in ('pci', 'usb', 'dir')]

    def _mapping_index(self, kind):
        async def index(v, user):
            """API2/Cluster/Mapping/<kind>.pm index (`user => 'all'`): the entries the user may see; with
            `check-node`, each entry's `checks` (none: pvesim's hardware matches every entry)."""
            who = user or ROOT
            out = []
            for mid, entry in sorted(self.mappings[kind].items()):
                path = '/mapping/{0}/{1}'.format(kind, mid)
                if who != ROOT and not any(self.allowed(who, path, p) for p in SEE):
                    continue
                item = dict(entry, id=mid, digest='0' * 40)
                node = v.get('check-node')
                if node:
                    entries = self._node_entries(kind, mid, node)
                    checks = [] if entries else [{'severity': 'warning', 'message': 'No mapping for node {0}.'
                                                  .format(node)}]
                    checks += [{'severity': 'error', 'message': 'Invalid configuration: ' + err}
                               for err in (self._invalid(kind, mid, e, node) for e in entries) if err]
                    item['errors' if kind == 'usb' else 'checks'] = checks  # USB.pm names it `errors`
                out.append(item)
            return out
        return index

    def _node_entries(self, kind, mid, node):
        """Mapping/*.pm get_node_mapping: None for an id that does not exist, else the entries for the node."""
        entry = getattr(self, 'mappings', {}).get(kind, {}).get(mid)
        if entry is None:
            return None
        return [m for m in entry.get('map', []) if _props(m, 'node').get('node') == node]

    def _pci_mapped(self, vm):
        """PCI.pm parse_hostpci of a `mapping` on the VM's node: find_on_current_node (not found when it names no
        entry there), assert_valid of each entry, then one alternative per entry (its `path`), as (error, paths)."""
        def mapped(mid):
            entries = self._node_entries('pci', mid, vm.node)
            if not entries:
                return "PCI device mapping not found for '{0}'".format(mid), []
            for err in (self._invalid('pci', mid, e, vm.node) for e in entries):
                if err:
                    return 'PCI device mapping invalid (hardware probably changed): ' + err.strip(), []
            return None, [_props(e, 'node').get('path', '') for e in entries]
        return mapped

    def _usb_mapped_error(self, vm):
        """USB.pm parse_usb_device (from get_usb_devices, after the PCI devices) of each mapped usbN."""
        for i in range(20):
            props = _props(vm.config.get('usb{0}'.format(i)), 'host')
            if not props.get('mapping') or props.get('host'):
                continue  # parse_usb_device: `return if $value && $mapping`
            entries = self._node_entries('usb', props['mapping'], vm.node)
            if not entries:
                return "USB device mapping not found for '{0}'".format(props['mapping'])
            if len(entries) > 1:
                return 'More than one USB mapping per host not supported'
            err = self._invalid('usb', props['mapping'], entries[0], vm.node)
            if err:
                return 'USB Mapping invalid (hardware probably changed): ' + err.strip()
        return None

    def _start_refusal(self, vm):
        """config_to_command: the PCI and USB devices are values.py's (with `_pci_mapped` and `_usb_mapped_error`);
        the virtio-fs directories (Virtiofs.pm assert_virtiofs_config, Dir.pm find_on_current_node) come after
        the values it checks."""
        conf, node = vm.config, vm.node
        refused = super()._start_refusal(vm)
        if refused and not refused.startswith('Please disable ACLs for virtiofs'):
            return refused
        # Virtiofs.pm assert_virtiofs_config looks the directory up (find_on_current_node) before its ACL check
        for i in range(10):
            dirid = _props(conf.get('virtiofs{0}'.format(i)), 'dirid').get('dirid')
            if not dirid:
                continue
            entries = self._node_entries('dir', dirid, node)
            if entries is None:
                return 'Directory ID {0} does not exist.'.format(dirid)
            if len(entries) > 1:
                return 'More than than one directory mapping for node {0}.'.format(node)
            if not entries:
                return 'No directory mapping for node {0}.'.format(node)
            if refused:
                return refused  # the ACL check, before assert_valid
            err = self._invalid('dir', dirid, entries[0], node)
            if err:
                return 'directory mapping invalid: ' + err.strip()
        return refused

    def mapped_migration_error(self, vm, target, running):
        """QemuMigrate.pm prepare after the blocking local devices: check_local_resources' mapped devices missing on
        the target (an id that does not exist makes its `$entry->@*` die in Perl), then, running, every mapped
        device but a `live-migration-capable` PCI mapping, `<key>:<id>` sorted by key."""
        missing, not_live = [], []
        for key in sorted(vm.config):
            found = named(key, vm.config[key])
            if not found:
                continue
            kind, mid = found
            entries = self._node_entries(kind, mid, target)
            if entries is None:
                return "Can't use an undefined value as an ARRAY reference"
            if not entries:
                missing.append(key)
            live = str(self.mappings[kind][mid].get('live-migration-capable', 0)) == '1'
            if not (kind == 'pci' and live):
                not_live.append('{0}:{1}'.format(key, mid))
        if missing:
            return "can't migrate to '{0}': missing mapped devices {1}".format(target, ', '.join(missing))
        if running and not_live:
            return "can't live migrate running VM which uses following mapped devices: " + ', '.join(not_live)
        return None
