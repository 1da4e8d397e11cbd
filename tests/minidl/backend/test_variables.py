"""Variables, constants, placeholders, shapes, values and in-place updates."""

import numpy as np
import pytest

from minidl import backend as K
from minidl.layers import Input
from minidl.tensor import Tensor


def test_variable_copies_its_value_in_floatx_and_requires_grad():
    value = np.array([[1, 2], [3, 4]])
    v = K.variable(value, name='v')
    value[0, 0] = 100
    assert v.dtype == np.float32 and v.requires_grad and v.name == 'v'
    np.testing.assert_array_equal(K.eval(v), [[1, 2], [3, 4]])
    assert K.variable([1, 2], dtype='int32').dtype == np.int32
    assert not K.variable([1, 2], dtype='int32').requires_grad


def test_constant_fills_a_shape():
    c = K.constant(2.5, shape=(2, 3))
    np.testing.assert_array_equal(K.eval(c), np.full((2, 3), 2.5))
    assert not c.requires_grad and c.dtype == np.float32


def test_placeholder_is_a_symbolic_input():
    p = K.placeholder(shape=(None, 4, 5))
    assert K.is_keras_tensor(p) and K.is_placeholder(p) and K.int_shape(p) == (None, 4, 5)
    assert K.int_shape(K.placeholder(ndim=2)) == (None, None)
    with pytest.raises(ValueError, match='shape or a number of dimensions'):
        K.placeholder()


def test_tensor_kinds():
    x = Input((3,))
    v = K.variable(np.zeros(3))
    assert K.is_tensor(x) and K.is_tensor(v) and not K.is_tensor(np.zeros(3))
    assert K.is_keras_tensor(x) and not K.is_keras_tensor(v)
    assert not K.is_placeholder(x * 2)
    with pytest.raises(ValueError, match='expects a tensor'):
        K.is_keras_tensor(np.zeros(3))


def test_shapes_and_dtypes():
    v = K.variable(np.zeros((2, 3)))
    assert K.int_shape(v) == (2, 3) and K.ndim(v) == 2 and K.dtype(v) == 'float32'
    assert K.int_shape(np.zeros((4,))) == (4,)
    assert K.count_params(v) == 6
    np.testing.assert_array_equal(K.eval(K.shape(v)), [2, 3])
    assert K.shape(v).dtype == np.int32 and K.shape(v)[0].item() == 2
    x = Input((5, 2))
    assert K.int_shape(x) == (None, 5, 2) and K.ndim(x) == 3 and K.dtype(x) == 'float32'
    assert K.int_shape(K.shape(x)) == (3,)


def test_values_get_and_set():
    v = K.variable(np.zeros((2, 2)))
    K.set_value(v, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(K.get_value(v), [[1, 2], [3, 4]])
    a, b = K.variable(0.0), K.variable(np.ones(2))
    K.batch_set_value([(a, 5.0), (b, [7.0, 8.0])])
    values = K.batch_get_value([a, b])
    assert values[0] == 5.0
    np.testing.assert_array_equal(values[1], [7.0, 8.0])
    with pytest.raises(ValueError, match='shape'):
        K.set_value(v, np.zeros(3))
    with pytest.raises(TypeError, match='set_value needs a Tensor'):
        K.set_value(0.01, 0.1)
    with pytest.raises(TypeError, match='K.function'):
        K.eval(Input((2,)))


def test_get_value_returns_a_copy():
    v = K.variable([1.0, 2.0])
    K.get_value(v)[0] = 100.0
    np.testing.assert_array_equal(K.get_value(v), [1.0, 2.0])


def test_filled_variables():
    np.testing.assert_array_equal(K.eval(K.zeros((2, 3))), np.zeros((2, 3)))
    np.testing.assert_array_equal(K.eval(K.ones((2,), dtype='int32')), [1, 1])
    np.testing.assert_array_equal(K.eval(K.eye(3)), np.eye(3))
    np.testing.assert_array_equal(K.eval(K.eye((2, 3))), np.eye(2, 3))
    x = Tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(K.eval(K.zeros_like(x)), np.zeros((2, 3)))
    np.testing.assert_array_equal(K.eval(K.ones_like(x, dtype='int32')), np.ones((2, 3)))
    assert K.ones_like(x, dtype='int32').dtype == np.int32
    assert K.identity(x) is x


def test_cast_between_types():
    x = Tensor([0.2, 1.7, -1.5])
    np.testing.assert_array_equal(K.eval(K.cast(x, 'int32')), [0, 1, -1])
    as_float = K.cast(Tensor([True, False]), np.dtype('float32'))
    np.testing.assert_array_equal(K.eval(as_float), [1.0, 0.0])
    w = K.variable([1.0, 2.0])
    K.sum(K.cast(w, 'float64') * 3.0).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0])


def test_updates_are_operations_that_change_the_variable_in_place_when_run():
    # Keras 2.2.4 (TensorFlow 1): K.update returns an assign operation; nothing
    # changes until it runs, and evaluating it runs it and gives the new value.
    v = K.variable([1.0, 2.0])
    data = v.data
    add = K.update_add(v, [1.0, 1.0])
    np.testing.assert_array_equal(K.get_value(v), [1.0, 2.0])
    np.testing.assert_array_equal(K.eval(add), [2.0, 3.0])
    K.eval(K.update_sub(v, np.array([0.5, 0.5])))
    np.testing.assert_array_equal(K.get_value(v), [1.5, 2.5])
    K.eval(K.update(v, [4.0, 0.0]))
    # Keras 2.3.1's formula: x - (x - value) * (1 - momentum).
    K.eval(K.moving_average_update(v, Tensor([0.0, 10.0]), 0.75))
    np.testing.assert_allclose(K.get_value(v), [3.0, 2.5])
    assert v.data is data
    with pytest.raises(ValueError, match='symbolic operand'):
        K.eval(K.update_add(v, Input((2,))))


