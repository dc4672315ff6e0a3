"""Shared fixtures and helpers for the pvesim suite: one simulator process per session, reset before
each test (pvesim.pytest_plugin)."""

import re

import pytest

from pvesim.testing import PvesimError

pytest_plugins = ['pvesim.pytest_plugin']

MAC = re.compile(r'^BC:24:11:[0-9A-F]{2}:[0-9A-F]{2}:[0-9A-F]{2}$')
Q = '/nodes/pve1/qemu'


@pytest.fixture
def sim(pvesim):
    pvesim.time_scale(0.02)
    return pvesim


def config(sim, vmid, current=False, node='pve1'):
    cfg = sim.api('GET', '/nodes/{0}/qemu/{1}/config'.format(node, vmid), {'current': 1} if current else None)
    cfg.pop('digest')
    return cfg


def pending(sim, vmid):
    return dict((item['key'], item) for item in sim.api('GET', '{0}/{1}/pending'.format(Q, vmid)))


def run(sim, method, path, params=None):
    """Start a task and wait for it; returns its status object."""
    upid = sim.api(method, path, params)
    assert upid.startswith('UPID:'), upid
    return sim.wait_task(upid)


def ok(status):
    assert status['exitstatus'] == 'OK', status
    return status


def create(sim, vmid, **params):
    """POST /nodes/pve1/qemu and wait for the qmcreate task to end OK."""
    ok(run(sim, 'POST', Q, dict(params, vmid=vmid)))
    return config(sim, vmid)


def error_of(call, *args, **kwargs):
    with pytest.raises(PvesimError) as info:
        call(*args, **kwargs)
    return info.value


def volumes(sim, storage, node='pve1'):
    return dict((item['volid'], item) for item in
                sim.api('GET', '/nodes/{0}/storage/{1}/content'.format(node, storage)))


def strip_meta(cfg):
    """The config without the keys create adds with random values (meta, smbios1, vmgenid)."""
    return dict((k, v) for k, v in cfg.items() if k not in ('meta', 'smbios1', 'vmgenid'))
