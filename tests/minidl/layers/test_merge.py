"""Merge layers: values and gradients against numpy, Keras's shape rules and errors."""

import json

import numpy as np
import pytest

from minidl.layers import merge
from minidl.layers.input_layer import Input
from minidl.layers.merge import (
    Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract)
from minidl.tensor import Tensor


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


ELEMENTWISE = [
    (Add, merge.add, lambda a, b, c: a + b + c),
    (Multiply, merge.multiply, lambda a, b, c: a * b * c),
    (Average, merge.average, lambda a, b, c: (a + b + c) / 3),
    (Maximum, merge.maximum, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    (Minimum, merge.minimum, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
]


@pytest.mark.parametrize('cls, helper, reference', ELEMENTWISE, ids=lambda v: getattr(
    v, '__name__', ''))
def test_elementwise_values_and_shapes(cls, helper, reference):
    a, b, c = (_random(2, 3, 4, seed=seed) for seed in range(3))
    expected = reference(a, b, c)
    np.testing.assert_allclose(cls()([a, b, c]).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(helper([a, b, c]).numpy(), expected, rtol=1e-6)
    inputs = [Input((3, 4)) for _ in range(3)]
    assert cls()(inputs).shape == helper(inputs).shape == (None, 3, 4)


def test_subtract():
    a, b = _random(2, 5), _random(2, 5, seed=1)
    np.testing.assert_array_equal(Subtract()([a, b]).numpy(), a - b)
    np.testing.assert_array_equal(merge.subtract([a, b]).numpy(), a - b)
    with pytest.raises(ValueError, match='exactly 2'):
        Subtract()([a, b, a])
    with pytest.raises(ValueError, match='exactly 2'):
        Subtract()([Input((5,))] * 3)


def test_gradients_of_products_and_extremes():
    a = Tensor(np.array([[1.0, 5.0, 2.0]]), requires_grad=True)
    b = Tensor(np.array([[3.0, 4.0, 2.0]]), requires_grad=True)
    Multiply()([a, b]).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[3, 4, 2]])
    np.testing.assert_array_equal(b.grad.numpy(), [[1, 5, 2]])
    a.grad = b.grad = None
    Maximum()([a, b]).sum().backward()
    # On a tie the first input takes the gradient.
    np.testing.assert_array_equal(a.grad.numpy(), [[0, 1, 1]])
    np.testing.assert_array_equal(b.grad.numpy(), [[1, 0, 0]])
    a.grad = b.grad = None
    Average()([a, b]).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[0.5, 0.5, 0.5]])


def test_broadcasting_follows_keras():
    a, b = _random(2, 3, 4), _random(2, 1, 4, seed=1)
    np.testing.assert_allclose(Add()([a, b]).numpy(), a + b, rtol=1e-6)
    # A lower-rank input gains its missing axes right after the batch axis.
    c = _random(2, 4, seed=2)
    np.testing.assert_allclose(Add()([a, c]).numpy(), a + c[:, None, :], rtol=1e-6)
    assert Add()([Input((3, 4)), Input((4,))]).shape == (None, 3, 4)
    assert Add()([Input((1, 4)), Input((3, 1))]).shape == (None, 3, 4)
    assert Add()([Input((None, 4)), Input((5, 4))]).shape == (None, 5, 4)
    grad_c = Tensor(c, requires_grad=True)
    Add()([a, grad_c]).sum().backward()
    np.testing.assert_array_equal(grad_c.grad.numpy(), np.full((2, 4), 3.0))


def test_incompatible_shapes_are_named():
    with pytest.raises(ValueError, match=r'\(None, 3, 4\).*\(None, 3, 5\)'):
        Add(name='adder')([Input((3, 4)), Input((3, 5))])
    with pytest.raises(ValueError, match='batch sizes'):
        Add()([_random(2, 4), _random(3, 4)])
    with pytest.raises(ValueError, match='list'):
        Add()(_random(2, 4))
    with pytest.raises(ValueError, match='list'):
        Add()(Input((4,)))


