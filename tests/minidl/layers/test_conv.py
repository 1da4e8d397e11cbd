"""Conv1D and Conv2D layers: Keras shapes, parameter counts and config, and
forward/backward against PyTorch given the same weights."""

import json
import math

import numpy as np
import pytest

from minidl.layers.conv import Conv1D, Conv2D
from minidl.layers.core import Dense, Dropout, Flatten
from minidl.layers.input_layer import Input
from minidl.layers.pooling import MaxPooling2D
from minidl.layers.reshaping import ZeroPadding2D
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _same_pads(size, window, stride, dilation):
    """TensorFlow's 'same': ceil(size / stride) outputs, the odd padded cell after."""
    total = max((math.ceil(size / stride) - 1) * stride + (window - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def _check_shapes(make_layer, sample_shape, batch=2):
    """Symbolic, eager and computed output shapes agree; returns the eager output."""
    symbolic = make_layer()(Input(sample_shape))
    layer = make_layer()
    output = layer(_random(batch, *sample_shape))
    expected = layer.compute_output_shape((None,) + tuple(sample_shape))
    assert symbolic.shape == expected
    assert output.shape == (batch,) + expected[1:]
    return output


def test_parameter_counts_and_weights():
    layer = Conv2D(32, 3, name='c')
    layer(Input((28, 28, 1)))
    assert layer.count_params() == 3 * 3 * 1 * 32 + 32 == 320
    assert [w.name for w in layer.weights] == ['c/kernel:0', 'c/bias:0']
    assert [w.shape for w in layer.get_weights()] == [(3, 3, 1, 32), (32,)]
    layer = Conv1D(16, 5, use_bias=False)
    layer(Input((None, 8)))
    assert layer.count_params() == 5 * 8 * 16
    assert layer.get_weights()[0].shape == (5, 8, 16)
    layer = Conv2D(8, (3, 1), data_format='channels_first')
    layer(Input((4, 10, 10)))
    assert layer.get_weights()[0].shape == (3, 1, 4, 8)


def test_alexnet_parameter_count():
    """Benchmark W4 (benchmarks/workloads): 4 convs, 3 max pools, 3 dense layers: 56,454,730
    parameters."""
    layers = [ZeroPadding2D(2), Conv2D(64, 11, strides=4, activation='relu'),
              MaxPooling2D(3, strides=2),
              Conv2D(192, 5, padding='same', activation='relu'), MaxPooling2D(3, strides=2),
              Conv2D(384, 3, padding='same', activation='relu'),
              Conv2D(256, 3, padding='same', activation='relu'), MaxPooling2D(3, strides=2),
              Flatten(), Dropout(0.5), Dense(4096, activation='relu'), Dropout(0.5),
              Dense(4096, activation='relu'), Dense(10)]
    tensor, shapes = Input((224, 224, 3)), []
    for layer in layers:
        tensor = layer(tensor)
        shapes.append(tensor.shape)
    assert shapes[1] == (None, 55, 55, 64) and shapes[2] == (None, 27, 27, 64)
    assert shapes[4] == (None, 13, 13, 192) and shapes[7] == (None, 6, 6, 256)
    assert shapes[8] == (None, 9216) and tensor.shape == (None, 10)
    assert sum(layer.count_params() for layer in layers) == 56_454_730


CONV2D_CASES = [
    dict(filters=4, kernel_size=3),
    dict(filters=3, kernel_size=(3, 2), strides=2, padding='same'),
    dict(filters=2, kernel_size=3, strides=(2, 1), padding='valid'),
    dict(filters=4, kernel_size=3, padding='same', dilation_rate=2),
    dict(filters=3, kernel_size=(2, 3), strides=3, padding='same',
         data_format='channels_first'),
    dict(filters=2, kernel_size=3, dilation_rate=(2, 1), data_format='channels_first'),
    dict(filters=3, kernel_size=4, strides=2, padding='same', use_bias=False),
]


def _torch_conv(torch, x_nchw, kernel, bias, strides, padding, dilation):
    """PyTorch's conv2d of NCHW data with a Keras kernel and Keras/TF padding."""
    kh, kw = kernel.shape[:2]
    if padding == 'same':
        top, bottom = _same_pads(x_nchw.shape[2], kh, strides[0], dilation[0])
        left, right = _same_pads(x_nchw.shape[3], kw, strides[1], dilation[1])
        x_nchw = torch.nn.functional.pad(x_nchw, (left, right, top, bottom))
    return torch.nn.functional.conv2d(x_nchw, kernel.permute(3, 2, 0, 1), bias,
                                      stride=strides, dilation=dilation)


@pytest.mark.parametrize('arguments', CONV2D_CASES, ids=str)
def test_conv2d_matches_pytorch(torch, arguments):
    channels_first = arguments.get('data_format') == 'channels_first'
    x_nchw = _random(2, 3, 11, 9)
    x = x_nchw if channels_first else x_nchw.transpose(0, 2, 3, 1).copy()
    layer = Conv2D(**arguments)
    x_tensor = Tensor(x, requires_grad=True)
    y = layer(x_tensor)
    upstream = _random(*y.shape, seed=1)
    (y * Tensor(upstream)).sum().backward()

    weights = [torch.tensor(w, requires_grad=True) for w in layer.get_weights()]
    x_torch = torch.tensor(x_nchw, requires_grad=True)
    expected = _torch_conv(torch, x_torch, weights[0], weights[1] if len(weights) > 1 else None,
                           layer.strides, layer.padding, layer.dilation_rate)
    if not channels_first:
        expected = expected.permute(0, 2, 3, 1)
    (expected * torch.tensor(upstream)).sum().backward()

    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    grad_x = x_torch.grad.numpy() if channels_first else x_torch.grad.numpy().transpose(0, 2, 3, 1)
    np.testing.assert_allclose(x_tensor.grad.numpy(), grad_x, rtol=1e-4, atol=1e-4)
    for weight, expected_weight in zip(layer.weights, weights):
        np.testing.assert_allclose(weight.grad.numpy(), expected_weight.grad.numpy(),
                                   rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('arguments', [
    dict(filters=4, kernel_size=3),
    dict(filters=3, kernel_size=4, strides=2, padding='same'),
    dict(filters=2, kernel_size=3, padding='causal', dilation_rate=2),
    dict(filters=3, kernel_size=2, strides=3, padding='causal'),
    dict(filters=2, kernel_size=5, padding='same', data_format='channels_first'),
], ids=str)
def test_conv1d_matches_pytorch(torch, arguments):
    channels_first = arguments.get('data_format') == 'channels_first'
    x_ncl = _random(2, 3, 13)
    layer = Conv1D(**arguments)
    y = layer(x_ncl if channels_first else x_ncl.transpose(0, 2, 1).copy())
    kernel, bias = (torch.tensor(w) for w in layer.get_weights())
    k, stride, dilation = layer.kernel_size[0], layer.strides[0], layer.dilation_rate[0]
    if layer.padding == 'causal':
        pads = (dilation * (k - 1), 0)
    elif layer.padding == 'same':
        pads = _same_pads(13, k, stride, dilation)
    else:
        pads = (0, 0)
    x_torch = torch.nn.functional.pad(torch.tensor(x_ncl), pads)
    expected = torch.nn.functional.conv1d(x_torch, kernel.permute(2, 1, 0), bias, stride=stride,
                                          dilation=dilation).numpy()
    if not channels_first:
        expected = expected.transpose(0, 2, 1)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('make_layer, sample_shape', [
    (lambda: Conv2D(5, 3, strides=2, padding='same'), (9, 8, 3)),
    (lambda: Conv2D(5, (3, 5), dilation_rate=(1, 2)), (9, 12, 3)),
    (lambda: Conv2D(4, 2, strides=2, data_format='channels_first'), (3, 7, 6)),
    (lambda: Conv1D(6, 3, padding='causal', strides=2), (9, 4)),
    (lambda: Conv1D(6, 3, data_format='channels_first'), (4, 9)),
], ids=range(5))
def test_output_shapes(make_layer, sample_shape):
    _check_shapes(make_layer, sample_shape)


def test_unknown_steps_give_unknown_output_steps():
    assert Conv1D(6, 3)(Input((None, 4))).shape == (None, None, 6)
    assert Conv2D(6, 3, data_format='channels_first')(Input((2, None, 5))).shape == \
        (None, 6, None, 3)


def test_activation_is_applied():
    x = _random(2, 5, 5, 2)
    linear = Conv2D(3, 3, kernel_initializer='ones', bias_initializer='ones')
    relu = Conv2D(3, 3, activation='relu', kernel_initializer='ones', bias_initializer='ones')
    np.testing.assert_array_equal(relu(x).numpy(), np.maximum(linear(x).numpy(), 0))


def test_config_round_trip():
    layer = Conv2D(8, (3, 2), strides=(2, 1), padding='same', dilation_rate=1,
                   activation='relu', use_bias=False, kernel_initializer='he_normal',
                   kernel_regularizer='l2', name='conv')
    config = json.loads(json.dumps(layer.get_config()))
    assert config['filters'] == 8 and config['kernel_size'] == [3, 2]
    assert config['padding'] == 'same' and config['data_format'] == 'channels_last'
    clone = Conv2D.from_config(config)
    assert clone.get_config() == layer.get_config()
    one_d = Conv1D(4, 3, padding='causal', name='c1')
    assert Conv1D.from_config(one_d.get_config()).get_config() == one_d.get_config()


def test_same_weights_give_same_output_after_round_trip():
    layer = Conv1D(3, 2, strides=2)
    x = _random(2, 8, 4)
    y = layer(x)
    clone = Conv1D.from_config({**layer.get_config(), 'name': 'copy'})
    clone(x)
    clone.set_weights(layer.get_weights())
    np.testing.assert_array_equal(clone(x).numpy(), y.numpy())


@pytest.mark.parametrize('make_layer, message', [
    (lambda: Conv2D(0, 3), 'filters'),
    (lambda: Conv2D(4, (3, 3, 3)), 'kernel_size'),
    (lambda: Conv2D(4, 3, strides=0), 'strides'),
    (lambda: Conv2D(4, 3, padding='causal'), 'padding'),
    (lambda: Conv1D(4, 3, padding='full'), 'padding'),
    (lambda: Conv2D(4, 3, data_format='NHWC'), 'data_format'),
    (lambda: Conv2D(4, 3, activation='no_such_activation'), 'no_such_activation'),
], ids=range(7))
def test_bad_arguments(make_layer, message):
    with pytest.raises(ValueError, match=message):
        make_layer()


def test_groups_are_not_supported():
    with pytest.raises(NotImplementedError, match='groups'):
        Conv2D(4, 3, groups=2)


def test_bad_inputs_are_named():
    layer = Conv2D(4, 3, name='picky')
    layer(_random(1, 5, 5, 2))
    with pytest.raises(ValueError, match='picky'):
        layer(_random(1, 5, 5, 3))  # wrong channel count
    with pytest.raises(ValueError, match='picky'):
        layer(_random(5, 5, 2))  # rank 3
    fresh = Conv2D(4, 3, name='fresh')
    with pytest.raises(ValueError, match='fresh.*ndim=4'):
        fresh(_random(5, 5, 2))
    assert not fresh.built and not fresh.weights
    big = Conv2D(4, 5, name='big')
    with pytest.raises(ValueError, match='big.*too small'):
        big(Input((3, 3, 1)))
    assert not big.built
    with pytest.raises(ValueError, match='channel dimension'):
        Conv1D(4, 3)(Input((5, None)))
