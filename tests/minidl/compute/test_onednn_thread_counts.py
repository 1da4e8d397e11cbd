"""oneDNN's threaded calls (Dense, convolution, pooling) give the same bits on 1, 2, 4, 8 and
16 OpenMP threads (issue 25).

minidl gives a oneDNN call the process's share of the cores (``threads.cpu_share``)
divided among its pool's threads: 2, 4 or 16 on a machine of 8, 16 or 64 cores, where the
pool has four (MINIDL_NUM_THREADS=1 gives each call the whole share). Each count here is
that share, with the pool on one thread, and makes its own primitives (as a process that
only ever had that count); the truth is the one-thread run. More threads than this
machine's cores are slower but valid: oneDNN divides its work by the count it is given, not
by the cores.
"""

import collections
import threading

import numpy as np
import pytest

import minidl
from minidl.compute import blas_threads, threads
from minidl.compute.onednn import matmul, primitive
from minidl.compute.onednn.convolution import Conv2DKernel
from minidl.compute.onednn.dense import DenseKernel
from minidl.compute.onednn.pooling import Pool2DKernel

from tests.minidl.compute.onednn_support import require_onednn

require_onednn('its threaded calls')

COUNTS = (1, 2, 4, 8, 16)


def _on_counts(monkeypatch, run):
    """``run()`` (a list of arrays) with oneDNN given each of ``COUNTS`` threads."""
    monkeypatch.setattr(minidl.config, 'num_threads', 1)
    results = {}
    for count in COUNTS:
        monkeypatch.setattr(threads, 'cpu_share', lambda count=count: count)
        monkeypatch.setattr(primitive, '_cache', collections.OrderedDict())
        results[count] = run()
    blas_threads.blas.release()
    return results


def _assert_same_bits(results, names):
    for count in COUNTS[1:]:
        for name, a, b in zip(names, results[1], results[count], strict=True):
            assert np.array_equal(a, b), (
                f'{name} on {count} threads: max |diff| {np.abs(a - b).max():.3g}')


# Dense as minidl runs it: the forward with its bias, the backward's grad @ kernel.T and
# x.T @ grad (transposed operands read in place). Thin outputs of deep inputs, a batch of one.
DENSE_SHAPES = [(128, 4096, 10), (1, 4096, 1000), (64, 2048, 2), (4096, 64, 8), (1, 784, 512),
                (8, 8192, 4), (1, 25088, 16), (3, 3000, 5)]


@pytest.mark.parametrize('shape', DENSE_SHAPES, ids=str)
def test_dense_gives_the_same_bits_on_any_thread_count(shape, onednn_on, monkeypatch):
    # Every product threaded, not only those of 2**25 multiply-adds and more: the
    # threshold is a speed choice, and these shapes are what a larger batch is cut like.
    monkeypatch.setattr(matmul, 'MIN_THREADED_WORK', 1)
    rows, depth, width = shape
    rng = np.random.default_rng(rows + depth + width)
    x, kernel, grad = (rng.standard_normal(s).astype(np.float32)
                       for s in [(rows, depth), (depth, width), (rows, width)])
    bias = rng.standard_normal(width).astype(np.float32)

    def run():
        dense = DenseKernel(relu=False)
        y = dense.forward(x, kernel, bias)
        made = {p.omp_threads for p in primitive._cache.values()}
        assert made == {threads.cpu_share()}  # the product really ran on that count
        return [y] + list(dense.backward(grad, (True, True, True)))

    _assert_same_bits(_on_counts(monkeypatch, run), ['y', 'x grad', 'kernel grad', 'bias grad'])


# (x shape, kernel shape, strides, pads, dilation, channels_first, depthwise). The first five
# changed bits before the guard (on: 2; 8; 4; 2; 16 threads): brgconv_strided's input
# gradient, jit / brgconv kernels whose blocking follows the thread count, x64:gemm:jit.
CONV_CASES = [
    ((1, 28, 28, 16), (7, 7, 16, 10), 4, 3, 1, False, False),
    ((1, 16, 16, 5), (7, 7, 5, 8), 4, 3, 1, False, False),
    ((1, 16, 16, 16), (11, 11, 16, 3), 1, 5, 1, True, False),
    ((3, 28, 28, 1), (7, 7, 1, 32), 2, 3, 1, False, False),
    ((2, 16, 16, 64), (7, 7, 64, 8), 2, 3, 2, False, False),
    ((1, 28, 28, 1), (5, 5, 1, 6), 1, 2, 1, False, False),  # LeNet's first, a batch of one
    ((2, 7, 7, 512), (1, 1, 512, 10), 1, 0, 1, False, False),  # 1x1, deep, few filters
    ((2, 8, 8, 64), (1, 1, 64, 32), 2, 0, 1, False, False),  # 1x1, stride 2
    ((1, 12, 12, 3), (3, 3, 3, 16), 1, 1, 1, False, False),  # RGB first layer
    ((2, 9, 9, 256), (3, 3, 256, 2), 2, 0, 1, False, False),  # deep, two filters, stride 2
    ((1, 16, 16, 8), (3, 3, 8, 2), 2, 1, 1, False, True),  # depthwise, multiplier 2
    ((1, 16, 16, 8), (3, 3, 8, 1), 1, 1, 1, False, True),  # depthwise
]


