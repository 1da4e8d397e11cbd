"""Step masks and recurrent dropout masks of the fused recurrences.

Oracles: PyTorch's packed sequences (LSTM and reset-after GRU, post-padded),
a per-sample Python step loop in numpy written here (every cell, any mask
pattern, recurrent dropout), hand-checked carried states, and float64 finite
differences.
"""

import numpy as np
import pytest

from minidl import Tensor
from minidl.functions.gru import GRUResetAfter, GRUResetBefore, bidirectional_gru, gru
from minidl.functions.lstm import LSTM, bidirectional_lstm, lstm
from minidl.functions.rnn import SimpleRNN, bidirectional_simple_rnn, simple_rnn
from tests.gradcases import GradCase, random, run_gradcheck
from tests.minidl.functions.test_gru import keras_to_torch
from tests.minidl.functions.test_rnn import F, N, U, assert_close, weights

GATES = {'rnn': 1, 'lstm': 4, 'gru_after': 3, 'gru_before': 3}

# ----- gradient checks ------------------------------------------------------------

STEPS = 4
MASK = np.array([[1, 0, 1, 1], [0, 1, 1, 0]], bool)  # a gap, leading and trailing padding
DROP = np.array([[4 / 3, 0], [0, 4 / 3]])  # rate 0.25, (N, U)
DROP_BACK = np.array([[0, 4 / 3], [4 / 3, 4 / 3]])
x_check = random(N, STEPS, F)
after, before = weights(3, bias_shape=(2, 3 * U)), weights(3)

