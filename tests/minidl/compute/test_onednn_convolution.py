"""oneDNN's convolution behind conv2d / conv1d: against PyTorch and the reference code,
proof that it ran, and bitwise determinism (run to run, 1 or 2 pool threads, training)."""

import math

import numpy as np
import pytest

import minidl
from minidl import config, layers, models, optimizers
from minidl.compute import vendor
from minidl.compute.onednn.convolution import Conv2DKernel
from minidl.functions.conv import Conv2D, conv1d, conv2d
from minidl.tensor import Tensor

from tests.minidl.compute.onednn_support import (
    assert_close, assert_moved_far, assert_training_repeats_and_matches_the_reference,
    assert_same_bits_on_one_and_two_threads, require_onednn, vendor_kernels_seen)

require_onednn('its convolution')


torch = pytest.importorskip('torch')

# float32 tolerance, the same for every comparison, relative to the largest magnitude of the
# reference result: |actual - expected| <= TOLERANCE * max|expected|. The operands are unit
# normals and each value is a float32 sum of at most ~150 products (the longest: a kernel
# gradient, batch * output positions), whose rounding error grows like sqrt(terms) * 2**-24
# times the terms' size: ~1e-7 of the largest value, and 3.2e-7 at most in these cases (oneDNN
# and the reference alike, against PyTorch in float64). 3e-6 leaves ten times that, and is far
# below what a wrong index, pad, stride or a lost chunk gives (an O(1e-2..1) relative error).
TOLERANCE = 3e-6
# Weights after 6 SGD steps with momentum, oneDNN against the reference code: each step's
# rounding differences (~1e-7) carry into the next; 3e-7 is seen, 1e-5 leaves thirty times that.
STATE_TOLERANCE = 1e-5

GRADIENT_NAMES = ['y', 'x grad', 'kernel grad', 'bias grad']


def _close(actual, expected, tolerance=TOLERANCE, name=''):
    assert_close(actual, expected, tolerance, name)


