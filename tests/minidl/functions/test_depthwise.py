"""Depthwise and separable convolutions: gradient checks and PyTorch's grouped convolutions."""

import numpy as np
import pytest

from minidl.functions.depthwise import (
    DepthwiseConv2D, depthwise_conv2d, separable_conv1d, separable_conv2d)
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(DepthwiseConv2D, lambda x, k, b: depthwise_conv2d(x, k, b, strides=2,
                                                               padding='same'),
             [random(2, 5, 4, 3), random(3, 3, 3, 2, seed=1), random(6, seed=2)],
             name='same-stride2-multiplier2'),
    GradCase(DepthwiseConv2D, lambda x, k: depthwise_conv2d(
        x, k, padding=((2, 0), (1, 1)), dilation_rate=(1, 2), data_format='channels_first'),
        [random(2, 2, 4, 5), random(2, 3, 2, 1, seed=1)], name='channels_first-dilated'),
    GradCase(DepthwiseConv2D, lambda x, dk, pk, b: separable_conv1d(
        x, dk, pk, b, strides=2, padding='same'),
        [random(2, 7, 2), random(3, 2, 2, seed=1), random(1, 4, 3, seed=2), random(3, seed=3)],
        name='separable_conv1d'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


@pytest.fixture(params=['whole-batch', 'chunked'])
def chunking(request, monkeypatch):
    """Run a test as is, and again with every image in its own pass."""
    if request.param == 'chunked':
        monkeypatch.setattr(DepthwiseConv2D, 'CHUNK_BYTES', 1)


def _same_pads(size, window, stride, dilation):
    """TensorFlow's 'same': ceil(size / stride) outputs, the odd padded cell after."""
    extent = (window - 1) * dilation + 1
    total = max((-(-size // stride) - 1) * stride + extent - size, 0)
    return total // 2, total - total // 2


def _close(actual, expected):
    actual = actual.numpy() if isinstance(actual, Tensor) else np.asarray(actual)
    assert actual.shape == expected.shape
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * scale)


def _tensors(*arrays):
    return [Tensor(a, requires_grad=True) for a in arrays]


def _torch_depthwise(torch, x_t, kernel, sizes, strides, padding, dilation):
    """PyTorch's grouped convolution of NCHW ``x_t`` with a Keras depthwise kernel."""
    window = kernel.shape[:2]
    channels, multiplier = kernel.shape[2:]
    # Output channel c*multiplier + m is kernel[:, :, c, m]: (C*M, 1, kh, kw) in that order.
    weight = torch.tensor(kernel.reshape(*window, channels * multiplier).transpose(2, 0, 1)[
        :, None].copy(), requires_grad=True)
    if padding == 'same':
        (top, bottom), (left, right) = (_same_pads(*args) for args in zip(
            sizes, window, strides, dilation))
        x_t = torch.nn.functional.pad(x_t, (left, right, top, bottom))
    y = torch.nn.functional.conv2d(x_t, weight, stride=strides, dilation=dilation,
                                   groups=channels)
    return y, weight


def _weight_grad_to_keras(weight, window, channels, multiplier):
    return weight.grad.numpy()[:, 0].transpose(1, 2, 0).reshape(*window, channels, multiplier)


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
@pytest.mark.parametrize('window,strides,padding,dilation,multiplier', [
    ((3, 3), (1, 1), 'valid', (1, 1), 1),
    ((3, 3), (2, 2), 'same', (1, 1), 2),
    ((2, 3), (1, 2), 'same', (2, 1), 3),
    ((1, 1), (2, 2), 'valid', (1, 1), 1),
    ((3, 3), (1, 1), 'same', (2, 2), 2),
])
def test_depthwise_and_separable_match_torch(torch, chunking, window, strides, padding, dilation,
                                             multiplier, data_format):
    rng = np.random.default_rng(0)
    sizes, channels, filters = (7, 6), 3, 4
    x = rng.standard_normal((2, channels, *sizes)).astype(np.float32)
    depthwise = rng.standard_normal((*window, channels, multiplier)).astype(np.float32)
    pointwise = rng.standard_normal((1, 1, channels * multiplier, filters)).astype(np.float32)
    bias = rng.standard_normal(filters).astype(np.float32)
    to_minidl = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1))) \
        if data_format == 'channels_last' else (lambda a: a)

    x_m, depthwise_m, pointwise_m, bias_m = _tensors(to_minidl(x), depthwise, pointwise, bias)
    y_m = separable_conv2d(x_m, depthwise_m, pointwise_m, bias_m, strides=strides,
                           padding=padding, dilation_rate=dilation, data_format=data_format)
    grad = rng.standard_normal(y_m.shape).astype(np.float32)
    y_m.backward(grad)

    x_t = torch.tensor(x, requires_grad=True)
    middle, weight = _torch_depthwise(torch, x_t, depthwise, sizes, strides, padding, dilation)
    pointwise_t = torch.tensor(pointwise.transpose(3, 2, 0, 1).copy(), requires_grad=True)
    bias_t = torch.tensor(bias, requires_grad=True)
    y_t = torch.nn.functional.conv2d(middle, pointwise_t, bias_t)
    grad_t = torch.tensor(grad.transpose(0, 3, 1, 2).copy()) \
        if data_format == 'channels_last' else torch.tensor(grad)
    y_t.backward(grad_t)
    _close(y_m, to_minidl(y_t.detach().numpy()))
    _close(x_m.grad, to_minidl(x_t.grad.numpy()))
    _close(depthwise_m.grad, _weight_grad_to_keras(weight, window, channels, multiplier))
    _close(pointwise_m.grad, pointwise_t.grad.numpy().transpose(2, 3, 1, 0))
    _close(bias_m.grad, bias_t.grad.numpy())


