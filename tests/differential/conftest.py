"""Fixtures of the differential test: pvesim through its own pytest plugin (`pvesim_session`, `summary`),
with a short time scale so that a start, a stop or a clone's task ends in milliseconds."""

import collections
import os
import re
import sys
import zlib

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

pytest_plugins = ['pvesim.pytest_plugin']


@pytest.fixture
def runner(pvesim_session, tmp_path):
    from runner import Runner
    pvesim_session.admin('DELETE', '/_sim/faults')
    pvesim_session.time_scale(0.01)
    return Runner(pvesim_session, str(tmp_path))


@pytest.hookimpl(optionalhook=True)   # a hook of pytest-xdist
def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist, each share of the generated scenarios is a unit of work of its own, with
    a quarter of the regression cases: xdist's default scheduling hands out tests two at a time, which
    would put two shares, the long tests, on one worker one after the other."""
    from xdist.scheduler import LoadScopeScheduling
    from test_differential import SHARES

    class ByShare(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            share = re.search(r'::test_generated_scenarios_agree\[(\d+)\]$', nodeid)
            return 'share %s' % (share.group(1) if share else zlib.crc32(nodeid.encode()) % SHARES)

    return ByShare(config, log)


def pytest_terminal_summary(terminalreporter):
    """The summary lines of the generated scenarios, its shares added up (test_differential.py)."""
    from pvesim.pytest_plugin import recorded   # here: imported at the top, pytest could not rewrite its asserts
    shares = recorded(terminalreporter, 'differential')
    if not shares:
        return
    scenarios = sum(share['scenarios'] for share in shares)
    disagreements = sum(share['disagreements'] for share in shares)
    # the shares ran side by side: the run took from the first start to the last end (one clock
    # for every worker of the machine, CLOCK_MONOTONIC)
    elapsed = max(share['ended'] for share in shares) - min(share['started'] for share in shares)
    hits = collections.Counter()
    for share in shares:
        hits.update(share['hits'])
    terminalreporter.section('differential')
    terminalreporter.write_line('differential: %d scenarios, %d disagreements (seed %d; %d shares; %.1f s, %.1f '
                                'scenarios/s)' % (scenarios, disagreements, shares[0]['seed'], len(shares), elapsed,
                                                  scenarios / max(elapsed, 1e-9)))
    terminalreporter.write_line('differential: real runs refused by census row: %s' % ', '.join(
        '%s %d' % hit for hit in hits.items()))
