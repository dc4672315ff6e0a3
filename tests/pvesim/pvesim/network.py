"""Node networking: the bridges a node lists, the bridge check of plugging a NIC, and who may use a bridge.

Sources: pve-manager 9.2.11 PVE/API2/Network.pm `index`; pve-common PVE/Network.pm `tap_plug`; qemu-server
PVE/QemuServer.pm `check_bridge_access`, pve-guest-common PVE/GuestHelpers.pm `check_vnet_access`.
"""

from fakepve.model import PveError
from fakepve.routing import die

from . import nets


class NetworkMixin:
    """Bridges: listing, the plug check and the SDN.Use check."""

    def _check_bridge_access(self, user, params):
        """QemuServer.pm check_bridge_access (create and update, on the NICs being set): SDN.Use on
        /sdn/zones/localnetwork/<bridge>, or on .../<bridge>/<tag> for a tagged NIC (check_vnet_access);
        root@pam is exempt. pvesim has no SDN zones, so every bridge is in `localnetwork`."""
        if user == 'root@pam':
            return
        for key in sorted(params):
            if not nets.NET_KEY.match(key):
                continue
            net = nets.parse_net(params[key])
            if not net.get('bridge'):
                continue
            path = '/sdn/zones/localnetwork/' + net['bridge'] + ('/' + net['tag'] if net.get('tag') else '')
            if not self.allowed(user, path, 'SDN.Use'):
                raise PveError(403, 'Permission check failed ({0}, SDN.Use)'.format(path))

    def _check_bridge(self, net):
        """PVE::Network tap_plug: plugging a NIC into a bridge the node lacks fails (hotplug and start)."""
        bridge = net.get('bridge')
        if bridge and bridge not in self.bridges:
            raise die("bridge '{0}' does not exist".format(bridge))

    async def _sim_network(self, v, user):
        """GET /nodes/{node}/network: the seed's bridges, as pve-manager PVE/API2/Network.pm `index` lists them.

        `type` keeps the interfaces of that type; `any_bridge` and `any_local_bridge` keep Linux and OVS
        bridges (`any_bridge` and `include_sdn` would add the node's SDN VNets; pvesim models none). Then,
        "always check bridge access": a bridge the user holds neither SDN.Audit nor SDN.Use on
        (`/sdn/zones/localnetwork/<bridge>`, `check_sdn_bridge`) is left out, except for root@pam."""
        out = []
        for n, name in enumerate(self.bridges):
            item = {'iface': name, 'type': 'bridge', 'method': 'manual', 'families': ['inet'], 'active': 1,
                    'autostart': 1, 'bridge_ports': 'eno{0}'.format(n + 1), 'bridge_stp': 'off', 'bridge_fd': '0',
                    'priority': n + 3}
            if v.get('type') not in (None, 'bridge', 'any_bridge', 'any_local_bridge', 'include_sdn'):
                continue
            zone = '/sdn/zones/localnetwork/' + name
            if user != 'root@pam' and not (self.allowed(user, zone, 'SDN.Audit') or self.allowed(user, zone, 'SDN.Use')):
                continue
            out.append(item)
        return out
