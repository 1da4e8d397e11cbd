"""Segment sums: each run of rows summed on its own, the same bits every time.

numpy's ``add.reduceat`` (the CPU path) adds in its own fixed order; the GPU
kernel adds each run's rows one after another, so it matches an in-order
reference bit for bit and the CPU to float32 rounding.
"""

import numpy as np
import pytest

from minidl.compute import segment_sum

from tests.minidl.compute.gpu_support import require_gpu


def case(dtype='float32', rows=1000, width=7, runs=50, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((rows, width)).astype(dtype)
    starts = np.concatenate([[0], np.sort(rng.choice(np.arange(1, rows), runs - 1,
                                                     replace=False))]).astype(np.int64)
    return values, starts


def ordered_sums(values, starts):
    """Reference: each run's rows added one after another, in row order."""
    ends = list(starts[1:]) + [len(values)]
    out = []
    for start, end in zip(starts, ends):
        total = values[start].copy()
        for row in values[start + 1:end]:
            total += row
        out.append(total)
    return np.stack(out)


def test_cpu_sums_each_run_and_repeats_its_bits():
    values, starts = case()
    result = segment_sum(values, starts)
    np.testing.assert_allclose(result, ordered_sums(values, starts), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(result, segment_sum(values.copy(), starts.copy()))


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('width', [1, 7, 300])
def test_gpu_matches_the_in_order_sums_bit_for_bit_every_run(dtype, width):
    cupy = require_gpu()
    values, starts = case(dtype, width=width)
    expected = ordered_sums(values, starts)
    gpu_values, gpu_starts = cupy.asarray(values), cupy.asarray(starts)
    for _ in range(5):
        np.testing.assert_array_equal(cupy.asnumpy(segment_sum(gpu_values, gpu_starts)), expected)
    np.testing.assert_allclose(expected, segment_sum(values, starts), rtol=1e-5, atol=1e-5)


def test_gpu_one_dimensional_values_and_a_single_run():
    cupy = require_gpu()
    values = np.arange(10, dtype=np.float32)
    result = segment_sum(cupy.asarray(values), cupy.asarray(np.array([0, 3], np.int64)))
    np.testing.assert_array_equal(cupy.asnumpy(result), [3, 42])
    single = segment_sum(cupy.asarray(values), cupy.zeros(1, np.int64))
    np.testing.assert_array_equal(cupy.asnumpy(single), [45])
