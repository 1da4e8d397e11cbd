"""Running the worker scripts under mpirun (or as one plain process) from tests.

Each run gets a wall-clock limit; on timeout the whole process group
(mpirun and every rank) is killed, so a hang fails the test instead of
blocking the suite. BLAS runs one thread per rank, as the ranks share two
cores, and so that every run uses the same BLAS code paths.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = pathlib.Path(__file__).resolve().parent / 'scripts'
MPIRUN = pathlib.Path(sys.executable).parent / 'mpirun'


class Run:
    """The outcome of a launch: exit code, output, seconds taken."""

    def __init__(self, returncode, stdout, stderr, seconds):
        self.returncode, self.stdout, self.stderr, self.seconds = \
            returncode, stdout, stderr, seconds

    def check(self):
        assert self.returncode == 0, f'exit {self.returncode}\n{self.stdout}\n{self.stderr}'
        return self


def launch(script, *args, ranks=None, timeout=90, env=None, launcher=False, hosts=None):
    """Run ``scripts/<script>`` with ``args``: under ``mpirun -np ranks``, or plainly if None.

    ``env`` adds environment variables to the run's; ``launcher`` runs the
    script through ``python -m minidl_dist``; ``hosts`` (a
    :class:`minidl_dist.fakehosts.FakeHosts`) spreads the ranks evenly over them.
    """
    command, env = command_and_env(script, args, ranks, env, launcher, hosts)
    start = time.monotonic()
    returncode, stdout, stderr = run_process(command, ROOT, env, timeout)
    return Run(returncode, stdout, stderr, time.monotonic() - start)


def command_and_env(script, args, ranks=None, env=None, launcher=False, hosts=None):
    """The command line and environment that :func:`launch` runs."""
    pytest.importorskip('mpi4py')
    command = [sys.executable, *(['-m', 'minidl_dist'] if launcher else []),
               str(SCRIPTS / script), *map(str, args)]
    if ranks is not None:
        if not MPIRUN.exists():
            pytest.skip('mpirun (the mpich wheel) is not installed in this environment')
        if hosts is not None:
            command = hosts.command(command, ranks, str(MPIRUN.parent / 'mpiexec'))
        else:
            command = [str(MPIRUN), '-np', str(ranks)] + command
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1',
               PYTHONPATH=str(ROOT), **(env or {}))
    return command, env


def run_process(argv, cwd, env, timeout):
    """``(returncode, stdout, stderr)`` of ``argv``; on timeout its whole process group
    (mpirun and every rank, or a shell and its children) is killed and the test fails."""
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f'{" ".join(argv)} did not finish in {timeout} s\n{stdout}\n{stderr}')
    return process.returncode, stdout, stderr


def results(directory, ranks):
    """The JSON result each rank wrote to ``directory/rank<r>.json``."""
    return [json.loads((directory / f'rank{rank}.json').read_text()) for rank in range(ranks)]
