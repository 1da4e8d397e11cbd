"""One rank ends in a chosen way; run with ``python -m minidl_dist`` under mpirun.

Usage: ending_worker.py CASE WHEN [RANK]. Rank RANK (default 1) ends by
CASE, WHEN ``before`` ``dist.init()`` or ``after`` it, in step 2 of a loop of
sums over ranks (in which the other ranks then wait for it). CASE is one of

- raise: an uncaught RuntimeError;
- exit: ``sys.exit(3)``; systemexit: ``raise SystemExit(4)``;
- os_exit: ``os._exit(5)``; kill: SIGKILL to itself;
- import: importing a module that does not exist;
- early: ``exit(0)`` while the other ranks go on;
- handled: a RuntimeError that the script catches, then it goes on: the job
  must succeed;
- none: nothing happens: the job must succeed;
- linger: (WHEN ``after``) after the loop, rank RANK works alone for 2 s
  while the others have ended: they wait for it, at most the timeout.

Every rank prints ``rank R: done`` when it reaches the end.
"""

import os
import signal
import sys
import time

import numpy as np

import minidl_dist as dist
from minidl_dist.failfast import doing


def end(case):
    """End this rank as ``case`` says (or not, for handled and none)."""
    if case == 'raise':
        raise RuntimeError('simulated failure')
    if case == 'exit':
        sys.exit(3)
    if case == 'systemexit':
        raise SystemExit(4)
    if case == 'os_exit':
        os._exit(5)
    if case == 'kill':
        os.kill(os.getpid(), signal.SIGKILL)
    if case == 'import':
        import minidl_dist_no_such_module  # noqa: F401
    if case == 'early':
        exit(0)  # noqa: PLR1722 (the builtin, as a script would call it)
    if case == 'handled':
        try:
            raise RuntimeError('simulated failure, handled')
        except RuntimeError as error:
            print(f'handled: {error}', flush=True)


def main(case, when, who):
    rank = int(os.environ.get('PMI_RANK', '0'))  # known before init: mpich sets it
    if when == 'before' and rank == who:
        end(case)
    dist.init()
    for step in range(1, 6):
        with doing(f'step {step} of the test loop'):
            if when == 'after' and step == 2 and dist.rank() == who:
                end(case)
            total = dist.allreduce(np.ones(3, 'float32'), average=False)
    assert total.tolist() == [dist.size()] * 3
    if case == 'linger' and dist.rank() == who:
        time.sleep(2)
    print(f'rank {dist.rank()}: done', flush=True)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
