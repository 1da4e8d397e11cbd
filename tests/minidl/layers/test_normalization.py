"""BatchNormalization and LayerNormalization against PyTorch."""

import json

import numpy as np
import pytest

from minidl.layers.input_layer import Input
from minidl.layers.normalization import BatchNormalization, LayerNormalization
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _set_random_weights(layer, seed=1):
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.uniform(0.5, 1.5, w.shape).astype(np.float32)
                       for w in layer.get_weights()])


def _torch_batch_norm(torch, layer, channels):
    gamma, beta, mean, variance = layer.get_weights()
    norm = torch.nn.BatchNorm1d(channels, eps=layer.epsilon, momentum=1 - layer.momentum)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor(gamma))
        norm.bias.copy_(torch.tensor(beta))
        norm.running_mean.copy_(torch.tensor(mean))
        norm.running_var.copy_(torch.tensor(variance))
    return norm


def _as_rows(torch, x, axis):
    """(N, ..., C, ...) -> (rows, C), the layout BatchNorm1d normalises per column."""
    return torch.movedim(x, axis, -1).reshape(-1, x.shape[axis])


@pytest.mark.parametrize('shape, axis', [((16, 5), -1), ((4, 3, 3, 6), -1), ((4, 6, 3, 3), 1)],
                         ids=['dense', 'channels_last', 'channels_first'])
