"""Refusals PVE decides from a VM's config values and the cluster's facts: a VNC clipboard on a display that cannot
take it, a start the node's CPUs cannot hold or with memory hot-plug but no NUMA, a hibernation that HA or the VM's
devices forbid; and the facts themselves: a node's CPU count (`maxcpu`, only for users with Sys.Audit on the node)
and the VMs HA manages (a seed VM's `ha_state`); cloud-init `sshkeys` that are no public keys; a `hookscript` that
is no snippet.

Sources: qemu-server 9.2.6 src/PVE/QemuServer.pm `assert_clipboard_config`, `config_to_command`,
`parse_hotplug_features`; src/PVE/QemuServer/Memory.pm `config`; src/PVE/API2/Qemu.pm `create_vm`, `update_vm_api`,
`vm_suspend`; src/PVE/QemuServer/RunState.pm `vm_suspend`; src/PVE/QemuMigrate/Helpers.pm
`check_non_migratable_resources`; pve-common src/PVE/Tools.pm `validate_ssh_public_keys` (which runs OpenSSH's
`ssh-keygen -l`: `do_fingerprint`, `sshkey_read`, `sshkey_from_blob`); pve-manager PVE/API2/Nodes.pm `index`, PVE/API2/Cluster.pm `resources`,
PVE/API2Tools.pm `extract_node_stats`; pve-guest-common src/PVE/GuestHelpers.pm `check_hookscript`;
docs/pve-semantics.md §43, §58.5.
"""

import base64
import binascii
import json
import re
import struct
from urllib.parse import unquote

from fakepve.model import TaskError
from fakepve.routing import die, param_error
from fakepve.server import USER, ok

from . import options as o
from . import qemu_command as qc
from . import qemu_cpu as qcpu
from . import qemu_devices as qd

# extract_node_stats with $exclude_stats: what a user without Sys.Audit on the node does not see
NODE_STATS = ('uptime', 'cpu', 'mem', 'disk', 'maxcpu', 'maxmem', 'maxdisk')
CLIPBOARD_TYPES = re.compile(r'^(std|cirrus|vmware|virtio|qxl)')


def clipboard_error(vga):
    """QemuServer.pm assert_clipboard_config: `clipboard=vnc` only with a type matching its pattern (no type: the
    default, which takes it)."""
    if not vga:
        return None
    kind, clipboard = None, None
    for part in str(vga).split(','):
        key, eq, val = part.partition('=')
        if not eq:
            kind = key
        elif key == 'type':
            kind = val
        elif key == 'clipboard':
            clipboard = val
    if clipboard == 'vnc' and kind and not CLIPBOARD_TYPES.match(kind):
        return 'vga type {0} is not compatible with VNC clipboard'.format(kind)
    return None


def truthy(value):
    """A config value Perl takes as true (`$conf->{numa}`): set, not empty, not 0."""
    return value is not None and str(value) not in ('', '0')


# sshkey_from_blob: each key type's fields after its name (str: a string, n: an mpint, (str, len): a string of that
# length, ('=', s): the string s)
KEY_FIELDS = {
    'ssh-ed25519': [('str', 32)],
    'sk-ssh-ed25519@openssh.com': [('str', 32), 'str'],
    'ssh-rsa': ['str', 'rsa-n'],
    'ssh-dss': ['str', 'str', 'str', 'str'],
    'ecdsa-sha2-nistp256': [('=', b'nistp256'), ('str', 65)],
    'ecdsa-sha2-nistp384': [('=', b'nistp384'), ('str', 97)],
    'ecdsa-sha2-nistp521': [('=', b'nistp521'), ('str', 133)],
    'sk-ecdsa-sha2-nistp256@openssh.com': [('=', b'nistp256'), ('str', 65), 'str'],
}


def _blob_is_key(kind, text):
    """sshkey_read: the base64 blob names `kind` and holds its fields and nothing more (an RSA modulus of at least
    SSH_RSA_MINIMUM_MODULUS_SIZE, 1024 bits)."""
    if kind not in KEY_FIELDS:
        return False
    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False

    def string(at):
        if at + 4 > len(blob):
            return None, at
        (size,) = struct.unpack('>I', blob[at:at + 4])
        if at + 4 + size > len(blob):
            return None, at
        return blob[at + 4:at + 4 + size], at + 4 + size

    first, at = string(0)
    if first != kind.encode():
        return False
    for field in KEY_FIELDS[kind]:
        value, at = string(at)
        if value is None:
            return False
        if field == 'rsa-n' and int.from_bytes(value, 'big').bit_length() < 1024:
            return False
        if isinstance(field, tuple) and (field[0] == '=' and value != field[1]
                                         or field[0] == 'str' and len(value) != field[1]):
            return False
    return at == len(blob)


