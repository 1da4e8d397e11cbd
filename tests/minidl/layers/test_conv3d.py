"""Conv3D and Conv3DTranspose layers: Keras 2.2.4 shapes, parameter counts and
configs, and forward/backward against PyTorch given the same weights."""

import numpy as np
import pytest

from minidl import layers
from minidl.layers.conv3d import Conv3D, Conv3DTranspose
from minidl.layers.input_layer import Input
from minidl.models import Sequential
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_parameter_counts_and_weights():
    layer = Conv3D(16, 3, name='c')
    layer(Input((8, 8, 8, 2)))
    assert layer.count_params() == 3 * 3 * 3 * 2 * 16 + 16
    assert [w.name for w in layer.weights] == ['c/kernel:0', 'c/bias:0']
    assert [w.shape for w in layer.get_weights()] == [(3, 3, 3, 2, 16), (16,)]
    layer = Conv3DTranspose(4, (2, 3, 1), data_format='channels_first', use_bias=False)
    layer(Input((5, 4, 4, 4)))
    # Keras's transposed layout: (k..., filters, in_channels).
    assert [w.shape for w in layer.get_weights()] == [(2, 3, 1, 4, 5)]


@pytest.mark.parametrize('kwargs, sample_shape, expected', [
    ({'filters': 2, 'kernel_size': 3}, (6, 7, 5, 1), (4, 5, 3, 2)),
    ({'filters': 2, 'kernel_size': 3, 'strides': 2, 'padding': 'same'}, (6, 7, 5, 1),
     (3, 4, 3, 2)),
    ({'filters': 2, 'kernel_size': 3, 'dilation_rate': (2, 1, 1), 'data_format':
      'channels_first'}, (1, 6, 7, 5), (2, 2, 5, 3)),
])
def test_conv3d_output_shapes(kwargs, sample_shape, expected):
    symbolic = Conv3D(**kwargs)(Input(sample_shape))
    assert symbolic.shape == (None,) + expected
    assert Conv3D(**kwargs)(_random(2, *sample_shape)).shape == (2,) + expected


@pytest.mark.parametrize('kwargs, expected', [
    # Keras 2.2.4's deconv_length on a (3, 4, 5) input.
    ({'kernel_size': 3}, (5, 6, 7)),
    ({'kernel_size': (3, 2, 1), 'strides': 2}, (7, 8, 10)),
    ({'kernel_size': 3, 'strides': (1, 2, 3), 'padding': 'same'}, (3, 8, 15)),
    ({'kernel_size': 3, 'strides': 2, 'padding': 'same', 'output_padding': (1, 0, 1)},
     (6, 7, 10)),
    ({'kernel_size': 2, 'strides': 3, 'output_padding': 2}, (10, 13, 16)),
])
def test_conv3d_transpose_output_shapes(kwargs, expected):
    symbolic = Conv3DTranspose(2, **kwargs)(Input((3, 4, 5, 1)))
    assert symbolic.shape == (None,) + expected + (2,)
    assert Conv3DTranspose(2, **kwargs)(_random(2, 3, 4, 5, 1)).shape == (2,) + expected + (2,)


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_conv3d_layer_matches_torch(torch, data_format):
    layer = Conv3D(3, (2, 3, 2), strides=(1, 2, 1), activation='relu', data_format=data_format)
    x = _random(2, 2, 4, 5, 3)  # (N, C, D, H, W)
    inputs = x if data_format == 'channels_first' else x.transpose(0, 2, 3, 4, 1)
    xm = Tensor(np.ascontiguousarray(inputs), requires_grad=True)
    y = layer(xm)
    kernel, bias = layer.get_weights()
    xt = torch.tensor(x, requires_grad=True)
    yt = torch.relu(torch.nn.functional.conv3d(
        xt, torch.tensor(kernel).permute(4, 3, 0, 1, 2), torch.tensor(bias), stride=(1, 2, 1)))
    expected = yt.detach().numpy()
    if data_format == 'channels_last':
        expected = expected.transpose(0, 2, 3, 4, 1)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-5)
    y.sum().backward()
    yt.sum().backward()
    grad = xt.grad.numpy()
    if data_format == 'channels_last':
        grad = grad.transpose(0, 2, 3, 4, 1)
    np.testing.assert_allclose(xm.grad.numpy(), grad, rtol=1e-5, atol=1e-5)


def test_conv3d_transpose_layer_matches_torch(torch):
    # 'valid', no output_padding: TensorFlow's and PyTorch's placements agree.
    layer = Conv3DTranspose(2, 3, strides=(2, 1, 2), data_format='channels_first')
    x = _random(2, 3, 2, 3, 2)
    y = layer(x).numpy()
    kernel, bias = layer.get_weights()
    expected = torch.nn.functional.conv_transpose3d(
        torch.tensor(x), torch.tensor(kernel).permute(4, 3, 0, 1, 2), torch.tensor(bias),
        stride=(2, 1, 2)).numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_configs_round_trip_as_keras():
    layer = Conv3DTranspose(4, 3, strides=2, padding='same', output_padding=1)
    config = layer.get_config()
    assert config['output_padding'] == (1, 1, 1)
    assert 'dilation_rate' not in config
    clone = Conv3DTranspose.from_config(config)
    assert clone.get_config() == config
    config = Conv3D(4, 3, dilation_rate=2).get_config()
    assert config['dilation_rate'] == (2, 2, 2) and config['strides'] == (1, 1, 1)
    assert Conv3D.from_config(config).get_config() == config


def test_keras_aliases():
    assert layers.Convolution3D is layers.Conv3D
    assert layers.Deconvolution3D is layers.Deconv3D is layers.Conv3DTranspose


@pytest.mark.parametrize('make, error, message', [
    (lambda: Conv3DTranspose(2, 3, strides=2, output_padding=2), ValueError, 'smaller than'),
    (lambda: Conv3DTranspose(2, 3, dilation_rate=2), TypeError, 'dilation_rate'),
    (lambda: Conv3D(2, (3, 3)), ValueError, 'kernel_size'),
    (lambda: Conv3D(2, 3, padding='causal'), ValueError, 'padding'),
])
def test_bad_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_too_small_input_names_the_layer():
    with pytest.raises(ValueError, match="'tiny'"):
        Conv3D(2, 3, name='tiny')(Input((2, 5, 5, 1)))


def test_volumetric_model_trains():
    model = Sequential([Conv3D(4, 3, padding='same', activation='relu', input_shape=(4, 4, 4, 1)),
                        layers.MaxPooling3D(), Conv3DTranspose(2, 2, strides=2),
                        layers.GlobalAveragePooling3D(), layers.Dense(1)])
    model.compile('adam', 'mse')
    x, y = _random(8, 4, 4, 4, 1), _random(8, 1, seed=1)
    losses = model.fit(x, y, epochs=10, batch_size=4, verbose=0).history['loss']
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
