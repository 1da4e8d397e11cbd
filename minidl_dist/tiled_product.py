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
  in rounds (its part ``j`` meets the other ranks' parts ``j``), so the
  backward only records each micro-shard's input rows and output gradient;
  :meth:`TiledGradients.sum` then adds the micro-shards' contributions in
  the tree ``((s0 + s1) + (s2 + s3))``, as data parallelism sums them.
"""

import numpy as np

from minidl import Function
from minidl.compute import get_array_module
from minidl_dist.allreduce import PairwiseSum
from minidl_dist.comm import to_host


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
        self.x, self.kernel = x, kernel
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
        return grad_x, None, None


class TiledGradients:
    """Each micro-shard's input rows and output gradient, until the step's weight gradients.

    Args:
        micro_shards: S, the number of micro-shards of a global batch.
    """

    def __init__(self, micro_shards):
        self.micro_shards = micro_shards
        self._kept = {}

    def keep(self, index, x, grads):
        self._kept[index] = (x, grads)

    def sum(self, use_bias):
        """``(kernel gradient, bias gradient or None)`` summed over the micro-shards in a tree."""
        assert len(self._kept) == self.micro_shards, \
            f'{len(self._kept)} of {self.micro_shards} micro-shards recorded'
        kernels, biases = PairwiseSum(), PairwiseSum()
        for index in range(self.micro_shards):
            x, grads = self._kept.pop(index)
            kernels.add(np.concatenate([x.T @ block for block in grads], axis=1))
            if use_bias:
                biases.add(np.concatenate([block.sum(axis=0) for block in grads]))
        return kernels.result(), biases.result() if use_bias else None
