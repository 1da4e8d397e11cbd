"""Keras 2.2.4's text examples, model and training calls as written for Keras, on small data.

imdb_cnn, imdb_cnn_lstm, imdb_fasttext, imdb_bidirectional_lstm and
reuters_mlp: data loaded with ``minidl.datasets.imdb`` / ``reuters`` from
files in Keras's format (conftest), then the examples' preprocessing
(``pad_sequences``, ``Tokenizer.sequences_to_matrix``), layers and calls.
The parameter counts are the ones Keras 2 prints, worked out in the comments.
"""

import numpy as np
import pytest

import minidl
from minidl.datasets import imdb, reuters
from minidl.layers import (
    LSTM, Activation, Bidirectional, Conv1D, Dense, Dropout, Embedding, GlobalAveragePooling1D,
    GlobalMaxPooling1D, MaxPooling1D)
from minidl.models import Sequential


def padded_reviews(path, num_words, maxlen, train=None, test=None):
    """The examples' first steps: load with a vocabulary limit, then pad / truncate."""
    from minidl.preprocessing import sequence
    (x_train, y_train), (x_test, y_test) = imdb.load_data(path, num_words=num_words)
    x_train, y_train, x_test, y_test = x_train[:train], y_train[:train], x_test[:test], \
        y_test[:test]
    return ((sequence.pad_sequences(x_train, maxlen=maxlen), y_train),
            (sequence.pad_sequences(x_test, maxlen=maxlen), y_test), x_train)


def test_imdb_cnn(imdb_npz):
    minidl.set_seed(201)
    (x_train, y_train), (x_test, y_test), reviews = padded_reviews(imdb_npz, 5000, 400, 64, 32)

    model = Sequential()
    model.add(Embedding(5000, 50, input_length=400))
    model.add(Dropout(0.2))
    model.add(Conv1D(250, 3, padding='valid', activation='relu', strides=1))
    model.add(GlobalMaxPooling1D())
    model.add(Dense(250))
    model.add(Dropout(0.2))
    model.add(Activation('relu'))
    model.add(Dense(1))
    model.add(Activation('sigmoid'))
    model.compile(loss='binary_crossentropy', optimizer='adam', metrics=['accuracy'])
    history = model.fit(x_train, y_train, batch_size=32, epochs=1, verbose=0,
                        validation_data=(x_test, y_test))

    # Embedding 5000*50 = 250,000; Conv1D 3*50*250 + 250 = 37,750; Dense 250*250 + 250 =
    # 62,750; Dense 250 + 1 = 251.
    assert model.count_params() == 350_751
    assert model.layers[2].output_shape == (None, 398, 250)
    # pad_sequences pads and truncates at the front by default.
    assert x_train.shape == (64, 400) and x_train.max() < 5000
    for review, row in zip(reviews, x_train):
        kept = review[-400:]
        np.testing.assert_array_equal(row[400 - len(kept):], kept)
        assert not row[:400 - len(kept)].any()
    assert any(len(review) > 400 for review in reviews)
    assert any(len(review) < 400 for review in reviews)
    assert np.isfinite(history.history['val_loss'][0])
    assert 0 < model.predict(x_test).min() and model.predict(x_test).max() < 1


def test_imdb_cnn_lstm(imdb_npz):
    minidl.set_seed(202)
    (x_train, y_train), (x_test, y_test), _ = padded_reviews(imdb_npz, 20000, 100, 60, 30)

    model = Sequential()
    model.add(Embedding(20000, 128, input_length=100))
    model.add(Dropout(0.25))
    model.add(Conv1D(64, 5, padding='valid', activation='relu', strides=1))
    model.add(MaxPooling1D(pool_size=4))
    model.add(LSTM(70))
    model.add(Dense(1))
    model.add(Activation('sigmoid'))
    model.compile(loss='binary_crossentropy', optimizer='adam', metrics=['accuracy'])
    history = model.fit(x_train, y_train, batch_size=30, epochs=1, verbose=0,
                        validation_data=(x_test, y_test))
    score, accuracy = model.evaluate(x_test, y_test, batch_size=30, verbose=0)

    # Embedding 20000*128 = 2,560,000; Conv1D 5*128*64 + 64 = 41,024; 100 -> 96 steps,
    # pooled by 4 to 24; LSTM 4*(64*70 + 70*70 + 70) = 37,800; Dense 70 + 1 = 71.
    assert model.count_params() == 2_638_895
    assert [layer.output_shape for layer in model.layers[2:5]] == [
        (None, 96, 64), (None, 24, 64), (None, 70)]
    assert score == pytest.approx(history.history['val_loss'][0], rel=1e-6)
    assert 0 <= accuracy <= 1


