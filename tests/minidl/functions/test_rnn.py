"""Simple RNN and the shared recurrence: gradient checks, PyTorch comparisons, errors.

The helpers here (``run_minidl``, ``run_torch``, ``assert_close``) are shared
with ``test_lstm.py`` and ``test_gru.py``.
"""

import numpy as np
import pytest

from minidl import Tensor, no_grad
from minidl.functions import rnn as R
from tests.gradcases import GradCase, random, run_gradcheck

N, T, F, U = 2, 3, 3, 2  # gradcheck sizes: batch, steps, features, units


def weights(gates, units=U, features=F, seed=1, bias_shape=None):
    """Kernel, recurrent kernel and bias (float64) for ``gates`` gate blocks."""
    bias_shape = bias_shape or (gates * units,)
    return [random(features, gates * units, seed=seed) * 0.7,
            random(units, gates * units, seed=seed + 1) * 0.7,
            random(*bias_shape, seed=seed + 2) * 0.5]


GRADCHECK_CASES = [
    GradCase(R.SimpleRNN, R.simple_rnn, [random(N, T, F)] + weights(1), 'tanh'),
    GradCase(R.SimpleRNN, lambda x, k, r, b, h: R.simple_rnn(x, k, r, b, h, reverse=True),
             [random(N, T, F)] + weights(1) + [random(N, U, seed=9)], 'reverse-initial-state'),
    GradCase(R.SimpleRNN, lambda x, k, r: R.simple_rnn(x, k, r, activation='relu'),
             [random(N, T, F)] + weights(1)[:2], 'relu-no-bias'),
    GradCase(R.SimpleRNN, lambda x, k, r, b: R.simple_rnn(x, k, r, b, activation='linear'),
             [random(N, T, F)] + weights(1), 'linear'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


# ----- helpers shared with test_lstm.py and test_gru.py ------------------------

def run_minidl(function, arrays, grad_outputs, **kwargs):
    """Run ``function(*arrays, **kwargs)`` in float32 and backpropagate ``grad_outputs``.

    ``arrays`` may end with a tuple of initial states (the LSTM's pair).
    Returns the outputs and the gradients of every array, as numpy arrays.
    """
    leaves, args = [], []
    for array in arrays:
        if isinstance(array, tuple):
            pair = tuple(Tensor(a, requires_grad=True) for a in array)
            leaves += pair
            args.append(pair)
        else:
            leaves.append(Tensor(array, requires_grad=True))
            args.append(leaves[-1])
    outputs = function(*args, **kwargs)
    assert all(out.dtype == np.float32 for out in outputs)
    loss = sum((out * Tensor(g)).sum() for out, g in zip(outputs, grad_outputs))
    loss.backward()
    return [out.numpy() for out in outputs], [t.grad.numpy() for t in leaves]


def run_torch(module, x, initial_states, grad_outputs, reverse):
    """Run a batch-first PyTorch RNN module as minidl would with ``reverse``.

    PyTorch reads forward only, so a reversed run feeds it the flipped sequence
    and flips its outputs back. Returns outputs (sequence, final states) and the
    gradients of x and of each initial state.
    """
    torch = pytest.importorskip('torch')
    x_torch = torch.tensor(np.ascontiguousarray(x[:, ::-1] if reverse else x), requires_grad=True)
    states = [torch.tensor(s[None], requires_grad=True) for s in initial_states]
    hx = None if not states else states[0] if len(states) == 1 else tuple(states)
    sequence, finals = module(x_torch, hx)
    finals = finals if isinstance(finals, tuple) else (finals,)
    if reverse:
        sequence = sequence.flip(1)
    outputs = (sequence,) + tuple(f[0] for f in finals)
    loss = sum((out * torch.tensor(g)).sum() for out, g in zip(outputs, grad_outputs))
    loss.backward()
    grad_x = x_torch.grad.numpy()
    grad_x = grad_x[:, ::-1] if reverse else grad_x
    return [out.detach().numpy() for out in outputs], [grad_x] + [s.grad[0].numpy() for s in states]


def assert_close(actual, expected, name=''):
    """float32 agreement, with the absolute tolerance scaled by the values' size."""
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=2e-5 * scale, err_msg=name)


def sequence_problem(gates, batch=3, steps=5, features=4, units=5, seed=0, bias_shape=None):
    """float32 inputs, weights, initial state and a gradient per output."""
    rng = np.random.default_rng(seed)
    def normal(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    x = normal(batch, steps, features)
    kernel = normal(features, gates * units, scale=0.5)
    recurrent = normal(units, gates * units, scale=0.5)
    bias = normal(*(bias_shape or (gates * units,)), scale=0.5)
    h0 = normal(batch, units)
    return x, kernel, recurrent, bias, h0, normal


# ----- the simple RNN against PyTorch --------------------------------------------

@pytest.mark.parametrize('activation', ['tanh', 'relu'])
@pytest.mark.parametrize('reverse', [False, True])
@pytest.mark.parametrize('with_state', [False, True])
def test_simple_rnn_matches_torch(activation, reverse, with_state):
    torch = pytest.importorskip('torch')
    x, kernel, recurrent, bias, h0, normal = sequence_problem(1)
    grads = [normal(3, 5, 5), normal(3, 5)]
    arrays = [x, kernel, recurrent, bias] + ([h0] if with_state else [])
    outputs, got = run_minidl(R.simple_rnn, arrays, grads, reverse=reverse, activation=activation)

    module = torch.nn.RNN(4, 5, nonlinearity=activation, batch_first=True)
    with torch.no_grad():
        module.weight_ih_l0.copy_(torch.tensor(kernel.T))
        module.weight_hh_l0.copy_(torch.tensor(recurrent.T))
        module.bias_ih_l0.copy_(torch.tensor(bias))
        module.bias_hh_l0.zero_()
    expected, want = run_torch(module, x, [h0] if with_state else [], grads, reverse)
    for name, a, b in zip(['outputs', 'h_last'], outputs, expected):
        assert_close(a, b, name)
    want[1:1] = [module.weight_ih_l0.grad.numpy().T, module.weight_hh_l0.grad.numpy().T,
                 module.bias_ih_l0.grad.numpy()]
    for name, a, b in zip(['x', 'kernel', 'recurrent_kernel', 'bias', 'h0'], got, want):
        assert_close(a, b, 'grad ' + name)


def test_linear_simple_rnn_matches_a_numpy_loop():
    x, kernel, recurrent, bias, h0, _ = sequence_problem(1)
    outputs, h_last = R.simple_rnn(x, kernel, recurrent, bias, h0, activation='linear')
    state, want = h0, []
    for t in range(x.shape[1]):
        state = x[:, t] @ kernel + state @ recurrent + bias
        want.append(state)
    assert_close(outputs.numpy(), np.stack(want, axis=1))
    assert_close(h_last.numpy(), want[-1])


# ----- the shared mechanism -------------------------------------------------------

def test_outputs_are_aligned_with_the_input_steps_when_reversed():
    x, kernel, recurrent, bias, _, _ = sequence_problem(1)
    forward, _ = R.simple_rnn(x[:, ::-1].copy(), kernel, recurrent, bias)
    backward, h_last = R.simple_rnn(x, kernel, recurrent, bias, reverse=True)
    np.testing.assert_allclose(backward.numpy(), forward.numpy()[:, ::-1], rtol=1e-6)
    np.testing.assert_allclose(h_last.numpy(), backward.numpy()[:, 0], rtol=1e-6)


def test_only_the_requested_gradients_are_computed():
    x, kernel, recurrent, bias, _, _ = sequence_problem(1)
    x_tensor = Tensor(x, requires_grad=True)
    outputs, _ = R.simple_rnn(x_tensor, kernel, recurrent, bias)
    outputs.sum().backward()
    assert x_tensor.grad.shape == x.shape
    with no_grad():
        outputs, _ = R.simple_rnn(Tensor(x, requires_grad=True), kernel, recurrent, bias)
    assert not outputs.requires_grad


def test_weight_gradients_without_an_input_gradient():
    x, kernel, recurrent, bias, _, _ = sequence_problem(1)
    grads = [np.ones((3, 5, 5), np.float32), np.ones((3, 5), np.float32)]
    _, full = run_minidl(R.simple_rnn, [x, kernel, recurrent, bias], grads)
    weights_only = [Tensor(a, requires_grad=True) for a in (kernel, recurrent, bias)]
    outputs, h_last = R.simple_rnn(x, *weights_only)
    (outputs.sum() + h_last.sum()).backward()
    for tensor, want in zip(weights_only, full[1:]):
        np.testing.assert_array_equal(tensor.grad.numpy(), want)


def test_repeated_runs_are_bitwise_identical():
    x, kernel, recurrent, bias, _, _ = sequence_problem(1, steps=7)
    first = R.simple_rnn(x, kernel, recurrent, bias)[0].numpy()
    second = R.simple_rnn(x, kernel, recurrent, bias)[0].numpy()
    assert np.array_equal(first, second)


@pytest.mark.parametrize('change, message', [
    (dict(x=np.zeros((3, 4), np.float32)), 'x must have shape'),
    (dict(x=np.zeros((3, 0, 4), np.float32)), 'at least one step'),
    (dict(kernel=np.zeros((5, 5), np.float32)), 'kernel must have shape'),
    (dict(recurrent_kernel=np.zeros((5, 4), np.float32)), 'recurrent_kernel must have shape'),
    (dict(bias=np.zeros(4, np.float32)), 'bias must have shape'),
    (dict(initial_state=np.zeros((2, 5), np.float32)), 'initial state 0 must have shape'),
    (dict(activation='sigmoid'), 'activation must be'),
])
def test_bad_arguments_raise_value_errors(change, message):
    x, kernel, recurrent, bias, _, _ = sequence_problem(1)
    arguments = dict(x=x, kernel=kernel, recurrent_kernel=recurrent, bias=bias)
    arguments.update(change)
    with pytest.raises(ValueError, match=message):
        R.simple_rnn(**arguments)


def test_integer_input_raises_type_error():
    _, kernel, recurrent, bias, _, _ = sequence_problem(1)
    with pytest.raises(TypeError, match='x must be floating'):
        R.simple_rnn(np.zeros((3, 5, 4), np.int64), kernel, recurrent, bias)
