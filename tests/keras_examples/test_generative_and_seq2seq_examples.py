"""Keras 2.2.4's variational_autoencoder and lstm_seq2seq, as written for Keras, on small data.

The VAE builds its loss from backend functions on symbolic tensors and adds
it with ``add_loss``, then compiles without a loss; the seq2seq model wires
LSTM states between models that share layers. The parameter counts are the
ones Keras 2 prints, worked out in the comments.
"""

import numpy as np

import minidl
from minidl.datasets import mnist
from minidl.layers import LSTM, Dense, Input, Lambda
from minidl.models import Model


def test_variational_autoencoder(mnist_npz, tmp_path):
    from minidl import backend as K
    from minidl.losses import binary_crossentropy
    from minidl.utils import plot_model
    minidl.set_seed(401)
    (x_train, _), (x_test, y_test) = mnist.load_data(mnist_npz)
    original_dim = x_train.shape[1] * x_train.shape[2]
    x_train = np.reshape(x_train[:256], [-1, original_dim]).astype('float32') / 255
    x_test = np.reshape(x_test[:64], [-1, original_dim]).astype('float32') / 255
    intermediate_dim, latent_dim = 512, 2

    def sampling(args):
        z_mean, z_log_var = args
        batch = K.shape(z_mean)[0]
        dim = K.int_shape(z_mean)[1]
        epsilon = K.random_normal(shape=(batch, dim))
        return z_mean + K.exp(0.5 * z_log_var) * epsilon

    inputs = Input(shape=(original_dim,), name='encoder_input')
    hidden = Dense(intermediate_dim, activation='relu')(inputs)
    z_mean = Dense(latent_dim, name='z_mean')(hidden)
    z_log_var = Dense(latent_dim, name='z_log_var')(hidden)
    z = Lambda(sampling, output_shape=(latent_dim,), name='z')([z_mean, z_log_var])
    encoder = Model(inputs, [z_mean, z_log_var, z], name='encoder')
    plot_model(encoder, to_file=str(tmp_path / 'vae_mlp_encoder.png'), show_shapes=True)

    latent_inputs = Input(shape=(latent_dim,), name='z_sampling')
    hidden = Dense(intermediate_dim, activation='relu')(latent_inputs)
    decoder = Model(latent_inputs, Dense(original_dim, activation='sigmoid')(hidden),
                    name='decoder')
    outputs = decoder(encoder(inputs)[2])
    vae = Model(inputs, outputs, name='vae_mlp')

    reconstruction_loss = binary_crossentropy(inputs, outputs)
    reconstruction_loss *= original_dim
    kl_loss = 1 + z_log_var - K.square(z_mean) - K.exp(z_log_var)
    kl_loss = K.sum(kl_loss, axis=-1)
    kl_loss *= -0.5
    vae.add_loss(K.mean(reconstruction_loss + kl_loss))
    vae.compile(optimizer='adam')
    history = vae.fit(x_train, epochs=2, batch_size=128, validation_data=(x_test, None),
                      verbose=0)
    weights_file = str(tmp_path / 'vae_mlp_mnist.h5')
    vae.save_weights(weights_file)

    # Encoder: Dense 784*512 + 512 = 401,920 and two Dense 512*2 + 2 = 1,026: 403,972.
    # Decoder: Dense 2*512 + 512 = 1,536 and Dense 512*784 + 784 = 402,192: 403,728.
    assert encoder.count_params() == 403_972
    assert decoder.count_params() == 403_728
    assert vae.count_params() == 807_700
    assert (tmp_path / 'vae_mlp_encoder.png').stat().st_size > 0
    assert history.history['loss'][1] < history.history['loss'][0]
    assert np.isfinite(history.history['val_loss']).all()

    means, log_variances, samples = encoder.predict(x_test, batch_size=128)
    again = encoder.predict(x_test, batch_size=128)
    np.testing.assert_array_equal(means, again[0])
    assert not np.array_equal(samples, again[2])  # z is drawn afresh at each call
    # The sampled z, standardised with the predicted mean and variance, is N(0, 1) noise.
    noise = (samples - means) / np.exp(0.5 * log_variances)
    assert abs(noise.mean()) < 0.4 and 0.7 < noise.std() < 1.3
    digit = decoder.predict(np.array([[0.5, -1.0]]))
    assert digit.shape == (1, 784) and 0 < digit.min() and digit.max() < 1
    assert y_test.shape == (len(y_test),)

    for layer in vae.layers:
        layer.set_weights([np.zeros_like(w) for w in layer.get_weights()])
    vae.load_weights(weights_file)
    np.testing.assert_array_equal(encoder.predict(x_test, batch_size=128)[0], means)


