"""Keras 2's ``callback.validation_data``, as custom metric callbacks read it."""

import numpy as np

import minidl
from minidl.callbacks import Callback
from minidl.layers import Dense, Input, concatenate
from minidl.models import Model, Sequential


class ValidationMSE(Callback):
    """A user's callback in Keras 2's style: its own metric from self.validation_data.

    Its __init__ skips the base class's, as some users' do."""

    def __init__(self):
        self.seen = []

    def on_epoch_end(self, epoch, logs=None):
        x_val, y_val, weights = self.validation_data
        error = np.mean((self.model.predict(x_val) - y_val) ** 2)
        self.seen.append((error, logs['val_loss'], weights))


def test_custom_metric_from_validation_data_matches_the_logged_loss():
    minidl.set_seed(5)
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((20, 3)).astype('float32'), rng.standard_normal((20, 2))
    model = Sequential([Dense(2, input_shape=(3,))])
    model.compile('sgd', 'mse')
    callback = ValidationMSE()
    model.fit(x, y, epochs=2, validation_data=(x[:6], y[:6]), callbacks=[callback], verbose=0)
    for error, val_loss, weights in callback.seen:
        np.testing.assert_allclose(error, val_loss, rtol=1e-5)
        np.testing.assert_array_equal(weights, np.ones(6))
    # validation_split: the last 20% of the samples, as Keras takes them.
    model.fit(x, y, validation_split=0.2, callbacks=[callback], verbose=0)
    np.testing.assert_array_equal(callback.validation_data[0], x[16:])
    # A generator's batches are not listed.
    fresh = Callback()
    model.fit(x, y, validation_data=iter([(x[:2], y[:2])] * 2), validation_steps=1,
              callbacks=[fresh], verbose=0)
    assert fresh.validation_data is None


def test_several_inputs_and_outputs_with_weights():
    a, b = Input((2,)), Input((3,))
    merged = concatenate([a, b])
    model = Model([a, b], [Dense(1)(merged), Dense(2)(merged)])
    model.compile('sgd', ['mse', 'mse'])
    xs = [np.zeros((4, 2)), np.ones((4, 3))]
    ys = [np.zeros((4, 1)), np.zeros((4, 2))]
    weight = np.arange(1.0, 5.0)
    callback = Callback()
    model.fit(xs, ys, validation_data=(xs, ys, [weight, None]), callbacks=[callback], verbose=0)
    data = callback.validation_data
    assert len(data) == 6 and data[0] is xs[0] and data[3] is ys[1]
    np.testing.assert_array_equal(data[4], weight)
    np.testing.assert_array_equal(data[5], np.ones(4))
