"""oneDNN's convolution run the other way round behind conv2d_transpose: against the
reference code (tests/minidl/functions/test_conv_transpose.py checks it against PyTorch,
with oneDNN on by default), proof that it ran, and bitwise determinism."""

import numpy as np
import pytest

from minidl import config
from minidl.compute.onednn.convolution import ConvTranspose2DKernel
from minidl.functions.conv_transpose import ConvTranspose2D, conv2d_transpose
from minidl.tensor import Tensor

from tests.minidl.compute.onednn_support import (
    assert_close, assert_same_bits_on_one_and_two_threads, require_onednn,
    vendor_kernels_seen)

require_onednn('its transposed convolution')

# Relative to the largest value of the reference result: each value is a float32 sum of at
# most kh*kw*channels (forward, input gradient) or batch*positions (kernel) products of unit
# normals, ~1e-7 of the largest value apart in any two orders; 3e-6 leaves room, and is far
# below what a misplaced tap or a lost chunk gives.
TOLERANCE = 3e-6

# (batch, height, width, in, filters, window, strides, padding, output_padding, dilation, layout)
CASES = [
    (5, 4, 5, 3, 2, (3, 3), (2, 2), 'same', None, (1, 1), 'channels_last'),
    (1, 3, 3, 1, 4, (2, 3), (1, 2), 'valid', None, (1, 1), 'channels_last'),
    (6, 5, 4, 4, 3, (3, 3), (2, 1), 'same', (1, 0), (1, 1), 'channels_first'),
    (3, 6, 6, 2, 2, (3, 2), (1, 1), 'valid', None, (2, 1), 'channels_first'),
]


def _run(case):
    """``[y, x grad, kernel grad, bias grad]`` and the Functions' vendor kernels."""
    n, h, w, c, f, window, strides, padding, extra, dilation, layout = case
    rng = np.random.default_rng(0)
    shape = (n, c, h, w) if layout == 'channels_first' else (n, h, w, c)
    arrays = [rng.standard_normal(shape), rng.standard_normal(window + (f, c)),
              rng.standard_normal(f)]
    tensors = [Tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
    with pytest.MonkeyPatch.context() as patch:
        seen = vendor_kernels_seen(patch, ConvTranspose2D)
        y = conv2d_transpose(*tensors, strides=strides, padding=padding, output_padding=extra,
                             dilation_rate=dilation, data_format=layout)
    grad = np.random.default_rng(1).standard_normal(y.shape).astype(np.float32)
    (y * Tensor(grad)).sum().backward()
    return [y.numpy()] + [t.grad.numpy() for t in tensors], seen


@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_runs_and_matches_the_reference(case, onednn_on, executed, monkeypatch):
    actual, seen = _run(case)
    assert [type(k) for k in seen] == [ConvTranspose2DKernel]
    assert executed and not any(p.implementation.startswith('ref') for p in executed)
    monkeypatch.setattr(config, 'use_onednn', 'never')
    expected, seen = _run(case)
    assert seen == [None]
    for a, e in zip(actual, expected):
        assert_close(a, e, TOLERANCE)


@pytest.mark.parametrize('fresh_primitives', [False, True])
def test_one_and_two_pool_threads_give_the_same_bits(fresh_primitives, onednn_on, monkeypatch):
    case = CASES[0]  # batch 5: chunks of 2, 2 and 1
    run = lambda: _run(case)[0]  # noqa: E731
    assert_same_bits_on_one_and_two_threads(
        monkeypatch, fresh_primitives, run, ['y', 'x grad', 'kernel grad', 'bias grad'],
        run_to_run=True)
