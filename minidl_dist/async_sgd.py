"""AsyncOptimizer: asynchronous and stale-synchronous SGD with a parameter server.

Rank 0 is the parameter server: it holds the master weights and the
optimizer, so momentum and Adam's moments are the server's (CMU's SPEECH3
design), and computes no gradient. Ranks 1 ... N-1 are the workers: each
computes the gradient of its share of every global batch of ``fit`` (the
batch cut into N-1 blocks), sends it with its running loss sums, and goes
on with the weights the server answers. The server applies every gradient
alone, as it takes it: N-1 optimizer steps per global batch, each on the
mean gradient of a block (with 2 ranks: one worker, plain SGD on the whole
batch, computed on another process).

Modes (``mode`` and ``schedule`` of :func:`AsyncOptimizer`):

- ``'async'``: a worker gets the weights right after its gradient is
  applied and never waits for the others; a gradient may be computed on
  weights a few updates old (its *delay*).
- ``'stale'`` (stale-synchronous, bound ``s``): a worker more than ``s``
  gradients ahead of the slowest worker gets no weights until the slowest
  catches up; ``s=0`` is lock-step rounds.
- ``schedule='free'``: the server takes gradients in their order of arrival,
  which the operating system decides: a run cannot be repeated bit for bit
  ("lock-less, asynchronous approaches achieve performance at the expense
  of determinism", Baidu SVAIL).
- ``schedule='seeded'``: the server takes them in an order drawn from
  ``seed`` (:func:`~minidl_dist.async_schedule.seeded_order`), waiting for
  the worker whose turn it is. The order fixes which weights each gradient
  is computed on, so a run with the same seed, data, number of ranks and
  BLAS threads gives the same bits; the cost is the waiting.

At every epoch's end the workers take the server's weights and the mean of
their moving statistics, so validation, callbacks, ``evaluate``, ``predict``
and ``save`` (rank 0's, whose optimizer state is the real one) see one
model; ``evaluate`` and ``predict`` run data-parallel over all ranks.
"""

import numbers

import numpy as np

from minidl import optimizers
from minidl.models import collected_weights
from minidl.models.strategy import count_of
from minidl.tensor import no_grad
from minidl_dist import comm, data, model_parts, traffic
from minidl_dist.allreduce import Reducer
from minidl_dist.comm import from_host, to_host
from minidl_dist.failfast import doing
from minidl_dist.local_step import train_alone
from minidl_dist.model_sync import broadcast_arrays
from minidl_dist.param_server import GRADIENT, WEIGHTS, Layout, Server, wait
from minidl_dist.strategy import DataParallel
from minidl_dist.watchdog import waiting


