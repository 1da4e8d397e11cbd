"""Who may compute next, and in which order the server applies gradients, in asynchronous SGD.

Pure bookkeeping, no MPI: the parameter server (:mod:`minidl_dist.param_server`)
and the seeded schedules below share it, so that a seeded schedule only ever
asks the server for a gradient that a worker is free to compute.

A worker's *clock* is the number of its gradients the server has applied
in the current epoch. After each application the server answers the
workers waiting for weights, except, in the stale-synchronous mode with
bound ``s``, those more than ``s`` gradients ahead of the slowest worker
(Ho et al. 2013, "More effective distributed ML via a stale synchronous
parameter server"): their answer is held until the slowest catches up. In
the asynchronous mode (``staleness=None``) nobody is held.

The seeded schedules (:func:`seeded_order`) fix the order in which the
server applies one epoch's gradients from a seed, instead of the order in
which they happen to arrive; as each worker's next gradient is computed on
the weights the server answered it with, the order fixes the whole run.
"""

import numpy as np


class Clocks:
    """The workers' clocks in one epoch, who waits for weights, and the leads seen.

    Args:
        workers: Number of workers.
        staleness: None (asynchronous: answers are never held), or the bound
            ``s >= 0``: a worker more than ``s`` gradients ahead of the
            slowest worker gets no weights until the slowest catches up.

    Attributes:
        done: Gradients of each worker applied in this epoch.
        waiting: Workers whose gradient was applied and who wait for weights.
        max_lead: The largest lead (own clock minus the slowest clock) with
            which a worker was answered, i.e. set off to compute its next
            gradient: never more than ``staleness``.
    """

    def __init__(self, workers, staleness=None):
        if staleness is not None and (isinstance(staleness, bool) or staleness < 0):
            raise ValueError(f'staleness must be None or a non-negative integer, '
                             f'got {staleness!r}')
        self.staleness = staleness
        self.done = [0] * workers
        self.waiting = set()
        self.max_lead = 0

    def applied(self, worker):
        """The server applied a gradient of ``worker``, who now waits for weights."""
        if worker in self.waiting:
            raise RuntimeError(f'worker {worker} sent a gradient before it got weights')
        self.done[worker] += 1
        self.waiting.add(worker)

    def release(self):
        """The waiting workers that may go on now, in increasing order (they stop waiting)."""
        slowest = min(self.done)
        freed = sorted(worker for worker in self.waiting
                       if self.staleness is None or self.done[worker] - slowest <= self.staleness)
        for worker in freed:
            self.waiting.discard(worker)
            self.max_lead = max(self.max_lead, self.done[worker] - slowest)
        return freed

    def running(self, steps):
        """Workers computing a gradient now (not waiting), with fewer than ``steps`` done."""
        return [worker for worker, done in enumerate(self.done)
                if worker not in self.waiting and done < steps]


def seeded_order(rng, workers, steps, staleness=None):
    """The order in which the server applies one epoch's gradients, drawn from ``rng``.

    Each worker appears ``steps`` times. Two delay models, one per mode:

    - asynchronous (``staleness=None``): ``steps`` rounds, each a random
      permutation of the workers; workers of equal speed whose gradients
      arrive in a random order. A gradient is computed on weights at most
      ``2 (workers - 1)`` updates old.
    - stale-synchronous (bound ``staleness``): each next gradient comes from
      a worker drawn uniformly among those computing (not held by the
      bound), as from workers of random speeds; :class:`Clocks` holds the
      ones too far ahead, exactly as the server will.

    Args:
        rng: A ``numpy.random.Generator`` (seeded: the order is then fixed).
        workers: Number of workers, at least 1.
        steps: Gradients of each worker in the epoch.
        staleness: None, or the stale-synchronous bound.

    Returns:
        A list of ``workers * steps`` worker indices (0-based).
    """
    if workers < 1 or steps < 0:
        raise ValueError(f'need at least one worker and no negative steps, got '
                         f'workers={workers}, steps={steps}')
    if staleness is None:
        return [int(worker) for _ in range(steps) for worker in rng.permutation(workers)]
    clocks = Clocks(workers, staleness)
    order = []
    for _ in range(workers * steps):
        running = clocks.running(steps)
        worker = running[int(rng.integers(len(running)))]
        order.append(worker)
        clocks.applied(worker)
        clocks.release()
    return order


def epoch_rng(seed, iterations):
    """The generator of an epoch's order: from the seed and the server's update count.

    Seeding with the count as well gives each epoch its own order, and a run
    resumed from a checkpoint (which keeps ``iterations``) the orders of the
    run it continues.
    """
    return np.random.default_rng([int(seed), int(iterations)])
