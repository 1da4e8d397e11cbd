"""Pooling: gradient checks, windowed pools against PyTorch, global pools by hand."""

import math

import numpy as np
import pytest

from minidl.functions.pooling import (
    AvgPool2D, GlobalAvgPool2D, GlobalMaxPool2D, MaxPool2D, avg_pool2d, global_avg_pool2d,
    global_max_pool2d, max_pool2d)
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(MaxPool2D, lambda x: max_pool2d(x, 3, 2, padding='same'),
             [random(2, 6, 5, 2)], name='overlapping-same'),
    GradCase(MaxPool2D, lambda x: max_pool2d(x, 2, data_format='channels_first'),
             [random(2, 2, 4, 6)], name='channels_first'),
    GradCase(AvgPool2D, lambda x: avg_pool2d(x, 3, 2, padding='same'),
             [random(2, 6, 5, 2)], name='overlapping-same'),
    GradCase(AvgPool2D, lambda x: avg_pool2d(x, (2, 3), 1, data_format='channels_first'),
             [random(2, 2, 4, 5)], name='channels_first'),
    GradCase(GlobalAvgPool2D, lambda x: global_avg_pool2d(x), [random(2, 3, 4, 3)]),
    GradCase(GlobalMaxPool2D, lambda x: global_max_pool2d(x, 'channels_first', keepdims=True),
             [random(2, 3, 4, 3)]),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _same_pads(size, window, stride):
    total = max((math.ceil(size / stride) - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def _torch_pool(torch, kind, x, window, strides, pads):
    """Reference pooling of NCHW ``x`` with explicit ((top, bottom), (left, right)) pads."""
    functional = torch.nn.functional
    (top, bottom), (left, right) = pads
    sides = (left, right, top, bottom)
    if kind == 'max':
        return functional.max_pool2d(functional.pad(x, sides, value=-math.inf), window, strides)
    # Average over the cells inside the input: window sums of x over window sums of ones.
    total = functional.avg_pool2d(functional.pad(x, sides), window, strides)
    count = functional.avg_pool2d(functional.pad(torch.ones_like(x), sides), window, strides)
    return total / count


POOL_CASES = [
    # (window, strides, padding, height, width)
    (2, None, 'valid', 6, 8),
    (2, None, 'valid', 7, 9),  # windows tile the input but for its last row and column
    ((2, 3), None, 'valid', 4, 9),
    (2, None, 'same', 5, 7),
    (3, 2, 'valid', 9, 8),
    (3, 2, 'same', 9, 8),
    (3, 1, 'same', 5, 6),
    ((2, 3), (1, 2), 'valid', 5, 7),
    (3, 2, 1, 7, 8),
    (3, 3, ((2, 0), (1, 2)), 7, 7),
]


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
@pytest.mark.parametrize('window,strides,padding,height,width', POOL_CASES)
@pytest.mark.parametrize('kind', ['max', 'avg'])
def test_pool_matches_torch(torch, kind, window, strides, padding, height, width, data_format):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, height, width)).astype(np.float32)
    pair = (window, window) if isinstance(window, int) else window
    stride_pair = pair if strides is None else (
        (strides, strides) if isinstance(strides, int) else strides)
    if padding == 'same':
        pads = tuple(_same_pads(*args) for args in zip((height, width), pair, stride_pair))
    elif padding == 'valid':
        pads = ((0, 0), (0, 0))
    elif isinstance(padding, int):
        pads = ((padding, padding),) * 2
    else:
        pads = padding
    channels_last = data_format == 'channels_last'
    layout = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1))) if channels_last \
        else (lambda a: a)
    pool = max_pool2d if kind == 'max' else avg_pool2d
    x_m = Tensor(layout(x), requires_grad=True)
    y_m = pool(x_m, window, strides, padding, data_format)
    grad = rng.standard_normal(y_m.shape).astype(np.float32)
    y_m.backward(grad)

    x_t = torch.tensor(x, requires_grad=True)
    y_t = _torch_pool(torch, kind, x_t, pair, stride_pair, pads)
    grad_t = grad.transpose(0, 3, 1, 2).copy() if channels_last else grad
    y_t.backward(torch.tensor(grad_t))
    np.testing.assert_allclose(y_m.numpy(), layout(y_t.detach().numpy()), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x_m.grad.numpy(), layout(x_t.grad.numpy()), rtol=1e-5,
                               atol=1e-6)


