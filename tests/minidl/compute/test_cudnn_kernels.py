"""cuDNN kernels against the plain-CuPy Functions (the fallback) and against the
CPU, run five times for identical bits; chosen algorithms are deterministic.

Needs a GPU with cuDNN; skips elsewhere. The kernels are called directly, so
these tests hold whatever the Functions dispatch to.
"""

import contextlib

import numpy as np
import pytest

from minidl import config
from minidl.compute.cuda.cudnn import constants, kernels
from minidl.functions.conv import Conv2D
from minidl.functions.gru import GRUResetAfter
from minidl.functions.lstm import LSTM
from minidl.functions.normalization import BatchNorm, BatchNormInference
from minidl.functions.pooling import AvgPool2D, MaxPool2D
from minidl.tensor import Tensor

from tests.minidl.compute.gpu_support import require_cudnn


@pytest.fixture
def cupy(monkeypatch):
    module = require_cudnn()
    monkeypatch.setattr(config, 'use_cudnn', 'always')
    return module


@contextlib.contextmanager
def reference_code():
    """The Functions' plain CuPy code inside (cuDNN off), whatever the test's switch."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(config, 'use_cudnn', 'never')
        yield


def fallback(function, arrays, grads, cupy):
    """Forward and input gradients of the plain Function on CuPy arrays (cuDNN off)."""
    with reference_code():
        inputs = [Tensor.wrap(a).requires_grad_() for a in arrays]
        outputs = function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        total = sum(((y * g).sum() for y, g in zip(outputs, grads)), start=Tensor.wrap(
            cupy.zeros((), arrays[0].dtype)))
        total.backward()
        return [y.data for y in outputs], [x.grad.data for x in inputs]


def accelerated_run(kernel, arrays, grads, **backward_options):
    outputs = kernel.forward(*arrays)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    needs = (True,) * len(arrays)
    if 'grad_finals' in backward_options:
        input_grads = kernel.backward(grads[0], *grads[1:], needs_input_grad=needs)
    elif backward_options.get('pool'):
        input_grads = (kernel.backward(grads[0]),)
    else:
        input_grads = kernel.backward(grads[0], needs)
    return list(outputs), list(input_grads)


def assert_matches_and_repeats(run, reference, cupy, rtol=1e-4, atol=1e-5):
    first = run()
    for got, want in zip(first[0] + first[1], reference[0] + reference[1]):
        np.testing.assert_allclose(cupy.asnumpy(got), cupy.asnumpy(want), rtol=rtol, atol=atol)
    for _ in range(4):
        again = run()
        for a, b in zip(first[0] + first[1], again[0] + again[1]):
            np.testing.assert_array_equal(cupy.asnumpy(a), cupy.asnumpy(b))


def normal(cupy, *shape, seed=0):
    return cupy.asarray(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


@pytest.mark.parametrize('channels_first', [False, True])
@pytest.mark.parametrize('strides, pads, dilations', [
    ((1, 1), ((1, 1), (1, 1)), (1, 1)), ((2, 2), ((0, 1), (0, 1)), (1, 1)),
    ((1, 1), ((2, 2), (0, 0)), (2, 2))])
def test_conv2d_matches_the_fallback(cupy, channels_first, strides, pads, dilations):
    x = normal(cupy, 4, 3, 9, 9) if channels_first else normal(cupy, 4, 9, 9, 3)
    kernel, bias = normal(cupy, 3, 3, 3, 8, seed=1), normal(cupy, 8, seed=2)
    params = dict(strides=strides, pads=pads, dilations=dilations, channels_first=channels_first)
    y = Conv2D(**params)(Tensor.wrap(x), Tensor.wrap(kernel), Tensor.wrap(bias)).data
    grad = normal(cupy, *y.shape, seed=3)
    reference = fallback(Conv2D(**params), [x, kernel, bias], [grad], cupy)
    assert_matches_and_repeats(lambda: accelerated_run(
        kernels.conv2d(x.dtype, **params), [x, kernel, bias], [grad]), reference, cupy)


def test_conv2d_algorithms_are_deterministic(cupy):
    x, kernel = normal(cupy, 8, 32, 32, 16), normal(cupy, 3, 3, 16, 32, seed=1)
    conv = kernels.conv2d(x.dtype, strides=(1, 1), pads=((1, 1), (1, 1)), dilations=(1, 1),
                          channels_first=False)
    y = conv.forward(x, kernel)
    conv.backward(cupy.ones_like(y), (True, True))
    chosen = conv.plan.algorithms
    assert set(chosen) == {'forward', 'backward_data', 'backward_filter'}
    assert all(marked for _, marked, _ in chosen.values())
    assert chosen['backward_data'][0] not in constants.BWD_DATA_NON_DETERMINISTIC
    assert chosen['backward_filter'][0] not in constants.BWD_FILTER_NON_DETERMINISTIC


@pytest.mark.parametrize('kind, function', [('max', MaxPool2D), ('average', AvgPool2D)])
@pytest.mark.parametrize('channels_first', [False, True])
def test_pooling_matches_the_fallback(cupy, kind, function, channels_first):
    x = normal(cupy, 2, 4, 9, 9)  # continuous values: no ties between window cells
    params = dict(window=(3, 3), strides=(2, 2), pads=((1, 1), (1, 1)),
                  channels_first=channels_first)
    y = function(**params)(Tensor.wrap(x)).data
    grad = normal(cupy, *y.shape, seed=1)
    reference = fallback(function(**params), [x], [grad], cupy)
    assert_matches_and_repeats(lambda: accelerated_run(
        kernels.pool2d(x.dtype, kind, **params), [x], [grad], pool=True), reference, cupy)


@pytest.mark.parametrize('shape, axis', [((16, 10), -1), ((4, 6, 6, 5), -1), ((4, 5, 6, 6), 1),
                                         ((64, 32, 32, 16), -1)])
def test_batch_norm_training_matches_the_fallback(cupy, shape, axis):
    x = normal(cupy, *shape)
    channels = shape[axis]
    gamma, beta = normal(cupy, channels, seed=1), normal(cupy, channels, seed=2)
    grad = normal(cupy, *shape, seed=3)
    reference = fallback(BatchNorm(axis, 1e-3), [x, gamma, beta], [grad], cupy)
    kernel = kernels.batch_norm(x.dtype, 'training', shape, axis, epsilon=1e-3)
    assert_matches_and_repeats(lambda: accelerated_run(kernel, [x, gamma, beta], [grad]),
                               reference, cupy)
    plain = BatchNorm(axis, 1e-3)
    with reference_code():
        plain(Tensor.wrap(x), Tensor.wrap(gamma), Tensor.wrap(beta))
    np.testing.assert_allclose(cupy.asnumpy(kernel.variance), cupy.asnumpy(plain.variance),
                               rtol=1e-4, atol=1e-6)


# (64, 32, 32, 16): ResNet-20's first batch norm, whose 65,536 rows cuDNN refused as one N.
@pytest.mark.parametrize('shape', [(4, 6, 6, 5), (64, 32, 32, 16)])
def test_batch_norm_inference_matches_the_fallback(cupy, shape):
    x = normal(cupy, *shape)
    channels = shape[-1]
    params = [normal(cupy, channels, seed=s) for s in (1, 2, 3)] + [
        cupy.abs(normal(cupy, channels, seed=4))]
    with reference_code():
        want = BatchNormInference(-1, 1e-3)(*(Tensor.wrap(a) for a in [x] + params)).data
    got = kernels.batch_norm(x.dtype, 'inference', x.shape, -1, epsilon=1e-3).forward(x, *params)
    np.testing.assert_allclose(cupy.asnumpy(got), cupy.asnumpy(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('cell, function, gates', [('lstm', LSTM, 4), ('gru', GRUResetAfter, 3)])
@pytest.mark.parametrize('reverse', [False, True])
@pytest.mark.parametrize('has_state', [False, True])
def test_rnn_matches_the_fallback(cupy, cell, function, gates, reverse, has_state):
    batch, steps, features, units = 3, 7, 5, 4
    x = normal(cupy, batch, steps, features)
    kernel = normal(cupy, features, gates * units, seed=1) * 0.5
    recurrent = normal(cupy, units, gates * units, seed=2) * 0.5
    bias = normal(cupy, gates * units, seed=3) if cell == 'lstm' else normal(
        cupy, 2, gates * units, seed=3)
    states = [normal(cupy, batch, units, seed=4 + i) for i in range(2 if cell == 'lstm' else 1)]
    arrays = [x, kernel, recurrent, bias] + (states if has_state else [])
    outputs = 3 if cell == 'lstm' else 2
    grads = [normal(cupy, batch, steps, units, seed=9)] + [
        normal(cupy, batch, units, seed=10 + i) for i in range(outputs - 1)]
    reference = fallback(function((reverse,), True, has_state), arrays, grads, cupy)
    assert_matches_and_repeats(lambda: accelerated_run(
        kernels.rnn(x.dtype, cell, reverse=reverse, has_bias=True, has_state=has_state,
                    training=True), arrays, grads, grad_finals=True), reference, cupy)



@pytest.mark.parametrize('reverse', [False, True])
@pytest.mark.parametrize('has_state', [False, True])
def test_a_padded_gru_runs_cudnn_and_matches_the_fallback(cupy, reverse, has_state):
    # Padding at the end of each sample (minidl.functions.rnn_ragged): cuDNN's kernel with
    # the gathers around it, against the plain CuPy loop's carried states and gradients.
    batch, steps, features, units = 3, 7, 5, 4
    mask = np.arange(steps)[None] < np.array([[7], [3], [1]])
    x = normal(cupy, batch, steps, features)
    arrays = [x, normal(cupy, features, 3 * units, seed=1) * 0.5,
              normal(cupy, units, 3 * units, seed=2) * 0.5, normal(cupy, 2, 3 * units, seed=3)]
    arrays += [normal(cupy, batch, units, seed=4)] if has_state else []
    grads = [normal(cupy, batch, steps, units, seed=9), normal(cupy, batch, units, seed=10)]
    reference = fallback(GRUResetAfter((reverse,), True, has_state, mask=mask), arrays, grads,
                         cupy)

    def run():
        function = GRUResetAfter((reverse,), True, has_state, mask=mask)
        inputs = [Tensor.wrap(a).requires_grad_() for a in arrays]
        outputs = function(*inputs)
        assert type(function.parts[0].vendor_kernel).__module__.startswith(
            'minidl.compute.cuda.cudnn.')
        total = sum((y * g).sum() for y, g in zip(outputs, grads))
        total.backward()
        return [y.data for y in outputs], [a.grad.data for a in inputs]

    assert_matches_and_repeats(run, reference, cupy)
