"""conv2d and conv1d: gradient checks, and forward/backward against PyTorch."""

import math

import numpy as np
import pytest

from minidl.functions import conv
from minidl.functions.conv import Conv1D, Conv2D, conv1d, conv2d
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(Conv2D, lambda x, k, b: conv2d(x, k, b, strides=2, padding='same'),
             [random(2, 5, 5, 2), random(3, 3, 2, 3, seed=1), random(3, seed=2)],
             name='same-stride2'),
    GradCase(Conv2D, lambda x, k: conv2d(x, k, padding=((2, 0), (1, 1)), dilation_rate=2,
                                         data_format='channels_first'),
             [random(2, 2, 5, 4), random(2, 2, 2, 3, seed=1)], name='channels_first-dilated'),
    # 16 input channels: the input gradient is taken as a convolution.
    GradCase(Conv2D, lambda x, k: conv2d(x, k, padding='same'),
             [random(1, 4, 3, 16), random(3, 3, 16, 2, seed=1)], name='same-16-channels'),
    GradCase(Conv1D, lambda x, k, b: conv1d(x, k, b, padding='causal', dilation_rate=2),
             [random(2, 7, 3), random(3, 3, 2, seed=1), random(2, seed=2)], name='causal'),
    GradCase(Conv1D, lambda x, k: conv1d(x, k, strides=2, padding='same',
                                         data_format='channels_first'),
             [random(2, 3, 7), random(3, 3, 2, seed=1)], name='channels_first-same'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


@pytest.fixture(params=[False, True], ids=['whole-batch', 'chunked'])
def chunking(request, monkeypatch):
    """Run a test as is, and again with every image in its own im2col chunk."""
    if request.param:
        monkeypatch.setattr(Conv2D, 'CHUNK_BYTES', 1)


@pytest.fixture(params=['by-convolution', 'by-col2im'])
def input_grad(request, monkeypatch):
    """Take stride-1 input gradients as a convolution, and by col2im."""
    if request.param == 'by-convolution':
        monkeypatch.setattr(Conv2D, 'MIN_CONVOLVED_CHANNELS', 1)
    else:
        monkeypatch.setattr(Conv2D, 'THIN_KERNEL_SLICE', 0)


def _same_pads(size, window, stride, dilation):
    """TensorFlow's 'same': ceil(size / stride) outputs, the odd cell after."""
    extent = (window - 1) * dilation + 1
    total = max((math.ceil(size / stride) - 1) * stride + extent - size, 0)
    return total // 2, total - total // 2


def _close(actual, expected):
    actual = actual.numpy() if isinstance(actual, Tensor) else np.asarray(actual)
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * scale)


def _run_both(torch, x, kernel, bias, strides, padding, dilation, pads, data_format):
    """Forward and backward in minidl and in PyTorch; x is NCHW, kernel Keras layout.

    ``pads`` ((top, bottom), (left, right)) is the explicit padding PyTorch gets.
    Returns (minidl output, x grad, kernel grad, bias grad) and the same from
    PyTorch, all in minidl's layouts.
    """
    channels_last = data_format == 'channels_last'
    to_minidl = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1))) if channels_last \
        else (lambda a: a)
    rng = np.random.default_rng(3)
    x_m = Tensor(to_minidl(x), requires_grad=True)
    kernel_m = Tensor(kernel, requires_grad=True)
    bias_m = Tensor(bias, requires_grad=True)
    y_m = conv2d(x_m, kernel_m, bias_m, strides=strides, padding=padding,
                 dilation_rate=dilation, data_format=data_format)
    grad = rng.standard_normal(y_m.shape).astype(np.float32)
    y_m.backward(grad)

    x_t = torch.tensor(x, requires_grad=True)
    kernel_t = torch.tensor(kernel.transpose(3, 2, 0, 1).copy(), requires_grad=True)
    bias_t = torch.tensor(bias, requires_grad=True)
    (top, bottom), (left, right) = pads
    y_t = torch.nn.functional.conv2d(
        torch.nn.functional.pad(x_t, (left, right, top, bottom)), kernel_t, bias_t,
        stride=strides, dilation=dilation)
    grad_t = torch.tensor(grad if not channels_last else grad.transpose(0, 3, 1, 2).copy())
    y_t.backward(grad_t)
    expected = (to_minidl(y_t.detach().numpy()), to_minidl(x_t.grad.numpy()),
                kernel_t.grad.numpy().transpose(2, 3, 1, 0), bias_t.grad.numpy())
    return (y_m, x_m.grad, kernel_m.grad, bias_m.grad), expected


