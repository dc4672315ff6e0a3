"""ACLs as PVE evaluates them: propagation down the path tree, roles, pools, API tokens with privilege
separation, and GET /access/permissions (docs/pve-semantics.md §24)."""

from fakepve import shapes
from fakepve.model import PveError

# The paths get_effective_permissions always considers (RPCEnvironment.pm).
TOP_LEVEL_PATHS = ('/', '/access', '/access/groups', '/nodes', '/pool', '/sdn', '/storage', '/vms')
# A pseudo-privilege that stands for the NoAccess role until the roles are compiled.
NO_ACCESS = 'NoAccess'


def normalize_path(path):
    """AccessControl.pm normalize_path: no repeated or trailing slashes."""
    return '/' + '/'.join(seg for seg in str(path).split('/') if seg)


def expand_roles(names):
    """A seed's ACL entry lists privileges and/or built-in role names; a role stands for its privileges."""
    privs = set()
    for name in names:
        if name == NO_ACCESS:
            privs.add(NO_ACCESS)
        elif name in shapes.ROLES:
            privs.update(shapes.ROLES[name])
        else:
            privs.add(name)
    return privs


class PermissionsMixin:
    """Replaces fakepve's flat ACL (every grant propagating, a token holding its user's privileges or its
    own) with the evaluation of pve-access-control 9.x."""

    def _permissions_init(self):
        # ugid (user or full token id) -> {path: {privilege: propagate}}
        self.acl_entries = {}
        # full token id -> privilege separation (API2/User.pm token option `privsep`)
        self.token_privsep = {}

    def grant(self, user, path, *privs):
        """fakepve's grant (kept so its own bookkeeping stays valid), recorded with propagate=1."""
        super().grant(user, path, *privs)
        self.grant_acl(user, path, privs, propagate=1)

    def grant_acl(self, ugid, path, names, propagate=1):
        """ACL.pm update_acl: set privileges (or roles) for a user or token on a path."""
        if self.acl is None:
            self.acl = {}
        level = self.acl_entries.setdefault(ugid, {}).setdefault(normalize_path(path), {})
        for priv in expand_roles(names):
            level[priv] = max(level.get(priv, 0), 1 if propagate else 0)

    def _roles_on(self, ugid, path):
        """AccessControl.pm roles: walk from / to path; the deepest level with entries that apply replaces
        what came from above; an ancestor's entry applies only if it propagates. {priv: propagate}."""
        entries = self.acl_entries.get(ugid, {})
        segs = [seg for seg in path.split('/') if seg]
        held = {}
        for depth in range(len(segs) + 1):
            level = '/' + '/'.join(segs[:depth])
            final = depth == len(segs)
            new = dict((p, prop) for p, prop in entries.get(level, {}).items() if final or prop)
            if new:
                held = new
        return {NO_ACCESS: 0} if NO_ACCESS in held else held

    def _compile_acl_path(self, ugid, path):
        """RPCEnvironment.pm $compile_acl_path for one user or token: its roles, then the roles of the pools
        the guest or storage belongs to (propagate 0, only privileges the path lacks). A path's own
        NoAccess stays; a pool's NoAccess wins over ordinary roles."""
        held = self._roles_on(ugid, path)
        segs = path.split('/')
        pools = []
        if len(segs) == 3 and segs[1] == 'vms' and segs[2].isdigit():
            pools = [name for name, ids in self.pools.items() if int(segs[2]) in ids]
        elif len(segs) == 3 and segs[1] == 'storage':
            pools = [name for name, meta in self.pool_info.items() if segs[2] in meta.get('storage', ())]
        if NO_ACCESS not in held:
            for name in pools:
                from_pool = self._roles_on(ugid, '/pool/' + name)
                if NO_ACCESS in from_pool:
                    held = {NO_ACCESS: 0}
                    break
                for priv in from_pool:
                    held.setdefault(priv, 0)
        return {} if NO_ACCESS in held else held

    def permissions_on(self, authid, path):
        """RPCEnvironment.pm permissions: {privilege: propagate} that a user or token holds on path.
        root@pam holds every privilege. A token without privilege separation holds its user's; with it,
        the privileges both hold (propagating only where both propagate)."""
        path = normalize_path(path)
        user, _, token = authid.partition('!')
        if user == 'root@pam' and not token:
            return dict.fromkeys(shapes.PRIVILEGES, 1)
        if not token:
            return self._compile_acl_path(user, path)
        if authid not in self.apitokens:
            return {}
        user_privs = self.permissions_on(user, path)
        if not self.token_privsep.get(authid, True):
            return user_privs
        own = self._compile_acl_path(authid, path)
        return dict((p, min(prop, user_privs[p])) for p, prop in own.items() if p in user_privs)

    def allowed(self, user, path, priv):
        """The one privilege test behind every check (fakepve's checks and pvesim's): RPCEnvironment.pm
        check. Without any ACL (a bare fakepve) everyone may do anything."""
        if self.acl is None and not self.acl_entries:
            return True
        try:
            return priv in self.permissions_on(user, path)
        except ValueError:
            return False

    def _effective_paths(self):
        """RPCEnvironment.pm get_effective_permissions: the top-level paths, every ACL path and every pool
        member's path."""
        paths = set(TOP_LEVEL_PATHS)
        for levels in self.acl_entries.values():
            paths.update(levels)
        for ids in self.pools.values():
            paths.update('/vms/{0}'.format(vmid) for vmid in ids)
        for meta in self.pool_info.values():
            paths.update('/storage/' + sid for sid in meta.get('storage', ()))
        return sorted(paths)

    async def _permissions(self, v, user):
        """AccessControl.pm (API2) permissions: one's own permissions and those of one's own tokens; anyone
        else's need Sys.Audit on /access. With `path`: that path only (possibly empty); without: every path
        of _effective_paths where something is held."""
        who = v.get('userid') or user
        if who != user and who.partition('!')[0] != user:
            if not self.allowed(user, '/access', 'Sys.Audit'):
                raise PveError(403, 'Permission check failed (/access, Sys.Audit)')
        if v.get('path') is not None:
            path = normalize_path(v['path'])
            return {path: self.permissions_on(who, path)}
        held = ((path, self.permissions_on(who, path)) for path in self._effective_paths())
        return dict((path, privs) for path, privs in held if privs)
