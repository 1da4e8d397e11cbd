"""conv3d and conv3d_transpose: gradient checks, and forward/backward against PyTorch."""

import math

import numpy as np
import pytest

from minidl.functions.conv import Conv2D
from minidl.functions.conv3d import Conv3D, ConvTranspose3D, conv3d, conv3d_transpose
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(Conv3D, lambda x, k, b: conv3d(x, k, b, strides=(2, 1, 2), padding='same'),
             [random(2, 4, 3, 5, 2), random(2, 3, 2, 2, 3, seed=1), random(3, seed=2)],
             name='same-strided'),
    GradCase(Conv3D, lambda x, k: conv3d(x, k, dilation_rate=(1, 2, 1),
                                         data_format='channels_first'),
             [random(1, 2, 3, 5, 3), random(2, 2, 2, 2, 2, seed=1)],
             name='channels_first-dilated'),
    # 16 input channels, stride 1: the input gradient is taken as a convolution.
    GradCase(Conv3D, lambda x, k: conv3d(x, k, padding='same'),
             [random(1, 3, 2, 3, 16), random(2, 3, 2, 16, 2, seed=1)], name='16-channels'),
    GradCase(ConvTranspose3D, lambda x, k, b: conv3d_transpose(x, k, b, strides=2,
                                                               padding='same'),
             [random(2, 2, 3, 2, 3), random(3, 2, 3, 2, 3, seed=1), random(2, seed=2)],
             name='same-stride2'),
    GradCase(ConvTranspose3D, lambda x, k: conv3d_transpose(
                 x, k, strides=(2, 1, 2), output_padding=(1, 0, 1),
                 data_format='channels_first'),
             [random(1, 3, 2, 2, 3), random(2, 2, 3, 2, 3, seed=1)],
             name='channels_first-output_padding'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


@pytest.fixture(params=[False, True], ids=['whole-batch', 'chunked'])
def chunking(request, monkeypatch):
    """Run a test as is, and again with every sample in its own im2col chunk."""
    if request.param:
        monkeypatch.setattr(Conv2D, 'CHUNK_BYTES', 1)


def _same_pads(size, window, stride, dilation=1):
    """TensorFlow's 'same': ceil(size / stride) outputs, the odd cell after."""
    extent = (window - 1) * dilation + 1
    total = max((math.ceil(size / stride) - 1) * stride + extent - size, 0)
    return total // 2, total - total // 2


def _minidl_grads(function, x, kernel, bias, grad, **kwargs):
    tensors = [Tensor(a, requires_grad=True) for a in (x, kernel, bias)]
    y = function(*tensors, **kwargs)
    y.backward(grad)
    return [y.numpy()] + [t.grad.numpy() for t in tensors]


def _close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
@pytest.mark.parametrize('window,strides,padding,dilation', [
    ((3, 2, 3), (1, 1, 1), 'valid', (1, 1, 1)),
    ((3, 3, 2), (2, 1, 2), 'same', (1, 1, 1)),
    ((2, 3, 3), (1, 1, 1), 'same', (2, 1, 2)),
    ((3, 3, 3), (1, 2, 1), ((1, 2), (0, 1), (2, 0)), (1, 1, 1)),
])
def test_conv3d_matches_torch(torch, chunking, window, strides, padding, dilation, data_format):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 5, 7)).astype(np.float32)  # (N, C, D, H, W)
    kernel = rng.standard_normal((*window, 3, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    sizes = x.shape[2:]
    if padding == 'same':
        pads = [_same_pads(*args) for args in zip(sizes, window, strides, dilation)]
    elif padding == 'valid':
        pads = [(0, 0)] * 3
    else:
        pads = padding
    # PyTorch: explicit asymmetric padding by F.pad, weight (out, in, kd, kh, kw).
    xt = torch.tensor(x, requires_grad=True)
    kt = torch.tensor(kernel, requires_grad=True)
    bt = torch.tensor(bias, requires_grad=True)
    flat_pads = [p for pair in reversed(pads) for p in pair]
    yt = torch.nn.functional.conv3d(torch.nn.functional.pad(xt, flat_pads),
                                    kt.permute(4, 3, 0, 1, 2), bt, stride=strides,
                                    dilation=dilation)
    grad = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(grad))
    expected = [yt.detach().numpy(), xt.grad.numpy(), kt.grad.numpy(), bt.grad.numpy()]
    last = (0, 2, 3, 4, 1)
    if data_format == 'channels_last':
        x, grad = x.transpose(last), grad.transpose(last)
        expected[0], expected[1] = expected[0].transpose(last), expected[1].transpose(last)
    actual = _minidl_grads(conv3d, np.ascontiguousarray(x), kernel, bias,
                           np.ascontiguousarray(grad), strides=strides, padding=padding,
                           dilation_rate=dilation, data_format=data_format)
    for a, e in zip(actual, expected):
        _close(a, e)


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
@pytest.mark.parametrize('window,strides,padding,output_padding,expected_size', [
    # Keras 2.2.4's deconv_length: 'valid' n*s + max(k - s, 0); 'same' n*s;
    # with output_padding (n - 1)*s + k - 2*pad + output_padding.
    ((3, 2, 3), (1, 1, 1), 'valid', None, (5, 5, 6)),
    ((3, 3, 2), (2, 1, 2), 'valid', None, (7, 6, 8)),
    ((3, 3, 3), (2, 2, 1), 'same', None, (6, 8, 4)),
    ((2, 3, 4), (2, 3, 2), 'same', (1, 2, 1), (5, 12, 7)),
    ((3, 2, 3), (3, 2, 2), 'valid', (2, 1, 0), (11, 9, 9)),
])
def test_conv3d_transpose_matches_torch(torch, chunking, window, strides, padding, output_padding,
                                        expected_size, data_format):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 3, 4, 4)).astype(np.float32)  # (N, C, D, H, W)
    kernel = rng.standard_normal((*window, 2, 3)).astype(np.float32)  # (k..., filters, in)
    bias = rng.standard_normal(2).astype(np.float32)
    # TensorFlow places the transposed output like this: the full PyTorch
    # result (no padding) shifted left by half the excess ('same' only) and
    # cut, or extended with zeros, to the target size.
    xt = torch.tensor(x, requires_grad=True)
    kt = torch.tensor(kernel, requires_grad=True)
    bt = torch.tensor(bias, requires_grad=True)
    full = torch.nn.functional.conv_transpose3d(xt, kt.permute(4, 3, 0, 1, 2), stride=strides)
    index = [slice(None), slice(None)]
    extension = []
    for size, target in zip(full.shape[2:], expected_size):
        before = max(size - target, 0) // 2 if padding == 'same' else 0
        index.append(slice(before, before + target))
        extension.append(max(before + target - size, 0))
    full = torch.nn.functional.pad(full, [p for e in reversed(extension) for p in (0, e)])
    yt = full[tuple(index)] + bt.reshape(1, -1, 1, 1, 1)
    assert tuple(yt.shape[2:]) == expected_size
    grad = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(grad))
    expected = [yt.detach().numpy(), xt.grad.numpy(), kt.grad.numpy(), bt.grad.numpy()]
    last = (0, 2, 3, 4, 1)
    if data_format == 'channels_last':
        x, grad = x.transpose(last), grad.transpose(last)
        expected[0], expected[1] = expected[0].transpose(last), expected[1].transpose(last)
    actual = _minidl_grads(conv3d_transpose, np.ascontiguousarray(x), kernel, bias,
                           np.ascontiguousarray(grad), strides=strides, padding=padding,
                           output_padding=output_padding, data_format=data_format)
    for a, e in zip(actual, expected):
        _close(a, e)


