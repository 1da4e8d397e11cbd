"""Keras 2.2.4's recurrent and round-2 examples, model and training calls as written, small data.

imdb_lstm (LSTM dropout and recurrent_dropout), lstm_text_generation and
addition_rnn (one-hot ``bool`` inputs, RepeatVector, TimeDistributed),
mnist_denoising_autoencoder (Conv2DTranspose, three models sharing layers),
reuters_mlp_relu_vs_selu (AlphaDropout, lecun_normal, selu) and lstm_stateful
(``stateful=True`` with ``reset_states``). Sizes are cut down so the file runs
in seconds; the parameter counts are the ones Keras 2 prints, worked out in
the comments. Each test also checks one behaviour against an independent
truth (numpy, or Keras's documented formula).
"""

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.callbacks import LambdaCallback
from minidl.datasets import imdb, mnist, reuters
from minidl.layers import (
    LSTM, Activation, AlphaDropout, Conv2D, Conv2DTranspose, Dense, Dropout, Embedding, Flatten,
    Input, Reshape)
from minidl.models import Model, Sequential
from minidl.optimizers import RMSprop


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def numpy_lstm(x, kernel, recurrent_kernel, bias, state=None):
    """Keras 2's LSTM on (samples, steps, features): gates i, f, c, o; all step outputs and
    the final (h, c)."""
    units = recurrent_kernel.shape[0]
    h, c = state if state is not None else (np.zeros((len(x), units)),) * 2
    outputs = []
    for step in range(x.shape[1]):
        z = x[:, step] @ kernel + h @ recurrent_kernel + bias
        i, f, g, o = (z[:, k * units:(k + 1) * units] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, axis=1), (h, c)


def test_imdb_lstm(imdb_npz):
    from minidl.preprocessing import sequence
    minidl.set_seed(501)
    (x_train, y_train), (x_test, y_test) = imdb.load_data(imdb_npz, num_words=20000)
    x_train = sequence.pad_sequences(x_train[:64], maxlen=20)
    x_test = sequence.pad_sequences(x_test[:32], maxlen=20)
    y_train, y_test = y_train[:64], y_test[:32]

    model = Sequential()
    model.add(Embedding(20000, 128))
    model.add(LSTM(128, dropout=0.2, recurrent_dropout=0.2))
    model.add(Dense(1, activation='sigmoid'))
    model.compile(loss='binary_crossentropy', optimizer='adam', metrics=['accuracy'])
    history = model.fit(x_train, y_train, batch_size=32, epochs=1, verbose=0,
                        validation_data=(x_test, y_test))
    score, accuracy = model.evaluate(x_test, y_test, batch_size=32, verbose=0)

    # Embedding 20000*128 = 2,560,000; LSTM 4*(128*(128 + 128) + 128) = 131,584;
    # Dense 128 + 1 = 129.
    assert model.count_params() == 2_691_713
    assert score == pytest.approx(history.history['val_loss'][0], rel=1e-6)
    assert 0 <= accuracy <= 1
    # Both dropouts act in training only: inference is the plain LSTM, computed in numpy ...
    embeddings, kernel, recurrent_kernel, bias, dense_kernel, dense_bias = model.get_weights()
    _, (h, _) = numpy_lstm(embeddings[x_test].astype(np.float64), kernel, recurrent_kernel, bias)
    np.testing.assert_allclose(model.predict(x_test), sigmoid(h @ dense_kernel + dense_bias),
                               rtol=1e-4, atol=1e-5)
    # ... while two training passes draw different masks.
    inputs = minidl.Tensor(embeddings[x_test[:4]])
    first, second = (model.layers[1](inputs, training=True).numpy() for _ in range(2))
    assert not np.allclose(first, second)
    np.testing.assert_allclose(model.layers[1](inputs).numpy(), h[:4], rtol=1e-4, atol=1e-5)


