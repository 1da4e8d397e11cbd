"""Pooling layers: Keras shapes and config, forward against PyTorch, gradients routed."""

import json

import numpy as np
import pytest

from minidl.layers.input_layer import Input
from minidl.layers.pooling import (
    AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D, GlobalAveragePooling2D,
    GlobalMaxPooling1D, GlobalMaxPooling2D, MaxPooling1D, MaxPooling2D)
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _same_pads(size, window, stride):
    total = max((-(-size // stride) - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def _torch_pool(torch, x_nchw, kind, window, strides, padding):
    """Keras pooling of NCHW data in PyTorch: padded cells never win a max
    and are not counted by an average."""
    functional = torch.nn.functional
    pads = (0, 0, 0, 0)
    if padding == 'same':
        (top, bottom), (left, right) = (_same_pads(size, w, s) for size, w, s in
                                        zip(x_nchw.shape[2:], window, strides))
        pads = (left, right, top, bottom)
    if kind == 'max':
        padded = functional.pad(x_nchw, pads, value=-float('inf'))
        return functional.max_pool2d(padded, window, strides)
    total = functional.avg_pool2d(functional.pad(x_nchw, pads), window, strides)
    count = functional.avg_pool2d(functional.pad(torch.ones_like(x_nchw), pads), window, strides)
    return total / count


POOL2D_CASES = [
    (MaxPooling2D, dict()),
    (MaxPooling2D, dict(pool_size=3, strides=2)),
    (MaxPooling2D, dict(pool_size=(3, 2), padding='same')),
    (MaxPooling2D, dict(pool_size=3, strides=2, padding='same', data_format='channels_first')),
    (AveragePooling2D, dict()),
    (AveragePooling2D, dict(pool_size=(2, 3), strides=(1, 2))),
    (AveragePooling2D, dict(pool_size=3, strides=2, padding='same')),
    (AveragePooling2D, dict(pool_size=3, padding='same', data_format='channels_first')),
]


@pytest.mark.parametrize('cls, arguments', POOL2D_CASES, ids=str)
def test_pooling2d_matches_pytorch(torch, cls, arguments):
    channels_first = arguments.get('data_format') == 'channels_first'
    x_nchw = _random(2, 3, 9, 8)
    layer = cls(**arguments)
    y = layer(x_nchw if channels_first else x_nchw.transpose(0, 2, 3, 1).copy())
    kind = 'max' if cls is MaxPooling2D else 'avg'
    expected = _torch_pool(torch, torch.tensor(x_nchw), kind, layer.pool_size, layer.strides,
                           layer.padding).numpy()
    if not channels_first:
        expected = expected.transpose(0, 2, 3, 1)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6, atol=1e-6)
    assert y.shape == (2,) + layer.compute_output_shape((None,) + x_nchw.shape[1:] if
                                                        channels_first else (None, 9, 8, 3))[1:]


@pytest.mark.parametrize('cls, kind', [(MaxPooling1D, 'max'), (AveragePooling1D, 'avg')])
@pytest.mark.parametrize('arguments', [dict(), dict(pool_size=3, strides=2, padding='same'),
                                       dict(pool_size=3, data_format='channels_first')], ids=str)
def test_pooling1d_matches_pytorch(torch, cls, kind, arguments):
    channels_first = arguments.get('data_format') == 'channels_first'
    x_ncl = _random(2, 3, 11)
    layer = cls(**arguments)
    y = layer(x_ncl if channels_first else x_ncl.transpose(0, 2, 1).copy())
    expected = _torch_pool(torch, torch.tensor(x_ncl[:, :, None]), kind,
                           (1,) + layer.pool_size, (1,) + layer.strides, layer.padding)
    expected = expected.numpy()[:, :, 0]
    if not channels_first:
        expected = expected.transpose(0, 2, 1)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6, atol=1e-6)


def test_max_pooling_gradient_goes_to_the_maximum(torch):
    x = _random(2, 6, 6, 3)
    x_tensor = Tensor(x, requires_grad=True)
    MaxPooling2D(3, strides=2)(x_tensor).sum().backward()
    x_torch = torch.tensor(x.transpose(0, 3, 1, 2).copy(), requires_grad=True)
    torch.nn.functional.max_pool2d(x_torch, 3, 2).sum().backward()
    np.testing.assert_array_equal(x_tensor.grad.numpy(),
                                  x_torch.grad.numpy().transpose(0, 2, 3, 1))


@pytest.mark.parametrize('cls, reduce', [
    (GlobalAveragePooling2D, np.mean), (GlobalMaxPooling2D, np.max)])
@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
@pytest.mark.parametrize('keepdims', [False, True])
def test_global_pooling2d(cls, reduce, data_format, keepdims):
    x = _random(2, 4, 5, 3)
    axes = (2, 3) if data_format == 'channels_first' else (1, 2)
    layer = cls(data_format=data_format, keepdims=keepdims)
    y = layer(x)
    np.testing.assert_allclose(y.numpy(), reduce(x, axis=axes, keepdims=keepdims), rtol=1e-6)
    assert layer(Input(x.shape[1:])).shape == (None,) + y.shape[1:]


@pytest.mark.parametrize('cls, reduce', [
    (GlobalAveragePooling1D, np.mean), (GlobalMaxPooling1D, np.max)])
@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_global_pooling1d(cls, reduce, data_format):
    x = _random(2, 7, 3)
    axis = 2 if data_format == 'channels_first' else 1
    layer = cls(data_format=data_format)
    y = layer(x)
    np.testing.assert_allclose(y.numpy(), reduce(x, axis=axis), rtol=1e-6)
    assert layer.compute_output_shape((None, 7, 3)) == (None, 3 if axis == 1 else 7)
    assert cls(keepdims=True)(Input((None, 3))).shape == (None, 1, 3)


@pytest.mark.parametrize('make_layer, sample_shape, expected', [
    (lambda: MaxPooling2D(), (7, 6, 2), (None, 3, 3, 2)),
    (lambda: MaxPooling2D(3, strides=2, padding='same'), (7, 6, 2), (None, 4, 3, 2)),
    (lambda: AveragePooling2D(2, data_format='channels_first'), (2, 9, 5), (None, 2, 4, 2)),
    (lambda: MaxPooling1D(3), (10, 4), (None, 3, 4)),
    (lambda: AveragePooling1D(2, strides=1, padding='same'), (5, 4), (None, 5, 4)),
], ids=range(5))
def test_output_shapes(make_layer, sample_shape, expected):
    symbolic = make_layer()(Input(sample_shape))
    eager = make_layer()(_random(2, *sample_shape))
    assert symbolic.shape == expected
    assert eager.shape == (2,) + expected[1:]


def test_unknown_steps():
    assert MaxPooling1D(2)(Input((None, 4))).shape == (None, None, 4)
    assert GlobalMaxPooling1D()(Input((None, 4))).shape == (None, 4)


def test_defaults_and_config_round_trip():
    layer = MaxPooling2D()
    assert (layer.pool_size, layer.strides, layer.padding, layer.data_format) == \
        ((2, 2), (2, 2), 'valid', 'channels_last')
    for original in [AveragePooling2D(3, strides=(1, 2), padding='same', name='p'),
                     MaxPooling1D(4, name='p1'), GlobalAveragePooling2D(keepdims=True, name='g')]:
        config = json.loads(json.dumps(original.get_config()))
        assert type(original).from_config(config).get_config() == original.get_config()
    config = MaxPooling1D(4, name='p1').get_config()
    assert config['pool_size'] == (4,) and config['strides'] == (4,)


@pytest.mark.parametrize('make_layer, message', [
    (lambda: MaxPooling2D(0), 'pool_size'),
    (lambda: MaxPooling2D(2, strides=(1, 2, 3)), 'strides'),
    (lambda: MaxPooling2D(2, padding='causal'), 'padding'),
    (lambda: AveragePooling1D(2, data_format='NCW'), 'data_format'),
    (lambda: GlobalMaxPooling2D(data_format='nhwc'), 'data_format'),
], ids=range(5))
def test_bad_arguments(make_layer, message):
    with pytest.raises(ValueError, match=message):
        make_layer()


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match='too small'):
        MaxPooling2D(4, name='pool')(Input((3, 8, 1)))
    with pytest.raises(ValueError, match='pool'):
        MaxPooling2D(name='pool')(_random(2, 8, 8))
