"""oneDNN's LSTM and GRU (reset_after=True: oneDNN's linear-before-reset GRU) behind lstm / gru,
their bidirectional forms and the Keras layers: outputs, final states and gradients against a
float64 PyTorch loop and the reference loop, proof that the primitives ran, what keeps the
reference loop, and bitwise determinism (run to run, 1 or 2 pool threads, bidirectional against
its directions apart, inference against training, a trained model)."""

import collections
import contextlib

import numpy as np
import pytest

import minidl
from minidl import config, layers, models, no_grad, optimizers
from minidl.compute import vendor
from minidl.compute.onednn.rnn import RNNKernel
from minidl.functions.gru import bidirectional_gru, gru
from minidl.functions.lstm import bidirectional_lstm, lstm
from minidl.functions.rnn import _Recurrence
from minidl.tensor import Tensor

from tests.minidl.compute.onednn_support import (
    assert_close, assert_same_bits_on_one_and_two_threads, require_onednn)

require_onednn('its recurrences')


torch = pytest.importorskip('torch')

# float32 tolerance, the same for every comparison, relative to the largest magnitude of the
# reference result: |actual - expected| <= TOLERANCE * max|expected|. Each step's gates are
# float32 sums of at most 9 products, and each weight gradient a float32 sum over batch * steps
# (at most 35 terms here), which oneDNN, the reference loop and PyTorch round differently; the
# recurrence carries a step's rounding into the next ones, and backward through time adds up
# all steps'. 5.4e-7 at most is seen (oneDNN and the reference loop alike, against PyTorch in
# float64; 4.4e-7 between oneDNN and the reference loop). 5e-6 leaves ten times that, and is
# far below what a swapped gate block, a bias row in the wrong place, a step read in the wrong
# order or a lost chunk gives (an O(1e-2..1) relative error). A gradient that is exactly 0
# (the recurrent kernel's over one step from a zero state) must be exactly 0.
TOLERANCE = 5e-6
# Weights and predictions of a small Embedding-BiLSTM-GRU-Dense model after 6 Adam steps, oneDNN
# against the reference loop: each step's rounding differences (~1e-7) carry into the next and
# Adam's normalized steps enlarge those of small gradients. 4.5e-6 is seen (the embeddings);
# 5e-5 leaves ten times that, and training moves every weight a hundred times more (checked).
STATE_TOLERANCE = 5e-5


def _close(actual, expected, tolerance=TOLERANCE, name=''):
    assert_close(actual, expected, tolerance, name)


@contextlib.contextmanager
def _vendor_kernels():
    """Per LSTM / GRU Function run inside, in order: its directions' vendor_kernel."""
    seen = []
    forward = _Recurrence.forward

    def spy(self, *arrays):
        result = forward(self, *arrays)
        seen.append([part.vendor_kernel for part in self.parts])
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_Recurrence, 'forward', spy)
        yield seen


