"""Keras 2.2.4's MNIST examples, model and training calls as written for Keras, on small data.

mnist_mlp, mnist_cnn, mnist_irnn, mnist_hierarchical_rnn, mnist_transfer_cnn,
mnist_siamese and antirectifier: the same layers, arguments, compile / fit /
evaluate calls and backend functions, on the digits scaled to MNIST's 28x28
layout (conftest), with few samples and epochs. The parameter counts are the
ones Keras 2 prints for these models, worked out by hand in the comments.
"""

import numpy as np
import pytest

import minidl
from minidl.datasets import mnist
from minidl.layers import (
    LSTM, Activation, Conv2D, Dense, Dropout, Flatten, Input, Lambda, MaxPooling2D, SimpleRNN,
    TimeDistributed)
from minidl.models import Model, Sequential


def mnist_like(path, train, test):
    """The first ``train`` / ``test`` images of each split, scaled to [0, 1] as the examples do."""
    (x_train, y_train), (x_test, y_test) = mnist.load_data(path)
    return ((x_train[:train].astype('float32') / 255, y_train[:train]),
            (x_test[:test].astype('float32') / 255, y_test[:test]))


def one_hot(labels, classes=10):
    return minidl.utils.to_categorical(labels, classes)


def test_mnist_mlp(mnist_npz, capsys):
    minidl.set_seed(101)
    (x_train, y_train), (x_test, y_test) = mnist_like(mnist_npz, 1024, 256)
    x_train, x_test = x_train.reshape(-1, 784), x_test.reshape(-1, 784)

    model = Sequential()
    model.add(Dense(512, activation='relu', input_shape=(784,)))
    model.add(Dropout(0.2))
    model.add(Dense(512, activation='relu'))
    model.add(Dropout(0.2))
    model.add(Dense(10, activation='softmax'))
    model.summary()
    model.compile(loss='categorical_crossentropy', optimizer=minidl.optimizers.RMSprop(),
                  metrics=['accuracy'])
    history = model.fit(x_train, one_hot(y_train), batch_size=128, epochs=2, verbose=0,
                        validation_data=(x_test, one_hot(y_test)))
    loss, accuracy = model.evaluate(x_test, one_hot(y_test), verbose=0)

    # 784*512 + 512 = 401,920; 512*512 + 512 = 262,656; 512*10 + 10 = 5,130.
    assert model.count_params() == 669_706
    assert 'Total params: 669,706' in capsys.readouterr().out
    assert sorted(history.history) == ['accuracy', 'loss', 'val_accuracy', 'val_loss']
    assert history.history['loss'][1] < history.history['loss'][0]
    assert accuracy > 0.5  # ten classes: chance is 0.1
    assert loss == pytest.approx(history.history['val_loss'][-1], rel=1e-6)


def test_mnist_cnn(mnist_npz):
    from minidl import backend as K
    minidl.set_seed(102)
    (x_train, y_train), (x_test, y_test) = mnist_like(mnist_npz, 128, 32)
    assert K.image_data_format() == 'channels_last'
    x_train, x_test = x_train.reshape(-1, 28, 28, 1), x_test.reshape(-1, 28, 28, 1)

    model = Sequential()
    model.add(Conv2D(32, kernel_size=(3, 3), activation='relu', input_shape=(28, 28, 1)))
    model.add(Conv2D(64, (3, 3), activation='relu'))
    model.add(MaxPooling2D(pool_size=(2, 2)))
    model.add(Dropout(0.25))
    model.add(Flatten())
    model.add(Dense(128, activation='relu'))
    model.add(Dropout(0.5))
    model.add(Dense(10, activation='softmax'))
    model.compile(loss=minidl.losses.categorical_crossentropy,
                  optimizer=minidl.optimizers.Adadelta(), metrics=['accuracy'])
    before, _ = model.evaluate(x_train, one_hot(y_train), verbose=0)
    model.fit(x_train, one_hot(y_train), batch_size=128, epochs=2, verbose=0,
              validation_data=(x_test, one_hot(y_test)))
    after, _ = model.evaluate(x_train, one_hot(y_train), verbose=0)

    # Convs: 3*3*1*32 + 32 = 320 and 3*3*32*64 + 64 = 18,496; 28 -> 26 -> 24 -> pooled 12,
    # so Flatten gives 12*12*64 = 9,216; Dense 9,216*128 + 128 = 1,179,776; Dense 1,290.
    assert model.count_params() == 1_199_882
    assert [layer.output_shape for layer in model.layers[:4]] == [
        (None, 26, 26, 32), (None, 24, 24, 64), (None, 12, 12, 64), (None, 12, 12, 64)]
    # Keras 2's Adadelta steps with lr 1.0 (tf.keras's 0.001 would barely move in 2 steps).
    assert K.get_value(model.optimizer.lr) == pytest.approx(1.0)
    assert after < before