def _same_pads(size, window, stride, dilation):
    """TensorFlow's 'same': ceil(size / stride) outputs, the odd padded cell after."""
    total = max((math.ceil(size / stride) - 1) * stride + (window - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


class Case:
    """One convolution: x in minidl's layout, a Keras kernel, a bias or None, and the call."""

    def __init__(self, name, batch, channels, size, window, out, strides=1, padding='valid',
                 dilation=1, data_format='channels_last', bias=True):
        self.name, self.rank = name, len(size)
        self.strides = (strides,) * self.rank if isinstance(strides, int) else strides
        self.dilation = (dilation,) * self.rank if isinstance(dilation, int) else dilation
        self.window = (window,) * self.rank if isinstance(window, int) else window
        self.padding, self.data_format = padding, data_format
        rng = np.random.default_rng(sum(map(ord, name)))
        nc_shape = (batch, channels) + size
        self.x_ncs = rng.standard_normal(nc_shape).astype(np.float32)  # (N, C, *spatial)
        self.kernel = rng.standard_normal(self.window + (channels, out)).astype(np.float32)
        self.bias = rng.standard_normal(out).astype(np.float32) if bias else None
        if padding == 'valid':
            self.pads = [(0, 0)] * self.rank
        elif padding == 'same':
            self.pads = [_same_pads(*args) for args in zip(size, self.window, self.strides,
                                                           self.dilation)]
        else:  # 'causal', 1-D
            self.pads = [(self.dilation[0] * (self.window[0] - 1), 0)]
        self.grad_seed = rng.integers(1 << 30)

    def __str__(self):
        return self.name

    @property
    def channels_last(self):
        return self.data_format == 'channels_last'

    def to_minidl(self, array):
        """(N, C, *spatial) -> minidl's layout."""
        if self.channels_last:
            return np.ascontiguousarray(np.moveaxis(array, 1, -1))
        return array

    def run_minidl(self):
        """Output and gradients (x, kernel[, bias]) in minidl, and the Conv2Ds' vendor kernels."""
        x = Tensor(self.to_minidl(self.x_ncs), requires_grad=True)
        kernel = Tensor(self.kernel, requires_grad=True)
        bias = None if self.bias is None else Tensor(self.bias, requires_grad=True)
        function = conv2d if self.rank == 2 else conv1d
        y = function(x, kernel, bias, strides=self.strides if self.rank == 2 else self.strides[0],
                     padding=self.padding,
                     dilation_rate=self.dilation if self.rank == 2 else self.dilation[0],
                     data_format=self.data_format)
        vendor_kernel = y.creator.vendor_kernel  # read before backward releases the Function
        y.backward(self.output_grad(y.shape))
        arrays = [y, x.grad, kernel.grad] + ([] if bias is None else [bias.grad])
        return [a.numpy().copy() for a in arrays], vendor_kernel

    def output_grad(self, shape):
        return np.random.default_rng(self.grad_seed).standard_normal(shape).astype(np.float32)

    def run_torch(self):
        """The same in PyTorch, in float64 from the same float32 operands: the truth."""
        x = torch.tensor(self.x_ncs, dtype=torch.float64, requires_grad=True)
        # Keras (*window, in, out) -> PyTorch (out, in, *window)
        kernel = torch.tensor(np.moveaxis(self.kernel, (-1, -2), (0, 1)).copy(),
                              dtype=torch.float64, requires_grad=True)
        bias = None if self.bias is None else torch.tensor(self.bias, dtype=torch.float64,
                                                           requires_grad=True)
        flat_pads = [p for pair in reversed(self.pads) for p in pair]  # last axis first
        convolve = torch.nn.functional.conv2d if self.rank == 2 else torch.nn.functional.conv1d
        y = convolve(torch.nn.functional.pad(x, flat_pads), kernel, bias,
                     stride=self.strides, dilation=self.dilation)
        grad = self.output_grad(self.to_minidl(np.empty(y.shape, np.float32)).shape)
        grad_ncs = grad if not self.channels_last else np.moveaxis(grad, -1, 1)
        y.backward(torch.tensor(np.ascontiguousarray(grad_ncs), dtype=torch.float64))
        arrays = [self.to_minidl(y.detach().numpy()), self.to_minidl(x.grad.numpy()),
                  np.moveaxis(kernel.grad.numpy(), (0, 1), (-1, -2))]
        return arrays + ([] if bias is None else [bias.grad.numpy()])


CASES = [
    Case('2d-batch1-1channel-nonsquare-same', 1, 1, (7, 5), 3, 4, padding='same'),
    Case('2d-stride2-same-odd-pads-channels_first-nobias', 3, 2, (8, 6), (3, 2), 5, strides=2,
         padding='same', data_format='channels_first', bias=False),
    Case('2d-stride21-valid-nobias', 2, 3, (9, 7), 3, 4, strides=(2, 1), bias=False),
    Case('2d-dilated-same-channels_first-uneven-chunks', 5, 4, (10, 9), 3, 3, dilation=2,
         padding='same', data_format='channels_first'),
    Case('2d-1channel-stride12-dilation21-valid', 2, 1, (9, 6), (2, 3), 2, strides=(1, 2),
         dilation=(2, 1)),
    Case('2d-stride3-same-tall-kernel', 6, 3, (6, 11), (5, 1), 16, strides=3, padding='same'),
    Case('1d-batch1-1channel-stride2-same', 1, 1, (13,), 3, 2, strides=2, padding='same'),
    Case('1d-dilated-valid-channels_first-nobias', 3, 2, (10,), 4, 3, dilation=2,
         data_format='channels_first', bias=False),
    Case('1d-causal-dilated', 4, 3, (9,), 3, 5, dilation=2, padding='causal'),
]


@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_torch(case, onednn_on):
    actual, vendor_kernel = case.run_minidl()
    assert isinstance(vendor_kernel, Conv2DKernel)
    expected = case.run_torch()
    assert len(actual) == len(expected) == (3 if case.bias is None else 4)
    for name, a, e in zip(['y', 'x grad', 'kernel grad', 'bias grad'], actual, expected):
        assert a.dtype == np.float32, name
        _close(a, e)


@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_the_reference_code(case, onednn_on, monkeypatch):
    actual, vendor_kernel = case.run_minidl()
    assert isinstance(vendor_kernel, Conv2DKernel)
    monkeypatch.setattr(config, 'use_onednn', 'never')
    expected, reference_kernel = case.run_minidl()
    assert reference_kernel is None
    for a, e in zip(actual, expected):
        _close(a, e)


@pytest.mark.parametrize('case', [CASES[1], CASES[3], CASES[8]], ids=str)
def test_the_onednn_path_really_runs_with_fast_implementations(case, onednn_on, executed):
    _, vendor_kernel = case.run_minidl()
    assert isinstance(vendor_kernel, Conv2DKernel)
    sizes = {stop - start for start, stop in vendor_kernel.chunks}
    plans = [vendor_kernel._plan(size) for size in sizes]
    for plan in plans:  # every direction was made (keys: direction, thread count) ...
        assert {direction for direction, _ in plan.primitives} == {
            'forward', 'backward_data', 'backward_weights'}
    convolutions = [p for plan in plans for p in plan.primitives.values()]
    ran = {id(p) for p in executed}
    assert all(id(p) in ran for p in convolutions)  # ... and run
    for p in convolutions:
        assert not p.implementation.startswith('ref'), p.implementation


def test_never_runs_no_onednn_primitive(monkeypatch, executed):
    monkeypatch.setattr(config, 'use_onednn', 'never')
    _, vendor_kernel = CASES[3].run_minidl()
    assert vendor_kernel is None and executed == []


@pytest.mark.parametrize('case', [CASES[0], CASES[3], CASES[5], CASES[8]], ids=str)
def test_onednn_is_bitwise_repeatable(case, onednn_on):
    first, _ = case.run_minidl()
    for _ in range(2):
        again, _ = case.run_minidl()
        for a, b in zip(first, again):
            assert np.array_equal(a, b)




# Batches of 5 and 6: chunks of unequal size (2, 2, 1 / 2, 2, 2), spread over both threads.
@pytest.mark.parametrize('case', [CASES[3], CASES[5]], ids=str)
def test_one_and_two_pool_threads_give_the_same_bits(case, onednn_on, monkeypatch):
    assert_same_bits_on_one_and_two_threads(
        monkeypatch, False, lambda: case.run_minidl()[0], GRADIENT_NAMES)


# Primitives are made for a thread count; the weight gradient's always for one thread.
@pytest.mark.parametrize('case', [CASES[5]], ids=str)
def test_one_and_two_pool_threads_give_the_same_bits_with_primitives_made_for_each(
        case, onednn_on, monkeypatch):
    assert_same_bits_on_one_and_two_threads(
        monkeypatch, True, lambda: case.run_minidl()[0], GRADIENT_NAMES)


def _train(monkeypatch, use_onednn):
    monkeypatch.setattr(config, 'use_onednn', use_onednn)
    vendor.forget()
    minidl.set_seed(7)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 9, 7, 2)).astype(np.float32)
    y = rng.integers(0, 3, 12)
    model = models.Sequential([
        layers.Conv2D(4, 3, strides=2, padding='same', activation='relu', input_shape=(9, 7, 2)),
        layers.Conv2D(5, (2, 3), dilation_rate=(2, 1), activation='tanh'),
        layers.Flatten(), layers.Dense(3)])
    model.compile(optimizers.SGD(0.05, momentum=0.9), 'sparse_categorical_crossentropy')
    initial = model.get_weights()
    with pytest.MonkeyPatch.context() as patch:
        seen = vendor_kernels_seen(patch, Conv2D)
        model.fit(x, y, batch_size=5, epochs=2, verbose=0, shuffle=False)
    assert seen and all(isinstance(k, Conv2DKernel) == (use_onednn == 'always') for k in seen)
    weights = model.get_weights()
    assert_moved_far(initial, weights, STATE_TOLERANCE)
    return weights