class Case:
    """One recurrence: x, each direction's Keras weights (bias or None), the initial states
    (or none) and a gradient for each output; a step mask and recurrent dropout masks may be
    set afterwards."""

    def __init__(self, name, cell, batch, steps, features, units, reverse=False, bias=True,
                 state=False, bidirectional=False, reset_after=True, dtype=np.float32):
        self.name, self.cell, self.reverse, self.reset_after = name, cell, reverse, reset_after
        self.bidirectional, self.dtype = bidirectional, dtype
        self.state_count = 2 if cell == 'lstm' else 1
        gates = 4 if cell == 'lstm' else 3
        directions = 2 if bidirectional else 1
        rng = np.random.default_rng(sum(map(ord, name)))

        def normal(*shape, scale=1.0):
            return (rng.standard_normal(shape) * scale).astype(dtype)

        bias_shape = (2, gates * units) if cell == 'gru' and reset_after else (gates * units,)
        self.x = normal(batch, steps, features)
        self.weights = [(normal(features, gates * units, scale=0.5),
                         normal(units, gates * units, scale=0.5),
                         normal(*bias_shape, scale=0.5) if bias else None)
                        for _ in range(directions)]
        self.states = ([normal(batch, units) for _ in range(directions * self.state_count)]
                       if state else [])
        self.grads = ([normal(batch, steps, directions * units)]
                      + [normal(batch, units) for _ in range(directions * self.state_count)])
        self.mask = self.dropout = None  # (N, T) and one (N, u) per direction

    def __str__(self):
        return self.name

    def names(self):
        finals = ['h_last', 'c_last'][:self.state_count]
        directions = [''] + ([' backward'] if self.bidirectional else [])
        weights = [w for w in ('kernel', 'recurrent kernel', 'bias')
                   if w != 'bias' or self.weights[0][2] is not None]
        return (['outputs'] + [f + d for d in directions for f in finals] + ['x grad']
                + [f'{w}{d} grad' for d in directions for w in weights]
                + [f'{s}{d} grad' for d in directions for s in ['h0', 'c0'][:self.state_count]
                   if self.states])

    def call(self, x, weights, states, mask=None, dropout=None):
        """The public function's outputs (the sequence, then the final states)."""
        options = {'mask': mask, 'recurrent_dropout_mask': dropout}
        if self.cell == 'gru':
            options['reset_after'] = self.reset_after
        if self.bidirectional:
            function = bidirectional_lstm if self.cell == 'lstm' else bidirectional_gru
            return function(x, *weights, tuple(states) or None, **options)
        if self.cell == 'lstm':
            return lstm(x, *weights[0], tuple(states) or None, reverse=self.reverse, **options)
        return gru(x, *weights[0], states[0] if states else None, reverse=self.reverse,
                   **options)

    def run_minidl(self, needs_grad=True):
        """Outputs, final states and the gradients (x, each direction's weights, the initial
        states), as :meth:`names`, and the directions' vendor kernels."""
        def leaf(array):
            return None if array is None else Tensor(array, requires_grad=needs_grad,
                                                     dtype=array.dtype)

        x = leaf(self.x)
        weights = [tuple(leaf(w) for w in direction) for direction in self.weights]
        states = [leaf(s) for s in self.states]
        dropout = self.dropout
        if dropout is not None and not self.bidirectional:
            dropout = dropout[0]
        with _vendor_kernels() as seen:
            outputs = self.call(x, weights, states, self.mask, dropout)
        (kernels,) = seen
        arrays = [out.numpy() for out in outputs]
        if needs_grad:
            sum((out * Tensor(g, dtype=g.dtype)).sum()
                for out, g in zip(outputs, self.grads)).backward()
            arrays += [t.grad.numpy() for t in [x] + [w for d in weights for w in d] + states
                       if t is not None]
        return [np.array(a, copy=True) for a in arrays], kernels

    def run_torch(self):
        """The same by the cell equations in a float64 PyTorch loop, from the same operands."""
        def leaf(array):
            return None if array is None else torch.tensor(array, dtype=torch.float64,
                                                           requires_grad=True)

        x = leaf(self.x)
        weights = [[leaf(w) for w in direction] for direction in self.weights]
        states = [leaf(s) for s in self.states]
        batch, steps, _ = self.x.shape
        units = self.weights[0][1].shape[0]
        valid = None if self.mask is None else torch.tensor(self.mask != 0)
        sequences, finals = [], []
        for d, (kernel, recurrent, bias) in enumerate(weights):
            initial = (states[d * self.state_count:(d + 1) * self.state_count]
                       or [torch.zeros(batch, units, dtype=torch.float64)] * self.state_count)
            dropout = None if self.dropout is None else torch.tensor(self.dropout[d],
                                                                     dtype=torch.float64)
            sequence, last = _torch_loop(self.cell, self.reset_after, x, kernel, recurrent,
                                         bias, initial, d == 1 or self.reverse, valid, dropout)
            sequences.append(sequence)
            finals += last
        outputs = [torch.cat(sequences, dim=-1)] + finals
        sum((out * torch.tensor(g, dtype=torch.float64)).sum()
            for out, g in zip(outputs, self.grads)).backward()
        leaves = [x] + [w for d in weights for w in d if w is not None] + states
        return [out.detach().numpy() for out in outputs] + [t.grad.numpy() for t in leaves]


