"""Fake hosts: several machines inside one, for trying minidl_dist across hosts without a cluster.

::

    python -m minidl_dist.fakehosts -np 4 python -m minidl_dist train.py

runs ``train.py`` with 2 ranks on each of 2 "hosts" that share nothing but a
network link (Linux network namespaces joined by veth pairs and a bridge),
the ranks of different hosts talking over TCP as on two machines; then it
removes the hosts, whatever happened. ``--hosts N`` makes N of them (``-np``
a multiple of N); ``--clean`` removes only what killed runs left behind. It
needs root, ``ip`` (iproute2) and ``unshare`` (util-linux), and runs the
venv's ``mpiexec`` (MPICH's hydra, the ``mpich`` wheel).

From Python (the tests' fixture)::

    with FakeHosts(2) as hosts:
        subprocess.run(hosts.command([sys.executable, 'train.py'], ranks=4))
        hosts.set_link(1, up=False)       # the second host's cable pulled
        hosts.kill_ranks(1)               # or its ranks killed

:mod:`minidl_dist.fakehosts.hosts` says how the hosts are built.
"""

from minidl_dist.fakehosts.hosts import (FakeHosts, FakeHostsUnavailable, remove_stale,
                                         unavailable_reason)

__all__ = ['FakeHosts', 'FakeHostsUnavailable', 'remove_stale', 'unavailable_reason']