GRADCHECK_CASES = [
    GradCase(SimpleRNN, lambda x, k, r, b: simple_rnn(x, k, r, b, mask=MASK),
             [x_check] + weights(1), 'mask'),
    GradCase(SimpleRNN, lambda x, k, r, b, h: simple_rnn(
                 x, k, r, b, h, reverse=True, activation='linear', mask=MASK,
                 recurrent_dropout_mask=DROP),
             [x_check] + weights(1) + [random(N, U, seed=7)], 'reverse-mask-dropout'),
    GradCase(SimpleRNN, lambda x, k, r, b, k2, r2, b2: bidirectional_simple_rnn(
                 x, (k, r, b), (k2, r2, b2), mask=MASK, recurrent_dropout_mask=(DROP, DROP_BACK)),
             [x_check] + weights(1) + weights(1, seed=4), 'bidirectional-mask-dropout'),
    GradCase(LSTM, lambda x, k, r, b, h, c: lstm(x, k, r, b, (h, c), mask=MASK),
             [x_check] + weights(4) + [random(N, U, seed=7), random(N, U, seed=8)], 'mask'),
    GradCase(LSTM, lambda x, k, r, b: lstm(x, k, r, b, reverse=True, recurrent_dropout_mask=DROP),
             [x_check] + weights(4), 'reverse-dropout'),
    GradCase(LSTM, lambda x, k, r, b, k2, r2, b2: bidirectional_lstm(
                 x, (k, r, b), (k2, r2, b2), mask=MASK, recurrent_dropout_mask=(DROP, DROP_BACK)),
             [x_check] + weights(4) + weights(4, seed=4), 'bidirectional-mask-dropout'),
    GradCase(GRUResetAfter, lambda x, k, r, b, h: gru(x, k, r, b, h, mask=MASK,
                                                       recurrent_dropout_mask=DROP),
             [x_check] + after + [random(N, U, seed=7)], 'mask-dropout'),
    GradCase(GRUResetAfter, lambda x, k, r, b, k2, r2, b2: bidirectional_gru(
                 x, (k, r, b), (k2, r2, b2), mask=MASK, recurrent_dropout_mask=(DROP, DROP_BACK)),
             [x_check] + after + weights(3, seed=4, bias_shape=(2, 3 * U)),
             'bidirectional-mask-dropout'),
    GradCase(GRUResetBefore, lambda x, k, r, b, h: gru(
                 x, k, r, b, h, reset_after=False, reverse=True, mask=MASK,
                 recurrent_dropout_mask=DROP),
             [x_check] + before + [random(N, U, seed=7)], 'reverse-mask-dropout'),
    GradCase(GRUResetBefore, lambda x, k, r, b, k2, r2, b2: bidirectional_gru(
                 x, (k, r, b), (k2, r2, b2), reset_after=False, mask=MASK,
                 recurrent_dropout_mask=(DROP, DROP_BACK)),
             [x_check] + before + weights(3, seed=4), 'bidirectional-mask-dropout'),
    GradCase(GRUResetAfter, lambda x, k, r, b, k2, r2, b2, h, h2: bidirectional_gru(
                 x, (k, r, b), (k2, r2, b2), (h, h2), mask=MASK),
             [x_check] + after + weights(3, seed=4, bias_shape=(2, 3 * U))
             + [random(N, U, seed=7), random(N, U, seed=8)], 'bidirectional-initial-state'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


# ----- a per-sample numpy step loop ------------------------------------------------

def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def reference_step(kind, x_t, h, c, kernel, recurrent, bias, dropout):
    """One step of one sample (vectors); returns the new ``(h, c)``."""
    units, dropped = h.shape[0], h * dropout
    if kind == 'rnn':
        return np.tanh(x_t @ kernel + dropped @ recurrent + bias), c
    if kind == 'lstm':
        i, f, g, o = np.split(x_t @ kernel + dropped @ recurrent + bias, 4)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        return sigmoid(o) * np.tanh(c), c
    if kind == 'gru_after':
        projected, recurrent_projected = x_t @ kernel + bias[0], dropped @ recurrent + bias[1]
        z = sigmoid(projected[:units] + recurrent_projected[:units])
        r = sigmoid(projected[units:2 * units] + recurrent_projected[units:2 * units])
        candidate = np.tanh(projected[2 * units:] + r * recurrent_projected[2 * units:])
    else:  # gru_before: both recurrent products read the dropped state
        projected = x_t @ kernel + bias
        z = sigmoid(projected[:units] + dropped @ recurrent[:, :units])
        r = sigmoid(projected[units:2 * units] + dropped @ recurrent[:, units:2 * units])
        candidate = np.tanh(projected[2 * units:] + (r * dropped) @ recurrent[:, 2 * units:])
    return z * h + (1 - z) * candidate, c


def reference(kind, x, kernel, recurrent, bias, mask=None, dropout=None, reverse=False,
              h0=None):
    """Keras 2's masked recurrence, one sample and one step at a time, in float64."""
    batch, steps, _ = x.shape
    units = recurrent.shape[0]
    outputs, h_last, c_last = np.zeros((batch, steps, units)), [], []
    for n in range(batch):
        h = np.zeros(units) if h0 is None else h0[n].astype(np.float64)
        c = np.zeros(units)
        for t in (reversed(range(steps)) if reverse else range(steps)):
            if mask is None or mask[n, t]:
                h, c = reference_step(kind, x[n, t], h, c, kernel, recurrent, bias,
                                      1.0 if dropout is None else dropout[n])
            outputs[n, t] = h  # at a masked step: the carried state
        h_last.append(h)
        c_last.append(c)
    return outputs, np.array(h_last), np.array(c_last)


def problem(kind, batch=4, steps=6, features=3, units=5, seed=0):
    """float64 input and weights of one cell kind."""
    rng = np.random.default_rng(seed)
    gates = GATES[kind]
    bias_shape = (2, gates * units) if kind == 'gru_after' else (gates * units,)
    return (rng.standard_normal((batch, steps, features)),
            rng.standard_normal((features, gates * units)) * 0.5,
            rng.standard_normal((units, gates * units)) * 0.5,
            rng.standard_normal(bias_shape) * 0.5)


def run_kind(kind, x, kernel, recurrent, bias, **options):
    """The minidl function of ``kind``, with its final states as numpy arrays."""
    if kind == 'rnn':
        return [t.numpy() for t in simple_rnn(x, kernel, recurrent, bias, **options)]
    if kind == 'lstm':
        return [t.numpy() for t in lstm(x, kernel, recurrent, bias, **options)]
    return [t.numpy() for t in gru(x, kernel, recurrent, bias,
                                   reset_after=kind == 'gru_after', **options)]


def random_mask(batch, steps, seed):
    mask = np.random.default_rng(seed).random((batch, steps)) < 0.6
    mask[0] = False  # a sample with no valid step keeps its initial state
    return mask


@pytest.mark.parametrize('kind', list(GATES))
@pytest.mark.parametrize('reverse', [False, True])
def test_any_mask_pattern_matches_the_step_loop(kind, reverse):
    x, kernel, recurrent, bias = problem(kind)
    mask = random_mask(4, 6, seed=3)
    got = run_kind(kind, x, kernel, recurrent, bias, mask=mask, reverse=reverse)
    want = reference(kind, x, kernel, recurrent, bias, mask=mask, reverse=reverse)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('kind', list(GATES))
def test_recurrent_dropout_matches_the_step_loop(kind):
    x, kernel, recurrent, bias = problem(kind)
    dropout = (np.random.default_rng(4).random((4, 5)) < 0.7) / 0.7
    got = run_kind(kind, x, kernel, recurrent, bias, recurrent_dropout_mask=dropout,
                   mask=random_mask(4, 6, seed=5))
    want = reference(kind, x, kernel, recurrent, bias, dropout=dropout,
                     mask=random_mask(4, 6, seed=5))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('bidirectional', ['lstm', 'gru_after', 'gru_before', 'rnn'])
def test_bidirectional_masks_match_two_step_loops(bidirectional):
    x, *ahead = problem(bidirectional, seed=1)
    _, *behind = problem(bidirectional, seed=2)
    mask = random_mask(4, 6, seed=6)
    rng = np.random.default_rng(7)
    dropouts = [(rng.random((4, 5)) < 0.5) * 2.0 for _ in range(2)]
    options = dict(mask=mask, recurrent_dropout_mask=tuple(dropouts))
    if bidirectional == 'lstm':
        got = bidirectional_lstm(x, ahead, behind, **options)
    elif bidirectional == 'rnn':
        got = bidirectional_simple_rnn(x, ahead, behind, **options)
    else:
        got = bidirectional_gru(x, ahead, behind, reset_after=bidirectional == 'gru_after',
                                **options)
    got = [t.numpy() for t in got]
    forward = reference(bidirectional, x, *ahead, mask=mask, dropout=dropouts[0])
    backward = reference(bidirectional, x, *behind, mask=mask, dropout=dropouts[1],
                         reverse=True)
    finals = 2 if bidirectional == 'lstm' else 1
    want = ([np.concatenate([forward[0], backward[0]], axis=-1)]
            + list(forward[1:1 + finals]) + list(backward[1:1 + finals]))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# ----- carried states, by hand ------------------------------------------------------

def test_masked_steps_output_the_carried_state():
    x, kernel, recurrent, bias = problem('lstm')
    h0, c0 = np.full((4, 5), 0.25), np.full((4, 5), -0.5)
    mask = random_mask(4, 6, seed=8)
    mask[1, 0] = False
    outputs, h_last, c_last = (t.numpy() for t in lstm(x, kernel, recurrent, bias, (h0, c0),
                                                      mask=mask))
    for n, t in zip(*np.nonzero(~mask)):
        carried = h0[n] if t == 0 else outputs[n, t - 1]
        np.testing.assert_array_equal(outputs[n, t], carried)
    np.testing.assert_array_equal(h_last[0], h0[0])  # no valid step at all
    np.testing.assert_array_equal(c_last[0], c0[0])


def test_leading_padding_outputs_the_initial_state_and_trailing_repeats_the_last():
    x, kernel, recurrent, bias = problem('gru_after')
    mask = np.zeros((4, 6), bool)
    mask[:, 2:5] = True
    outputs, h_last = (t.numpy() for t in gru(x, kernel, recurrent, bias, mask=mask))
    assert (outputs[:, :2] == 0).all()
    np.testing.assert_array_equal(outputs[:, 5], outputs[:, 4])
    np.testing.assert_array_equal(h_last, outputs[:, 4])
    # The valid part alone, from the zero state, gives the same numbers.
    alone, _ = gru(x[:, 2:5], kernel, recurrent, bias)
    np.testing.assert_allclose(outputs[:, 2:5], alone.numpy(), rtol=1e-12, atol=1e-14)


def test_masks_may_be_tensors_or_numbers():
    x, kernel, recurrent, bias = problem('rnn')
    mask = random_mask(4, 6, seed=9)
    want = simple_rnn(x, kernel, recurrent, bias, mask=mask)[0].numpy()
    for given in (Tensor(mask), mask.astype(np.float32), mask.astype(np.int64)):
        np.testing.assert_array_equal(simple_rnn(x, kernel, recurrent, bias, mask=given)[0].numpy(),
                                      want)


# ----- recurrent dropout: all ones changes nothing -----------------------------------

def leaves_and_grads(function, arrays, **options):
    leaves = [Tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
    outputs = function(*leaves, **options)
    loss = sum((out * Tensor(np.cos(np.arange(out.size)).reshape(out.shape)
                             .astype(np.float32))).sum() for out in outputs)
    loss.backward()
    return [out.numpy() for out in outputs] + [leaf.grad.numpy() for leaf in leaves]


@pytest.mark.parametrize('kind', list(GATES))
def test_an_all_ones_dropout_mask_gives_the_same_bits(kind):
    x, kernel, recurrent, bias = problem(kind)
    if kind == 'rnn':
        function = simple_rnn
    elif kind == 'lstm':
        function = lstm
    else:
        def function(*args, **options):
            return gru(*args, reset_after=kind == 'gru_after', **options)
    arrays = [x, kernel, recurrent, bias]
    plain = leaves_and_grads(function, arrays)
    ones = leaves_and_grads(function, arrays, recurrent_dropout_mask=np.ones((4, 5), np.float32))
    for a, b in zip(plain, ones):
        np.testing.assert_array_equal(a, b)
    all_valid = leaves_and_grads(function, arrays, mask=np.ones((4, 6), bool))
    for a, b in zip(plain, all_valid):
        np.testing.assert_array_equal(a, b)


# ----- against PyTorch's packed sequences ------------------------------------------

LENGTHS = np.array([5, 3, 1, 4])


def post_padded(lengths, steps):
    return np.arange(steps)[None] < lengths[:, None]


def torch_module(kind, arrays, bidirectional):
    """torch.nn.LSTM / GRU holding minidl's weights ``[(kernel, recurrent, bias), ...]``."""
    torch = pytest.importorskip('torch')
    kernel = arrays[0][0]
    units = arrays[0][1].shape[0]
    module = (torch.nn.LSTM if kind == 'lstm' else torch.nn.GRU)(
        kernel.shape[0], units, batch_first=True, bidirectional=bidirectional)
    with torch.no_grad():
        for suffix, (k, r, b) in zip(['l0', 'l0_reverse'], arrays):
            if kind == 'lstm':  # Keras i, f, c, o is PyTorch's i, f, g, o; one bias
                weight_ih, weight_hh, bias_ih, bias_hh = k.T, r.T, b, np.zeros_like(b)
            else:  # z, r, h against r, z, n; minidl's two bias rows are PyTorch's two biases
                weight_ih, weight_hh = keras_to_torch(k, units).T, keras_to_torch(r, units).T
                bias_ih, bias_hh = keras_to_torch(b[0], units), keras_to_torch(b[1], units)
            for name, value in [('weight_ih_', weight_ih), ('weight_hh_', weight_hh),
                                ('bias_ih_', bias_ih), ('bias_hh_', bias_hh)]:
                getattr(module, name + suffix).copy_(torch.tensor(np.ascontiguousarray(value)))
    return module


def torch_weight_grads(kind, module, units, bidirectional):
    grads = []
    for suffix in ['l0', 'l0_reverse'][:1 + bidirectional]:
        k, r, bi, bh = (getattr(module, name + suffix).grad.numpy()
                        for name in ('weight_ih_', 'weight_hh_', 'bias_ih_', 'bias_hh_'))
        if kind == 'lstm':
            grads += [k.T, r.T, bi]
        else:
            grads += [keras_to_torch(k.T, units), keras_to_torch(r.T, units),
                      keras_to_torch(np.stack([bi, bh]), units)]
    return grads


def torch_packed(kind, module, x, lengths, grad_outputs, grad_finals):
    """Outputs (padded), final states and gradients of a packed run; the loss sees
    valid steps only."""
    torch = pytest.importorskip('torch')
    utils = torch.nn.utils.rnn
    x_torch = torch.tensor(x, requires_grad=True)
    packed = utils.pack_padded_sequence(x_torch, torch.tensor(lengths), batch_first=True,
                                        enforce_sorted=False)
    sequence, finals = module(packed)
    sequence = utils.pad_packed_sequence(sequence, batch_first=True,
                                         total_length=x.shape[1])[0]
    finals = finals if isinstance(finals, tuple) else (finals,)
    # minidl's order: h, c of the forward direction, then of the backward one.
    finals = [f[d] for d in range(finals[0].shape[0]) for f in finals]
    loss = (sequence * torch.tensor(grad_outputs)).sum()
    loss = loss + sum((f * torch.tensor(g)).sum() for f, g in zip(finals, grad_finals))
    loss.backward()
    return ([sequence.detach().numpy()] + [f.detach().numpy() for f in finals],
            x_torch.grad.numpy())


def minidl_run(kind, bidirectional, x, weight_arrays, mask, grad_outputs, grad_finals):
    leaves = [Tensor(x, requires_grad=True)] + [Tensor(w, requires_grad=True)
                                                for triple in weight_arrays for w in triple]
    triples = [tuple(leaves[1 + 3 * d:4 + 3 * d]) for d in range(len(weight_arrays))]
    if bidirectional:
        function = bidirectional_lstm if kind == 'lstm' else bidirectional_gru
        outputs = function(leaves[0], *triples, mask=mask)
    else:
        function = lstm if kind == 'lstm' else gru
        outputs = function(leaves[0], *triples[0], mask=mask)
    loss = (outputs[0] * Tensor(grad_outputs)).sum()
    loss = loss + sum((f * Tensor(g)).sum() for f, g in zip(outputs[1:], grad_finals))
    loss.backward()
    return [o.numpy() for o in outputs], [t.grad.numpy() for t in leaves]


def packed_problem(kind, bidirectional, steps=6, units=5):
    rng = np.random.default_rng(11)
    def normal(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    gates = 4 if kind == 'lstm' else 3
    bias_shape = (gates * units,) if kind == 'lstm' else (2, gates * units)
    x = normal(len(LENGTHS), steps, 3)
    weight_arrays = [(normal(3, gates * units, scale=0.5), normal(units, gates * units, scale=0.5),
                      normal(*bias_shape, scale=0.5)) for _ in range(1 + bidirectional)]
    mask = post_padded(LENGTHS, steps)
    directions = 1 + bidirectional
    grad_outputs = normal(len(LENGTHS), steps, directions * units) * mask[..., None]
    grad_finals = [normal(len(LENGTHS), units)
                   for _ in range(directions * (2 if kind == 'lstm' else 1))]
    return x, weight_arrays, mask, grad_outputs, grad_finals


@pytest.mark.parametrize('kind', ['lstm', 'gru'])
@pytest.mark.parametrize('bidirectional', [False, True])
def test_post_padding_matches_torch_packed_sequences(kind, bidirectional):
    x, weight_arrays, mask, grad_outputs, grad_finals = packed_problem(kind, bidirectional)
    module = torch_module(kind, weight_arrays, bidirectional)
    expected, want_x = torch_packed(kind, module, x, LENGTHS, grad_outputs, grad_finals)
    got, grads = minidl_run(kind, bidirectional, x, weight_arrays, mask, grad_outputs,
                            grad_finals)
    assert_close(got[0] * mask[..., None], expected[0], 'outputs on valid steps')
    for d, (a, b) in enumerate(zip(got[1:], expected[1:])):
        assert_close(a, b, f'final state {d}')
    units = weight_arrays[0][1].shape[0]
    want = [want_x] + torch_weight_grads(kind, module, units, bidirectional)
    names = ['x'] + ['kernel', 'recurrent_kernel', 'bias'] * (1 + bidirectional)
    for name, a, b in zip(names, grads, want):
        assert_close(a, b, 'grad ' + name)


def pre_pad(array, lengths):
    """Move each sample's first ``length`` steps to the end of the sequence."""
    moved = np.zeros_like(array)
    for n, length in enumerate(lengths):
        moved[n, array.shape[1] - length:] = array[n, :length]
    return moved


@pytest.mark.parametrize('kind', ['lstm', 'gru'])
def test_pre_padding_gives_the_post_padded_results(kind):
    x, weight_arrays, mask, grad_outputs, grad_finals = packed_problem(kind, True)
    post, post_grads = minidl_run(kind, True, x, weight_arrays, mask, grad_outputs, grad_finals)
    pre, pre_grads = minidl_run(kind, True, pre_pad(x, LENGTHS), weight_arrays,
                                pre_pad(mask, LENGTHS), pre_pad(grad_outputs, LENGTHS),
                                grad_finals)
    steps = x.shape[1]
    valid = pre_pad(mask, LENGTHS)
    np.testing.assert_allclose(pre[0][valid], post[0][mask], rtol=1e-5, atol=1e-6)
    for a, b in zip(pre[1:], post[1:]):  # final states of both directions
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pre_grads[0], pre_pad(post_grads[0], LENGTHS), rtol=1e-5,
                               atol=1e-6)
    for a, b in zip(pre_grads[1:], post_grads[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    units = weight_arrays[0][1].shape[0]
    for n, length in enumerate(LENGTHS):
        first = steps - length
        # Forward: the leading padding outputs the zero initial state.
        assert (pre[0][n, :first, :units] == 0).all()
        # Backward: its last read steps carry the state after the first valid step.
        np.testing.assert_array_equal(pre[0][n, :first, units:],
                                      np.broadcast_to(pre[0][n, first, units:], (first, units)))


@pytest.mark.parametrize('kind', ['lstm', 'gru'])
def test_post_padded_backward_direction_starts_at_the_last_valid_step(kind):
    x, weight_arrays, mask, _, _ = packed_problem(kind, True)
    function = bidirectional_lstm if kind == 'lstm' else bidirectional_gru
    outputs = function(x, *weight_arrays, mask=mask)[0].numpy()
    single = lstm if kind == 'lstm' else gru
    units = weight_arrays[0][1].shape[0]
    for n, length in enumerate(LENGTHS):
        # One step from the zero state on the last valid input.
        first_read = single(x[n:n + 1, length - 1:length], *weight_arrays[1])[0].numpy()
        np.testing.assert_allclose(outputs[n, length - 1, units:], first_read[0, 0],
                                   rtol=1e-6, atol=1e-7)
        assert (outputs[n, length:, units:] == 0).all()  # trailing padding: the initial state


# ----- argument errors ---------------------------------------------------------------

def test_bad_masks_raise_value_errors():
    x, kernel, recurrent, bias = problem('lstm')
    with pytest.raises(ValueError, match=r'mask must have shape \(batch, steps\) = \(4, 6\)'):
        lstm(x, kernel, recurrent, bias, mask=np.ones((4, 5), bool))
    with pytest.raises(ValueError, match=r'recurrent_dropout_mask must have shape '
                                         r'\(batch, units\) = \(4, 5\)'):
        lstm(x, kernel, recurrent, bias, recurrent_dropout_mask=np.ones((4, 6)))
    with pytest.raises(ValueError, match='must be a pair'):
        bidirectional_lstm(x, (kernel, recurrent, bias), (kernel, recurrent, bias),
                           recurrent_dropout_mask=np.ones((4, 5)))
    with pytest.raises(ValueError, match=r'recurrent_dropout_mask \(direction 1\) must have'):
        bidirectional_lstm(x, (kernel, recurrent, bias), (kernel, recurrent, bias),
                           recurrent_dropout_mask=(np.ones((4, 5)), np.ones((5, 5))))
    gru_weights = problem('gru_after')[1:]
    with pytest.raises(ValueError, match='two states'):
        bidirectional_gru(x, gru_weights, gru_weights, initial_state=(x,))
