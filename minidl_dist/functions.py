"""Differentiable collectives, for layers that compute across ranks.

Model-parallel layers (:mod:`minidl_dist.model_parallel`) compute on the
*global batch*, the rows of every rank in rank order, held alike by every
rank. Their rule: the gradient of a tensor every rank holds alike is itself
complete and alike on every rank. :class:`GatherRows` enters the global
batch, :class:`OwnRows` leaves it, :class:`GatherColumns` joins the column
shards that ranks computed, and :class:`SumGradients` completes the partial
input gradient of a product with a shard of the weights (:class:`GatherRows`
does both at once for a batch that enters only such a product). All ranks
must call them in the same order, in forward and in backward; sums are the
fixed-order sums of :mod:`minidl_dist.allreduce`.
"""

import numpy as np

from minidl import Function, Tensor
from minidl_dist.collectives import gather_rows
from minidl_dist.comm import from_host, to_host


def _host(array):
    return np.ascontiguousarray(to_host(array))


def _flat_copy(array):
    """A 1-D host copy of ``array`` (the reducer sums in place)."""
    return np.array(to_host(array), order='C').reshape(-1)


def _sum(reducer, array):
    return from_host(reducer.sum_(_flat_copy(array)).reshape(array.shape), array)


def _span(comm, sizes):
    """``(start, stop)`` of this rank's part of blocks of ``sizes``, in rank order."""
    rank = comm.Get_rank()
    start = sum(sizes[:rank])
    return start, start + sizes[rank]


def gather_last_axis(comm, array, widths):
    """The ranks' arrays joined along their last axis, in rank order (a numpy array)."""
    moved = np.ascontiguousarray(np.moveaxis(_host(array), -1, 0))
    joined = gather_rows(comm, moved, widths)
    return np.ascontiguousarray(np.moveaxis(joined, 0, -1))


class AllreduceSum(Function):
    """The sum over ranks of a tensor; its gradient is the sum over ranks of the output's.

    Every rank's output depends on every rank's input with weight 1, so the
    backward pass is the same fixed-order sum applied to the gradients.

    Args:
        reducer: The :class:`~minidl_dist.allreduce.Reducer` to sum with.
    """

    def __init__(self, reducer):
        self.reducer = reducer

    def forward(self, x):
        return _sum(self.reducer, x)

    def backward(self, grad):
        return _sum(self.reducer, grad)


class SumGradients(Function):
    """The identity; its backward sums the gradient over ranks.

    Put in front of a product with a shard of the weights: each rank's input
    gradient is then the part its shard contributes, and their sum is the
    complete gradient, which every rank gets.
    """

    def __init__(self, reducer):
        self.reducer = reducer

    def forward(self, x):
        return x

    def backward(self, grad):
        return _sum(self.reducer, grad)


class GatherRows(Function):
    """Every rank's rows, joined in rank order: the global batch.

    The gradient of the global batch is complete on every rank, so the
    backward keeps this rank's rows of it, with no communication. Given a
    reducer, the gradient is instead each rank's part of it (the batch feeds
    only a product with a shard of the weights), and the backward sums it
    over ranks keeping this rank's rows: a sum-scatter, half an allreduce.

    Args:
        comm: The mpi4py communicator.
        counts: Rows of each rank, in rank order.
        reducer: None, or the :class:`~minidl_dist.allreduce.Reducer` that
            sums partial gradients.
    """

    def __init__(self, comm, counts, reducer=None):
        self.comm, self.counts, self.reducer = comm, list(counts), reducer
        self.start, self.stop = _span(comm, self.counts)

    def forward(self, x):
        return from_host(gather_rows(self.comm, _host(x), self.counts), x)

    def backward(self, grad):
        if self.reducer is None:
            return grad[self.start:self.stop].copy()
        row = int(np.prod(grad.shape[1:], dtype=np.int64))
        mine = self.reducer.sum_scatter(_flat_copy(grad), [count * row for count in self.counts])
        return from_host(mine.reshape((self.stop - self.start,) + grad.shape[1:]), grad)


class OwnRows(Function):
    """This rank's rows of the global batch; the backward gathers every rank's gradient rows."""

    def __init__(self, comm, counts):
        self.gather = GatherRows(comm, counts)

    def forward(self, x):
        return x[self.gather.start:self.gather.stop].copy()

    def backward(self, grad):
        return self.gather.forward(grad)


class GatherColumns(Function):
    """The ranks' column shards joined along the last axis, in rank order.

    Every rank holds the joined result alike, and so its complete gradient:
    the backward keeps this rank's columns.

    Args:
        comm: The mpi4py communicator.
        widths: Columns of each rank, in rank order.
    """

    def __init__(self, comm, widths):
        self.comm, self.widths = comm, list(widths)
        self.start, self.stop = _span(comm, self.widths)

    def forward(self, x):
        return from_host(gather_last_axis(self.comm, x, self.widths), x)

    def backward(self, grad):
        return grad[..., self.start:self.stop].copy()


def _tensor(x):
    return x if isinstance(x, Tensor) else Tensor(x)


def allreduce_sum(x, reducer):
    """The sum over ranks of the Tensor ``x`` (differentiable)."""
    return AllreduceSum(reducer)(_tensor(x))


def sum_gradients(x, reducer):
    """``x``, with its gradient summed over ranks (see :class:`SumGradients`)."""
    return SumGradients(reducer)(_tensor(x))


def gather_batch_rows(x, comm, counts, reducer=None):
    """The global batch from each rank's rows ``x`` (see :class:`GatherRows`)."""
    return GatherRows(comm, counts, reducer)(_tensor(x))


def own_rows(x, comm, counts):
    """This rank's rows of the global batch ``x`` (see :class:`OwnRows`)."""
    return OwnRows(comm, counts)(_tensor(x))


def gather_columns(x, comm, widths):
    """The global tensor from each rank's column shard ``x`` (see :class:`GatherColumns`)."""
    return GatherColumns(comm, widths)(_tensor(x))
