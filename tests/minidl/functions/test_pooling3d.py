"""max_pool3d and avg_pool3d: gradient checks, and forward/backward against PyTorch."""

import math

import numpy as np
import pytest

from minidl.functions.pooling3d import AvgPool3D, MaxPool3D, avg_pool3d, max_pool3d
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(MaxPool3D, lambda x: max_pool3d(x, (2, 2, 3), strides=(1, 2, 2), padding='same'),
             [random(2, 3, 4, 5, 2)], name='same'),
    GradCase(MaxPool3D, lambda x: max_pool3d(x, 2, data_format='channels_first'),
             [random(1, 2, 4, 4, 5)], name='channels_first-tiled'),
    GradCase(AvgPool3D, lambda x: avg_pool3d(x, (3, 2, 2), strides=2, padding='same'),
             [random(2, 4, 3, 5, 2)], name='same'),
    GradCase(AvgPool3D, lambda x: avg_pool3d(x, 2, strides=1, data_format='channels_first'),
             [random(1, 2, 3, 3, 4)], name='channels_first-valid'),
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
    """PyTorch's pool over an explicitly padded input.

    Max pads with -inf (never wins). Average pools the sum of a zero-padded
    input and divides by the pooled count of real cells (Keras/TensorFlow's
    'same' average leaves padding out of the count).
    """
    functional = torch.nn.functional
    flat = [p for pair in reversed(pads) for p in pair]
    if kind == 'max':
        return functional.max_pool3d(functional.pad(x, flat, value=-math.inf), window, strides)
    volume = math.prod(window)
    total = functional.avg_pool3d(functional.pad(x, flat), window, strides) * volume
    ones = functional.pad(torch.ones_like(x[:1, :1]), flat)
    count = functional.avg_pool3d(ones, window, strides) * volume
    return total / count


@pytest.mark.parametrize('kind', ['max', 'avg'])
@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
@pytest.mark.parametrize('window,strides,padding', [
    ((2, 2, 2), None, 'valid'),
    ((3, 2, 2), (2, 1, 2), 'same'),
    ((2, 3, 3), (1, 2, 2), 'same'),
    ((3, 3, 2), (1, 1, 1), 'valid'),
])
def test_pool3d_matches_torch(torch, kind, data_format, window, strides, padding):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)  # (N, C, D, H, W); no ties
    step = window if strides is None else strides
    pads = [_same_pads(*args) for args in zip(x.shape[2:], window, step)] \
        if padding == 'same' else [(0, 0)] * 3
    xt = torch.tensor(x, requires_grad=True)
    yt = _torch_pool(torch, kind, xt, window, step, pads)
    grad = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(grad))
    expected = [yt.detach().numpy(), xt.grad.numpy()]
    last = (0, 2, 3, 4, 1)
    if data_format == 'channels_last':
        x, grad = x.transpose(last), grad.transpose(last)
        expected = [e.transpose(last) for e in expected]
    x = Tensor(np.ascontiguousarray(x), requires_grad=True)
    pool = max_pool3d if kind == 'max' else avg_pool3d
    y = pool(x, window, strides, padding, data_format)
    y.backward(np.ascontiguousarray(grad))
    for actual, wanted in zip([y.numpy(), x.grad.numpy()], expected):
        np.testing.assert_allclose(actual, wanted, rtol=1e-5, atol=1e-5)


def test_average_counts_only_real_cells():
    # A 2x2x2 'same' window at the far corner of a 3x3x3 input covers one real cell.
    x = np.arange(27, dtype=np.float64).reshape(1, 3, 3, 3, 1)
    y = avg_pool3d(x, 2, padding='same').numpy()
    assert y.shape == (1, 2, 2, 2, 1)
    assert y[0, 1, 1, 1, 0] == 26.0
    assert y[0, 0, 0, 0, 0] == np.mean(x[0, :2, :2, :2])


@pytest.mark.parametrize('call, message', [
    (lambda: max_pool3d(np.zeros((1, 4, 4, 2)), 2), '5-D input'),
    (lambda: avg_pool3d(np.zeros((1, 1, 4, 4, 2)), 2), 'does not fit'),
    (lambda: max_pool3d(np.zeros((1, 4, 4, 4, 2)), (2, 2)), 'pool_size'),
    (lambda: max_pool3d(np.zeros((1, 4, 4, 4, 2)), 2, data_format='nhwc'), 'data_format'),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
