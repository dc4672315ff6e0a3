"""The QEMU guest agent calls: availability checks and a network-get-interfaces answer.

Sources: qemu-server 9.2.6 src/PVE/QemuServer/Agent.pm `assert_agent_available`.
"""

from fakepve.model import PveError

from . import nets, options as o


class AgentMixin:
    """Guest agent calls."""

    async def _agent_call(self, match, values):
        """QemuServer/Agent.pm assert_agent_available: not configured, not running, agent down (500)."""
        vm = self.find(values['node'], values['vmid'])
        command = match.template.rsplit('/', 1)[1]
        if not o.agent_enabled(vm.config):
            raise PveError(500, 'No QEMU guest agent configured')
        if vm.status != 'running':
            raise PveError(500, 'VM {0} is not running'.format(vm.vmid))
        if getattr(vm, 'agent_down', False):
            raise PveError(500, 'QEMU guest agent is not running')
        if vm.agent is None:
            vm.agent = {}
        if command == 'network-get-interfaces' and 'interfaces' not in vm.agent:
            return {'result': self._guest_interfaces(vm)}
        return await super()._agent_call(match, values)

    @staticmethod
    def _guest_interfaces(vm):
        """A plausible guest-network-get-interfaces answer built from the VM's NICs."""
        out = [{'name': 'lo', 'hardware-address': '00:00:00:00:00:00', 'statistics': {},
                'ip-addresses': [{'ip-address': '127.0.0.1', 'ip-address-type': 'ipv4', 'prefix': 8},
                                 {'ip-address': '::1', 'ip-address-type': 'ipv6', 'prefix': 128}]}]
        nics = sorted((k for k in vm.config if nets.NET_KEY.match(k)), key=o.natural)
        for n, key in enumerate(nics):
            mac = (nets.parse_net(vm.config[key]).get('macaddr') or '').lower()
            host = (vm.vmid % 200) + 10
            out.append({'name': 'ens{0}'.format(18 + n), 'hardware-address': mac,
                        'statistics': {'rx-bytes': 1024, 'tx-bytes': 2048, 'rx-packets': 10, 'tx-packets': 20,
                                       'rx-errs': 0, 'tx-errs': 0, 'rx-dropped': 0, 'tx-dropped': 0},
                        'ip-addresses': [
                            {'ip-address': '192.0.{0}.{1}'.format(2 + n, host), 'ip-address-type': 'ipv4',
                             'prefix': 24},
                            {'ip-address': 'fe80::be24:11ff:fe{0}:{1}'.format(mac[12:14] or '00',
                                                                              (mac[15:17] or '00')),
                             'ip-address-type': 'ipv6', 'prefix': 64}]})
        return out
