"""The differential test (issue 32): generated tasks run in `--check` and for real from the same pvesim
state must agree.

Each scenario is a generated world (world.py) and one generated task (tasks.py), run by
runner.py the way the action plugin runs the module's binary: once with `_ansible_check_mode`,
then, from the same state, for real. Any disagreement (runner.py lists them: outcome, msg, diff,
a returned value, a write in the check run, a change the real run did not report) fails the test.

The regression cases (regressions/*.json, shrunk reproducers of disagreements found before) are
replayed first, one test each. Then DIFF_SCENARIOS scenarios (default DEFAULT_SCENARIOS) from
DIFF_SEED (default 32); scenario i of seed S is drawn from its own generator, so `DIFF_SEED=S
DIFF_ONLY=i` replays it alone. The scenarios are dealt into SHARES tests (scenario i to share
i % SHARES), which pytest-xdist runs side by side, each worker with its own pvesim: a scenario
mostly waits (two binaries started, pvesim's tasks), so the shares overlap their waits. A
disagreement is shrunk (runner.shrink) and written to DIFF_REGRESSIONS (default regressions/) as a
new case, at most DIFF_SHRINK (default 8) per share, one per kind of disagreement. The summary line
(conftest.py adds the shares up) says how many scenarios ran and how many disagreed: `differential:
N scenarios, D disagreements (seed S)`, then how many real runs PVE (pvesim) refused with the words
of each census row in `ROWS` (docs/refusals.md), so a run shows which predicted refusals the
generator reached.
`make test-differential` runs 2,000 (DIFF_SCENARIOS).
"""

import glob
import hashlib
import json
import os
import random
import time

import re

import pytest

import tasks
import world
from runner import describe, shrink, signature

HERE = os.path.dirname(os.path.abspath(__file__))
REGRESSIONS = os.environ.get('DIFF_REGRESSIONS') or os.path.join(HERE, 'regressions')
# make test's budget: since the generator draws pinned machines, mappings and gone volumes
# (2026-12-06), 24 scenarios a second in four shares on an idle 2-core machine, 5 beside the e2e suite
DEFAULT_SCENARIOS = 400
# the tests the scenarios are dealt into: as many as make test's pytest-xdist workers, so that each
# waits beside the others (a run without -n runs them one after the other, the same scenarios)
SHARES = 4
SCENARIOS = int(os.environ.get('DIFF_SCENARIOS') or DEFAULT_SCENARIOS)
SEED = int(os.environ.get('DIFF_SEED') or 32)
ONLY = os.environ.get('DIFF_ONLY')
MAX_SHRINK = int(os.environ.get('DIFF_SHRINK') or 8)


# Census rows (docs/refusals.md) counted by the words a real run fails with: the recently predicted ones the
# generator was made to reach (world.py), and a few older ones that share their conditions.
ROWS = [
    ('R-power-171', r"Installed (QEMU version '[^']*' is too old|qemu-server \(max feature level)"),
    ('R-power-172', r'no PCI device found for'),
    ('R-power-157', r'legacy IGD assignment is not compatible with alternate devices'),
    ('R-power-153', r'legacy IGD assignment|q35 machine model is not enabled|mediated device with multifunction'),
    ('R-power-160/161', r'(PCI|USB) device mapping (not found|invalid)'),
    ('R-power-152', r'machine version 4\.1~pve2 or higher'),
    ('R-power-95', r'only possible with machine type >= 7\.1'),
    ('R-power-158', r"can't migrate local disk '[^']+': volume '[^']+' does not exist"),
    ('R-any-115/116', r"volume '[^']+:[^']+' does not exist"),
    ('R-clone-91/171', r'known to cause issues with aio=io_uring'),
    ('R-power-11', r'VM is locked \(suspended\)|cannot be resumed'),
]


def census_row(msg):
    """The census row of ROWS whose words `msg` (a failed real run's) has, or None."""
    for row, words in ROWS:
        if re.search(words, msg or ''):
            return row
    return None


def generated(seed, index):
    """Scenario `index` of `seed`: {'world', 'task'}."""
    rng = random.Random('%d-%d' % (seed, index))
    w = world.world(rng)
    return {'world': w, 'task': tasks.task(rng, w)}


def regression_files():
    return sorted(glob.glob(os.path.join(REGRESSIONS, '*.json')))


@pytest.mark.parametrize('path', regression_files(), ids=os.path.basename)
def test_regression_case_agrees(runner, path):
    with open(path, encoding='utf-8') as f:
        case = json.load(f)
    problems, check, real = runner.scenario(case)
    assert not problems, '%s (found as: %s) still disagrees:\n%s' % (
        os.path.basename(path), case.get('found'), describe(problems))


def write_regression(case, problems, found):
    body = {'found': found, 'problems': ['%s: %s' % p for p in problems], 'task': case['task'], 'world': case['world']}
    text = json.dumps(body, indent=1, sort_keys=True)
    name = '%s-%s-%s.json' % (case['task']['module'], '-'.join(k.replace(':', '_') for k in signature(problems))[:60],
                              hashlib.sha1(json.dumps(case, sort_keys=True).encode()).hexdigest()[:8])
    os.makedirs(REGRESSIONS, exist_ok=True)
    path = os.path.join(REGRESSIONS, name)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text + '\n')
    return path


@pytest.mark.parametrize('share', range(SHARES))
def test_generated_scenarios_agree(runner, record_property, share):
    indices = [i for i in ([int(ONLY)] if ONLY is not None else range(SCENARIOS)) if i % SHARES == share]
    disagreements, written, kinds = [], [], set()
    hits = dict((row, 0) for row, _ in ROWS)
    started = time.monotonic()
    for index in indices:
        case = generated(SEED, index)
        problems, _, real = runner.scenario(case)
        row = census_row(str(real.get('msg'))) if real.get('failed') else None
        if row:
            hits[row] += 1
        if not problems:
            continue
        kind = (case['task']['module'], signature(problems))
        disagreements.append((index, case['task'], problems))
        if kind not in kinds and len(written) < MAX_SHRINK:
            kinds.add(kind)
            small, small_problems = shrink(runner, case, problems)
            written.append(write_regression(small, small_problems, 'DIFF_SEED=%d DIFF_ONLY=%d' % (SEED, index)))
    # conftest.py adds the shares up into the summary lines
    record_property('differential', {'scenarios': len(indices), 'disagreements': len(disagreements), 'seed': SEED,
                                     'started': started, 'ended': time.monotonic(), 'hits': hits})
    assert not disagreements, '%d of %d scenarios disagree (seed %d); shrunk reproducers written: %s\n%s' % (
        len(disagreements), len(indices), SEED, ', '.join(written) or 'none',
        '\n'.join('- DIFF_ONLY=%d %s %s:\n    %s' % (i, t['module'], json.dumps(t['args'], sort_keys=True),
                                                   describe(p)[:600]) for i, t, p in disagreements[:40]))
