"""gradcheck accepts right gradients and rejects wrong ones."""

import numpy as np
import pytest

from minidl import Function
from minidl.gradcheck import GradcheckError, gradcheck


class Square(Function):
    def __init__(self, wrong=False):
        self.wrong = wrong

    def forward(self, x):
        self.x = x
        return x * x

    def backward(self, grad):
        return grad * (3 if self.wrong else 2) * self.x


def test_accepts_a_correct_backward():
    assert gradcheck(lambda x: Square()(x), [np.array([1.0, -2.0, 0.5])])


def test_rejects_a_wrong_backward_naming_the_element():
    with pytest.raises(GradcheckError, match='input 0'):
        gradcheck(lambda x: Square(wrong=True)(x), [np.array([1.0, -2.0, 0.5])])


def test_integer_inputs_pass_through_and_a_float_input_is_required():
    assert gradcheck(lambda x, i: Square()(x)[i], [np.array([1.0, 2.0]), np.array([1, 1])])
    with pytest.raises(ValueError, match='floating'):
        gradcheck(lambda i: i, [np.array([1, 2])])


def test_does_not_modify_the_callers_arrays():
    x = np.array([1.0, 2.0], dtype=np.float32)
    gradcheck(lambda t: Square()(t), [x])
    np.testing.assert_array_equal(x, [1.0, 2.0])


def test_non_contiguous_inputs_are_perturbed_for_real():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    assert gradcheck(lambda t: Square()(t), [x.T])
    with pytest.raises(GradcheckError):
        gradcheck(lambda t: Square(wrong=True)(t), [np.asfortranarray(x)])
