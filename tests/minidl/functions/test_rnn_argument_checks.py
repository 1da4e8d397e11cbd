"""The recurrent functions check their arguments on every call, even though the shapes
and dtypes found consistent once are remembered (minidl/functions/rnn_arguments.py)."""

import numpy as np
import pytest

from minidl import Tensor
from minidl.functions.gru import gru
from minidl.functions.lstm import lstm


def _arrays(batch=2, steps=3, features=4, units=5, gates=4, dtype=np.float32):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((batch, steps, features)).astype(dtype),
            rng.standard_normal((features, gates * units)).astype(dtype),
            rng.standard_normal((units, gates * units)).astype(dtype),
            rng.standard_normal((gates * units,)).astype(dtype))


def test_bad_arguments_are_refused_after_good_ones_of_other_shapes():
    x, kernel, recurrent, bias = _arrays()
    lstm(x, kernel, recurrent, bias)
    lstm(Tensor(x), Tensor(kernel), Tensor(recurrent), Tensor(bias))
    with pytest.raises(ValueError, match=r'bias must have shape \(20,\), got \(16,\)'):
        lstm(x, kernel, recurrent, bias[:16])
    with pytest.raises(TypeError, match='kernel must be floating, got dtype int32'):
        lstm(x, kernel.astype(np.int32), recurrent, bias)
    with pytest.raises(ValueError, match=r'initial state 1 must have shape \(batch, units\)'):
        lstm(x, kernel, recurrent, bias,
             initial_state=[np.zeros((2, 5), np.float32), np.zeros((2, 6), np.float32)])
    with pytest.raises(ValueError, match='kernel must have shape'):
        lstm(x[:, :, :3], kernel, recurrent, bias)


def test_the_bias_shape_follows_the_variant_with_the_same_weights():
    x, kernel, recurrent, _ = _arrays(gates=3)
    gru(x, kernel, recurrent, np.zeros((2, 15), np.float32), reset_after=True)
    gru(x, kernel, recurrent, np.zeros(15, np.float32), reset_after=False)
    # Each bias is the other variant's: the shapes and dtypes were all seen, and passed.
    with pytest.raises(ValueError, match=r'bias must have shape \(15,\), got \(2, 15\)'):
        gru(x, kernel, recurrent, np.zeros((2, 15), np.float32), reset_after=False)
    with pytest.raises(ValueError, match=r'bias must have shape \(2, 15\), got \(15,\)'):
        gru(x, kernel, recurrent, np.zeros(15, np.float32), reset_after=True)
