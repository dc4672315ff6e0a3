"""Every Python test function can fail (issue 28): its body asserts, expects an exception, or calls a
helper that does. The Rust half of the rule is in module_utils/tests/tidy.rs.

A helper "asserts" when its own body (or a helper it calls, followed by name) contains `assert`,
`raise`, `pytest.raises`/`pytest.fail`, or a `check=True` subprocess run. Helpers are matched by name
across tests/ (the harness's methods such as `Ansible.converge` are called as `ansible.converge`),
which can only over-credit a test whose helper shares a name with an asserting one: the broken
fixture below shows the rule refusing a test that only prints.
"""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP_DIRS = {'.venv', 'build', 'dist', 'target', '__pycache__', 'node_modules', '.git'}

# Test functions allowed to contain no assertion, each with its reason. None today.
EXCEPTIONS = {}


def python_files():
    for base, dirs, files in os.walk(os.path.join(ROOT, 'tests')):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            if name.endswith('.py'):
                yield os.path.join(base, name)


def _called_name(call):
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _fails_directly(fn):
    """Whether `fn`'s body holds a way to fail by itself, and the names of the functions it calls."""
    fails, calls = False, set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assert, ast.Raise)):
            fails = True
        elif isinstance(node, ast.Call):
            name = _called_name(node)
            if name in ('raises', 'fail', 'check_call', 'check_output'):
                fails = True
            elif any(k.arg == 'check' and isinstance(k.value, ast.Constant) and k.value.value is True
                     for k in node.keywords):
                fails = True
            if name:
                calls.add(name)
        elif isinstance(node, ast.withitem):
            ctx = node.context_expr
            if isinstance(ctx, ast.Call) and _called_name(ctx) == 'raises':
                fails = True
    return fails, calls


def functions(sources):
    """(path, name, fails directly, called names) of every function of `sources` ((path, text) pairs)."""
    out = []
    for path, text in sources:
        for node in ast.walk(ast.parse(text, path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fails, calls = _fails_directly(node)
                out.append((path, node.name, fails, calls))
    return out


def unfailing_tests(sources):
    """`path::name` of each `test_*` function of a `test_*.py` file that cannot fail."""
    funcs = functions(sources)
    asserting = {name for _, name, fails, _ in funcs if fails}
    grew = True
    while grew:  # helpers that call asserting helpers assert too
        grew = False
        for _, name, _, calls in funcs:
            if name not in asserting and calls & asserting:
                asserting.add(name)
                grew = True
    bad = []
    for path, name, fails, calls in funcs:
        if os.path.basename(path).startswith('test_') and name.startswith('test_'):
            if not fails and not calls & asserting:
                bad.append('%s::%s' % (os.path.relpath(path, ROOT), name))
    return sorted(bad)


def test_every_python_test_can_fail():
    sources = [(p, open(p, encoding='utf-8').read()) for p in python_files()]
    tests = [f for f in functions(sources) if f[1].startswith('test_')]
    assert len(tests) > 300, 'found only %d test functions under tests/' % len(tests)
    bad = [t for t in unfailing_tests(sources) if t not in EXCEPTIONS]
    assert not bad, 'test functions with no assertion (assert, or list them in EXCEPTIONS with a reason):\n' \
        + '\n'.join(bad)
    stale = [t for t in EXCEPTIONS if t not in unfailing_tests(sources)]
    assert not stale, 'EXCEPTIONS entries that assert now (drop them): %s' % stale


def test_the_rule_sees_a_test_that_cannot_fail():
    fixture = [('/x/tests/e2e/test_f.py', '''
import pytest
def check(x):
    assert x
def via(x):
    check(x)
def test_prints(capsys):
    print(1)
def test_asserts():
    assert 1
def test_raises():
    with pytest.raises(ValueError):
        int("x")
def test_helper():
    via(2)
class TestK:
    def test_method_prints(self):
        print(2)
'''), ('/x/tests/e2e/helpers.py', 'def test_not_a_test_file():\n    pass\n')]
    got = unfailing_tests(fixture)
    assert [g.rsplit('::', 1)[1] for g in got] == ['test_method_prints', 'test_prints'], got
