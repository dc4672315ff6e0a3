"""Fixtures of the differential test: pvesim through its own pytest plugin (`pvesim_session`, `summary`),
with a short time scale so that a start, a stop or a clone's task ends in milliseconds."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

pytest_plugins = ['pvesim.pytest_plugin']


@pytest.fixture
def runner(pvesim_session, tmp_path):
    from runner import Runner
    pvesim_session.admin('DELETE', '/_sim/faults')
    pvesim_session.time_scale(0.01)
    return Runner(pvesim_session, str(tmp_path))
