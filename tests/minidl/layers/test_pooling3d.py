"""3-D pooling and reshaping layers: Keras 2 shapes, defaults and configs, and
results against PyTorch and numpy."""

import numpy as np
import pytest

from minidl import layers
from minidl.layers.input_layer import Input
from minidl.layers.pooling3d import (
    AveragePooling3D, GlobalAveragePooling3D, GlobalMaxPooling3D, MaxPooling3D)
from minidl.layers.reshaping3d import Cropping3D, UpSampling3D, ZeroPadding3D


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _channels(x, data_format):
    """An NCDHW array in ``data_format``."""
    return x if data_format == 'channels_first' else np.ascontiguousarray(
        x.transpose(0, 2, 3, 4, 1))


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_windowed_pooling_matches_torch(torch, data_format):
    x = _random(2, 3, 4, 6, 5)
    y = MaxPooling3D((2, 3, 2), strides=(2, 1, 2), data_format=data_format)(
        _channels(x, data_format))
    expected = torch.nn.functional.max_pool3d(torch.tensor(x), (2, 3, 2), (2, 1, 2)).numpy()
    np.testing.assert_array_equal(y.numpy(), _channels(expected, data_format))
    y = AveragePooling3D(data_format=data_format)(_channels(x, data_format))
    expected = torch.nn.functional.avg_pool3d(torch.tensor(x), 2).numpy()
    np.testing.assert_allclose(y.numpy(), _channels(expected, data_format), rtol=1e-6)


def test_pooling_shapes_and_defaults():
    assert MaxPooling3D()(Input((5, 6, 7, 2))).shape == (None, 2, 3, 3, 2)
    assert AveragePooling3D(3, strides=2, padding='same')(Input((5, 6, 7, 2))).shape == \
        (None, 3, 3, 4, 2)
    config = MaxPooling3D(padding='same').get_config()
    assert config['pool_size'] == config['strides'] == (2, 2, 2)
    assert config['padding'] == 'same' and config['data_format'] == 'channels_last'
    assert MaxPooling3D.from_config(config).get_config() == config


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_global_pooling(data_format):
    x = _random(2, 3, 4, 2, 5)
    inputs = _channels(x, data_format)
    np.testing.assert_allclose(
        GlobalAveragePooling3D(data_format=data_format)(inputs).numpy(),
        x.mean(axis=(2, 3, 4)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(
        GlobalMaxPooling3D(data_format=data_format)(inputs).numpy(), x.max(axis=(2, 3, 4)))
    assert GlobalMaxPooling3D()(Input((4, 2, 5, 3))).shape == (None, 3)


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_zero_padding_cropping_upsampling(data_format):
    x = _random(2, 3, 2, 3, 4)
    inputs = _channels(x, data_format)
    padding = ((1, 0), (2, 1), (0, 3))
    y = ZeroPadding3D(padding, data_format=data_format)(inputs).numpy()
    np.testing.assert_array_equal(
        y, _channels(np.pad(x, ((0, 0), (0, 0)) + padding), data_format))
    y = Cropping3D(((1, 0), (0, 1), (1, 2)), data_format=data_format)(inputs).numpy()
    np.testing.assert_array_equal(y, _channels(x[:, :, 1:, :2, 1:2], data_format))
    y = UpSampling3D((2, 1, 3), data_format=data_format)(inputs).numpy()
    expected = np.repeat(np.repeat(x, 2, axis=2), 3, axis=4)
    np.testing.assert_array_equal(y, _channels(expected, data_format))


def test_reshaping_defaults_shapes_and_configs():
    # Keras 2.2.4's defaults: padding 1, cropping 1 and size 2 on every side/axis.
    assert ZeroPadding3D()(Input((2, 3, 4, 1))).shape == (None, 4, 5, 6, 1)
    assert Cropping3D()(Input((3, 4, 5, 1))).shape == (None, 1, 2, 3, 1)
    assert UpSampling3D()(Input((2, 3, None, 1))).shape == (None, 4, 6, None, 1)
    for layer in (ZeroPadding3D(2), Cropping3D(1), UpSampling3D(3)):
        config = layer.get_config()
        assert config['data_format'] == 'channels_last'
        assert type(layer).from_config(config).get_config() == config
    assert ZeroPadding3D((1, 2, 3)).padding == ((1, 1), (2, 2), (3, 3))


def test_keras_aliases():
    assert layers.MaxPool3D is layers.MaxPooling3D
    assert layers.AvgPool3D is layers.AveragePooling3D
    assert layers.GlobalMaxPool3D is layers.GlobalMaxPooling3D
    assert layers.GlobalAvgPool3D is layers.GlobalAveragePooling3D


@pytest.mark.parametrize('make, message', [
    (lambda: MaxPooling3D((2, 2)), 'pool_size'),
    (lambda: ZeroPadding3D(((1, 1), (1, 1))), 'padding'),
    (lambda: UpSampling3D((2, 2)), 'size'),
])
def test_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_cropping_everything_names_the_layer():
    with pytest.raises(ValueError, match="'crop'"):
        Cropping3D(((1, 1), (0, 0), (0, 0)), name='crop')(Input((2, 3, 3, 1)))