CONV2D_CASES = [
    # (kernel, strides, padding, dilation, in size)
    (1, 1, 'valid', 1, 6),
    (1, 2, 'same', 1, 7),
    (3, 1, 'same', 1, 7),
    (3, 2, 'same', 1, 8),
    (3, 2, 'valid', 1, 9),
    (5, 1, 'valid', 1, 9),
    (5, 2, 'same', 1, 9),
    (11, 4, 'valid', 1, 19),
    (11, 4, 'same', 1, 17),
    (3, 1, 'same', 2, 8),
    (3, 2, 'valid', 2, 9),
    (3, 1, 1, 1, 6),
    (5, 1, (2, 1), 1, 7),
    (3, 2, ((0, 2), (1, 0)), 1, 7),
    (3, 1, ((2, 0), (0, 1)), 1, 6),  # stride 1, uneven padding: input gradient by convolution
    (3, 1, 3, 1, 5),  # padding beyond the kernel's extent: input gradient by col2im
]


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
@pytest.mark.parametrize('window,strides,padding,dilation,size', CONV2D_CASES)
def test_conv2d_matches_torch(torch, chunking, input_grad, window, strides, padding, dilation, size,
                              data_format):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, size, size - 1)).astype(np.float32)
    kernel = rng.standard_normal((window, window, 3, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    if padding == 'same':
        pads = tuple(_same_pads(s, window, strides, dilation) for s in (size, size - 1))
    elif padding == 'valid':
        pads = ((0, 0), (0, 0))
    else:
        pads = conv.resolve_padding(padding, None, None, None)
    actual, expected = _run_both(torch, x, kernel, bias, strides, padding, dilation, pads,
                                 data_format)
    for a, e in zip(actual, expected):
        _close(a, e)


def test_conv2d_rectangular_kernel_and_strides(torch, chunking):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 2, 9, 8)).astype(np.float32)
    kernel = rng.standard_normal((3, 2, 2, 5)).astype(np.float32)
    bias = rng.standard_normal(5).astype(np.float32)
    pads = (_same_pads(9, 3, 2, 1), _same_pads(8, 2, 1, 2))
    actual, expected = _run_both(torch, x, kernel, bias, (2, 1), 'same', (1, 2), pads,
                                 'channels_last')
    for a, e in zip(actual, expected):
        _close(a, e)


def test_conv2d_without_bias_and_first_layer_grads():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 5, 3)).astype(np.float32)
    kernel = Tensor(rng.standard_normal((3, 3, 3, 2)).astype(np.float32), requires_grad=True)
    y = conv2d(x, kernel, padding='same')
    assert y.shape == (2, 5, 5, 2) and y.dtype == np.float32
    y.backward(np.ones(y.shape, dtype=np.float32))
    # With a ones gradient, dL/dk[i, j, c, o] sums x over the positions offset (i, j) reads.
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    expected = np.stack([np.stack([padded[:, i:i + 5, j:j + 5].sum(axis=(0, 1, 2))
                                   for j in range(3)]) for i in range(3)])
    np.testing.assert_allclose(kernel.grad.numpy(), np.repeat(expected[..., None], 2, -1),
                               rtol=1e-5, atol=1e-5)


def test_conv2d_is_deterministic_and_keeps_float32():
    rng = np.random.default_rng(4)
    x = Tensor(rng.standard_normal((4, 9, 9, 5)).astype(np.float32), requires_grad=True)
    kernel = Tensor(rng.standard_normal((3, 3, 5, 6)).astype(np.float32), requires_grad=True)
    grads = []
    for _ in range(2):
        x.grad = kernel.grad = None
        y = conv2d(x, kernel, strides=2, padding='same')
        y.backward(np.ones(y.shape, dtype=np.float32))
        grads.append((y.numpy(), x.grad.numpy(), kernel.grad.numpy()))
    assert all(a.dtype == np.float32 for a in grads[0])
    assert all(np.array_equal(a, b) for a, b in zip(*grads))


