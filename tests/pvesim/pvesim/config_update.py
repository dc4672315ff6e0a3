"""Config updates: PUT and POST .../config as Qemu.pm update_vm_api runs them (checks, deletes, sets,
then hotplug on a running VM or apply on a stopped one).

Sources: qemu-server 9.2.6 src/PVE/API2/Qemu.pm (Qemu.pm) `update_vm_api`, `update_vm`, `update_vm_async`;
docs/pve-semantics.md §5.
"""

import asyncio
import re
import time
import uuid

from fakepve.lxc import random_mac
from fakepve.model import PveError, TaskError
from fakepve.routing import die, param_error, split_list
from fakepve.server import API, USER, ok, params

from . import drives as d, nets, options as o
from .config_state import CHECKSUM_MISMATCH


class ConfigUpdateMixin:
    """PUT and POST .../config."""

    def _check_method_perms(self, request):
        """The method's own `permissions` entry, checked before its parameters (pve-http-server
        PVE/APIServer/AnyEvent.pm `rest_handler`, RPCEnvironment.pm `exec_api2_perm_check`): for update_vm
        and update_vm_async one of the VM.Config.* privileges on /vms/{vmid} (`any => 1`), so a token with
        none of them gets `Permission check failed (/vms/<id>, VM.Config.Disk|...|VM.Config.Cloudinit)`
        before any key is looked at (docs/pve-semantics.md §27.1)."""
        info = self.resolve(request, API).methods[request.method]
        self.check_permissions(request[USER], info.get('permissions'), dict(request.match_info))

    def _check_config_perms(self, user, vm, keys, values):
        for key in keys:
            priv = self._config_priv(key)
            if priv == 'root':
                if user != 'root@pam':
                    raise PveError(403, "only root can set '{0}' config".format(key))
            elif key.startswith(('ide', 'sata', 'scsi')) and 'media=cdrom' in str(values.get(key, '')):
                self.require(user, '/vms/{0}'.format(vm.vmid), 'VM.Config.CDROM')
            elif o.is_fastplug(key) and key.startswith(('ci', 'ipconfig', 'searchdomain', 'nameserver', 'sshkeys')):
                self.require(user, '/vms/{0}'.format(vm.vmid), 'VM.Config.Cloudinit')
            else:
                self.require(user, '/vms/{0}'.format(vm.vmid), priv)

    def _update_prepare(self, vm, user, v):
        """Qemu.pm update_vm_api, the checks before the config is written (§5), in PVE's order."""
        p = dict((k, x) for k, x in v.items() if k not in ('node', 'vmid'))
        digest = p.pop('digest', None)
        p.pop('background_delay', None)
        p.pop('import-working-storage', None)
        skiplock = p.pop('skiplock', None)
        if skiplock and user != 'root@pam':
            raise param_error(skiplock='Only root may use this option.')
        delete_str = p.pop('delete', None)
        revert_str = p.pop('revert', None)
        force = p.pop('force', None)
        if not delete_str and not revert_str and not p:
            raise die('no options specified')
        if p.get('cdrom') is not None:
            # resolve_cdrom_alias
            value = str(p.pop('cdrom'))
            p['ide2'] = value if 'media=' in value else value + ',media=cdrom'
        revert = []
        for opt in split_list(revert_str):
            if not o.option_exists(opt):
                raise param_error(revert="unknown option '{0}'".format(opt))
            if opt in p:
                raise param_error(delete="you can't use '-{0}' and -revert {0}' at the same time".format(opt))
            revert.append(opt)
        deletes = []
        for opt in split_list(delete_str):
            if opt == 'cdrom':
                opt = 'ide2'
            if opt in p:
                raise param_error(delete="you can't use '-{0}' and -delete {0}' at the same time".format(opt))
            if opt in revert:
                raise param_error(revert="you can't use '-delete {0}' and -revert {0}' at the same time".format(opt))
            if not o.option_exists(opt):
                raise param_error(delete="unknown option '{0}'".format(opt))
            deletes.append(opt)
        for key in sorted(p):
            if d.is_drive(key):
                p[key] = d.canon_drive(p[key])
                self._qm_check_drive(user, vm.vmid, None, key, str(p[key]), None)
            elif nets.NET_KEY.match(key):
                # parse_net + print_net: a NIC without a MAC gets a new one, also on update (§9, D2)
                p[key] = nets.canon_net(p[key], random_mac)
            elif key == 'tags':
                p[key] = o.normalise_tags(p[key])
            elif key == 'vmgenid' and str(p[key]) == '1':
                # Qemu.pm update_vm_api: vmgenid=1 asks for a fresh generation id
                p[key] = str(uuid.uuid4())
            elif o.key_type(key) == 'number':
                p[key] = str(v[key]) if not isinstance(v[key], float) else repr(v[key])
        if p.get('hookscript') is not None:  # after the drives, before the privileges (values.py)
            self._check_hookscript(str(p['hookscript']))
        self._check_config_perms(user, vm, list(p) + deletes + revert, p)
        self._check_bridge_access(user, p)
        self._value_perms_update(user, vm, p, deletes)
        return {'p': p, 'deletes': deletes, 'revert': revert, 'force': bool(force), 'digest': digest,
                'skiplock': bool(skiplock), 'user': user}

    def _update_check_state(self, vm, plan):
        """The checks on the loaded config: digest, lock, balloon (§5.1 step 8, D10)."""
        if plan['digest'] and plan['digest'] != self._digest(vm):
            raise die(CHECKSUM_MISMATCH)
        if vm.lock and not plan['skiplock']:
            raise die('VM is locked ({0})'.format(vm.lock))
        p = plan['p']
        if p.get('memory') or p.get('balloon') is not None:
            # Qemu.pm $load_and_check_config: checked whenever memory or balloon is set
            memory = p.get('memory') or vm.pending.get('memory') or vm.config.get('memory')
            maxmem = o.current_memory(memory)
            balloon = p['balloon'] if p.get('balloon') is not None else \
                (vm.pending.get('balloon') or vm.config.get('balloon'))
            if balloon and int(balloon) > maxmem:
                raise die('balloon value too large (must be smaller than assigned memory)')

    def _update_check_boot(self, vm, value, deletes, p):
        """Qemu.pm update_vm_api `$updatefn`, when its loop over the request's keys reaches `boot` with an order:
        each device is in the config (as written so far), pending or the request, and not deleted by it, else it
        dies (docs/pve-semantics.md §34.3, §39.2). By then the deletes and the keys met first are written."""
        known = set(vm.devices({**vm.config, **{k: x for k, x in vm.pending.items() if x is not None}, **p}))
        for dev in o.boot_order(value):
            if dev not in known or dev in deletes:
                raise die("invalid bootorder: device '{0}' does not exist'".format(dev))

    def _update_apply(self, vm, plan):
        """Qemu.pm update_vm_api $updatefn: deletes, sets, cleanup_pending, then hotplug or apply (§5, §6).

        Returns the warnings. Raises a 400 PveError for hotplug/apply problems (after writing)."""
        conf, pend, forced = vm.config, vm.pending, self._forced(vm)
        p, deletes, force = dict(plan['p']), list(plan['deletes']), plan['force']
        warnings = []
        for opt in plan['revert']:
            if opt in conf:
                p[opt] = conf[opt]
            elif pend.get(opt) is not None:
                deletes.append(opt)
        modified = set()
        # Qemu.pm update_vm_api: the boot order of the main section; a deleted device leaves it and a
        # new CD-ROM joins it, both as a pending `boot` (§5)
        bootorder = o.boot_order(conf.get('boot'))
        for opt in deletes:
            if opt not in conf and pend.get(opt) is None:
                warnings.append("cannot delete '{0}' - not set in current configuration!".format(opt))
                continue
            modified.add(opt)
            if opt in bootorder:
                bootorder = [dev for dev in bootorder if dev != opt]
                pend['boot'] = o.print_bootorder(bootorder)
                forced.discard('boot')
                modified.add('boot')
            if d.UNUSED_KEY.match(opt):
                volume = d.parse_drive(conf.get(opt))[0]
                if conf.get('protection') in (1, '1'):
                    raise die("can't remove unused disk '{0}' - protection mode enabled".format(volume))
                self._volume_removal_perm(plan.get('user'), vm.vmid, conf.get(opt))
                if volume and d.volume_owner(volume) == vm.vmid:
                    self._try_deallocate(vm, opt, volume)
                    self._qm_free(volume)
                conf.pop(opt, None)
                pend.pop(opt, None)
            elif opt == 'vmstate' and conf.get('protection') in (1, '1'):
                # Qemu.pm update_vm_api: a hibernation's state volume is protected as a drive is
                raise die("can't remove vmstate '{0}' - protection mode enabled".format(conf[opt]))
            elif opt == 'tags':
                conf.pop(opt, None)
                pend.pop(opt, None)
            elif d.is_drive(opt):
                if conf.get('protection') in (1, '1'):
                    raise die("can't remove drive '{0}' - protection mode enabled".format(opt))
                if pend.get(opt) is not None:
                    self._register_unused(vm, pend[opt])
                pend[opt] = None
                (forced.add if force else forced.discard)(opt)
            else:
                pend[opt] = None
                (forced.add if force else forced.discard)(opt)
        made = []
        try:
            # `foreach my $opt (keys %$param)`: Perl's hash order, random per process (key_order.py, §46)
            for opt in self.walk_keys(p):
                modified.add(opt)
                value = p[opt]
                if pend.get(opt) is not None and str(pend[opt]) == str(value):
                    continue
                if d.is_drive(opt):
                    if (re.fullmatch(r'(?:[^/:\s]+:)?cloudinit', d.parse_drive(value)[0] or '')
                            or d.is_cloudinit(str(value))):
                        # Qemu.pm create_disks: one cloud-init drive per VM, new or an existing volume
                        for other, there in sorted(list(conf.items()) + list(pend.items())):
                            if other != opt and d.is_drive(other) and there is not None and d.is_cloudinit(there):
                                raise die("{0} - cloud-init drive is already attached at '{1}'".format(opt, other))
                    # create_disks: STORAGE:N is allocated now, even if the change stays pending (§8.9, D1)
                    new_value, volids = self._qm_new_drive(vm.vmid, opt, str(value), None)
                    made.extend(volids)
                    if volids and str(conf.get('template', '0')) == '1' and not d.is_cloudinit(new_value):
                        # create_disks: on a template the new volume becomes a base volume
                        volume, props = d.parse_drive(new_value)
                        base = self._qm_rename_volume(volume)
                        made[made.index(volume)] = base
                        new_value = d.print_drive(base, props)
                    old_pending = pend.get(opt)
                    if old_pending is not None and d.parse_drive(old_pending)[0] != d.parse_drive(new_value)[0]:
                        self._register_unused(vm, old_pending)
                    pend[opt] = new_value
                    # drive_is_cdrom($drive, 1): a cloud-init drive is not a CD-ROM here
                    if bootorder and d.is_cdrom(new_value) and not d.is_cloudinit(new_value) and opt not in bootorder:
                        bootorder.append(opt)
                        pend['boot'] = o.print_bootorder(bootorder)
                        forced.discard('boot')
                        modified.add('boot')
                elif opt == 'cipassword':
                    # hashed (encrypt_pw, SHA-256-crypt) unless already a hash or a Windows guest's, and
                    # written straight to the main section (Qemu.pm update_vm_api, §29.5)
                    conf[opt] = o.stored_cipassword(str(value), conf.get('ostype'))
                    if pend.get(opt, 0) is None:
                        del pend[opt]
                elif opt == 'boot' and o.boot_order(value):
                    self._update_check_boot(vm, value, deletes, p)
                    # a new boot order drops the legacy bootdisk (Qemu.pm update_vm_api)
                    pend[opt] = o.print_bootorder(o.boot_order(value))
                    if conf.get('bootdisk') is not None:
                        pend['bootdisk'] = None
                else:
                    if opt in ('vga', 'machine'):
                        self._check_clipboard(value, opt)  # assert_clipboard_config (values.py, §43), vIOMMU (§61)
                    pend[opt] = value
                # remove_from_pending_delete: the new value replaces any pending delete
                forced.discard(opt)
        except PveError:
            for volid in made:
                self._qm_free(volid)
            raise
        self._cleanup_pending(vm)
        self.apply_rewrite_faults(vm)  # the admin API's `rewrite` fault (admin.py)
        errors = {}
        if pend:
            if vm.status == 'running':
                self._hotplug_pending(vm, modified, errors)
            else:
                self._apply_pending(vm, errors)
        if vm.config.get('description') == '':
            # QemuServer.pm write_vm_config prints a description only when true: an empty one (`description=`, §74)
            # is applied at once (a fast-plug option) and read back as none (§32.3)
            del vm.config['description']
        self._sync_vm(vm)
        if errors:
            raise PveError(400, 'Parameter verification failed.', errors)
        return warnings

    async def _config_put(self, request):
        """Qemu.pm update_vm (PUT): synchronous, returns null (§5)."""
        self._check_method_perms(request)
        p = await params(request)
        v = self._verify(request, p)
        vm = self._vm(request)
        user = request[USER]
        self.need_quorum()
        await self._update_synchronously(vm, self._update_prepare(vm, user, v))
        return ok()

    async def _update_synchronously(self, vm, plan):
        """Qemu.pm update_vm_api's `$updatefn` for the synchronous callers (PUT config, unlink):
        the state checks and the write under the config lock."""
        await self._lock_config(vm)
        try:
            self._update_check_state(vm, plan)
            self._update_apply(vm, plan)
        finally:
            self.release(vm, 'config')

    async def _config_post(self, request):
        """Qemu.pm update_vm_async (POST): the same checks as HTTP errors, then a `qmconfig` task (§5, D10).

        Qemu.pm update_vm_api runs `$load_and_check_config->(0)` "before forking/locking" (no config
        lock: a task holding it does not delay the answer), and the worker runs them again under
        lock_config in `$updatefn` (`$load_and_check_config->(1)`): a digest that was current when
        the POST was answered but went stale before the task got the lock fails the task with
        `checksum mismatch (file change by other user?)`, and nothing is written."""
        self._check_method_perms(request)
        p = await params(request)
        v = self._verify(request, p)
        vm = self._vm(request)
        user = request[USER]
        self.need_quorum()
        plan = self._update_prepare(vm, user, v)
        self._update_check_state(vm, plan)

        async def body():
            try:
                self._update_check_state(vm, plan)
                self._update_apply(vm, plan)
            except PveError as e:
                text = '{0}'.format(e.message)
                if e.errors:
                    text = '{0} {1}\n'.format(e.status, e.message) + ''.join(
                        '{0}: {1}\n'.format(k, str(x).rstrip('\n')) for k, x in sorted(e.errors.items()))
                raise TaskError(' '.join(text.rstrip('\n').split('\n'))) from e
        upid = await self.task(vm.node, 'qmconfig', vm.vmid, user, body, vm=vm)
        delay = v.get('background_delay')
        if delay:
            deadline = time.monotonic() + float(delay) * (self.time_scale or 0)
            task = self.tasks[upid]
            while task['status'] == 'running' and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            if task['status'] != 'running':
                if task['exitstatus'] == 'OK':
                    return ok(None)
                raise die('failed to update VM {0}: {1}'.format(vm.vmid, task['exitstatus']))
        return ok(upid)