def test_training_a_conv_model_with_onednn_repeats_and_matches_the_reference(monkeypatch):
    assert_training_repeats_and_matches_the_reference(
        lambda use_onednn: _train(monkeypatch, use_onednn), STATE_TOLERANCE, 6)


def test_a_weight_gradient_made_before_its_forward_keeps_its_bits(monkeypatch):
    # The weight gradient's primitive is made for one OpenMP thread and names the forward
    # as its hint; with one pool thread on two cores the forward is made for two. When
    # the forward was first made inside the weight gradient's making (a plan dropped from
    # the cache between forward and backward, or a chunk size the forward never ran), it
    # left the count at two: the weight gradient was made for two threads, ran on one,
    # and summed in another order than when its forward existed first.
    from minidl.compute import threads
    from minidl.compute.onednn import constants, memory
    from minidl.compute.onednn.convolution_plan import ConvolutionPlan
    monkeypatch.setattr(config, 'use_onednn', 'always')
    monkeypatch.setattr(config, 'num_threads', 1)
    monkeypatch.setattr(threads, 'cpu_share', lambda: 2)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((22, 28, 28, 1)).astype(np.float32)
    grad = rng.standard_normal((22, 28, 28, 6)).astype(np.float32)

    def weight_grads(forward_first):
        plan = ConvolutionPlan(x.shape, (5, 5, 1, 6), grad.shape, (1, 1), ((2, 2), (2, 2)),
                               (1, 1), False, True, False)
        if forward_first:  # (its kernel, jit, then runs the one made for one thread)
            plan.primitive('forward')
            assert plan.made['forward', 2].omp_threads == 2
        made = plan.primitive('backward_weights')
        assert made.omp_threads == 1 and ('forward', 2) in plan.made
        weights = memory.buffer(made.bytes(constants.DIFF_WEIGHTS)).view(np.float32)
        bias = np.empty(6, np.float32)
        made.execute({constants.SRC: x, constants.DIFF_DST: grad,
                      constants.DIFF_WEIGHTS: weights, constants.DIFF_BIAS: bias})
        return plan.weights_out(weights, (5, 5, 1, 6)), bias

    for name, a, b in zip(['kernel grad', 'bias grad'], weight_grads(True), weight_grads(False)):
        assert np.array_equal(a, b), name


