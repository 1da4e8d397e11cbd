"""Small compiled models with data, shared by the saving tests.

Each builder returns ``(model, x, y)``.
"""

import numpy as np

from minidl import layers, losses, models, optimizers
from minidl.compute import Generator, set_seed
from minidl.naming import clear_session


def sequential_model(count=24):
    """Dense, BatchNormalization, a seeded Dropout (its own generator), Dense; Adam."""
    model = models.Sequential([
        layers.Dense(8, activation='relu', input_shape=(5,)),
        layers.BatchNormalization(),
        layers.Dropout(0.25, seed=11),
        layers.Dense(3, activation='softmax'),
    ])
    model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])
    generator = Generator(3)
    return model, generator.normal((count, 5)), generator.integers(0, 3, shape=(count,))


def functional_model(count=24):
    """Two inputs through one shared Dense, BatchNormalization, two outputs; SGD momentum."""
    first, second = layers.Input((5,), name='first'), layers.Input((5,), name='second')
    shared = layers.Dense(6, activation='tanh', name='shared')
    merged = layers.Concatenate()([shared(first), shared(second)])
    hidden = layers.BatchNormalization(name='norm')(merged)
    label = layers.Dense(3, activation='softmax', name='label')(hidden)
    value = layers.Dense(1, name='value')(hidden)
    model = models.Model([first, second], [label, value])
    model.compile(optimizer=optimizers.SGD(learning_rate=0.05, momentum=0.9),
                  loss={'label': 'sparse_categorical_crossentropy', 'value': 'mse'},
                  loss_weights=[1.0, 0.5], metrics={'label': ['accuracy'], 'value': ['mae']})
    generator = Generator(4)
    x = [generator.normal((count, 5)), generator.normal((count, 5))]
    return model, x, [generator.integers(0, 3, shape=(count,)), generator.normal((count, 1))]


def conv_model(count=16):
    """Conv2D, MaxPooling2D, Flatten, Dense; RMSprop."""
    model = models.Sequential([
        layers.Conv2D(4, 3, activation='relu', input_shape=(6, 6, 2)),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(3, activation='softmax'),
    ])
    model.compile(optimizer='rmsprop', loss='sparse_categorical_crossentropy')
    generator = Generator(5)
    return model, generator.normal((count, 6, 6, 2)), generator.integers(0, 3, shape=(count,))


def recurrent_model(count=16):
    """LSTM (sequences), GRU, Dense; Adam with a loss object."""
    model = models.Sequential([
        layers.LSTM(5, return_sequences=True, input_shape=(4, 3)),
        layers.GRU(4),
        layers.Dense(2),
    ])
    model.compile(optimizer=optimizers.Adam(0.01), loss=losses.MeanSquaredError())
    generator = Generator(6)
    return model, generator.normal((count, 4, 3)), generator.normal((count, 2))


def fresh(seed=0):
    """Start as a new process would: names counted from zero, the default seed set."""
    clear_session()
    set_seed(seed)


def assert_same_bits(first, second):
    """Two lists of arrays with equal dtypes, shapes and bytes."""
    assert len(first) == len(second)
    for index, (a, b) in enumerate(zip(first, second)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, (index, a.dtype, b.dtype, a.shape,
                                                           b.shape)
        assert a.tobytes() == b.tobytes(), f'array {index} differs'