def test_mnist_irnn(mnist_npz):
    from minidl import initializers
    minidl.set_seed(103)
    (x_train, y_train), (x_test, y_test) = mnist_like(mnist_npz, 32, 32)
    x_train, x_test = x_train.reshape(-1, 784, 1), x_test.reshape(-1, 784, 1)

    model = Sequential()
    model.add(SimpleRNN(100, kernel_initializer=initializers.RandomNormal(stddev=0.001),
                        recurrent_initializer=initializers.Identity(gain=1.0),
                        activation='relu', input_shape=x_train.shape[1:]))
    model.add(Dense(10))
    model.add(Activation('softmax'))
    model.compile(loss='categorical_crossentropy',
                  optimizer=minidl.optimizers.RMSprop(lr=1e-6), metrics=['accuracy'])
    kernel, recurrent, bias = (np.array(w) for w in model.layers[0].get_weights())
    model.fit(x_train, one_hot(y_train), batch_size=32, epochs=1, verbose=0,
              validation_data=(x_test, one_hot(y_test)))
    loss, accuracy = model.evaluate(x_test, one_hot(y_test), verbose=0)
    probabilities = model.predict(x_test[:4])

    # SimpleRNN: 1*100 + 100*100 + 100 = 10,200; Dense 100*10 + 10 = 1,010.
    assert model.count_params() == 11_210
    np.testing.assert_array_equal(recurrent, np.eye(100))
    assert 0.0007 < kernel.std() < 0.0013 and not bias.any()
    # One RMSprop step of lr 1e-6 moves a weight by at most lr / sqrt(1 - rho) ~ 3.2e-6.
    change = np.abs(model.layers[0].get_weights()[1] - recurrent).max()
    assert 0 < change < 4e-6
    assert np.isfinite(loss) and probabilities.shape == (4, 10)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1, rtol=1e-5)


def test_mnist_hierarchical_rnn(mnist_npz):
    minidl.set_seed(104)
    (x_train, y_train), (x_test, y_test) = mnist_like(mnist_npz, 8, 8)
    x_train, x_test = x_train.reshape(-1, 28, 28, 1), x_test.reshape(-1, 28, 28, 1)
    rows, columns, pixels = x_train.shape[1:]

    pixels_in = Input(shape=(rows, columns, pixels))
    row_codes = TimeDistributed(LSTM(128))(pixels_in)
    image_code = LSTM(128)(row_codes)
    prediction = Dense(10, activation='softmax')(image_code)
    model = Model(pixels_in, prediction)
    model.compile(loss='categorical_crossentropy', optimizer='rmsprop', metrics=['accuracy'])
    history = model.fit(x_train, one_hot(y_train), batch_size=32, epochs=2, verbose=0,
                        validation_data=(x_test, one_hot(y_test)))
    loss, accuracy = model.evaluate(x_test, one_hot(y_test), verbose=0)

    # Row LSTM on 1 feature: 4*(1*128 + 128*128 + 128) = 66,560; column LSTM on the 128
    # row codes: 4*(128*128 + 128*128 + 128) = 131,584; Dense 128*10 + 10 = 1,290.
    assert model.count_params() == 199_434
    assert model.layers[1].output_shape == (None, 28, 128)
    assert history.history['loss'][1] < history.history['loss'][0]
    assert np.isfinite(loss)


