#!/usr/bin/env python3
"""List every refusal site of Proxmox VE reachable from the handlers of the writes our modules make.

    inventory.py [--sources DIR] --write     regenerate docs/refusals/sites.json
    inventory.py [--sources DIR] --check     regenerate in memory, compare byte for byte (exit 1 if not)
    inventory.py [--sources DIR] --stats     print the counts only

DIR holds one git directory per repository, DIR/proxmox+<name>/repo (default build/pve-sources of the repository); each
file is read with `git show <commit>:<path>` at the commits of docs/refusals.md's table. The
writes are the POST/PUT/DELETE rows of SECURITY.md's endpoint table (tools/schema/extract.py
`write_endpoints`), `POST /access/ticket` aside (a login, no write); each is matched to the
`register_method` handler of its path and method.

From each handler the call graph is followed through every sub the sources define (see
`resolve` for what a call resolves to); what it cannot follow is listed under `unresolved`, never
dropped. In every reachable function a refusal site is a `die` (or `croak`/`confess`) of a
message, `raise_param_exc`, `raise_perm_exc`, `raise`, a permission check through `$rpcenv`
(not the `noerr` form) and a handler's declared `permissions` check; a `die` of a variable the
function sets to a string literal is a site with those messages; a `die` of any other variable
alone (`die $@`, `die $err`) re-raises an error raised elsewhere and is listed under `rethrows`.
A site's id is `repo:file:function:kind:<8 hex of sha1(template)>` (with `#n` for the n-th site
of the same template in one function), stable across line moves.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, 'tools', 'schema'))

import perl  # noqa: E402
from extract import write_endpoints  # noqa: E402

OUT = os.path.join(REPO, 'docs', 'refusals', 'sites.json')

DOC = os.path.join(REPO, 'docs', 'refusals.md')
# What is read of each repository (a directory prefix or a file); the version and commit are the
# census's table (docs/refusals.md, "Read at these versions").
READ = {
    'qemu-server': ['src/PVE/'],
    'pve-guest-common': ['src/PVE/'],
    'pve-storage': ['src/PVE/'],
    'pve-access-control': ['src/PVE/RPCEnvironment.pm', 'src/PVE/AccessControl.pm'],
    'pve-common': ['src/PVE/'],
    'pve-manager': ['PVE/API2/Pool.pm'],
    'pve-cluster': ['src/PVE/Cluster.pm'],
}
VERSION_ROW = re.compile(r'^\| proxmox/([\w-]+) \| ([\w.]+) \| `([0-9a-f]{40})`')


def sources(doc=DOC):
    """[(repository, version, commit, what is read)] from the census's table of versions."""
    found = {}
    with open(doc, encoding='utf-8') as f:
        for line in f:
            m = VERSION_ROW.match(line)
            if m and m.group(1) in READ:
                found[m.group(1)] = (m.group(2), m.group(3))
    missing = sorted(set(READ) - set(found))
    assert not missing, 'docs/refusals.md names no commit for %s' % missing
    return [(repo, found[repo][0], found[repo][1], READ[repo]) for repo in READ]


# Where the API mounts a handler package (pve-manager PVE/API2.pm, API2/Nodes.pm `subclass`).
MOUNTS = {'PVE::API2::Qemu': '/nodes/{node}/qemu', 'PVE::API2::Pool': '/pools'}
NOT_WRITES = {('POST', '/access/ticket'): 'a login (pve-access-control API2/AccessControl.pm create_ticket), no write'}

STORAGE_PLUGIN_BASE = 'PVE::Storage::Plugin'
# Variables the sources always name after their class (a parameter, so no `->new` shows it).
NAMED = {
    'rest_env': 'PVE::RESTEnvironment',  # RESTEnvironment.pm: the environment, PVE::RPCEnvironment at run time
    'cfg2cmd': 'PVE::QemuServer::Cfg2Cmd',  # QemuServer.pm config_to_command and its helpers
    'guest_class': 'PVE::AbstractConfig',  # Replication.pm: the guest's config class (PVE::QemuConfig for a VM)
}