def _torch_loop(cell, reset_after, x, kernel, recurrent, bias, states, reverse, valid, dropout):
    """One direction, step by step (Keras 2's equations: LSTM gates i, f, c, o; GRU z, r, h):
    the outputs aligned with the input steps and the final states."""
    units = recurrent.shape[0]
    steps = x.shape[1]
    sigmoid, tanh = torch.sigmoid, torch.tanh
    outputs = [None] * steps
    for t in (reversed(range(steps)) if reverse else range(steps)):
        projected = x[:, t] @ kernel
        h = states[0] if dropout is None else states[0] * dropout  # enters the products only
        if cell == 'lstm':
            i, f, c, o = (projected + h @ recurrent
                          + (0 if bias is None else bias)).split(units, dim=1)
            c_next = sigmoid(f) * states[1] + sigmoid(i) * tanh(c)
            new = [sigmoid(o) * tanh(c_next), c_next]
        else:
            if reset_after:  # h~ = tanh(x W_h + b_xh + r * (h U_h + b_hh))
                x_bias, h_bias = (0, 0) if bias is None else (bias[0], bias[1])
                xz, xr, xh = (projected + x_bias).split(units, dim=1)
                hz, hr, hh = (h @ recurrent + h_bias).split(units, dim=1)
                z, r = sigmoid(xz + hz), sigmoid(xr + hr)
                candidate = tanh(xh + r * hh)
            else:  # h~ = tanh(x W_h + b_h + (r * h) U_h)
                xz, xr, xh = (projected + (0 if bias is None else bias)).split(units, dim=1)
                uz, ur, uh = recurrent.split(units, dim=1)
                z, r = sigmoid(xz + h @ uz), sigmoid(xr + h @ ur)
                candidate = tanh(xh + (r * h) @ uh)
            new = [z * states[0] + (1 - z) * candidate]
        if valid is not None:  # a masked step carries the states over
            new = [torch.where(valid[:, t, None], n, s) for n, s in zip(new, states)]
        states = new
        outputs[t] = states[0]
    return torch.stack(outputs, dim=1), states


CASES = [
    Case('lstm-batch1-1feature', 'lstm', 1, 6, 1, 3),
    Case('lstm-batch5-uneven-chunks-reverse-state', 'lstm', 5, 7, 4, 5, reverse=True,
         state=True),
    Case('lstm-1step-nobias-state', 'lstm', 3, 1, 2, 4, bias=False, state=True),
    Case('lstm-nobias-reverse-batch4', 'lstm', 4, 5, 3, 2, reverse=True, bias=False),
    Case('lstm-bidirectional-batch5-state', 'lstm', 5, 4, 3, 3, state=True, bidirectional=True),
    Case('lstm-bidirectional-batch1-1step-nobias', 'lstm', 1, 1, 2, 3, bias=False,
         bidirectional=True),
    Case('gru-batch1-1feature', 'gru', 1, 6, 1, 3),
    Case('gru-batch5-uneven-chunks-reverse-state', 'gru', 5, 7, 4, 5, reverse=True, state=True),
    Case('gru-1step-nobias-state', 'gru', 3, 1, 2, 4, bias=False, state=True),
    Case('gru-nobias-reverse-batch4', 'gru', 4, 5, 3, 2, reverse=True, bias=False),
    Case('gru-bidirectional-batch5-state', 'gru', 5, 4, 3, 3, state=True, bidirectional=True),
    Case('gru-bidirectional-batch1-1step-nobias', 'gru', 1, 1, 2, 3, bias=False,
         bidirectional=True),
    Case('lstm-1unit-reverse-state', 'lstm', 3, 6, 2, 1, reverse=True, state=True),
    Case('gru-1unit-reverse-state', 'gru', 3, 6, 2, 1, reverse=True, state=True),
    Case('lstm-bidirectional-1unit-batch1', 'lstm', 1, 5, 4, 1, bidirectional=True),
]
LSTM_CASE, GRU_CASE = CASES[1], CASES[7]  # batch 5: chunks of 3 and 2
BIDIRECTIONAL = [CASES[4], CASES[10]]


