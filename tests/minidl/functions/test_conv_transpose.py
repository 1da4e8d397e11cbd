"""conv2d_transpose: gradient checks, Keras 2.2.4's sizes, TensorFlow's placement, and PyTorch.

PyTorch's ``conv_transpose2d`` without padding gives the full transposed
output; the reference crops it as TensorFlow places the output (the cells
from ``before`` on, ``before`` being half the excess for 'same' and 0 for
'valid'), padding with zeros where the output is longer.
"""

import numpy as np
import pytest

from minidl.functions.conv import Conv2D
from minidl.functions.conv_transpose import (
    ConvTranspose2D, conv2d_transpose, transposed_output_size)
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(ConvTranspose2D, lambda x, k, b: conv2d_transpose(x, k, b, strides=2,
                                                               padding='same'),
             [random(2, 3, 4, 2), random(3, 3, 3, 2, seed=1), random(3, seed=2)],
             name='same-stride2'),
    GradCase(ConvTranspose2D, lambda x, k: conv2d_transpose(
        x, k, strides=(2, 3), padding='valid', output_padding=(1, 2), dilation_rate=(2, 1),
        data_format='channels_first'),
        [random(2, 2, 3, 3), random(2, 3, 3, 2, seed=1)], name='channels_first-output_padding'),
    # 16 filters at stride 1: the forward is taken as a flipped-kernel convolution.
    GradCase(ConvTranspose2D, lambda x, k: conv2d_transpose(x, k, padding='same'),
             [random(1, 3, 4, 2), random(3, 3, 16, 2, seed=1)], name='same-16-filters'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


@pytest.fixture(params=['whole-batch', 'chunked', 'by-convolution', 'by-col2im'])
def path(request, monkeypatch):
    """Run each comparison through every way Conv2D's input gradient is formed."""
    if request.param == 'chunked':
        monkeypatch.setattr(Conv2D, 'CHUNK_BYTES', 1)
    elif request.param == 'by-convolution':
        monkeypatch.setattr(Conv2D, 'MIN_CONVOLVED_CHANNELS', 1)
    elif request.param == 'by-col2im':
        monkeypatch.setattr(Conv2D, 'THIN_KERNEL_SLICE', 0)


def _keras_deconv_length(size, window, stride, padding, output_padding, dilation):
    """keras/utils/conv_utils.py deconv_length of Keras 2.2.4, restated."""
    window = window + (window - 1) * (dilation - 1)
    if output_padding is None:
        return {'valid': size * stride + max(window - stride, 0),
                'same': size * stride}[padding]
    pad = {'valid': 0, 'same': window // 2}[padding]
    return (size - 1) * stride + window - 2 * pad + output_padding


def _tf_crop(full, sizes, targets, windows, strides, dilations, padding):
    """Cut the full NCHW transposed output to ``targets`` as TensorFlow places it."""
    for axis, size, target, window, stride, dilation in zip(
            (2, 3), sizes, targets, windows, strides, dilations):
        spread = (size - 1) * stride + dilation * (window - 1) + 1
        before = max(spread - target, 0) // 2 if padding == 'same' else 0
        full = np.take(full, range(before, min(before + target, full.shape[axis])), axis=axis)
        if full.shape[axis] < target:
            widths = [(0, 0)] * 4
            widths[axis] = (0, target - full.shape[axis])
            full = np.pad(full, widths)
    return full


CASES = [
    # (kernel, strides, padding, output_padding, dilation)
    ((3, 3), (2, 2), 'same', None, (1, 1)),
    ((3, 3), (2, 2), 'valid', None, (1, 1)),
    ((3, 3), (1, 1), 'same', None, (1, 1)),
    ((5, 5), (1, 1), 'valid', None, (1, 1)),
    ((3, 2), (2, 3), 'same', (1, 2), (1, 1)),
    ((2, 2), (2, 2), 'same', (0, 1), (1, 1)),  # even kernel with output_padding
    ((1, 1), (3, 3), 'same', (2, 1), (1, 1)),  # stride beyond the kernel
    ((3, 3), (1, 1), 'same', None, (2, 2)),
    ((3, 3), (2, 1), 'valid', (1, 0), (2, 1)),
    ((4, 4), (4, 4), 'valid', None, (1, 1)),
]


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
@pytest.mark.parametrize('window,strides,padding,output_padding,dilation', CASES)
def test_conv2d_transpose_matches_torch(torch, path, window, strides, padding, output_padding,
                                        dilation, data_format):
    rng = np.random.default_rng(0)
    sizes, filters, channels = (4, 5), 4, 3
    x = rng.standard_normal((2, channels, *sizes)).astype(np.float32)  # NCHW
    kernel = rng.standard_normal((*window, filters, channels)).astype(np.float32)
    bias = rng.standard_normal(filters).astype(np.float32)
    to_minidl = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1))) \
        if data_format == 'channels_last' else (lambda a: a)

    x_m, kernel_m, bias_m = (Tensor(a, requires_grad=True)
                             for a in (to_minidl(x), kernel, bias))
    y_m = conv2d_transpose(x_m, kernel_m, bias_m, strides=strides, padding=padding,
                           output_padding=output_padding, dilation_rate=dilation,
                           data_format=data_format)
    targets = tuple(_keras_deconv_length(*args) for args in zip(
        sizes, window, strides, (padding,) * 2, output_padding or (None, None), dilation))
    assert y_m.dtype == np.float32
    grad = rng.standard_normal((2, filters, *targets)).astype(np.float32)  # NCHW
    y_m.backward(to_minidl(grad))

    x_t = torch.tensor(x, requires_grad=True)
    kernel_t = torch.tensor(kernel.transpose(3, 2, 0, 1).copy(), requires_grad=True)
    full = torch.nn.functional.conv_transpose2d(x_t, kernel_t, stride=strides, dilation=dilation)
    # The crop (and zero fill) is linear: apply it to the full output and its gradient.
    expected = _tf_crop(full.detach().numpy(), sizes, targets, window, strides, dilation,
                        padding) + bias[:, None, None]
    grad_full = np.zeros(full.shape, np.float32)
    crop_of_index = _tf_crop(np.arange(grad_full.size).reshape(full.shape), sizes, targets,
                             window, strides, dilation, padding)
    kept = _tf_crop(np.ones(full.shape), sizes, targets, window, strides, dilation, padding) > 0
    grad_full.reshape(-1)[crop_of_index[kept]] = grad[kept]
    full.backward(torch.tensor(grad_full))
    _close(y_m, to_minidl(expected))
    _close(x_m.grad, to_minidl(x_t.grad.numpy()))
    _close(kernel_m.grad, kernel_t.grad.numpy().transpose(2, 3, 1, 0))
    _close(bias_m.grad, grad.sum(axis=(0, 2, 3)))


