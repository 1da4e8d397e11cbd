"""oneDNN's max and average pooling behind max_pool2d / avg_pool2d: against PyTorch and the
reference code, ties, proof that it ran, bitwise determinism (run to run, 1 or 2 pool threads),
and what keeps the reference code (float64, 3-D pooling)."""

import itertools
import math

import numpy as np
import pytest

from minidl import config
from minidl.compute.onednn.pooling import Pool2DKernel
from minidl.functions.pooling import avg_pool2d, max_pool2d
from minidl.functions.pooling3d import max_pool3d
from minidl.tensor import Tensor

from tests.minidl.compute.onednn_support import (
    assert_close, assert_same_bits_on_one_and_two_threads, require_onednn)

require_onednn('its pooling')


torch = pytest.importorskip('torch')

# float32 tolerance, the same for every comparison, relative to the largest magnitude of the
# reference result: |actual - expected| <= TOLERANCE * max|expected|. A max is exact (it picks
# one float32 value); an average sums at most 12 unit normals and divides by the count, and an
# input cell's max gradient sums the output gradients of at most 4 overlapping windows: rounding
# of ~1e-7 of the largest value (1.2e-7 is seen, against PyTorch in float64). 3e-6 leaves
# twenty times that, and is far below what a wrong window, pad, stride, count, winner or a lost
# chunk gives (an O(1e-1..1) relative error).
TOLERANCE = 3e-6

FUNCTIONS = {'max': max_pool2d, 'average': avg_pool2d}


def _close(actual, expected, tolerance=TOLERANCE, name=''):
    assert_close(actual, expected, tolerance, name)


