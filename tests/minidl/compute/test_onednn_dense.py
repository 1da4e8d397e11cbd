"""oneDNN's matmul behind dense: against numpy in float64 and the reference code, proof that
it ran, and bitwise determinism (run to run, any number of oneDNN threads, 1 or 2 pool
threads, training)."""

import collections

import numpy as np
import pytest

import minidl
from minidl import config, layers, models, optimizers
from minidl.compute import pool, threads, vendor
from minidl.compute.onednn import matmul, primitive
from minidl.compute.onednn.dense import DenseKernel
from minidl.functions.dense import Dense, dense
from minidl.tensor import Tensor

from tests.minidl.compute.onednn_support import (
    assert_close, assert_moved_far, assert_training_repeats_and_matches_the_reference,
    assert_same_bits_on_one_and_two_threads, require_onednn, vendor_kernels_seen)

require_onednn('its matmul')

# float32 tolerance relative to the largest magnitude of the float64 truth. The operands are
# unit normals; a value sums at most 2500 products (the kernel gradient of the largest batch),
# whose float32 rounding grows like sqrt(terms) * 2**-24 of the terms' size, against a largest
# value of several sqrt(terms): ~1e-7 of it (2.4e-7 is seen, oneDNN and the reference alike).
# 3e-6 leaves ten times that, and is far below what a lost chunk, bias or mask gives.
TOLERANCE = 3e-6
# Weights after 6 SGD steps with momentum, oneDNN against the reference code (as for the
# convolutions): each step's rounding differences carry into the next.
STATE_TOLERANCE = 1e-5

NAMES = ['y', 'x grad', 'kernel grad', 'bias grad']


class Case:
    """One dense call: x (rows, features), a kernel, a bias or None, and the activation."""

    def __init__(self, name, rows, features, units, bias=True, activation=None,
                 transposed_x=False):
        self.name, self.activation, self.transposed_x = name, activation, transposed_x
        rng = np.random.default_rng(sum(map(ord, name)))
        self.x = rng.standard_normal((rows, features)).astype(np.float32)
        self.kernel = rng.standard_normal((features, units)).astype(np.float32)
        self.bias = rng.standard_normal(units).astype(np.float32) if bias else None
        self.grad = rng.standard_normal((rows, units)).astype(np.float32)

    def __str__(self):
        return self.name

    def run_minidl(self):
        """Output and gradients (x, kernel[, bias]), and the Dense's vendor kernel."""
        # A transposed x is read in place by oneDNN: give it one that lies column by column.
        data = np.asfortranarray(self.x) if self.transposed_x else self.x
        x, kernel = Tensor(data, requires_grad=True), Tensor(self.kernel, requires_grad=True)
        bias = None if self.bias is None else Tensor(self.bias, requires_grad=True)
        y = dense(x, kernel, bias, activation=self.activation)
        vendor_kernel = y.creator.vendor_kernel  # read before backward releases the Function
        y.backward(self.grad)
        arrays = [y, x.grad, kernel.grad] + ([] if bias is None else [bias.grad])
        return [a.numpy().copy() for a in arrays], vendor_kernel

    def run_float64(self):
        """The same in numpy float64, from the same float32 operands: the truth."""
        x, kernel = self.x.astype(np.float64), self.kernel.astype(np.float64)
        y = x @ kernel + (0 if self.bias is None else self.bias)
        grad = self.grad.astype(np.float64)
        if self.activation == 'relu':
            y = np.maximum(y, 0)
            grad = grad * (y > 0)
        arrays = [y, grad @ kernel.T, x.T @ grad]
        return arrays + ([] if self.bias is None else [grad.sum(axis=0)])


CASES = [
    Case('mlp-relu', 128, 784, 512, activation='relu'),
    Case('logits-no-activation', 128, 512, 10),
    Case('one-row-relu-nobias', 1, 7, 5, bias=False, activation='relu'),
    Case('one-unit', 9, 33, 1),
    Case('transposed-x-relu', 16, 40, 24, activation='relu', transposed_x=True),
    # A batch past matmul.SPLIT_DEPTH: the kernel gradient is summed in depth chunks.
    Case('large-batch-small-output', 2500, 6, 3, activation='relu'),
]


def _close(actual, expected, tolerance=TOLERANCE, name=''):
    assert_close(actual, expected, tolerance, name)


@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_float64(case, onednn_on):
    actual, vendor_kernel = case.run_minidl()
    assert isinstance(vendor_kernel, DenseKernel)
    expected = case.run_float64()
    assert len(actual) == len(expected)
    for name, a, e in zip(NAMES, actual, expected):
        assert a.dtype == np.float32, name
        _close(a, e, name=name)


@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_the_reference_code(case, onednn_on, monkeypatch):
    actual, _ = case.run_minidl()
    monkeypatch.setattr(config, 'use_onednn', 'never')
    expected, reference_kernel = case.run_minidl()
    assert reference_kernel is None
    for name, a, e in zip(NAMES, actual, expected):
        _close(a, e, name=name)


def test_the_onednn_path_really_runs_fused_with_fast_implementations(onednn_on, executed):
    _, vendor_kernel = CASES[0].run_minidl()
    assert isinstance(vendor_kernel, DenseKernel)
    assert len(executed) == 3  # forward (bias fused), input and kernel gradients
    for ran in executed:
        # oneDNN's reference kernels ('ref:...') are its slow fallback; which fast one it
        # picks (brgemm, gemm:jit, ...) depends on the CPU's instruction set.
        assert not ran.implementation.startswith('ref'), ran.implementation