def test_imdb_fasttext(imdb_npz):
    minidl.set_seed(203)
    (x_train, y_train), (x_test, y_test), reviews = padded_reviews(imdb_npz, 20000, 400)
    assert np.mean([len(review) for review in reviews]) > 100

    model = Sequential()
    model.add(Embedding(20000, 50, input_length=400))
    model.add(GlobalAveragePooling1D())
    model.add(Dense(1, activation='sigmoid'))
    model.compile(loss='binary_crossentropy', optimizer='adam', metrics=['accuracy'])
    history = model.fit(x_train, y_train, batch_size=32, epochs=3, verbose=0,
                        validation_data=(x_test, y_test))

    # Embedding 20000*50 = 1,000,000; Dense 50 + 1 = 51.
    assert model.count_params() == 1_000_051
    assert model.layers[1].output_shape == (None, 50)
    assert history.history['loss'][-1] < history.history['loss'][0]
    assert history.history['val_accuracy'][-1] > 0.7  # praise vs complaint words


def test_imdb_bidirectional_lstm(imdb_npz):
    minidl.set_seed(204)
    (x_train, y_train), (x_test, y_test), _ = padded_reviews(imdb_npz, 20000, 100, 32, 16)
    y_train, y_test = np.array(y_train), np.array(y_test)

    model = Sequential()
    model.add(Embedding(20000, 128, input_length=100))
    model.add(Bidirectional(LSTM(64)))
    model.add(Dropout(0.5))
    model.add(Dense(1, activation='sigmoid'))
    model.compile('adam', 'binary_crossentropy', metrics=['accuracy'])
    # validation_data as a list [x, y], as the example passes it.
    history = model.fit(x_train, y_train, batch_size=32, epochs=1, verbose=0,
                        validation_data=[x_test, y_test])
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)

    # Embedding 20000*128 = 2,560,000; two LSTMs of 4*(128*64 + 64*64 + 64) = 49,408;
    # Dense 128 + 1 = 129.
    assert model.count_params() == 2_658_945
    assert model.layers[1].output_shape == (None, 128)
    assert sorted(history.history) == ['accuracy', 'loss', 'val_accuracy', 'val_loss']
    assert history.history['val_loss'][0] == pytest.approx(loss, rel=1e-6)


def test_reuters_mlp(reuters_npz):
    from minidl.preprocessing.text import Tokenizer
    minidl.set_seed(205)
    (x_train, y_train), (x_test, y_test) = reuters.load_data(reuters_npz, num_words=1000,
                                                             test_split=0.2)
    num_classes = np.max(y_train) + 1
    tokenizer = Tokenizer(num_words=1000)
    train_matrix = tokenizer.sequences_to_matrix(x_train, mode='binary')
    test_matrix = tokenizer.sequences_to_matrix(x_test, mode='binary')

    model = Sequential()
    model.add(Dense(512, input_shape=(1000,)))
    model.add(Activation('relu'))
    model.add(Dropout(0.5))
    model.add(Dense(num_classes))
    model.add(Activation('softmax'))
    model.compile(loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'])
    history = model.fit(train_matrix, minidl.utils.to_categorical(y_train, num_classes),
                        batch_size=32, epochs=5, verbose=0, validation_split=0.1)
    loss, accuracy = model.evaluate(test_matrix, minidl.utils.to_categorical(y_test, num_classes),
                                    batch_size=32, verbose=0)

    # 460 newswires: int(460 * 0.8) = 368 for training; 46 topics.
    assert len(x_train) == 368 and len(x_test) == 92 and num_classes == 46
    expected = np.zeros((len(x_train), 1000))
    for row, text in enumerate(x_train):
        expected[row, [word for word in text if word < 1000]] = 1
    np.testing.assert_array_equal(train_matrix, expected)
    # Dense 1000*512 + 512 = 512,512; Dense 512*46 + 46 = 23,598.
    assert model.count_params() == 536_110
    assert sorted(history.history) == ['accuracy', 'loss', 'val_accuracy', 'val_loss']
    assert accuracy > 0.3  # each topic has its own words; chance is 1/46
