"""LSTM: gradient checks and forward/backward comparisons with torch.nn.LSTM."""

import numpy as np
import pytest

from minidl.functions.lstm import LSTM, lstm
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