def _all_onednn(case, kernels):
    assert len(kernels) == (2 if case.bidirectional else 1)
    return all(type(k) is RNNKernel for k in kernels)


@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_torch(case, onednn_on):
    actual, kernels = case.run_minidl()
    assert _all_onednn(case, kernels)
    expected = case.run_torch()
    names = case.names()
    assert len(actual) == len(expected) == len(names)
    for name, a, e in zip(names, actual, expected):
        assert a.dtype == np.float32, name
        _close(a, e, name=name)


@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_the_reference_loop(case, onednn_on, monkeypatch):
    actual, kernels = case.run_minidl()
    assert _all_onednn(case, kernels)
    monkeypatch.setattr(config, 'use_onednn', 'never')
    expected, reference = case.run_minidl()
    assert reference == [None] * len(kernels)
    for name, a, e in zip(case.names(), actual, expected):
        _close(a, e, name=name)


# oneDNN names its RNN driver 'ref:any' although the cell's products run its jit GEMMs, so
# unlike the convolution's this test does not assert 'not ref': it asserts that each
# direction's own forward and backward RNN primitives ran, once per batch chunk, on one thread.
@pytest.mark.parametrize('case', [LSTM_CASE, GRU_CASE] + BIDIRECTIONAL, ids=str)
def test_the_onednn_primitives_really_run(case, onednn_on, executed):
    _, kernels = case.run_minidl()
    assert _all_onednn(case, kernels)
    ran = collections.Counter(id(p) for p in executed)
    rnn_primitives, reorders = set(), set()
    for kernel in kernels:
        sizes = collections.Counter(stop - start for start, stop in kernel.chunks)
        assert sum(sizes.values()) == min(2, case.x.shape[0])
        for size, chunks in sizes.items():
            plan = kernel._plan(size, training=True)
            for p in (plan.forward, plan.backward):
                assert ran[id(p)] == chunks, p.implementation  # forward and backward, each chunk
                assert p.implementation and p.omp_threads == 1
                rnn_primitives.add(id(p))
            reorders.update(id(r) for r in plan.reorders.values())
    assert len(rnn_primitives) == 2 * len(kernels) * len(set(  # every direction its own
        stop - start for start, stop in kernels[0].chunks))
    for p in executed:  # the rest reorder the Keras weights into the primitives' layouts
        assert id(p) in rnn_primitives | reorders, p.implementation


@pytest.mark.parametrize('case', [LSTM_CASE, GRU_CASE, CASES[4]], ids=str)
def test_sequences_reach_onednn_time_major_and_contiguous(case, onednn_on, monkeypatch):
    # oneDNN 3.2 does the backward's input-weight products of all steps as one GEMM only for
    # a sequence with a trivial time stride (rnn_utils.hpp, merge_gemm_layer); a batch-major
    # (N, T, X) array, or a chunk of a time-major one, would cost a thin product per step.
    from minidl.compute.onednn import constants, primitive
    handed = []
    execute = primitive.Primitive.execute

    def spy(self, arrays):
        if constants.SRC_ITER in arrays:  # the recurrences' primitives
            handed.append(arrays)
        return execute(self, arrays)

    monkeypatch.setattr(primitive.Primitive, 'execute', spy)
    _, kernels = case.run_minidl()
    assert _all_onednn(case, kernels)
    batch, steps, features = case.x.shape
    units = case.weights[0][1].shape[0]
    sizes = [stop - start for kernel in kernels for start, stop in kernel.chunks]
    assert max(sizes) < batch  # chunks: none of them a time-major array's view
    # each chunk's forward and backward (the chunks run side by side, in any order)
    assert sorted(arrays[constants.SRC].shape[1] for arrays in handed) == sorted(sizes * 2)
    for arrays in handed:
        rows = arrays[constants.SRC].shape[1]
        for arg, width in ((constants.SRC, features), (constants.DST, units),
                           (constants.DIFF_DST, units), (constants.DIFF_SRC, features)):
            if arg in arrays:
                assert arrays[arg].shape == (steps, rows, width), arg
                assert arrays[arg].flags.c_contiguous, arg


