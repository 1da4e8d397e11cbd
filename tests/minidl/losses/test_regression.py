import math

import numpy as np
import pytest

from minidl import losses
from tests.minidl.losses.torch_reference import compare_with_torch

torch = pytest.importorskip('torch')
TF = torch.nn.functional
EPS = 1e-7


def data(*shape, seed=0, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


CASES = {
    'mean_squared_error': lambda t, p: TF.mse_loss(p, t, reduction='none').mean(-1),
    'mean_absolute_error': lambda t, p: TF.l1_loss(p, t, reduction='none').mean(-1),
    'mean_absolute_percentage_error':
        lambda t, p: 100 * ((t - p).abs() / t.abs().clamp(min=EPS)).mean(-1),
    'mean_squared_logarithmic_error': lambda t, p: (
        (p.clamp(min=EPS) + 1).log() - (t.clamp(min=EPS) + 1).log()).square().mean(-1),
    'log_cosh': lambda t, p: (p - t).cosh().log().mean(-1),
    'huber': lambda t, p: TF.huber_loss(p, t, reduction='none', delta=1.0).mean(-1),
}


@pytest.mark.parametrize('name', sorted(CASES))
def test_matches_torch(name):
    t, p = data(4, 5), data(4, 5, seed=1)
    if name == 'mean_squared_logarithmic_error':
        t, p = data(4, 5, low=-0.5, high=3.0), data(4, 5, seed=1, low=0.0, high=3.0)
    compare_with_torch(torch, getattr(losses, name), CASES[name], t, p)


def test_huber_delta_matches_torch():
    compare_with_torch(torch, lambda t, p: losses.huber(t, p, delta=0.3),
                       lambda t, p: TF.huber_loss(p, t, reduction='none', delta=0.3).mean(-1),
                       data(3, 4), data(3, 4, seed=1))
    with pytest.raises(ValueError, match='delta'):
        losses.huber(data(1, 2), data(1, 2), delta=0)


def test_sequence_shape_is_reduced_over_the_last_axis_only():
    compare_with_torch(torch, losses.mse, CASES['mean_squared_error'], data(2, 3, 4),
                       data(2, 3, 4, seed=1))


def test_log_cosh_is_finite_for_large_errors():
    value = losses.log_cosh(np.zeros((1, 2)), np.array([[1000.0, -1000.0]])).numpy()
    np.testing.assert_allclose(value, [1000 - math.log(2)], rtol=1e-6)


def test_cosine_similarity_matches_torch():
    compare_with_torch(torch, losses.cosine_similarity,
                       lambda t, p: -TF.cosine_similarity(t, p, dim=-1), data(4, 5),
                       data(4, 5, seed=1))
    compare_with_torch(torch, lambda t, p: losses.cosine_similarity(t, p, axis=0),
                       lambda t, p: -TF.cosine_similarity(t, p, dim=0), data(4, 5),
                       data(4, 5, seed=1))


def test_cosine_similarity_of_a_zero_vector_is_zero():
    value = losses.cosine_similarity(np.array([[1.0, 2.0], [0.0, 0.0]]),
                                     np.array([[2.0, 4.0], [1.0, 1.0]])).numpy()
    np.testing.assert_allclose(value, [-1.0, 0.0], rtol=1e-6)


def test_integer_targets_and_a_single_unit_output():
    targets = np.array([1, 0, 3])
    predictions = np.array([[0.5], [0.0], [2.0]], dtype=np.float32)
    value = losses.mse(targets, predictions)
    assert value.shape == (3,) and value.dtype == np.float32
    np.testing.assert_allclose(value.numpy(), [0.25, 0.0, 1.0])
    # A trailing axis of size one too many on y_true is dropped.
    np.testing.assert_allclose(losses.mae(targets[:, None, None], predictions).numpy(),
                               [0.5, 0.0, 1.0])


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r'mean_squared_error.*\(3, 2\).*\(3, 4\)'):
        losses.mse(np.zeros((3, 2)), np.zeros((3, 4)))
    with pytest.raises(ValueError, match='scalar'):
        losses.mae(1.0, 2.0)