@pytest.mark.parametrize('call, message', [
    (lambda: conv3d(np.zeros((1, 4, 4, 4, 2)), np.zeros((3, 3, 3, 3, 1))), 'has 2 channels'),
    (lambda: conv3d(np.zeros((1, 2, 4, 4, 2)), np.zeros((3, 3, 3, 2, 1))), 'does not fit'),
    (lambda: conv3d(np.zeros((1, 4, 4, 2)), np.zeros((3, 3, 2, 1))), '5-D input'),
    (lambda: conv3d(np.zeros((1, 4, 4, 4, 2)), np.zeros((1, 1, 1, 2, 1)), strides=(1, 2)),
     'strides'),
    (lambda: conv3d_transpose(np.zeros((1, 3, 3, 3, 2)), np.zeros((2, 2, 2, 1, 2)), strides=2,
                              output_padding=2), 'output_padding'),
    (lambda: conv3d_transpose(np.zeros((1, 3, 3, 3, 2)), np.zeros((2, 2, 2, 1, 3))), 'expects 3'),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_conv3d_is_deterministic_and_keeps_float32():
    rng = np.random.default_rng(4)
    x = Tensor(rng.standard_normal((2, 5, 6, 5, 3)).astype(np.float32), requires_grad=True)
    kernel = Tensor(rng.standard_normal((3, 3, 3, 3, 4)).astype(np.float32), requires_grad=True)
    runs = []
    for _ in range(2):
        x.grad = kernel.grad = None
        y = conv3d(x, kernel, strides=2, padding='same')
        y.backward(np.ones(y.shape, dtype=np.float32))
        runs.append((y.numpy(), x.grad.numpy(), kernel.grad.numpy()))
    assert all(a.dtype == np.float32 for a in runs[0])
    assert all(np.array_equal(a, b) for a, b in zip(*runs))
