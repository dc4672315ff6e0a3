"""Fixtures of the e2e suite: the collection installed from its tarball, pvesim through pvesim's own
pytest plugin (`pvesim_session`, one process per session, so one per xdist worker; `pvesim`, reset to
the default seed before each test) with the canary user added (`sim`), the `ansible` runner of
harness.py; pvesim's plugin also gives `summary` (a line of what a test counted, printed at the end
of the run, also from an xdist worker).

It also keeps the request log of the whole session (issue 15): before pvesim's log is cleared
or reset, its entries are added to `SESSION_REQUESTS`; `test_hostile_paths.py`'s audit, run last,
checks every module request (told apart by our client's User-Agent) against the endpoints
SECURITY.md documents. `make test-e2e` runs the suite on several workers (pytest-xdist, one pvesim
each) with `FERRO_E2E_REQUEST_LOG` naming a directory: each worker writes its session's log there
when its pvesim stops, and the audit, run alone after them, reads every file of it."""

import glob
import json
import os
import subprocess

import pytest

from harness import RETURNED_KEYS, ROOT, VENV_BIN, Ansible, add_canary_user

pytest_plugins = ['pvesim.pytest_plugin']


@pytest.fixture(scope='session')
def collections_path(tmp_path_factory):
    """Install the collection tarball like a user would: $FERRO_TARBALL (make test-e2e passes the
    development build of `make collection`), else the newest dist/ferro-proxmox-*.tar.gz (the
    development build, or the release one of `make dist`, which `make dist-test` tests)."""
    tarballs = sorted(glob.glob(os.path.join(ROOT, 'dist', 'ferro-proxmox-*.tar.gz')), key=os.path.getmtime)
    tarball = os.environ.get('FERRO_TARBALL') or (tarballs[-1] if tarballs else None)
    tarball = tarball and os.path.join(ROOT, tarball)   # make passes it relative to the repository
    assert tarball, 'no collection tarball in dist/: run `make collection` first (make test-e2e does)'
    path = tmp_path_factory.mktemp('collections')
    subprocess.run([os.path.join(VENV_BIN, 'ansible-galaxy'), 'collection', 'install', tarball, '-p', str(path)],
                   check=True, capture_output=True, text=True, cwd=str(path))
    return str(path)


# Every request pvesim logged this session (this worker's, under xdist).
SESSION_REQUESTS = []
AUDIT_TEST = 'test_whole_suite_calls_only_documented_endpoints'
# The whole-suite audits (this one, test_returns_documented.py's): they run last, after the workers.
AUDIT_PREFIX = 'test_whole_suite_'
# The directory each worker's request log is written to, for the audit run after them.
REQUEST_LOG_DIR = os.environ.get('FERRO_E2E_REQUEST_LOG')


def _keep_request_log(sim):
    """Wrap `sim.admin` so that no logged request is lost to a clear or a reset."""
    admin = sim.admin

    def keeping_admin(method, path, body=None):
        full = path if path.startswith('/_sim') else '/_sim/' + path.lstrip('/')
        if (method.upper(), full.rstrip('/')) in (('DELETE', '/_sim/requests'), ('POST', '/_sim/reset')):
            SESSION_REQUESTS.extend(admin('GET', '/_sim/requests')['data'])
        return admin(method, path, body)

    sim.admin = keeping_admin


def forget_requests(sim):
    """Clear pvesim's request log without keeping it for the audit: for requests another
    collection made (the upstream scenario's community.proxmox baseline), which SECURITY.md's
    endpoint table does not describe."""
    kept = len(SESSION_REQUESTS)
    sim.clear_requests()
    del SESSION_REQUESTS[kept:]


def _log_stem():
    """This process's request log in FERRO_E2E_REQUEST_LOG, without its extension."""
    return os.path.join(REQUEST_LOG_DIR, '%s-%d' % (os.environ.get('PYTEST_XDIST_WORKER', 'main'), os.getpid()))


