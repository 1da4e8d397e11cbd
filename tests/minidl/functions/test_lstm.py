"""LSTM: gradient checks and forward/backward comparisons with torch.nn.LSTM."""

import numpy as np
import pytest

from minidl import Tensor, no_grad
from minidl.functions.lstm import LSTM, bidirectional_lstm, lstm
from tests.gradcases import GradCase, random, run_gradcheck
from tests.minidl.functions.test_rnn import (
    N, T, F, U, assert_close, run_minidl, run_torch, sequence_problem, weights)

states = (random(N, U, seed=7), random(N, U, seed=8))

GRADCHECK_CASES = [
    GradCase(LSTM, lstm, [random(N, T, F)] + weights(4)),
    GradCase(LSTM, lambda x, k, r, b, h, c: lstm(x, k, r, b, (h, c), reverse=True),
             [random(N, T, F)] + weights(4) + list(states), 'reverse-initial-state'),
    GradCase(LSTM, lambda x, k, r: lstm(x, k, r), [random(N, 1, F)] + weights(4)[:2],
             'one-step-no-bias'),
    GradCase(LSTM, lambda x, k, r, b, k2, r2, b2: bidirectional_lstm(x, (k, r, b), (k2, r2, b2)),
             [random(N, T, F)] + weights(4) + weights(4, seed=4), 'bidirectional'),
    GradCase(LSTM, lambda x, k, r, k2, r2, h, c, h2, c2: bidirectional_lstm(
                 x, (k, r, None), (k2, r2, None), (h, c, h2, c2)),
             [random(N, T, F)] + weights(4)[:2] + weights(4, seed=4)[:2] + list(states)
             + [random(N, U, seed=10), random(N, U, seed=11)], 'bidirectional-initial-state'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


@pytest.mark.parametrize('reverse', [False, True])
@pytest.mark.parametrize('with_state', [False, True])
def test_lstm_matches_torch(reverse, with_state):
    torch = pytest.importorskip('torch')
    x, kernel, recurrent, bias, h0, normal = sequence_problem(4)
    c0 = normal(3, 5)
    grads = [normal(3, 5, 5), normal(3, 5), normal(3, 5)]
    arrays = [x, kernel, recurrent, bias] + ([(h0, c0)] if with_state else [])
    outputs, got = run_minidl(lstm, arrays, grads, reverse=reverse)

    # Keras's gate order i, f, c, o is PyTorch's i, f, g, o: the layouts are transposes.
    module = torch.nn.LSTM(4, 5, batch_first=True)
    with torch.no_grad():
        module.weight_ih_l0.copy_(torch.tensor(kernel.T))
        module.weight_hh_l0.copy_(torch.tensor(recurrent.T))
        module.bias_ih_l0.copy_(torch.tensor(bias))
        module.bias_hh_l0.zero_()
    expected, want = run_torch(module, x, [h0, c0] if with_state else [], grads, reverse)
    for name, a, b in zip(['outputs', 'h_last', 'c_last'], outputs, expected):
        assert_close(a, b, name)
    want[1:1] = [module.weight_ih_l0.grad.numpy().T, module.weight_hh_l0.grad.numpy().T,
                 module.bias_ih_l0.grad.numpy()]
    for name, a, b in zip(['x', 'kernel', 'recurrent_kernel', 'bias', 'h0', 'c0'], got, want):
        assert_close(a, b, 'grad ' + name)


def test_saturated_gates_stay_finite():
    x, kernel, recurrent, bias, _, _ = sequence_problem(4)
    outputs, h_last, c_last = lstm(x * 1e4, kernel, recurrent, bias)
    assert np.isfinite(outputs.numpy()).all() and np.isfinite(c_last.numpy()).all()
    assert np.abs(h_last.numpy()).max() <= 1


@pytest.mark.parametrize('initial_state', [np.zeros((3, 5), np.float32), (np.zeros((3, 5)),)])
def test_initial_state_must_be_a_pair(initial_state):
    x, kernel, recurrent, bias, _, _ = sequence_problem(4)
    with pytest.raises(ValueError, match='pair'):
        lstm(x, kernel, recurrent, bias, initial_state)


def test_kernel_with_the_wrong_number_of_gates_is_rejected():
    x, kernel, recurrent, bias, _, _ = sequence_problem(3)
    with pytest.raises(ValueError, match=r'recurrent_kernel must have shape \(units, 4 \* units\)'):
        lstm(x, kernel, recurrent, bias)


@pytest.mark.parametrize('with_state', [False, True])
def test_bidirectional_equals_two_directions_bitwise(with_state):
    x, kernel, recurrent, bias, h0, normal = sequence_problem(4)
    backward = [normal(4, 20, scale=0.5), normal(5, 20, scale=0.5), normal(20, scale=0.5)]
    states = [h0] + [normal(3, 5) for _ in range(3)]
    grads = [normal(3, 5, 10)] + [normal(3, 5) for _ in range(4)]
    leaves = [Tensor(a, requires_grad=True) for a in [kernel, recurrent, bias] + backward
              + (states if with_state else [])]
    ahead, behind, initial = leaves[:3], leaves[3:6], leaves[6:] or None

    def run(fused):
        if fused:
            outputs = bidirectional_lstm(x, ahead, behind, initial)
            sequences = [outputs[0]]
        else:
            forward = lstm(x, *ahead, initial and initial[:2])
            backward = lstm(x, *behind, initial and initial[2:], reverse=True)
            outputs = (None,) + forward[1:] + backward[1:]
            sequences = [forward[0], backward[0]]
        loss = sum((out * Tensor(g)).sum() for out, g in zip(outputs[1:], grads[1:]))
        for sequence, g in zip(sequences, np.split(grads[0], len(sequences), axis=-1)):
            loss = loss + (sequence * Tensor(g)).sum()
        for leaf in leaves:
            leaf.grad = None
        loss.backward()
        values = np.concatenate([s.numpy() for s in sequences], axis=-1)
        return [values] + [out.numpy() for out in outputs[1:]] + [t.grad.numpy() for t in leaves]

    for fused, separate in zip(run(True), run(False)):
        np.testing.assert_array_equal(fused, separate)


@pytest.mark.parametrize('batch, features, units', [
    (3, 4, 5),
    (16, 8, 128),  # every step product in column chunks (minidl.compute.products)
])
def test_bidirectional_matches_torch(batch, features, units):
    torch = pytest.importorskip('torch')
    x, kernel, recurrent, bias, h0, normal = sequence_problem(
        4, batch=batch, features=features, units=units)
    scale = min(0.5, 2 / units ** 0.5)  # keeps the gates off saturation at any width
    recurrent *= scale / 0.5
    backward = [normal(features, 4 * units, scale=0.5), normal(units, 4 * units, scale=scale),
                normal(4 * units, scale=0.5)]
    grad = normal(batch, 5, 2 * units)
    leaves = [Tensor(a, requires_grad=True) for a in [x, kernel, recurrent, bias] + backward]
    outputs = bidirectional_lstm(leaves[0], leaves[1:4], leaves[4:])[0]
    (outputs * Tensor(grad)).sum().backward()

    module = torch.nn.LSTM(features, units, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for suffix, (k, r, b) in [('l0', (kernel, recurrent, bias)), ('l0_reverse', backward)]:
            getattr(module, 'weight_ih_' + suffix).copy_(torch.tensor(k.T))
            getattr(module, 'weight_hh_' + suffix).copy_(torch.tensor(r.T))
            getattr(module, 'bias_ih_' + suffix).copy_(torch.tensor(b))
            getattr(module, 'bias_hh_' + suffix).zero_()
    x_torch = torch.tensor(x, requires_grad=True)
    expected = module(x_torch)[0]
    (expected * torch.tensor(grad)).sum().backward()
    assert_close(outputs.numpy(), expected.detach().numpy(), 'outputs')
    want = [x_torch.grad.numpy()]
    for suffix in ['l0', 'l0_reverse']:
        want += [getattr(module, name + suffix).grad.numpy().T
                 for name in ('weight_ih_', 'weight_hh_', 'bias_ih_')]
    for name, leaf, b in zip(['x'] + ['kernel', 'recurrent_kernel', 'bias'] * 2, leaves, want):
        assert_close(leaf.grad.numpy(), b, 'grad ' + name)


def test_bidirectional_rejects_mismatched_directions():
    x, kernel, recurrent, bias, _, normal = sequence_problem(4)
    wider = (normal(4, 24), normal(6, 24), normal(24))
    with pytest.raises(ValueError, match='same units'):
        bidirectional_lstm(x, (kernel, recurrent, bias), wider)
    with pytest.raises(ValueError, match='a bias, or none'):
        bidirectional_lstm(x, (kernel, recurrent, bias), (kernel, recurrent, None))
    with pytest.raises(ValueError, match='four states'):
        bidirectional_lstm(x, (kernel, recurrent, bias), (kernel, recurrent, bias), (x, x))


def test_inference_gives_the_same_bits_as_training():
    x, kernel, recurrent, bias, h0, normal = sequence_problem(4)
    c0 = normal(3, 5)
    with no_grad():
        inferred = lstm(x, kernel, recurrent, bias, (h0, c0))
    trained = lstm(Tensor(x, requires_grad=True), kernel, recurrent, bias, (h0, c0))
    for a, b in zip(inferred, trained):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