def test_mnist_transfer_cnn(mnist_npz):
    from minidl import backend as K
    minidl.set_seed(105)
    (x_train, y_train), (x_test, y_test) = mnist_like(mnist_npz, 256, 64)
    shape = (28, 28, 1) if K.image_data_format() == 'channels_last' else (1, 28, 28)

    features = [Conv2D(32, 3, padding='valid', input_shape=shape), Activation('relu'),
                Conv2D(32, 3), Activation('relu'), MaxPooling2D(pool_size=2), Dropout(0.25),
                Flatten()]
    classifier = [Dense(128), Activation('relu'), Dropout(0.5), Dense(5),
                  Activation('softmax')]
    model = Sequential(features + classifier)

    def split(images, labels, digits, offset):
        chosen = np.isin(labels, digits)
        return images[chosen].reshape((-1,) + shape), one_hot(labels[chosen] - offset, 5)

    def train(digits, offset):
        x, y = split(x_train, y_train, digits, offset)
        model.compile(loss='categorical_crossentropy', optimizer='adadelta',
                      metrics=['accuracy'])
        model.fit(x, y, batch_size=128, epochs=1, verbose=0,
                  validation_data=split(x_test, y_test, digits, offset))

    initial = [np.array(w) for w in model.get_weights()]
    train(range(5), 0)
    for layer in features:
        layer.trainable = False
    after_first = [np.array(w) for w in model.get_weights()]
    high_digits = split(x_train, y_train, range(5, 10), 5)
    before_second = model.evaluate(*high_digits, verbose=0)[0]
    train(range(5, 10), 5)
    after_second = model.get_weights()

    # Convs 3*3*1*32 + 32 = 320 and 3*3*32*32 + 32 = 9,248; 28 -> 26 -> 24 -> pooled 12:
    # Dense 12*12*32*128 + 128 = 589,952; Dense 128*5 + 5 = 645.
    assert model.count_params() == 600_165
    assert sum(K.count_params(w) for w in model.non_trainable_weights) == 9_568
    changed = [np.abs(a - b).max() > 0 for a, b in zip(initial, after_first)]
    assert changed == [True] * 8  # the first task trains every layer
    changed = [np.abs(a - b).max() > 0 for a, b in zip(after_first, after_second)]
    assert changed == [False] * 4 + [True] * 4  # the second only the dense layers
    assert model.evaluate(*high_digits, verbose=0)[0] < before_second


def test_mnist_siamese(mnist_npz):
    from minidl import backend as K
    minidl.set_seed(106)
    (x_train, y_train), (x_test, y_test) = mnist_like(mnist_npz, 600, 200)
    rng = np.random.default_rng(106)

    def euclidean_distance(vectors):
        left, right = vectors
        squared = K.sum(K.square(left - right), axis=1, keepdims=True)
        return K.sqrt(K.maximum(squared, K.epsilon()))

    def distance_shape(shapes):
        return (shapes[0][0], 1)

    def contrastive_loss(y_true, y_pred):
        margin = 1
        return K.mean(y_true * K.square(y_pred)
                      + (1 - y_true) * K.square(K.maximum(margin - y_pred, 0)))

    def accuracy(y_true, y_pred):
        return K.mean(K.equal(y_true, K.cast(y_pred < 0.5, y_true.dtype)))

    def make_pairs(images, labels):
        by_digit = [np.flatnonzero(labels == digit) for digit in range(10)]
        per_digit = min(len(indices) for indices in by_digit) - 1
        pairs, same = [], []
        for digit in range(10):
            for i in range(per_digit):
                other = (digit + rng.integers(1, 10)) % 10
                pairs += [[images[by_digit[digit][i]], images[by_digit[digit][i + 1]]],
                          [images[by_digit[digit][i]], images[by_digit[other][i]]]]
                same += [1, 0]
        return np.array(pairs), np.array(same)

    def shared_tower(shape):
        image = Input(shape=shape)
        hidden = Flatten()(image)
        hidden = Dense(128, activation='relu')(hidden)
        hidden = Dropout(0.1)(hidden)
        hidden = Dense(128, activation='relu')(hidden)
        hidden = Dropout(0.1)(hidden)
        return Model(image, Dense(128, activation='relu')(hidden))

    train_pairs, train_same = make_pairs(x_train, y_train)
    test_pairs, test_same = make_pairs(x_test, y_test)
    tower = shared_tower(x_train.shape[1:])
    left, right = Input(shape=x_train.shape[1:]), Input(shape=x_train.shape[1:])
    distance = Lambda(euclidean_distance, output_shape=distance_shape)(
        [tower(left), tower(right)])
    model = Model([left, right], distance)
    model.compile(loss=contrastive_loss, optimizer=minidl.optimizers.RMSprop(),
                  metrics=[accuracy])
    history = model.fit([train_pairs[:, 0], train_pairs[:, 1]], train_same, batch_size=128,
                        epochs=2, verbose=0,
                        validation_data=([test_pairs[:, 0], test_pairs[:, 1]], test_same))
    predicted = model.predict([test_pairs[:, 0], test_pairs[:, 1]])
    loss, metric = model.evaluate([test_pairs[:, 0], test_pairs[:, 1]], test_same,
                                  batch_size=len(test_same), verbose=0)

    # The tower is shared: Dense 784*128 + 128 = 100,480, then two of 128*128 + 128 = 16,512.
    assert model.count_params() == 133_504
    assert model.output_shape == (None, 1) and predicted.shape == (len(test_same), 1)
    assert sorted(history.history) == ['accuracy', 'loss', 'val_accuracy', 'val_loss']
    distances = predicted.ravel()
    # The custom loss and metric, recomputed with numpy from the predicted distances.
    expected_loss = np.mean(test_same * distances ** 2
                            + (1 - test_same) * np.maximum(1 - distances, 0) ** 2)
    assert loss == pytest.approx(expected_loss, rel=1e-5)
    assert metric == pytest.approx(np.mean((distances < 0.5) == test_same), abs=1e-6)
    assert distances.min() >= np.sqrt(1e-7) * 0.999
    assert metric > 0.6  # same / different digit: chance is 0.5


