"""fit_generator, evaluate_generator and predict_generator against fit, evaluate and predict.

The same batches in the same order must give the same bits as the array
methods, whatever ``workers`` and ``use_multiprocessing`` say.
"""

import math

import numpy as np
import pytest

import minidl
from minidl.layers import Dense
from minidl.models import Sequential
from minidl.utils import Sequence


class Batches(Sequence):
    """Consecutive slices of ``batch_size`` samples: the batches of fit(shuffle=False)."""

    def __init__(self, x, y, batch_size, weight=None):
        self.x, self.y, self.weight, self.batch_size = x, y, weight, batch_size

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __getitem__(self, index):
        part = slice(index * self.batch_size, (index + 1) * self.batch_size)
        if self.weight is None:
            return self.x[part], self.y[part]
        return self.x[part], self.y[part], self.weight[part]


def endless(x, y, batch_size):
    while True:
        yield from Batches(x, y, batch_size)


def _data(count=30):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((count, 4)).astype('float32')
    y = (x[:, 0] - x[:, 2] > 0).astype('int64') + (x[:, 1] > 0.5)
    return x, y


def _model():
    minidl.set_seed(3)
    model = Sequential([Dense(6, activation='tanh', input_shape=(4,)),
                        Dense(3, activation='softmax')])
    model.compile('adam', 'sparse_categorical_crossentropy', metrics=['accuracy'])
    return model


def _assert_same_bits(first, second):
    for a, b in zip(first.get_weights(), second.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_fit_generator_on_a_sequence_gives_the_bits_of_fit_on_the_arrays():
    x, y = _data()
    reference = _model()
    expected = reference.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                             validation_data=(x[:10], y[:10]))
    model = _model()
    history = model.fit_generator(Batches(x, y, 8), epochs=3, shuffle=False, verbose=0,
                                  validation_data=Batches(x[:10], y[:10], 4), workers=4,
                                  use_multiprocessing=True, max_queue_size=2)
    _assert_same_bits(reference, model)
    assert history.history['loss'] == expected.history['loss']
    np.testing.assert_allclose(history.history['val_loss'], expected.history['val_loss'],
                               rtol=1e-6)
    assert history.history['val_accuracy'] == expected.history['val_accuracy']


def test_fit_generator_on_a_plain_generator_reads_steps_per_epoch_batches():
    x, y = _data()
    reference = _model()
    reference.fit(x, y, batch_size=10, epochs=2, shuffle=False, verbose=0)
    model = _model()
    model.fit_generator(endless(x, y, 10), steps_per_epoch=3, epochs=2, verbose=0,
                        validation_data=endless(x, y, 15), validation_steps=2)
    _assert_same_bits(reference, model)


def test_class_weight_applies_to_each_batch_of_a_sequence():
    x, y = _data()
    class_weight = {0: 0.5, 1: 2.0, 2: 1.5}
    reference = _model()
    reference.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0,
                  class_weight=class_weight)
    model = _model()
    model.fit_generator(Batches(x, y, 8), epochs=2, shuffle=False, verbose=0,
                        class_weight=class_weight)
    _assert_same_bits(reference, model)


def test_evaluate_and_predict_generator_match_evaluate_and_predict():
    x, y = _data(count=25)
    weight = np.linspace(0.2, 1.8, len(x)).astype('float32')
    model = _model()
    expected = model.evaluate(x, y, sample_weight=weight, batch_size=7, verbose=0)
    found = model.evaluate_generator(Batches(x, y, 7, weight), workers=3)
    np.testing.assert_allclose(found, expected, rtol=1e-6)
    # Keras: a loss-only model returns one number, not a list.
    model.compile('sgd', 'sparse_categorical_crossentropy')
    assert np.isscalar(model.evaluate_generator(endless(x, y, 5), steps=5))
    predictions = model.predict(x, batch_size=7)
    np.testing.assert_array_equal(model.predict_generator(Batches(x, y, 7)), predictions)
    inputs_only = (x[i:i + 5] for i in range(0, len(x), 5))
    np.testing.assert_array_equal(model.predict_generator(inputs_only, steps=5), predictions)


@pytest.mark.parametrize('call', [
    lambda m, g: m.fit_generator(g, verbose=0),
    lambda m, g: m.evaluate_generator(g),
    lambda m, g: m.predict_generator(g),
])
def test_a_plain_generator_needs_its_number_of_steps(call):
    x, y = _data()
    with pytest.raises(ValueError, match='steps.*=None works only for a Sequence'):
        call(_model(), endless(x, y, 5))


def test_a_validation_generator_needs_validation_steps_and_arrays_are_refused():
    x, y = _data()
    model = _model()
    with pytest.raises(ValueError, match='validation_steps'):
        model.fit_generator(Batches(x, y, 5), verbose=0, validation_data=endless(x, y, 5))
    with pytest.raises(TypeError, match='for arrays use fit'):
        model.fit_generator(x, steps_per_epoch=2)