PERL_BUILTINS = set('''abs accept alarm atan2 bind binmode bless caller chdir chmod chomp chop chown chr
chroot close closedir connect cos crypt dbmclose defined delete die do dump each eof eval exec exists exit
exp fcntl fileno flock fork format formline getc getlogin getpeername getpgrp getppid getpriority glob gmtime
goto grep hex index int ioctl join keys kill last lc lcfirst length link listen local localtime log lstat map
mkdir msgctl msgget msgrcv msgsnd my next no oct open opendir ord our pack pipe pop pos print printf prototype
push quotemeta rand read readdir readline readlink readpipe recv redo ref rename require reset return reverse
rewinddir rindex rmdir say scalar seek seekdir select semctl semget semop send setpgrp setpriority shift
shmctl shmget shmread shmwrite shutdown sin sleep socket socketpair sort splice split sprintf sqrt srand stat
study sub substr symlink syscall sysopen sysread sysseek system syswrite tell telldir tie tied time times
truncate uc ucfirst umask undef unlink unpack unshift untie use utime values vec wait waitpid wantarray warn
write if elsif else unless while until for foreach return and or not xor eq ne lt gt le ge cmp qw local
lock sprintf defined exists wantarray __PACKAGE__ croak confess carp cluck
'''.split())

REFUSE_CALLS = ('raise_param_exc', 'raise_perm_exc', 'raise')
DIE_WORDS = ('die', 'croak', 'confess')


def git_show(gitdir, commit, path):
    return subprocess.run(['git', '--git-dir', gitdir, 'show', '%s:%s' % (commit, path)], check=True,
                          stdout=subprocess.PIPE).stdout.decode('utf-8', 'replace')


def git_files(gitdir, commit, prefixes):
    out = subprocess.run(['git', '--git-dir', gitdir, 'ls-tree', '-r', '--name-only', commit], check=True,
                         stdout=subprocess.PIPE).stdout.decode().splitlines()
    return sorted(p for p in out if p.endswith('.pm') and any(p == x or (x.endswith('/') and p.startswith(x))
                                                             for x in prefixes))


class Function:
    def __init__(self, name, package, repo, path, masked, start, end, kind, body_start=None):
        self.name, self.package, self.repo, self.path = name, package, repo, path
        self.masked, self.start, self.end, self.kind = masked, start, end, kind
        self.body_start = start if body_start is None else body_start
        self.line = masked.line(start)
        self.handler = None  # (name, method, path) for a register_method handler
        self.permissions = None  # (offset, end) of a handler's `check => ...`

    @property
    def qname(self):
        return '%s::%s' % (self.package, self.name)