@pytest.mark.parametrize('use_onednn', ['always', 'never'])
def test_relu_keeps_nan_as_numpy_and_torch_do(use_onednn, monkeypatch, executed):
    # oneDNN's ReLU post-op would make a NaN 0: a diverging model's NaN would vanish.
    monkeypatch.setattr(config, 'use_onednn', use_onednn)
    vendor.forget()
    x = np.array([[np.nan, 1.0, 0.5], [1.0, -2.0, 0.25], [np.inf, 0.0, 1.0]], np.float32)
    kernel = np.array([[1.0, -1.0], [0.5, 2.0], [-1.0, 0.0]], np.float32)
    bias = np.array([0.0, -0.5], np.float32)
    with minidl.no_grad():
        y = dense(Tensor(x), Tensor(kernel), Tensor(bias), activation='relu')
    vendor.forget()
    assert bool(executed) == (use_onednn == 'always')
    torch = pytest.importorskip('torch')
    expected = torch.relu(torch.from_numpy(x) @ torch.from_numpy(kernel)
                          + torch.from_numpy(bias)).numpy()
    np.testing.assert_array_equal(np.isnan(y.numpy()), np.isnan(expected))
    assert np.isnan(y.numpy()[0]).all()
    np.testing.assert_array_equal(y.numpy()[2], [np.inf, 0.0])  # inf, and -inf cut to 0
    finite = ~np.isnan(expected)
    np.testing.assert_allclose(y.numpy()[finite], expected[finite], rtol=1e-6)


def test_never_runs_no_onednn_primitive(monkeypatch, executed):
    monkeypatch.setattr(config, 'use_onednn', 'never')
    _, vendor_kernel = CASES[0].run_minidl()
    assert vendor_kernel is None and executed == []


def test_float64_keeps_the_reference_code(onednn_on):
    x = Tensor(np.ones((3, 4)), requires_grad=True, dtype=np.float64)
    y = dense(x, Tensor(np.ones((4, 2)), dtype=np.float64), activation='relu')
    assert y.dtype == np.float64 and y.creator.vendor_kernel is None


@pytest.mark.parametrize('case', [CASES[0], CASES[5]], ids=str)
def test_onednn_is_bitwise_repeatable(case, onednn_on):
    first, _ = case.run_minidl()
    again, _ = case.run_minidl()
    for name, a, b in zip(NAMES, first, again):
        assert np.array_equal(a, b), name


@pytest.mark.parametrize('case', [CASES[0], CASES[4], CASES[5]], ids=str)
def test_any_number_of_onednn_threads_gives_the_same_bits(case, onednn_on, monkeypatch):
    # Each count gets primitives of its own, as in a process that only ever had that count.
    # The large batch's kernel gradient is the one product oneDNN would split among threads.
    results = []
    for count in (1, 2, 3, 4):
        monkeypatch.setattr(matmul, 'product_threads', lambda work, count=count: count)
        monkeypatch.setattr(primitive, '_cache', collections.OrderedDict())
        results.append(case.run_minidl()[0])
    for count, arrays in zip((2, 3, 4), results[1:]):
        for name, a, b in zip(NAMES, results[0], arrays):
            assert np.array_equal(a, b), f'{name} on {count} threads'


def test_a_large_product_runs_on_the_process_share_of_the_cores(two_threads):
    assert matmul.product_threads(matmul.MIN_THREADED_WORK) == threads.cpu_share()


def test_a_small_product_or_one_inside_a_pool_task_runs_on_one_thread(two_threads):
    assert matmul.product_threads(matmul.MIN_THREADED_WORK - 1) == 1
    large = lambda: matmul.product_threads(matmul.MIN_THREADED_WORK)
    assert pool.run_tasks([large, large]) == [1, 1]


@pytest.mark.parametrize('case', [CASES[0], CASES[5]], ids=str)
def test_one_and_two_pool_threads_give_the_same_bits(case, onednn_on, monkeypatch):
    assert_same_bits_on_one_and_two_threads(
        monkeypatch, True, lambda: case.run_minidl()[0], NAMES)


def _train(monkeypatch, use_onednn):
    monkeypatch.setattr(config, 'use_onednn', use_onednn)
    vendor.forget()
    minidl.set_seed(7)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 20)).astype(np.float32)
    y = rng.integers(0, 3, 12)
    model = models.Sequential([
        layers.Dense(16, activation='relu', input_shape=(20,)),
        layers.Dense(8, activation='relu'), layers.Dense(3)])
    model.compile(optimizers.SGD(0.05, momentum=0.9), 'sparse_categorical_crossentropy')
    initial = model.get_weights()
    with pytest.MonkeyPatch.context() as patch:
        seen = vendor_kernels_seen(patch, Dense)
        model.fit(x, y, batch_size=5, epochs=2, verbose=0, shuffle=False)
    assert seen and all(isinstance(k, DenseKernel) == (use_onednn == 'always') for k in seen)
    weights = model.get_weights()
    assert_moved_far(initial, weights, STATE_TOLERANCE)
    return weights


def test_training_an_mlp_with_onednn_repeats_and_matches_the_reference(monkeypatch):
    assert_training_repeats_and_matches_the_reference(
        lambda use_onednn: _train(monkeypatch, use_onednn), STATE_TOLERANCE, 6)