def logged_requests():
    """The request logs the workers of this run wrote to FERRO_E2E_REQUEST_LOG: (how many, their requests)."""
    if not REQUEST_LOG_DIR:
        return 0, []
    files = sorted(glob.glob(os.path.join(REQUEST_LOG_DIR, '*.json')))
    started = sorted(glob.glob(os.path.join(REQUEST_LOG_DIR, '*.started')))
    missing = [os.path.basename(s) for s in started if s[:-len('.started')] != _log_stem()
               and s[:-len('.started')] + '.json' not in files]
    assert not missing, 'workers that started pvesim left no request log (their requests escape the audit): %s' % missing
    requests = []
    for name in files:
        with open(name) as f:
            requests.extend(json.load(f)['requests'])
    return len(files), requests


def logged_returned_keys():
    """The keys the modules returned in the runs of the workers (FERRO_E2E_REQUEST_LOG), merged with
    this process's: {module: {key path: a task that returned it}}."""
    merged = {m: dict(paths) for m, paths in RETURNED_KEYS.items()}
    for name in sorted(glob.glob(os.path.join(REQUEST_LOG_DIR, '*.json'))) if REQUEST_LOG_DIR else []:
        with open(name) as f:
            for module, paths in json.load(f).get('returned_keys', {}).items():
                for path, task in paths.items():
                    merged.setdefault(module, {}).setdefault(path, task)
    return merged


# The files whose tests stay on one pytest-xdist worker, in file order: test_faults.py and
# test_hostile_writes.py check, in their last test, what their other tests counted in this process
# (so splitting them fails those tests), test_upstream_scenario.py builds its baseline once.
ONE_WORKER_FILES = ('test_faults.py', 'test_hostile_writes.py', 'test_upstream_scenario.py')


def on_one_worker(nodeid):
    """The file of `nodeid` if it is one of ONE_WORKER_FILES, else None."""
    path = nodeid.split('::', 1)[0]
    return path if os.path.basename(path) in ONE_WORKER_FILES else None


# The files whose tests run longest (seconds of wall each, much of it waiting on pvesim's task times
# and slowed tasks; measured in bench/README.md, "Where make test's time goes"): they start right
# after ONE_WORKER_FILES, so that none of them is still running alone at the end of the suite.
LONG_FILES = ('test_check_vs_real.py', 'test_check_followups.py', 'test_check_refusals_privileges.py',
              'test_inflight.py', 'test_identity.py', 'test_check_exec_paths.py', 'test_check_readback.py',
              'test_environment.py', 'test_user_guide.py', 'test_transient.py')


def pytest_collection_modifyitems(session, config, items):
    """The whole-suite audit runs last, after every other test has made its requests. The files
    kept on one worker come first: they are the longest units of work, so no worker starts one
    last; then the files of LONG_FILES, for the same reason."""
    items.sort(key=lambda item: (item.name.startswith(AUDIT_PREFIX), on_one_worker(item.nodeid) is None,
                                 os.path.basename(item.nodeid.split('::', 1)[0]) not in LONG_FILES))


@pytest.hookimpl(optionalhook=True)   # a hook of pytest-xdist, which the matrix's virtualenvs lack
def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist (make test-e2e), each test is a unit of work of its own, except the tests
    of ONE_WORKER_FILES, which go to one worker together. (xdist's own `loadgroup` does this by a
    marker, but 3.8.0 renames the test ids in a way pytest 9 no longer sees.)"""
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerFiles(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return on_one_worker(nodeid) or nodeid

    return OneWorkerFiles(config, log)


@pytest.fixture(scope='session')
def pvesim_session(pvesim_session):
    """The plugin's one process, with its request log kept across clears and resets; with
    FERRO_E2E_REQUEST_LOG set, the whole log is written there when the session ends."""
    _keep_request_log(pvesim_session)
    log = None
    if REQUEST_LOG_DIR:
        # `.started` now, `.json` at the end: the audit finds a log that was never written
        os.makedirs(REQUEST_LOG_DIR, exist_ok=True)
        log = _log_stem()
        open(log + '.started', 'w').close()
    yield pvesim_session
    if log:
        with open(log + '.json', 'w') as f:
            json.dump({'requests': SESSION_REQUESTS + pvesim_session.requests(), 'returned_keys': RETURNED_KEYS}, f)


@pytest.fixture
def sim(pvesim):
    """The plugin's `pvesim` (reset, faults cleared, default time scale) with the canary user added."""
    add_canary_user(pvesim)
    return pvesim


@pytest.fixture
def ansible(collections_path, sim, tmp_path):
    return Ansible(collections_path, sim, str(tmp_path))
