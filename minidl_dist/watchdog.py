"""Collective timeout: a rank that waits too long for the others aborts the job.

A rank that leaves the job's sequence of collectives (it caught an
exception and went on, it exited with status 0 early, it is stuck) leaves
the others waiting forever. Every collective minidl_dist makes is therefore
entered with :func:`waiting`, which records what the rank waits for and
since when; one daemon thread per rank (started by :func:`start`, from
``minidl_dist.init``) wakes a few times per timeout and, when the current
wait is older than the timeout, prints what this rank was doing and aborts
the whole job. The cost of a watched call is two list operations and a
clock read; mpi4py releases the GIL inside MPI calls, so the thread runs
while the rank waits.

The timeout is ``init(timeout=...)``, else the environment variable
``MINIDL_DIST_TIMEOUT`` (seconds), else :data:`DEFAULT_TIMEOUT`.
"""

import os
import threading
import time

from minidl_dist import failfast

#: Seconds a rank may wait in one collective before it aborts the job.
DEFAULT_TIMEOUT = 300.0

_waits = []  # (what, monotonic start) of the collectives this rank is in, innermost last


class waiting:  # noqa: N801 (used as a statement: ``with waiting('...')``)
    """Within the block, this rank waits for the other ranks in the collective ``what``."""

    __slots__ = ('what',)

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        _waits.append((self.what, time.monotonic()))

    def __exit__(self, *exception):
        _waits.pop()


def resolve_timeout(timeout=None):
    """The timeout in seconds: ``timeout``, else ``MINIDL_DIST_TIMEOUT``, else the default.

    Raises:
        ValueError: If the value is not a positive number of seconds.
    """
    source = 'timeout'
    if timeout is None:
        timeout, source = os.environ.get('MINIDL_DIST_TIMEOUT', DEFAULT_TIMEOUT), \
            'MINIDL_DIST_TIMEOUT'
    try:
        seconds = float(timeout)
    except (TypeError, ValueError):
        seconds = float('nan')
    if isinstance(timeout, bool) or not seconds > 0 or seconds == float('inf'):
        raise ValueError(f'{source} must be a positive number of seconds, got {timeout!r}')
    return seconds


def start(comm, rank, size, timeout):
    """Start this rank's watchdog thread over the communicator ``comm``."""
    thread = threading.Thread(target=_watch, args=(comm, rank, size, timeout),
                              name='minidl_dist watchdog', daemon=True)
    thread.start()


def _watch(comm, rank, size, timeout):
    interval = min(1.0, timeout / 4)
    while True:
        time.sleep(interval)
        try:
            what, since = _waits[-1]
        except IndexError:  # not in a collective (or it ended meanwhile)
            continue
        waited = time.monotonic() - since
        if waited > timeout and _waits and _waits[-1][1] == since:
            failfast.abort(comm, f'minidl_dist: rank {rank} of {size} waited {waited:.1f} s '
                                 f'(timeout {timeout:g} s, MINIDL_DIST_TIMEOUT) for the other '
                                 f'ranks in {what!r} while {failfast.current_activity()}; '
                                 f'some rank did not join it (it failed, exited, or is doing '
                                 f'something else: see its own messages)\n'
                                 f'minidl_dist: aborting all {size} ranks\n')