def english_like_text(rng, sentences):
    words = ['the', 'will', 'to', 'power', 'is', 'truth', 'of', 'a', 'free', 'spirit', 'and',
             'morality', 'beyond', 'good', 'evil', 'we', 'must']
    return ' '.join(' '.join(rng.choice(words, size=rng.integers(3, 8))).capitalize() + '.'
                    for _ in range(sentences))


def test_lstm_text_generation():
    minidl.set_seed(502)
    text = english_like_text(np.random.default_rng(502), 25).lower()
    chars = sorted(set(text))
    char_indices = {c: i for i, c in enumerate(chars)}
    maxlen, step = 20, 3
    sentences = [text[i:i + maxlen] for i in range(0, len(text) - maxlen, step)]
    next_chars = [text[i + maxlen] for i in range(0, len(text) - maxlen, step)]
    x = np.zeros((len(sentences), maxlen, len(chars)), dtype=bool)
    y = np.zeros((len(sentences), len(chars)), dtype=bool)
    for i, sentence in enumerate(sentences):
        for t, char in enumerate(sentence):
            x[i, t, char_indices[char]] = 1
        y[i, char_indices[next_chars[i]]] = 1

    model = Sequential()
    model.add(LSTM(128, input_shape=(maxlen, len(chars))))
    model.add(Dense(len(chars), activation='softmax'))
    model.compile(loss='categorical_crossentropy', optimizer=RMSprop(lr=0.01))
    epochs_seen = []
    history = model.fit(x, y, batch_size=128, epochs=3, verbose=0, callbacks=[
        LambdaCallback(on_epoch_end=lambda epoch, logs: epochs_seen.append(epoch))])

    # 22 characters: the 20 letters of the words, space and '.'.
    # LSTM 4*(128*(22 + 128) + 128) = 77,312; Dense 128*22 + 22 = 2,838.
    assert len(chars) == 22
    assert model.count_params() == 80_150
    assert epochs_seen == [0, 1, 2]
    losses = history.history['loss']
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
    # Boolean one-hot inputs are read as the floats 0 and 1 (the example's x_pred is float).
    np.testing.assert_array_equal(model.predict(x[:8]), model.predict(x[:8].astype(np.float32)))
    predictions = model.predict(x[:8])
    np.testing.assert_allclose(predictions.sum(axis=1), 1, rtol=1e-5)


class CharacterTable:
    """addition_rnn's table: one-hot encodes strings, decodes one-hot or probability rows."""

    def __init__(self, chars):
        self.chars = sorted(set(chars))
        self.char_indices = {c: i for i, c in enumerate(self.chars)}
        self.indices_char = {i: c for i, c in enumerate(self.chars)}

    def encode(self, string, num_rows):
        x = np.zeros((num_rows, len(self.chars)))
        for i, c in enumerate(string):
            x[i, self.char_indices[c]] = 1
        return x

    def decode(self, x, calc_argmax=True):
        if calc_argmax:
            x = x.argmax(axis=-1)
        return ''.join(self.indices_char[index] for index in x)


def addition_questions(rng, count, digits):
    """The example's reversed, space-padded "a+b" questions and their answers."""
    maxlen = digits + 1 + digits
    questions, expected, seen = [], [], set()
    while len(questions) < count:
        a, b = (int(''.join(rng.choice(list('0123456789'), size=rng.integers(1, digits + 1))))
                for _ in range(2))
        if tuple(sorted((a, b))) in seen:
            continue
        seen.add(tuple(sorted((a, b))))
        query = f'{a}+{b}'
        questions.append((query + ' ' * (maxlen - len(query)))[::-1])
        answer = str(a + b)
        expected.append(answer + ' ' * (digits + 1 - len(answer)))
    return questions, expected


