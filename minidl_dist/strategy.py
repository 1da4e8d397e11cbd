"""DataParallel: the Strategy that makes fit, evaluate and predict data-parallel.

Every rank holds the whole model. For each global batch of ``fit``:

- The batch is cut into *parts*: in the plain mode one per rank; in the
  rank-count-invariant mode (``micro_shards=S``) S micro-shards, rank ``r``
  of ``N`` computing micro-shards ``r S/N ... (r + 1) S/N - 1``.
- Each part's forward and backward runs alone (its batch-norm statistics
  and its dropout draws, :mod:`minidl_dist.randomness`), starting from the
  step's state weights. Its gradients and state changes are packed into a
  term (:mod:`minidl_dist.packing`).
- A rank sums its terms in a binary tree, then the ranks sum those in the
  same kind of tree (:mod:`minidl_dist.allreduce`). With S micro-shards
  this is one fixed tree over the S terms whatever N is, so 1, 2 or 4 ranks
  give bitwise identical gradients, hence weights. In the plain mode the
  sum is fixed for a given N, and matches one process up to rounding.
- Every rank applies the same update; state weights become their starting
  value plus the mean change of the parts.

Loss and metric sums are added over ranks in a fixed order (exact global
values); predictions are gathered in order; only rank 0 prints and writes.
"""

import numpy as np

from minidl.models import Strategy
from minidl.models.strategy import count_of
from minidl_dist import data, model_parts, model_sync
from minidl_dist.allreduce import PairwiseSum
from minidl_dist.collectives import gather_rows
from minidl_dist.failfast import doing
from minidl_dist.packing import Packing
from minidl_dist.randomness import PartStreams
from minidl_dist.sync_batch_norm import SyncBatchNormalization, local_statistics
from minidl_dist.watchdog import waiting