class Sources:
    def __init__(self, root, texts=None):
        """Every file of the census's sources under `root`, or `texts` ({(repo, path): text}) alone."""
        self.root = root
        self.functions = {}  # qname -> Function
        self.by_package = {}  # package -> {name: Function}
        self.bases = {}  # package -> [base packages]
        self.imports = {}  # package -> {name: package}
        self.uses = {}  # package -> [packages]
        self.files = []
        if texts is not None:
            for (repo, path), text in sorted(texts.items()):
                self.read(repo, path, text)
                self.files.append((repo, path))
            return
        for repo, version, commit, prefixes in sources():
            gitdir = os.path.join(root, 'proxmox+' + repo, 'repo')
            for path in git_files(gitdir, commit, prefixes):
                self.read(repo, path, git_show(gitdir, commit, path))
                self.files.append((repo, path))

    def read(self, repo, path, text):
        masked = perl.Masked(text)
        code = masked.code
        packages = [(m.start(), m.group(1)) for m in re.finditer(r'^package\s+([\w:]+)\s*;', code, re.M)]

        def package_at(offset):
            current = 'main'
            for start, name in packages:
                if start <= offset:
                    current = name
            return current

        for m in re.finditer(r'^use\s+(base|parent)\s+(.*?);', text, re.M):
            names = re.findall(r'[A-Z][\w:]+', m.group(2))
            self.bases.setdefault(package_at(m.start()), []).extend(n for n in names if n != '-norequire')
        for m in re.finditer(r'^our\s+@ISA\s*=\s*(?:qw)?\s*[(\[]?([^;]*);', text, re.M):
            self.bases.setdefault(package_at(m.start()), []).extend(re.findall(r'[A-Z][\w:]+', m.group(1)))
        for m in re.finditer(r'^use\s+([A-Z][\w:]+)\s*(.*?);', text, re.M | re.S):
            pkg = package_at(m.start())
            self.uses.setdefault(pkg, []).append(m.group(1))
            for name in re.findall(r'\b([a-z_]\w*)\b', re.sub(r'^qw', '', m.group(2).strip())):
                if m.group(2).strip():
                    self.imports.setdefault(pkg, {})[name] = m.group(1)

        def add(fn):
            self.functions[fn.qname] = fn
            self.by_package.setdefault(fn.package, {})[fn.name] = fn

        for m in re.finditer(r'^(?:my\s+)?sub\s+(\w+)\b', code, re.M):
            end = re.compile(r'^\}', re.M).search(code, m.end())
            add(Function(m.group(1), package_at(m.start()), repo, path, masked, m.start(),
                         end.end() if end else len(code), 'sub'))
        for m in re.finditer(r'^(?:my|our)\s+\$(\w+)\s*=\s*sub\b', code, re.M):
            end = re.compile(r'^\}', re.M).search(code, m.end())
            add(Function('$' + m.group(1), package_at(m.start()), repo, path, masked, m.start(),
                         end.end() if end else len(code), 'closure'))
        for m in re.finditer(r'^__PACKAGE__->register_method\s*\(', code, re.M):
            end = re.compile(r'^\}\s*\)', re.M).search(code, m.end())
            end = end.end() if end else len(code)
            block = text[m.start():end]
            name = re.search(r"^\s{4}name\s*=>\s*'(\w+)'", block, re.M)
            if not name:
                continue
            method = re.search(r"^\s{4}method\s*=>\s*'(\w+)'", block, re.M)
            hpath = re.search(r"^\s{4}path\s*=>\s*'([^']*)'", block, re.M)
            codeat = re.search(r'^\s{4}code\s*=>\s*sub\b', code[m.start():end], re.M)
            fn = Function(name.group(1), package_at(m.start()), repo, path, masked, m.start(), end, 'handler',
                          body_start=m.start() + codeat.start() if codeat else end)
            fn.line = masked.line(m.start() + name.start())
            fn.handler = (name.group(1), method.group(1) if method else 'GET', hpath.group(1) if hpath else '')
            perms = re.search(r'^\s{4}permissions\s*=>\s*\{', code[m.start():end], re.M)
            if perms:
                pstart = m.start() + perms.end() - 1
                pend = perl.bracket_end(code, pstart)
                check = re.search(r'\bcheck\s*=>\s*', code[pstart:pend])
                if check:
                    cstart = pstart + check.end()
                    fn.permissions = (cstart, perl.bracket_end(code, cstart) if code[cstart] in '[(' else cstart)
            add(fn)

    # ---- resolution -------------------------------------------------------------------------
    def mro(self, package):
        order, todo = [], [package]
        while todo:
            p = todo.pop(0)
            if p not in order:
                order.append(p)
                todo.extend(self.bases.get(p, []))
        return order

    def subclasses(self, package):
        return sorted(p for p in set(self.by_package) | set(self.bases)
                      if p != package and package in self.mro(p))

    def method(self, package, name):
        """The sub a method call on `package` runs: the first of its class hierarchy defining it."""
        for p in self.mro(package):
            fn = self.by_package.get(p, {}).get(name)
            if fn:
                return fn
        return None

    def dispatch(self, package, name):
        """A call through `$class`/`$self` in `package`: the method as `package` resolves it, and
        as each subclass in the sources resolves it (the class at run time is one of them)."""
        found = []
        for p in [package] + self.subclasses(package):
            fn = self.method(p, name)
            if fn and fn not in found:
                found.append(fn)
        return found


