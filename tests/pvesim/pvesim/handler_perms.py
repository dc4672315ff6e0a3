"""The privileges qemu-server checks inside its handlers and workers, by the value of a key: serial, USB and PCI
devices, a hardware RNG, a custom CPU model, removing a VM's volume, and a hibernation's state storage. Each is
skipped for root@pam itself and only for it: PVE compares the auth id (`$authuser eq 'root@pam'`), and a token of
root@pam is `root@pam!<tokenid>`.

Sources: qemu-server 9.2.6 src/PVE/API2/Qemu.pm `create_vm`, `update_vm_api` (delete and set loops),
`$check_vm_create_serial_perm`, `check_usb_perm`, `check_hostpci_perm`, `check_rng_perm`, `$check_cpu_model_access`,
`vm_suspend`; src/PVE/QemuServer.pm `try_deallocate_drive`; src/PVE/QemuConfig.pm `find_vmstate_storage`;
docs/pve-semantics.md §27, §44.
"""

import re

from fakepve.routing import die

from . import drives as d

ROOT = 'root@pam'


def _props(value, default_key):
    """A property string as {key: value}; a first item without `=` is the default key's."""
    out = {}
    for i, item in enumerate(str(value or '').split(',')):
        if '=' in item:
            k, _, v = item.partition('=')
            out[k] = v
        elif i == 0 and item:
            out[default_key] = item
    return out


