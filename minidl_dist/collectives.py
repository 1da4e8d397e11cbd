"""Collectives on user values, with Horovod's names: allreduce, broadcast, allgather.

``fit`` needs none of these; they are for custom training loops and for
scripts written for Horovod. Sums use the deterministic fixed-order
allreduce of :mod:`minidl_dist.allreduce`; :func:`gather_rows`, which
``allgather`` and ``predict`` share, takes a communicator and numpy arrays.
"""

import numpy as np

from minidl import Tensor
from minidl_dist import comm, traffic
from minidl_dist.allreduce import Reducer
from minidl_dist.model_sync import broadcast_arrays
from minidl_dist.watchdog import waiting

_reducer = []


def world_reducer():
    """The Reducer over all ranks that user-level collectives and layers share."""
    if not _reducer:
        _reducer.append(Reducer(comm.world()))
    return _reducer[0]


def _as_array(value):
    data = value.data if isinstance(value, Tensor) else value
    return np.array(comm.to_host(data), order='C')


def _like(result, value):
    if isinstance(value, Tensor):
        return Tensor(comm.from_host(result, value.data), dtype=value.dtype)
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        return result.item()
    return result


def allreduce(value, average=True):
    """The sum (or, by default, the mean) of ``value`` over ranks, the same bits on all.

    Args:
        value: A number, numpy array or Tensor (of the same shape on every rank).
        average: Divide the sum by the number of ranks.

    Returns:
        A value of the same kind as ``value`` (a Tensor without gradient for a Tensor).
    """
    array = _as_array(value)
    if array.dtype.kind != 'f':
        array = array.astype(np.float64)
    total = world_reducer().sum_(array.reshape(-1)).reshape(array.shape)
    if average:
        total = total / comm.size()
    return _like(total, value)


def broadcast(value, root_rank=0):
    """The value of ``value`` on rank ``root_rank``, on every rank (same shape everywhere)."""
    array = _as_array(value)
    broadcast_arrays(comm.world(), [array], root_rank)
    return _like(array, value)


def allgather(value):
    """The ranks' arrays concatenated along axis 0, in rank order (lengths may differ)."""
    array = np.atleast_1d(_as_array(value))
    world = comm.world()
    with waiting('gathering array shapes'):
        counts = [shape[0] for shape in world.allgather(array.shape)]
    result = gather_rows(world, array, counts)
    return _like(result, value) if isinstance(value, Tensor) else result


def gather_rows(communicator, array, counts):
    """The ranks' numpy ``array``s concatenated along axis 0, in rank order, on every rank.

    Args:
        communicator: The mpi4py communicator.
        array: This rank's rows (the same trailing shape and dtype on every rank).
        counts: The number of rows of each rank's array, in rank order.
    """
    per_row = int(np.prod(array.shape[1:], dtype=np.int64))
    result = np.empty((sum(counts),) + array.shape[1:], array.dtype)
    traffic.add(array.nbytes * (communicator.Get_size() - 1))
    with waiting('gathering rows of all ranks'):
        communicator.Allgatherv(np.ascontiguousarray(array),
                                [result, [count * per_row for count in counts]])
    return result
