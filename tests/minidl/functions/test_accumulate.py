"""prod, cumsum and cumprod: gradient checks (with zeros in the input) and values against numpy."""

import numpy as np
import pytest

from minidl import Tensor
from minidl.functions import accumulate as F
from tests.gradcases import GradCase, random, run_gradcheck

# One zero in a row, two zeros in a row, and none: the cases where dividing by x fails.
with_zeros = np.array([[0.5, 0.0, -1.5, 2.0], [0.0, 1.2, 0.0, -0.7], [1.1, -0.9, 0.8, 1.3]])

GRADCHECK_CASES = [
    GradCase(F.Prod, lambda x: F.prod(x, axis=1), [random(3, 4)]),
    GradCase(F.Prod, lambda x: F.prod(x, axis=(0, 2), keepdims=True), [random(3, 2, 4)],
             'two-axes-keepdims'),
    GradCase(F.Prod, F.prod, [random(2, 3)], 'all'),
    GradCase(F.Prod, lambda x: F.prod(x, axis=-1), [with_zeros], 'zeros'),
    GradCase(F.CumSum, lambda x: F.cumsum(x, axis=1), [random(3, 4)]),
    GradCase(F.CumSum, lambda x: F.cumsum(x, axis=0), [random(3, 4, 2)], 'first-axis'),
    GradCase(F.CumProd, lambda x: F.cumprod(x, axis=-1), [random(3, 4)]),
    GradCase(F.CumProd, lambda x: F.cumprod(x, axis=1), [with_zeros], 'zeros'),
    GradCase(F.CumProd, lambda x: F.cumprod(x, axis=0), [with_zeros.T], 'zeros-first-axis'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


@pytest.mark.parametrize('axis', [None, 0, -1, (0, 1)])
@pytest.mark.parametrize('keepdims', [False, True])
def test_prod_matches_numpy(axis, keepdims):
    x = random(3, 4, 2)
    got = F.prod(Tensor(x, dtype='float64'), axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got.numpy(), np.prod(x, axis=axis, keepdims=keepdims), rtol=1e-12)


@pytest.mark.parametrize('axis', [0, 1, -1])
def test_running_totals_match_numpy(axis):
    x = random(3, 4)
    t = Tensor(x, dtype='float64')
    np.testing.assert_allclose(F.cumsum(t, axis).numpy(), np.cumsum(x, axis), rtol=1e-12)
    np.testing.assert_allclose(F.cumprod(t, axis).numpy(), np.cumprod(x, axis), rtol=1e-12)


def test_cumprod_gradient_with_zeros_matches_torch():
    torch = pytest.importorskip('torch')
    x = Tensor(with_zeros, dtype='float64', requires_grad=True)
    weights = random(3, 4, seed=3)
    (F.cumprod(x, axis=1) * Tensor(weights, dtype='float64')).sum().backward()
    reference = torch.tensor(with_zeros, requires_grad=True)
    (torch.cumprod(reference, dim=1) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), reference.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_an_out_of_range_axis_is_named():
    with pytest.raises(ValueError, match='cumsum: axis 2'):
        F.cumsum(Tensor(np.ones((2, 2))), axis=2)
