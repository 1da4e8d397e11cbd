"""Core layers: Dense against PyTorch, the shape layers against numpy, Dropout, Lambda."""

import json

import numpy as np
import pytest

from minidl import functions as F
from minidl.compute import set_seed
from minidl.layers.core import (
    Activation, Dense, Dropout, Flatten, Lambda, Permute, RepeatVector, Reshape)
from minidl.layers.input_layer import Input
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize('activation', ['tanh', 'relu', None])  # relu and None run fused
@pytest.mark.parametrize('sample_shape', [(5,), (3, 5), (2, 3, 5)], ids=str)
def test_dense_matches_pytorch(torch, sample_shape, activation):
    x = _random(4, *sample_shape)
    layer = Dense(6, activation=activation, bias_initializer='random_normal')
    x_tensor = Tensor(x, requires_grad=True)
    y = layer(x_tensor)
    upstream = _random(*y.shape, seed=1)
    (y * Tensor(upstream)).sum().backward()

    kernel, bias = layer.get_weights()
    linear = torch.nn.Linear(5, 6)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor(kernel.T))
        linear.bias.copy_(torch.tensor(bias))
    x_torch = torch.tensor(x, requires_grad=True)
    expected = linear(x_torch)
    expected = getattr(torch, activation)(expected) if activation else expected
    (expected * torch.tensor(upstream)).sum().backward()

    assert y.shape == (4,) + sample_shape[:-1] + (6,)
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x_tensor.grad.numpy(), x_torch.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer.kernel.grad.numpy(), linear.weight.grad.numpy().T,
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer.bias.grad.numpy(), linear.bias.grad.numpy(),
                               rtol=1e-5, atol=1e-5)


def test_dense_weights_shapes_and_symbolic_call():
    layer = Dense(10, name='fc')
    output = layer(Input((784,)))
    assert output.shape == (None, 10) and layer.count_params() == 784 * 10 + 10
    assert [w.name for w in layer.weights] == ['fc/kernel:0', 'fc/bias:0']
    assert [w.shape for w in layer.get_weights()] == [(784, 10), (10,)]
    no_bias = Dense(3, use_bias=False)
    assert no_bias(Input((None, 4))).shape == (None, None, 3)
    assert no_bias.count_params() == 12 and len(no_bias.weights) == 1


def test_dense_softmax_output_keeps_its_logits():
    x = _random(3, 4)
    layer = Dense(5, activation='softmax')
    y = layer(x)
    logits = x @ layer.get_weights()[0] + layer.get_weights()[1]
    kept, kind = y._keras_logits
    assert kind == 'softmax'
    np.testing.assert_allclose(kept.numpy(), logits, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.numpy().sum(axis=-1), np.ones(3), rtol=1e-6)


def test_dense_config_round_trip():
    layer = Dense(7, activation='relu', use_bias=False, kernel_initializer='he_uniform',
                  kernel_regularizer='l2', name='d')
    config = json.loads(json.dumps(layer.get_config()))
    assert config['units'] == 7 and config['use_bias'] is False
    clone = Dense.from_config(config)
    assert clone.get_config() == layer.get_config()


def test_dense_errors():
    with pytest.raises(ValueError, match='units'):
        Dense(0)
    with pytest.raises(ValueError, match='units'):
        Dense('8')
    layer = Dense(3, name='fc3')
    layer(_random(2, 4))
    with pytest.raises(ValueError, match='fc3'):
        layer(_random(2, 5))
    with pytest.raises(ValueError, match='rank'):
        Dense(3)(Input((None,)))


def test_activation():
    x = _random(2, 5)
    np.testing.assert_array_equal(Activation('relu')(x).numpy(), np.maximum(x, 0))
    assert Activation('softmax')(Input((5,))).shape == (None, 5)
    config = Activation('tanh', name='act').get_config()
    assert Activation.from_config(config).get_config() == config


def test_dropout_only_while_training():
    x = np.ones((200, 50), np.float32)
    layer = Dropout(0.3, seed=1)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    y = layer(x, training=True).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    assert layer(Input((50,)), training=True).shape == (None, 50)


