"""Cluster-wide calls: /cluster/nextid and /version.

Sources: pve-manager 9.2.11 PVE/API2/Cluster.pm `nextid`; docs/pve-semantics.md §18 (D18).
"""

from fakepve.routing import die, param_error
from fakepve.server import ok


class ClusterMixin:
    """nextid and version."""

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
