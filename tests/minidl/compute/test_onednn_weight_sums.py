"""oneDNN convolution: the weight gradient's chunk parts summed in the primitive's own
(blocked) layout and reordered into the Keras layout once keep every bit of reordering each
part and summing in the Keras layout; and the sum is the gradient (against PyTorch)."""

import numpy as np
import pytest

from minidl import config
from minidl.compute.onednn import constants, memory
from minidl.compute.onednn.convolution import Conv2DKernel
from minidl.compute.pool import sum_in_order
from tests.minidl.compute.onednn_support import require_onednn

require_onednn('its convolution')

# (x, kernel, pads, depthwise): LeNet's two convolutions (W2 of the benchmarks; the first
# in chunks of 22, 22 and 20 images, so two plans), a batch of 50 in 3 chunks, depthwise.
CASES = [
    ((64, 28, 28, 1), (5, 5, 1, 6), ((2, 2), (2, 2)), False),
    ((64, 14, 14, 6), (5, 5, 6, 16), ((0, 0), (0, 0)), False),
    ((50, 17, 15, 3), (3, 3, 3, 24), ((0, 0), (0, 0)), False),
    ((64, 28, 28, 16), (3, 3, 16, 2), ((1, 1), (1, 1)), True),
]


def _arrays(x_shape, kernel_shape, depthwise):
    rng = np.random.default_rng(7)
    outputs = kernel_shape[2] * kernel_shape[3] if depthwise else kernel_shape[3]
    return (rng.standard_normal(x_shape).astype(np.float32),
            rng.standard_normal(kernel_shape).astype(np.float32),
            rng.standard_normal(outputs).astype(np.float32))


@pytest.mark.parametrize('pool_threads', [1, 2])
@pytest.mark.parametrize('x_shape,kernel_shape,pads,depthwise', CASES, ids=str)
def test_summed_in_the_blocked_layout_keeps_every_bit(x_shape, kernel_shape, pads, depthwise,
                                                      pool_threads, monkeypatch):
    monkeypatch.setattr(config, 'num_threads', pool_threads)
    x, kernel, bias = _arrays(x_shape, kernel_shape, depthwise)
    conv = Conv2DKernel((1, 1), pads, (1, 1), False, depthwise=depthwise)
    y = conv.forward(x, kernel, bias)
    grad = np.cos(np.arange(y.size, dtype=np.float32)).reshape(y.shape)
    _, grad_kernel, grad_bias = conv.backward(grad, (True, True, True))
    # The order before: each chunk's part reordered into the Keras layout, then summed.
    task = conv._weight_grad_task(conv.x, grad)
    parts = [task(bounds) for bounds in conv.chunks]
    expected = sum_in_order([plan.weights_out(weights, kernel.shape)
                             for plan, weights, _ in parts])
    assert len(parts) >= 2
    assert np.array_equal(grad_kernel, expected)
    assert np.array_equal(grad_bias, sum_in_order([bias for _, _, bias in parts]))
    if not depthwise:  # the case this is for: a blocked layout, reordered once
        plan = parts[0][0]
        layout = plan.primitive('backward_weights').md(constants.DIFF_WEIGHTS)
        assert not memory.equal(layout, plan.keras_kernel.handle)


def test_the_sum_is_the_kernel_gradient():
    torch = pytest.importorskip('torch')
    x_shape, kernel_shape, pads, _ = CASES[0]
    x, kernel, bias = _arrays(x_shape, kernel_shape, False)
    conv = Conv2DKernel((1, 1), pads, (1, 1), False)
    y = conv.forward(x, kernel, bias)
    grad = np.cos(np.arange(y.size, dtype=np.float32)).reshape(y.shape)
    _, grad_kernel, grad_bias = conv.backward(grad, (False, True, True))
    x_t = torch.from_numpy(x.transpose(0, 3, 1, 2).astype(np.float64))
    kernel_t = torch.tensor(kernel.transpose(3, 2, 0, 1).astype(np.float64), requires_grad=True)
    bias_t = torch.tensor(bias.astype(np.float64), requires_grad=True)
    torch.nn.functional.conv2d(x_t, kernel_t, bias_t, padding=2).backward(
        torch.from_numpy(grad.transpose(0, 3, 1, 2).astype(np.float64)))
    expected = kernel_t.grad.numpy().transpose(2, 3, 1, 0)
    # Float32 sums of 64 * 28 * 28 terms each, in float64 for PyTorch: 1e-4 of the largest
    # value is twelve times the rounding seen (8.6e-6), far below a lost chunk (a third).
    np.testing.assert_allclose(grad_kernel, expected, atol=1e-4 * np.abs(expected).max())
    np.testing.assert_allclose(grad_bias, bias_t.grad.numpy(),
                               atol=1e-4 * np.abs(bias_t.grad.numpy()).max())
