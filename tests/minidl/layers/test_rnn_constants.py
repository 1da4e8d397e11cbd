"""Keras 2's RNN ``constants``: a cell that attends to static inputs at every step, checked
against a numpy loop, through a functional model, its saved file, and Keras 2's file layout."""

import numpy as np
import pytest

import minidl
from minidl import backend as K
from minidl.layers import RNN, Input, Layer, LSTMCell
from minidl.models import Model, load_model


class RNNCellWithConstants(Layer):
    """Keras 2.2.4's test cell (tests/keras/layers/recurrent_test.py): h = x A + h B + c C."""

    def __init__(self, units, **kwargs):
        self.units = units
        self.state_size = units
        super().__init__(**kwargs)

    def build(self, input_shape):
        if not isinstance(input_shape, list):
            raise TypeError('expects the shapes of the step input and of the constants')
        step_shape, constant_shape = input_shape
        self.input_kernel = self.add_weight(shape=(step_shape[-1], self.units),
                                            initializer='uniform', name='kernel')
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units),
                                                initializer='uniform', name='recurrent_kernel')
        self.constant_kernel = self.add_weight(shape=(constant_shape[-1], self.units),
                                               initializer='uniform', name='constant_kernel')
        self.built = True

    def call(self, inputs, states, constants):
        [previous], [constant] = states, constants
        output = (K.dot(inputs, self.input_kernel) + K.dot(previous, self.recurrent_kernel)
                  + K.dot(constant, self.constant_kernel))
        return output, [output]

    def get_config(self):
        return {**super().get_config(), 'units': self.units}


rng = np.random.default_rng(0)
X = rng.standard_normal((4, 5, 3)).astype('float32')
C = rng.standard_normal((4, 2)).astype('float32')
H0 = rng.standard_normal((4, 6)).astype('float32')


def _reference(cell, x, c, h):
    a, b, k = (w.numpy() for w in (cell.input_kernel, cell.recurrent_kernel,
                                   cell.constant_kernel))
    outputs = []
    for step in range(x.shape[1]):
        h = x[:, step] @ a + h @ b + c @ k
        outputs.append(h)
    return np.stack(outputs, axis=1)


def _model():
    x, c = Input((5, 3)), Input((2,))
    layer = RNN(RNNCellWithConstants(6), return_sequences=True)
    return Model([x, c], layer(x, constants=c)), layer


def test_every_step_sees_the_constants():
    minidl.set_seed(0)
    model, layer = _model()
    assert model.count_params() == 3 * 6 + 6 * 6 + 2 * 6  # no bias
    expected = _reference(layer.cell, X, C, np.zeros((4, 6), 'float32'))
    np.testing.assert_allclose(model.predict([X, C]), expected, rtol=1e-5, atol=1e-6)
    # On arrays, with an initial state too.
    got = layer(X, initial_state=H0, constants=[C]).numpy()
    np.testing.assert_allclose(got, _reference(layer.cell, X, C, H0), rtol=1e-5, atol=1e-6)


def test_saved_and_keras_2_layout_models_load(tmp_path):
    minidl.set_seed(1)
    model, layer = _model()
    assert layer.get_config()['num_constants'] == 1
    model.save(tmp_path / 'm.h5')
    loaded = load_model(tmp_path / 'm.h5', compile=False,
                        custom_objects={'RNNCellWithConstants': RNNCellWithConstants})
    np.testing.assert_array_equal(loaded.predict([X, C]), model.predict([X, C]))
    # Keras 2 writes the constants among the inputs and num_constants in the config.
    rebuilt = RNN.from_config(layer.get_config(),
                              custom_objects={'RNNCellWithConstants': RNNCellWithConstants})
    x, c = Input((5, 3)), Input((2,))
    keras_layout = Model([x, c], rebuilt([x, c]))
    keras_layout.set_weights(model.get_weights())
    np.testing.assert_array_equal(keras_layout.predict([X, C]), model.predict([X, C]))


def test_a_cell_without_constants_is_refused():
    x, c = Input((5, 3)), Input((2,))
    with pytest.raises(ValueError, match='does not support constants'):
        RNN(LSTMCell(4))(x, constants=c)