@pytest.mark.parametrize('axis', [-1, 1, 2])
def test_concatenate(axis):
    a, b = _random(2, 3, 4), _random(2, 3, 4, seed=1)
    b = b[:, :2] if axis == 1 else b
    expected = np.concatenate([a, b], axis=axis)
    np.testing.assert_array_equal(Concatenate(axis=axis)([a, b]).numpy(), expected)
    np.testing.assert_array_equal(merge.concatenate([a, b], axis=axis).numpy(), expected)
    symbolic = Concatenate(axis=axis)([Input(a.shape[1:]), Input(b.shape[1:])])
    assert symbolic.shape == (None,) + expected.shape[1:]
    a_tensor = Tensor(a, requires_grad=True)
    (Concatenate(axis=axis)([a_tensor, b]) * 2).sum().backward()
    np.testing.assert_array_equal(a_tensor.grad.numpy(), np.full(a.shape, 2.0))


def test_concatenate_shapes():
    assert Concatenate()([Input((None, 3)), Input((5, 2))]).shape == (None, 5, 5)
    assert Concatenate(axis=1)([Input((None, 3)), Input((5, 3))]).shape == (None, None, 3)
    with pytest.raises(ValueError, match=r'\(None, 4, 3\).*\(None, 5, 2\)'):
        Concatenate()([Input((4, 3)), Input((5, 2))])
    with pytest.raises(ValueError, match='rank'):
        Concatenate()([Input((4, 3)), Input((4,))])
    with pytest.raises(ValueError, match='axis'):
        Concatenate(axis=3)([_random(2, 3), _random(2, 3)])
    with pytest.raises(ValueError, match='axis'):
        Concatenate(axis='last')


def test_dot():
    a, b = _random(2, 5), _random(2, 5, seed=1)
    np.testing.assert_allclose(Dot(axes=1)([a, b]).numpy(),
                               np.sum(a * b, axis=1, keepdims=True), rtol=1e-5)
    x, y = _random(2, 3, 4), _random(2, 4, 6, seed=1)
    np.testing.assert_allclose(Dot(axes=(2, 1))([x, y]).numpy(), x @ y, rtol=1e-5)
    np.testing.assert_allclose(merge.dot([x, x], axes=1).numpy(),
                               np.einsum('bki,bkj->bij', x, x), rtol=1e-5)
    cosine = Dot(axes=-1, normalize=True)([a, b]).numpy()
    expected = np.sum(a * b, 1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(cosine[:, 0], expected, rtol=1e-5)
    assert Dot(axes=(2, 1))([Input((3, 4)), Input((4, 6))]).shape == (None, 3, 6)
    assert Dot(axes=1)([Input((5,)), Input((5,))]).shape == (None, 1)
    x_tensor = Tensor(x, requires_grad=True)
    Dot(axes=(2, 1))([x_tensor, y]).sum().backward()
    np.testing.assert_allclose(x_tensor.grad.numpy(), np.broadcast_to(
        y.sum(axis=2)[:, None, :], x.shape), rtol=1e-5)


def test_dot_errors():
    with pytest.raises(ValueError, match='differ'):
        Dot(axes=1)([Input((4,)), Input((5,))])
    with pytest.raises(ValueError, match='non-batch'):
        Dot(axes=0)([Input((4,)), Input((4,))])
    with pytest.raises(ValueError, match='exactly 2'):
        Dot(axes=1)([Input((4,))] * 3)
    with pytest.raises(ValueError, match='axes'):
        Dot(axes=(1, 2, 3))


def test_configs_round_trip():
    for layer in [Add(name='a'), Concatenate(axis=1, name='c'), Dot(axes=(2, 1), name='d'),
                  Dot(axes=-1, normalize=True, name='e')]:
        config = json.loads(json.dumps(layer.get_config()))
        clone = type(layer).from_config(config)
        assert json.loads(json.dumps(clone.get_config())) == config
    assert Concatenate().get_config()['axis'] == -1
