"""pytest fixtures: `pvesim_session` (one simulator per session) and `pvesim` (reset to the default seed,
with faults and the request log cleared, before each test). Load with `pytest_plugins = ['pvesim.pytest_plugin']`.
"""

import pytest

from .testing import PvesimProcess


@pytest.fixture(scope='session')
def pvesim_session():
    with PvesimProcess() as sim:
        yield sim


@pytest.fixture
def pvesim(pvesim_session):
    pvesim_session.admin('DELETE', '/_sim/faults')
    pvesim_session.reset('default')
    pvesim_session.time_scale(0.05)
    yield pvesim_session
