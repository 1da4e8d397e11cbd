"""K.rnn (Keras 2.2.4's backend loop) against a numpy loop: order, go_backwards, constants,
both masking rules, and gradients against finite differences."""

import numpy as np
import pytest

from minidl import backend as K
from minidl.gradcheck import gradcheck
from minidl.tensor import Tensor

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4, 2))
W, U, V = rng.standard_normal((2, 5)), rng.standard_normal((5, 5)) * 0.5, rng.standard_normal(5)
H0 = rng.standard_normal((3, 5))
MASK = np.array([[1, 1, 0, 1], [0, 1, 1, 1], [1, 1, 1, 1]], bool)


def step(x, states):
    """tanh(x W + h U (+ c V)), its output its only state."""
    h = K.tanh(K.dot(x, W) + K.dot(states[0], U) + (states[1] * V if len(states) > 1 else 0))
    return h, [h]


def reference(x, h, c=0.0, mask=None, backwards=False, unroll=False):
    outputs, order = [], range(x.shape[1] - 1, -1, -1) if backwards else range(x.shape[1])
    for t in order:
        new = np.tanh(x[:, t] @ W + h @ U + c * V)
        output = new
        if mask is not None:
            valid = mask[:, t:t + 1]
            previous = (outputs[-1] if outputs else np.zeros_like(new)) if unroll else h
            output = np.where(valid, new, previous)
            new = np.where(valid, new, h)
        outputs.append(output)
        h = new
    return outputs[-1], np.stack(outputs, 1), h


@pytest.mark.parametrize('backwards', [False, True])
def test_outputs_and_states_match_a_numpy_loop(backwards):
    last, outputs, states = K.rnn(step, Tensor(X), [Tensor(H0)], go_backwards=backwards)
    want = reference(X, H0, backwards=backwards)
    np.testing.assert_allclose(K.eval(last), want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(K.eval(outputs), want[1], rtol=1e-5, atol=1e-6)
    assert len(states) == 1
    np.testing.assert_allclose(K.eval(states[0]), want[2], rtol=1e-5, atol=1e-6)


def test_constants_follow_the_states():
    c = rng.standard_normal((3, 1))
    _, outputs, _ = K.rnn(step, X, [H0], constants=[c])
    np.testing.assert_allclose(K.eval(outputs), reference(X, H0, c)[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('unroll', [False, True])
def test_masked_steps_keep_states_and_output_as_keras_2s_two_loops(unroll):
    # The while_loop outputs states[0] at a masked step; the unrolled loop the last output
    # (zeros before the first): sample 1's first step shows the difference.
    last, outputs, states = K.rnn(step, X, [H0], mask=MASK[..., None].astype('float32'),
                                  unroll=unroll)
    want = reference(X, H0, mask=MASK, unroll=unroll)
    np.testing.assert_allclose(K.eval(outputs), want[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(K.eval(states[0]), want[2], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match='initial states'):
        K.rnn(lambda x, s: (x, []), X, [], mask=MASK)


def test_gradients_match_finite_differences():
    def loss(x, h):
        _, outputs, states = K.rnn(step, x, [h], mask=MASK)
        return K.sum(outputs * outputs) + K.sum(states[0])

    assert gradcheck(loss, [Tensor(X, dtype='float64'), Tensor(H0, dtype='float64')])


def test_refuses_two_dimensional_inputs():
    with pytest.raises(ValueError, match='at least 3 dimensions'):
        K.rnn(step, X[:, 0], [H0])