class HandlerPermsMixin:
    """The value-dependent checks of create_vm and update_vm_api, try_deallocate_drive's storage check, and
    vm_suspend's `todisk` checks."""

    def _vm_perm(self, user, vmid, pool, priv):
        """RPCEnvironment.pm check_vm_perm: the pool first, else the VM (the VM's path in the message)."""
        if pool and self.allowed(user, '/pool/' + pool, priv):
            return
        self.require(user, '/vms/{0}'.format(vmid), priv)

    def _usb_perm(self, user, vmid, pool, key, value):
        """Qemu.pm check_usb_perm."""
        self._vm_perm(user, vmid, pool, 'VM.Config.HWType')
        props = _props(value, 'host')
        if props.get('host'):
            if props['host'].lower() != 'spice':
                raise die("only root can set '{0}' config for real devices".format(key))
        elif props.get('mapping'):
            self.require(user, '/mapping/usb/' + props['mapping'], 'Mapping.Use')
        else:
            raise die("either 'host' or 'mapping' must be set.")

    def _hostpci_perm(self, user, vmid, pool, key, value):
        """Qemu.pm check_hostpci_perm."""
        props = _props(value, 'host')
        if props.get('host'):
            raise die("only root can set '{0}' config for non-mapped devices".format(key))
        if props.get('mapping'):
            self.require(user, '/mapping/pci/' + props['mapping'], 'Mapping.Use')
            self._vm_perm(user, vmid, pool, 'VM.Config.HWType')
        else:
            raise die("either 'host' or 'mapping' must be set.")

    def _rng_perm(self, user, vmid, pool, value):
        """Qemu.pm check_rng_perm: the host's hardware RNG needs its mapping privilege."""
        self._vm_perm(user, vmid, pool, 'VM.Config.HWType')
        if _props(value, 'source').get('source') == '/dev/hwrng':
            self.require(user, '/mapping/hwrng', 'Mapping.Use')

    def _cpu_model_perm(self, user, new, existing=None):
        """Qemu.pm $check_cpu_model_access: a custom model not already the VM's needs Mapping.Use on it. (pvesim's
        cluster defines no custom model, so the request check refuses one before this: kept for when it does.)"""
        model = _props(new, 'cputype').get('cputype')
        if not model or (existing and _props(existing, 'cputype').get('cputype') == model):
            return
        if model.startswith('custom-'):
            self.require(user, '/mapping/cpu/' + model[len('custom-'):], 'Mapping.Use')

    def _value_perms_create(self, user, vmid, pool, params):
        """create_vm after $check_vm_modify_config_perm: serial, USB, PCI and RNG devices, then (after the
        bridges) the CPU model."""
        if user == ROOT:
            return
        for key in sorted(params):
            if re.fullmatch(r'serial\d+', key):
                if str(params[key]) == 'socket':
                    self._vm_perm(user, vmid, pool, 'VM.Config.HWType')
                else:
                    raise die("only root can set '{0}' config for real devices".format(key))
        for key in sorted(params):
            if re.fullmatch(r'usb\d+', key):
                self._usb_perm(user, vmid, pool, key, params[key])
        for key in sorted(params):
            if re.fullmatch(r'hostpci\d+', key):
                self._hostpci_perm(user, vmid, pool, key, params[key])
        if params.get('rng0'):
            self._rng_perm(user, vmid, pool, params['rng0'])
        if params.get('cpu') is not None:
            self._cpu_model_perm(user, params['cpu'])

    def _value_perms_update(self, user, vm, p, deletes):
        """update_vm_api: the CPU model against the current one (load_and_check_config), then the delete loop's
        and the set loop's device checks, on the value removed and the old and new values set."""
        if user == ROOT:
            return
        conf = dict(vm.config, **dict((k, v) for k, v in vm.pending.items() if v is not None))
        if p.get('cpu') is not None:
            self._cpu_model_perm(user, p['cpu'], conf.get('cpu'))
        for key in deletes:
            old = conf.get(key)
            if old is None:
                continue
            if re.fullmatch(r'serial\d+', key):
                if str(old) == 'socket':
                    self._vm_perm(user, vm.vmid, None, 'VM.Config.HWType')
                else:
                    raise die("only root can delete '{0}' config for real devices".format(key))
            elif re.fullmatch(r'usb\d+', key):
                self._usb_perm(user, vm.vmid, None, key, old)
            elif re.fullmatch(r'hostpci\d+', key):
                self._hostpci_perm(user, vm.vmid, None, key, old)
            elif re.fullmatch(r'rng\d+', key):
                self._rng_perm(user, vm.vmid, None, old)
        for key in sorted(p):
            old, new = conf.get(key), str(p[key])
            if re.fullmatch(r'serial\d+', key):
                if (old is None or str(old) == 'socket') and new == 'socket':
                    self._vm_perm(user, vm.vmid, None, 'VM.Config.HWType')
                else:
                    raise die("only root can modify '{0}' config for real devices".format(key))
            elif re.fullmatch(r'usb\d+', key):
                if old:
                    self._usb_perm(user, vm.vmid, None, key, old)
                self._usb_perm(user, vm.vmid, None, key, new)
            elif re.fullmatch(r'hostpci\d+', key):
                if old:
                    self._hostpci_perm(user, vm.vmid, None, key, old)
                self._hostpci_perm(user, vm.vmid, None, key, new)
            elif re.fullmatch(r'rng\d+', key):
                if old:
                    self._rng_perm(user, vm.vmid, None, old)
                self._rng_perm(user, vm.vmid, None, new)

    def _volume_removal_perm(self, user, vmid, value):
        """QemuServer.pm try_deallocate_drive: freeing a volume the VM owns (not a CD-ROM) needs
        Datastore.AllocateSpace on its storage. Checked for root@pam too (`check`, which root passes)."""
        volume, props = d.parse_drive(value)
        if user is None or not volume or props.get('media') == 'cdrom' or ':' not in volume:
            return
        if d.volume_owner(volume) == vmid:
            self.require(user, '/storage/' + volume.split(':', 1)[0], 'Datastore.AllocateSpace')

    def _vmstate_storage(self, vm):
        """QemuConfig.pm find_vmstate_storage: `vmstatestorage`; else a shared storage of the VM's drives (not
        CD-ROMs), else a local one, file-based ones preferred; else `local`."""
        if vm.config.get('vmstatestorage'):
            return vm.config['vmstatestorage']
        found = {'shared': None, 'local': None}
        sids = set()
        for key, value in vm.config.items():
            if d.is_drive(key) and not d.UNUSED_KEY.match(key) and not d.is_cdrom(value):
                volume = d.parse_drive(value)[0]
                if volume and ':' in volume:
                    sids.add(volume.split(':', 1)[0])
        for sid in sorted(sids):
            scfg = self.storages.get(sid) or {}
            slot = 'shared' if str(scfg.get('shared', 0)) == '1' else 'local'
            if found[slot] is None or scfg.get('path'):
                found[slot] = sid
        return found['shared'] or found['local'] or 'local'

    async def _do_suspend(self, vm, user, p):
        """Qemu.pm vm_suspend with `todisk`, after the running check: VM.Config.Disk on the VM, a passed-through
        PCI device refused, Datastore.AllocateSpace on the state's storage (`statestorage`, else
        find_vmstate_storage)."""
        if str(p.get('todisk', '0')) in ('1', 'true') and vm.status == 'running':
            self._vm_perm(user, vm.vmid, None, 'VM.Config.Disk')
            if any(re.fullmatch(r'hostpci\d+', key) for key in vm.config):
                raise die('cannot suspend VM to disk due to passed-through PCI device(s), which lack the'
                          ' possibility to save/restore their internal state')
            storage = p.get('statestorage') or self._vmstate_storage(vm)
            self.require(user, '/storage/' + storage, 'Datastore.AllocateSpace')
        return await super()._do_suspend(vm, user, p)

