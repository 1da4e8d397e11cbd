"""Fail fast: a rank that fails or leaves early ends the whole job within seconds.

A plain mpi4py job whose rank raises, or calls ``sys.exit(1)``, while the
others wait in a collective hangs until it is killed. ``install`` makes
each of these abort every rank (``MPI_Abort``) with a message naming the
rank and what it was doing:

- an uncaught exception (``sys.excepthook``);
- a non-zero ``sys.exit`` status that ends the script: ``sys.exit`` is
  wrapped to note the status; when that SystemExit ends the script, an
  ``atexit`` handler (which runs before MPI's own finalisation would block)
  aborts. A SystemExit that the script catches and handles is forgotten.
  A bare ``raise SystemExit(n)``, which bypasses ``sys.exit``, and an
  early exit with status 0 are left to the collective timeout of
  :mod:`minidl_dist.watchdog` on the ranks that wait for this one;
- ``os._exit`` and a killed rank need nothing: mpirun ends the job itself.

``doing`` names the operation a rank is in, for these messages.
"""

import atexit
import contextlib
import os
import sys
import time
import traceback
import weakref

_activities = []
_failure = {}  # the last exception raised inside ``doing``, and where
_exit = {}  # the last non-zero sys.exit: status, activity, the SystemExit (weakly), ended


@contextlib.contextmanager
def doing(what):
    """Name what this rank does inside the ``with`` block (for the failure message)."""
    _activities.append(what)
    try:
        yield
    except BaseException as error:
        # The innermost activity is recorded before the stack unwinds past it. Not for
        # a SystemExit: sys.exit notes its own, and holding it would keep it alive.
        if not isinstance(error, SystemExit) and _failure.get('error') is not error:
            _failure.update(error=error, activity=current_activity())
        raise
    finally:
        _activities.pop()


def current_activity():
    """What this rank does now (the ``doing`` blocks it is in), in words."""
    return ' > '.join(_activities) if _activities else 'running the script'


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
    # the job is aborted: give it a moment to pass this message on.
    time.sleep(0.5)
    comm.Abort(status)
    # Abort may return before the process is killed; make sure it ends.
    os._exit(status)


def exit_status(code):
    """The process status Python gives ``sys.exit(code)``: None is 0, non-integers 1."""
    if code is None:
        return 0
    return code if isinstance(code, int) and not isinstance(code, bool) else 1


def install(comm, rank, size):
    """Abort the job (``comm``) on an uncaught exception or a non-zero exit of ``rank``."""
    sys.excepthook = lambda kind, value, trace: _abort_on_exception(
        comm, rank, size, kind, value, trace)
    sys.exit = _noting_exit(sys.exit)
    atexit.register(_abort_on_nonzero_exit, comm, rank, size)


def _abort_on_exception(comm, rank, size, kind, value, trace):
    message = ''.join(traceback.format_exception(kind, value, trace))
    abort(comm, f'minidl_dist: rank {rank} of {size} failed while '
                f'{describe_failure(value)}:\n{message}'
                f'minidl_dist: aborting all {size} ranks\n')


class NotedExit(SystemExit):
    """The SystemExit of the wrapped ``sys.exit`` (a subclass, so that it can be weakly
    referenced: a handled one is seen to die while the script runs)."""


def _noting_exit(original_exit):
    def noting_exit(status=None):
        error = NotedExit(status)
        if exit_status(status):
            _exit.clear()
            _exit.update(status=exit_status(status), activity=current_activity(),
                         error=weakref.ref(error, _exit_error_died), ended=False)
        try:
            raise error
        finally:
            del error  # no cycle through this frame: the SystemExit dies when it is done

    noting_exit.__doc__ = original_exit.__doc__
    noting_exit.__wrapped__ = original_exit
    return noting_exit


def _exit_error_died(reference):
    if _exit.get('error') is reference:
        # Freed with no Python frame running: the interpreter took it as the end of the
        # script. Freed inside Python code: a handler caught it and the script goes on.
        _exit['ended'] = sys._getframe().f_back is None
        if not _exit['ended']:
            _exit.clear()


def _abort_on_nonzero_exit(comm, rank, size):
    # Still alive at exit (kept by a reference somewhere): count it as the cause.
    if _exit and (_exit['ended'] or _exit['error']() is not None):
        status = _exit['status']
        abort(comm, f'minidl_dist: rank {rank} of {size} exited with status {status} '
                    f'(sys.exit) while {_exit["activity"]}\n'
                    f'minidl_dist: aborting all {size} ranks\n', max(1, min(status, 255)))
