import numpy as np
import pytest

from minidl import losses
from tests.minidl.losses.torch_reference import compare_with_torch

torch = pytest.importorskip('torch')


def scores(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, size=shape)


def signs(*shape, seed=1):
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=shape)


def torch_hinge(t, p):
    return (1 - t * p).clamp(min=0).mean(-1)


def torch_squared_hinge(t, p):
    return (1 - t * p).clamp(min=0).square().mean(-1)


@pytest.mark.parametrize('name, reference', [('hinge', torch_hinge),
                                             ('squared_hinge', torch_squared_hinge)])
def test_signed_labels_match_torch(name, reference):
    compare_with_torch(torch, getattr(losses, name), reference, signs(5, 3), scores(5, 3))


@pytest.mark.parametrize('name', ['hinge', 'squared_hinge'])
def test_zero_one_labels_are_converted_to_signs(name):
    labels, predictions = signs(5, 3), scores(5, 3)
    loss = getattr(losses, name)
    np.testing.assert_allclose(loss((labels + 1) / 2, predictions).numpy(),
                               loss(labels, predictions).numpy())


def test_other_labels_are_used_as_given():
    labels = np.array([[0.0, 0.5, 1.0]])  # not all in {0, 1}: no conversion
    predictions = np.array([[1.0, 1.0, 1.0]])
    np.testing.assert_allclose(losses.hinge(labels, predictions).numpy(), [(1 + 0.5 + 0) / 3])


def test_categorical_hinge_matches_torch():
    labels = np.eye(4)[np.random.default_rng(1).integers(0, 4, size=6)]
    compare_with_torch(
        torch, losses.categorical_hinge,
        lambda t, p: ((1 - t) * p).amax(-1).sub((t * p).sum(-1)).add(1).clamp(min=0),
        labels, scores(6, 4))
