"""What a running VM takes live: QemuServer.pm vmconfig_hotplug_pending by the `hotplug` value.

Sources: qemu-server 9.2.6 src/PVE/QemuServer.pm (QemuServer.pm) `vmconfig_hotplug_pending`,
`vmconfig_update_net`, `vmconfig_update_disk`; docs/pve-semantics.md §6 (D4).
"""

import re

from fakepve.model import PveError
from fakepve.routing import die

from . import drives as d, nets, options as o, qemu_command as qc
from .validation import parse_boolean


class HotplugMixin:
    """The hotplug decision for each pending key of a running VM."""

    @staticmethod
    def _agent_live(old, new):
        """QemuServer.pm vmconfig_update_agent: skipped (pending) when the VM has no agent value or a false
        one (`!$conf->{agent}`), or when an option other than fstrim_cloned_disks differs as set or unset
        (GuestHelpers.pm safe_string_ne on parse_guest_agent's result: default key `enabled`, booleans
        parsed)."""
        if old is None or str(old) in ('', '0'):
            return False

        def parse(text):
            aliases = {'freeze-fs': 'freeze-fs-on-backup', 'guest-fsfreeze': 'freeze-fs-on-backup'}
            out = {aliases.get(k, k): v for k, v in qc._props(text, 'enabled').items()}
            out.pop('fstrim_cloned_disks', None)
            return {k: parse_boolean(v) or v if k in ('enabled', 'freeze-fs-on-backup') else v for k, v in out.items()}

        return parse(old) == parse(new)

    def _usb_hotplug_ok(self, vm, feats):
        ostype = str(vm.config.get('ostype', 'other'))
        return 'usb' in feats and (ostype == 'l26' or ostype in ('win8', 'win10', 'win11'))

    def _hotplug_pending(self, vm, modified, errors):
        """QemuServer.pm vmconfig_hotplug_pending: only the keys of this request, by `hotplug` (§6, D4)."""
        conf, pend, forced = vm.config, vm.pending, self._forced(vm)
        feats = o.hotplug_features(conf.get('hotplug'))
        for opt in sorted(modified, key=o.natural):
            if opt not in pend:
                continue
            value = pend[opt]
            applied = False
            try:
                if value is None:
                    applied = self._hot_delete_ok(vm, opt, feats)
                    if applied and d.is_drive(opt):
                        self._delete_or_detach(vm, conf.get(opt), opt in forced, opt)
                else:
                    applied = self._hot_set_ok(vm, opt, value, feats)
            except PveError as e:
                errors[opt] = 'hotplug problem - {0}'.format(e.message)
                continue
            if applied:
                if value is None:
                    conf.pop(opt, None)
                    forced.discard(opt)
                else:
                    conf[opt] = value
                del pend[opt]

    def _hot_delete_ok(self, vm, opt, feats):
        conf = vm.config
        if o.is_fastplug(opt):
            return True
        if opt == 'hotplug':
            return not re.search(r'cpu|memory', str(conf.get('hotplug', '')))
        if opt == 'tablet':
            return 'usb' in feats
        if o.USB_KEY.match(opt):
            return self._usb_hotplug_ok(vm, feats)
        if opt == 'vcpus':
            return 'cpu' in feats
        if opt == 'balloon':
            return str(conf.get('balloon', '')) != '0'
        if nets.NET_KEY.match(opt):
            return 'network' in feats
        if d.is_drive(opt):
            return 'disk' in feats and opt.startswith(('scsi', 'virtio'))
        if opt == 'memory':
            return 'memory' in feats
        return opt in ('cpuunits', 'cpulimit')

    def _hot_set_ok(self, vm, opt, value, feats):
        conf = vm.config
        if o.is_fastplug(opt):
            return True
        if opt == 'hotplug':
            return not (re.search(r'cpu|memory', str(conf.get('hotplug', ''))) or re.search(r'cpu|memory', str(value)))
        if opt == 'tablet':
            return 'usb' in feats
        if o.USB_KEY.match(opt):
            return self._usb_hotplug_ok(vm, feats)
        if opt == 'vcpus':
            return 'cpu' in feats
        if opt == 'balloon':
            old = conf.get('balloon')
            return not ((old is None or str(old) != '0') and str(value) == '0') and not (str(old) == '0' and str(value) != '0')
        if opt in ('cpuunits', 'cpulimit'):
            return True
        if opt == 'agent':
            return self._agent_live(conf.get('agent'), value)
        if nets.NET_KEY.match(opt):
            old = conf.get(opt)
            after = nets.parse_net(value)
            if old is None:
                if 'network' in feats:
                    self._check_bridge(after)
                return 'network' in feats
            before = nets.parse_net(old)
            replug = any(before.get(k) != after.get(k) for k in nets.NET_REPLUG_OPTS) \
                or (('bridge' in before) != ('bridge' in after))
            if replug and 'network' not in feats:
                return False
            if replug or before.get('bridge') != after.get('bridge'):
                self._check_bridge(after)
            return True
        if d.is_drive(opt):
            if opt in ('efidisk0', 'tpmstate0') or d.is_cloudinit(value):
                return False
            old = conf.get(opt)
            if old is not None:
                old_vol, old_props = d.parse_drive(old)
                new_vol, new_props = d.parse_drive(value)
                if (old_props.get('media') or 'disk') != (new_props.get('media') or 'disk'):
                    raise die('unable to change media type')
                if d.is_cdrom(old):
                    return True
                if new_vol != old_vol:
                    if 'disk' not in feats:
                        return False
                    self._register_unused(vm, old)
                    return True
                return not any(old_props.get(k) != new_props.get(k) for k in d.DISK_COLD_OPTS)
            return 'disk' in feats and not opt.startswith(('ide', 'sata'))
        if opt == 'memory':
            return 'memory' in feats
        return False
