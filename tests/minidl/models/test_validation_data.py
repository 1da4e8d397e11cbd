"""validation_data by Keras 2.2.4's rule: a tuple or list of 2 is (x, y), of 3 (x, y, weight).

Each val_ value must equal evaluate() on the same data after the epoch.
"""

import numpy as np
import pytest

import minidl
from minidl.layers import Concatenate, Dense, Input
from minidl.models import Model, Sequential


def _data(count=20, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((count, 3)).astype('float32')
    y = (x @ np.array([[1.0], [-2.0], [0.5]], dtype='float32')).astype('float32')
    return x, y


def _model():
    minidl.set_seed(0)
    model = Sequential([Dense(4, activation='tanh', input_shape=(3,)), Dense(1)])
    model.compile('sgd', 'mse', metrics=['mae'])
    return model


@pytest.mark.parametrize('container', [tuple, list])
def test_two_items_are_x_and_y(container):
    x, y = _data()
    x_val, y_val = _data(count=9, seed=1)
    model = _model()
    history = model.fit(x, y, epochs=1, verbose=0, validation_data=container([x_val, y_val]))
    loss, mae = model.evaluate(x_val, y_val, verbose=0)
    assert history.history['val_loss'] == [pytest.approx(loss, rel=1e-6)]
    assert history.history['val_mae'] == [pytest.approx(mae, rel=1e-6)]


def test_three_items_are_x_y_and_sample_weight():
    x, y = _data()
    x_val, y_val = _data(count=9, seed=1)
    weight = np.arange(1, 10, dtype='float32')
    model = _model()
    history = model.fit(x, y, epochs=1, verbose=0, validation_data=[x_val, y_val, weight])
    predictions = model.predict(x_val)
    expected = float(np.sum(weight * (predictions - y_val)[:, 0] ** 2) / len(x_val))
    assert history.history['val_loss'] == [pytest.approx(expected, rel=1e-5)]


def test_a_model_with_two_inputs_takes_its_inputs_as_the_first_item():
    x, y = _data()
    first = Input((3,), name='first')
    second = Input((3,), name='second')
    minidl.set_seed(0)
    model = Model([first, second], Dense(1)(Concatenate()([first, second])))
    model.compile('sgd', 'mse')
    history = model.fit([x, -x], y, epochs=1, verbose=0, validation_data=([x[:5], x[5:10]], y[:5]))
    assert history.history['val_loss'] == [
        pytest.approx(model.evaluate([x[:5], x[5:10]], y[:5], verbose=0), rel=1e-6)]
    # The length decides, as in Keras 2: [x1, x2] is read as x=x1, y=x2.
    with pytest.raises(ValueError, match='expects 2 x array'):
        model.fit([x, -x], y, epochs=1, verbose=0, validation_data=[x[:5], x[5:10]])


@pytest.mark.parametrize('data, found', [
    (lambda x, y: [x, y, None, None], 'it has 4'),
    (lambda x, y: (x,), 'it has 1'),
    (lambda x, y: x, 'got a ndarray'),
])
def test_other_forms_are_refused_naming_what_was_given(data, found):
    x, y = _data()
    model = _model()
    with pytest.raises(ValueError, match=found):
        model.fit(x, y, epochs=1, verbose=0, validation_data=data(x, y))