CALL_QUALIFIED = re.compile(r'(?<![\w$@%:>])&?((?:[A-Z]\w*::)+)(\w+)\s*(?=\()|\\&((?:[A-Z]\w*::)+)(\w+)')
CALL_CLASS = re.compile(r'(?<![\w$@%:])((?:[A-Z]\w*)(?:::\w+)*|__PACKAGE__)->(\w+)\b')
CALL_VAR_METHOD = re.compile(r'\$(\w+)->(\w+)\b')
CALL_CODEREF = re.compile(r'(?:\$(\w+)->\s*\(|&\$(\w+)\s*\(|&\$(\w+)\b|\\&(\w+)\b)')
CALL_BARE = re.compile(r'(?<![\w$@%&:>\-])([a-z_]\w*)\s*\(')
LOCAL_SUB = re.compile(r'\$(\w+)\s*=\s*sub\b')

NOT_FOLLOWED = {
    'PVE::Exception': 'the raise mechanism itself: each raise_* call is a site',
}


class Graph:
    """The calls of each function, resolved, and the refusal sites in it."""

    def __init__(self, src):
        self.src = src
        self.calls = {}  # qname -> [(line, text, [targets] or None, reason)]

    def closures(self, fn):
        """Names of the closures fn defines (`my $x = sub`, `$x = sub`): calls through them stay inside
        fn, whose sites are its own. A call through any other code reference is unresolved."""
        return set(LOCAL_SUB.findall(fn.masked.code[fn.start:fn.end]))

    def resolve_calls(self, fn):
        if fn.qname in self.calls:
            return self.calls[fn.qname]
        src, code, masked = self.src, fn.masked.code, fn.masked
        lo, hi = fn.body_start, fn.end
        body = code[lo:hi]
        out = []
        local = self.closures(fn)
        package_closures = {n[1:] for n in src.by_package.get(fn.package, {}) if n.startswith('$')}

        def note(offset, text, targets, reason=None):
            out.append((masked.line(lo + offset), text, targets, reason))

        for m in CALL_QUALIFIED.finditer(body):
            pkg = (m.group(1) or m.group(3))[:-2]
            name = m.group(2) or m.group(4)
            text = '%s::%s' % (pkg, name)
            if pkg in NOT_FOLLOWED:
                continue
            if pkg not in src.by_package and pkg not in src.bases:
                note(m.start(), text, None, 'outside the sources')
                continue
            target = src.by_package.get(pkg, {}).get(name)
            if not target and name in src.imports.get(pkg, {}):
                target = src.by_package.get(src.imports[pkg][name], {}).get(name)  # re-exported
            note(m.start(), text, [target] if target else None, None if target else 'not defined in the sources')
        for m in CALL_CLASS.finditer(body):
            pkg, name = m.group(1), m.group(2)
            pkg = fn.package if pkg == '__PACKAGE__' else pkg
            text = '%s->%s' % (m.group(1), name)
            if pkg in NOT_FOLLOWED:
                continue
            if pkg not in src.by_package and pkg not in src.bases:
                note(m.start(), text, None, 'outside the sources')
                continue
            target = src.method(pkg, name)
            note(m.start(), text, [target] if target else None, None if target else 'not defined in the sources')
        # `my $x = Pkg->new(...)`: a method on $x is Pkg's
        typed = dict(NAMED)
        typed.update((v, p) for v, p in re.findall(r'\bmy\s+\$(\w+)\s*=\s*([A-Z][\w:]+)->new\b', body)
                     if p in src.by_package)
        for m in re.finditer(r'\$(\w+)->(SUPER::)?(\w+)\b', body):
            var, sup, name = m.group(1), m.group(2), m.group(3)
            text = '$%s->%s%s' % (var, sup or '', name)
            if sup:
                targets = [t for b in src.bases.get(fn.package, []) for t in [src.method(b, name)] if t]
                note(m.start(), text, targets or None, None if targets else 'SUPER method not in the sources')
            elif var in ('class', 'self'):
                targets = src.dispatch(fn.package, name)
                note(m.start(), text, targets or None, None if targets else 'method not in the sources')
            elif var == 'rpcenv':
                target = src.method('PVE::RPCEnvironment', name)
                note(m.start(), text, [target] if target else None, None if target else 'method not in the sources')
            elif var == 'plugin':
                plugins = [STORAGE_PLUGIN_BASE] + src.subclasses(STORAGE_PLUGIN_BASE)
                targets = []
                for p in plugins:
                    t = src.method(p, name)
                    if t and t not in targets:
                        targets.append(t)
                note(m.start(), text, targets or None, None if targets else 'method not in the sources')
            elif var in typed:
                targets = src.dispatch(typed[var], name)
                note(m.start(), text, targets or None, None if targets else 'method not in the sources')
            else:
                note(m.start(), text, None, 'method on $%s' % var)
        for m in re.finditer(r'(?<![\w@%])\$(\w+)\b(?!\s*->\s*[\[{])(?!\s*\{)', body):
            name = m.group(1)
            if name in local:
                continue
            if name in package_closures:
                target = src.by_package[fn.package]['$' + name]
                if target is not fn:
                    note(m.start(), '$' + name, [target])
                continue
            after = body[m.end():m.end() + 4]
            if re.match(r'\s*->\s*\(', after) or (m.start() > 0 and body[m.start() - 1] == '&'):
                note(m.start(), '$%s->(...)' % name, None, 'code reference $%s' % name)
        for m in re.finditer(r'\\&(\w+)\b', body):
            target = src.by_package.get(fn.package, {}).get(m.group(1))
            if target:
                note(m.start(), '\\&' + m.group(1), [target])
        for m in CALL_BARE.finditer(body):
            name = m.group(1)
            if name in PERL_BUILTINS or name in REFUSE_CALLS or name in DIE_WORDS:
                continue
            target = src.by_package.get(fn.package, {}).get(name)
            if not target:
                origin = src.imports.get(fn.package, {}).get(name)
                if origin in NOT_FOLLOWED:
                    continue
                if origin:
                    target = src.by_package.get(origin, {}).get(name)
                    if not target:
                        note(m.start(), name, None, 'imported from %s, %s' % (
                            origin, 'outside the sources' if origin not in src.by_package else 'not defined there'))
                        continue
            if not target:
                defining = [p for p in src.uses.get(fn.package, []) if name in src.by_package.get(p, {})]
                if len(defining) == 1:
                    target = src.by_package[defining[0]][name]
            if target:
                note(m.start(), name, [target])
            else:
                note(m.start(), name, None, 'bare call not defined in the package or its imports')
        self.calls[fn.qname] = out
        return out

    def assigned_message(self, fn, expression):
        """The messages a `die $msg` raises when fn sets `$msg` to a string literal (joined by ` | `
        in the order written), else None: `die $err` of an error caught is a re-raise."""
        var = re.match(r'^\$(\w+)$', expression)
        if not var:
            return None
        code = fn.masked.code
        words = []
        for m in re.finditer(r'(?:\bmy\s+)?\$%s\s*\.?=\s*(?=["\'])' % var.group(1), code[fn.start:fn.end]):
            a = fn.start + m.end()
            words.append(perl.template(fn.masked, a, perl.statement_end(code, a)))
        return ' | '.join(words) or None

    def sites(self, fn):
        """[(offset, kind, template)] and the rethrows of fn."""
        code, text, masked = fn.masked.code, fn.masked.text, fn.masked
        lo, hi = fn.body_start, fn.end
        found, rethrows = [], []
        for m in re.finditer(r'(?<![\w$@%&>:])(die|croak|confess)\b(?!\s*=>)', code[lo:hi]):
            a = lo + m.end()
            if code[a:a + 1] == '(':
                e = perl.bracket_end(code, a)
                inner = (a + 1, e - 1)
            else:
                e = perl.statement_end(code, a)
                inner = (a, e)
            has_literal = any(inner[0] <= s < inner[1] for s, _ in masked.strings)
            words = perl.template(masked, inner[0], inner[1])
            expression = ' '.join(text[inner[0]:inner[1]].split())
            assigned = self.assigned_message(fn, expression)
            if has_literal:
                found.append((lo + m.start(), 'die', words))
            elif assigned:
                found.append((lo + m.start(), 'die', assigned))
            else:
                rethrows.append((lo + m.start(), expression or '$@'))
        for m in re.finditer(r'(?<![\w$@%&>])(?:PVE::Exception::)?(raise_param_exc|raise_perm_exc|raise)\s*\(',
                             code[lo:hi]):
            a = lo + m.end() - 1
            e = perl.bracket_end(code, a)
            found.append((lo + m.start(), m.group(1), ' '.join(text[a + 1:e - 1].split())))
        for m in re.finditer(r'\$rpcenv->(check\w*)\s*\(', code[lo:hi]):
            a = lo + m.end() - 1
            e = perl.bracket_end(code, a)
            args = ' '.join(text[a + 1:e - 1].split())
            if re.search(r",\s*1\s*,?\s*$", args) or re.search(r'\$noerr\s*$', args):
                continue  # the noerr form answers, it does not refuse
            found.append((lo + m.start(), 'permission', '%s(%s)' % (m.group(1), args)))
        if fn.permissions:
            a, e = fn.permissions
            found.append((a, 'permission', 'declared: ' + ' '.join(text[a:e].split())))
        return found, rethrows


