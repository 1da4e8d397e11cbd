"""Keras 2.2.4's image_ocr, conv_lstm, mnist_net2net and variational_autoencoder_deconv,
model and calls as written for Keras, on small data.

image_ocr trains a CTC model from a generator that yields its inputs as a
dict by name (with the source strings beside them), its loss computed in a
Lambda by ``K.ctc_batch_cost`` and a dummy loss in compile; its images are
painted here with one bar per letter instead of cairo's fonts (the same
shapes and value range). The parameter counts are the ones Keras 2 prints,
worked out in the comments; where a model is cut down for speed, the full
model is built too and its count checked. Each test also checks one
behaviour against numpy or a closed form.
"""

import itertools
import os

import numpy as np

import minidl
from minidl import backend as K
from minidl.callbacks import Callback
from minidl.datasets import mnist
from minidl.layers import (
    GRU, Activation, BatchNormalization, Conv2D, Conv2DTranspose, Conv3D, ConvLSTM2D, Dense,
    Flatten, Input, Lambda, MaxPooling2D, Reshape, add, concatenate)
from minidl.models import Model, Sequential
from minidl.optimizers import SGD
from minidl.utils.data_utils import get_file

ALPHABET = 'abcdefghijklmnopqrstuvwxyz '


def paint_text(text, w, h, rng):
    """image_ocr's paint_text without cairo: a (1, h, w) image, white (1) with dark text.

    Each character is a cell 6 pixels wide holding a bar at a height of its
    own (a space is empty), placed at a random column, with a little noise.
    """
    image = np.ones((h, w), dtype='float32')
    left = rng.integers(0, w - 6 * len(text) + 1)
    for position, char in enumerate(text):
        if char != ' ':
            top = 6 + 2 * ALPHABET.index(char)
            image[top:top + 4, left + 6 * position + 1:left + 6 * position + 5] = 0
    return np.clip(image + rng.normal(0, 0.05, image.shape), 0, 1)[None]


