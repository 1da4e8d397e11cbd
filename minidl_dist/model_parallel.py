"""Placements of a hybrid model's layers: which rank computes what, on which rows.

A hybrid model (:class:`~minidl_dist.hybrid.HybridParallel`) has two parts.
Layers before its first model-parallel layer are data-parallel: each rank
computes its own rows of the global batch with whole weights. From the first
model-parallel layer on, every layer computes the *global batch* (all
ranks' rows, in rank order), which every rank holds alike:

- a model-parallel Dense layer (:class:`ColumnShard`) holds 1/N of its
  kernel's columns and of its bias; each rank computes its columns for the
  whole global batch, and the shards are gathered into the whole output;
- any other layer there (:class:`GlobalBatch`: activations, dropout, ...)
  computes the global batch as it is, drawing random numbers from the
  step's shared stream so that every rank draws alike.

Inputs from the data-parallel part are gathered into the global batch where
they enter; the model's outputs leave it as each rank's own rows, so that
losses, metrics and predictions are per rank as in data parallelism.

Columns, not input rows, are split: each output value is then computed
whole by one rank, the same dot product one process computes, and no sum
over ranks enters the forward pass (a split of the input rows would need a
sum of N partial products per output, with rounding that depends on N).
Per model-parallel layer and step, a rank sends (N - 1)/N of: the batch's
inputs where they enter (B x in, gathered), the output columns (B x units,
gathered), and in the backward pass the input gradient (B x in: a
sum-scatter where the batch entered, an allreduce, twice that, between
model-parallel layers); data parallelism would send 2 (N - 1)/N of the
layer's in x units weights instead. The global batch B is the lever.
"""

import contextlib

import numpy as np

from minidl import functions as F
from minidl_dist.functions import (gather_batch_rows, gather_columns, own_rows,
                                   sum_gradients)
from minidl_dist.tiled_product import TiledGradients, TiledProduct


class Region:
    """What the layers of a hybrid model's model-parallel part share: the pass they compute.

    The strategy hands each forward pass's :class:`~minidl_dist.hybrid_pass.Pass`
    to the region (:meth:`computing`, :meth:`begin`); the placements read it
    as :attr:`current`, since a layer's call has no other way to receive it.

    Args:
        comm: The mpi4py communicator of the ranks.
        reducer: The :class:`~minidl_dist.allreduce.Reducer` that sums over them.
        output_layers: The model's output layers (their outputs leave the region).
    """

    def __init__(self, comm, reducer, output_layers):
        self.comm, self.reducer = comm, reducer
        self.rank = comm.Get_rank()
        self.output_layers = {id(layer) for layer in output_layers}
        self._current = None

    @contextlib.contextmanager
    def computing(self, step_pass):
        """Within the block, the placements compute ``step_pass`` (a training step's)."""
        previous, self._current = self._current, step_pass
        try:
            yield step_pass
        finally:
            self._current = previous

    def begin(self, step_pass):
        """The placements compute ``step_pass`` from now on (evaluate and predict, which
        compute after the strategy has chosen their rows)."""
        self._current = step_pass

    @property
    def current(self):
        """The :class:`~minidl_dist.hybrid_pass.Pass` being computed."""
        if self._current is None:
            raise RuntimeError('the model-parallel layers of a hybrid model compute within '
                               'fit, evaluate, predict and the *_on_batch methods, which '
                               'say whose rows the global batch holds')
        return self._current

    def enter(self, x, reducer=None):
        """``x`` as the global batch: gathered from every rank unless it is already.

        With ``reducer``, the gathered batch's gradient is summed over ranks
        (see :class:`~minidl_dist.functions.GatherRows`).
        """
        step_pass = self.current
        if step_pass.holds_global(x):
            return x
        counts = step_pass.row_counts
        assert x.shape[0] == counts[self.rank], \
            f'{x.shape[0]} rows where this rank computes {counts[self.rank]}'
        return step_pass.mark_global(gather_batch_rows(x, self.comm, counts, reducer))

    def leave(self, layer, y):
        """``y`` as it leaves ``layer``: this rank's rows if it is a model output."""
        step_pass = self.current
        if id(layer) not in self.output_layers:
            return step_pass.mark_global(y)
        return own_rows(y, self.comm, step_pass.row_counts)


class ColumnShard:
    """The placement of a Dense layer whose columns are split over the ranks.

    Rank ``r`` of ``N`` holds columns ``r units/N ... (r + 1) units/N - 1``
    of the kernel and of the bias.

    Args:
        region: The model's :class:`Region`.
        units: The layer's whole number of columns.
        rank, size: This rank and the number of ranks.
        micro_shards: None, or S in the rank-count-invariant mode.
    """

    def __init__(self, region, units, rank, size, micro_shards=None):
        self.region = region
        self.units, self.size = units, size
        self.width = units // size
        self.start, self.stop = rank * self.width, (rank + 1) * self.width
        self.gradients = None if micro_shards is None else TiledGradients(micro_shards)
        self.blocks = None if micro_shards is None else micro_shards // size

    def __str__(self):
        return f'model-parallel {self.start}:{self.stop}/{self.units}'

    def call(self, layer, inputs, **kwargs):
        region = self.region
        step_pass = region.current
        if step_pass.holds_global(inputs):
            x = sum_gradients(inputs, region.reducer)
        else:  # gathered for this product alone: its backward sums and scatters at once
            x = region.enter(inputs, region.reducer)
        rows = x if x.ndim == 2 else F.reshape(x, (-1, x.shape[-1]))
        if self.gradients is None:
            shard = F.dense(rows, layer.kernel, layer.bias)  # the layer holds its shards
        else:  # the rank-count-invariant mode
            per_sample = rows.shape[0] // x.shape[0]
            blocks = step_pass.blocks()
            product = TiledProduct([count * per_sample for _, count in blocks],
                                   [index for index, _ in blocks], self.blocks, self.gradients)
            weights = [layer.kernel] + ([layer.bias] if layer.bias is not None else [])
            shard = product(rows, *weights)
        y = gather_columns(shard, region.comm, [self.width] * self.size)
        if x.ndim != 2:
            y = F.reshape(y, x.shape[:-1] + (self.units,))
        return region.leave(layer, layer.activation(y))


class GlobalBatch:
    """The placement of a layer after the first model-parallel one: it computes the global batch."""

    def __init__(self, region):
        self.region = region

    def __str__(self):
        return 'global batch'

    def call(self, layer, inputs, *args, **kwargs):
        several = isinstance(inputs, list)
        inputs = [self.region.enter(x) for x in (inputs if several else [inputs])]
        step_pass = self.region.current
        if step_pass.micro_shards is None:
            with step_pass.randomness():
                y = layer.call(inputs if several else inputs[0], *args, **kwargs)
            return self.region.leave(layer, y)
        # The invariant mode: each micro-shard alone, with its own draws, whatever
        # other micro-shards share the gathered batch.
        blocks = step_pass.blocks()
        edges = np.cumsum([count for _, count in blocks])[:-1].tolist()
        pieces = [F.split(x, edges) if edges else [x] for x in inputs]
        outputs = []
        for number, (index, _) in enumerate(blocks):
            block = [piece[number] for piece in pieces]
            with step_pass.randomness(index):
                outputs.append(layer.call(block if several else block[0], *args, **kwargs))
        return self.region.leave(layer, F.concat(outputs) if len(outputs) > 1 else outputs[0])
