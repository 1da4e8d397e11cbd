"""Elementwise functions, comparisons and products against numpy; their gradients by finite
differences."""

import numpy as np
import pytest

from minidl import backend as K
from minidl.gradcheck import gradcheck
from minidl.tensor import Tensor

rng = np.random.default_rng(0)
x_values = rng.standard_normal((3, 4))
positive = rng.uniform(0.5, 2.0, (3, 4))


def tensor(array):
    return Tensor(array, dtype=array.dtype)


@pytest.mark.parametrize('name, reference, values', [
    ('square', np.square, x_values),
    ('abs', np.abs, x_values),
    ('sqrt', lambda a: np.sqrt(np.maximum(a, 0)), x_values),
    ('exp', np.exp, x_values),
    ('log', np.log, positive),
    ('sin', np.sin, x_values),
    ('cos', np.cos, x_values),
    ('round', np.round, x_values * 3),
    ('sign', np.sign, np.array([-2.0, 0.0, 3.0])),
    ('transpose', np.transpose, rng.standard_normal((2, 3, 4))),
])
def test_unary_functions_match_numpy(name, reference, values):
    np.testing.assert_allclose(K.eval(getattr(K, name)(tensor(values))), reference(values),
                               rtol=1e-12)


def test_round_takes_halves_to_even_as_tensorflow():
    np.testing.assert_array_equal(K.eval(K.round(Tensor([0.5, 1.5, 2.5, -0.5]))),
                                  [0.0, 2.0, 2.0, -0.0])


def test_pow_clip_maximum_minimum():
    x = tensor(x_values)
    np.testing.assert_allclose(K.eval(K.pow(tensor(positive), 1.5)), positive ** 1.5, rtol=1e-12)
    np.testing.assert_array_equal(K.eval(K.clip(x, -0.5, 0.5)), np.clip(x_values, -0.5, 0.5))
    # Keras raises a max_value below min_value to min_value.
    np.testing.assert_array_equal(K.eval(K.clip(x, 0.5, 0.1)), np.full((3, 4), 0.5))
    np.testing.assert_array_equal(K.eval(K.clip(x, None, 0.1)), np.minimum(x_values, 0.1))
    np.testing.assert_array_equal(K.eval(K.maximum(x, 0)), np.maximum(x_values, 0))
    np.testing.assert_array_equal(K.eval(K.minimum(x, tensor(positive))),
                                  np.minimum(x_values, positive))


@pytest.mark.parametrize('name, reference', [
    ('equal', np.equal), ('not_equal', np.not_equal), ('greater', np.greater),
    ('greater_equal', np.greater_equal), ('less', np.less), ('less_equal', np.less_equal)])
def test_comparisons_match_numpy(name, reference):
    a = np.array([[1.0, 2.0, 3.0]])
    b = np.array([[3.0], [2.0]])
    got = getattr(K, name)(tensor(a), tensor(b))
    assert got.dtype == bool
    np.testing.assert_array_equal(K.eval(got), reference(a, b))
    np.testing.assert_array_equal(K.eval(getattr(K, name)(tensor(a), 2.0)), reference(a, 2.0))


@pytest.mark.parametrize('shapes', [((2, 3), (3, 5)), ((2, 3), (4, 3, 5)), ((2, 3, 4), (4, 5)),
                                    ((2, 2, 3), (2, 3, 4)), ((3,), (3, 2)), ((2, 3), (3,))],
                         ids=str)
def test_dot_follows_numpy_dot(shapes):
    # numpy.dot contracts a's last axis with b's second-to-last: Theano's rule, as Keras.
    a, b = (rng.standard_normal(shape) for shape in shapes)
    got = K.dot(tensor(a), tensor(b))
    np.testing.assert_allclose(K.eval(got), np.dot(a, b), rtol=1e-12)


def _batch_dot_reference(a, b, axes):
    rows = [np.tensordot(a[i], b[i], axes=(axes[0] - 1, axes[1] - 1)) for i in range(len(a))]
    result = np.stack(rows)
    return result[:, None] if result.ndim == 1 else result


def test_batch_dot_keras_docstring_example():
    x = Tensor([[1.0, 2.0], [3.0, 4.0]])
    y = Tensor([[5.0, 6.0], [7.0, 8.0]])
    np.testing.assert_array_equal(K.eval(K.batch_dot(x, y, axes=1)), [[17.0], [53.0]])
    assert K.int_shape(K.batch_dot(K.zeros((32, 20, 1)), K.zeros((32, 30, 20)), (1, 2))) == \
        (32, 1, 30)


@pytest.mark.parametrize('shapes, axes', [
    (((4, 3), (4, 3)), (1, 1)),
    (((4, 3, 5), (4, 5, 2)), (2, 1)),
    (((4, 3, 5), (4, 2, 5)), (2, 2)),
    (((4, 5, 3), (4, 5)), (1, 1)),
    (((4, 5), (4, 5, 3)), (-1, 1)),
    (((4, 2, 3, 5), (4, 5, 6)), (3, 1)),
], ids=str)
def test_batch_dot_contracts_one_axis_per_sample(shapes, axes):
    a, b = (rng.standard_normal(shape) for shape in shapes)
    got = K.eval(K.batch_dot(tensor(a), tensor(b), axes=axes))
    want = _batch_dot_reference(a, b, tuple(axis % len(s) for axis, s in zip(axes, shapes)))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_batch_dot_default_axes():
    a, b = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 5, 2))
    np.testing.assert_allclose(K.eval(K.batch_dot(tensor(a), tensor(b))), a @ b, rtol=1e-12)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    np.testing.assert_allclose(K.eval(K.batch_dot(tensor(a), tensor(b))),
                               np.sum(a * b, axis=1, keepdims=True), rtol=1e-12)
    with pytest.raises(ValueError, match='cannot contract axis 0'):
        K.batch_dot(tensor(a), tensor(b), axes=0)


@pytest.mark.parametrize('call, inputs', [
    (lambda x: K.square(x), [x_values]),
    (lambda x: K.sqrt(x), [positive]),
    (lambda x: K.pow(x, 2.5), [positive]),
    (lambda x: K.sin(x) * K.cos(x), [x_values]),
    (lambda x: K.clip(x, -0.5, 0.5), [x_values]),
    (lambda x, y: K.dot(x, y), [rng.standard_normal((2, 3)), rng.standard_normal((4, 3, 5))]),
    (lambda x, y: K.batch_dot(x, y, axes=(2, 2)),
     [rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 5, 4))]),
    (lambda x, y: K.batch_dot(x, y, axes=1), [rng.standard_normal((3, 4)),
                                              rng.standard_normal((3, 4))]),
], ids=['square', 'sqrt', 'pow', 'sin-cos', 'clip', 'dot', 'batch_dot', 'batch_dot-2d'])
def test_gradients_match_finite_differences(call, inputs):
    assert gradcheck(call, inputs)
