"""Reductions: gradient checks and values against numpy."""

import numpy as np
import pytest

from minidl import Tensor
from minidl.functions import reduction as F
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(F.Sum, lambda x: F.sum(x, axis=1), [random(3, 4, 2)]),
    GradCase(F.Sum, lambda x: F.sum(x, axis=(0, 2), keepdims=True), [random(3, 4, 2)], 'keepdims'),
    GradCase(F.Mean, lambda x: F.mean(x, axis=-1), [random(3, 4)]),
    GradCase(F.Mean, F.mean, [random(3, 4)], 'all'),
    GradCase(F.Max, lambda x: F.max(x, axis=0), [random(3, 4)]),
    GradCase(F.Min, lambda x: F.min(x, axis=(0, 1), keepdims=True), [random(3, 4, 2)]),
    GradCase(F.Var, lambda x: F.var(x, axis=0), [random(5, 3)]),
    GradCase(F.Var, lambda x: F.var(x, ddof=1), [random(5, 3)], 'unbiased'),
    GradCase(F.LogSumExp, lambda x: F.logsumexp(x, axis=-1), [random(3, 5)]),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def _logsumexp(x, axis, keepdims):
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))  # safe for these small x


@pytest.mark.parametrize('axis', [None, 0, 1, (0, 2), -1])
@pytest.mark.parametrize('keepdims', [False, True])
def test_values_match_numpy(axis, keepdims):
    x = random(3, 4, 5)
    t = Tensor(x, dtype='float64')
    for name, want in [('sum', np.sum), ('mean', np.mean), ('max', np.max), ('min', np.min),
                       ('var', np.var), ('logsumexp', _logsumexp)]:
        got = getattr(F, name)(t, axis=axis, keepdims=keepdims)
        np.testing.assert_allclose(got.numpy(), want(x, axis=axis, keepdims=keepdims),
                                   rtol=1e-12, err_msg=name)


def test_tied_maxima_share_the_gradient():
    x = Tensor([[1.0, 3.0, 3.0]], requires_grad=True)
    F.max(x, axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.5, 0.5]])


def test_logsumexp_is_stable_for_large_and_infinite_inputs():
    x = Tensor([[1000.0, 1000.0], [-np.inf, 0.0]])
    np.testing.assert_allclose(F.logsumexp(x, axis=1).numpy(), [1000 + np.log(2), 0.0], rtol=1e-6)


def test_bad_axis_is_rejected():
    with pytest.raises(ValueError, match='axis'):
        F.sum(Tensor(np.ones((2, 3))), axis=2)


def test_numpy_integer_axes_and_too_few_elements_for_ddof():
    x = Tensor(np.ones((2, 3)))
    assert F.sum(x, axis=np.int64(1)).shape == (2,)
    with pytest.raises(ValueError, match='ddof=1'):
        F.var(Tensor(np.ones((1, 3))), axis=0, ddof=1)
