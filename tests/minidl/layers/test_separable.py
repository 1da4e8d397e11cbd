"""DepthwiseConv2D, SeparableConv1D and SeparableConv2D: Keras 2.2.4's weights, shapes, configs."""

import numpy as np
import pytest

from minidl import layers
from minidl.functions.depthwise import depthwise_conv2d, separable_conv2d
from minidl.layers import (
    Dense, DepthwiseConv2D, Flatten, Input, SeparableConv1D, SeparableConv2D)
from minidl.models import Sequential

SEPARABLE_KEYS = {
    'name', 'trainable', 'dtype', 'filters', 'kernel_size', 'strides', 'padding', 'data_format',
    'dilation_rate', 'depth_multiplier', 'activation', 'use_bias', 'depthwise_initializer',
    'pointwise_initializer', 'bias_initializer', 'depthwise_regularizer',
    'pointwise_regularizer', 'bias_regularizer', 'activity_regularizer',
    'depthwise_constraint', 'pointwise_constraint', 'bias_constraint'}
DEPTHWISE_KEYS = SEPARABLE_KEYS - {'filters', 'pointwise_initializer', 'pointwise_regularizer',
                                   'pointwise_constraint'}


def test_keras_aliases():
    assert layers.SeparableConvolution1D is SeparableConv1D
    assert layers.SeparableConvolution2D is SeparableConv2D


def test_separable_conv2d_weights_as_keras():
    layer = SeparableConv2D(32, 3)
    assert layer(Input((9, 9, 16))).shape == (None, 7, 7, 32)
    assert [w.name for w in layer.weights] == [
        'separable_conv2d/depthwise_kernel:0', 'separable_conv2d/pointwise_kernel:0',
        'separable_conv2d/bias:0']
    assert [w.shape for w in layer.weights] == [(3, 3, 16, 1), (1, 1, 16, 32), (32,)]
    assert layer.count_params() == 3 * 3 * 16 + 16 * 32 + 32
    multiplied = SeparableConv2D(8, (3, 2), depth_multiplier=3, use_bias=False)
    multiplied(Input((9, 9, 4)))
    assert [w.shape for w in multiplied.weights] == [(3, 2, 4, 3), (1, 1, 12, 8)]


def test_separable_conv1d_weights_as_keras():
    layer = SeparableConv1D(6, 5, depth_multiplier=2, padding='same', strides=2)
    assert layer(Input((11, 4))).shape == (None, 6, 6)
    assert [w.shape for w in layer.weights] == [(5, 4, 2), (1, 8, 6), (6,)]
    assert layer.count_params() == 5 * 4 * 2 + 8 * 6 + 6
    assert SeparableConv1D(2, 3).data_format == 'channels_last'


def test_depthwise_conv2d_weights_as_keras():
    layer = DepthwiseConv2D(3, depth_multiplier=2)
    assert layer(Input((8, 7, 5))).shape == (None, 6, 5, 10)
    assert [w.name for w in layer.weights] == ['depthwise_conv2d/depthwise_kernel:0',
                                              'depthwise_conv2d/bias:0']
    assert [w.shape for w in layer.weights] == [(3, 3, 5, 2), (10,)]
    assert layer.count_params() == 3 * 3 * 5 * 2 + 10
    first = DepthwiseConv2D((2, 3), strides=2, padding='same', data_format='channels_first')
    assert first.compute_output_shape((None, 4, 7, 8)) == (None, 4, 4, 4)
    assert first(Input((4, 7, 8))).shape == (None, 4, 4, 4)


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_layers_call_their_functions(data_format):
    rng = np.random.default_rng(0)
    shape = (2, 6, 5, 3) if data_format == 'channels_last' else (2, 3, 6, 5)
    x = rng.standard_normal(shape).astype(np.float32)
    separable = SeparableConv2D(4, 3, strides=2, padding='same', depth_multiplier=2,
                                data_format=data_format, activation='relu',
                                bias_initializer='ones')
    output = separable(x)
    depthwise_kernel, pointwise_kernel, bias = separable.get_weights()
    np.testing.assert_array_equal(output.numpy(), np.maximum(separable_conv2d(
        x, depthwise_kernel, pointwise_kernel, bias, strides=2, padding='same',
        data_format=data_format).numpy(), 0))
    depthwise = DepthwiseConv2D(3, data_format=data_format, use_bias=False)
    output = depthwise(x)
    np.testing.assert_array_equal(output.numpy(), depthwise_conv2d(
        x, depthwise.get_weights()[0], data_format=data_format).numpy())
    assert output.shape == depthwise.compute_output_shape(shape)


def test_configs_round_trip_with_keras_keys():
    separable = SeparableConv2D(4, 3, depth_multiplier=2, pointwise_initializer='he_normal')
    config = separable.get_config()
    assert set(config) == SEPARABLE_KEYS
    assert SeparableConv2D.from_config(config).get_config() == config
    separable_1d = SeparableConv1D(4, 3).get_config()
    assert set(separable_1d) == SEPARABLE_KEYS
    assert SeparableConv1D.from_config(separable_1d).get_config() == separable_1d
    depthwise = DepthwiseConv2D(3, depth_multiplier=3, depthwise_regularizer='l2').get_config()
    assert set(depthwise) == DEPTHWISE_KEYS and depthwise['depth_multiplier'] == 3
    assert DepthwiseConv2D.from_config(depthwise).get_config() == depthwise


def test_bad_arguments():
    with pytest.raises(ValueError, match='depth_multiplier'):
        DepthwiseConv2D(3, depth_multiplier=0)
    with pytest.raises(ValueError, match='depth_multiplier'):
        SeparableConv2D(2, 3, depth_multiplier=1.5)
    with pytest.raises(ValueError, match='padding'):
        SeparableConv1D(2, 3, padding='causal')
    with pytest.raises(ValueError, match='too small'):
        SeparableConv2D(2, 5)(Input((3, 3, 2)))


def test_small_separable_network_trains():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 8, 8, 3)).astype('float32')
    y = (x.mean(axis=(1, 2, 3)) > 0).astype('float32')[:, None]
    model = Sequential([
        SeparableConv2D(8, 3, padding='same', activation='relu', input_shape=(8, 8, 3)),
        DepthwiseConv2D(3, strides=2, depth_multiplier=2, activation='relu'),
        Flatten(), Dense(1, activation='sigmoid')])
    model.compile(loss='binary_crossentropy', optimizer='adam')
    losses = [model.train_on_batch(x, y) for _ in range(5)]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]
