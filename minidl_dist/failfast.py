"""Fail fast: a rank that fails ends the whole job within seconds, saying why.

A plain mpi4py job whose rank raises while the others wait in a collective
hangs until it is killed. This module holds what reports a failure and
aborts every rank (``MPI_Abort``):

- :func:`doing` names the operation a rank is in, for the messages;
- :func:`fail` prints the rank, what it was doing and the traceback, then
  aborts; :func:`abort` prints a message and aborts.

The launcher (``python -m minidl_dist script.py``, :mod:`minidl_dist.launcher`)
sees every way a script ends and calls these itself. A script run without
it (``mpirun python train.py``) gets, from ``minidl_dist.init()``,
:func:`install`: an uncaught exception fails through ``sys.excepthook``
(chained to the hook in place, which prints the traceback); ``init`` also
has the end of the script, by its last line or any ``SystemExit``, go
through :func:`minidl_dist.ending.finish` from ``atexit`` (which runs before
mpi4py shuts MPI down). Without the launcher nothing is watched before
``init()``, and the messages cannot tell a ``SystemExit``'s status.
"""

import contextlib
import os
import sys
import time
import traceback

_activities = []
_failure = {}  # the last exception raised inside ``doing``, and where
_hosts = []  # each rank's host name (set_hosts), for messages when the job spans several hosts
_os_exit = os._exit  # the real one: the launcher replaces os._exit to see it called


@contextlib.contextmanager
def doing(what):
    """Name what this rank does inside the ``with`` block (for the failure message)."""
    _activities.append(what)
    try:
        yield
    except BaseException as error:
        # The innermost activity is recorded before the stack unwinds past it.
        if _failure.get('error') is not error:
            _failure.update(error=error, activity=current_activity())
        raise
    finally:
        _activities.pop()


def current_activity():
    """What this rank does now (the ``doing`` blocks it is in), in words."""
    return ' > '.join(_activities) if _activities else 'running the script'


def set_hosts(hosts):
    """Record each rank's host name (``hosts[rank]``), gathered at start-up."""
    _hosts[:] = hosts


def rank_name(rank, size):
    """``'rank 2 of 4'``, with ``' (on host-b)'`` when the job's ranks are on several hosts."""
    if len(set(_hosts)) > 1 and rank is not None and 0 <= rank < len(_hosts):
        return f'rank {rank} of {size} (on {_hosts[rank]})'
    return f'rank {rank} of {size}'


def describe_failure(error):
    """What this rank was doing when ``error`` was raised."""
    if _failure.get('error') is error:
        return _failure['activity']
    return 'running the script'


def abort(comm, message, status=1):
    """Print ``message``, then end every rank of ``comm`` with ``status``; never returns."""
    sys.stderr.write(message)
    sys.stderr.flush()
    sys.stdout.flush()
    # mpirun forwards ranks' output asynchronously and stops forwarding once
    # the job is aborted: give it a moment to pass this message on (on a loaded
    # machine 0.5 s was seen to lose another rank's traceback).
    time.sleep(1.0)
    comm.Abort(status)
    # Abort may return before the process is killed; make sure it ends.
    _os_exit(status)


def fail(comm, error, hook=None):
    """Report the uncaught ``error`` of this rank, then abort the job; never returns.

    Args:
        comm: The job's communicator.
        error: The exception, its ``__traceback__`` as it should be printed.
        hook: Prints the traceback (``sys.excepthook``'s signature);
            None takes ``sys.excepthook`` as it is now (the script's own, if
            it set one).
    """
    rank, size = comm.Get_rank(), comm.Get_size()
    header = f'minidl_dist: {rank_name(rank, size)} failed while {describe_failure(error)}:\n'
    hook = hook or sys.excepthook
    if hook is sys.__excepthook__:
        # One write: under load a rank can be descheduled between two writes while
        # another rank aborts the job, which would cut the report after its header.
        sys.stderr.write(header + ''.join(traceback.format_exception(error)))
    else:
        sys.stderr.write(header)
        try:
            hook(type(error), error, error.__traceback__)
        except BaseException:  # a broken hook must not keep the job from ending
            sys.__excepthook__(type(error), error, error.__traceback__)
    abort(comm, f'minidl_dist: aborting all {size} ranks\n')


def exit_status(code):
    """The process status Python gives ``sys.exit(code)``: None is 0, non-integers 1."""
    if code is None:
        return 0
    return int(code) if isinstance(code, int) else 1


def install(comm):
    """Without the launcher: an uncaught exception fails the job (chained excepthook)."""
    previous = sys.excepthook
    sys.excepthook = lambda kind, value, trace: fail(comm, value, previous)