def site_id(fn, kind, words, ordinal):
    h = hashlib.sha1(words.encode('utf-8')).hexdigest()[:8]
    base = '%s:%s:%s:%s:%s' % (fn.repo, fn.path, fn.qname, kind, h)
    return base if ordinal == 0 else '%s#%d' % (base, ordinal)


def handlers_of_writes(src, security_md):
    writes, missing = [], []
    for method, path in write_endpoints(security_md):
        if (method, path) in NOT_WRITES:
            continue
        norm = re.sub(r'\{[^}]*\}', '{}', path)
        found = None
        for fn in src.functions.values():
            if fn.kind != 'handler' or fn.package not in MOUNTS or fn.handler[1] != method:
                continue
            full = MOUNTS[fn.package] + ('/' + fn.handler[2] if fn.handler[2] else '')
            if re.sub(r'\{[^}]*\}', '{}', full) == norm:
                found = fn
        if found:
            writes.append((method, path, found))
        else:
            missing.append((method, path))
    return writes, missing


def build(root, security_md):
    src = Sources(root)
    graph = Graph(src)
    writes, missing = handlers_of_writes(src, security_md)
    handlers = sorted({fn.qname: fn for _, _, fn in writes}.values(), key=lambda f: f.qname)
    reach = {}  # qname -> set of handler names
    depth = {}
    for h in handlers:
        todo, seen = [(h, 0)], {h.qname}
        while todo:
            fn, d = todo.pop(0)
            reach.setdefault(fn.qname, set()).add(h.name)
            depth[fn.qname] = min(depth.get(fn.qname, d), d)
            for _, _, targets, _ in graph.resolve_calls(fn):
                for t in targets or []:
                    if t.qname not in seen and t.package not in NOT_FOLLOWED:
                        seen.add(t.qname)
                        todo.append((t, d + 1))
    sites, rethrows, unresolved = [], [], []
    for qname in sorted(reach):
        fn = src.functions[qname]
        hs = sorted(reach[qname])
        found, again = graph.sites(fn)
        ordinals = {}
        for offset, kind, words in sorted(found):
            key = (kind, words)
            n = ordinals.get(key, 0)
            ordinals[key] = n + 1
            sites.append({'id': site_id(fn, kind, words, n), 'repo': fn.repo, 'file': fn.path,
                          'function': qname, 'line': fn.masked.line(offset), 'kind': kind,
                          'template': words, 'handlers': hs})
        for offset, words in sorted(again):
            rethrows.append({'repo': fn.repo, 'file': fn.path, 'function': qname,
                             'line': fn.masked.line(offset), 'expression': words})
        seen_calls = set()
        for line, text, targets, reason in graph.resolve_calls(fn):
            if targets is None and (line, text) not in seen_calls:
                seen_calls.add((line, text))
                unresolved.append({'repo': fn.repo, 'file': fn.path, 'function': qname, 'line': line,
                                   'call': text, 'reason': reason})
    functions = [{'function': q, 'repo': src.functions[q].repo, 'file': src.functions[q].path,
                  'line': src.functions[q].line, 'depth': depth[q], 'handlers': sorted(reach[q])}
                 for q in sorted(reach)]
    return {
        'about': 'Refusal sites of Proxmox VE reachable from the handlers of the writes our modules make; '
                 'generated by tools/refusals/inventory.py, do not edit (docs/refusals.md says how to read it). '
                 'The handlers reaching an unresolved call are those of its function (`functions`).',
        'sources': [{'repo': r, 'version': v, 'commit': c, 'read': p} for r, v, c, p in sources()],
        'resolution': [
            'Pkg::name(...) and \\&Pkg::name: the sub of that package, or the one it imports under that name',
            'Pkg->name, __PACKAGE__->name: the first definition in the class hierarchy (use base/parent, @ISA)',
            '$class->name, $self->name: as the package the call is in resolves it, and as each of its '
            'subclasses in the sources does (the class at run time is one of them)',
            '$rpcenv->name: PVE::RPCEnvironment and its bases',
            '$x->name where the function has `my $x = Pkg->new(...)`, and $rest_env, $cfg2cmd, $guest_class '
            '(named after their class throughout the sources): as $class->name in Pkg',
            '$plugin->name: every storage plugin (PVE::Storage::Plugin and its subclasses in the sources) '
            'as its class hierarchy resolves it',
            'name(...): the package\'s own sub, else the one its `use X qw(...)` imports, else the one sub '
            'of that name among the packages it uses',
            '$name of a file-level `my $name = sub`: that closure, wherever it is named (called or passed on)',
            'PVE::Exception is not followed: each raise_* call is a site',
        ],
        'writes': [{'method': m, 'path': p, 'handler': fn.qname, 'file': fn.path, 'line': fn.line}
                   for m, p, fn in writes],
        'writes_without_handler': [{'method': m, 'path': p} for m, p in missing],
        'not_writes': [{'method': m, 'path': p, 'why': w} for (m, p), w in sorted(NOT_WRITES.items())],
        'counts': {'handlers': len(handlers), 'functions': len(reach), 'sites': len(sites),
                   'rethrows': len(rethrows), 'unresolved': len(unresolved)},
        'functions': functions,
        'sites': sorted(sites, key=lambda s: s['id']),
        'rethrows': sorted(rethrows, key=lambda s: (s['repo'], s['file'], s['line'])),
        'unresolved': sorted(unresolved, key=lambda s: (s['repo'], s['file'], s['line'], s['call'])),
    }