class TextImageGenerator(Callback):
    """The example's generator of painted words: its word lists, batches and callbacks."""

    def __init__(self, monogram_file, bigram_file, minibatch_size, img_w, img_h,
                 downsample_factor, val_split, absolute_max_string_len=16):
        self.monogram_file, self.bigram_file = monogram_file, bigram_file
        self.minibatch_size, self.img_w, self.img_h = minibatch_size, img_w, img_h
        self.downsample_factor, self.val_split = downsample_factor, val_split
        self.blank_label = self.get_output_size() - 1
        self.absolute_max_string_len = absolute_max_string_len
        self.rng = np.random.default_rng(55)

    def get_output_size(self):
        return len(ALPHABET) + 1

    def build_word_list(self, num_words, max_string_len, mono_fraction):
        words = []
        with open(self.monogram_file, encoding='utf-8') as file:
            for line in file:
                if len(words) == int(num_words * mono_fraction):
                    break
                if len(line.rstrip()) <= max_string_len:
                    words.append(line.rstrip())
        with open(self.bigram_file, encoding='utf-8') as file:
            for line in file:
                if len(words) == num_words:
                    break
                pair = ' '.join(line.lower().split()[:2])
                if len(pair) <= max_string_len:
                    words.append(pair)
        assert len(words) == num_words
        # Interlaced, to mix the easy and the hard words.
        self.X_text = [''] * num_words
        self.X_text[::2], self.X_text[1::2] = words[:num_words // 2], words[num_words // 2:]
        self.Y_data = np.ones([num_words, self.absolute_max_string_len]) * -1
        for i, word in enumerate(self.X_text):
            self.Y_data[i, :len(word)] = [ALPHABET.find(char) for char in word]
        self.Y_len = np.array([[len(word)] for word in self.X_text])
        self.num_words, self.cur_val_index, self.cur_train_index = num_words, self.val_split, 0

    def get_batch(self, index, size, train):
        X_data = np.ones([size, self.img_w, self.img_h, 1])
        labels = np.ones([size, self.absolute_max_string_len])
        input_length = np.zeros([size, 1])
        label_length = np.zeros([size, 1])
        source_str = []
        for i in range(size):
            # Blank images, labelled [blank], among the training words.
            word = '' if train and i > size - 4 else self.X_text[index + i]
            X_data[i, :, :, 0] = self.paint_func(word)[0].T
            input_length[i] = self.img_w // self.downsample_factor - 2
            if word:
                labels[i, :] = self.Y_data[index + i]
                label_length[i] = self.Y_len[index + i]
            else:
                labels[i, 0], label_length[i] = self.blank_label, 1
            source_str.append(word)
        inputs = {'the_input': X_data, 'the_labels': labels, 'input_length': input_length,
                  'label_length': label_length, 'source_str': source_str}
        return inputs, {'ctc': np.zeros([size])}

    def next_train(self):
        while True:
            batch = self.get_batch(self.cur_train_index, self.minibatch_size, train=True)
            self.cur_train_index += self.minibatch_size
            if self.cur_train_index >= self.val_split:
                self.cur_train_index = self.cur_train_index % 32
            yield batch

    def next_val(self):
        while True:
            batch = self.get_batch(self.cur_val_index, self.minibatch_size, train=False)
            self.cur_val_index += self.minibatch_size
            if self.cur_val_index >= self.num_words:
                self.cur_val_index = self.val_split + self.cur_val_index % 32
            yield batch

    def on_train_begin(self, logs=None):
        self.build_word_list(320, 4, 1)
        self.paint_func = lambda text: paint_text(text, self.img_w, self.img_h, self.rng)


def ctc_lambda_func(args):
    y_pred, labels, input_length, label_length = args
    y_pred = y_pred[:, 2:, :]  # the first outputs of the RNN tend to be garbage
    return K.ctc_batch_cost(labels, y_pred, input_length, label_length)


def ocr_model(img_w, img_h, rnn_size, output_size=len(ALPHABET) + 1):
    """image_ocr's network: the training model (CTC loss out), its input and its softmax."""
    conv_filters, kernel_size, pool_size, time_dense_size, act = 16, (3, 3), 2, 32, 'relu'
    input_data = Input(name='the_input', shape=(img_w, img_h, 1), dtype='float32')
    inner = Conv2D(conv_filters, kernel_size, padding='same', activation=act,
                   kernel_initializer='he_normal', name='conv1')(input_data)
    inner = MaxPooling2D(pool_size=(pool_size, pool_size), name='max1')(inner)
    inner = Conv2D(conv_filters, kernel_size, padding='same', activation=act,
                   kernel_initializer='he_normal', name='conv2')(inner)
    inner = MaxPooling2D(pool_size=(pool_size, pool_size), name='max2')(inner)
    conv_to_rnn_dims = (img_w // (pool_size ** 2), (img_h // (pool_size ** 2)) * conv_filters)
    inner = Reshape(target_shape=conv_to_rnn_dims, name='reshape')(inner)
    inner = Dense(time_dense_size, activation=act, name='dense1')(inner)
    gru_1 = GRU(rnn_size, return_sequences=True, kernel_initializer='he_normal',
                name='gru1')(inner)
    gru_1b = GRU(rnn_size, return_sequences=True, go_backwards=True,
                 kernel_initializer='he_normal', name='gru1_b')(inner)
    gru1_merged = add([gru_1, gru_1b])
    gru_2 = GRU(rnn_size, return_sequences=True, kernel_initializer='he_normal',
                name='gru2')(gru1_merged)
    gru_2b = GRU(rnn_size, return_sequences=True, go_backwards=True,
                 kernel_initializer='he_normal', name='gru2_b')(gru1_merged)
    inner = Dense(output_size, kernel_initializer='he_normal',
                  name='dense2')(concatenate([gru_2, gru_2b]))
    y_pred = Activation('softmax', name='softmax')(inner)
    labels = Input(name='the_labels', shape=[16], dtype='float32')
    input_length = Input(name='input_length', shape=[1], dtype='int64')
    label_length = Input(name='label_length', shape=[1], dtype='int64')
    loss_out = Lambda(ctc_lambda_func, output_shape=(1,), name='ctc')(
        [y_pred, labels, input_length, label_length])
    model = Model(inputs=[input_data, labels, input_length, label_length], outputs=loss_out)
    model.compile(loss={'ctc': lambda y_true, y_pred: y_pred},
                  optimizer=SGD(lr=0.02, decay=1e-6, momentum=0.9, nesterov=True, clipnorm=5))
    return model, input_data, y_pred


def decode_batch(test_func, word_batch):
    """Best path: the most likely class per frame, repeats merged, blanks dropped."""
    out = test_func([word_batch])[0]
    return [''.join(ALPHABET[k] for k, _ in itertools.groupby(np.argmax(out[j, 2:], 1))
                    if k < len(ALPHABET)) for j in range(out.shape[0])]


def test_image_ocr(ocr_wordlists_home, monkeypatch, tmp_path):
    minidl.set_seed(901)
    monkeypatch.setenv('MINIDL_HOME', str(ocr_wordlists_home))
    # The example's model: 128x64 images, GRUs of 512 (GRU 3*(in*512 + 512*512 + 512)).
    # conv1 9*16 + 16 = 160; conv2 9*16*16 + 16 = 2,320; dense1 (16*16)*32 + 32 = 8,224;
    # gru1, gru1_b 3*(32*512 + 512*512 + 512) = 837,120 each; gru2, gru2_b
    # 3*(512*512 + 512*512 + 512) = 1,574,400 each; dense2 1024*28 + 28 = 28,700.
    full_model, _, _ = ocr_model(128, 64, 512)
    assert full_model.count_params() == 160 + 2_320 + 8_224 + 2 * 837_120 + 2 * 1_574_400 \
        + 28_700 == 4_862_444

    img_w, img_h, minibatch_size, words_per_epoch = 64, 64, 32, 320  # cut from 128, 16000
    val_words = int(words_per_epoch * 0.2)
    fdir = os.path.dirname(get_file('wordlists.tgz',
                                    origin='http://www.mythic-ai.com/datasets/wordlists.tgz',
                                    untar=True))
    img_gen = TextImageGenerator(
        monogram_file=os.path.join(fdir, 'wordlist_mono_clean.txt'),
        bigram_file=os.path.join(fdir, 'wordlist_bi_clean.txt'),
        minibatch_size=minibatch_size, img_w=img_w, img_h=img_h, downsample_factor=4,
        val_split=words_per_epoch - val_words)
    model, input_data, y_pred = ocr_model(img_w, img_h, 64)  # GRUs of 64, cut from 512
    test_func = K.function([input_data], [y_pred])

    class SaveWeights(Callback):  # the example's VizCallback, less its plots
        def on_epoch_end(self, epoch, logs=None):
            self.model.save_weights(str(tmp_path / ('weights%02d.h5' % epoch)))

    history = model.fit_generator(
        generator=img_gen.next_train(), steps_per_epoch=(words_per_epoch - val_words) // 32,
        epochs=3, validation_data=img_gen.next_val(), validation_steps=val_words // 32,
        callbacks=[SaveWeights(), img_gen], initial_epoch=0, verbose=0)

    assert history.history['loss'][-1] < history.history['loss'][0] / 2
    assert np.isfinite(history.history['val_loss']).all()
    inputs, _ = img_gen.get_batch(0, minibatch_size, train=True)
    decoded = decode_batch(test_func, inputs['the_input'][:6])
    assert all(set(text) <= set(ALPHABET) for text in decoded)
    # A blank image labelled [blank]: every alignment is all blanks, and TensorFlow's CTC
    # lattice holds T (T + 1) / 2 of them; the loss is that closed form of the softmax.
    losses = model.predict([inputs[name] for name in model.input_names])[:, 0]
    probabilities = test_func([inputs['the_input']])[0][:, 2:, :]
    frames, classes = probabilities.shape[1:]
    log_blank = np.log((probabilities[29:, :, -1] + K.epsilon()) / (1 + classes * K.epsilon()))
    np.testing.assert_allclose(
        losses[29:], -log_blank.sum(axis=1) - np.log(frames * (frames + 1) / 2), rtol=1e-5)

    # The example goes on with wider images (512, here 128), from the last epoch's weights.
    wider, wider_input, wider_pred = ocr_model(128, img_h, 64)
    wider.load_weights(str(tmp_path / 'weights02.h5'))
    for old, new in zip(model.get_weights(), wider.get_weights()):
        np.testing.assert_array_equal(old, new)
    wide_gen = TextImageGenerator(img_gen.monogram_file, img_gen.bigram_file, minibatch_size,
                                  128, img_h, 4, words_per_epoch - val_words)
    more = wider.fit_generator(generator=wide_gen.next_train(), steps_per_epoch=2, epochs=4,
                               callbacks=[wide_gen], initial_epoch=3, verbose=0)
    assert more.epoch == [3] and np.isfinite(more.history['loss']).all()
    assert K.function([wider_input], [wider_pred])([inputs['the_input'].repeat(2, axis=1)])[
        0].shape == (minibatch_size, 32, 28)


def generate_movies(n_samples, n_frames, size, rng):
    """conv_lstm's movies at 1/5 of the size: squares of side 2 or 4 moving one pixel a frame
    (in a canvas twice the size, cropped to its middle); the target is the next frame."""
    canvas = 2 * size
    noisy = np.zeros((n_samples, n_frames, canvas, canvas, 1))
    shifted = np.zeros_like(noisy)
    for i in range(n_samples):
        for _ in range(rng.integers(1, 4)):
            x0, y0 = rng.integers(size // 2, 3 * size // 2, size=2)
            dx, dy = rng.integers(-1, 2, size=2)
            w = rng.integers(1, 3)
            for t in range(n_frames):
                x, y = x0 + dx * t, y0 + dy * t
                noisy[i, t, x - w:x + w, y - w:y + w, 0] += 1
                if rng.integers(0, 2):  # noise around the square, to be robust to it
                    noisy[i, t, x - w - 1:x + w + 1, y - w - 1:y + w + 1, 0] += \
                        (-1) ** rng.integers(0, 2) * 0.1
                x, y = x0 + dx * (t + 1), y0 + dy * (t + 1)
                shifted[i, t, x - w:x + w, y - w:y + w, 0] += 1
    crop = slice(size // 2, size // 2 + size)
    noisy, shifted = noisy[:, :, crop, crop], shifted[:, :, crop, crop]
    return np.minimum(noisy, 1), np.minimum(shifted, 1)


def conv_lstm_model(filters, size):
    seq = Sequential()
    seq.add(ConvLSTM2D(filters=filters, kernel_size=(3, 3), input_shape=(None, size, size, 1),
                       padding='same', return_sequences=True))
    seq.add(BatchNormalization())
    for _ in range(3):
        seq.add(ConvLSTM2D(filters=filters, kernel_size=(3, 3), padding='same',
                           return_sequences=True))
        seq.add(BatchNormalization())
    seq.add(Conv3D(filters=1, kernel_size=(3, 3, 3), activation='sigmoid', padding='same',
                   data_format='channels_last'))
    seq.compile(loss='binary_crossentropy', optimizer='adadelta')
    return seq


def test_conv_lstm():
    minidl.set_seed(902)
    # The example's model: 40 filters on 40x40 frames. ConvLSTM2D: 9*in*160 + 9*40*160 + 160,
    # so 59,200 on the 1-channel input and 115,360 on 40 channels (three of them);
    # BatchNormalization 4*40 = 160 (four); Conv3D 27*40 + 1 = 1,081.
    full = conv_lstm_model(40, 40)
    assert full.count_params() == 59_200 + 3 * 115_360 + 4 * 160 + 1_081 == 407_001
    assert full.output_shape == (None, None, 40, 40, 1)

    rng = np.random.default_rng(902)
    noisy_movies, shifted_movies = generate_movies(20, 6, 8, rng)  # cut from 1200, 15, 40
    seq = conv_lstm_model(4, 8)
    history = seq.fit(noisy_movies[:16], shifted_movies[:16], batch_size=4, epochs=3,
                      validation_split=0.25, verbose=0)
    assert history.history['loss'][-1] < history.history['loss'][0]
    # The example's prediction loop: from 4 frames, predict and append the next 3.
    track = noisy_movies[18][:4]
    for _ in range(3):
        new_pos = seq.predict(track[np.newaxis])
        track = np.concatenate((track, new_pos[:, -1]), axis=0)
    assert track.shape == (7, 8, 8, 1) and (0 < track[4:]).all() and (track[4:] < 1).all()

    # The first step of the first ConvLSTM2D, from zero states, in numpy: the gates i, f,
    # c, o of a 'same' 3x3 convolution, hard_sigmoid gates (Keras 2.2.4's default).
    layer = seq.layers[0]
    kernel, _, bias = layer.get_weights()
    frame = noisy_movies[19, :1]  # (1, 8, 8, 1)
    padded = np.pad(frame[0, :, :, 0], 1)
    z = sum(padded[r:r + 8, c:c + 8, None] * kernel[r, c, 0] for r in range(3) for c in range(3))
    i, _, g, o = np.split(z + bias, 4, axis=-1)

    def hard_sigmoid(x):
        return np.clip(0.2 * x + 0.5, 0, 1)
    h = hard_sigmoid(o) * np.tanh(hard_sigmoid(i) * np.tanh(g))
    got = layer(minidl.Tensor(frame[None].astype('float32'))).numpy()
    np.testing.assert_allclose(got[0, 0], h, rtol=1e-5, atol=1e-6)


def test_mnist_net2net(mnist_npz):
    minidl.set_seed(903)
    input_shape, num_classes = (28, 28, 1), 10
    (x_train, y_train), (x_test, y_test) = mnist.load_data(mnist_npz)
    x_train, x_test = (x[:256].astype('float32').reshape((-1,) + input_shape) / 255
                       for x in (x_train, x_test))
    y_train, y_test = (minidl.utils.to_categorical(y[:256]) for y in (y_train, y_test))
    rng = np.random.default_rng(903)

    def base_layers(model, conv1_width, fc1_width, deeper=None):
        model.add(Conv2D(conv1_width, 3, input_shape=input_shape, padding='same', name='conv1'))
        model.add(MaxPooling2D(2, name='pool1'))
        model.add(Conv2D(64, 3, padding='same', name='conv2'))
        if deeper is not None:
            model.add(deeper)
        model.add(MaxPooling2D(2, name='pool2'))
        model.add(Flatten(name='flatten'))
        model.add(Dense(fc1_width, activation='relu', name='fc1'))

    teacher = Sequential()
    base_layers(teacher, 64, 64)
    teacher.add(Dense(num_classes, activation='softmax', name='fc2'))
    teacher.compile(loss='categorical_crossentropy', optimizer=SGD(lr=0.01, momentum=0.9),
                    metrics=['accuracy'])
    teacher_history = teacher.fit(x_train, y_train, epochs=2, validation_data=(x_test, y_test),
                                  verbose=0)

    # Net2WiderNet: conv1 and fc1 copied, then widened with randomly chosen copies of
    # their units, whose outgoing weights are shared among the copies.
    wider = Sequential()
    base_layers(wider, 128, 128)
    wider.add(Dense(num_classes, activation='softmax', name='fc2'))
    for first, second, axis in (('conv1', 'conv2', 3), ('fc1', 'fc2', 1)):
        w1, b1 = teacher.get_layer(first).get_weights()
        w2, b2 = teacher.get_layer(second).get_weights()
        index = rng.integers(w1.shape[-1], size=wider.get_layer(first).get_weights()[1].size
                             - w1.shape[-1])
        factors = np.bincount(index)[index] + 1.
        new_w2 = np.take(w2, index, axis=axis - 1) / factors.reshape(
            (1,) * (axis - 1) + (-1, 1))
        student_w2 = np.concatenate((w2, new_w2), axis=axis - 1)
        np.put_along_axis(student_w2, index.reshape((1,) * (axis - 1) + (-1, 1)), new_w2,
                          axis=axis - 1)
        wider.get_layer(first).set_weights([np.concatenate((w1, np.take(w1, index, -1)), -1),
                                            np.concatenate((b1, b1[index]))])
        wider.get_layer(second).set_weights([student_w2, b2])
    # Net2DeeperNet: an identity convolution and an identity Dense inserted.
    deeper = Sequential()
    conv2_deeper_weights = np.zeros((3, 3, 64, 64)), np.zeros(64)
    conv2_deeper_weights[0][1, 1] = np.eye(64)
    base_layers(deeper, 64, 64, Conv2D(64, 3, padding='same', name='conv2-deeper',
                                        weights=conv2_deeper_weights))
    deeper.add(Dense(64, kernel_initializer='identity', activation='relu', name='fc1-deeper'))
    deeper.add(Dense(num_classes, activation='softmax', name='fc2'))
    for name in ['conv1', 'conv2', 'fc1', 'fc2']:
        deeper.get_layer(name).set_weights(teacher.get_layer(name).get_weights())

    # Both students compute the teacher's function before training (the wider one up to
    # rounding: its shared outgoing weights are split, not copied).
    expected = teacher.predict(x_test)
    np.testing.assert_allclose(wider.predict(x_test), expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(deeper.predict(x_test), expected, rtol=1e-5, atol=1e-7)
    for student in (wider, deeper):
        student.compile(loss='categorical_crossentropy', optimizer=SGD(lr=0.001, momentum=0.9),
                        metrics=['accuracy'])
        history = student.fit(x_train, y_train, epochs=1, validation_data=(x_test, y_test),
                              verbose=0)
        # Starting from the teacher, a student starts where the teacher ended.
        assert history.history['loss'][0] < teacher_history.history['loss'][0]

    # Teacher: conv1 9*64 + 64 = 640; conv2 9*64*64 + 64 = 36,928; fc1 (7*7*64)*64 + 64 =
    # 200,768; fc2 64*10 + 10 = 650. Wider: conv1 1,280; conv2 9*128*64 + 64 = 73,792; fc1
    # 3136*128 + 128 = 401,536; fc2 1,290. Deeper: the teacher's plus conv2-deeper 36,928
    # and fc1-deeper 64*64 + 64 = 4,160.
    assert teacher.count_params() == 238_986
    assert wider.count_params() == 1_280 + 73_792 + 401_536 + 1_290
    assert deeper.count_params() == 238_986 + 36_928 + 4_160
    assert teacher_history.history['val_accuracy'][-1] > 0.3  # ten digits: chance is 0.1


def test_variational_autoencoder_deconv(mnist_npz, tmp_path):
    from minidl.losses import binary_crossentropy, mse
    minidl.set_seed(904)
    (x_train, _), (x_test, y_test) = mnist.load_data(mnist_npz)
    image_size = x_train.shape[1]
    x_train = np.reshape(x_train[:256], [-1, image_size, image_size, 1]).astype('float32') / 255
    x_test = np.reshape(x_test[:64], [-1, image_size, image_size, 1]).astype('float32') / 255
    input_shape, batch_size, kernel_size, filters, latent_dim = (28, 28, 1), 128, 3, 16, 2

    def sampling(args):
        z_mean, z_log_var = args
        batch = K.shape(z_mean)[0]
        dim = K.int_shape(z_mean)[1]
        epsilon = K.random_normal(shape=(batch, dim))
        return z_mean + K.exp(0.5 * z_log_var) * epsilon

    inputs = Input(shape=input_shape, name='encoder_input')
    x = inputs
    for i in range(2):
        filters *= 2
        x = Conv2D(filters=filters, kernel_size=kernel_size, activation='relu', strides=2,
                   padding='same')(x)
    shape = K.int_shape(x)
    x = Flatten()(x)
    x = Dense(16, activation='relu')(x)
    z_mean = Dense(latent_dim, name='z_mean')(x)
    z_log_var = Dense(latent_dim, name='z_log_var')(x)
    z = Lambda(sampling, output_shape=(latent_dim,), name='z')([z_mean, z_log_var])
    encoder = Model(inputs, [z_mean, z_log_var, z], name='encoder')
    latent_inputs = Input(shape=(latent_dim,), name='z_sampling')
    x = Dense(shape[1] * shape[2] * shape[3], activation='relu')(latent_inputs)
    x = Reshape((shape[1], shape[2], shape[3]))(x)
    for i in range(2):
        x = Conv2DTranspose(filters=filters, kernel_size=kernel_size, activation='relu',
                            strides=2, padding='same')(x)
        filters //= 2
    outputs = Conv2DTranspose(filters=1, kernel_size=kernel_size, activation='sigmoid',
                              padding='same', name='decoder_output')(x)
    decoder = Model(latent_inputs, outputs, name='decoder')
    outputs = decoder(encoder(inputs)[2])
    vae = Model(inputs, outputs, name='vae')

    reconstruction_loss = binary_crossentropy(K.flatten(inputs), K.flatten(outputs))
    reconstruction_loss *= image_size * image_size
    kl_loss = 1 + z_log_var - K.square(z_mean) - K.exp(z_log_var)
    kl_loss = K.sum(kl_loss, axis=-1)
    kl_loss *= -0.5
    vae.add_loss(K.mean(reconstruction_loss + kl_loss))
    vae.compile(optimizer='rmsprop')
    history = vae.fit(x_train, epochs=3, batch_size=batch_size, validation_data=(x_test, None),
                      verbose=0)
    vae.save_weights(str(tmp_path / 'vae_cnn_mnist.h5'))

    # Encoder: Conv2D 9*32 + 32 = 320 and 9*32*64 + 64 = 18,496; Dense (7*7*64)*16 + 16 =
    # 50,192; z_mean, z_log_var 16*2 + 2 = 34 each. Decoder: Dense 2*3136 + 3136 = 9,408;
    # Conv2DTranspose 9*64*64 + 64 = 36,928, 9*64*32 + 32 = 18,464 and 9*32 + 1 = 289.
    assert shape == (None, 7, 7, 64)
    assert encoder.count_params() == 320 + 18_496 + 50_192 + 2 * 34 == 69_076
    assert decoder.count_params() == 9_408 + 36_928 + 18_464 + 289 == 65_089
    assert vae.count_params() == 134_165
    assert history.history['loss'][-1] < history.history['loss'][0]
    z_mean_test, _, _ = encoder.predict(x_test, batch_size=batch_size)
    assert z_mean_test.shape == (64, 2) and y_test.shape == (len(y_test),)
    assert decoder.predict(np.array([[0.5, -1.0]])).shape == (1, 28, 28, 1)

    # On flattened tensors the losses average over every pixel of the batch: one number
    # (the example then scales it by 784), as numpy computes it.
    rng = np.random.default_rng(904)
    target, output = rng.random((2, 3, 4)), rng.uniform(0.05, 0.95, (2, 3, 4))
    flat_bce = K.eval(binary_crossentropy(K.flatten(K.constant(target)),
                                          K.flatten(K.constant(output))))
    assert np.shape(flat_bce) == ()
    np.testing.assert_allclose(
        flat_bce, np.mean(-target * np.log(output) - (1 - target) * np.log(1 - output)),
        rtol=1e-5)
    np.testing.assert_allclose(K.eval(mse(K.flatten(K.constant(target)),
                                          K.flatten(K.constant(output)))),
                               np.mean((target - output) ** 2), rtol=1e-5)
