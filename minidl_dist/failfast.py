"""Fail fast: an exception on any rank ends the whole job within seconds.

A plain mpi4py job whose rank raises while the others wait in a collective
hangs until it is killed. ``install`` replaces ``sys.excepthook`` so that an
uncaught exception prints the rank and what it was doing, then aborts every
rank (``MPI_Abort``) and exits with a non-zero code. ``doing`` names the
operation a rank is in, for that message.
"""

import contextlib
import os
import sys
import time
import traceback

_activities = []
_failure = {}  # the last exception raised inside ``doing``, and where


@contextlib.contextmanager
def doing(what):
    """Name what this rank does inside the ``with`` block (for the failure message)."""
    _activities.append(what)
    try:
        yield
    except BaseException as error:
        # The innermost activity is recorded before the stack unwinds past it.
        if _failure.get('error') is not error:
            _failure.update(error=error, activity=' > '.join(_activities))
        raise
    finally:
        _activities.pop()


def describe_failure(error):
    """What this rank was doing when ``error`` was raised."""
    if _failure.get('error') is error:
        return _failure['activity']
    return 'running the script'


def install(comm, rank, size):
    """Abort the job (``comm``) on an uncaught exception, naming ``rank`` of ``size``."""

    def abort(kind, value, trace):
        message = ''.join(traceback.format_exception(kind, value, trace))
        sys.stderr.write(f'minidl_dist: rank {rank} of {size} failed while '
                         f'{describe_failure(value)}:\n{message}'
                         f'minidl_dist: aborting all {size} ranks\n')
        sys.stderr.flush()
        sys.stdout.flush()
        # mpirun forwards ranks' output asynchronously and stops forwarding once
        # the job is aborted: give it a moment to pass this message on.
        time.sleep(0.5)
        comm.Abort(1)
        # Abort may return before the process is killed; make sure it ends.
        os._exit(1)

    sys.excepthook = abort
