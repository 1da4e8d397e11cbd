"""Differentiable collectives, for layers that compute across ranks."""

import numpy as np

from minidl import Function, Tensor
from minidl_dist.comm import from_host, to_host


class AllreduceSum(Function):
    """The sum over ranks of a tensor; its gradient is the sum over ranks of the output's.

    Every rank's output depends on every rank's input with weight 1, so the
    backward pass is the same fixed-order sum applied to the gradients. All
    ranks must call it, in the same order, in forward and in backward.

    Args:
        reducer: The :class:`~minidl_dist.allreduce.Reducer` to sum with.
    """

    def __init__(self, reducer):
        self.reducer = reducer

    def _sum(self, array):
        host = np.array(to_host(array), order='C').reshape(-1)
        return from_host(self.reducer.sum_(host).reshape(array.shape), array)

    def forward(self, x):
        return self._sum(x)

    def backward(self, grad):
        return self._sum(grad)


def allreduce_sum(x, reducer):
    """The sum over ranks of the Tensor ``x`` (differentiable)."""
    return AllreduceSum(reducer)(x if isinstance(x, Tensor) else Tensor(x))
