"""Keras 2's update mechanism on layers and models: add_update, updates, get_updates_for,
get_losses_for, and K.update operations run by training steps and K.function.

As in Keras 2.2.4, the updates a layer adds in ``call`` run in training
steps only (its train function runs ``model.updates``; its test and predict
functions do not), and a layer that is not trainable has none.
"""

import numpy as np
import pytest

import minidl
from minidl import backend as K
from minidl.layers import Dense, Input, Layer
from minidl.models import Model, Sequential


class RunningMean(Layer):
    """Centres its input with a running mean of the batches it was trained on."""

    def __init__(self, momentum=0.75, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def build(self, input_shape):
        self.mean = self.add_weight('mean', (input_shape[-1],), initializer='zeros',
                                    trainable=False)
        super().build(input_shape)

    def call(self, inputs):
        self.add_update(K.moving_average_update(self.mean, K.mean(inputs, axis=0),
                                                self.momentum), inputs)
        return inputs - self.mean

    def compute_output_shape(self, input_shape):
        return input_shape


def _data():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((24, 3)) + [5.0, -2.0, 1.0]).astype('float32')
    return x, np.zeros((24, 1), 'float32')


def _model():
    minidl.set_seed(0)
    inputs = Input((3,))
    running = RunningMean(name='running')
    model = Model(inputs, Dense(1)(running(inputs)))
    model.compile('sgd', 'mse')
    return model, running


def test_updates_added_in_call_run_during_fit_not_predict_or_evaluate():
    x, y = _data()
    model, running = _model()
    model.predict(x, batch_size=8)
    model.evaluate(x, y, batch_size=8, verbose=0)
    model.test_on_batch(x, y)
    np.testing.assert_array_equal(K.get_value(running.mean), [0.0, 0.0, 0.0])
    assert len(model.updates) == 1  # the latest run's, listed but not applied

    model.fit(x, y, batch_size=24, epochs=1, verbose=0, shuffle=False)
    expected = np.float32(0.25) * x.mean(axis=0, dtype=np.float32)
    np.testing.assert_allclose(K.get_value(running.mean), expected, rtol=1e-6)

    mean = K.get_value(running.mean)
    model.train_on_batch(x[:8], y[:8])
    step = mean - (mean - x[:8].mean(axis=0)) * np.float32(0.25)
    np.testing.assert_allclose(K.get_value(running.mean), step, rtol=1e-6)
    model.predict(x)
    np.testing.assert_allclose(K.get_value(running.mean), step, rtol=1e-6)


def test_every_training_step_applies_its_batchs_update_and_bits_repeat():
    x, y = _data()
    results = []
    for _ in range(2):
        model, running = _model()
        model.fit(x, y, batch_size=6, epochs=3, verbose=0)
        results.append([K.get_value(running.mean)] + model.get_weights())
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    # Twelve steps toward batch means near the data's mean.
    np.testing.assert_allclose(results[0][0], x.mean(axis=0), atol=0.3)


def test_a_frozen_layer_has_no_updates_and_its_statistics_stay():
    x, y = _data()
    model, running = _model()
    running.trainable = False
    model.compile('sgd', 'mse')
    model.fit(x, y, batch_size=6, epochs=1, verbose=0)
    np.testing.assert_array_equal(K.get_value(running.mean), [0.0, 0.0, 0.0])
    assert running.updates == [] and model.updates == []
    assert running.get_updates_for(None) == []


def test_updates_lists_of_layers_and_models():
    # Keras 2.2.4's tests/keras/engine/test_topology.py::test_get_updates_for.
    a = Input(shape=(2,))
    dense = Dense(1)
    dense.add_update(0, inputs=a)
    dense.add_update(1, inputs=None)
    assert dense.get_updates_for(a) == [0]
    assert dense.get_updates_for(None) == [1]
    assert dense.updates == [0, 1]
    model = Sequential([dense])
    assert model.updates == [0, 1]
    model.trainable = False
    assert model.updates == []

    # Updates added in call belong to the run, keyed by the tensors given.
    layer = RunningMean()
    x = minidl.Tensor(np.ones((2, 3), 'float32'))
    layer(x)
    assert len(layer.updates) == 1
    assert layer.get_updates_for(x) == layer.updates
    assert layer.get_updates_for(None) == []
    layer(x + 1)  # a new run replaces the updates of the one before
    assert len(layer.updates) == 1 and layer.get_updates_for(x) == []


def test_get_losses_for():
    class Penalised(Layer):
        def call(self, inputs):
            self.add_loss(K.sum(inputs), inputs=inputs)
            self.add_loss(K.variable(2.0))
            return inputs

    layer = Penalised()
    x = minidl.Tensor(np.ones((2, 3), 'float32'))
    layer(x)
    assert [float(K.eval(t)) for t in layer.get_losses_for(x)] == [6.0]
    assert [float(K.eval(t)) for t in layer.get_losses_for(None)] == [2.0]
    regularized = Dense(2, kernel_regularizer='l2')
    regularized.build((None, 3))
    assert len(regularized.get_losses_for(None)) == 1
    assert len(regularized.losses) == 1


def test_update_operations_in_k_function():
    x = K.placeholder(shape=(None, 2))
    total = K.variable([0.0, 0.0])
    count = K.variable(0, dtype='int64')
    step = K.function([x], [K.sum(x, axis=0)],
                      updates=[K.update_add(total, K.sum(x, axis=0)), K.update_add(count, 1),
                               (K.variable(0.0), 3.0)])
    np.testing.assert_array_equal(K.get_value(total), [0.0, 0.0])
    for _ in range(3):
        step([np.array([[1.0, 2.0], [3.0, 4.0]], 'float32')])
    np.testing.assert_array_equal(K.get_value(total), [12.0, 18.0])
    assert K.get_value(count) == 3 and K.get_value(count).dtype == np.int64


def test_all_new_values_are_computed_before_any_assignment():
    a, b = K.variable([1.0]), K.variable([2.0])
    swap = K.function([], [], updates=[K.update(a, b), K.update(b, a)])
    swap([])
    assert K.get_value(a)[0] == 2.0 and K.get_value(b)[0] == 1.0


def test_a_training_step_refuses_what_is_not_an_update():
    minidl.set_seed(0)
    dense = Dense(1, input_shape=(2,))
    model = Sequential([dense])
    model.compile('sgd', 'mse')
    dense.add_update(0)
    with pytest.raises(TypeError, match='K.update'):
        model.fit(np.ones((4, 2), 'float32'), np.ones((4, 1), 'float32'), verbose=0)
