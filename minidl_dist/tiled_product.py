"""A model-parallel product computed in tiles whose shapes do not depend on the number of ranks.

The rank-count-invariant mode (``micro_shards=S``) promises the same bits on
1, 2 or 4 ranks. For a Dense layer split over N ranks this means every
floating-point operation must be the same whatever N is, so the product is
cut into fixed tiles: rows by micro-shard, columns into S blocks of
``units / S`` (rank ``r`` holds blocks ``r S/N ... (r + 1) S/N - 1``).

- Forward: each tile is ``x_s @ kernel_c + bias_c``, one product of fixed shape.
- Input gradient: for each micro-shard, the tiles' products
  ``grad_sc @ kernel_c.T`` are summed over the column blocks in the binary
  tree ``((c0 + c1) + (c2 + c3))``: a rank sums its own blocks, then
  :func:`~minidl_dist.functions.sum_gradients` sums the ranks in the same
  kind of tree (:mod:`minidl_dist.allreduce`), one fixed tree over S.
- Kernel and bias gradients: the micro-shards of a global batch reach a rank
  in rounds (its part ``j`` meets the other ranks' parts ``j``), and one
  round's micro-shards (``s0`` and ``s2`` on 2 ranks) are not neighbours in
  the tree ``((s0 + s1) + (s2 + s3))`` that data parallelism sums them in.
  So the backward records each micro-shard's input rows and output
  gradient in :class:`TiledGradients`, and gives autograd no weight
  gradient until the round that completes the record: that round's
  backward returns the tree's sum (:meth:`TiledGradients.sum`), which
  becomes the weights' ``.grad`` as any gradient does (a per-round
  gradient, which autograd would add up round by round, would sum in
  another order on each number of ranks).
"""

import numpy as np

from minidl import Function
from minidl.compute import get_array_module
from minidl_dist.allreduce import PairwiseSum
from minidl_dist.comm import from_host, to_host


def _bounds(counts):
    edges = np.concatenate([[0], np.cumsum(counts)]).astype(int).tolist()
    return list(zip(edges[:-1], edges[1:]))


def _tree(terms):
    """The sum of a power-of-two number of arrays in the binary tree ((t0 + t1) + (t2 + t3))."""
    while len(terms) > 1:
        terms = [terms[index] + terms[index + 1] for index in range(0, len(terms), 2)]
    return terms[0]


class TiledProduct(Function):
    """``x @ kernel + bias`` for the rows of several micro-shards, tile by tile.

    Args:
        row_counts: Rows of each micro-shard in ``x``, in order.
        micro_shards: Their indices in the global batch (for the record).
        blocks: Column blocks of this rank's shard of the kernel.
        record: :class:`TiledGradients` that keeps what the weight gradients need.
    """

    def __init__(self, row_counts, micro_shards, blocks, record):
        self.rows, self.micro_shards = _bounds(row_counts), list(micro_shards)
        self.blocks, self.record = blocks, record

    def _columns(self, width):
        step = width // self.blocks
        return [(start, start + step) for start in range(0, width, step)]

    def forward(self, x, kernel, bias=None):
        self.x, self.kernel, self.use_bias = x, kernel, bias is not None
        xp = get_array_module(x)
        y = xp.empty((x.shape[0], kernel.shape[1]), x.dtype)
        for top, bottom in self.rows:
            for left, right in self._columns(kernel.shape[1]):
                xp.matmul(x[top:bottom], kernel[:, left:right], out=y[top:bottom, left:right])
                if bias is not None:
                    y[top:bottom, left:right] += bias[left:right]
        return y

    def backward(self, grad):
        x, kernel = self.x, self.kernel
        columns = self._columns(kernel.shape[1])
        xp = get_array_module(x)
        grad_x = xp.empty_like(x)
        for top, bottom in self.rows:
            grad_x[top:bottom] = _tree([grad[top:bottom, left:right] @ kernel[:, left:right].T
                                        for left, right in columns])
        for index, (top, bottom) in zip(self.micro_shards, self.rows):
            # Host copies: the weight gradients are summed on the host, as data
            # parallelism sums its terms.
            self.record.keep(index, np.array(to_host(x[top:bottom])),
                             [np.ascontiguousarray(to_host(grad[top:bottom, left:right]))
                              for left, right in columns])
        weights = [None, None] if self.use_bias else [None]
        if self.record.complete():  # the global batch's last round: the tree's sum
            kernel_grad, bias_grad = self.record.sum(self.use_bias)
            weights = [from_host(kernel_grad, kernel)] + \
                ([from_host(bias_grad, kernel)] if self.use_bias else [])
        return (grad_x, *weights)


class TiledGradients:
    """Each micro-shard's input rows and output gradient, until the step's weight gradients.

    Args:
        micro_shards: S, the number of micro-shards of a global batch.
    """

    def __init__(self, micro_shards):
        self.micro_shards = micro_shards
        self._kept = {}

    def keep(self, index, x, grads):
        """Keep micro-shard ``index``'s input rows ``x`` and its output gradient's
        column blocks ``grads`` (host arrays)."""
        self._kept[index] = (x, grads)

    def complete(self):
        """Whether every micro-shard of the global batch is kept."""
        return len(self._kept) == self.micro_shards

    def check_taken(self, name):
        """Raise if micro-shards are kept that no weight gradient took (layer ``name``)."""
        if self._kept:
            raise RuntimeError(f'model-parallel layer {name!r}: {len(self._kept)} of '
                               f'{self.micro_shards} micro-shards reached its backward pass '
                               f'in this step; each must, for its weight gradients')

    def sum(self, use_bias):
        """``(kernel gradient, bias gradient or None)`` summed over the micro-shards in a
        tree; the record is empty afterwards."""
        assert len(self._kept) == self.micro_shards, \
            f'{len(self._kept)} of {self.micro_shards} micro-shards recorded'
        kernels, biases = PairwiseSum(), PairwiseSum()
        for index in range(self.micro_shards):
            x, grads = self._kept.pop(index)
            kernels.add(np.concatenate([x.T @ block for block in grads], axis=1))
            if use_bias:
                biases.add(np.concatenate([block.sum(axis=0) for block in grads]))
        return kernels.result(), biases.result() if use_bias else None
