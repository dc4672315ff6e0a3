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

from fakepve.model import PveError
from fakepve.routing import die, param_error

from . import drives as d
from .qemu_command import _props

ROOT = 'root@pam'


def _tags(text):
    """PVE::Tools split_list of a tags value."""
    return [t for t in re.split(r'[;,\s]+', str(text or '')) if t]


# Qemu.pm $cpuoptions, $memoryoptions, $hwtypeoptions, $generaloptions, $vmpoweroptions, $diskoptions: the privilege
# $check_vm_modify_config_perm checks for each (qemu-server 9.2.6).
OPTION_PRIVS = dict(
    [(k, 'VM.Config.CPU') for k in ('cores', 'cpu', 'runningcpu', 'cpulimit', 'cpuunits', 'numa', 'smp', 'sockets',
                                    'vcpus')]
    + [(k, 'VM.Config.Memory') for k in ('memory', 'balloon', 'shares', 'allow-ksm')]
    + [(k, 'VM.Config.HWType') for k in ('acpi', 'hotplug', 'kvm', 'machine', 'runningmachine', 'scsihw', 'smbios1',
                                         'tablet', 'vga', 'watchdog', 'audio0', 'rng0')]
    + [(k, 'VM.Config.Options') for k in ('agent', 'autostart', 'bios', 'description', 'keyboard', 'localtime',
                                          'migrate_downtime', 'migrate_speed', 'name', 'onboot', 'ostype',
                                          'protection', 'reboot', 'startdate', 'startup', 'tdf', 'template')]
    + [('freeze', 'VM.PowerMgmt')] + [(k, 'VM.Config.Disk') for k in ('boot', 'bootdisk', 'vmstatestorage')])


class HandlerPermsMixin:
    """The value-dependent checks of create_vm and update_vm_api, try_deallocate_drive's storage check,
    vm_suspend's `todisk` checks, and the tag policy (GET /cluster/options, assert_tag_permissions)."""

    def _config_priv(self, key):
        """Qemu.pm $check_vm_modify_config_perm's privilege of an option of its tables (`bios` is
        VM.Config.Options, not fakepve's VM.Config.HWType); the other keys as fakepve decides them."""
        return OPTION_PRIVS.get(key) or super()._config_priv(key)

    def check_permissions(self, user, perms, values, declared=None):
        """RPCEnvironment.pm check_api2_permissions: a method open to `user => 'all'` passes for anyone logged in,
        before its `check` (which the method then applies in its code, as get_options does with Sys.Audit);
        fakepve evaluates the `check` first."""
        if user is not None and perms and perms.get('user') == 'all':
            return
        super().check_permissions(user, perms, values, declared)

    def _routes_tag_policy(self):
        return [('GET', '/cluster/options', self._cluster_options)]

    def _allowed_tags(self, user, privileged):
        """GuestHelpers.pm get_allowed_tags: the `user-allow-list` (unless `user-allow` is none), the tags of the
        guests the user may audit (with `free` or `existing`), the registered tags only for a privileged user.
        Returns (allowed, registered, freeform)."""
        dc = self.datacenter
        registered = set(dc.get('registered-tags') or [])
        access = dc.get('user-tag-access') or {}
        user_allow = access.get('user-allow', 'free')
        allowed = set()
        if user_allow != 'none' or privileged:
            allowed.update(access.get('user-allow-list') or [])
        if user_allow in ('free', 'existing') or privileged:
            for vm in self.vms:
                if privileged or self.allowed(user, '/vms/{0}'.format(vm.vmid), 'VM.Audit'):
                    allowed.update(_tags(vm.config.get('tags')))
        if privileged:
            allowed |= registered
        else:
            allowed -= registered
        return allowed, registered, user_allow == 'free'

    async def _cluster_options(self, v, user):
        """pve-manager PVE/API2/Cluster.pm get_options (`user => 'all'`): datacenter.cfg with Sys.Audit on /, else
        only `console` and `tag-style`; always `allowed-tags`, the tags get_allowed_tags allows this user."""
        who = user or ROOT
        if self.allowed(who, '/', 'Sys.Audit'):
            res = dict(self.datacenter)
        else:
            res = dict((k, self.datacenter[k]) for k in ('console', 'tag-style') if k in self.datacenter)
        res['allowed-tags'] = sorted(self._allowed_tags(who, self.allowed(who, '/', 'Sys.Modify'))[0])
        return res

    def _assert_tag_permissions(self, user, vmid, old, new):
        """GuestHelpers.pm assert_tag_permissions: VM.Config.Options on the VM, then each tag added or removed:
        refused unless Sys.Modify on /, or it is allowed (or the policy is free) and not registered. PVE walks
        the tags in hash order; pvesim sorted."""
        self._vm_perm(user, vmid, None, 'VM.Config.Options')
        if self.allowed(user, '/', 'Sys.Modify'):
            return
        old_tags, new_tags = _tags(old), _tags(new)
        changed = sorted(t for t in set(old_tags) | set(new_tags) if old_tags.count(t) != new_tags.count(t))
        if not changed:
            return
        allowed, registered, freeform = self._allowed_tags(user, False)
        for tag in changed:
            if (tag not in allowed and not freeform) or tag in registered:
                raise PveError(403, "Permission check failed (/, Sys.Modify for modifying tag '{0}')".format(tag))

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
        # a ROM file is root@pam's even on a mapped device (raise_param_exc on the key)
        if 'romfile' in props:
            raise param_error(**{key: "only root@pam can set 'romfile' option"})

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
        if params.get('tags') is not None:
            # PVE checks them in the create worker, before the config is written; pvesim before the task
            self._assert_tag_permissions(user, vmid, '', params['tags'])

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
            elif key == 'tags':
                self._assert_tag_permissions(user, vm.vmid, old, '')
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
            elif key == 'tags':
                self._assert_tag_permissions(user, vm.vmid, old, new)

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
        """Qemu.pm vm_suspend with `todisk`, after the running check: `_todisk_checks`."""
        if str(p.get('todisk', '0')) in ('1', 'true') and vm.status == 'running':
            self._todisk_checks(vm, user, p)
        return await super()._do_suspend(vm, user, p)

    def _todisk_checks(self, vm, user, p):
        """Qemu.pm vm_suspend with `todisk`, after the running and HA checks: VM.Config.Disk on the VM, a
        passed-through PCI device refused, Datastore.AllocateSpace on the state's storage (`statestorage`, else
        find_vmstate_storage). values.py's hibernation path runs them too."""
        self._vm_perm(user, vm.vmid, None, 'VM.Config.Disk')
        if any(re.fullmatch(r'hostpci\d+', key) for key in vm.config):
            raise die('cannot suspend VM to disk due to passed-through PCI device(s), which lack the'
                      ' possibility to save/restore their internal state')
        storage = p.get('statestorage') or self._vmstate_storage(vm)
        self.require(user, '/storage/' + storage, 'Datastore.AllocateSpace')

