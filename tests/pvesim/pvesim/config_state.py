"""A VM config with its pending section: digest, unused volumes, applying and cleaning up pending,
and the calls that read it (GET config, GET pending).

Sources: qemu-server 9.2.6 src/PVE/QemuServer.pm (QemuServer.pm), src/PVE/API2/Qemu.pm (Qemu.pm);
pve-guest-common 6.0.2 src/PVE/AbstractConfig.pm, GuestHelpers.pm; docs/pve-semantics.md §6, §7.
"""

import hashlib

from fakepve.model import PveError
from fakepve.qemu import volume_ref
from fakepve.routing import die, param_error
from fakepve.server import ok, params

from . import drives as d, options as o

CHECKSUM_MISMATCH = 'checksum mismatch (file change by other user?)'


class ConfigStateMixin:
    """The config and its pending changes, and the calls that read them."""

    @staticmethod
    def _forced(vm):
        if not hasattr(vm, 'pending_force'):
            vm.pending_force = set()
        return vm.pending_force

    def _digest(self, vm):
        """SHA1 of the whole config file: main section, [PENDING] and snapshots (§7, D14)."""
        lines = ['{0}: {1}'.format(k, vm.config[k]) for k in sorted(vm.config)]
        if vm.pending:
            lines.append('[PENDING]')
            lines += ['{0}: {1}'.format(k, v) for k, v in sorted(vm.pending.items()) if v is not None]
            dels = ['!' + k if k in self._forced(vm) else k for k, v in sorted(vm.pending.items()) if v is None]
            if dels:
                lines.append('delete: ' + ','.join(dels))
        for name in sorted(vm.snapshots):
            lines.append('[{0}]'.format(name))
            lines += ['{0}: {1}'.format(k, v) for k, v in sorted(vm.snapshots[name].items())]
        return hashlib.sha1(('\n'.join(lines) + '\n').encode()).hexdigest()

    def _sync_vm(self, vm):
        """Keep fakepve's VM attributes in step with the config (D17: `lock` in the config locks)."""
        vm.lock = vm.config.get('lock') or None
        vm.name = vm.config.get('name') or 'VM {0}'.format(vm.vmid)

    def _add_unused(self, vm, volid):
        """AbstractConfig.pm add_unused_volume: lowest free unusedN, no duplicates, at most 256."""
        for key, value in vm.config.items():
            if d.UNUSED_KEY.match(key) and d.parse_drive(value)[0] == volid:
                return key
        for n in range(256):
            key = 'unused{0}'.format(n)
            if key not in vm.config:
                vm.config[key] = volid
                return key
        raise die('Too many unused volumes - please delete them first.')

    def _register_unused(self, vm, value):
        """QemuServer.pm vmconfig_register_unused_drive: cloud-init is freed, owned disks become unusedN."""
        volume, _props = d.parse_drive(value)
        if d.is_cloudinit(value):
            self._qm_free(volume)
            return None
        if d.is_cdrom(value):
            return None
        if d.volume_owner(volume) == vm.vmid and volume_ref(volume)[0] in self.storages:
            return self._add_unused(vm, volume)
        return None

    def _delete_or_detach(self, vm, value, force, key=None):
        """QemuServer.pm vmconfig_delete_or_detach_drive: free with force (try_deallocate_drive: not while a
        snapshot uses the volume, snapshots.py), else register as unused."""
        if value is None or d.is_cdrom(value) and not d.is_cloudinit(value):
            return
        volume = d.parse_drive(value)[0]
        if force:
            if d.volume_owner(volume) == vm.vmid:
                self._try_deallocate(vm, key, volume)
                self._qm_free(volume)
        else:
            self._register_unused(vm, value)

    def _apply_pending(self, vm, errors=None):
        """QemuServer.pm vmconfig_apply_pending: every pending delete and value goes to the config (§6)."""
        conf, pend, forced = vm.config, vm.pending, self._forced(vm)
        kept = {}
        for key in sorted(pend, key=o.natural):
            value = pend[key]
            if value is None:
                if d.is_drive(key):
                    try:
                        self._delete_or_detach(vm, conf.get(key), key in forced, key)
                    except PveError as e:
                        # QemuServer.pm vmconfig_apply_pending: the error is the option's (a warning at a
                        # start or stop), the delete stays pending and the drive in the config
                        # (update_vm_api raises the errors as a 400; docs/pve-semantics.md §32.2, §33)
                        if errors is not None:
                            errors[key] = 'unable to apply pending change {0} : {1}\n'.format(key, e.message)
                        kept[key] = key in forced
                        continue
                conf.pop(key, None)
            else:
                old = conf.get(key)
                if d.is_drive(key) and old is not None and not d.is_cdrom(old) \
                        and d.parse_drive(old)[0] != d.parse_drive(value)[0]:
                    self._register_unused(vm, old)
                conf[key] = value
        pend.clear()
        forced.clear()
        for key, force in kept.items():
            pend[key] = None
            if force:
                forced.add(key)
        self._sync_vm(vm)

    def _cleanup_pending(self, vm):
        """AbstractConfig.pm cleanup_pending: drop values equal to the current ones and deletes of unset keys."""
        conf, pend, forced = vm.config, vm.pending, self._forced(vm)
        for key in list(pend):
            if pend[key] is not None and key in conf and str(conf[key]) == str(pend[key]):
                del pend[key]
            elif pend[key] is None and key not in conf:
                del pend[key]
                forced.discard(key)

    async def _config_get(self, request):
        """Qemu.pm vm_config: pending overlaid unless current=1; digest of the whole file (§7, D3)."""
        vm = self._vm(request, 'VM.Audit')
        v = self._verify(request, await params(request))
        if v.get('current') and v.get('snapshot'):
            msg = "cannot use 'snapshot' parameter with 'current'"
            raise param_error(snapshot=msg, current=msg)
        if v.get('snapshot'):
            snap = vm.snapshots.get(v['snapshot'])
            if snap is None:
                raise die("snapshot '{0}' does not exist".format(v['snapshot']))
            cfg = dict(snap)
        else:
            cfg = dict(vm.config)
            if not v.get('current'):
                for key, value in vm.pending.items():
                    if value is None:
                        cfg.pop(key, None)
                    else:
                        cfg[key] = value
        out = dict((k, o.wire_value(k, x)) for k, x in cfg.items())
        if 'cipassword' in out:
            out['cipassword'] = '**********'
        out['digest'] = self._digest(vm)
        return ok(out)

    async def _pending(self, request):
        """GuestHelpers.pm config_with_pending_array, with the digest row and `delete: 2` (§7, D12)."""
        vm = self._vm(request, 'VM.Audit')
        self._verify(request, await params(request))
        forced = self._forced(vm)
        conf = dict(vm.config, digest=self._digest(vm))
        data = []
        for key in sorted(conf):
            item = {'key': key, 'value': o.wire_value(key, conf[key])}
            if key in vm.pending:
                if vm.pending[key] is None:
                    item['delete'] = 2 if key in forced else 1
                else:
                    item['pending'] = o.wire_value(key, vm.pending[key])
            data.append(item)
        for key in sorted(vm.pending):
            if key in conf:
                continue
            if vm.pending[key] is None:
                data.append({'key': key, 'delete': 2 if key in forced else 1})
            else:
                data.append({'key': key, 'pending': o.wire_value(key, vm.pending[key])})
        for item in data:
            if item['key'] == 'cipassword':
                for field in ('value', 'pending'):
                    if field in item:
                        item[field] = '**********'
        return ok(data)

    async def _sim_cloudinit_dump(self, v, user):
        """GET .../cloudinit/dump (Qemu.pm cloudinit_generated_config_dump; VM.Audit, checked from the schema).
        `type=user` is Cloudinit.pm cloudinit_userdata of the applied config: the stored `cipassword` (a crypt hash
        after an update, as given after a create) on its `password:` line, `**********` unless the user holds
        VM.Config.Cloudinit on the VM (§29.5). `network` and `meta` are not modelled."""
        vm = self.find(v['node'], v['vmid'])
        if v.get('type') != 'user':
            raise die("pvesim models only cloudinit/dump type 'user'")
        conf = vm.config
        hostname = conf.get('name') or 'VM{0}'.format(vm.vmid)
        fqdn = hostname if '.' in hostname else (
            '{0}.{1}'.format(hostname, conf['searchdomain']) if conf.get('searchdomain') else hostname)
        lines = ['#cloud-config', 'hostname: ' + hostname.split('.')[0], 'manage_etc_hosts: true', 'fqdn: ' + fqdn]
        username = conf.get('ciuser')
        if username is not None:
            lines.append('user: {0}'.format(username))
            if username == 'root':
                lines.append('disable_root: False')
        if conf.get('cipassword') is not None:
            hidden = user not in (None, 'root@pam') and not self.allowed(
                user, '/vms/{0}'.format(vm.vmid), 'VM.Config.Cloudinit')
            lines.append('password: ' + ('**********' if hidden else str(conf['cipassword'])))
        lines += ['chpasswd:', '  expire: False']
        if username != 'root':
            lines += ['users:', '  - default']
        if str(conf.get('ciupgrade', 1)) not in ('0', 'false'):
            lines.append('package_upgrade: true')
        return '\n'.join(lines) + '\n'
