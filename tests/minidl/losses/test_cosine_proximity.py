"""Keras 2's ``cosine_proximity`` (and ``cosine``): loss and metric, by hand-computed values."""

import math

import numpy as np

from minidl import losses, metrics
from minidl.layers import Dense, Input
from minidl.models import Model


def test_values_are_the_negative_cosine_of_the_last_axis():
    y_true = np.array([[1.0, 0.0], [0.0, 0.0], [2.0, 2.0]], 'float32')
    y_pred = np.array([[1.0, 1.0], [1.0, 0.0], [-1.0, -1.0]], 'float32')
    # -cos(45 deg); a zero vector gives 0 (l2_normalize's epsilon); opposite vectors give 1.
    want = [-1 / math.sqrt(2), 0.0, 1.0]
    for function in (losses.cosine_proximity, losses.cosine, metrics.cosine_proximity,
                     losses.get('cosine_proximity'), losses.get('cosine')):
        np.testing.assert_allclose(function(y_true, y_pred).numpy(), want, rtol=1e-6, atol=1e-7)


def test_names_serialize_and_compile_as_keras_2s():
    assert losses.serialize(losses.get('cosine')) == 'cosine_proximity'
    assert metrics.get('cosine_proximity').name == 'cosine_proximity'
    x = Input((3,))
    model = Model(x, Dense(2, kernel_initializer='ones')(x))
    model.compile('sgd', loss='cosine_proximity', metrics=['cosine_proximity'])
    logs = model.evaluate(np.ones((2, 3)), np.array([[1.0, 0.0], [0.0, 1.0]]), verbose=0)
    # Every output is (3, 3): its cosine with either one-hot target is 1/sqrt(2).
    np.testing.assert_allclose(logs, [-1 / math.sqrt(2)] * 2, rtol=1e-6)
