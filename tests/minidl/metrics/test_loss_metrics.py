import math

import numpy as np
import pytest

import minidl.functions as F
from minidl import losses, metrics
from minidl.tensor import Tensor


def data(seed=0):
    rng = np.random.default_rng(seed)
    y_pred = rng.uniform(0.05, 1.0, size=(10, 3))
    y_pred /= y_pred.sum(-1, keepdims=True)
    y_true = np.eye(3)[rng.integers(0, 3, size=10)]
    return y_true, y_pred, rng.uniform(0, 2, size=10)


CLASSES = [
    (metrics.MeanSquaredError, losses.mse, 'mean_squared_error'),
    (metrics.MeanAbsoluteError, losses.mae, 'mean_absolute_error'),
    (metrics.MeanAbsolutePercentageError, losses.mape, 'mean_absolute_percentage_error'),
    (metrics.MeanSquaredLogarithmicError, losses.msle, 'mean_squared_logarithmic_error'),
    (metrics.Hinge, losses.hinge, 'hinge'),
    (metrics.SquaredHinge, losses.squared_hinge, 'squared_hinge'),
    (metrics.CategoricalHinge, losses.categorical_hinge, 'categorical_hinge'),
    (metrics.KLDivergence, losses.kld, 'kullback_leibler_divergence'),
    (metrics.Poisson, losses.poisson, 'poisson'),
    (metrics.LogCoshError, losses.logcosh, 'logcosh'),
    (metrics.CosineSimilarity, metrics.cosine_similarity, 'cosine_similarity'),
    (metrics.CategoricalCrossentropy, losses.categorical_crossentropy,
     'categorical_crossentropy'),
    (metrics.BinaryCrossentropy, losses.binary_crossentropy, 'binary_crossentropy'),
]


@pytest.mark.parametrize('cls, function, name', CLASSES, ids=[c[0].__name__ for c in CLASSES])
def test_weighted_batches_equal_the_weighted_mean_over_the_whole_set(cls, function, name):
    y_true, y_pred, weights = data()
    metric = cls()
    assert metric.name == name
    for start, stop in [(0, 4), (4, 10)]:
        metric.update_state(y_true[start:stop], y_pred[start:stop], weights[start:stop])
    expected = np.average(function(y_true, y_pred).numpy(), weights=weights)
    assert metric.result() == pytest.approx(expected, rel=1e-6)
    assert cls.from_config(metric.get_config()).get_config() == metric.get_config()


def test_sparse_crossentropy_metric_and_options():
    y_true, y_pred, weights = data()
    metric = metrics.SparseCategoricalCrossentropy(from_logits=True)
    metric.update_state(y_true.argmax(-1), np.log(y_pred), weights)
    expected = np.average(-np.log(y_pred[np.arange(10), y_true.argmax(-1)]), weights=weights)
    assert metric.result() == pytest.approx(expected, rel=1e-6)  # float32 losses
    assert metric.get_config() == {'name': 'sparse_categorical_crossentropy', 'dtype': 'float32',
                                   'from_logits': True}


def test_crossentropy_metric_uses_recorded_logits_without_a_graph():
    z = Tensor(np.array([[60.0, 0.0], [0.0, 1.0]]), dtype='float64', requires_grad=True)
    y_pred = F.softmax(z)
    y_pred._keras_logits = (z, 'softmax')
    metric = metrics.CategoricalCrossentropy()
    metric.update_state(np.array([[0.0, 1.0], [0.0, 1.0]]), y_pred)
    expected = (60.0 + math.log1p(math.exp(-60.0)) + math.log1p(math.exp(-1.0))) / 2
    assert metric.result() == pytest.approx(expected, rel=1e-12)


def test_cosine_similarity_metric_is_positive():
    np.testing.assert_allclose(
        metrics.cosine_similarity(np.array([[1.0, 0.0], [1.0, 1.0]]),
                                  np.array([[2.0, 0.0], [-1.0, -1.0]])).numpy(), [1.0, -1.0])


def test_root_mean_squared_error_over_every_element():
    y_true = np.array([[0.0, 1.0], [2.0, 3.0], [1.0, 1.0]])
    y_pred = np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
    weights = np.array([1.0, 0.5, 2.0])
    metric = metrics.RootMeanSquaredError()
    metric.update_state(y_true[:2], y_pred[:2], weights[:2])
    metric.update_state(y_true[2:], y_pred[2:], weights[2:])
    squared = (y_pred - y_true) ** 2
    expected = math.sqrt(np.average(squared, weights=np.broadcast_to(weights[:, None], (3, 2))))
    assert metric.result() == pytest.approx(expected, rel=1e-12)
    assert metric.result() == metric.result_of(metric.totals)
    assert metric.name == 'root_mean_squared_error'