def test_depthwise_alone_with_bias_matches_torch(torch, chunking):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 6, 5)).astype(np.float32)  # NCHW
    kernel = rng.standard_normal((3, 3, 4, 2)).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    x_m, kernel_m, bias_m = _tensors(x, kernel, bias)
    y_m = depthwise_conv2d(x_m, kernel_m, bias_m, strides=(2, 1), padding='same',
                           data_format='channels_first')
    assert y_m.dtype == np.float32
    grad = rng.standard_normal(y_m.shape).astype(np.float32)
    y_m.backward(grad)
    x_t = torch.tensor(x, requires_grad=True)
    y_t, weight = _torch_depthwise(torch, x_t, kernel, (6, 5), (2, 1), 'same', (1, 1))
    y_t = y_t + torch.tensor(bias)[:, None, None]
    y_t.backward(torch.tensor(grad))
    _close(y_m, y_t.detach().numpy())
    _close(x_m.grad, x_t.grad.numpy())
    _close(kernel_m.grad, _weight_grad_to_keras(weight, (3, 3), 4, 2))
    _close(bias_m.grad, grad.sum(axis=(0, 2, 3)))


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_separable_conv1d_matches_torch(torch, data_format):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 11)).astype(np.float32)  # (N, C, L)
    depthwise = rng.standard_normal((3, 3, 2)).astype(np.float32)
    pointwise = rng.standard_normal((1, 6, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    to_minidl = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 1))) \
        if data_format == 'channels_last' else (lambda a: a)
    x_m, depthwise_m, pointwise_m, bias_m = _tensors(to_minidl(x), depthwise, pointwise, bias)
    y_m = separable_conv1d(x_m, depthwise_m, pointwise_m, bias_m, strides=2, padding='same',
                           dilation_rate=1, data_format=data_format)
    grad = rng.standard_normal(y_m.shape).astype(np.float32)
    y_m.backward(grad)

    x_t = torch.tensor(x, requires_grad=True)
    weight = torch.tensor(depthwise.reshape(3, 6).T[:, None].copy(), requires_grad=True)
    pointwise_t = torch.tensor(pointwise[0].T[:, :, None].copy(), requires_grad=True)
    left, right = _same_pads(11, 3, 2, 1)
    middle = torch.nn.functional.conv1d(torch.nn.functional.pad(x_t, (left, right)), weight,
                                        stride=2, groups=3)
    y_t = torch.nn.functional.conv1d(middle, pointwise_t, torch.tensor(bias))
    grad_t = grad.transpose(0, 2, 1) if data_format == 'channels_last' else grad
    y_t.backward(torch.tensor(np.ascontiguousarray(grad_t)))
    _close(y_m, to_minidl(y_t.detach().numpy()))
    _close(x_m.grad, to_minidl(x_t.grad.numpy()))
    _close(depthwise_m.grad, weight.grad.numpy()[:, 0].T.reshape(3, 3, 2))
    _close(pointwise_m.grad, pointwise_t.grad.numpy()[:, :, 0].T[None])


def test_depthwise_hand_computed():
    # Two channels, multiplier 2: outputs (c0*k00, c0*k01, c1*k10, c1*k11) summed over a 1x2 window.
    x = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]).reshape(1, 1, 3, 2)
    kernel = np.array([[[1.0, -1.0], [0.5, 2.0]], [[1.0, 1.0], [0.0, 1.0]]]).reshape(1, 2, 2, 2)
    y = depthwise_conv2d(x, kernel).numpy().reshape(2, 4)
    # Window (x0, x1) gives c0: x0c0*[1, -1] + x1c0*[1, 1]; c1: x0c1*[.5, 2] + x1c1*[0, 1].
    np.testing.assert_array_equal(y, [[3, 1, 5, 40], [5, 1, 10, 70]])


def test_depthwise_rejects_bad_arguments():
    x = np.zeros((1, 4, 4, 3))
    with pytest.raises(ValueError, match='channels'):
        depthwise_conv2d(x, np.zeros((3, 3, 2, 1)))
    with pytest.raises(ValueError, match='bias'):
        depthwise_conv2d(x, np.zeros((3, 3, 3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match='does not fit'):
        depthwise_conv2d(x, np.zeros((5, 5, 3, 1)))
    with pytest.raises(ValueError, match='padding'):
        separable_conv1d(np.zeros((1, 4, 3)), np.zeros((3, 3, 1)), np.zeros((1, 3, 2)),
                         padding='causal')
