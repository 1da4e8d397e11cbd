"""The parameter server's side of asynchronous SGD, and the messages it exchanges.

Rank 0 holds the master weights and the optimizer (its momentum or moments
live here only: server-side momentum, as in CMU's SPEECH3). Workers 1 ...
N-1 send one message per gradient (:class:`Layout`: their running loss and
metric sums, then the gradient) and wait for weights. The server applies
each gradient with the optimizer as it takes it, then answers the waiting
workers that :class:`~minidl_dist.async_schedule.Clocks` lets go on with a
copy of the weights after that update.

Which gradient it takes next is the only difference between the free-running
and the seeded schedules: the first to arrive (``MPI.ANY_SOURCE``), or the
next worker of :func:`~minidl_dist.async_schedule.seeded_order` (the server
then waits for that worker even if another's gradient is already there).

Waits poll with a short sleep rather than block: a blocked MPICH rank spins
on a core, which the workers need more on a machine with fewer cores than
ranks. They are not numbered as collectives (:mod:`minidl_dist.watchdog`
counts those, which every rank must enter alike) but time out the same way.
"""

import time

import numpy as np
from mpi4py import MPI

from minidl import Tensor
from minidl_dist import failfast, traffic, watchdog
from minidl_dist.async_schedule import Clocks, epoch_rng, seeded_order
from minidl_dist.comm import from_host, to_host

GRADIENT, WEIGHTS = 1, 2  # tags, on the strategy's own communicator
POLL = 5e-5  # seconds between two looks at a pending message


class Layout:
    """Where each weight and the loss sums sit in the flat buffers that travel.

    Args:
        params: The trainable weights, all of one dtype.
        totals: Length of the float64 vector of loss and metric sums.
    """

    def __init__(self, params, totals):
        dtypes = {str(param.dtype) for param in params}
        if len(dtypes) != 1:
            raise NotImplementedError(f'asynchronous SGD sends weights of one dtype; this model '
                                      f'has {sorted(dtypes)}')
        self.params = list(params)
        self.dtype = np.dtype(dtypes.pop())
        self.totals = totals
        self.edges = np.cumsum([0] + [int(np.prod(p.shape)) for p in params]).tolist()
        self.header = 8 * totals
        self.message_bytes = self.header + self.edges[-1] * self.dtype.itemsize

    def matches(self, params, totals):
        return totals == self.totals and len(params) == len(self.params) and \
            all(a is b for a, b in zip(params, self.params))

    def message(self):
        """An empty gradient message: the loss sums' bytes, then the gradient's."""
        return np.empty(self.message_bytes, np.uint8)

    def weights(self):
        """An empty buffer for all the weights."""
        return np.empty(self.edges[-1], self.dtype)

    def sums(self, message):
        return message[:self.header].view(np.float64)

    def flat(self, message):
        return message[self.header:].view(self.dtype)

    def pieces(self, flat):
        """Views of ``flat``, one per weight, shaped like it."""
        return [flat[low:high].reshape(param.shape) for low, high, param
                in zip(self.edges, self.edges[1:], self.params)]


def wait(comm, request, what, status=None):
    """Wait for an MPI request, polling; abort the job past the collective timeout."""
    if request.Test(status):
        return
    began, limit = time.monotonic(), watchdog.timeout()
    while not request.Test(status):
        if time.monotonic() - began > limit:
            failfast.abort(comm, f'minidl_dist: rank {comm.Get_rank()} waited more than '
                                 f'{limit:g} s (MINIDL_DIST_TIMEOUT) for {what} while '
                                 f'{failfast.current_activity()}\n')
        time.sleep(POLL)


class Server:
    """Rank 0's role: take gradients, apply them, answer the workers.

    Args:
        comm: The strategy's communicator (rank 0 serves, ranks 1... work).
        staleness: None (asynchronous) or the stale-synchronous bound.
        seed: None (free-running: arrival order) or the seed of the order.

    Attributes:
        counters: ``updates`` applied, ``max_lead`` (the largest lead of a
            worker answered; at most ``staleness``), ``max_delay`` and
            ``delays`` (updates between the weights a gradient was computed
            on and those it was applied to: their maximum and sum).
    """

    def __init__(self, comm, staleness, seed):
        self.comm, self.staleness, self.seed = comm, staleness, seed
        self.workers = comm.Get_size() - 1
        self.counters = {'updates': 0, 'max_lead': 0, 'max_delay': 0, 'delays': 0}
        self._sends = [None] * self.workers  # [request, buffer] per worker
        self._message = None
        self._clocks = self._order = self._version = self._sums = None

    def begin_epoch(self, steps, iterations, totals):
        """Start an epoch of ``steps`` gradients per worker (every worker holds the masters)."""
        self._clocks = Clocks(self.workers, self.staleness)
        if self.seed is not None:
            order = seeded_order(epoch_rng(self.seed, iterations), self.workers, steps,
                                 self.staleness)
            self._order = iter(order)
        self._version = [self.counters['updates']] * self.workers
        self._sums = np.zeros((self.workers, totals))

    def take(self, layout):
        """Receive the next gradient into the weights' ``.grad``; returns its worker."""
        if self._message is None or self._message.size != layout.message_bytes:
            self._message = layout.message()
        source = MPI.ANY_SOURCE if self.seed is None else next(self._order) + 1
        status = MPI.Status()
        request = self.comm.Irecv(self._message, source=source, tag=GRADIENT)
        wait(self.comm, request, f'a gradient from {"any worker" if source < 0 else source}',
             status)
        worker = status.Get_source() - 1
        self._sums[worker] = layout.sums(self._message)
        delay = self.counters['updates'] - self._version[worker]
        self.counters['max_delay'] = max(self.counters['max_delay'], delay)
        self.counters['delays'] += delay
        for param, piece in zip(layout.params, layout.pieces(layout.flat(self._message))):
            param.grad = Tensor(from_host(piece, param.data), dtype=param.dtype)
        return worker

    def applied(self, worker, layout):
        """The gradient of ``worker`` is applied: answer the workers free to go on."""
        self.counters['updates'] += 1
        self._clocks.applied(worker)
        for freed in self._clocks.release():
            self._answer(freed, layout)
        self.counters['max_lead'] = max(self.counters['max_lead'], self._clocks.max_lead)

    def _answer(self, worker, layout):
        pending = self._sends[worker]
        if pending is None or pending[1].size != layout.edges[-1]:
            pending = self._sends[worker] = [None, layout.weights()]
        if pending[0] is not None:  # the last answer must have left before its buffer is reused
            wait(self.comm, pending[0], f'worker {worker + 1} to take its weights')
        buffer = pending[1]
        for param, piece in zip(layout.params, layout.pieces(buffer)):
            piece[...] = to_host(param.data)
        pending[0] = self.comm.Isend(buffer, dest=worker + 1, tag=WEIGHTS)
        traffic.add(buffer.nbytes)
        self._version[worker] = self.counters['updates']

    def end_epoch(self):
        """Wait until every worker took its last answer (they all have, by the epoch's end)."""
        for pending in self._sends:
            if pending is not None and pending[0] is not None:
                wait(self.comm, pending[0], 'a worker to take its last weights')
                pending[0] = None

    def sums(self):
        """The loss and metric sums of all workers' latest messages, added in worker order."""
        total = np.zeros(self._sums.shape[1])
        for row in self._sums:
            total += row
        return total
