"""What a config update does with a parameter sent without a value (a bare `name` in the form, no `=`), after the
schema check has let it through (docs/pve-semantics.md §32.3); `name=` is the empty string, an ordinary value (§74).

pve-http-server AnyEvent.pm `decode_urlencoded` reads a bare `name` as the name with an undefined value.
JSONSchema.pm `check_prop` lets an undefined optional parameter through (a
required one is `property is missing and it is not optional`, validation.py). qemu-server Qemu.pm
`update_vm_api` then:
* counts the key, so a bare `description` alone is not `no options specified`;
* `$check_drive_param` parses a drive key's value first: an undefined one is `unable to parse drive
  options`, HTTP 400, before the fork;
* writes every other key into the pending section; QemuServer.pm `write_vm_config` leaves out an undefined
  `description` (`generate_raw_config` prints it only when defined), and `check_type` refuses any other
  undefined value (`unable to parse value of '<key>' - got undefined value`), inside the update: HTTP 500
  for PUT, the `qmconfig` task's error for POST. PVE walks the keys in hash order, so a key processed
  before the undefined one may already be pending; pvesim refuses before any change (one of PVE's orders).
Every other endpoint ignores an undefined optional parameter, as the handlers read it as absent.
"""

from fakepve.model import TaskError
from fakepve.routing import die, param_error
from fakepve.server import USER, ok

from . import drives as d

# update_vm_api's extract_param names: not config keys.
NOT_CONFIG = ('node', 'vmid', 'digest', 'background_delay', 'skip_cloud_init', 'import-working-storage',
              'skiplock', 'delete', 'revert', 'force')
CONFIG = '/nodes/{node}/qemu/{vmid}/config'


class EmptyValuesMixin(object):
    """Called by ValidationMixin once the schema check passed."""

    async def _empty_value_answer(self, request, template, uri, values):
        """An answer for a config update with undefined config values, or None to let the handler run."""
        if template != CONFIG or request.method not in ('PUT', 'POST'):
            return None
        empty = sorted(k for k, v in values.items() if v is None and k not in NOT_CONFIG)
        if not empty:
            return None
        drives = [k for k in empty if d.is_drive(k)]
        if drives:
            raise param_error(**{k: 'unable to parse drive options' for k in drives})
        bad = [k for k in empty if k != 'description']
        given = [k for k, v in values.items() if v is not None and k not in NOT_CONFIG]
        if not bad and (given or values.get('delete') or values.get('revert')):
            return None  # the handler does the rest; the undefined description writes nothing
        vm = self.find(uri['node'], uri['vmid'])
        user = request[USER]
        for key in empty:
            self.require(user, '/vms/{0}'.format(vm.vmid), self._config_priv(key))
        message = "unable to parse value of '{0}' - got undefined value".format(bad[0]) if bad else None
        if request.method == 'PUT':
            self._check_lock(vm)
            if message:
                raise die(message)
            return ok(None)

        async def body():
            if message:
                raise TaskError(message)
        return ok(await self.task(vm.node, 'qmconfig', vm.vmid, user, body, vm=vm))
