"""Cluster-wide calls: /cluster/nextid and /version, and the answer for a node the cluster does not know.

Sources: pve-manager 9.2.11 PVE/API2/Cluster.pm `nextid`; docs/pve-semantics.md §18 (D18).
"""

from fakepve.routing import die, param_error
from fakepve.server import error, ok

# pve-common PVE/Network.pm get_ip_from_hostname around PVE/Tools.pm getaddrinfo_all.
HOSTNAME_LOOKUP = "hostname lookup '{0}' failed - failed to get address info for: {0}: Name or service not known"


class ClusterMixin:
    """nextid and version; unknown nodes."""

    async def _answer(self, request, handler, generic, path_node):
        """Every call under /nodes/{node} is proxied to that node (pve-manager PVE/HTTPServer.pm
        rest_handler, `proxyto`; pve-cluster PVE/Cluster.pm remote_node_ip): a name that is neither a
        cluster member nor `localhost` fails the address lookup, HTTP 500, before the method runs (so before
        its parameters are checked, which happens on the target node). fakepve does this only for the
        calls it answers from the schema; this covers pvesim's own routes (config, disks, power, ...)."""
        if path_node and path_node != 'localhost' and path_node not in self.nodes:
            return error(500, HOSTNAME_LOOKUP.format(path_node))
        return await super()._answer(request, handler, generic, path_node)

    async def _nextid(self, v, user):
        """Cluster.pm nextid: a string; first free id in datacenter next-id [lower, upper) (§18, D18)."""
        if v.get('vmid') not in (None, ''):
            if self.guest(int(v['vmid'])):
                raise param_error(vmid='VM {0} already exists'.format(v['vmid']))
            return str(v['vmid'])
        rng = self.datacenter.get('next-id') or {}
        lower, upper = int(rng.get('lower', 100)), int(rng.get('upper', 1000000))
        taken = set(vm.vmid for vm in self.vms) | set(ct.vmid for ct in self.cts)
        for vmid in range(lower, upper):
            if vmid not in taken:
                return str(vmid)
        raise die('unable to get any free VMID in range [{0}, {1}]'.format(lower, upper))

    async def _version(self, request):
        return ok({'version': self.version, 'release': self.release_version, 'repoid': self.repoid})