@pytest.mark.parametrize('shapes', [((64, 28, 28, 1), (5, 5, 1, 6), 'same'),
                                    ((50, 17, 15, 3), (3, 3, 3, 24), 'valid')], ids=str)
@pytest.mark.parametrize('pool_threads', [1, 2])
def test_the_input_side_in_even_chunks_keeps_every_bit(shapes, pool_threads, monkeypatch):
    # With the real chunk sizes, LeNet's first convolution (W2 of the benchmarks) and a
    # batch of 50 are cut into 3 chunks, which the weight gradients' sums follow; forward
    # and input gradient run in 4. Every result must be the bits of running both sides in
    # the weight gradients' 3 chunks, and forward and input gradient those of the whole
    # batch in one call. With one pool thread each call runs on two OpenMP threads (the
    # process's share of two cores): then the weight gradient's primitives, of chunk sizes
    # the forward never ran, are made after their forward hints inside them (bce5b5b).
    from minidl.compute import threads
    from minidl.compute.onednn import convolution, primitive
    monkeypatch.setattr(config, 'use_onednn', 'always')
    monkeypatch.setattr(config, 'num_threads', pool_threads)
    monkeypatch.setattr(threads, 'cpu_share', lambda: 2)
    monkeypatch.setattr(primitive, '_cache', type(primitive._cache)())  # plans made here
    monkeypatch.setattr(primitive, 'MIN_CHUNK_WORK', primitive.MIN_CHUNK_WORK)
    x_shape, kernel_shape, padding = shapes
    rng = np.random.default_rng(4)
    x = rng.standard_normal(x_shape).astype(np.float32)
    kernel = rng.standard_normal(kernel_shape).astype(np.float32)
    bias = rng.standard_normal(kernel_shape[-1]).astype(np.float32)

    def run():
        primitive._cache.clear()  # each run makes its primitives in its own order
        tensors = [Tensor(a, requires_grad=True) for a in (x, kernel, bias)]
        y = conv2d(*tensors, padding=padding)
        used = y.creator.vendor_kernel
        y.backward(np.cos(np.arange(y.data.size, dtype=np.float32)).reshape(y.shape))
        return used, [y.data] + [t.grad.data for t in tensors]

    used, results = run()
    assert len(used.chunks) == 3 and len(used.data_chunks) == 4  # of unequal sizes for 50
    chunked = convolution.batch_chunks

    def as_weights(n, work, chunks=primitive.CHUNKS, even=False):  # both sides in one set
        return chunked(n, work, chunks)

    monkeypatch.setattr(convolution, 'batch_chunks', as_weights)
    same_chunks, expected = run()
    assert same_chunks.data_chunks == same_chunks.chunks == used.chunks
    for name, a, b in zip(GRADIENT_NAMES, results, expected):
        assert np.array_equal(a, b), name

    def whole(n, work, chunks=primitive.CHUNKS, even=False):
        return [(0, n)]

    monkeypatch.setattr(convolution, 'batch_chunks', whole)
    _, in_one_call = run()
    for name, a, b in zip(GRADIENT_NAMES[:2], results[:2], in_one_call[:2]):
        assert np.array_equal(a, b), name
