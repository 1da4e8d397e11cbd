"""GRU: gradient checks, torch.nn.GRU comparisons (reset_after=True) and a numpy
step loop for reset_after=False, which PyTorch does not implement."""

import numpy as np
import pytest

from minidl.functions.gru import GRUResetAfter, GRUResetBefore, gru
from tests.gradcases import GradCase, random, run_gradcheck
from tests.minidl.functions.test_rnn import (
    N, T, F, U, assert_close, run_minidl, run_torch, sequence_problem, weights)

after = weights(3, bias_shape=(2, 3 * U))
before = weights(3)
h0 = random(N, U, seed=7)

GRADCHECK_CASES = [
    GradCase(GRUResetAfter, gru, [random(N, T, F)] + after),
    GradCase(GRUResetAfter, lambda x, k, r, b, h: gru(x, k, r, b, h, reverse=True),
             [random(N, T, F)] + after + [h0], 'reverse-initial-state'),
    GradCase(GRUResetAfter, lambda x, k, r: gru(x, k, r), [random(N, T, F)] + after[:2],
             'no-bias'),
    GradCase(GRUResetBefore, lambda x, k, r, b: gru(x, k, r, b, reset_after=False),
             [random(N, T, F)] + before),
    GradCase(GRUResetBefore,
             lambda x, k, r, b, h: gru(x, k, r, b, h, reverse=True, reset_after=False),
             [random(N, T, F)] + before + [h0], 'reverse-initial-state'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def keras_to_torch(array, units):
    """Reorder gate blocks from Keras's z, r, h to PyTorch's r, z, n (and back: it is
    its own inverse)."""
    order = np.r_[units:2 * units, 0:units, 2 * units:3 * units]
    return array[..., order]


@pytest.mark.parametrize('reverse', [False, True])
@pytest.mark.parametrize('with_state', [False, True])
def test_reset_after_gru_matches_torch(reverse, with_state):
    torch = pytest.importorskip('torch')
    x, kernel, recurrent, bias, h0, normal = sequence_problem(3, bias_shape=(2, 15))
    grads = [normal(3, 5, 5), normal(3, 5)]
    arrays = [x, kernel, recurrent, bias] + ([h0] if with_state else [])
    outputs, got = run_minidl(gru, arrays, grads, reverse=reverse)

    module = torch.nn.GRU(4, 5, batch_first=True)
    with torch.no_grad():
        module.weight_ih_l0.copy_(torch.tensor(keras_to_torch(kernel, 5).T))
        module.weight_hh_l0.copy_(torch.tensor(keras_to_torch(recurrent, 5).T))
        module.bias_ih_l0.copy_(torch.tensor(keras_to_torch(bias[0], 5)))
        module.bias_hh_l0.copy_(torch.tensor(keras_to_torch(bias[1], 5)))
    expected, want = run_torch(module, x, [h0] if with_state else [], grads, reverse)
    for name, a, b in zip(['outputs', 'h_last'], outputs, expected):
        assert_close(a, b, name)
    want[1:1] = [keras_to_torch(module.weight_ih_l0.grad.numpy().T, 5),
                 keras_to_torch(module.weight_hh_l0.grad.numpy().T, 5),
                 keras_to_torch(np.stack([module.bias_ih_l0.grad.numpy(),
                                          module.bias_hh_l0.grad.numpy()]), 5)]
    for name, a, b in zip(['x', 'kernel', 'recurrent_kernel', 'bias', 'h0'], got, want):
        assert_close(a, b, 'grad ' + name)


def reset_before_reference(x, kernel, recurrent, bias, h0, reverse):
    """Keras's reset_after=False GRU, one step at a time in float64."""
    units = h0.shape[1]
    def sigmoid(v):
        return 1 / (1 + np.exp(-v))
    state, outputs = h0.astype(np.float64), [None] * x.shape[1]
    for t in (reversed(range(x.shape[1])) if reverse else range(x.shape[1])):
        projected = x[:, t] @ kernel + bias
        z = sigmoid(projected[:, :units] + state @ recurrent[:, :units])
        r = sigmoid(projected[:, units:2 * units] + state @ recurrent[:, units:2 * units])
        candidate = np.tanh(projected[:, 2 * units:] + (r * state) @ recurrent[:, 2 * units:])
        state = z * state + (1 - z) * candidate
        outputs[t] = state
    return np.stack(outputs, axis=1), state


@pytest.mark.parametrize('reverse', [False, True])
def test_reset_before_gru_matches_a_numpy_loop(reverse):
    x, kernel, recurrent, bias, h0, _ = sequence_problem(3)
    outputs, h_last = gru(x, kernel, recurrent, bias, h0, reverse=reverse, reset_after=False)
    want_outputs, want_last = reset_before_reference(
        *(a.astype(np.float64) for a in (x, kernel, recurrent, bias, h0)), reverse)
    assert outputs.dtype == np.float32
    assert_close(outputs.numpy(), want_outputs)
    assert_close(h_last.numpy(), want_last)


@pytest.mark.parametrize('reset_after, shape', [(True, (15,)), (False, (2, 15))])
def test_bias_shape_follows_reset_after(reset_after, shape):
    x, kernel, recurrent, _, _, _ = sequence_problem(3)
    with pytest.raises(ValueError, match='bias must have shape'):
        gru(x, kernel, recurrent, np.zeros(shape, np.float32), reset_after=reset_after)