@pytest.mark.parametrize('padding,strides,dilation,data_format', [
    ('valid', 1, 1, 'channels_last'),
    ('same', 2, 1, 'channels_last'),
    ('causal', 1, 2, 'channels_last'),
    ('causal', 2, 1, 'channels_first'),
    ('same', 1, 2, 'channels_first'),
    (2, 1, 1, 'channels_last'),
    ((3, 1), 2, 1, 'channels_first'),
])
def test_conv1d_matches_torch(torch, chunking, padding, strides, dilation, data_format):
    rng = np.random.default_rng(5)
    steps, window = 11, 3
    x = rng.standard_normal((2, 3, steps)).astype(np.float32)  # (N, C, L)
    kernel = rng.standard_normal((window, 3, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    if padding == 'causal':
        pads = ((window - 1) * dilation, 0)
    elif padding == 'same':
        pads = _same_pads(steps, window, strides, dilation)
    elif padding == 'valid':
        pads = (0, 0)
    else:
        pads = (padding, padding) if isinstance(padding, int) else padding
    channels_last = data_format == 'channels_last'
    layout = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 1))) if channels_last \
        else (lambda a: a)
    x_m = Tensor(layout(x), requires_grad=True)
    kernel_m = Tensor(kernel, requires_grad=True)
    bias_m = Tensor(bias, requires_grad=True)
    y_m = conv1d(x_m, kernel_m, bias_m, strides=strides, padding=padding,
                 dilation_rate=dilation, data_format=data_format)
    grad = rng.standard_normal(y_m.shape).astype(np.float32)
    y_m.backward(grad)

    x_t = torch.tensor(x, requires_grad=True)
    kernel_t = torch.tensor(kernel.transpose(2, 1, 0).copy(), requires_grad=True)
    bias_t = torch.tensor(bias, requires_grad=True)
    y_t = torch.nn.functional.conv1d(torch.nn.functional.pad(x_t, pads), kernel_t, bias_t,
                                     stride=strides, dilation=dilation)
    y_t.backward(torch.tensor(layout(grad)))  # layout is its own inverse
    _close(y_m, layout(y_t.detach().numpy()))
    _close(x_m.grad, layout(x_t.grad.numpy()))
    _close(kernel_m.grad, kernel_t.grad.numpy().transpose(2, 1, 0))
    _close(bias_m.grad, bias_t.grad.numpy())


def test_causal_output_only_sees_the_past():
    x = np.zeros((1, 6, 1), dtype=np.float32)
    x[0, 3, 0] = 1
    y = conv1d(x, np.ones((3, 1, 1), dtype=np.float32), padding='causal').numpy()
    np.testing.assert_array_equal(y[0, :, 0], [0, 0, 0, 1, 1, 1])


@pytest.mark.parametrize('call,message', [
    (lambda: conv2d(np.zeros((1, 5, 5, 3)), np.zeros((3, 3, 2, 4))), 'channels'),
    (lambda: conv2d(np.zeros((1, 5, 5)), np.zeros((3, 3, 5, 4))), '4-D'),
    (lambda: conv2d(np.zeros((1, 5, 5, 3)), np.zeros((3, 3, 3, 4)), np.zeros(3)), 'bias'),
    (lambda: conv2d(np.zeros((1, 2, 2, 3)), np.zeros((3, 3, 3, 4))), 'does not fit'),
    (lambda: conv2d(np.zeros((1, 5, 5, 3)), np.zeros((3, 3, 3, 4)), padding='full'), 'padding'),
    (lambda: conv2d(np.zeros((1, 5, 5, 3)), np.zeros((3, 3, 3, 4)), padding=-1), 'padding'),
    (lambda: conv2d(np.zeros((1, 5, 5, 3)), np.zeros((3, 3, 3, 4)), strides=0), 'strides'),
    (lambda: conv2d(np.zeros((1, 5, 5, 3)), np.zeros((3, 3, 3, 4)), data_format='NHWC'),
     'data_format'),
    (lambda: conv1d(np.zeros((1, 5, 3)), np.zeros((3, 3, 4)), padding=(1, 2, 3)), 'padding'),
    (lambda: conv1d(np.zeros((1, 5, 3)), np.zeros((7, 3, 4))), 'does not fit'),
])
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