class DataParallel(Strategy):
    """Synchronous data parallelism over an MPI communicator.

    Args:
        comm: The mpi4py communicator of the ranks.
        reducer: The :class:`~minidl_dist.allreduce.Reducer` that sums over them.
        micro_shards: None for the plain mode, or the number S of micro-shards
            per global batch (a power of two that the number of ranks divides).
        every_rank_writes: Let every rank print progress and write files
            (by default only rank 0 does).
    """

    def __init__(self, comm, reducer, micro_shards=None, every_rank_writes=False):
        self.comm, self.reducer = comm, reducer
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.micro_shards = micro_shards
        self.is_chief = every_rank_writes or self.rank == 0
        self._model = None
        self._packing = None
        self._streams = None
        self._has_sync_batch_norm = False
        self._sums = PairwiseSum()
        self._snapshot = None
        self._steps = 0

    # ----- start ---------------------------------------------------------------

    def begin(self, model):
        """Broadcast rank 0's weights, optimizer state and generators (after checking shapes)."""
        if not model.built:
            raise ValueError(f'minidl_dist: model {model.name!r} has no weights yet; build it '
                             f'before fit (input_shape= on the first layer, or call it once) '
                             f'so that rank 0 can broadcast them')
        with doing("broadcasting rank 0's weights"):
            self._broadcast(model)
        self._model = model
        self._streams = PartStreams(model_parts.generators(model))
        self._has_sync_batch_norm = any(isinstance(layer, SyncBatchNormalization)
                                        for layer in model.flatten_layers())

    def _broadcast(self, model):
        model_sync.broadcast_model(self.comm, model)

    def begin_epochs(self, batch_size, steps, samples=None):
        """Check that all ranks run the same epochs over as many samples, with the same model.

        Ranks whose sample counts differ but give the same number of steps
        would train silently on mismatched data, so the number of samples
        (of array data) and a hash of the model's architecture
        (:func:`~minidl_dist.model_sync.architecture_digest`) are compared
        too; a difference raises the same error on every rank.
        """
        if batch_size is not None and batch_size % self.size:
            raise ValueError(f'batch_size={batch_size} is the global batch size, split over '
                             f'{self.size} ranks; it must be divisible by {self.size} '
                             f'(e.g. batch_size='
                             f'{batch_size - batch_size % self.size or self.size})')
        plan = {'samples': samples, 'batch_size': batch_size, 'steps': steps,
                'architecture': model_sync.architecture_digest(self._model)}
        with doing('comparing the data, batch size, steps and model of all ranks'):
            with waiting('gathering the plans of all ranks'):
                plans = self.comm.allgather(plan)
            differing = [key for key in plan if len({repr(other[key]) for other in plans}) > 1]
            if differing:
                listing = '; '.join(f'rank {rank}: ' + ', '.join(f'{key}={other[key]}'
                                                                 for key in differing)
                                    for rank, other in enumerate(plans))
                raise ValueError(f'the ranks would train on different data or models '
                                 f'({listing}); give every rank the same data (the same '
                                 f'number of samples), batch_size and model')

    # ----- one training step ---------------------------------------------------------

    def parts(self, count):
        """``(part index, start, stop)`` of the parts of a ``count``-sample batch on this rank."""
        if self.micro_shards is None:
            start, stop = data.block_bounds(count, self.size)[self.rank]
            return [(self.rank, start, stop)]
        per_rank = self.micro_shards // self.size
        first = self.rank * per_rank
        bounds = data.block_bounds(count, self.micro_shards)[first:first + per_rank]
        return [(first + offset, start, stop) for offset, (start, stop) in enumerate(bounds)]

    def shard(self, indices):
        """This rank's contiguous block of a batch (for evaluate and predict)."""
        start, stop = data.block_bounds(count_of(indices), self.size)[self.rank]
        return data.select(indices, start, stop)

    def run_step(self, step, indices):
        """Run ``step`` on each of this rank's parts alone and sum their terms in a tree."""
        model = self._model
        count = count_of(indices)
        if self._has_sync_batch_norm and self.micro_shards is None and count < self.size:
            raise ValueError(f'a batch of {count} samples leaves some of the {self.size} ranks '
                             f'without samples, which SyncBatchNormalization cannot handle; '
                             f'use a number of samples that leaves no small last batch')
        packing = self._packing_for(model)
        self._steps += 1
        self._streams.begin_step(model.optimizer.iterations)
        self._snapshot = packing.snapshot()
        self._sums.reset()
        for part, start, stop in self.parts(count):
            term = self._sums.new_term(packing.template)
            if stop > start:
                with doing(f'training step {self._steps}, forward and backward of samples '
                           f'{start}:{stop} of the global batch'), self._streams.part(part), \
                        local_statistics(self.micro_shards is not None):
                    step(data.select(indices, start, stop))
                packing.fill(term, self._snapshot)
                packing.restore(self._snapshot)
            else:
                term[...] = 0  # an empty micro-shard keeps its place in the tree
            self._sums.add(term)

    def _packing_for(self, model):
        params = model.trainable_weights
        states = model_parts.state_weights(model)
        if self._packing is None or not self._packing.matches(params, states):
            self._packing = Packing(params, states)
        return self._packing

    def reduce_gradients(self, params):
        """Sum the terms over ranks; set every ``.grad`` and the state weights."""
        assert self._packing.matches(params, self._packing.states), \
            'reduce_gradients got other weights than run_step packed'
        with doing(f'training step {self._steps}, summing gradients over ranks'):
            total = self.reducer.sum_(self._sums.result())
        self._packing.unpack(total, self._snapshot)

    # ----- sums and gathers ------------------------------------------------------------

    def reduce_sum(self, totals):
        """Loss and metric sums over ranks, added in a fixed order."""
        with doing('summing losses and metrics over ranks'):
            return self.reducer.sum_(np.array(totals, dtype=np.float64))

    def gather(self, arrays):
        """All ranks' predictions for a batch, in order, on every rank."""
        with doing('gathering predictions'):
            # Shapes (small metadata) go through the pickling call; the arrays do not.
            meta = None if arrays is None else [(a.shape, a.dtype.str) for a in arrays]
            with waiting('gathering the shapes of predictions'):
                metas = self.comm.allgather(meta)
            if arrays is None:  # no samples here: empty arrays shaped like another rank's
                template = next(item for item in metas if item is not None)
                arrays = [np.empty((0,) + shape[1:], dtype) for shape, dtype in template]
            return [gather_rows(self.comm, array,
                                [0 if item is None else item[index][0][0] for item in metas])
                    for index, array in enumerate(arrays)]
