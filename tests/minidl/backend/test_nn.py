"""Activations, dropout, L2 normalization, top-k, bias_add and batch normalization against numpy."""

import numpy as np
import pytest

from minidl import backend as K
from minidl.gradcheck import gradcheck
from minidl.tensor import Tensor

rng = np.random.default_rng(3)
x_values = rng.standard_normal((3, 5)) * 2


def t(array):
    return Tensor(array, dtype=array.dtype)


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


@pytest.mark.parametrize('name, reference', [
    ('relu', lambda a: np.maximum(a, 0)),
    ('elu', lambda a: np.where(a > 0, a, np.exp(a) - 1)),
    ('softmax', lambda a: np.exp(a) / np.exp(a).sum(-1, keepdims=True)),
    ('softplus', lambda a: np.log1p(np.exp(a))),
    ('softsign', lambda a: a / (1 + np.abs(a))),
    ('sigmoid', _sigmoid),
    ('hard_sigmoid', lambda a: np.clip(0.2 * a + 0.5, 0, 1)),
    ('tanh', np.tanh),
])
def test_activations_match_numpy(name, reference):
    np.testing.assert_allclose(K.eval(getattr(K, name)(t(x_values))), reference(x_values),
                               rtol=1e-12, atol=1e-15)


def test_softmax_and_elu_arguments():
    np.testing.assert_allclose(K.eval(K.softmax(t(x_values), axis=0)),
                               np.exp(x_values) / np.exp(x_values).sum(0), rtol=1e-12)
    np.testing.assert_allclose(K.eval(K.elu(t(x_values), alpha=0.5)),
                               np.where(x_values > 0, x_values, 0.5 * np.expm1(x_values)),
                               rtol=1e-12)


@pytest.mark.parametrize('alpha, max_value, threshold', [
    (0.0, None, 0.0), (0.1, None, 0.0), (0.0, 1.5, 0.0), (0.2, 1.5, 0.0), (0.0, None, 0.5),
    (0.3, 2.0, 0.5)])
def test_relu_follows_keras_definition(alpha, max_value, threshold):
    # max_value at and above it, x between the threshold and it, alpha * (x - threshold) below.
    want = np.where(x_values >= threshold, x_values, alpha * (x_values - threshold))
    if max_value is not None:
        want = np.where(x_values >= max_value, max_value, want)
    got = K.relu(t(x_values), alpha=alpha, max_value=max_value, threshold=threshold)
    np.testing.assert_allclose(K.eval(got), want, rtol=1e-12)
    assert gradcheck(lambda x: K.relu(x, alpha, max_value, threshold), [x_values])


def test_dropout_with_a_seed_is_repeatable_and_scales_the_kept_elements():
    x = Tensor(np.ones((200, 50)))
    first, second = K.eval(K.dropout(x, 0.25, seed=7)), K.eval(K.dropout(x, 0.25, seed=7))
    np.testing.assert_array_equal(first, second)
    assert set(np.unique(first)) == {0.0, np.float32(1 / 0.75)}
    assert abs((first == 0).mean() - 0.25) < 0.02
    assert not np.array_equal(first, K.eval(K.dropout(x, 0.25, seed=8)))
    rows = K.eval(K.dropout(x, 0.5, noise_shape=(200, 1), seed=1))
    assert all(len(set(row)) == 1 for row in rows)


def test_l2_normalize():
    for axis in (None, 0, -1, [0, 1]):
        numpy_axis = tuple(axis) if isinstance(axis, list) else axis
        norm = np.sqrt(np.maximum(np.sum(x_values ** 2, axis=numpy_axis, keepdims=True), 1e-12))
        np.testing.assert_allclose(K.eval(K.l2_normalize(t(x_values), axis=axis)),
                                   x_values / norm, rtol=1e-12)
    np.testing.assert_array_equal(K.eval(K.l2_normalize(Tensor(np.zeros(3)))), np.zeros(3))
    assert gradcheck(lambda x: K.l2_normalize(x, axis=1), [x_values])


def test_in_top_k_counts_ties_as_inside():
    predictions = Tensor([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]])
    targets = Tensor([2, 0, 2])
    np.testing.assert_array_equal(K.eval(K.in_top_k(predictions, targets, 1)),
                                  [False, False, False])
    np.testing.assert_array_equal(K.eval(K.in_top_k(predictions, targets, 2)),
                                  [True, True, False])


def test_bias_add_along_the_channel_axis():
    images = rng.standard_normal((2, 3, 4, 5))
    channel_bias = rng.standard_normal(5)
    np.testing.assert_allclose(K.eval(K.bias_add(t(images), t(channel_bias))),
                               images + channel_bias, rtol=1e-12)
    first_bias = rng.standard_normal(3)
    np.testing.assert_allclose(
        K.eval(K.bias_add(t(images), t(first_bias), data_format='channels_first')),
        images + first_bias[:, None, None], rtol=1e-12)
    # One bias per position and channel, given as a channels-last sample (rows, columns, channels).
    full_bias = rng.standard_normal((4, 5, 3))
    np.testing.assert_allclose(
        K.eval(K.bias_add(t(images), t(full_bias), data_format='channels_first')),
        images + full_bias.transpose(2, 0, 1), rtol=1e-12)
    np.testing.assert_allclose(K.eval(K.bias_add(t(images), t(full_bias.transpose(2, 0, 1)))),
                               images + full_bias.transpose(2, 0, 1), rtol=1e-12)
    with pytest.raises(ValueError, match='expected 1 or 3 dimensions'):
        K.bias_add(t(images), t(np.zeros((2, 2))))


def test_batch_normalization_with_given_statistics():
    images = rng.standard_normal((2, 3, 4, 5))
    mean, var, beta, gamma = (rng.uniform(0.5, 1.5, 5) for _ in range(4))
    want = (images - mean) / np.sqrt(var + 1e-3) * gamma + beta
    got = K.batch_normalization(t(images), t(mean), t(var), t(beta), t(gamma))
    np.testing.assert_allclose(K.eval(got), want, rtol=1e-12)
    mean, var = rng.uniform(0.5, 1.5, 3), rng.uniform(0.5, 1.5, 3)
    got = K.batch_normalization(t(images), t(mean), t(var), None, None, axis=1, epsilon=0.1)
    np.testing.assert_allclose(
        K.eval(got), (images - mean[:, None, None]) / np.sqrt(var[:, None, None] + 0.1),
        rtol=1e-12)


def test_normalize_batch_in_training():
    images = rng.standard_normal((4, 3, 2, 5))
    gamma, beta = rng.uniform(0.5, 1.5, 5), rng.standard_normal(5)
    normed, mean, var = K.normalize_batch_in_training(t(images), t(gamma), t(beta), [0, 1, 2])
    np.testing.assert_allclose(K.eval(mean), images.mean((0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(K.eval(var), images.var((0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(
        K.eval(normed),
        (images - images.mean((0, 1, 2))) / np.sqrt(images.var((0, 1, 2)) + 1e-3) * gamma + beta,
        rtol=1e-10)
    assert gradcheck(lambda x: K.normalize_batch_in_training(x, None, None, [0])[0],
                     [rng.standard_normal((4, 3))])
