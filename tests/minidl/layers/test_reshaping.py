"""ZeroPadding, Cropping and UpSampling layers against PyTorch, with their gradients."""

import json

import numpy as np
import pytest

from minidl.layers.input_layer import Input
from minidl.layers.reshaping import (
    Cropping1D, Cropping2D, UpSampling1D, UpSampling2D, ZeroPadding1D, ZeroPadding2D)
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _run(layer, x, torch_function, torch, channels_first):
    """Forward and input gradient (of sum(y * upstream)) in minidl and PyTorch (NCHW)."""
    x_tensor = Tensor(x, requires_grad=True)
    y = layer(x_tensor)
    upstream = _random(*y.shape, seed=1)
    (y * Tensor(upstream)).sum().backward()
    to_nchw = (lambda a: a) if channels_first else (lambda a: np.moveaxis(a, -1, 1))
    from_nchw = (lambda a: a) if channels_first else (lambda a: np.moveaxis(a, 1, -1))
    x_torch = torch.tensor(to_nchw(x).copy(), requires_grad=True)
    expected = torch_function(x_torch)
    (expected * torch.tensor(to_nchw(upstream).copy())).sum().backward()
    np.testing.assert_allclose(y.numpy(), from_nchw(expected.detach().numpy()), rtol=1e-6)
    np.testing.assert_allclose(x_tensor.grad.numpy(), from_nchw(x_torch.grad.numpy()),
                               rtol=1e-6, atol=1e-6)
    symbolic = layer.compute_output_shape((None,) + x.shape[1:])
    assert type(layer).from_config({**layer.get_config(), 'name': None})(
        Input(x.shape[1:])).shape == symbolic == (None,) + y.shape[1:]


@pytest.mark.parametrize('padding, torch_pads', [
    (1, (1, 1, 1, 1)), ((2, 1), (1, 1, 2, 2)), (((0, 2), (3, 1)), (3, 1, 0, 2))])
@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_zero_padding2d(torch, padding, torch_pads, data_format):
    channels_first = data_format == 'channels_first'
    x = _random(2, 3, 4, 5)
    _run(ZeroPadding2D(padding, data_format=data_format), x,
         lambda t: torch.nn.functional.pad(t, torch_pads), torch, channels_first)


@pytest.mark.parametrize('cropping, rows, cols', [
    (1, slice(1, -1), slice(1, -1)), ((2, 0), slice(2, -2), slice(0, None)),
    (((0, 2), (3, 1)), slice(0, -2), slice(3, -1))])
@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_cropping2d(torch, cropping, rows, cols, data_format):
    channels_first = data_format == 'channels_first'
    x = _random(2, 6, 7, 3) if not channels_first else _random(2, 3, 6, 7)
    _run(Cropping2D(cropping, data_format=data_format), x, lambda t: t[:, :, rows, cols],
         torch, channels_first)


@pytest.mark.parametrize('size', [2, (3, 2), (1, 3)])
@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_upsampling2d(torch, size, data_format):
    channels_first = data_format == 'channels_first'
    x = _random(2, 3, 4, 5)
    factors = (size, size) if isinstance(size, int) else size
    _run(UpSampling2D(size, data_format=data_format), x,
         lambda t: torch.nn.functional.interpolate(t, scale_factor=factors, mode='nearest'),
         torch, channels_first)


def test_one_dimensional_layers(torch):
    x = _random(2, 6, 3)
    cases = [
        (ZeroPadding1D(2), lambda t: torch.nn.functional.pad(t, (2, 2))),
        (ZeroPadding1D((0, 3)), lambda t: torch.nn.functional.pad(t, (0, 3))),
        (Cropping1D(), lambda t: t[:, :, 1:-1]),
        (Cropping1D((2, 0)), lambda t: t[:, :, 2:]),
        (UpSampling1D(3), lambda t: torch.nn.functional.interpolate(t, scale_factor=3)),
    ]
    for layer, torch_function in cases:
        # Moving the features to axis 1 gives PyTorch's (batch, channels, steps).
        _run(layer, x, torch_function, torch, channels_first=False)


def test_defaults_and_configs():
    assert ZeroPadding2D().padding == ((1, 1), (1, 1))
    assert Cropping2D().cropping == ((0, 0), (0, 0))
    assert UpSampling2D().size == (2, 2) and UpSampling2D().interpolation == 'nearest'
    assert ZeroPadding1D().padding == ((1, 1),) and Cropping1D().get_config()['cropping'] == (1, 1)
    config = json.loads(json.dumps(ZeroPadding2D(((1, 2), (3, 4)), name='z').get_config()))
    assert config['padding'] == [[1, 2], [3, 4]] and config['data_format'] == 'channels_last'
    assert ZeroPadding2D.from_config(config).padding == ((1, 2), (3, 4))
    assert UpSampling1D(4).get_config()['size'] == 4
    assert 'data_format' not in ZeroPadding1D().get_config()


def test_unknown_sizes_stay_unknown():
    assert ZeroPadding2D(1)(Input((None, 5, 2))).shape == (None, None, 7, 2)
    assert UpSampling1D(2)(Input((None, 3))).shape == (None, None, 3)
    assert Cropping1D(1)(Input((None, 3))).shape == (None, None, 3)


def test_bad_arguments():
    with pytest.raises(ValueError, match='padding'):
        ZeroPadding2D((1, 2, 3))
    with pytest.raises(ValueError, match='padding'):
        ZeroPadding2D(-1)
    with pytest.raises(ValueError, match='cropping'):
        Cropping2D(((1, 2), (3,)))
    with pytest.raises(ValueError, match='size'):
        UpSampling2D(0)
    with pytest.raises(ValueError, match='data_format'):
        UpSampling2D(data_format='NCHW')
    with pytest.raises(NotImplementedError, match='bicubic'):
        UpSampling2D(interpolation='bicubic')
    with pytest.raises(ValueError, match='interpolation'):
        UpSampling2D(interpolation='cubic')


def test_cropping_everything_is_an_error_naming_the_layer():
    with pytest.raises(ValueError, match='crop'):
        Cropping2D(2, name='crop')(Input((4, 9, 1)))
    with pytest.raises(ValueError, match='crop1d'):
        Cropping1D(3, name='crop1d')(_random(1, 6, 2))
