"""minidl_dist.fakehosts without mpirun: hosts made and removed, leftovers of killed runs removed.

These need root and iproute2, as the fake hosts do; elsewhere they are
skipped, saying why. The runs across the hosts are in test_multihost.py.
"""

import os
import subprocess
import sys

import pytest

pytest.importorskip('mpi4py')

from minidl_dist import fakehosts  # noqa: E402
from minidl_dist.fakehosts import FakeHosts, FakeHostsUnavailable  # noqa: E402


def namespaces():
    listing = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True).stdout
    return {line.split(' ', 1)[0] for line in listing.splitlines()}


def in_namespace(name, *command):
    return subprocess.run(['ip', 'netns', 'exec', name, *command], capture_output=True,
                          text=True)


@pytest.fixture(scope='module')
def namespaces_can_be_made():
    try:
        with FakeHosts(2):
            pass
    except FakeHostsUnavailable as error:
        pytest.skip(f'fake hosts (network namespaces) cannot be made here: {error}')


def test_hosts_are_joined_by_one_link_and_removed_on_close(namespaces_can_be_made):
    hosts = FakeHosts(3)
    with hosts:
        assert set(hosts.names) | {hosts.switch} <= namespaces()
        for name, address in zip(hosts.names, hosts.addresses):
            shown = subprocess.run(['ip', '-n', name, '-o', 'addr', 'show', 'eth0'],
                                   capture_output=True, text=True).stdout
            assert f'inet {address}/24' in shown
        # The first host reaches the third's address through the switch, and nothing else:
        # its only routes are the hosts' subnet (no default route, no address outside it).
        listener = subprocess.Popen(['ip', 'netns', 'exec', hosts.names[2], sys.executable,
                                     '-c', LISTEN], stdout=subprocess.PIPE, text=True)
        try:
            assert listener.stdout.readline().strip() == 'listening'
            sent = in_namespace(hosts.names[0], sys.executable, '-c',
                                SEND.format(address=hosts.addresses[2]))
            assert sent.returncode == 0, sent.stderr
            assert listener.communicate(timeout=30)[0].strip() == 'got hello'
        finally:
            listener.kill()
        routes = subprocess.run(['ip', '-n', hosts.names[0], 'route'], capture_output=True,
                                text=True).stdout
        assert routes.split() and 'default' not in routes
        assert all(line.startswith('10.213.0.0/24') for line in routes.splitlines())
    assert not (set(hosts.names) | {hosts.switch}) & namespaces()
    hosts.close()  # again: nothing left to do


LISTEN = """
import socket
server = socket.create_server(('0.0.0.0', 4321))
print('listening', flush=True)
connection, _ = server.accept()
print('got', connection.recv(5).decode(), flush=True)
"""
SEND = "import socket; socket.create_connection(('{address}', 4321), timeout=10).send(b'hello')"


def test_hosts_of_a_killed_run_are_removed_by_the_next(namespaces_can_be_made):
    # A run killed by SIGKILL cannot clean up: its namespaces stay until the next run.
    script = ('import sys, time; from minidl_dist.fakehosts import FakeHosts; '
              'hosts = FakeHosts(2); hosts.create(); print(*hosts.names, hosts.switch, '
              'flush=True); time.sleep(60)')
    process = subprocess.Popen([sys.executable, '-c', script], stdout=subprocess.PIPE,
                               text=True)
    try:
        left = set(process.stdout.readline().split())
    finally:
        process.kill()
        process.wait()
    assert len(left) == 3 and left <= namespaces()
    with FakeHosts(2) as hosts:  # making new hosts removes the stale ones, not its own
        assert not left & namespaces()
        assert set(hosts.names) <= namespaces()


def test_where_namespaces_cannot_be_made_the_reason_is_said(monkeypatch):
    monkeypatch.setattr(os, 'geteuid', lambda: 1000)
    assert 'needs root' in fakehosts.unavailable_reason()
    with pytest.raises(FakeHostsUnavailable, match='needs root'):
        FakeHosts(2).create()
    monkeypatch.setattr(os, 'geteuid', lambda: 0)
    monkeypatch.setenv('PATH', '/nonexistent')
    assert "'ip' is not installed" in fakehosts.unavailable_reason()


def test_ranks_must_spread_evenly_and_counts_be_sensible():
    hosts = FakeHosts(2)
    with pytest.raises(ValueError, match='3 ranks cannot be spread evenly over 2 hosts'):
        hosts.command(['python', 'train.py'], 3)
    for count in (1, 0, 2.0, True):
        with pytest.raises(ValueError, match='count must be an integer from 2'):
            FakeHosts(count)