def ssh_keys_error(encoded):
    """Qemu.pm create_vm and update_vm_api: `uri_unescape`, then Tools.pm validate_ssh_public_keys: `ssh-keygen -l`
    on each line not blank, which reads a key (`<type> <base64> [comment]`) at the start of the line or after one
    word (authorized_keys options, known_hosts host names); a comment line is no key."""
    for line in unquote(str(encoded)).split('\n'):
        if not line.strip():
            continue
        words = re.findall(r'(?:[^ \t"]|"[^"]*"?)+', line)  # a quoted option value stays in its word
        if not any(len(words) > i + 1 and _blob_is_key(words[i], words[i + 1]) for i in (0, 1)):
            return 'SSH public key validation error'
    return None


class ValuesMixin:
    """The value rules of PVE's handlers and of QEMU's command line, and the node and HA facts they read."""

    def _node_cpus(self, node):
        """The node's CPU count (`/proc/cpuinfo`'s, `maxcpu`): a seed's `node_cpus` {node: n}, else fakepve's 4."""
        return int(getattr(self, 'node_cpus', {}).get(node, 4))

    def _node_entry(self, user, item):
        """A node entry of /nodes or /cluster/resources: its CPU count; no stats without Sys.Audit on the node."""
        if item.get('type', 'node') != 'node' or 'node' not in item:
            return item
        if 'maxcpu' in item:
            item['maxcpu'] = self._node_cpus(item['node'])
        if not self.allowed(user, '/nodes/' + item['node'], 'Sys.Audit'):
            for key in NODE_STATS:
                item.pop(key, None)
        return item

    async def _nodes(self, request):
        data = json.loads((await super()._nodes(request)).body)['data']
        return ok([self._node_entry(request[USER], item) for item in data])

    async def _resources(self, request):
        data = json.loads((await super()._resources(request)).body)['data']
        return ok([self._node_entry(request[USER], item) if item.get('type') == 'node' else item for item in data])

    async def ceph_io(self, vm, keys=None):
        """Qemu.pm create_vm's task, after create_disks: assert_clipboard_config on the new config (a failure frees
        the new volumes and fails the task as `unable to create VM <vmid> - <error>`, fakepve's create body does)."""
        if vm.lock == 'create':
            # then Machine.pm check_and_pin_machine_string (assert_valid_machine_property, qemu_cpu.py, §61)
            words = clipboard_error(vm.config.get('vga')) or qcpu.machine_error(vm.config.get('machine'))
            if words:
                raise TaskError(words)
        await super().ceph_io(vm, keys)

    async def _qm_create(self, v, user):
        """Qemu.pm create_vm: the `sshkeys` before quorum, pool and privileges (a 500)."""
        if v.get('sshkeys') is not None and ssh_keys_error(v['sshkeys']):
            raise die(ssh_keys_error(v['sshkeys']))
        return await super()._qm_create(v, user)

    def _update_prepare(self, vm, user, v):
        """Qemu.pm update_vm_api: the `sshkeys` before anything else of the handler (a 500)."""
        if v.get('sshkeys') is not None and ssh_keys_error(v['sshkeys']):
            raise die(ssh_keys_error(v['sshkeys']))
        return super()._update_prepare(vm, user, v)

    def _check_hookscript(self, volid):
        """Qemu.pm update_vm_api (not create_vm) runs pve-guest-common GuestHelpers.pm check_hookscript on `hookscript`,
        a parameter error on the key: Storage.pm `path` of the volume (a storage that does not exist is refused
        there), then its content type must be `snippets`. (That the file exists: hook_scsi.py, from the storage's
        `files`; that it is executable is not modelled. A name the storage's parser refuses is PVE's
        `unable to parse ...`; pvesim calls it another content.)"""
        sid, _, volname = volid.partition(':')
        if sid not in self.storages:
            raise param_error(hookscript="storage '{0}' does not exist".format(sid))
        if not volname.startswith('snippets/'):
            raise param_error(hookscript="'{0}' is not in the snippets directory".format(volid))

    def _check_clipboard(self, value, key='vga'):
        """Qemu.pm update_vm_api, when its loop reaches `vga` (assert_clipboard_config) or `machine` (Machine.pm
        assert_valid_machine_property, qemu_cpu.py, §61); the keys before it are written by then."""
        words = clipboard_error(value) if key == 'vga' else qcpu.machine_error(value)
        if words:
            raise die(words)

    def _pci_mapped(self, vm):
        """What a hostpciN's mapping gives parse_hostpci (mappings.py); None: mappings not modelled."""
        return None

    def _usb_mapped_error(self, vm):
        """USB.pm parse_usb_device of the mapped USB devices (mappings.py)."""
        return None

    def _start_refusal(self, vm):
        """QemuServer.pm config_to_command, in vm_start's task with the pending values applied: sockets x cores
        above the node's CPUs, then Memory.pm config (memory hot-plug: NUMA, no custom topology, at least 1024 MiB,
        no virtio-fs), then the VNC clipboard."""
        conf = vm.config
        # (the volumes' content types come before, in lifecycle.py's start, as vm_start_nolock checks them before it
        # activates the volumes.) qemu_cpu.py: OVMF (§61); then the PCI devices (§62) and qemu_command.py's USB.pm,
        # before the CPU count (§59)
        # the mapped devices in their places (mappings.py): each PCI one with its hostpciN, then the USB ones (§70)
        words = (qcpu.firmware_error(conf) or qd.hostpci_error(conf, self._pci_mapped(vm), self._pci_missing(vm))
                 or self._usb_mapped_error(vm) or qc.usb_error(conf))
        if words:
            return words
        sockets = int(conf.get('sockets') or conf.get('smp') or 1)
        cores = int(conf.get('cores') or 1)
        allowed = self._node_cpus(vm.node)
        if allowed < sockets * cores:
            return 'MAX {0} vcpus allowed per VM on this node'.format(allowed)
        if qcpu.cpu_hotplug_error(conf) or qcpu.cpu_model_error(conf):
            # qemu_cpu.py: print_cpu_device, then get_cpu_options (§61)
            return qcpu.cpu_hotplug_error(conf) or qcpu.cpu_model_error(conf)
        if 'memory' in o.hotplug_features(conf.get('hotplug')):
            # Memory.pm config with memory hot-plug ($STATICMEM 1024, per socket with 1 GiB hugepages)
            if not truthy(conf.get('numa')):
                return 'NUMA needs to be enabled for memory hotplug'
            if any(conf.get('numa{0}'.format(i)) for i in range(8)):
                return 'cannot enable memory hotplugging with custom NUMA topology'
            static = 1024 * (sockets if str(conf.get('hugepages')) == '1024' else 1)
            if o.current_memory(conf.get('memory')) < static:
                return 'minimum memory must be {0}MB'.format(static)
            if any(re.fullmatch(r'virtiofs\d+', k) for k in conf):
                return 'Memory hotplug does not work in combination with virtio-fs.'
        # qemu_command.py: the rest of Memory.pm config, then the clipboard, the NICs and virtio-fs (§59)
        hotplug = 'memory' in o.hotplug_features(conf.get('hotplug'))
        # qemu_cpu.py: the DIMMs last in Memory.pm config, the vIOMMU after the NICs (§61); the drive loop (§62)
        return (qc.numa_error(conf, hotplug, o.current_memory(conf.get('memory'))) or qcpu.dimm_error(conf)
                or clipboard_error(conf.get('vga')) or qd.drive_error(conf, self.storages, self._parse_volname)
                or qc.mtu_error(conf) or qcpu.machine_error(conf.get('machine')) or qc.virtiofs_error(conf))

    async def _do_suspend(self, vm, user, p):
        """Qemu.pm vm_suspend with `todisk`: not running, then HA (`vm_is_ha_managed`), then a passed-through PCI
        device, before the task; in the task (RunState.pm vm_suspend, after the lock) the resources whose state
        cannot be saved (check_non_migratable_resources)."""
        if str(p.get('todisk', '0')) not in ('1', 'true'):
            return await super()._do_suspend(vm, user, p)
        self._need_running(vm)
        if vm.ha_managed:
            raise die('Cannot suspend HA managed VM to disk')
        self._todisk_checks(vm, user, p)  # handler_perms.py: VM.Config.Disk, a PCI device, the state's storage
        skiplock = self._skiplock(user, p)

        async def body():
            self._suspend_lock(vm, skiplock, True)  # run_state.py: RunState.pm vm_suspend checks the lock first
            blockers = [k for k in ('amd-sev', 'intel-tdx') if truthy(vm.config.get(k))]
            if any(re.fullmatch(r'virtiofs\d+', k) for k in vm.config):
                blockers.append('virtiofs')
            if blockers:
                raise TaskError('Cannot live-migrate, snapshot (with RAM), or hibernate a VM with: '
                                + ', '.join(blockers))
            await self.ceph_io(vm)
            vm.status = vm.qmpstatus = 'stopped'
            vm.lock = 'suspended'
            vm.config['lock'] = 'suspended'
        return await self.task(vm.node, 'qmsuspend', vm.vmid, user, body, vm=vm)
