"""Sums of consecutive runs of rows, in a fixed order on every device."""

import numpy as np

from minidl.compute.arrays import get_array_module
from minidl.compute.cuda import segments as device_segments


def segment_sum(values, starts):
    """Sum the runs of rows of ``values`` that begin at ``starts``.

    Row ``i`` of the result is the sum of ``values[starts[i]:starts[i + 1]]``
    (to the end for the last run), added in row order. numpy does it with
    ``np.add.reduceat``; on a GPU a kernel sums each run in one thread per
    output element, with no atomics, so the bits never change from run to
    run (CuPy's own ``reduceat`` is a difference of cumulative sums, which
    loses precision).

    Args:
        values: Array ``(rows, ...)``.
        starts: Increasing int64 indices of the first row of each run;
            ``starts[0]`` is 0.

    Returns:
        Array ``(len(starts), ...)`` of the dtype of ``values``.
    """
    if get_array_module(values, starts) is np:
        return np.add.reduceat(values, starts, axis=0)
    return device_segments.segment_sum(values, starts)
