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

import numpy as np

from minidl import functions as F
from minidl_dist.functions import (gather_batch_rows, gather_columns, own_rows,
                                   sum_gradients)
from minidl_dist.tiled_product import TiledGradients, TiledProduct


class Region:
    """What the layers of a hybrid model's model-parallel part share during one call.

    Args:
        strategy: The :class:`~minidl_dist.hybrid.HybridParallel` strategy.
        output_layers: The model's output layers (their outputs leave the region).
    """

    def __init__(self, strategy, output_layers):
        self.strategy = strategy
        self.output_layers = {id(layer) for layer in output_layers}

    def enter(self, x, reducer=None):
        """``x`` as the global batch: gathered from every rank unless it is already.

        With ``reducer``, the gathered batch's gradient is summed over ranks
        (see :class:`~minidl_dist.functions.GatherRows`).
        """
        if getattr(x, '_global_batch', False):
            return x
        gathered = gather_batch_rows(x, self.strategy.comm, self.strategy.row_counts(x), reducer)
        gathered._global_batch = True
        return gathered

    def leave(self, layer, y):
        """``y`` as it leaves ``layer``: this rank's rows if it is a model output."""
        if id(layer) not in self.output_layers:
            y._global_batch = True
            return y
        return own_rows(y, self.strategy.comm, self.strategy.row_counts())


class ColumnShard:
    """The placement of a Dense layer whose columns are split over the ranks.

    Rank ``r`` of ``N`` holds columns ``r units/N ... (r + 1) units/N - 1``
    of the kernel and of the bias.

    Args:
        region: The model's :class:`Region`.
        units: The layer's whole number of columns.
        rank, size: This rank and the number of ranks.
    """

    def __init__(self, region, units, rank, size):
        self.region = region
        self.units, self.size = units, size
        self.width = units // size
        self.start, self.stop = rank * self.width, (rank + 1) * self.width
        micro_shards = region.strategy.micro_shards
        self.gradients = None if micro_shards is None else TiledGradients(micro_shards)

    def __str__(self):
        return f'model-parallel {self.start}:{self.stop}/{self.units}'

    def call(self, layer, inputs, **kwargs):
        strategy = self.region.strategy
        if getattr(inputs, '_global_batch', False):
            x = sum_gradients(inputs, strategy.reducer)
        else:  # gathered for this product alone: its backward sums and scatters at once
            x = self.region.enter(inputs, strategy.reducer)
        rows = x if x.ndim == 2 else F.reshape(x, (-1, x.shape[-1]))
        if self.gradients is None:
            shard = F.dense(rows, layer.kernel, layer.bias)  # the layer holds its shards
        else:  # the rank-count-invariant mode
            per_sample = rows.shape[0] // x.shape[0]
            product = TiledProduct([count * per_sample for count in strategy.row_counts()],
                                   strategy.round_micro_shards(),
                                   strategy.micro_shards // self.size, self.gradients)
            weights = [layer.kernel] + ([layer.bias] if layer.bias is not None else [])
            shard = product(rows, *weights)
        y = gather_columns(shard, strategy.comm, [self.width] * self.size)
        if x.ndim != 2:
            y = F.reshape(y, x.shape[:-1] + (self.units,))
        return self.region.leave(layer, layer.activation(y))


class GlobalBatch:
    """The placement of a layer after the first model-parallel one: it computes the global batch."""

    def __init__(self, region):
        self.region = region

    def __str__(self):
        return 'global batch'

    def call(self, layer, inputs, *args, **kwargs):
        several = isinstance(inputs, list)
        inputs = [self.region.enter(x) for x in (inputs if several else [inputs])]
        strategy = self.region.strategy
        blocks = strategy.random_blocks()
        if blocks is None:
            with strategy.shared_randomness():
                y = layer.call(inputs if several else inputs[0], *args, **kwargs)
            return self.region.leave(layer, y)
        # The invariant mode: each micro-shard alone, with its own draws, whatever
        # other micro-shards share the gathered batch.
        edges = np.cumsum([count for _, count in blocks])[:-1].tolist()
        pieces = [F.split(x, edges) if edges else [x] for x in inputs]
        outputs = []
        for number, (index, _) in enumerate(blocks):
            block = [piece[number] for piece in pieces]
            with strategy.shared_randomness(index):
                outputs.append(layer.call(block if several else block[0], *args, **kwargs))
        return self.region.leave(layer, F.concat(outputs) if len(outputs) > 1 else outputs[0])
