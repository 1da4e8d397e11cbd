"""The launcher: ``mpirun -np N python -m minidl_dist train.py [args...]``.

Each rank joins MPI, starts the collective timeout and the agreement on the
end of the script (:mod:`minidl_dist.ending`), then runs ``train.py`` as
``__main__``, as ``python train.py`` would (the same ``sys.argv``, the
script's folder first on ``sys.path``; ``-m module`` runs a module), and sees
how it ends:

- an uncaught exception, an import error included: this rank's traceback,
  the rank and what it was doing, then the whole job is aborted (status 1);
- a ``SystemExit`` with a non-zero status (``sys.exit(n)``, ``raise
  SystemExit(n)``, ``exit(n)``): the rank, the status and what it was doing,
  then the job is aborted with that status;
- ``os._exit(n)``, replaced in this process (not in forked children) so
  that it is seen: with ``n`` non-zero as a SystemExit; with 0 as the end;
- the end of the script, or a ``SystemExit`` with status 0:
  :func:`minidl_dist.ending.finish` waits until every rank has ended, and
  the other ranks' watchdogs abort the job at once if they wait for this
  rank in a collective it never entered (an early end).

An exception the script handles is never seen. A rank killed by a signal
cannot see its own end: mpirun ends the whole job when a rank that has
joined MPI dies (every rank has joined before the script starts), and rank
0's line of process ids names the rank in mpirun's report.

Without the launcher (``mpirun python train.py``), ``minidl_dist.init()``
installs what it can (:mod:`minidl_dist.failfast`); failures before
``init()`` then hang the job.
"""

import os
import runpy
import sys

from mpi4py import MPI

from minidl_dist import ending, failfast, watchdog

USAGE = 'usage: python -m minidl_dist script.py [args...] | -m module [args...]'


def main(argv):
    """Run the script that ``argv`` names (``script.py args...`` or ``-m module args...``).

    Returns:
        The process's exit status when the script ends without ending the
        job (0, or a SystemExit's status on a job of one rank).
    """
    if not argv or argv[0] in ('-h', '--help') or argv[0] == '-m' and len(argv) < 2:
        sys.stderr.write(USAGE + '\n')
        return 0 if argv and argv[0] in ('-h', '--help') else 2
    world = MPI.COMM_WORLD
    if world.Get_size() > 1:
        ending.start(world, watchdog.resolve_timeout())
        _see_os_exit(world)
    try:
        _run(argv)
    except SystemExit as error:
        return _exited(world, error)
    except BaseException as error:  # noqa: BLE001 (every uncaught error ends the job)
        failfast.fail(world, _without_launcher_frames(error))
    ending.finish('reached the end of its script')
    return 0


def _run(argv):
    if argv[0] == '-m':
        sys.argv = argv[1:]  # run_module puts the module's file in sys.argv[0]
        runpy.run_module(argv[1], run_name='__main__', alter_sys=True)
    else:
        script = argv[0]
        sys.argv = list(argv)
        # As `python script.py`: the script's folder, not the working directory, comes first.
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name='__main__')


def _exited(world, error):
    """End the job for the SystemExit ``error`` that ended the script; returns its status."""
    status = failfast.exit_status(error.code)
    if world.Get_size() == 1:
        raise error  # one process: Python's own handling (it prints a message code)
    if status == 0:
        ending.finish(f'exited with status 0 (SystemExit({error.code!r}))')
        return 0
    if not isinstance(error.code, int):
        sys.stderr.write(f'{error.code}\n')  # as Python prints sys.exit('message')
    rank, size = world.Get_rank(), world.Get_size()
    failfast.abort(world, f'minidl_dist: {failfast.rank_name(rank, size)} exited with status '
                          f'{status} '
                          f'(SystemExit({error.code!r})) while {failfast.describe_failure(error)}\n'
                          f'minidl_dist: aborting all {size} ranks\n',
                   status if 0 < status < 256 else 1)


def _see_os_exit(world):
    """Replace ``os._exit`` so that this rank's call of it ends the job as a SystemExit would."""
    pid, real_exit = os.getpid(), os._exit

    def _exit(status):
        if os.getpid() != pid:  # a forked child (multiprocessing, a fork): not a rank
            real_exit(status)
        rank, size = world.Get_rank(), world.Get_size()
        if status:
            failfast.abort(world, f'minidl_dist: {failfast.rank_name(rank, size)} called '
                                  f'os._exit({status}) '
                                  f'while {failfast.current_activity()}\n'
                                  f'minidl_dist: aborting all {size} ranks\n',
                           status if 0 < status < 256 else 1)
        ending.finish('called os._exit(0)')
        MPI.Finalize()  # os._exit skips mpi4py's own finalisation, which mpirun expects
        real_exit(0)

    _exit.__doc__ = real_exit.__doc__
    os._exit = _exit


def _without_launcher_frames(error):
    """``error`` with its traceback starting at the script, as ``python script.py`` shows it."""
    trace = error.__traceback__
    while trace is not None and trace.tb_frame.f_globals.get('__name__') in ('runpy', __name__):
        trace = trace.tb_next
    return error.with_traceback(trace) if trace is not None else error
