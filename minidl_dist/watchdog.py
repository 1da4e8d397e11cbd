"""Collective timeout: a rank that waits too long for the others aborts the job.

A rank that leaves the job's sequence of collectives (it caught an
exception and went on, it is stuck, it does long work alone) leaves the
others waiting forever. Every collective minidl_dist makes is therefore
entered with :func:`waiting`, which numbers it and records what the rank
waits for and since when. One daemon thread per rank (started by
:func:`start`, from the launcher or ``minidl_dist.init``) wakes five times a
second: when the current wait is older than the timeout, it prints what
this rank was doing and aborts the whole job; it also runs the check it was
given (:mod:`minidl_dist.ending`: has a rank that this one waits for ended
its script?). The cost of a watched call is a few list operations and a
clock read; mpi4py releases the GIL inside the MPI calls minidl_dist makes,
so the thread runs while the rank waits.

The numbers matter to :mod:`minidl_dist.ending`: every rank enters the same
collectives in the same order, so a rank waiting in its collective number
``n`` waits in vain for a rank that ended after ``n - 1``.

The timeout is ``init(timeout=...)``, else the environment variable
``MINIDL_DIST_TIMEOUT`` (seconds), else :data:`DEFAULT_TIMEOUT`.
"""

import os
import threading
import time

from minidl_dist import failfast

#: Seconds a rank may wait in one collective before it aborts the job.
DEFAULT_TIMEOUT = 300.0

#: Seconds between the watchdog's looks: how soon an early end is noticed.
INTERVAL = 0.2

# [what, monotonic start, number, peer] of the collectives this rank is in, innermost last;
# peer: the rank it exchanges with now, where the collective says (exchanging_with).
_waits = []
_entered = [0]  # how many watched collectives this rank has entered
_watch = {}  # the running watchdog: thread, stop event, timeout


class waiting:  # noqa: N801 (used as a statement: ``with waiting('...')``)
    """Within the block, this rank waits for the other ranks in the collective ``what``."""

    __slots__ = ('what',)

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        _entered[0] += 1
        _waits.append([self.what, time.monotonic(), _entered[0], None])

    def __exit__(self, *exception):
        _waits.pop()


def exchanging_with(rank):
    """Within the current collective, this rank now waits for ``rank`` (point to point).

    The timeout's message then names that rank and its host: across hosts,
    the one behind a dead link or on a dead host.
    """
    if _waits:
        _waits[-1][3] = rank


def entered():
    """How many watched collectives this rank has entered so far."""
    return _entered[0]


def current_wait():
    """``(what, seconds waited, number)`` of the innermost collective this rank is in, or None."""
    try:
        what, since, number, _ = _waits[-1]
    except IndexError:
        return None
    return what, time.monotonic() - since, number


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


def start(comm, rank, size, timeout, check=None):
    """Start this rank's watchdog thread over the communicator ``comm`` (once).

    Args:
        comm: The communicator to abort.
        rank: This rank, for the messages.
        size: The number of ranks, for the messages.
        timeout: Seconds a rank may wait in one collective.
        check: None, or a function called at every look (from the thread).
    """
    if _watch:
        return
    _watch.update(stop=threading.Event(), timeout=timeout)
    _watch['thread'] = threading.Thread(target=_run, args=(comm, rank, size, check),
                                        name='minidl_dist watchdog', daemon=True)
    _watch['thread'].start()


def set_timeout(timeout):
    """Change the timeout of the running watchdog (``init(timeout=...)`` after the launcher)."""
    _watch['timeout'] = timeout


def timeout():
    """The timeout in force: the running watchdog's, else the environment's or the default."""
    return _watch['timeout'] if _watch else resolve_timeout()


def stop():
    """Stop the watchdog thread and wait for it: after this, it makes no more MPI calls."""
    if _watch and _watch['thread'] is not threading.current_thread():
        _watch['stop'].set()
        _watch['thread'].join()


def _run(comm, rank, size, check):
    while not _watch['stop'].wait(INTERVAL):
        if check is not None:
            check()
        wait = current_wait()
        if wait is None or wait[1] <= _watch['timeout']:
            continue
        what, waited, _ = wait
        peer = _peer()
        current = current_wait()
        if current is not None and current[2] == wait[2]:  # still the same wait
            missing = 'some rank' if peer is None else \
                f'{failfast.rank_name(peer, size)}, which it was waiting for,'
            failfast.abort(comm, f'minidl_dist: {failfast.rank_name(rank, size)} waited '
                                 f'{waited:.1f} s (timeout {_watch["timeout"]:g} s, '
                                 f'MINIDL_DIST_TIMEOUT) for the other ranks in {what!r} while '
                                 f'{failfast.current_activity()}; {missing} did not join it (it '
                                 f'failed, exited, is doing something else, or cannot be '
                                 f'reached: see its own messages)\n'
                                 f'minidl_dist: aborting all {size} ranks\n')


def _peer():
    try:
        return _waits[-1][3]
    except IndexError:
        return None
