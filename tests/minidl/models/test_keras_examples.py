"""Keras-style models learn real rules: a functional residual block, imdb_lstm, a tagger.

The models and training calls are written as in Keras 2 (a functional
residual block, the imdb_lstm example, a bidirectional LSTM tagger); the
data are the 8x8 digits set (a small MNIST) or synthetic sequences with a
rule the model must learn, so the accuracy each reaches is a real check that
training works. Keras's own example scripts are in tests/keras_examples/.
"""

import numpy as np
import pytest

import minidl
from minidl.layers import (
    LSTM, Activation, BatchNormalization, Bidirectional, Conv2D, Dense, Embedding,
    GlobalAveragePooling2D, Input, TimeDistributed, add)
from minidl.models import Model, Sequential

pytest.importorskip('sklearn')


@pytest.fixture(scope='module')
def digits():
    from minidl.datasets import digits
    (x_train, y_train), (x_test, y_test) = digits.load_data()
    return (x_train.astype('float32') / 16, y_train), (x_test.astype('float32') / 16, y_test)


def test_functional_residual_block(digits):
    (x_train, y_train), (x_test, y_test) = digits
    minidl.set_seed(3)
    inputs = Input(shape=(8, 8, 1))
    x = Conv2D(32, 3, padding='same', activation='relu')(inputs)
    y = Conv2D(32, 3, padding='same')(x)
    y = BatchNormalization()(y)
    y = Activation('relu')(y)
    y = Conv2D(32, 3, padding='same')(y)
    y = BatchNormalization()(y)
    x = Activation('relu')(add([x, y]))
    x = GlobalAveragePooling2D()(x)
    outputs = Dense(10, activation='softmax')(x)
    model = Model(inputs=inputs, outputs=outputs)
    model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['acc'])
    history = model.fit(x_train[..., None], y_train, batch_size=32, epochs=20, verbose=0,
                        validation_split=0.1)
    loss, accuracy = model.evaluate(x_test[..., None], y_test, verbose=0)

    assert sorted(history.history) == ['acc', 'loss', 'val_acc', 'val_loss']
    # Conv 1->32, two convs 32->32 (with biases), two BNs of 4x32, Dense 32->10.
    assert model.count_params() == 320 + 2 * 9248 + 2 * 128 + 330
    assert accuracy >= 0.93


def _token_task(count, length, vocabulary, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, vocabulary, size=(count, length))
    return x


def test_imdb_style_embedding_lstm():
    minidl.set_seed(4)
    # Positive reviews contain the token 7 at least twice ("great ... great").
    x = _token_task(1200, 20, 30, seed=0)
    y = ((x == 7).sum(axis=1) >= 2).astype('float32')
    x_train, y_train, x_test, y_test = x[:1000], y[:1000], x[1000:], y[1000:]

    model = Sequential()
    model.add(Embedding(30, 32))
    model.add(LSTM(32, dropout=0.1))
    model.add(Dense(1, activation='sigmoid'))
    model.compile(loss='binary_crossentropy', optimizer='adam', metrics=['accuracy'])
    model.fit(x_train, y_train, batch_size=32, epochs=15, verbose=0,
              validation_data=(x_test, y_test))
    score, accuracy = model.evaluate(x_test, y_test, batch_size=32, verbose=0)

    assert model.count_params() == 30 * 32 + 4 * (32 * 32 + 32 * 32 + 32) + 33
    assert accuracy >= 0.9


def test_bidirectional_lstm_tagger():
    minidl.set_seed(5)
    # Each token's tag is the parity of the NEXT token: only the backward direction sees it.
    x = _token_task(800, 12, 20, seed=1)
    tags = np.zeros_like(x)
    tags[:, :-1] = x[:, 1:] % 2
    tags[:, -1] = 2  # end of sentence
    x_train, y_train, x_test, y_test = x[:700], tags[:700], x[700:], tags[700:]

    model = Sequential()
    model.add(Embedding(20, 16, input_length=12))
    model.add(Bidirectional(LSTM(32, return_sequences=True)))
    model.add(TimeDistributed(Dense(3, activation='softmax')))
    model.compile(loss='sparse_categorical_crossentropy', optimizer='adam',
                  metrics=['accuracy'])
    model.fit(x_train, y_train, batch_size=32, epochs=12, verbose=0)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)

    assert model.output_shape == (None, 12, 3)
    assert model.count_params() == 20 * 16 + 2 * 4 * (16 * 32 + 32 * 32 + 32) + 64 * 3 + 3
    assert accuracy >= 0.95
