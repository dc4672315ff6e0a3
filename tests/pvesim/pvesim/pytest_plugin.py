"""pytest fixtures: `pvesim_session` (one simulator per session), `pvesim_seed` (the seed a test runs on),
`pvesim` (reset to that seed, with faults and the request log cleared, before each test) and `pvesim_env` (the
PROXMOX_* connection of the seed's token, for a subprocess). Load with `pytest_plugins = ['pvesim.pytest_plugin']`.

A test picks another seed with `@pytest.mark.pvesim_seed('ceph')` (on a test, a class or a module's
`pytestmark`), with `@pytest.mark.parametrize('pvesim_seed', ['default', 'ceph'], indirect=True)` to run on
both, or by overriding the `pvesim_seed` fixture; the default is the ini option `pvesim_seed` (a seed file
relative to the rootdir, for a user's suite), else `default`.

`summary` is for a test that counts what it checked: `summary(line)` adds the line to the run's
closing section "what the tests counted", pass or fail, also from a pytest-xdist worker (whose own
output pytest does not show): the line travels in the test's report.
"""

import os

import pytest

from .testing import PvesimProcess, connection_env, seed_token


def pytest_addoption(parser):
    parser.addini('pvesim_seed', 'the seed of every test without a pvesim_seed marker: a seed file (relative to the '
                                 'rootdir) or a name in pvesim\'s seeds (default: default)', default='default')


def _ini_seed(config):
    seed = config.getini('pvesim_seed') or 'default'
    candidate = os.path.join(str(config.rootpath), seed)
    return candidate if os.path.isfile(candidate) else seed


def pytest_configure(config):
    config.addinivalue_line('markers', 'pvesim_seed(name): reset pvesim to this seed (a name in seeds/ or a '
                                       'path) instead of `default` before the test')


@pytest.fixture(scope='session')
def pvesim_session(pytestconfig):
    seed = _ini_seed(pytestconfig)
    with PvesimProcess(seed=None if seed == 'default' else seed) as sim:
        yield sim


@pytest.fixture
def pvesim_seed(request):
    """The seed of this test: an indirect parameter, else the closest `pvesim_seed` marker, else `default`."""
    if getattr(request, 'param', None):
        return request.param
    marker = request.node.get_closest_marker('pvesim_seed')
    return marker.args[0] if marker else _ini_seed(request.config)


@pytest.fixture
def pvesim(pvesim_session, pvesim_seed):
    pvesim_session.admin('DELETE', '/_sim/faults')
    pvesim_session.reset(pvesim_seed)
    pvesim_session.time_scale(0.05)
    yield pvesim_session


@pytest.fixture
def pvesim_env(pvesim, pvesim_seed):
    """os.environ with PROXMOX_HOST, _PORT, _USER, _TOKEN_ID, _TOKEN_SECRET, _CA_PATH (the first token of the
    test's seed) and PVESIM_URL, PVESIM_CA_PATH: the environment of a playbook run against `pvesim`."""
    env = dict(os.environ)
    env.update(pvesim.proxmox_env())
    env.update(connection_env(pvesim.host, pvesim.port, pvesim.ca_path, *seed_token(pvesim_seed)))
    return env


@pytest.fixture
def summary(request):
    """`summary(line)`: a line of what the test counted, printed at the end of the run."""
    return lambda line: request.node.user_properties.append(('summary', line))


def recorded(terminalreporter, key):
    """The values the run's tests recorded under `key` in their user properties (`summary`'s lines,
    `record_property`), from every pytest-xdist worker."""
    return [value for reports in terminalreporter.stats.values() for report in reports
            if getattr(report, 'when', None) == 'call'
            for name, value in getattr(report, 'user_properties', ()) if name == key]


def pytest_terminal_summary(terminalreporter):
    lines = recorded(terminalreporter, 'summary')
    if lines:
        terminalreporter.section('what the tests counted')
        for line in lines:
            terminalreporter.write_line(line)
