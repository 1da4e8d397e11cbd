"""Deterministic segment sums on the GPU (see ``minidl.compute.segments``)."""

import functools

from minidl.compute.cuda.runtime import require_gpu


@functools.cache
def _kernel():
    cupy = require_gpu()
    # One thread per output element (run, column): it adds its run's rows in
    # order. No atomics and no tree whose shape depends on the launch, so the
    # result is the same on every run.
    return cupy.ElementwiseKernel(
        'raw T values, raw int64 starts, int64 rows, int64 runs, int64 width', 'T total',
        '''
        const long long run = i / width, column = i % width;
        const long long end = run + 1 < runs ? starts[run + 1] : rows;
        T sum = 0;
        for (long long row = starts[run]; row < end; ++row) {
            sum += values[row * width + column];
        }
        total = sum;
        ''',
        'minidl_segment_sum')


def segment_sum(values, starts):
    """``numpy.add.reduceat(values, starts, axis=0)`` for CuPy arrays, run by run in order."""
    cupy = require_gpu(values.device.id)
    values = cupy.ascontiguousarray(values)
    starts = cupy.ascontiguousarray(starts, dtype=cupy.int64)
    width = values[0].size if len(values) else 0
    total = cupy.empty((len(starts),) + values.shape[1:], values.dtype)
    if total.size:
        _kernel()(values, starts, len(values), len(starts), width, total)
    return total