def read_pairs(path, num_samples):
    """The example's parsing: source and "\\t" + target + "\\n" texts, and their characters."""
    lines = path.read_text(encoding='utf-8').split('\n')
    sources, targets = [], []
    for line in lines[:min(num_samples, len(lines) - 1)]:
        source, target = line.split('\t')
        sources.append(source)
        targets.append('\t' + target + '\n')
    return sources, targets, sorted(set(''.join(sources))), sorted(set(''.join(targets)))


def one_hot_texts(texts, characters, length, shift=0):
    """(texts, length, characters) one-hot array; ``shift=1`` drops each text's first character."""
    index = {character: i for i, character in enumerate(characters)}
    array = np.zeros((len(texts), length, len(characters)), dtype='float32')
    for row, text in enumerate(texts):
        for step, character in enumerate(text[shift:]):
            array[row, step, index[character]] = 1.
    return array


def test_lstm_seq2seq(sentence_pairs_file, tmp_path):
    minidl.set_seed(402)
    latent_dim = 256
    sources, targets, source_chars, target_chars = read_pairs(sentence_pairs_file, 40)
    source_length = max(len(text) for text in sources)
    target_length = max(len(text) for text in targets)
    encoder_input_data = one_hot_texts(sources, source_chars, source_length)
    decoder_input_data = one_hot_texts(targets, target_chars, target_length)
    decoder_target_data = one_hot_texts(targets, target_chars, target_length, shift=1)

    encoder_inputs = Input(shape=(None, len(source_chars)))
    _, state_h, state_c = LSTM(latent_dim, return_state=True)(encoder_inputs)
    encoder_states = [state_h, state_c]
    decoder_inputs = Input(shape=(None, len(target_chars)))
    decoder_lstm = LSTM(latent_dim, return_sequences=True, return_state=True)
    decoder_sequence, _, _ = decoder_lstm(decoder_inputs, initial_state=encoder_states)
    decoder_dense = Dense(len(target_chars), activation='softmax')
    model = Model([encoder_inputs, decoder_inputs], decoder_dense(decoder_sequence))
    model.compile(optimizer='rmsprop', loss='categorical_crossentropy')
    history = model.fit([encoder_input_data, decoder_input_data], decoder_target_data,
                        batch_size=64, epochs=2, validation_split=0.2, verbose=0)
    model.save(str(tmp_path / 's2s.h5'))

    encoder_model = Model(encoder_inputs, encoder_states)
    state_inputs = [Input(shape=(latent_dim,)), Input(shape=(latent_dim,))]
    step_sequence, step_h, step_c = decoder_lstm(decoder_inputs, initial_state=state_inputs)
    decoder_model = Model([decoder_inputs] + state_inputs,
                          [decoder_dense(step_sequence), step_h, step_c])

    def decode_sequence(input_seq):
        states = encoder_model.predict(input_seq)
        token = np.zeros((1, 1, len(target_chars)))
        token[0, 0, target_chars.index('\t')] = 1.
        decoded = ''
        while True:
            probabilities, h, c = decoder_model.predict([token] + states)
            chosen = int(np.argmax(probabilities[0, -1, :]))
            decoded += target_chars[chosen]
            if target_chars[chosen] == '\n' or len(decoded) > target_length:
                return decoded
            token = np.zeros((1, 1, len(target_chars)))
            token[0, 0, chosen] = 1.
            states = [h, c]

    # 17 letters and the space in; the same reversed, the space, "\t" and "\n" out.
    assert (len(source_chars), len(target_chars)) == (18, 20)
    # Encoder LSTM 4*(18*256 + 256*256 + 256) = 281,600; decoder LSTM
    # 4*(20*256 + 256*256 + 256) = 283,648; Dense 256*20 + 20 = 5,140.
    assert model.count_params() == 570_388
    assert history.history['loss'][1] < history.history['loss'][0]
    assert np.isfinite(history.history['val_loss']).all()

    # The inference models, fed the true previous characters one at a time, reproduce
    # the training model's teacher-forced predictions.
    sample = slice(0, 1)
    expected = model.predict([encoder_input_data[sample], decoder_input_data[sample]])
    states = encoder_model.predict(encoder_input_data[sample])
    for step in range(len(targets[0]) - 1):
        probabilities, h, c = decoder_model.predict(
            [decoder_input_data[sample, step:step + 1]] + states)
        np.testing.assert_allclose(probabilities[0, 0], expected[0, step], rtol=1e-4, atol=1e-6)
        states = [h, c]
    decoded = decode_sequence(encoder_input_data[sample])
    assert 1 <= len(decoded) <= target_length + 1 and set(decoded) <= set(target_chars)

    restored = minidl.models.load_model(str(tmp_path / 's2s.h5'))
    np.testing.assert_array_equal(
        restored.predict([encoder_input_data[sample], decoder_input_data[sample]]), expected)