@pytest.mark.parametrize('case', CONV_CASES, ids=str)
def test_convolution_gives_the_same_bits_on_any_thread_count(case, onednn_on, monkeypatch):
    x_shape, kernel_shape, stride, pad, dilation, channels_first, depthwise = case
    rng = np.random.default_rng(sum(x_shape) + sum(kernel_shape))
    x = rng.standard_normal(x_shape).astype(np.float32)
    kernel = rng.standard_normal(kernel_shape).astype(np.float32)
    bias = rng.standard_normal(kernel_shape[2] * kernel_shape[3] if depthwise
                               else kernel_shape[3]).astype(np.float32)

    def run():
        conv = Conv2DKernel((stride, stride), ((pad, pad), (pad, pad)), (dilation, dilation),
                            channels_first, depthwise)
        y = conv.forward(x, kernel, bias)
        grad = np.cos(np.arange(y.size, dtype=np.float32)).reshape(y.shape)
        return [y, conv.backward(grad, (True, False))[0]]

    _assert_same_bits(_on_counts(monkeypatch, run), ['y', 'x grad'])


@pytest.mark.parametrize('x_shape, kernel_shape, depthwise', [
    ((2, 7, 7, 512), (1, 1, 512, 10), False), ((1, 16, 16, 8), (3, 3, 8, 1), True)], ids=str)
def test_1x1_and_depthwise_convolutions_keep_their_threads(x_shape, kernel_shape, depthwise,
                                                           onednn_on, monkeypatch):
    # The guard costs no speed where oneDNN's kernels keep their bits on any count.
    monkeypatch.setattr(minidl.config, 'num_threads', 1)
    monkeypatch.setattr(threads, 'cpu_share', lambda: 8)
    conv = Conv2DKernel((1, 1), ((0, 0), (0, 0)), (1, 1), False, depthwise)
    conv.forward(np.ones(x_shape, np.float32), np.ones(kernel_shape, np.float32))
    plan = conv._plan(x_shape[0])
    for direction in ('forward', 'backward_data'):
        assert plan.primitive(direction).omp_threads == 8, plan.primitive(direction).implementation
    blas_threads.blas.release()


def test_a_3x3_convolution_runs_on_one_thread(onednn_on, monkeypatch):
    monkeypatch.setattr(minidl.config, 'num_threads', 1)
    monkeypatch.setattr(threads, 'cpu_share', lambda: 8)
    conv = Conv2DKernel((4, 4), ((3, 3), (3, 3)), (1, 1), False)
    conv.forward(np.ones((1, 28, 28, 16), np.float32), np.ones((7, 7, 16, 10), np.float32))
    plan = conv._plan(1)
    assert plan.made['forward', 8].omp_threads == 8  # made for 8, run made for one
    assert plan.primitive('forward').omp_threads == 1
    assert plan.primitive('backward_data').omp_threads == 1
    blas_threads.blas.release()


def test_on_sixteen_cores_a_3x3_convolution_runs_its_chunks_on_four_pool_threads(
        onednn_on, monkeypatch):
    # The default pool on a large machine: a kernel whose oneDNN call keeps one thread (its
    # bits would follow the count) still uses four cores, one chunk of the batch on each.
    monkeypatch.delenv('MINIDL_NUM_THREADS', raising=False)
    monkeypatch.setattr(minidl.config, 'num_threads', None)
    monkeypatch.setattr(threads, '_usable_cpus', lambda: 16)
    monkeypatch.setattr(threads, 'ranks_on_host', 1)
    ran_on, execute = set(), primitive.Primitive.execute

    def spy(self, arrays):
        ran_on.add((threading.current_thread().name, self.omp_threads))
        return execute(self, arrays)

    monkeypatch.setattr(primitive.Primitive, 'execute', spy)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 32, 32, 16)).astype(np.float32)
    kernel = rng.standard_normal((3, 3, 16, 16)).astype(np.float32)
    conv = Conv2DKernel((1, 1), ((1, 1), (1, 1)), (1, 1), False)
    y = conv.forward(x, kernel)
    assert threads.num_threads() == 4 and primitive.call_threads() == 4
    assert len(ran_on) == 4 and {count for _, count in ran_on} == {1}, ran_on
    monkeypatch.setattr(minidl.config, 'num_threads', 1)  # the truth: one pool thread
    assert np.array_equal(y, Conv2DKernel((1, 1), ((1, 1), (1, 1)), (1, 1), False).forward(
        x, kernel))
    blas_threads.blas.release()


# (kind, x shape, window, stride, pad, channels_first). The first three changed their input
# gradient's bits before the guard (on 2; 4; 2 threads): overlapping windows on NHWC data.
POOL_CASES = [
    ('max', (3, 7, 7, 64), 3, 2, 1, False),
    ('average', (2, 16, 16, 64), 3, 1, 0, False),
    ('max', (2, 16, 16, 64), 2, 1, 0, False),
    ('max', (2, 12, 12, 64), 2, 2, 0, False),  # windows that do not overlap
    ('average', (2, 12, 12, 16), 3, 2, 1, True),
]


@pytest.mark.parametrize('case', POOL_CASES, ids=str)
def test_pooling_gives_the_same_bits_on_any_thread_count(case, onednn_on, monkeypatch):
    kind, x_shape, window, stride, pad, channels_first = case
    x = np.random.default_rng(sum(x_shape)).standard_normal(x_shape).astype(np.float32)

    def run():
        pool = Pool2DKernel(kind, (window, window), (stride, stride), ((pad, pad), (pad, pad)),
                            channels_first)
        y = pool.forward(x)
        return [y, pool.backward(np.cos(np.arange(y.size, dtype=np.float32)).reshape(y.shape))]

    _assert_same_bits(_on_counts(monkeypatch, run), ['y', 'x grad'])
