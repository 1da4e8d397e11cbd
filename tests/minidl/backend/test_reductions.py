"""Reductions and running totals against numpy; gradients by finite differences."""

import numpy as np
import pytest

from minidl import backend as K
from minidl.gradcheck import gradcheck
from minidl.tensor import Tensor

values = np.random.default_rng(1).standard_normal((3, 4, 2))


@pytest.mark.parametrize('name, reference', [
    ('sum', np.sum), ('mean', np.mean), ('max', np.max), ('min', np.min), ('prod', np.prod),
    ('var', np.var), ('std', np.std),
    ('logsumexp', lambda a, axis, keepdims: np.log(np.sum(np.exp(a), axis, keepdims=keepdims)))])
@pytest.mark.parametrize('axis', [None, 1, -1, [0, 2]], ids=str)
@pytest.mark.parametrize('keepdims', [False, True])
def test_reductions_match_numpy(name, reference, axis, keepdims):
    got = getattr(K, name)(Tensor(values, dtype='float64'), axis=axis, keepdims=keepdims)
    numpy_axis = tuple(axis) if isinstance(axis, list) else axis
    np.testing.assert_allclose(K.eval(got), reference(values, axis=numpy_axis, keepdims=keepdims),
                               rtol=1e-12)


def test_mean_of_booleans_is_a_float_fraction():
    flags = Tensor([[True, False, True, True]])
    got = K.mean(flags, axis=-1)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(K.eval(got), [0.75])


def test_any_all_argmax_argmin():
    x = Tensor([[0.0, 2.0, 2.0], [0.0, 0.0, -1.0]])
    np.testing.assert_array_equal(K.eval(K.any(x, axis=1)), [True, True])
    np.testing.assert_array_equal(K.eval(K.all(x, axis=0, keepdims=True)), [[False, False, True]])
    assert K.eval(K.all(Tensor([1, 2]))) and not K.eval(K.any(Tensor([0, 0])))
    np.testing.assert_array_equal(K.eval(K.argmax(x)), [1, 0])
    np.testing.assert_array_equal(K.eval(K.argmin(x, axis=0)), [0, 1, 1])


@pytest.mark.parametrize('axis', [0, 1, -1])
def test_running_totals_match_numpy(axis):
    t = Tensor(values, dtype='float64')
    np.testing.assert_allclose(K.eval(K.cumsum(t, axis)), np.cumsum(values, axis), rtol=1e-12)
    np.testing.assert_allclose(K.eval(K.cumprod(t, axis)), np.cumprod(values, axis), rtol=1e-12)


@pytest.mark.parametrize('call', [
    lambda x: K.std(x, axis=1), lambda x: K.prod(x, axis=[0, 2]),
    lambda x: K.cumprod(x, axis=1), lambda x: K.logsumexp(x, axis=-1, keepdims=True)],
    ids=['std', 'prod', 'cumprod', 'logsumexp'])
def test_gradients_match_finite_differences(call):
    assert gradcheck(call, [values])
