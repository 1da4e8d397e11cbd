"""oneDNN's grouped convolution behind depthwise_conv2d: against PyTorch's grouped conv2d
(float64) and the reference code, proof that it ran, and bitwise determinism."""

import numpy as np
import pytest

from minidl import config
from minidl.compute.onednn.convolution import Conv2DKernel
from minidl.functions.depthwise import DepthwiseConv2D, depthwise_conv2d
from minidl.tensor import Tensor

from tests.minidl.compute.onednn_support import (
    assert_close, assert_same_bits_on_one_and_two_threads, require_onednn)

require_onednn('its depthwise convolution')

torch = pytest.importorskip('torch')

# Relative to the largest value of the float64 truth: float32 sums of at most
# kh*kw products (forward, input gradient) or of a whole batch (kernel, bias).
TOLERANCE = 3e-6

# (batch, height, width, channels, multiplier, window, strides, padding, dilation, layout)
CASES = [
    (5, 9, 7, 3, 1, (3, 3), (1, 1), 'same', (1, 1), 'channels_last'),
    (1, 8, 11, 1, 2, (3, 2), (2, 1), 'same', (1, 1), 'channels_last'),
    (6, 10, 9, 4, 3, (3, 3), (1, 2), 'valid', (2, 1), 'channels_first'),
    (3, 7, 7, 8, 1, (5, 5), (2, 2), 'same', (1, 1), 'channels_first'),
]


def _run(case, seed=0):
    """``[y, x grad, kernel grad, bias grad]`` of minidl, and the inputs and output gradient."""
    n, h, w, c, m, window, strides, padding, dilation, layout = case
    rng = np.random.default_rng(seed)
    shape = (n, c, h, w) if layout == 'channels_first' else (n, h, w, c)
    x, kernel = rng.standard_normal(shape), rng.standard_normal(window + (c, m))
    bias, grad_seed = rng.standard_normal(c * m), seed + 1
    tensors = [Tensor(a.astype(np.float32), requires_grad=True) for a in (x, kernel, bias)]
    y = depthwise_conv2d(tensors[0], tensors[1], tensors[2], strides=strides, padding=padding,
                         dilation_rate=dilation, data_format=layout)
    grad = np.random.default_rng(grad_seed).standard_normal(y.shape).astype(np.float32)
    (y * Tensor(grad)).sum().backward()
    return [y.numpy()] + [t.grad.numpy() for t in tensors], (x, kernel, bias, grad)


def _torch(case, x, kernel, bias, grad):
    n, h, w, c, m, window, strides, padding, dilation, layout = case
    first = layout == 'channels_first'
    tx = torch.tensor(x if first else x.transpose(0, 3, 1, 2), requires_grad=True)
    # Keras (kh, kw, c, m) -> torch (c*m, 1, kh, kw): output channel c*m + k.
    tk = torch.tensor(kernel.transpose(2, 3, 0, 1).reshape(c * m, 1, *window),
                      requires_grad=True)
    tb = torch.tensor(bias, requires_grad=True)
    if padding == 'same':
        pads = []
        for size, k, s, d in zip((h, w), window, strides, dilation):
            total = max((-(-size // s) - 1) * s + d * (k - 1) + 1 - size, 0)
            pads.append((total // 2, total - total // 2))
        padded = torch.nn.functional.pad(tx, (*pads[1], *pads[0]))
    else:
        padded = tx
    y = torch.nn.functional.conv2d(padded, tk, tb, strides, 0, dilation, groups=c)
    tg = torch.tensor(grad.astype(np.float64) if first else
                      grad.astype(np.float64).transpose(0, 3, 1, 2))
    (y * tg).sum().backward()
    back = (lambda a: a) if first else (lambda a: a.transpose(0, 2, 3, 1))
    grad_kernel = tk.grad.numpy().reshape(c, m, *window).transpose(2, 3, 0, 1)
    return [back(y.detach().numpy()), back(tx.grad.numpy()), grad_kernel, tb.grad.numpy()]


def _close(actual, expected, tolerance=TOLERANCE, name=''):
    assert_close(actual, expected, tolerance, name)


@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_torch_and_the_reference(case, onednn_on, executed, monkeypatch):
    actual, arrays = _run(case)
    assert executed and all(isinstance(p.implementation, str) and not p.implementation
                            .startswith('ref') for p in executed)
    truth = _torch(case, *(a.astype(np.float64) for a in arrays[:3]), arrays[3])
    for a, e in zip(actual, truth):
        _close(a, e)
    monkeypatch.setattr(config, 'use_onednn', 'never')
    for a, e in zip(actual, _run(case)[0]):
        _close(a, e)


def test_the_function_takes_the_onednn_branch_and_never_the_reference(onednn_on, monkeypatch):
    x = Tensor(np.ones((2, 5, 5, 3), np.float32))
    kernel = Tensor(np.ones((3, 3, 3, 2), np.float32))
    function = DepthwiseConv2D((1, 1), ((1, 1), (1, 1)), (1, 1), False)
    function(x, kernel)
    assert isinstance(function.vendor_kernel, Conv2DKernel) and function.vendor_kernel.depthwise
    monkeypatch.setattr(config, 'use_onednn', 'never')
    function = DepthwiseConv2D((1, 1), ((1, 1), (1, 1)), (1, 1), False)
    function(x, kernel)
    assert function.vendor_kernel is None


@pytest.mark.parametrize('fresh_primitives', [False, True])
def test_one_and_two_pool_threads_give_the_same_bits(fresh_primitives, onednn_on, monkeypatch):
    case = CASES[0]  # batch 5: chunks of 2, 2 and 1
    run = lambda: _run(case)[0]  # noqa: E731
    assert_same_bits_on_one_and_two_threads(
        monkeypatch, fresh_primitives, run, ['y', 'x grad', 'kernel grad', 'bias grad'],
        run_to_run=True)
