"""Initializers: Keras 2's statistics, seeding and config round trips."""

import numpy as np
import pytest

import minidl
from minidl import initializers


@pytest.mark.parametrize('name, shape, limit', [
    ('glorot_uniform', (300, 200), np.sqrt(6 / 500)),
    ('he_uniform', (3, 3, 16, 32), np.sqrt(6 / (3 * 3 * 16))),
    ('lecun_uniform', (400, 10), np.sqrt(3 / 400)),
])
def test_uniform_variance_scaling_limits(name, shape, limit):
    values = initializers.get(name)(shape).numpy()
    assert values.shape == shape and values.dtype == np.float32
    assert np.abs(values).max() <= limit
    assert np.abs(values).max() > 0.98 * limit  # the whole range is used


@pytest.mark.parametrize('name, shape, variance', [
    ('glorot_normal', (400, 600), 2 / 1000),
    ('he_normal', (5, 5, 20, 40), 2 / 500),
    ('lecun_normal', (800, 50), 1 / 800),
])
def test_truncated_normal_variance_scaling_hits_the_target_variance(name, shape, variance):
    values = initializers.get(name)(shape).numpy()
    assert abs(values.var() / variance - 1) < 0.05
    stddev = np.sqrt(variance) / 0.87962566103423978
    assert np.abs(values).max() <= 2 * stddev + 1e-7


def test_keras_defaults_for_random_initializers():
    normal = initializers.RandomNormal(seed=1)((20000,)).numpy()
    assert abs(normal.std() - 0.05) < 0.002
    uniform = initializers.RandomUniform(seed=1)((20000,)).numpy()
    assert uniform.min() >= -0.05 and uniform.max() < 0.05


@pytest.mark.parametrize('shape', [(6, 6), (4, 9), (9, 4), (3, 3, 8)])
def test_orthogonal_has_orthonormal_rows_or_columns(shape):
    values = initializers.Orthogonal(gain=2.0, seed=0)(shape).numpy().reshape(-1, shape[-1])
    small = min(values.shape)
    gram = values.T @ values if values.shape[0] >= values.shape[1] else values @ values.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-5)


def test_constant_ones_zeros_identity():
    assert (initializers.get('zeros')((2, 3)).numpy() == 0).all()
    assert (initializers.get('ones')((2,)).numpy() == 1).all()
    assert (initializers.Constant(0.5)((2,)).numpy() == 0.5).all()
    np.testing.assert_array_equal(initializers.Identity(3.0)((2, 3)).numpy(), 3 * np.eye(2, 3))


def test_seeded_initializers_repeat_and_unseeded_follow_set_seed():
    a = initializers.GlorotUniform(seed=3)((4, 4)).numpy()
    np.testing.assert_array_equal(a, initializers.GlorotUniform(seed=3)((4, 4)).numpy())
    minidl.set_seed(9)
    first = [initializers.get('he_normal')((3, 3)).numpy() for _ in range(2)]
    minidl.set_seed(9)
    again = [initializers.get('he_normal')((3, 3)).numpy() for _ in range(2)]
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first[0], first[1])


def test_config_round_trip_and_lookup_errors():
    original = initializers.VarianceScaling(2.0, 'fan_out', 'uniform', seed=4)
    restored = initializers.get(initializers.serialize(original))
    np.testing.assert_array_equal(restored((5, 5)).numpy(), original((5, 5)).numpy())
    assert type(initializers.get({'class_name': 'GlorotUniform', 'config': {}})) is \
        initializers.GlorotUniform
    with pytest.raises(ValueError, match='unknown initializer'):
        initializers.get('glorot_uniformm')
    with pytest.raises(ValueError, match='mode'):
        initializers.VarianceScaling(mode='fan_sideways')
    with pytest.raises(ValueError, match='2 dimensions'):
        initializers.Orthogonal()((5,))


def test_dtype_argument():
    assert initializers.get('glorot_uniform')((2, 2), dtype='float64').dtype == np.float64


def test_keras_lower_case_names_and_private_fans():
    # Keras 2.2.4's initializers module: class aliases, preset functions of a seed, and
    # _compute_fans, which custom initializers import.
    from minidl import initializers as I
    assert (I.zeros, I.zero, I.ones, I.one, I.constant, I.identity, I.orthogonal) == (
        I.Zeros, I.Zeros, I.Ones, I.Ones, I.Constant, I.Identity, I.Orthogonal)
    assert (I.uniform, I.random_uniform, I.normal, I.random_normal, I.truncated_normal) == (
        I.RandomUniform, I.RandomUniform, I.RandomNormal, I.RandomNormal, I.TruncatedNormal)
    for function, cls in ((I.lecun_uniform, I.LecunUniform), (I.lecun_normal, I.LecunNormal),
                          (I.glorot_uniform, I.GlorotUniform), (I.glorot_normal, I.GlorotNormal),
                          (I.he_uniform, I.HeUniform), (I.he_normal, I.HeNormal)):
        made = function(seed=3)
        assert type(made) is cls and made.get_config()['seed'] == 3
    assert I._compute_fans((4, 5)) == (4, 5)
    assert I._compute_fans((3, 3, 4, 5)) == (36, 45)  # channels_last: (rows, cols, in, out)
    assert I._compute_fans((5, 4, 3, 3), 'channels_first') == (36, 45)
    assert I._compute_fans((2, 2, 2, 2, 2, 2)) == (8.0, 8.0)  # sqrt(64) for both