def test_addition_rnn():
    minidl.set_seed(503)
    digits, chars = 3, '0123456789+ '
    maxlen = digits + 1 + digits
    ctable = CharacterTable(chars)
    questions, expected = addition_questions(np.random.default_rng(503), 300, digits)
    x = np.zeros((len(questions), maxlen, len(chars)), dtype=bool)
    y = np.zeros((len(questions), digits + 1, len(chars)), dtype=bool)
    for i, sentence in enumerate(questions):
        x[i] = ctable.encode(sentence, maxlen)
    for i, sentence in enumerate(expected):
        y[i] = ctable.encode(sentence, digits + 1)
    split_at = len(x) - len(x) // 10
    (x_train, x_val), (y_train, y_val) = (x[:split_at], x[split_at:]), (y[:split_at], y[split_at:])

    model = Sequential()
    model.add(layers.LSTM(128, input_shape=(maxlen, len(chars))))
    model.add(layers.RepeatVector(digits + 1))
    model.add(layers.LSTM(128, return_sequences=True))
    model.add(layers.TimeDistributed(layers.Dense(len(chars))))
    model.add(layers.Activation('softmax'))
    model.compile(loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'])
    history = model.fit(x_train, y_train, batch_size=128, epochs=1, verbose=0,
                        validation_data=(x_val, y_val))

    # LSTM 4*(128*(12 + 128) + 128) = 72,192; LSTM 4*(128*(128 + 128) + 128) = 131,584;
    # TimeDistributed(Dense) 128*12 + 12 = 1,548.
    assert model.count_params() == 205_324
    assert [layer.output_shape for layer in model.layers] == [
        (None, 128), (None, 4, 128), (None, 4, 128), (None, 4, 12), (None, 4, 12)]
    assert np.isfinite(history.history['val_loss'][0])
    assert ctable.decode(x_val[0]) == questions[split_at]
    classes = model.predict_classes(x_val[:5], verbose=0)
    np.testing.assert_array_equal(classes, model.predict(x_val[:5]).argmax(axis=-1))
    assert all(len(ctable.decode(row, calc_argmax=False)) == digits + 1 for row in classes)
    # RepeatVector copies the encoding to every step; TimeDistributed(Dense) is the same
    # Dense applied to each step.
    encoded = model.layers[0](minidl.Tensor(x_val[:5].astype(np.float32)))
    repeated = model.layers[1](encoded).numpy()
    np.testing.assert_array_equal(repeated, np.repeat(encoded.numpy()[:, None], 4, axis=1))
    kernel, bias = model.layers[3].get_weights()
    np.testing.assert_allclose(model.layers[3](minidl.Tensor(repeated)).numpy(),
                               repeated @ kernel + bias, rtol=1e-5, atol=1e-6)


def test_mnist_denoising_autoencoder(mnist_npz):
    minidl.set_seed(504)
    rng = np.random.default_rng(504)
    (x_train, _), (x_test, _) = mnist.load_data(mnist_npz)
    image_size = x_train.shape[1]
    x_train = np.reshape(x_train[:128], [-1, image_size, image_size, 1]).astype('float32') / 255
    x_test = np.reshape(x_test[:32], [-1, image_size, image_size, 1]).astype('float32') / 255
    x_train_noisy = np.clip(x_train + rng.normal(0.5, 0.5, x_train.shape), 0., 1.)
    x_test_noisy = np.clip(x_test + rng.normal(0.5, 0.5, x_test.shape), 0., 1.)
    kernel_size, latent_dim, layer_filters = 3, 16, [32, 64]

    inputs = Input(shape=(image_size, image_size, 1), name='encoder_input')
    x = inputs
    for filters in layer_filters:
        x = Conv2D(filters=filters, kernel_size=kernel_size, strides=2, activation='relu',
                   padding='same')(x)
    shape = minidl.backend.int_shape(x)
    x = Flatten()(x)
    latent = Dense(latent_dim, name='latent_vector')(x)
    encoder = Model(inputs, latent, name='encoder')

    latent_inputs = Input(shape=(latent_dim,), name='decoder_input')
    x = Dense(shape[1] * shape[2] * shape[3])(latent_inputs)
    x = Reshape((shape[1], shape[2], shape[3]))(x)
    for filters in layer_filters[::-1]:
        x = Conv2DTranspose(filters=filters, kernel_size=kernel_size, strides=2,
                            activation='relu', padding='same')(x)
    x = Conv2DTranspose(filters=1, kernel_size=kernel_size, padding='same')(x)
    outputs = Activation('sigmoid', name='decoder_output')(x)
    decoder = Model(latent_inputs, outputs, name='decoder')

    autoencoder = Model(inputs, decoder(encoder(inputs)), name='autoencoder')
    autoencoder.compile(loss='mse', optimizer='adam')
    history = autoencoder.fit(x_train_noisy, x_train, validation_data=(x_test_noisy, x_test),
                              epochs=2, batch_size=32, verbose=0)

    # Encoder: Conv2D 3*3*1*32 + 32 = 320; Conv2D 3*3*32*64 + 64 = 18,496; 28 -> 14 -> 7,
    # Dense 7*7*64*16 + 16 = 50,192. Decoder: Dense 16*3136 + 3136 = 53,312;
    # Conv2DTranspose 3*3*64*64 + 64 = 36,928, 3*3*64*32 + 32 = 18,464, 3*3*32*1 + 1 = 289.
    assert shape == (None, 7, 7, 64)
    assert encoder.count_params() == 69_008
    assert decoder.count_params() == 108_993
    assert autoencoder.count_params() == 178_001
    assert [layer.output_shape for layer in decoder.layers[3:6]] == [
        (None, 14, 14, 64), (None, 28, 28, 32), (None, 28, 28, 1)]
    losses = history.history['loss']
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
    # The three models share their layers: the autoencoder is the decoder of the encoder.
    np.testing.assert_allclose(autoencoder.predict(x_test_noisy),
                               decoder.predict(encoder.predict(x_test_noisy)),
                               rtol=1e-5, atol=1e-6)


def create_network(n_dense, dense_units, activation, dropout, dropout_rate, kernel_initializer,
                   optimizer, num_classes, max_words=1000):
    """reuters_mlp_relu_vs_selu's network builder."""
    model = Sequential()
    model.add(Dense(dense_units, input_shape=(max_words,), kernel_initializer=kernel_initializer))
    model.add(Activation(activation))
    model.add(dropout(dropout_rate))
    for _ in range(n_dense - 1):
        model.add(Dense(dense_units, kernel_initializer=kernel_initializer))
        model.add(Activation(activation))
        model.add(dropout(dropout_rate))
    model.add(Dense(num_classes))
    model.add(Activation('softmax'))
    model.compile(loss='categorical_crossentropy', optimizer=optimizer, metrics=['accuracy'])
    return model


def test_reuters_mlp_relu_vs_selu(reuters_npz):
    from minidl.preprocessing.text import Tokenizer
    minidl.set_seed(505)
    (x_train, y_train), (x_test, y_test) = reuters.load_data(reuters_npz, num_words=1000,
                                                             test_split=0.2)
    num_classes = np.max(y_train) + 1
    tokenizer = Tokenizer(num_words=1000)
    x_train = tokenizer.sequences_to_matrix(x_train, mode='binary')
    x_test = tokenizer.sequences_to_matrix(x_test, mode='binary')
    y_train = minidl.utils.to_categorical(y_train, num_classes)
    y_test = minidl.utils.to_categorical(y_test, num_classes)
    network1 = dict(n_dense=6, dense_units=16, activation='relu', dropout=Dropout,
                    dropout_rate=0.5, kernel_initializer='glorot_uniform', optimizer='sgd')
    network2 = dict(n_dense=6, dense_units=16, activation='selu', dropout=AlphaDropout,
                    dropout_rate=0.1, kernel_initializer='lecun_normal', optimizer='sgd')

    for network in (network1, network2):
        model = create_network(num_classes=num_classes, **network)
        history = model.fit(x_train, y_train, batch_size=16, epochs=1, verbose=0,
                            validation_split=0.1)
        score = model.evaluate(x_test, y_test, batch_size=16, verbose=0)
        # Dense 1000*16 + 16 = 16,016; five Dense 16*16 + 16 = 272; Dense 16*46 + 46 = 782.
        assert model.count_params() == 18_158
        assert len(model.layers) == 20
        assert sorted(history.history) == ['accuracy', 'loss', 'val_accuracy', 'val_loss']
        assert np.isfinite(score[0]) and 0 <= score[1] <= 1

    # AlphaDropout (Klambauer et al. 2017, as Keras 2 writes it): a dropped unit becomes
    # alpha' = -scale*alpha, then a*x + b with a = ((1-p)(1 + p alpha'^2))^-1/2 and
    # b = -a alpha' p keeps zero mean and unit variance; inference is the identity.
    rate, alpha_p = 0.1, -1.6732632423543772 * 1.0507009873554805
    a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * rate
    x = np.random.default_rng(505).standard_normal((400, 500)).astype(np.float32)
    layer = AlphaDropout(rate, seed=5)
    out = layer(minidl.Tensor(x), training=True).numpy()
    dropped = np.isclose(out, a * alpha_p + b, atol=1e-6)
    assert dropped.mean() == pytest.approx(rate, abs=0.005)
    np.testing.assert_allclose(out[~dropped], a * x[~dropped] + b, rtol=1e-5, atol=1e-6)
    assert abs(out.mean()) < 0.01 and out.std() == pytest.approx(1, abs=0.01)
    np.testing.assert_array_equal(layer(minidl.Tensor(x)).numpy(), x)


def test_lstm_stateful():
    minidl.set_seed(506)
    input_len, tsteps, batch_size, epochs = 100, 2, 1, 2
    to_drop = tsteps - 1
    series = np.random.default_rng(1986).uniform(-0.1, 0.1, input_len + to_drop)
    # pandas' rolling(window=tsteps).mean(), without its leading NaN rows.
    expected_output = np.convolve(series, np.ones(tsteps) / tsteps, mode='valid')
    data_input = series[to_drop:]
    to_train = int(input_len * 0.8)
    x_train, x_test = data_input[:to_train, None, None], data_input[to_train:, None, None]
    y_train, y_test = expected_output[:to_train, None], expected_output[to_train:, None]

    def create_model(stateful):
        model = Sequential()
        model.add(LSTM(20, input_shape=(1, 1), batch_size=batch_size, stateful=stateful))
        model.add(Dense(1))
        model.compile(loss='mse', optimizer='adam')
        return model

    model_stateful = create_model(stateful=True)
    for _ in range(epochs):
        model_stateful.fit(x_train, y_train, batch_size=batch_size, epochs=1, verbose=0,
                           validation_data=(x_test, y_test), shuffle=False)
        model_stateful.reset_states()
    predicted_stateful = model_stateful.predict(x_test, batch_size=batch_size)
    model_stateless = create_model(stateful=False)
    history = model_stateless.fit(x_train, y_train, batch_size=batch_size, epochs=epochs,
                                  verbose=0, validation_data=(x_test, y_test), shuffle=False)

    # LSTM 4*(20*(1 + 20) + 20) = 1,760; Dense 20 + 1 = 21.
    assert model_stateful.count_params() == model_stateless.count_params() == 1_781
    assert model_stateful.layers[0].output_shape == (1, 20)
    assert np.all(np.isfinite(history.history['val_loss']))
    assert predicted_stateful.shape == (20, 1)
    # Without a reset the state carries on from the last prediction; after one, predictions
    # start afresh from zero state, as the first run did.
    assert not np.allclose(model_stateful.predict(x_test, batch_size=1), predicted_stateful)
    model_stateful.reset_states()
    np.testing.assert_array_equal(model_stateful.predict(x_test, batch_size=1),
                                  predicted_stateful)
    # One-step batches with carried state = one pass over the whole sequence (numpy).
    kernel, recurrent_kernel, bias, dense_kernel, dense_bias = model_stateful.get_weights()
    steps, _ = numpy_lstm(x_test.reshape(1, -1, 1).astype(np.float64), kernel,
                          recurrent_kernel, bias)
    np.testing.assert_allclose(predicted_stateful, steps[0] @ dense_kernel + dense_bias,
                               rtol=1e-4, atol=1e-6)