def test_never_runs_no_onednn_primitive(monkeypatch, executed):
    monkeypatch.setattr(config, 'use_onednn', 'never')
    for case in [LSTM_CASE, GRU_CASE] + BIDIRECTIONAL:
        _, kernels = case.run_minidl()
        assert kernels == [None] * len(kernels)
    assert executed == []


def _with(case, name, mask=None, dropout=None, **changes):
    """``case`` with other settings (a new Case: the same shapes, other numbers)."""
    batch, steps, features = case.x.shape
    units = case.weights[0][1].shape[0]
    settings = dict(reverse=case.reverse, bias=case.weights[0][2] is not None,
                    state=bool(case.states), bidirectional=case.bidirectional)
    settings.update(changes)
    changed = Case(name, case.cell, batch, steps, features, units, **settings)
    changed.mask = mask(changed) if mask else None
    changed.dropout = dropout(changed) if dropout else None
    return changed


def _one_invalid_step(case):
    mask = np.ones(case.x.shape[:2], bool)
    mask[1, -2] = False
    return mask


def _dropout(case):
    rng = np.random.default_rng(3)
    return [(rng.random(s.shape) > 0.3).astype(case.dtype) / 0.7
            for s in case.grads[1::case.state_count]]  # one (N, u) per direction


def _dropout_of_ones(case):
    return [np.ones(s.shape, case.dtype) for s in case.grads[1::case.state_count]]


def _padded(case):
    """Padding at the end: the first sample keeps every step, the others 1 to T - 1."""
    batch, steps = case.x.shape[:2]
    lengths = [steps] + [1 + i % (steps - 1) for i in range(batch - 1)]
    return np.arange(steps)[None] < np.array(lengths)[:, None]


def _an_empty_sample(case):
    mask = _padded(case)
    mask[1] = False
    return mask


PADDED_GRUS = [
    _with(GRU_CASE, 'gru-padded', mask=_padded, reverse=False, state=False),
    _with(GRU_CASE, 'gru-reverse-state-padded', mask=_padded),
    _with(CASES[10], 'gru-bidirectional-state-padded', mask=_padded),
]


@pytest.mark.parametrize('case', PADDED_GRUS, ids=str)
def test_padding_at_the_end_runs_a_grus_directions_on_onednn(case, onednn_on):
    # rnn_ragged: the kernel runs every step; the gathers around it give Keras's carried
    # states and their gradients, which PyTorch's step loop (in float64) computes here.
    assert not case.mask.all() and case.mask[:, 0].all()
    actual, kernels = case.run_minidl()
    assert _all_onednn(case, kernels)
    for name, a, e in zip(case.names(), actual, case.run_torch()):
        _close(a, e, name=name)


