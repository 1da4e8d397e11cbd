"""Fixtures for the multi-host tests: 2 fake hosts (network namespaces joined by a link).

The hosts are removed when the fixture ends, whether the tests passed or
not; hosts that a killed run left behind are removed when the next are made
(:func:`minidl_dist.fakehosts.remove_stale`). Where namespaces cannot be made
(not root, no ``ip``), the tests that use them are skipped, saying why.
"""

import pytest


def _fake_hosts():
    pytest.importorskip('mpi4py')
    from minidl_dist.fakehosts import FakeHosts, FakeHostsUnavailable
    hosts = FakeHosts(2)
    try:
        hosts.create()
    except FakeHostsUnavailable as error:
        pytest.skip(f'fake hosts (network namespaces) cannot be made here: {error}')
    try:
        yield hosts
    finally:
        hosts.close()


@pytest.fixture(scope='module')
def fake_hosts():
    """2 hosts shared by a module's tests (which leave them as they found them)."""
    yield from _fake_hosts()


@pytest.fixture
def fresh_fake_hosts():
    """2 hosts for one test alone (which may take a link down or kill ranks)."""
    yield from _fake_hosts()
