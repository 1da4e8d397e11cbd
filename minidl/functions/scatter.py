"""Deterministic scatter-add of rows, the backward of gathers by index.

Summing rows into repeated indices with ``np.add.at`` (or with float atomics on
a GPU) sums in an order that is not fixed. Here the indices are sorted stably
and each run of equal indices is summed with one segmented reduction, so every
output row is a sum, in a fixed order, of its own rows in their original order:
the same bits on every run, whatever the other indices are.
"""

from minidl.compute import get_array_module
from minidl.compute.segments import segment_sum


def index_add(indices, values, num_rows):
    """Sum rows of ``values`` into the rows named by ``indices``.

    Args:
        indices: Integer array of any shape, with entries in ``[0, num_rows)``.
        values: Array of shape ``indices.shape + row_shape``.
        num_rows: Number of output rows.

    Returns:
        An array of shape ``(num_rows,) + row_shape`` and the dtype of
        ``values`` whose row ``i`` is the sum of the rows ``values[j]`` with
        ``indices[j] == i`` (zeros where there are none).

    Raises:
        TypeError: If ``indices`` is not an integer array.
        ValueError: If the shapes disagree or an index is out of range.
    """
    xp = get_array_module(indices, values)
    if indices.dtype.kind not in 'iu':
        raise TypeError(f'index_add needs integer indices, got dtype {indices.dtype}')
    if values.shape[:indices.ndim] != indices.shape:
        raise ValueError(f'index_add: values of shape {values.shape} do not start with '
                         f'the indices shape {indices.shape}')
    row_shape = values.shape[indices.ndim:]
    output = xp.zeros((num_rows,) + row_shape, dtype=values.dtype)
    if indices.size == 0:
        return output
    flat = indices.reshape(-1)
    low, high = int(flat.min()), int(flat.max())
    if low < 0 or high >= num_rows:
        raise ValueError(f'index_add: indices must lie in [0, {num_rows}), '
                         f'got values from {low} to {high}')
    order = xp.argsort(flat, kind='stable')
    sorted_indices = flat[order]
    sorted_values = values.reshape((flat.size,) + row_shape)[order]
    # A segment starts wherever the sorted index changes.
    is_start = xp.empty(flat.size, dtype=bool)
    is_start[0] = True
    xp.not_equal(sorted_indices[1:], sorted_indices[:-1], out=is_start[1:])
    starts = xp.flatnonzero(is_start)
    output[sorted_indices[starts]] = segment_sum(sorted_values, starts)
    return output
