"""Constraints: Keras 2's projections (checked against per-slice loops), names and configs."""

import numpy as np
import pytest

from minidl import Tensor, constraints

EPSILON = 1e-7
W = np.random.default_rng(2).normal(size=(4, 6)).astype(np.float32)
W[:, 0] *= 10  # a column far above the norm bounds
W[:, 1] *= 0.01  # and one far below


def per_column(rescale):
    """Apply ``rescale(norm) -> wanted norm`` to each column of W, one at a time."""
    expected = W.astype(np.float64).copy()
    for j in range(W.shape[1]):
        norm = np.sqrt((expected[:, j] ** 2).sum())
        expected[:, j] *= rescale(norm) / (EPSILON + norm)
    return expected


def test_max_norm_caps_each_columns_norm():
    projected = constraints.MaxNorm(max_value=2.0)(W)
    assert projected.dtype == np.float32 and projected.shape == W.shape
    np.testing.assert_allclose(projected, per_column(lambda n: min(n, 2.0)), rtol=1e-6)
    assert np.sqrt((projected ** 2).sum(axis=0)).max() <= 2.0 + 1e-5


def test_max_norm_over_several_axes_caps_each_filter():
    kernel = np.random.default_rng(3).normal(size=(3, 3, 2, 4)).astype(np.float32)
    projected = constraints.max_norm(1.0, axis=[0, 1, 2])(kernel)
    norms = np.sqrt((projected.astype(np.float64) ** 2).sum(axis=(0, 1, 2)))
    np.testing.assert_allclose(norms, 1.0, rtol=1e-5)


def test_non_neg_zeroes_the_negative_weights():
    np.testing.assert_array_equal(constraints.NonNeg()(W), np.where(W >= 0, W, 0))


def test_unit_norm_along_rows():
    projected = constraints.UnitNorm(axis=1)(W)
    np.testing.assert_allclose(projected, W / (EPSILON + np.linalg.norm(W, axis=1, keepdims=True)),
                               rtol=1e-6)


@pytest.mark.parametrize('rate', [1.0, 0.25])
def test_min_max_norm_moves_norms_towards_the_interval(rate):
    projected = constraints.MinMaxNorm(min_value=0.5, max_value=1.5, rate=rate)(W)
    expected = per_column(lambda n: rate * np.clip(n, 0.5, 1.5) + (1 - rate) * n)
    np.testing.assert_allclose(projected, expected, rtol=1e-5)


def test_tensor_in_tensor_out_and_identity_base():
    projected = constraints.NonNeg()(Tensor(W))
    assert isinstance(projected, Tensor)
    np.testing.assert_array_equal(projected.numpy(), np.maximum(W, 0))
    assert constraints.Constraint()(W) is W


@pytest.mark.parametrize('constraint', [
    constraints.MaxNorm(3, axis=1), constraints.NonNeg(), constraints.UnitNorm(axis=[0, 1]),
    constraints.MinMaxNorm(0.1, 2.0, 0.5, 1)])
def test_serialize_round_trip(constraint):
    config = constraints.serialize(constraint)
    restored = constraints.get(config)
    assert type(restored) is type(constraint)
    assert restored.get_config() == constraint.get_config()
    np.testing.assert_array_equal(restored(W), constraint(W))


def test_get_resolves_names_instances_and_functions():
    assert constraints.get(None) is None
    assert isinstance(constraints.get('max_norm'), constraints.MaxNorm)
    assert constraints.get('max_norm').get_config() == {'max_value': 2, 'axis': 0}
    assert isinstance(constraints.get('UnitNorm'), constraints.UnitNorm)
    assert constraints.get('min_max_norm').get_config() == {
        'min_value': 0.0, 'max_value': 1.0, 'rate': 1.0, 'axis': 0}

    def clip(array):
        return array.clip(-1, 1)
    assert constraints.get(clip) is clip
    assert constraints.serialize(clip) == 'clip'
    assert constraints.deserialize('clip', custom_objects={'clip': clip}) is clip


def test_unknown_identifiers_are_refused():
    with pytest.raises(ValueError, match="unknown constraint 'max'; known: max_norm"):
        constraints.get('max')
    with pytest.raises(TypeError, match='cannot interpret'):
        constraints.get(2.0)