def _close(actual, expected):
    actual = actual.numpy() if isinstance(actual, Tensor) else np.asarray(actual)
    assert actual.shape == expected.shape
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize('padding,output_padding,expected', [
    # Input [1, 2], kernel [1, 10, 100], stride 2: the full output is [1, 10, 102, 20, 200].
    ('valid', None, [1, 10, 102, 20, 200]),
    ('same', None, [1, 10, 102, 20]),  # 4 cells; 1 in excess, 0 before
    ('same', 0, [10, 102, 20]),  # 3 cells; 2 in excess, 1 before
    ('same', 1, [1, 10, 102, 20]),  # PyTorch (padding=1) would give [10, 102, 20, 200]
    ('valid', 1, [1, 10, 102, 20, 200, 0]),  # the extra cell receives nothing
])
def test_conv2d_transpose_hand_computed(padding, output_padding, expected):
    x = np.array([1.0, 2.0]).reshape(1, 1, 2, 1)
    kernel = np.array([1.0, 10.0, 100.0]).reshape(1, 3, 1, 1)
    y = conv2d_transpose(x, kernel, strides=(1, 2), padding=padding,
                         output_padding=None if output_padding is None else (0, output_padding))
    np.testing.assert_array_equal(y.numpy().reshape(-1), expected)


@pytest.mark.parametrize('args,expected', [
    ((7, 3, 2, 'same'), 14), ((7, 3, 2, 'valid'), 15), ((7, 1, 3, 'valid'), 21),
    ((7, 5, 1, 'valid'), 11), ((7, 3, 2, 'same', 1), 14), ((7, 3, 2, 'valid', 1, 2), 18),
    ((7, 4, 2, 'same', 0), 12), ((None, 3, 2, 'same'), None),
])
def test_transposed_output_size_is_keras_deconv_length(args, expected):
    assert transposed_output_size(*args) == expected


def test_conv2d_transpose_rejects_bad_arguments():
    x, kernel = np.zeros((1, 3, 3, 2)), np.zeros((3, 3, 4, 2))
    with pytest.raises(ValueError, match='output_padding'):
        conv2d_transpose(x, kernel, strides=2, output_padding=2)
    with pytest.raises(ValueError, match='channels'):
        conv2d_transpose(np.zeros((1, 3, 3, 4)), kernel)
    with pytest.raises(ValueError, match='bias'):
        conv2d_transpose(x, kernel, np.zeros(2))
    with pytest.raises(ValueError, match='padding'):
        conv2d_transpose(x, kernel, padding='full')


def test_conv2d_transpose_is_deterministic():
    rng = np.random.default_rng(4)
    x = Tensor(rng.standard_normal((3, 5, 5, 6)).astype(np.float32), requires_grad=True)
    kernel = Tensor(rng.standard_normal((3, 3, 4, 6)).astype(np.float32), requires_grad=True)
    runs = []
    for _ in range(2):
        x.grad = kernel.grad = None
        y = conv2d_transpose(x, kernel, strides=2, padding='same')
        y.backward(np.ones(y.shape, dtype=np.float32))
        runs.append((y.numpy(), x.grad.numpy(), kernel.grad.numpy()))
    assert all(np.array_equal(a, b) for a, b in zip(*runs))