def test_antirectifier(mnist_npz):
    from minidl import backend as K
    from minidl import layers

    class Antirectifier(layers.Layer):
        """Centres and L2-normalises each sample, then keeps its positive and negative parts."""

        def compute_output_shape(self, input_shape):
            shape = list(input_shape)
            assert len(shape) == 2
            shape[-1] *= 2
            return tuple(shape)

        def call(self, inputs):
            inputs -= K.mean(inputs, axis=1, keepdims=True)
            inputs = K.l2_normalize(inputs, axis=1)
            return K.concatenate([K.relu(inputs), K.relu(-inputs)], axis=1)

    minidl.set_seed(107)
    (x_train, y_train), (x_test, y_test) = mnist_like(mnist_npz, 512, 128)
    x_train, x_test = x_train.reshape(-1, 784), x_test.reshape(-1, 784)
    model = Sequential()
    model.add(layers.Dense(256, input_shape=(784,)))
    model.add(Antirectifier())
    model.add(layers.Dropout(0.1))
    model.add(layers.Dense(256))
    model.add(Antirectifier())
    model.add(layers.Dropout(0.1))
    model.add(layers.Dense(10))
    model.add(layers.Activation('softmax'))
    model.compile(loss='categorical_crossentropy', optimizer='rmsprop', metrics=['accuracy'])
    history = model.fit(x_train, one_hot(y_train), batch_size=128, epochs=2, verbose=0,
                        validation_data=(x_test, one_hot(y_test)))

    # Dense 784*256 + 256 = 200,960; the layer doubles 256 to 512: Dense 512*256 + 256 =
    # 131,328; Dense 512*10 + 10 = 5,130.
    assert model.count_params() == 337_418
    assert model.layers[1].output_shape == (None, 512)
    assert history.history['val_accuracy'][-1] > 0.5

    sample = np.array([[1.0, -2.0, 4.0, 1.0], [0.5, 0.5, 0.5, 2.5]], dtype='float32')
    alone = Sequential([Antirectifier(input_shape=(4,))])
    centred = sample - sample.mean(axis=1, keepdims=True)
    unit = centred / np.linalg.norm(centred, axis=1, keepdims=True)
    np.testing.assert_allclose(alone.predict(sample),
                               np.concatenate([np.maximum(unit, 0), np.maximum(-unit, 0)], 1),
                               rtol=1e-5, atol=1e-6)