def test_dropout_seeds_and_noise_shape():
    x = np.ones((4, 6, 8), np.float32)
    first = Dropout(0.5, seed=3)(x, training=True).numpy()
    np.testing.assert_array_equal(Dropout(0.5, seed=3)(x, training=True).numpy(), first)
    set_seed(7)
    unseeded = Dropout(0.5)(x, training=True).numpy()
    set_seed(7)
    np.testing.assert_array_equal(Dropout(0.5)(x, training=True).numpy(), unseeded)
    shared = Dropout(0.5, noise_shape=(None, 1, 8), seed=0)(x, training=True).numpy()
    assert (shared == shared[:, :1]).all()
    config = Dropout(0.2, noise_shape=(None, 1, 8), seed=5, name='drop').get_config()
    assert config['rate'] == 0.2 and config['seed'] == 5
    assert Dropout.from_config(json.loads(json.dumps(config))).noise_shape == (None, 1, 8)
    with pytest.raises(ValueError, match='rate'):
        Dropout(1.0)


@pytest.mark.parametrize('data_format', ['channels_last', 'channels_first'])
def test_flatten(data_format):
    x = _random(2, 3, 4, 5)
    y = Flatten(data_format=data_format)(x).numpy()
    source = x.transpose(0, 2, 3, 1) if data_format == 'channels_first' else x
    np.testing.assert_array_equal(y, source.reshape(2, -1))
    assert Flatten()(Input((3, 4, 5))).shape == (None, 60)
    assert Flatten()(Input((None, 5))).shape == (None, None)
    assert Flatten().get_config()['data_format'] == 'channels_last'


def test_reshape():
    x = _random(2, 3, 4)
    np.testing.assert_array_equal(Reshape((4, 3))(x).numpy(), x.reshape(2, 4, 3))
    np.testing.assert_array_equal(Reshape((-1, 2))(x).numpy(), x.reshape(2, 6, 2))
    assert Reshape((2, -1))(Input((3, 4))).shape == (None, 2, 6)
    assert Reshape((-1, 2))(Input((None, 4))).shape == (None, None, 2)
    config = json.loads(json.dumps(Reshape((2, -1), name='r').get_config()))
    assert Reshape.from_config(config).target_shape == (2, -1)
    with pytest.raises(ValueError, match='target_shape'):
        Reshape((-1, -1))
    with pytest.raises(ValueError, match='target_shape'):
        Reshape((0, 3))
    with pytest.raises(ValueError, match=r'\(None, 3, 4\)'):
        Reshape((5, -1))(Input((3, 4)))
    with pytest.raises(ValueError, match='reshape'):
        Reshape((5, 2))(x)


def test_permute():
    x = _random(2, 3, 4, 5)
    np.testing.assert_array_equal(Permute((3, 1, 2))(x).numpy(), x.transpose(0, 3, 1, 2))
    assert Permute((2, 1))(Input((3, 4))).shape == (None, 4, 3)
    assert Permute.from_config(Permute((2, 1), name='p').get_config()).dims == (2, 1)
    with pytest.raises(ValueError, match='dims'):
        Permute((0, 1))
    with pytest.raises(ValueError, match='perm'):
        Permute((2, 1), name='perm')(Input((3, 4, 5)))


def test_repeat_vector():
    x = Tensor(_random(2, 3), requires_grad=True)
    y = RepeatVector(4)(x)
    np.testing.assert_array_equal(y.numpy(), np.repeat(x.numpy()[:, None], 4, axis=1))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 4.0))
    assert RepeatVector(4)(Input((3,))).shape == (None, 4, 3)
    assert RepeatVector(2, name='rv').get_config()['n'] == 2
    with pytest.raises(ValueError, match='n must'):
        RepeatVector(0)


def test_lambda():
    x = _random(2, 3)
    doubled = Lambda(lambda t: t * 2)
    np.testing.assert_array_equal(doubled(x).numpy(), x * 2)
    assert doubled(Input((3,))).shape == (None, 3)
    scaled = Lambda(lambda t, factor: t * factor, arguments={'factor': 3.0})
    np.testing.assert_allclose(scaled(x).numpy(), x * 3, rtol=1e-6)
    summed = Lambda(lambda t: F.sum(t, axis=1, keepdims=True), output_shape=(1,))
    assert summed(Input((3,))).shape == (None, 1)
    pair = Lambda(lambda ts: F.concat(ts, axis=1), output_shape=lambda shapes: (
        shapes[0][0], shapes[0][1] + shapes[1][1]))
    assert pair([Input((3,)), Input((2,))]).shape == (None, 5)
    np.testing.assert_array_equal(pair([x, x]).numpy(), np.concatenate([x, x], axis=1))
    seen = []
    Lambda(lambda t, training=None: seen.append(training) or t)(x, training=True)
    assert seen == [True]


def test_lambda_cannot_be_serialized():
    with pytest.raises(TypeError, match='Python code'):
        Lambda(lambda t: t, name='code').get_config()
    with pytest.raises(TypeError, match='callable'):
        Lambda(3)
