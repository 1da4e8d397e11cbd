"""One optimizer instance compiled into two models, as Keras 2 allows.

In Keras 2 each ``get_updates`` call makes new moment variables for the
parameters it is given, while ``iterations`` is one variable of the
optimizer: the two models keep their own slots and count their updates
together. The tests check both against fresh optimizers doing the same.
"""

import numpy as np

import minidl
from minidl.layers import Dense, Input
from minidl.models import Model, load_model
from minidl.optimizers import Adam


def two_models():
    minidl.set_seed(11)
    models = []
    for width in (3, 4):
        inputs = Input((5,))
        models.append(Model(inputs, Dense(2)(Dense(width, activation='relu')(inputs))))
    return models


def data():
    rng = np.random.default_rng(2)
    return rng.standard_normal((6, 5)).astype('float32'), rng.standard_normal((6, 2))


def same_bits(a, b):
    return all(x.tobytes() == y.tobytes() for x, y in zip(a, b))


def test_a_reused_optimizer_keeps_slots_per_model_and_counts_updates_together():
    first, second = two_models()
    shared = Adam(0.01)
    first.compile(shared, 'mse')
    second.compile(shared, 'mse')
    assert first.optimizer is shared and second.optimizer is shared
    x, y = data()
    first.train_on_batch(x, y)
    second.train_on_batch(x, y)
    first.train_on_batch(x, y)
    assert shared.iterations == 3
    for model in (first, second):
        for param in model.trainable_weights:
            assert shared.get_slot(param, 'm').shape == param.shape
    assert shared.get_slot(first.trainable_weights[0], 'm') is not \
        shared.get_slot(second.trainable_weights[0], 'm')

    # The same steps with an optimizer of each model's own, its count set to the
    # shared one's where Keras's shared iterations variable would stand.
    again_first, again_second = two_models()
    own_first, own_second = Adam(0.01), Adam(0.01)
    again_first.compile(own_first, 'mse')
    again_second.compile(own_second, 'mse')
    again_first.train_on_batch(x, y)          # shared count 0 -> 1
    own_second.iterations = 1
    again_second.train_on_batch(x, y)         # shared count 1 -> 2
    own_first.iterations = 2
    again_first.train_on_batch(x, y)          # shared count 2 -> 3
    assert same_bits(first.get_weights(), again_first.get_weights())
    assert same_bits(second.get_weights(), again_second.get_weights())


def test_a_model_file_holds_its_own_models_slots(tmp_path):
    first, second = two_models()
    shared = Adam(0.01)
    first.compile(shared, 'mse')
    second.compile(shared, 'mse')
    x, y = data()
    first.train_on_batch(x, y)
    second.train_on_batch(x, y)  # the optimizer last updated the second model
    first.save(tmp_path / 'first.h5')
    loaded = load_model(tmp_path / 'first.h5')
    expected = [np.array(2)] + [shared.get_slot(param, slot) for slot in ('m', 'v')
                                for param in first.trainable_weights]
    assert same_bits(loaded.optimizer.get_weights(), expected)
    # A model the shared optimizer never updated has no state of its own to save.
    third_input = Input((5,))
    third = Model(third_input, Dense(2)(third_input))
    third.compile(shared, 'mse')
    third.save(tmp_path / 'third.h5')
    assert not load_model(tmp_path / 'third.h5').optimizer.built