def test_batch_norm_training_matches_pytorch(torch, shape, axis):
    x = _random(*shape) * 2 + 1
    layer = BatchNormalization(axis=axis, momentum=0.9)
    layer(Input(shape[1:]))
    _set_random_weights(layer)
    norm = _torch_batch_norm(torch, layer, shape[axis])
    norm.train()
    x_tensor = Tensor(x, requires_grad=True)
    y = layer(x_tensor, training=True)
    upstream = _random(*shape, seed=2)
    (y * Tensor(upstream)).sum().backward()

    x_torch = torch.tensor(x, requires_grad=True)
    expected = torch.movedim(norm(_as_rows(torch, x_torch, axis)).reshape(
        torch.movedim(x_torch, axis, -1).shape), -1, axis)
    (expected * torch.tensor(upstream)).sum().backward()

    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x_tensor.grad.numpy(), x_torch.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(layer.gamma.grad.numpy(), norm.weight.grad.numpy(),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(layer.beta.grad.numpy(), norm.bias.grad.numpy(),
                               rtol=1e-4, atol=1e-4)
    # The moving statistics after one step, Keras's momentum = 1 - PyTorch's.
    np.testing.assert_allclose(layer.moving_mean.numpy(), norm.running_mean.numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.numpy(), norm.running_var.numpy(),
                               rtol=1e-5, atol=1e-6)


def test_batch_norm_inference_matches_pytorch(torch):
    x = _random(8, 5)
    layer = BatchNormalization()
    layer(x)
    _set_random_weights(layer)
    before = layer.get_weights()
    norm = _torch_batch_norm(torch, layer, 5)
    norm.eval()
    x_tensor = Tensor(x, requires_grad=True)
    for training in (None, False):
        y = layer(x_tensor, training=training)
        np.testing.assert_allclose(y.numpy(), norm(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    y.sum().backward()
    gamma, _, _, variance = before
    np.testing.assert_allclose(x_tensor.grad.numpy(),
                               np.broadcast_to(gamma / np.sqrt(variance + 1e-3), x.shape),
                               rtol=1e-5)
    for weight, old in zip(layer.get_weights(), before):
        np.testing.assert_array_equal(weight, old)


def test_frozen_batch_norm_runs_in_inference_mode():
    x = _random(8, 5) * 3 + 2
    layer = BatchNormalization()
    layer(x)
    _set_random_weights(layer)
    gamma, beta, mean, variance = before = layer.get_weights()
    layer.trainable = False
    y = layer(x, training=True).numpy()
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(variance + 1e-3) * gamma + beta,
                               rtol=1e-5, atol=1e-5)
    for weight, old in zip(layer.get_weights(), before):
        np.testing.assert_array_equal(weight, old)
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 4
    layer.trainable = True
    layer(x, training=True)
    assert not np.array_equal(layer.get_weights()[2], mean)


def test_batch_norm_weights_and_shapes():
    layer = BatchNormalization(name='bn')
    assert layer(Input((4, 4, 16))).shape == (None, 4, 4, 16)
    assert [w.name for w in layer.weights] == [
        'bn/gamma:0', 'bn/beta:0', 'bn/moving_mean:0', 'bn/moving_variance:0']
    assert layer.count_params() == 4 * 16 and len(layer.trainable_weights) == 2
    gamma, beta, mean, variance = layer.get_weights()
    np.testing.assert_array_equal(gamma, np.ones(16))
    np.testing.assert_array_equal(beta, np.zeros(16))
    np.testing.assert_array_equal(mean, np.zeros(16))
    np.testing.assert_array_equal(variance, np.ones(16))
    plain = BatchNormalization(center=False, scale=False, axis=1)
    assert plain(Input((3, 7))).shape == (None, 3, 7)
    assert [w.shape for w in plain.weights] == [(3,), (3,)] and plain.count_params() == 6
    x = _random(10, 3, 7)
    y = plain(x, training=True).numpy()
    expected = (x - x.mean(axis=(0, 2), keepdims=True)) / np.sqrt(
        x.var(axis=(0, 2), keepdims=True) + 1e-3)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


def test_batch_norm_config_round_trip():
    layer = BatchNormalization(axis=1, momentum=0.8, epsilon=1e-5, center=False,
                               gamma_initializer='random_normal', gamma_regularizer='l2',
                               name='norm')
    config = json.loads(json.dumps(layer.get_config()))
    assert config['axis'] == 1 and config['momentum'] == 0.8 and config['center'] is False
    clone = BatchNormalization.from_config(config)
    assert clone.get_config() == layer.get_config()


def test_batch_norm_errors():
    with pytest.raises(ValueError, match='momentum'):
        BatchNormalization(momentum=1.5)
    with pytest.raises(ValueError, match='epsilon'):
        BatchNormalization(epsilon=0)
    with pytest.raises(ValueError, match='axis'):
        BatchNormalization(axis='last')
    with pytest.raises(NotImplementedError, match='axis'):
        BatchNormalization(axis=[1, 2])
    with pytest.raises(ValueError, match='axis 3'):
        BatchNormalization(axis=3, name='bad_axis')(Input((4, 4)))
    layer = BatchNormalization(name='bn5')
    layer(_random(2, 5))
    with pytest.raises(ValueError, match='bn5'):
        layer(_random(2, 6))
    with pytest.raises(ValueError, match='known size'):
        BatchNormalization()(Input((None,)))


@pytest.mark.parametrize('shape, axis', [((4, 6), -1), ((3, 4, 6), -1), ((2, 3, 4, 5), [2, 3])],
                         ids=['2d', 'sequence', 'two_axes'])
def test_layer_norm_matches_pytorch(torch, shape, axis):
    x = _random(*shape) * 2 + 1
    layer = LayerNormalization(axis=axis, gamma_initializer='random_normal',
                               beta_initializer='random_normal')
    x_tensor = Tensor(x, requires_grad=True)
    y = layer(x_tensor)
    upstream = _random(*shape, seed=3)
    (y * Tensor(upstream)).sum().backward()

    gamma, beta = layer.get_weights()
    norm = torch.nn.LayerNorm(gamma.shape, eps=1e-3)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor(gamma))
        norm.bias.copy_(torch.tensor(beta))
    x_torch = torch.tensor(x, requires_grad=True)
    expected = norm(x_torch)
    (expected * torch.tensor(upstream)).sum().backward()

    assert gamma.shape == beta.shape == tuple(shape[a] for a in np.atleast_1d(axis))
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x_tensor.grad.numpy(), x_torch.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(layer.gamma.grad.numpy(), norm.weight.grad.numpy(),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(layer.beta.grad.numpy(), norm.bias.grad.numpy(),
                               rtol=1e-4, atol=1e-4)


def test_layer_norm_shapes_config_and_errors():
    layer = LayerNormalization(name='ln')
    assert layer(Input((7, 32))).shape == (None, 7, 32)
    assert [w.name for w in layer.weights] == ['ln/gamma:0', 'ln/beta:0']
    assert layer.count_params() == 64
    middle = LayerNormalization(axis=1, center=False)
    assert middle(Input((3, 5))).shape == (None, 3, 5) and middle.count_params() == 3
    x = _random(2, 3, 5)
    expected = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(middle(x).numpy(), expected, rtol=1e-4, atol=1e-5)
    config = json.loads(json.dumps(LayerNormalization(axis=[1, 2], epsilon=1e-6,
                                                      name='ln2').get_config()))
    assert config['axis'] == [1, 2] and config['epsilon'] == 1e-6
    assert LayerNormalization.from_config(config).get_config() == config
    with pytest.raises(ValueError, match='axis'):
        LayerNormalization(axis=[1, 1])(Input((3, 4)))
    with pytest.raises(ValueError, match='axis'):
        LayerNormalization(axis=0)(Input((3,)))
    with pytest.raises(ValueError, match='ln8'):
        ln = LayerNormalization(name='ln8')
        ln(_random(2, 8))
        ln(_random(2, 9))
