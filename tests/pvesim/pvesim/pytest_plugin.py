"""pytest fixtures: `pvesim_session` (one simulator per session), `pvesim_seed` (the seed a test runs on) and
`pvesim` (reset to that seed, with faults and the request log cleared, before each test). Load with
`pytest_plugins = ['pvesim.pytest_plugin']`.

A test picks another seed with `@pytest.mark.pvesim_seed('ceph')` (on a test, a class or a module's
`pytestmark`), with `@pytest.mark.parametrize('pvesim_seed', ['default', 'ceph'], indirect=True)` to run on
both, or by overriding the `pvesim_seed` fixture; the default is `default`.

`summary` is for a test that counts what it checked: `summary(line)` adds the line to the run's
closing section "what the tests counted", pass or fail, also from a pytest-xdist worker (whose own
output pytest does not show): the line travels in the test's report.
"""

import pytest

from .testing import PvesimProcess


def pytest_configure(config):
    config.addinivalue_line('markers', 'pvesim_seed(name): reset pvesim to this seed (a name in seeds/ or a '
                                       'path) instead of `default` before the test')


@pytest.fixture(scope='session')
def pvesim_session():
    with PvesimProcess() as sim:
        yield sim


@pytest.fixture
def pvesim_seed(request):
    """The seed of this test: an indirect parameter, else the closest `pvesim_seed` marker, else `default`."""
    if getattr(request, 'param', None):
        return request.param
    marker = request.node.get_closest_marker('pvesim_seed')
    return marker.args[0] if marker else 'default'


@pytest.fixture
def pvesim(pvesim_session, pvesim_seed):
    pvesim_session.admin('DELETE', '/_sim/faults')
    pvesim_session.reset(pvesim_seed)
    pvesim_session.time_scale(0.05)
    yield pvesim_session


@pytest.fixture
def summary(request):
    """`summary(line)`: a line of what the test counted, printed at the end of the run."""
    return lambda line: request.node.user_properties.append(('summary', line))


def pytest_terminal_summary(terminalreporter):
    lines = [value for reports in terminalreporter.stats.values() for report in reports
             if getattr(report, 'when', None) == 'call'
             for key, value in getattr(report, 'user_properties', ()) if key == 'summary']
    if lines:
        terminalreporter.section('what the tests counted')
        for line in lines:
            terminalreporter.write_line(line)