def _same_pads(size, window, stride):
    """TensorFlow's 'same': ceil(size / stride) outputs, the odd padded cell after."""
    total = max((math.ceil(size / stride) - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


class Case:
    """One pooling: x in (N, C, H, W), the call's arguments, and its output gradient."""

    def __init__(self, name, kind, batch, channels, size, window, strides=None,
                 padding='valid', data_format='channels_last'):
        self.name, self.kind = name, kind
        self.window = (window,) * 2 if isinstance(window, int) else window
        strides = self.window if strides is None else strides
        self.strides = (strides,) * 2 if isinstance(strides, int) else strides
        self.padding, self.data_format = padding, data_format
        rng = np.random.default_rng(sum(map(ord, name)))
        self.x_ncs = rng.standard_normal((batch, channels) + size).astype(np.float32)
        if padding == 'valid':
            self.pads = [(0, 0), (0, 0)]
        else:
            self.pads = [_same_pads(*args) for args in zip(size, self.window, self.strides)]
        self.grad_seed = rng.integers(1 << 30)

    def __str__(self):
        return self.name

    @property
    def channels_last(self):
        return self.data_format == 'channels_last'

    def to_minidl(self, array):
        """(N, C, H, W) -> minidl's layout."""
        if self.channels_last:
            return np.ascontiguousarray(np.moveaxis(array, 1, -1))
        return array

    def output_grad(self, shape):
        return np.random.default_rng(self.grad_seed).standard_normal(shape).astype(np.float32)

    def run_minidl(self, x_ncs=None, grad=None):
        """Output, input gradient and the Function's vendor kernel in minidl (in the dtype of
        ``x_ncs``, the case's float32 input by default)."""
        x_ncs = self.x_ncs if x_ncs is None else x_ncs
        x = Tensor(self.to_minidl(x_ncs), requires_grad=True, dtype=x_ncs.dtype)
        y = FUNCTIONS[self.kind](x, pool_size=self.window, strides=self.strides,
                                 padding=self.padding, data_format=self.data_format)
        vendor_kernel = y.creator.vendor_kernel  # read before backward releases the Function
        y.backward(self.output_grad(y.shape) if grad is None else grad(y.shape))
        return [y.numpy().copy(), x.grad.numpy().copy()], vendor_kernel

    def run_torch(self):
        """The same in PyTorch, in float64 from the same float32 input: the truth. Padded cells
        are -inf for a max (they never win) and are left out of an average's count."""
        functional = torch.nn.functional
        x = torch.tensor(self.x_ncs, dtype=torch.float64, requires_grad=True)
        flat_pads = [p for pair in reversed(self.pads) for p in pair]  # last axis first
        if self.kind == 'max':
            y = functional.max_pool2d(functional.pad(x, flat_pads, value=-math.inf),
                                      self.window, self.strides)
        else:
            def pool_sum(t):
                return functional.avg_pool2d(functional.pad(t, flat_pads), self.window,
                                             self.strides, divisor_override=1)
            y = pool_sum(x) / pool_sum(torch.ones_like(x))  # real cells only in the count
        grad = self.output_grad(self.to_minidl(np.empty(y.shape, np.float32)).shape)
        grad_ncs = grad if not self.channels_last else np.moveaxis(grad, -1, 1)
        y.backward(torch.tensor(np.ascontiguousarray(grad_ncs), dtype=torch.float64))
        return [self.to_minidl(y.detach().numpy()), self.to_minidl(x.grad.numpy())]


# 'same' cases name their (before, after) pads: the odd extra row/column goes after.
CASES = [
    # pads rows (0, 1), cols (0, 1); windows overlap along both axes
    Case('max-batch1-1channel-nonsquare-stride21-same', 'max', 1, 1, (6, 5), (3, 2), (2, 1),
         'same'),
    Case('avg-batch1-1channel-nonsquare-stride21-same', 'average', 1, 1, (6, 5), (3, 2),
         (2, 1), 'same'),
    # batch 5: chunks 2, 2, 1; pads rows (0, 1), cols (1, 1)
    Case('max-batch5-stride12-same-channels_first', 'max', 5, 3, (9, 7), (2, 3), (1, 2),
         'same', 'channels_first'),
    Case('avg-batch5-stride12-same-channels_first', 'average', 5, 3, (9, 7), (2, 3), (1, 2),
         'same', 'channels_first'),
    # batch 6: chunks 2, 2, 2; the last input row lies in no window
    Case('max-batch6-stride2-window3-valid', 'max', 6, 2, (8, 11), 3, 2),
    Case('avg-batch6-stride2-window3-valid-channels_first', 'average', 6, 2, (8, 11), 3, 2,
         data_format='channels_first'),
    # strides = window (Keras's default): tiled, the odd last row and column in no window
    Case('max-tiled-odd-image-valid-channels_first', 'max', 2, 4, (7, 7), 2,
         data_format='channels_first'),
    # stride 3 > window 2: some cells in no window
    Case('max-stride3-window2-valid', 'max', 2, 3, (8, 9), 2, 3),
    # pads rows (0, 1), cols (1, 2)
    Case('avg-batch3-1channel-wide-window-stride31-same', 'average', 3, 1, (5, 8), (3, 4),
         (3, 1), 'same'),
    Case('max-batch5-wide-window-stride31-same-channels_first', 'max', 5, 2, (5, 8), (3, 4),
         (3, 1), 'same', 'channels_first'),
]
MAX_CASES = [case for case in CASES if case.kind == 'max']


def test_the_cases_cover_uneven_same_padding():
    pads = [pair for case in CASES if case.padding == 'same' for pair in case.pads]
    assert all(after in (before, before + 1) for before, after in pads)
    assert sum(after == before + 1 for before, after in pads) >= 4  # the odd cell after
    assert any(before > 0 for before, _ in pads)  # padding before too


@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_torch(case, onednn_on):
    actual, vendor_kernel = case.run_minidl()
    assert isinstance(vendor_kernel, Pool2DKernel) and vendor_kernel.kind == case.kind
    expected = case.run_torch()
    for name, a, e in zip(['y', 'x grad'], actual, expected):
        assert a.dtype == np.float32, name
        _close(a, e)
    if case.kind == 'max':  # a max picks one of the float32 inputs: exact
        assert np.array_equal(actual[0], expected[0].astype(np.float32))


@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_the_reference_code(case, onednn_on, monkeypatch):
    actual, vendor_kernel = case.run_minidl()
    assert isinstance(vendor_kernel, Pool2DKernel)
    monkeypatch.setattr(config, 'use_onednn', 'never')
    expected, reference_kernel = case.run_minidl()
    assert reference_kernel is None
    for a, e in zip(actual, expected):
        _close(a, e)
    if case.kind == 'max':
        assert np.array_equal(actual[0], expected[0])


def _first_maximum_truth(case, x_ncs, grad_ncs):
    """Max pooling's output and input gradient, each window's gradient given to its first
    maximum in row-major window order among the real (unpadded) cells: the documented choice."""
    (top, _), (left, _) = case.pads
    height, width = x_ncs.shape[2:]
    y = np.empty(grad_ncs.shape, np.float32)
    grad_x = np.zeros(x_ncs.shape, np.float32)
    for n, c, i, j in itertools.product(*map(range, grad_ncs.shape)):
        cells = [(r, s) for r in range(i * case.strides[0] - top,
                                       i * case.strides[0] - top + case.window[0])
                 for s in range(j * case.strides[1] - left,
                                j * case.strides[1] - left + case.window[1])
                 if 0 <= r < height and 0 <= s < width]
        values = [x_ncs[n, c, r, s] for r, s in cells]
        r, s = cells[int(np.argmax(values))]  # argmax: the first maximum
        y[n, c, i, j] = x_ncs[n, c, r, s]
        grad_x[n, c, r, s] += grad_ncs[n, c, i, j]
    return y, grad_x


# Ties: a constant input (every cell of a window ties) and cells drawn from {0, 1}; integer
# output gradients, so that every sum is exact and the comparison is bitwise.
@pytest.mark.parametrize('values', ['constant', 'zeros-and-ones'])
@pytest.mark.parametrize('case', [MAX_CASES[0], MAX_CASES[1], MAX_CASES[4]], ids=str)
def test_max_pool_ties_go_to_the_first_maximum_in_row_major_window_order(
        case, values, onednn_on, monkeypatch):
    rng = np.random.default_rng(3)
    shape = case.x_ncs.shape
    x_ncs = (np.full(shape, 0.5, np.float32) if values == 'constant'
             else rng.integers(0, 2, shape).astype(np.float32))
    grads = {}

    def grad(shape):  # the same integer gradient for every run, in minidl's layout
        return grads.setdefault(shape, rng.integers(1, 9, shape).astype(np.float32))

    onednn, vendor_kernel = case.run_minidl(x_ncs, grad)
    assert isinstance(vendor_kernel, Pool2DKernel)
    monkeypatch.setattr(config, 'use_onednn', 'never')
    reference, _ = case.run_minidl(x_ncs, grad)
    (grad_shape,) = grads
    grad_ncs = grads[grad_shape] if not case.channels_last else np.moveaxis(grads[grad_shape],
                                                                             -1, 1)
    truth = [case.to_minidl(a) for a in _first_maximum_truth(case, x_ncs, grad_ncs)]
    for name, r, t in zip(['y', 'x grad'], reference, truth):
        assert np.array_equal(r, t), f'reference code, {name}'
    for name, o, t in zip(['y', 'x grad'], onednn, truth):
        assert np.array_equal(o, t), f'oneDNN, {name}'


@pytest.mark.parametrize('case', [CASES[2], CASES[3], CASES[4], CASES[5]], ids=str)
def test_the_onednn_path_really_runs_with_fast_implementations(case, onednn_on, executed):
    _, vendor_kernel = case.run_minidl()
    assert isinstance(vendor_kernel, Pool2DKernel)
    sizes = {stop - start for start, stop in vendor_kernel.chunks}
    assert len(vendor_kernel.chunks) == 3
    plans = [vendor_kernel._plan(size) for size in sizes]
    pools = []
    for plan in plans:  # both directions were made ...
        assert plan._backward is not None
        assert (plan.workspace_bytes > 0) == (case.kind == 'max')  # max keeps its winners
        pools += [plan.forward, plan.backward]
    ran = {id(p) for p in executed}
    assert all(id(p) in ran for p in pools)  # ... and run: one forward, one backward per chunk
    assert len(executed) == 2 * len(vendor_kernel.chunks) and ran == {id(p) for p in pools}
    for p in pools:
        assert not p.implementation.startswith('ref'), p.implementation


def test_never_runs_no_onednn_primitive(monkeypatch, executed):
    monkeypatch.setattr(config, 'use_onednn', 'never')
    for case in CASES[2:4]:
        _, vendor_kernel = case.run_minidl()
        assert vendor_kernel is None
    assert executed == []


@pytest.mark.parametrize('case', [CASES[0], CASES[3], CASES[4], CASES[9]], ids=str)
def test_onednn_is_bitwise_repeatable(case, onednn_on):
    first, _ = case.run_minidl()
    for _ in range(2):
        again, _ = case.run_minidl()
        for a, b in zip(first, again):
            assert np.array_equal(a, b)




# Batches of 5 and 6: chunks of unequal size (2, 2, 1 / 2, 2, 2), spread over both threads.
@pytest.mark.parametrize('fresh_primitives', [False, True], ids=['shared', 'made-for-each'])
@pytest.mark.parametrize('case', [CASES[3], CASES[4], CASES[9]], ids=str)
def test_one_and_two_pool_threads_give_the_same_bits(case, fresh_primitives, onednn_on,
                                                     monkeypatch):
    assert_same_bits_on_one_and_two_threads(
        monkeypatch, fresh_primitives, lambda: case.run_minidl()[0], ['y', 'x grad'])


@pytest.mark.parametrize('kind', ['max', 'average'])
def test_float64_keeps_the_reference_code(kind, onednn_on, executed):
    case = CASES[2] if kind == 'max' else CASES[3]
    (y, grad_x), vendor_kernel = case.run_minidl(case.x_ncs.astype(np.float64))
    assert vendor_kernel is None and executed == []
    assert y.dtype == grad_x.dtype == np.float64
    expected = case.run_torch()
    _close(y, expected[0])
    _close(grad_x, expected[1])


def test_max_pool3d_keeps_the_reference_code(onednn_on, executed):
    rng = np.random.default_rng(5)
    x_ncs = rng.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    x = Tensor(np.ascontiguousarray(np.moveaxis(x_ncs, 1, -1)), requires_grad=True)
    y = max_pool3d(x, pool_size=(2, 3, 2), strides=(1, 2, 2))
    assert y.creator.vendor_kernel is None
    grad = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(grad)
    assert executed == []
    truth_x = torch.tensor(x_ncs, dtype=torch.float64, requires_grad=True)
    truth_y = torch.nn.functional.max_pool3d(truth_x, (2, 3, 2), (1, 2, 2))
    truth_y.backward(torch.tensor(np.ascontiguousarray(np.moveaxis(grad, -1, 1)),
                                  dtype=torch.float64))
    _close(y, np.moveaxis(truth_y.detach().numpy(), 1, -1))
    _close(x.grad, np.moveaxis(truth_x.grad.numpy(), 1, -1))


def test_a_pool_worth_splitting_runs_in_chunks_with_the_reference_codes_bits(monkeypatch):
    # Without the conftest's tiny chunk work: the real threshold, on LeNet's first max pool
    # (W2 of the benchmarks). A window visit counts as VISIT_WORK multiply-adds, so this
    # pool's 64 images are cut in two; a max and its gradient are selections of float32
    # values (no window overlaps here), so the chunked oneDNN result is the reference
    # code's to the bit.
    from minidl.compute.onednn import pooling, primitive
    rng = np.random.default_rng(11)
    x = rng.standard_normal((64, 28, 28, 6)).astype(np.float32)
    grad = rng.standard_normal((64, 14, 14, 6)).astype(np.float32)
    results = []
    for use in ('always', 'never'):
        monkeypatch.setattr(config, 'use_onednn', use)
        tensor = Tensor(x, requires_grad=True)
        y = max_pool2d(tensor, 2)
        kernel = y.creator.vendor_kernel  # before backward releases the Function
        y.backward(grad)
        results.append((kernel, y.data, tensor.grad.data))
    (kernel, *onednn), (reference_kernel, *reference) = results
    assert isinstance(kernel, pooling.Pool2DKernel) and reference_kernel is None
    assert kernel.chunks == [(0, 32), (32, 64)]
    unsplit = 64 * 14 * 14 * 6 * 4  # window visits, counted as multiply-adds: one chunk
    assert unsplit < primitive.MIN_CHUNK_WORK <= unsplit * pooling.VISIT_WORK // 2
    for a, b in zip(onednn, reference):
        assert np.array_equal(a, b)