KEPT_BY_THE_REFERENCE_LOOP = [
    _with(LSTM_CASE, 'lstm-padded', mask=_padded),  # its final cell state is in no output
    _with(GRU_CASE, 'gru-an-empty-sample', mask=_an_empty_sample),
    _with(LSTM_CASE, 'lstm-invalid-step', mask=_one_invalid_step),
    _with(GRU_CASE, 'gru-invalid-step', mask=_one_invalid_step),
    _with(CASES[4], 'lstm-bidirectional-invalid-step', mask=_one_invalid_step),
    _with(LSTM_CASE, 'lstm-recurrent-dropout', dropout=_dropout),
    _with(CASES[10], 'gru-bidirectional-recurrent-dropout', dropout=_dropout),
    _with(GRU_CASE, 'gru-reset-before', reset_after=False),
    _with(CASES[11], 'gru-bidirectional-reset-before', reset_after=False),
    _with(LSTM_CASE, 'lstm-float64', dtype=np.float64),
    _with(GRU_CASE, 'gru-float64', dtype=np.float64),
]


@pytest.mark.parametrize('case', KEPT_BY_THE_REFERENCE_LOOP, ids=str)
def test_what_onednn_does_not_serve_keeps_the_reference_loop(case, onednn_on, executed):
    actual, kernels = case.run_minidl()
    assert kernels == [None] * len(kernels) and executed == []
    for name, a, e in zip(case.names(), actual, case.run_torch()):
        assert a.dtype == case.dtype, name
        _close(a, e, name=name)


@pytest.mark.parametrize('case', [
    _with(LSTM_CASE, 'lstm-all-valid-mask', mask=lambda c: np.ones(c.x.shape[:2], bool)),
    _with(CASES[10], 'gru-bidirectional-all-valid-mask',
          mask=lambda c: np.ones(c.x.shape[:2], np.float32)),
    _with(GRU_CASE, 'gru-dropout-of-ones', dropout=_dropout_of_ones),
], ids=str)
def test_an_all_valid_mask_or_a_dropout_of_ones_runs_onednn(case, onednn_on):
    actual, kernels = case.run_minidl()
    assert _all_onednn(case, kernels)
    options = case.mask, case.dropout
    case.mask = case.dropout = None
    try:
        plain, _ = case.run_minidl()
    finally:
        case.mask, case.dropout = options
    for name, a, b in zip(case.names(), actual, plain):
        assert np.array_equal(a, b), name  # computed as the call without them


@pytest.mark.parametrize('case', [CASES[0], LSTM_CASE, GRU_CASE] + BIDIRECTIONAL, ids=str)
def test_onednn_is_bitwise_repeatable(case, onednn_on):
    first, _ = case.run_minidl()
    for _ in range(2):
        again, _ = case.run_minidl()
        for name, a, b in zip(case.names(), first, again):
            assert np.array_equal(a, b), name


def _through_onednn(case):
    """A run of ``case`` whose every direction went through oneDNN."""
    def run():
        arrays, kernels = case.run_minidl()
        assert _all_onednn(case, kernels)
        return arrays

    return run


@pytest.mark.parametrize('fresh_primitives', [False, True], ids=['shared', 'fresh'])
@pytest.mark.parametrize('case', [LSTM_CASE, GRU_CASE, CASES[4]], ids=str)
def test_one_and_two_pool_threads_give_the_same_bits(case, fresh_primitives, onednn_on,
                                                       monkeypatch):
    assert_same_bits_on_one_and_two_threads(monkeypatch, fresh_primitives,
                                            _through_onednn(case), case.names())


@pytest.mark.parametrize('case', BIDIRECTIONAL, ids=str)
def test_bidirectional_equals_its_directions_run_apart(case, onednn_on):
    fused, _ = case.run_minidl()
    apart = []
    for d, reverse in enumerate([False, True]):
        alone = _with(case, f'{case.name}-{d}', bidirectional=False, reverse=reverse)
        count = case.state_count
        alone.x, alone.weights = case.x, case.weights[d:d + 1]
        alone.states = case.states[d * count:(d + 1) * count]
        alone.grads = ([np.array_split(case.grads[0], 2, axis=-1)[d]]
                       + case.grads[1 + d * count:1 + (d + 1) * count])
        arrays, kernels = alone.run_minidl()
        assert _all_onednn(alone, kernels)
        apart.append(arrays)
    finals = case.state_count
    weights = 3 if case.weights[0][2] is not None else 2

    def split(arrays):  # outputs and final states, x grad, weight grads, initial state grads
        return (arrays[:1 + finals], arrays[1 + finals], arrays[2 + finals:2 + finals + weights],
                arrays[2 + finals + weights:])

    (outputs, x_grad, weight_grads, state_grads), backward = map(split, apart)
    together = ([np.concatenate([outputs[0], backward[0][0]], axis=-1)] + outputs[1:]
                + backward[0][1:] + [x_grad + backward[1]]  # the fused Function adds them so
                + weight_grads + backward[2] + state_grads + backward[3])
    assert len(together) == len(fused)
    for name, a, b in zip(case.names(), fused, together):
        assert np.array_equal(a, b), name


