"""Elementwise arithmetic and matmul: gradient checks and values against numpy."""

import numpy as np
import pytest

from minidl import Tensor
from minidl.functions import math as F
from tests.gradcases import GradCase, random, run_gradcheck

positive = random(3, 4, low=0.5, high=2.0)

GRADCHECK_CASES = [
    GradCase(F.Add, F.add, [random(3, 4), random(4, seed=1)], 'broadcast'),
    GradCase(F.Sub, F.sub, [random(3, 1), random(1, 4, seed=1)], 'broadcast'),
    GradCase(F.Mul, F.mul, [random(2, 3, 4), random(3, 1, seed=1)]),
    GradCase(F.Div, F.div, [random(3, 4), positive]),
    GradCase(F.Pow, F.pow, [positive, random(3, 4, seed=2, low=-2, high=2)]),
    GradCase(F.Pow, lambda x: x ** 3, [random(3, 4)], 'constant-exponent'),
    GradCase(F.Neg, F.neg, [random(5)]),
    GradCase(F.Exp, F.exp, [random(3, 4)]),
    GradCase(F.Log, F.log, [positive]),
    GradCase(F.Sqrt, F.sqrt, [positive]),
    GradCase(F.Abs, F.abs, [random(3, 4)]),
    GradCase(F.Maximum, F.maximum, [random(3, 4), random(3, 4, seed=1)]),
    GradCase(F.Minimum, F.minimum, [random(3, 4), random(4, seed=1)]),
    GradCase(F.Clip, lambda x: F.clip(x, -0.5, 0.7), [random(4, 5)]),
    GradCase(F.Clip, lambda x: F.clip(x, None, 0.7), [random(4, 5)], "upper-only"),
    GradCase(F.Where, lambda a, b: F.where(random(3, 4, seed=5) > 0, a, b),
             [random(3, 4), random(4, seed=1)]),
    GradCase(F.MatMul, F.matmul, [random(3, 4), random(4, 2, seed=1)], 'matrix'),
    GradCase(F.MatMul, F.matmul, [random(2, 3, 4), random(4, 5, seed=1)], 'batched-broadcast'),
    GradCase(F.MatMul, F.matmul, [random(4), random(2, 4, 3, seed=1)], 'vector-left'),
    GradCase(F.MatMul, F.matmul, [random(2, 3, 4), random(4, seed=1)], 'vector-right'),
    GradCase(F.MatMul, F.matmul, [random(4), random(4, seed=1)], 'inner-product'),
    GradCase(F.Exp, F.exp, [random(4, 3).T], 'transposed-input'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


@pytest.mark.parametrize('name', ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'matmul'])
def test_binary_values_match_numpy(name):
    a, b = random(3, 4), random(4, 4, seed=1)[:, :4]
    b = b[:4, :4] if name == 'matmul' else b[0]
    want = {'add': np.add, 'sub': np.subtract, 'mul': np.multiply, 'div': np.divide,
            'maximum': np.maximum, 'minimum': np.minimum, 'matmul': np.matmul}[name](a, b)
    got = getattr(F, name)(Tensor(a, dtype='float64'), Tensor(b, dtype='float64'))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_tied_maximum_sends_the_gradient_to_the_first_input():
    a = Tensor([1.0, 2.0], requires_grad=True)
    b = Tensor([1.0, 3.0], requires_grad=True)
    F.maximum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.0, 1.0])


def test_clip_with_one_bound():
    x = Tensor([-2.0, 0.0, 2.0], requires_grad=True)
    y = F.clip(x, None, 1.0)
    np.testing.assert_array_equal(y.numpy(), [-2.0, 0.0, 1.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match='bound'):
        F.clip(x, None, None)
