"""Products cut for the small-matrix path: the rules, row-sliced products, the recurrent
step product in column chunks, and the recurrent layers at sizes where they use chunks,
against whole products (``test_lstm.py`` compares such a layer with PyTorch)."""

import numpy as np
import pytest

from minidl import Tensor
from minidl.compute import products
from minidl.compute.products import StepProduct, chunk_width, slice_rows
from minidl.functions.gru import bidirectional_gru
from minidl.functions.lstm import bidirectional_lstm
from minidl.functions.rnn import bidirectional_simple_rnn
from tests.minidl.functions.test_rnn import sequence_problem


def test_slice_rows_keeps_each_slice_within_the_small_matrix_size():
    assert slice_rows(144, 16) == 128  # 3x3 convolution of 16 channels: 128 * 2304 <= 2**19
    assert slice_rows(576, 64) == 8
    assert slice_rows(27, 16) == 1024
    assert slice_rows(1152, 128) is None  # fewer than MIN_SLICE rows: whole


@pytest.mark.parametrize('rows', [1000, 1024, 100])
def test_row_sliced_product_equals_the_whole_product(rows):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((rows, 144)).astype(np.float32)
    b = rng.standard_normal((144, 16)).astype(np.float32)
    out = np.full((rows, 16), np.nan, np.float32)
    assert products.small_matmul(a, b, out=out) is out  # 1000: seven slices of 128 and 104 rows
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(products.small_matmul(a, b), out, rtol=0, atol=0)
    strided = np.full((rows, 32), np.nan, np.float32)[:, ::2]  # not cut: would be copied
    np.testing.assert_allclose(products.small_matmul(a, b, out=strided), out, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(products.small_matmul(np.asfortranarray(a), b), out,
                               rtol=1e-6, atol=1e-5)


def test_large_products_are_cut_along_their_longer_axis_in_blocks_fixed_by_shape(two_threads):
    assert products.product_blocks(64, 300, 500) == (
        1, [slice(0, 128), slice(128, 256), slice(256, 384), slice(384, 500)])
    assert products.product_blocks(1600, 512, 29) == (
        0, [slice(0, 400), slice(400, 800), slice(800, 1200), slice(1200, 1600)])
    assert products.product_blocks(64, 64, 500) == (1, [slice(0, 500)])  # too small to cut
    assert products.product_blocks(40, 1 << 20, 32) == (0, [slice(0, 40)])  # too short to cut
    rng = np.random.default_rng(0)
    for shape in [(64, 300, 500), (600, 300, 64)]:
        a, b = rng.standard_normal(shape[:2]), rng.standard_normal(shape[1:])
        out = np.full((shape[0], shape[2]), np.nan)
        assert products.matmul(a, b.T.copy().T, out=out) is out  # a strided operand too
        np.testing.assert_allclose(out, a @ b, rtol=1e-10, atol=1e-12)


def test_chunk_width_keeps_each_chunk_within_the_small_matrix_size():
    assert chunk_width(16, 256, 1024) == 128  # 16 * 256 * 128 = 2**19
    assert chunk_width(16, 1024, 256) == 32
    assert chunk_width(32, 128, 384) == 128
    assert chunk_width(16, 64, 256) == 256  # small enough whole
    assert chunk_width(4096, 256, 1024) == 1024  # no chunk is small enough: whole
    assert chunk_width(16, 256, 1000) == 1000  # no multiple of 16 divides 1000


def test_chunked_product_fills_every_column_of_a_step_slice():
    rng = np.random.default_rng(0)
    h = rng.standard_normal((2, 16, 256)).astype(np.float32)
    kernels = rng.standard_normal((2, 1024, 256)).astype(np.float32).transpose(0, 2, 1)
    product = StepProduct(kernels, 16, np)
    assert product.width == 128
    buffer = np.full((2, 3, 16, 1024), np.nan, np.float32)
    out = buffer[:, 1]  # one step of a (D, T, N, b) buffer, as the time loops pass it
    assert product(h, out) is out
    np.testing.assert_allclose(out, h.astype(np.float64) @ kernels.astype(np.float64),
                               rtol=1e-4, atol=1e-3)
    assert np.isnan(buffer[:, [0, 2]]).all()


LAYERS = {  # (function, gates, units, bias shape) at batch 64: each product is chunked
    'lstm': (bidirectional_lstm, 4, 128, None),
    'gru-reset-after': (lambda x, f, b: bidirectional_gru(x, f, b, reset_after=True), 3, 128,
                        (2, 384)),
    'gru-reset-before': (lambda x, f, b: bidirectional_gru(x, f, b, reset_after=False), 3, 128,
                         None),
    'simple-rnn': (bidirectional_simple_rnn, 1, 256, None),
}


def _run(function, arrays):
    leaves = [Tensor(a, requires_grad=True, dtype='float64') for a in arrays]
    outputs = function(leaves[0], leaves[1:4], leaves[4:7])
    grad = np.random.default_rng(5).standard_normal(outputs[0].shape)
    (outputs[0] * Tensor(grad.astype(arrays[0].dtype))).sum().backward()
    return [outputs[0].numpy()] + [leaf.grad.numpy() for leaf in leaves]


@pytest.mark.parametrize('name', LAYERS)
def test_layers_with_chunked_products_equal_the_whole_products(name, monkeypatch):
    function, gates, units, bias_shape = LAYERS[name]
    problem = sequence_problem(gates, batch=64, steps=3, features=8, units=units,
                               bias_shape=bias_shape)
    x, kernel, recurrent, bias = (a.astype(np.float64) * 0.3 for a in problem[:4])
    arrays = [x, kernel, recurrent, bias, kernel[:, ::-1].copy(), recurrent[::-1].copy(), bias]
    widths = []
    record = StepProduct.__init__

    def recording(self, kernels, rows, xp):
        record(self, kernels, rows, xp)
        widths.append(self.width < kernels.shape[-1])
    monkeypatch.setattr(StepProduct, '__init__', recording)
    chunked = _run(function, arrays)
    assert widths and all(widths)  # every step product of forward and backward was chunked
    monkeypatch.setattr(products, 'SMALL_PRODUCT', 1 << 40)
    widths.clear()
    whole = _run(function, arrays)
    assert widths and not any(widths)
    for label, a, b in zip(['outputs', 'x', 'kernel', 'recurrent', 'bias'] * 2, chunked, whole):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=label)