def test_max_pool_ties_go_to_the_first_maximum():
    x = Tensor(np.ones((1, 4, 4, 1), dtype=np.float32), requires_grad=True)
    y = max_pool2d(x, 3, 1)
    y.backward(np.ones(y.shape, dtype=np.float32))
    # Each 3x3 window's first cell (its top-left corner) takes the gradient.
    expected = np.zeros((4, 4), dtype=np.float32)
    expected[:2, :2] = 1
    np.testing.assert_array_equal(x.grad.numpy()[0, :, :, 0], expected)


def test_max_pool_without_grad_and_padding_never_wins():
    x = -np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    y = max_pool2d(x, 2, 2, padding='same')  # pads one row and column after
    np.testing.assert_array_equal(y.numpy()[0, :, :, 0], [[-1, -3], [-7, -9]])
    assert not y.requires_grad


def test_avg_pool_same_excludes_padding_from_the_count():
    x = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    y = avg_pool2d(x, 2, 2, padding='same')
    np.testing.assert_allclose(y.numpy()[0, :, :, 0], [[2, 3.5], [6.5, 8]])


@pytest.mark.parametrize('data_format,keepdims', [
    ('channels_last', False), ('channels_last', True),
    ('channels_first', False), ('channels_first', True)])
def test_global_pools_by_hand(data_format, keepdims):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    axes = (2, 3) if data_format == 'channels_first' else (1, 2)
    for pool, reduce in ((global_avg_pool2d, np.mean), (global_max_pool2d, np.max)):
        x_m = Tensor(x, requires_grad=True)
        y = pool(x_m, data_format, keepdims)
        expected = reduce(x, axis=axes, keepdims=keepdims)
        np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
        grad = rng.standard_normal(y.shape).astype(np.float32)
        y.backward(grad)
        grad_full = grad if keepdims else np.expand_dims(grad, axes)
        if pool is global_avg_pool2d:
            expected_grad = np.broadcast_to(grad_full / (x.shape[axes[0]] * x.shape[axes[1]]),
                                            x.shape)
        else:
            expected_grad = np.where(x == expected if keepdims else
                                     x == np.expand_dims(expected, axes), grad_full, 0)
        np.testing.assert_allclose(x_m.grad.numpy(), expected_grad, rtol=1e-6)


def test_global_max_pool_ties_go_to_the_first_position():
    x = Tensor(np.zeros((1, 2, 2, 3), dtype=np.float32), requires_grad=True)
    global_max_pool2d(x).backward(np.ones((1, 3), dtype=np.float32))
    expected = np.zeros((1, 2, 2, 3), dtype=np.float32)
    expected[0, 0, 0] = 1
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.parametrize('call,message', [
    (lambda: max_pool2d(np.zeros((1, 4, 4)), 2), '4-D'),
    (lambda: max_pool2d(np.zeros((1, 2, 2, 1)), 3), 'does not fit'),
    (lambda: avg_pool2d(np.zeros((1, 4, 4, 1)), 2, padding=2), 'smaller than pool_size'),
    (lambda: avg_pool2d(np.zeros((1, 4, 4, 1)), 2, padding='full'), 'padding'),
    (lambda: max_pool2d(np.zeros((1, 4, 4, 1)), 0), 'pool_size'),
    (lambda: max_pool2d(np.zeros((1, 4, 4, 1)), 2, data_format='NHWC'), 'data_format'),
    (lambda: global_avg_pool2d(np.zeros((4, 4, 1))), '4-D'),
])
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