def AsyncOptimizer(optimizer, mode='async', staleness=None, schedule='free',  # noqa: N802
                   seed=0, every_rank_writes=False):
    """Make ``model.compile(optimizer=...)`` train with a parameter server (rank 0).

    Args:
        optimizer: Any minidl optimizer (an instance or a name); it runs on
            the server, with its momentum or moments there.
        mode: 'async' (no bound) or 'stale' (stale-synchronous).
        staleness: With 'stale', the bound ``s >= 0``: how many gradients a
            worker may be ahead of the slowest. None with 'async'.
        schedule: 'free' (arrival order) or 'seeded' (an order drawn from
            ``seed``: the run is repeatable bit for bit).
        seed: The seed of the seeded order (an integer).
        every_rank_writes: Let every rank print progress and write files.

    Training goes through ``fit`` only, with a known number of steps per
    epoch (array data, or ``steps_per_epoch``): ``train_on_batch`` raises a
    RuntimeError, as does a callback that stops ``fit`` inside an epoch
    (stopping at an epoch's end, as EarlyStopping does, is fine).

    Returns:
        The optimizer, now distributed. ``optimizer.strategy.counters`` (on
        rank 0) counts updates, the largest lead of a worker and the delays.

    Raises:
        ValueError: For a bad mode, staleness, schedule or seed, a job of
            one rank (there must be a server and a worker), or an optimizer
            already distributed.
        RuntimeError: If ``minidl_dist.init()`` was not called.
    """
    if mode not in ('async', 'stale'):
        raise ValueError(f"mode must be 'async' or 'stale', got {mode!r}")
    if mode == 'stale' and (isinstance(staleness, bool) or not isinstance(
            staleness, numbers.Integral) or staleness < 0):
        raise ValueError(f"mode='stale' needs staleness, a non-negative integer, "
                         f"got {staleness!r}")
    if mode == 'async' and staleness is not None:
        raise ValueError("mode='async' has no staleness bound; use mode='stale' for one")
    if schedule not in ('free', 'seeded'):
        raise ValueError(f"schedule must be 'free' or 'seeded', got {schedule!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f'seed must be a non-negative integer, got {seed!r}')
    world = comm.world()
    if world.Get_size() < 2:
        raise ValueError('AsyncOptimizer needs at least 2 ranks (rank 0 serves, the others '
                         'compute): run under mpirun -np 2 or more')
    optimizer = optimizers.get(optimizer)
    if optimizer.strategy is not None:
        raise ValueError(f'{optimizer.name} is already distributed')
    optimizer.strategy = AsyncTraining(world, Reducer(world), None if staleness is None
                                       else int(staleness), int(seed) if schedule == 'seeded'
                                       else None, every_rank_writes)
    return optimizer


class AsyncTraining(DataParallel):
    """The Strategy of :func:`AsyncOptimizer` (both roles: rank 0 serves, the others work).

    It keeps DataParallel's broadcast at the start, its checks of the ranks'
    plans, its sharded evaluate and predict and its per-part random streams.
    ``fit``'s loop applies the optimizer after ``reduce_gradients`` on
    every rank: the server lets it apply the step's last gradient (it
    applies the others itself); a worker's local update is overwritten by
    the server's weights in ``reduce_sum``, which comes after it.

    Args:
        comm: The mpi4py communicator of the ranks.
        reducer: The Reducer of the epoch-end averages.
        staleness: None, or the stale-synchronous bound.
        seed: None (free-running) or the seed of the order of updates.
        every_rank_writes: Let every rank print progress and write files.
    """

    def __init__(self, comm, reducer, staleness, seed, every_rank_writes=False):
        super().__init__(comm, reducer, None, every_rank_writes)
        self.workers = self.size - 1
        self.staleness, self.seed = staleness, seed
        with waiting('making the communicator of asynchronous SGD'):
            self.link = comm.Dup()  # its messages cannot meet the collectives'
        self.server = Server(self.link, staleness, seed) if self.rank == 0 else None
        self._layout = None
        self._epoch_steps, self._epoch_step = None, 0
        self._training = False
        self._last = None  # the server: the worker whose gradient fit's loop applies
        self._out = self._in = self._requests = None  # a worker's buffers and requests

    @property
    def counters(self):
        """The server's counters (rank 0); an empty dict on a worker."""
        return {} if self.server is None else dict(self.server.counters)

    def begin_epochs(self, batch_size, steps, samples=None):
        """Check that every worker gets a share of each batch and that the steps are known."""
        if steps is None:
            raise ValueError('AsyncOptimizer needs the number of steps per epoch (array data, '
                             'or steps_per_epoch with a generator) to schedule the updates')
        if batch_size is not None and batch_size % self.workers:
            raise ValueError(f'batch_size={batch_size} is the global batch, split over the '
                             f'{self.workers} workers; it must be divisible by {self.workers}')
        super().begin_epochs(None, steps, samples)  # the plans; batch_size was checked above
        self._epoch_steps, self._epoch_step = steps, 0

    def run_step(self, step, indices):
        """A worker computes its block's gradient; the server computes nothing."""
        if self._epoch_steps is None:
            raise RuntimeError('AsyncOptimizer trains in fit only (not train_on_batch: the '
                               'server must know how many steps the epoch has)')
        model = self._model
        self._steps += 1
        self._epoch_step += 1
        self._training = True
        if self.server is not None:
            if self._epoch_step == 1:
                self.server.begin_epoch(self._epoch_steps, model.optimizer.iterations,
                                        len(model.objectives.totals()))
            return
        worker = self.rank - 1
        bounds = data.block_bounds(count_of(indices), self.workers)[worker]
        train_alone(model, self._streams, step, indices, worker, bounds, self._steps)

    def reduce_gradients(self, params):
        """The server takes the step's N-1 gradients; a worker sends its gradient."""
        model = self._model
        sums = np.asarray(model.objectives.totals(), np.float64)
        if self._layout is None or not self._layout.matches(params, sums.size):
            self._layout = Layout(params, sums.size)
        layout = self._layout
        if self.server is not None:
            with doing(f'serving step {self._steps}'):
                for index in range(self.workers):
                    worker = self.server.take(layout)
                    if index == self.workers - 1:
                        self._last = worker  # fit's loop applies it, reduce_sum answers
                        break
                    model.optimizer.apply_gradients(params)
                    _constrain(params)
                    self.server.applied(worker, layout)
            return
        if self._out is None or self._out.size != layout.message_bytes:
            self._out, self._in = layout.message(), layout.weights()
        layout.sums(self._out)[...] = sums
        # fit divides the block's loss by the global batch: times the workers, the
        # block's mean gradient (each worker's step is weighted by its samples).
        for param, piece in zip(params, layout.pieces(layout.flat(self._out))):
            piece[...] = 0 if param.grad is None else to_host(param.grad.data)
            piece *= self.workers
        self._requests = [self.link.Isend(self._out, dest=0, tag=GRADIENT),
                          self.link.Irecv(self._in, source=0, tag=WEIGHTS)]
        traffic.add(self._out.nbytes)

    def reduce_sum(self, totals):
        """After a training step: answer or take the weights, then the logs' sums."""
        if not self._training:  # evaluate and validation: the data-parallel sum
            return super().reduce_sum(totals)
        self._training = False
        layout = self._layout
        if self.server is not None:
            self.server.applied(self._last, layout)
            result = self.server.sums()
        else:
            with doing(f'training step {self._steps}, waiting for weights'):
                for request, what in zip(self._requests, ('the server to take a gradient',
                                                          'weights from the server')):
                    wait(self.link, request, what)
            with no_grad():
                for param, piece in zip(layout.params, layout.pieces(self._in)):
                    param.data[...] = from_host(piece, param.data)
            result = np.array(totals, np.float64)
        if self._epoch_step == self._epoch_steps:  # the epoch's logs: the server's exact sums
            with waiting("a broadcast of the epoch's loss sums"):
                self.comm.Bcast(result, root=0)
        return result

    def end_epochs(self):
        """fit has ended: steps outside fit (train_on_batch) are refused again."""
        self._epoch_steps = None

    def end_epoch(self):
        """Every rank takes the server's weights and the workers' mean moving statistics."""
        model = self._model
        if self._epoch_step != self._epoch_steps:
            raise RuntimeError(f'fit stopped after step {self._epoch_step} of an epoch of '
                               f'{self._epoch_steps} (model.stop_training set by a callback '
                               f'during the epoch); under AsyncOptimizer the ranks are at '
                               f'different points of an epoch: stop at its end (on_epoch_end)')
        self._epoch_step = 0
        if self.server is not None:
            self.server.end_epoch()
        with doing("taking the server's weights at the epoch's end"):
            broadcast_arrays(self.comm, [param.data for param in
                                         collected_weights.training_weights(model)])
            states = model_parts.state_weights(model)
            if states:
                buffer = np.concatenate([to_host(state.data).reshape(-1) for state in states])
                if self.server is not None:
                    buffer[...] = 0  # the server computes nothing: its statistics never moved
                self.reducer.sum_(buffer)
                np.divide(buffer, self.workers, out=buffer)
                edges = np.cumsum([0] + [state.data.size for state in states]).tolist()
                for state, low, high in zip(states, edges, edges[1:]):
                    state.data[...] = from_host(buffer[low:high].reshape(state.shape), state.data)


def _constrain(params):
    with no_grad():
        for param in params:
            if getattr(param, 'constraint', None) is not None:
                param.data[...] = param.constraint(param.data)
