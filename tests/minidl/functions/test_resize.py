"""Bilinear upsampling: TensorFlow 1's ``resize_bilinear`` rule (no half-pixel centers).

The reference applies the rule as TensorFlow 1 states it, one output pixel
at a time: source coordinate ``o * (in / out)``, its floor and the next cell
(clamped), weighted by the fraction. Its gradient is the transposed linear
map, read off the same per-pixel weights.
"""

import numpy as np
import pytest

from minidl.functions.resize import UpsampleBilinear2D, upsample_bilinear2d
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(UpsampleBilinear2D, lambda x: upsample_bilinear2d(x, (2, 3)),
             [random(2, 3, 4, 2)], name='channels_last'),
    GradCase(UpsampleBilinear2D, lambda x: upsample_bilinear2d(x, (3, 1), 'channels_first'),
             [random(1, 2, 2, 3)], name='channels_first'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def _interpolation_matrix(size, out):
    """(out, size) weights of TensorFlow 1's resize_bilinear with align_corners=False."""
    matrix = np.zeros((out, size))
    scale = size / out
    for o in range(out):
        source = o * scale
        low = int(np.floor(source))
        high = min(low + 1, size - 1)
        fraction = source - low
        matrix[o, low] += 1 - fraction
        matrix[o, high] += fraction
    return matrix


def _reference(x, factors):
    """NHWC ``x`` resized by the per-pixel rule, as two linear maps."""
    rows = _interpolation_matrix(x.shape[1], x.shape[1] * factors[0])
    cols = _interpolation_matrix(x.shape[2], x.shape[2] * factors[1])
    return np.einsum('ph,nhwc,qw->npqc', rows, x, cols), rows, cols


def test_hand_computed_two_by_two():
    # x = 2*row + col; the rule samples rows and cols at 0, 0.5, 1 and 1.5, clamped to 1.
    x = np.array([[0.0, 1.0], [2.0, 3.0]]).reshape(1, 2, 2, 1)
    expected = [[0, 0.5, 1, 1], [1, 1.5, 2, 2], [2, 2.5, 3, 3], [2, 2.5, 3, 3]]
    np.testing.assert_array_equal(upsample_bilinear2d(x, 2).numpy()[0, :, :, 0], expected)


@pytest.mark.parametrize('factors', [(2, 2), (3, 2), (1, 4), (5, 3)])
@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_matches_the_per_pixel_rule_forward_and_backward(factors, data_format):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 3)).astype(np.float32)  # NHWC
    expected, rows, cols = _reference(x.astype(np.float64), factors)
    to_minidl = (lambda a: np.ascontiguousarray(a.transpose(0, 3, 1, 2))) \
        if data_format == 'channels_first' else (lambda a: a)
    x_m = Tensor(to_minidl(x), requires_grad=True)
    y = upsample_bilinear2d(x_m, factors, data_format)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), to_minidl(expected), rtol=1e-6, atol=1e-6)
    grad = rng.standard_normal(expected.shape)
    y.backward(to_minidl(grad).astype(np.float32))
    expected_grad = np.einsum('ph,npqc,qw->nhwc', rows, grad, cols)
    np.testing.assert_allclose(x_m.grad.numpy(), to_minidl(expected_grad), rtol=1e-5, atol=1e-5)


def test_single_pixel_is_repeated():
    x = np.array([[[[2.0, -1.0]]]])  # (1, 1, 1, 2)
    y = upsample_bilinear2d(x, (2, 3)).numpy()
    np.testing.assert_array_equal(y, np.broadcast_to(x, (1, 2, 3, 2)))


def test_rejects_bad_arguments():
    with pytest.raises(ValueError, match='size'):
        upsample_bilinear2d(np.zeros((1, 2, 2, 1)), 0)
    with pytest.raises(ValueError, match='4-D'):
        upsample_bilinear2d(np.zeros((2, 2, 1)), 2)
    with pytest.raises(ValueError, match='data_format'):
        upsample_bilinear2d(np.zeros((1, 2, 2, 1)), 2, 'NHWC')