@pytest.mark.parametrize('case', [CASES[0], LSTM_CASE, GRU_CASE] + BIDIRECTIONAL, ids=str)
def test_inference_agrees_with_training(case, onednn_on):
    # oneDNN's inference forward rounds differently from its training forward on some shapes
    # (test_onednn_rnn_inference.py): the two agree to float32 rounding.
    trained, training_kernels = case.run_minidl()
    with no_grad():
        inferred, inference_kernels = case.run_minidl(needs_grad=False)
    assert _all_onednn(case, training_kernels) and _all_onednn(case, inference_kernels)
    assert not any(k.training for k in inference_kernels)
    assert len(inferred) == len(case.grads)  # the outputs and final states
    for name, a, b in zip(case.names(), inferred, trained):
        assert_close(a, b, 1e-6, name)


def _train(monkeypatch, use_onednn):
    monkeypatch.setattr(config, 'use_onednn', use_onednn)
    vendor.forget()
    minidl.set_seed(7)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 9, (12, 6))
    y = rng.integers(0, 3, 12)
    model = models.Sequential([
        layers.Embedding(9, 4, input_length=6),
        layers.Bidirectional(layers.LSTM(5, return_sequences=True)),
        layers.GRU(4, reset_after=True),
        layers.Dense(3, activation='softmax')])
    model.compile(optimizers.Adam(0.01), 'sparse_categorical_crossentropy')
    initial = model.get_weights()
    with _vendor_kernels() as seen:
        model.fit(x, y, batch_size=5, epochs=2, verbose=0, shuffle=False)  # batches 5, 5, 2
        trained = len(seen)
        predictions = model.predict(x, batch_size=5)
    assert trained == 2 * 6 and len(seen) == 2 * 9  # (LSTM, GRU) per batch, 3 a epoch
    onednn = use_onednn == 'always'
    assert all((type(k) is RNNKernel) == onednn for kernels in seen for k in kernels)
    if onednn:  # predict runs the kernels made for inference
        # 3 kernels (2 directions of the LSTM, the GRU) a batch: 6 batches, then 3 to predict
        assert [k.training for kernels in seen for k in kernels] == [True] * 18 + [False] * 9
    assert [len(kernels) for kernels in seen[:2]] == [2, 1]  # one bidirectional LSTM, then GRU
    weights = model.get_weights()
    # Training moved every weight far beyond the state tolerance: the comparison says something.
    for before, after in zip(initial, weights):
        assert np.abs(after - before).max() > 100 * STATE_TOLERANCE * np.abs(after).max()
    return weights + [predictions]


def test_training_an_lstm_gru_model_with_onednn_repeats_and_matches_the_reference(monkeypatch):
    first = _train(monkeypatch, 'always')
    second = _train(monkeypatch, 'always')
    reference = _train(monkeypatch, 'never')
    vendor.forget()
    # embeddings; 2 x LSTM kernel, recurrent kernel, bias; GRU's; Dense kernel, bias; predictions
    assert len(first) == len(second) == len(reference) == 1 + 6 + 3 + 2 + 1
    for a, b, r in zip(first, second, reference):
        assert np.array_equal(a, b)
        _close(a, r, STATE_TOLERANCE)
