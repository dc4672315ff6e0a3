"""Node networking: the bridges a node lists, and the bridge check of plugging a NIC.

Sources: pve-manager 9.2.11 PVE/API2/Network.pm `index`; pve-common PVE/Network.pm `tap_plug`.
"""

from fakepve.routing import die


class NetworkMixin:
    """Bridges: listing and the plug check."""

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
