"""The fused dense Function: gradient checks, and the same bits as its unfused parts."""

import numpy as np
import pytest

from minidl import Tensor
from minidl import functions as F
from minidl.functions.dense import Dense, dense
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(Dense, lambda x, k, b: dense(x, k, b, 'relu'),
             [random(4, 3), random(3, 5, seed=1), random(5, seed=2)], 'relu'),
    GradCase(Dense, dense, [random(4, 3), random(3, 5, seed=1), random(5, seed=2)], 'linear'),
    GradCase(Dense, dense, [random(4, 3), random(3, 5, seed=1)], 'no-bias'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def _float32(*shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize('activation', [None, 'relu'])
@pytest.mark.parametrize('input_needs_grad', [False, True])
def test_same_bits_as_matmul_add_relu(activation, input_needs_grad):
    arrays = _float32(64, 30, seed=0), _float32(30, 20, seed=1), _float32(20, seed=2)
    upstream = _float32(64, 20, seed=3)
    fused = [Tensor(a, requires_grad=i > 0 or input_needs_grad) for i, a in enumerate(arrays)]
    parts = [Tensor(a, requires_grad=i > 0 or input_needs_grad) for i, a in enumerate(arrays)]
    y_fused = dense(*fused, activation)
    y_parts = F.add(F.matmul(parts[0], parts[1]), parts[2])
    y_parts = F.relu(y_parts) if activation else y_parts
    np.testing.assert_array_equal(y_fused.numpy(), y_parts.numpy())
    y_fused.backward(upstream)
    y_parts.backward(upstream)
    for a, b in zip(fused, parts):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_bad_shapes_and_activation_are_rejected():
    x, kernel = Tensor(np.ones((2, 3))), Tensor(np.ones((4, 5)))
    with pytest.raises(ValueError, match='shapes'):
        dense(x, kernel)
    with pytest.raises(ValueError, match='bias'):
        dense(Tensor(np.ones((2, 4))), kernel, Tensor(np.ones(4)))
    with pytest.raises(ValueError, match='activation'):
        dense(Tensor(np.ones((2, 4))), kernel, None, 'tanh')
