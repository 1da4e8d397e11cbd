"""local_conv: gradient checks, and forward/backward against a numpy loop over positions."""

import itertools

import numpy as np
import pytest

from minidl.functions.local import LocalConv, local_conv
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(LocalConv, lambda x, k, b: local_conv(x, k, b, kernel_size=3, strides=2),
             [random(2, 7, 3), random(3, 9, 2, seed=1), random(3, 2, seed=2)], name='1d'),
    GradCase(LocalConv, lambda x, k, b: local_conv(x, k, b, (2, 3), (1, 2)),
             [random(2, 4, 5, 2), random(6, 12, 3, seed=1), random(3, 2, 3, seed=2)],
             name='2d'),
    GradCase(LocalConv, lambda x, k: local_conv(x, k, kernel_size=2,
                                                data_format='channels_first'),
             [random(2, 3, 3, 4), random(6, 12, 2, seed=1)], name='2d-channels_first'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def _loop_reference(x, kernel, bias, window, strides, channels_first):
    """Keras 2.2.4's definition, position by position: each window flattened
    as (k..., C) (channels last) or (C, k...) (channels first) times its own matrix."""
    if channels_first:
        x = np.moveaxis(x, 1, -1)
    out_size = [(size - w) // s + 1 for size, w, s in zip(x.shape[1:-1], window, strides)]
    y = np.zeros((x.shape[0], *out_size, kernel.shape[-1]))
    for position, index in enumerate(itertools.product(*map(range, out_size))):
        cells = tuple(slice(i * s, i * s + w) for i, s, w in zip(index, strides, window))
        patch = x[(slice(None), *cells)]
        if channels_first:
            patch = np.moveaxis(patch, -1, 1)
        y[(slice(None), *index)] = patch.reshape(x.shape[0], -1) @ kernel[position]
        if bias is not None:
            y[(slice(None), *index)] += bias[index]
    return np.moveaxis(y, -1, 1) if channels_first else y


@pytest.mark.parametrize('shape,window,strides,data_format', [
    ((2, 9, 3), (3,), (1,), 'channels_last'),
    ((2, 10, 2), (4,), (3,), 'channels_last'),
    ((2, 6, 7, 3), (3, 2), (1, 2), 'channels_last'),
    ((2, 3, 6, 7), (2, 3), (2, 1), 'channels_first'),
])
def test_local_conv_matches_loop(shape, window, strides, data_format):
    rng = np.random.default_rng(0)
    channels_first = data_format == 'channels_first'
    channels = shape[1] if channels_first else shape[-1]
    sizes = shape[2:] if channels_first else shape[1:-1]
    out_size = tuple((size - w) // s + 1 for size, w, s in zip(sizes, window, strides))
    x = rng.standard_normal(shape)
    kernel = rng.standard_normal((int(np.prod(out_size)), int(np.prod(window)) * channels, 4))
    bias = rng.standard_normal((*out_size, 4))
    y = local_conv(x, kernel, bias, window, strides, data_format).numpy()
    np.testing.assert_allclose(
        y, _loop_reference(x, kernel, bias, window, strides, channels_first), rtol=1e-12)


def test_gradients_match_the_loop_reference_gradients():
    # The gradient of sum(y * g) with respect to the kernel of position p is
    # patch_p.T @ g_p: compare against the loop's patches.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 6, 2))
    kernel = Tensor(rng.standard_normal((4 * 2, 2 * 3 * 2, 3)), requires_grad=True)
    y = local_conv(x, kernel, kernel_size=(2, 3), strides=(1, 2))
    grad = rng.standard_normal(y.shape)
    y.backward(grad)
    for position, (i, j) in enumerate(itertools.product(range(4), range(2))):
        patch = x[:, i:i + 2, 2 * j:2 * j + 3].reshape(3, -1)
        np.testing.assert_allclose(kernel.grad.numpy()[position], patch.T @ grad[:, i, j],
                                   rtol=1e-5, atol=1e-5)


def test_float32_stays_float32():
    rng = np.random.default_rng(2)
    x = Tensor(rng.standard_normal((2, 5, 3)).astype(np.float32), requires_grad=True)
    kernel = Tensor(rng.standard_normal((3, 9, 2)).astype(np.float32), requires_grad=True)
    y = local_conv(x, kernel, kernel_size=3)
    y.backward(np.ones(y.shape, dtype=np.float32))
    assert y.dtype == x.grad.dtype == kernel.grad.dtype == np.float32


@pytest.mark.parametrize('call, message', [
    (lambda: local_conv(np.zeros((1, 5, 2)), np.zeros((3, 5, 1)), kernel_size=3), 'kernel must'),
    (lambda: local_conv(np.zeros((1, 2, 2)), np.zeros((1, 6, 1)), kernel_size=3), 'not fit'),
    (lambda: local_conv(np.zeros((1, 5, 2)), np.zeros((3, 6, 1)), np.zeros(1), 3), 'bias'),
    (lambda: local_conv(np.zeros((1, 5, 5, 2)), np.zeros((9, 18, 1)), kernel_size=(3,)),
     'one entry per spatial axis'),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
