"""Conv2DTranspose: Keras 2.2.4's weights, sizes and config, and its denoising autoencoder."""

import numpy as np
import pytest

from minidl import backend as K
from minidl import layers
from minidl.functions.conv_transpose import conv2d_transpose
from minidl.layers import (
    Activation, Conv2D, Conv2DTranspose, Dense, Flatten, Input, Reshape, UpSampling2D)
from minidl.models import Model, Sequential

KERAS_CONFIG_KEYS = {
    'name', 'trainable', 'dtype', 'filters', 'kernel_size', 'strides', 'padding',
    'output_padding', 'data_format', 'dilation_rate', 'activation', 'use_bias',
    'kernel_initializer', 'bias_initializer', 'kernel_regularizer', 'bias_regularizer',
    'activity_regularizer', 'kernel_constraint', 'bias_constraint'}


def test_keras_aliases():
    assert layers.Deconvolution2D is layers.Deconv2D is layers.Convolution2DTranspose \
        is Conv2DTranspose


def test_weights_are_keras_layout_and_count():
    layer = Conv2DTranspose(8, (3, 2))
    layer(Input((5, 5, 16)))
    assert [w.name for w in layer.weights] == ['conv2d_transpose/kernel:0',
                                              'conv2d_transpose/bias:0']
    assert [w.shape for w in layer.weights] == [(3, 2, 8, 16), (8,)]
    assert layer.count_params() == 3 * 2 * 8 * 16 + 8
    no_bias = Conv2DTranspose(8, 3, use_bias=False, data_format='channels_first')
    no_bias(Input((16, 5, 5)))
    assert [w.shape for w in no_bias.weights] == [(3, 3, 8, 16)]


@pytest.mark.parametrize('kwargs,in_size,out_size', [
    # Keras 2.2.4's deconv_length: size*stride + max(kernel - stride, 0) for 'valid', ...
    ({'kernel_size': 3, 'strides': 2}, (5, 4), (11, 9)),
    ({'kernel_size': 3, 'strides': 2, 'padding': 'same'}, (5, 4), (10, 8)),
    ({'kernel_size': 2, 'strides': 3}, (5, 4), (15, 12)),
    # ... and (size - 1)*stride + kernel - 2*pad + output_padding with output_padding.
    ({'kernel_size': 3, 'strides': 2, 'padding': 'same', 'output_padding': 0}, (5, 4), (9, 7)),
    ({'kernel_size': 3, 'strides': (2, 3), 'output_padding': (1, 2)}, (5, 4), (12, 14)),
    ({'kernel_size': 3, 'dilation_rate': 2, 'padding': 'same'}, (5, 4), (5, 4)),
    ({'kernel_size': 3, 'dilation_rate': 2}, (5, 4), (9, 8)),
])
@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_output_shape(kwargs, in_size, out_size, data_format):
    layer = Conv2DTranspose(2, data_format=data_format, **kwargs)
    channels_first = data_format == 'channels_first'
    in_shape = (3, 4, *in_size) if channels_first else (3, *in_size, 4)
    expected = (3, 2, *out_size) if channels_first else (3, *out_size, 2)
    assert layer.compute_output_shape(in_shape) == expected
    x = np.random.default_rng(0).standard_normal(in_shape).astype(np.float32)
    assert layer(x).shape == expected


def test_call_is_the_function_plus_activation():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 3, 5)).astype(np.float32)
    layer = Conv2DTranspose(3, 3, strides=2, padding='same', output_padding=1,
                            activation='relu', bias_initializer='ones')
    y = layer(x)
    kernel, bias = layer.get_weights()
    expected = np.maximum(conv2d_transpose(x, kernel, bias, strides=2, padding='same',
                                           output_padding=1).numpy(), 0)
    np.testing.assert_array_equal(y.numpy(), expected)
    assert np.all(bias == 1)


def test_config_round_trip_has_keras_keys():
    layer = Conv2DTranspose(4, 3, strides=2, output_padding=1, padding='same',
                            data_format='channels_first', activation='tanh')
    config = layer.get_config()
    assert set(config) == KERAS_CONFIG_KEYS
    assert config['output_padding'] == (1, 1) and config['strides'] == (2, 2)
    assert Conv2DTranspose.from_config(config).get_config() == config


def test_bad_arguments():
    with pytest.raises(ValueError, match='output_padding'):
        Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match='output_padding'):
        Conv2DTranspose(2, 3, output_padding=1)  # stride 1
    with pytest.raises(ValueError, match='padding'):
        Conv2DTranspose(2, 3, padding='causal')
    with pytest.raises(ValueError, match='ndim=4'):
        Conv2DTranspose(2, 3)(Input((5, 3)))
    with pytest.raises(NotImplementedError, match='groups'):
        Conv2DTranspose(2, 3, groups=2)


def _denoising_autoencoder(image_size=28, kernel_size=3, latent_dim=16,
                           layer_filters=(32, 64)):
    """Keras 2.2.4's examples/mnist_denoising_autoencoder.py model, imports changed only."""
    inputs = Input(shape=(image_size, image_size, 1), name='encoder_input')
    x = inputs
    for filters in layer_filters:
        x = Conv2D(filters=filters, kernel_size=kernel_size, strides=2, activation='relu',
                   padding='same')(x)
    shape = K.int_shape(x)
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
    return encoder, decoder, autoencoder


def test_mnist_denoising_autoencoder_builds_and_trains():
    encoder, decoder, autoencoder = _denoising_autoencoder()
    # Keras 2.2.4's summaries: 320 + 18496 + 50192; 53312 + 36928 + 18464 + 289.
    assert encoder.count_params() == 69008
    assert decoder.count_params() == 108993
    assert autoencoder.count_params() == 178001
    assert [layer.output_shape for layer in decoder.layers[-4:-1]] == [
        (None, 14, 14, 64), (None, 28, 28, 32), (None, 28, 28, 1)]
    autoencoder.compile(loss='mse', optimizer='adam')
    rng = np.random.default_rng(0)
    clean = rng.uniform(size=(8, 28, 28, 1)).astype('float32')
    noisy = np.clip(clean + 0.5 * rng.standard_normal(clean.shape), 0, 1).astype('float32')
    losses = [autoencoder.train_on_batch(noisy, clean) for _ in range(3)]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]
    assert autoencoder.predict(noisy).shape == (8, 28, 28, 1)


def test_bilinear_upsampling_layer():
    # Rows of x are 0 and 2, columns 0 and 1 (x = 2*row + col): see tests/.../test_resize.py.
    x = np.array([[0.0, 1.0], [2.0, 3.0]], dtype='float32').reshape(1, 1, 2, 2)
    model = Sequential([UpSampling2D(2, data_format='channels_first', interpolation='bilinear',
                                     input_shape=(1, 2, 2))])
    expected = [[0, 0.5, 1, 1], [1, 1.5, 2, 2], [2, 2.5, 3, 3], [2, 2.5, 3, 3]]
    np.testing.assert_array_equal(model.predict(x)[0, 0], expected)
    assert model.layers[0].get_config()['interpolation'] == 'bilinear'
