"""Regularizers: Keras 2's penalties and their gradients, defaults, names and configs."""

import numpy as np
import pytest

from minidl import Tensor, regularizers

W = np.random.default_rng(1).normal(size=(5, 3))


def penalty_and_grad(regularizer, dtype='float64'):
    weight = Tensor(W, dtype=dtype, requires_grad=True)
    penalty = regularizer(weight)
    penalty.backward()
    return penalty, weight.grad.numpy()


@pytest.mark.parametrize('regularizer, l1, l2', [
    (regularizers.L1(0.3), 0.3, 0.0),
    (regularizers.L2(0.2), 0.0, 0.2),
    (regularizers.L1L2(l1=0.1, l2=0.4), 0.1, 0.4),
    (regularizers.l1(), 0.01, 0.0),
    (regularizers.l2(), 0.0, 0.01),
    (regularizers.l1_l2(), 0.01, 0.01),
    (regularizers.get('l1_l2'), 0.01, 0.01),
    (regularizers.get('l2'), 0.0, 0.01),
])
def test_penalty_and_its_gradient(regularizer, l1, l2):
    penalty, grad = penalty_and_grad(regularizer)
    assert penalty.shape == ()
    np.testing.assert_allclose(penalty.item(), l1 * np.abs(W).sum() + l2 * (W ** 2).sum(),
                               rtol=1e-12)
    np.testing.assert_allclose(grad, l1 * np.sign(W) + 2 * l2 * W, rtol=1e-12)


def test_penalty_keeps_the_weights_float32():
    penalty, _ = penalty_and_grad(regularizers.L1L2(0.1, 0.1), dtype='float32')
    assert penalty.dtype == np.float32


def test_zero_factors_give_a_constant_zero():
    penalty = regularizers.L1L2()(Tensor(W, dtype='float32', requires_grad=True))
    assert penalty.item() == 0.0 and penalty.shape == () and penalty.dtype == np.float32


def test_keras_defaults_and_none_factors():
    assert regularizers.L1L2().get_config() == {'l1': 0.0, 'l2': 0.0}
    assert regularizers.L1(None).get_config() == {'l1': 0.01}
    assert regularizers.L1L2(l2=None).get_config() == {'l1': 0.0, 'l2': 0.0}


@pytest.mark.parametrize('bad', ['0.1', float('nan'), float('inf'), True])
def test_non_finite_or_non_numeric_factors_are_refused(bad):
    with pytest.raises(ValueError, match='l2 must be a finite number'):
        regularizers.L2(bad)


@pytest.mark.parametrize('regularizer', [
    regularizers.L1(0.5), regularizers.L2(0.25), regularizers.L1L2(0.125, 2.0)])
def test_serialize_round_trip(regularizer):
    config = regularizers.serialize(regularizer)
    assert config['class_name'] == type(regularizer).__name__
    restored = regularizers.get(config)
    assert type(restored) is type(regularizer)
    assert restored.get_config() == regularizer.get_config()


def test_get_resolves_names_dicts_instances_and_functions():
    assert regularizers.get(None) is None
    instance = regularizers.L2(0.5)
    assert regularizers.get(instance) is instance
    assert isinstance(regularizers.get('L1'), regularizers.L1)
    assert regularizers.get({'class_name': 'l2', 'config': {'l2': 0.5}}).l2 == 0.5

    def penalty(weight):
        return (weight * 0.0).sum()
    assert regularizers.get(penalty) is penalty
    assert regularizers.serialize(penalty) == 'penalty'
    assert regularizers.deserialize('penalty', custom_objects={'penalty': penalty}) is penalty


def test_custom_regularizer_class_round_trips_through_custom_objects():
    class Scaled(regularizers.Regularizer):
        def __init__(self, factor):
            self.factor = factor

        def __call__(self, weight):
            return self.factor * (weight * weight).sum()

        def get_config(self):
            return {'factor': self.factor}

    config = regularizers.serialize(Scaled(3.0))
    restored = regularizers.deserialize(config, custom_objects={'Scaled': Scaled})
    assert isinstance(restored, Scaled) and restored.factor == 3.0
    with pytest.raises(ValueError, match="unknown regularizer class 'Scaled'"):
        regularizers.get(config)


def test_base_class_must_be_subclassed():
    with pytest.raises(NotImplementedError):
        regularizers.Regularizer()(Tensor(W))
    with pytest.raises(NotImplementedError, match='get_config'):
        regularizers.Regularizer().get_config()


def test_unknown_identifiers_are_refused():
    with pytest.raises(ValueError, match="unknown regularizer 'l3'; known: l1, l2, l1_l2"):
        regularizers.get('l3')
    with pytest.raises(TypeError, match='cannot interpret'):
        regularizers.get(0.1)