def render(data):
    """Sorted keys; each entry of a list on a line of its own, so a change shows as a readable diff."""
    def one(value):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    out = ['{']
    keys = sorted(data)
    for i, key in enumerate(keys):
        value = data[key]
        end = ',' if i < len(keys) - 1 else ''
        if isinstance(value, list) and value:
            out.append(' %s: [' % one(key))
            out += ['  %s%s' % (one(v), ',' if j < len(value) - 1 else '') for j, v in enumerate(value)]
            out.append(' ]' + end)
        else:
            out.append(' %s: %s%s' % (one(key), one(value), end))
    out.append('}')
    return '\n'.join(out) + '\n'


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sources', default=os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'build', 'pve-sources'), help='directory of proxmox+<repo>/repo git dirs')
    ap.add_argument('--out', default=OUT)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument('--write', action='store_true')
    mode.add_argument('--check', action='store_true')
    mode.add_argument('--stats', action='store_true')
    args = ap.parse_args(argv)
    data = build(args.sources, os.path.join(REPO, 'SECURITY.md'))
    text = render(data)
    if args.stats:
        print(json.dumps(data['counts'], sort_keys=True))
        return 0
    if args.write:
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, 'w', encoding='utf-8') as f:
            f.write(text)
        print('wrote %s: %s' % (os.path.relpath(args.out, REPO), json.dumps(data['counts'], sort_keys=True)))
        return 0
    with open(args.out, encoding='utf-8') as f:
        if f.read() != text:
            print('%s is not what the sources give: run inventory.py --write' % args.out, file=sys.stderr)
            return 1
    print('%s matches the sources' % os.path.relpath(args.out, REPO))
    return 0


if __name__ == '__main__':
    sys.exit(main())
