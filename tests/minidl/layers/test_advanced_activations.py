"""LeakyReLU, PReLU, ELU, ThresholdedReLU, Softmax and ReLU layers: forward and
gradients against PyTorch, Keras 2.2.4's weight shapes and parameter counts."""

import json

import numpy as np
import pytest

from minidl import layers
from minidl.layers import Input
from minidl.models import Sequential
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float64) * 2


def _run(layer, x, upstream):
    """Output, input gradient and weight gradients of ``sum(layer(x) * upstream)``."""
    x_tensor = Tensor(x, requires_grad=True, dtype=x.dtype)
    y = layer(x_tensor)
    (y * Tensor(upstream, dtype=upstream.dtype)).sum().backward()
    return y.numpy(), x_tensor.grad.numpy(), [w.grad.numpy() for w in layer.trainable_weights]


def _torch_run(torch, function, x, upstream, *weights):
    x_torch = torch.tensor(x, requires_grad=True)
    weights = [torch.tensor(w, requires_grad=True) for w in weights]
    y = function(x_torch, *weights)
    (y * torch.tensor(upstream)).sum().backward()
    return y.detach().numpy(), x_torch.grad.numpy(), [w.grad.numpy() for w in weights]


def _assert_same(ours, theirs):
    for a, b in zip(ours[:2] + tuple(ours[2]), theirs[:2] + tuple(theirs[2])):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('layer_cls, kwargs, reference', [
    (layers.LeakyReLU, {}, lambda t, x: t.nn.functional.leaky_relu(x, 0.3)),
    (layers.LeakyReLU, {'alpha': 0.05}, lambda t, x: t.nn.functional.leaky_relu(x, 0.05)),
    (layers.ELU, {}, lambda t, x: t.nn.functional.elu(x)),
    (layers.ELU, {'alpha': 0.7}, lambda t, x: t.nn.functional.elu(x, 0.7)),
    (layers.ThresholdedReLU, {}, lambda t, x: t.nn.functional.threshold(x, 1.0, 0.0)),
    (layers.ThresholdedReLU, {'theta': -0.5},
     lambda t, x: t.nn.functional.threshold(x, -0.5, 0.0)),
    (layers.Softmax, {}, lambda t, x: t.softmax(x, -1)),
    (layers.Softmax, {'axis': 1}, lambda t, x: t.softmax(x, 1)),
    (layers.ReLU, {}, lambda t, x: t.relu(x)),
    (layers.ReLU, {'max_value': 6.0}, lambda t, x: t.nn.functional.relu6(x)),
    (layers.ReLU, {'max_value': 1.5, 'negative_slope': 0.1},
     lambda t, x: t.clamp(x, max=1.5) * (x > 0) + 0.1 * x * (x <= 0)),
    # Keras: x above the threshold (capped), negative_slope * (x - threshold) below it.
    (layers.ReLU, {'negative_slope': 0.2, 'threshold': 0.5},
     lambda t, x: t.where(x > 0.5, x, 0.2 * (x - 0.5))),
], ids=lambda value: getattr(value, '__name__', None) if isinstance(value, type) else None)
def test_forward_and_gradients_match_pytorch(torch, layer_cls, kwargs, reference):
    layer = layer_cls(dtype='float64', **kwargs)
    x, upstream = _random(3, 4, 5), _random(3, 4, 5, seed=1)
    _assert_same(_run(layer, x, upstream),
                 _torch_run(torch, lambda x_torch: reference(torch, x_torch), x, upstream))


def test_relu_with_a_negative_threshold_and_a_cap_clips_to_zero_as_keras_does():
    # Keras 2.2.4's backend keeps x > threshold, then clips to [0, max_value].
    x = np.array([[-2.0, -0.5, 0.5, 3.0]], 'float32')
    y = layers.ReLU(max_value=1.0, threshold=-1.0)(x).numpy()
    np.testing.assert_array_equal(y, [[0.0, 0.0, 0.5, 1.0]])


def test_prelu_matches_pytorch_with_one_slope_per_channel(torch):
    # shared_axes (1, 2) on (batch, rows, cols, channels): PyTorch's per-channel PReLU.
    layer = layers.PReLU(alpha_initializer='zeros', shared_axes=[1, 2], dtype='float64')
    x, upstream = _random(2, 3, 4, 5), _random(2, 3, 4, 5, seed=1)
    layer(x)
    alpha = _random(5, seed=2) / 4
    layer.set_weights([alpha.reshape(1, 1, 5)])
    ours = _run(layer, x, upstream)

    def prelu(x_torch, weight):
        return torch.nn.functional.prelu(x_torch.permute(0, 3, 1, 2), weight).permute(0, 2, 3, 1)

    theirs = _torch_run(torch, prelu, x, upstream, alpha)
    _assert_same(ours[:2] + ([ours[2][0].reshape(5)],), theirs)


def test_prelu_unshared_slopes_match_pytorch(torch):
    layer = layers.PReLU(dtype='float64')
    x, upstream = _random(2, 3, 4), _random(2, 3, 4, seed=1)
    layer(x)
    alpha = _random(3, 4, seed=2) / 4
    layer.set_weights([alpha])

    def prelu(x_torch, weight):
        return torch.where(x_torch >= 0, x_torch, weight * x_torch)

    _assert_same(_run(layer, x, upstream), _torch_run(torch, prelu, x, upstream, alpha))


def test_prelu_weight_shapes_and_parameter_counts():
    # Keras 2.2.4: alpha has the input's shape without the batch axis, 1 on shared axes.
    layer = layers.PReLU(name='p')
    layer(Input((8, 8, 3)))
    assert layer.weights[0].name == 'p/alpha:0'
    assert layer.get_weights()[0].shape == (8, 8, 3) and layer.count_params() == 192
    np.testing.assert_array_equal(layer.get_weights()[0], 0)  # starts as a ReLU
    layer = layers.PReLU(shared_axes=[1, 2])
    layer(Input((8, 8, 3)))
    assert layer.get_weights()[0].shape == (1, 1, 3) and layer.count_params() == 3
    model = Sequential([layers.Dense(10, input_shape=(4,)), layers.PReLU()])
    assert model.count_params() == 4 * 10 + 10 + 10


def test_prelu_refuses_an_axis_beyond_the_input():
    with pytest.raises(ValueError, match='shared_axes'):
        layers.PReLU(shared_axes=[3])(np.zeros((2, 4, 5), 'float32'))
    with pytest.raises(ValueError, match='shared_axes'):
        layers.PReLU(shared_axes=[0])


@pytest.mark.parametrize('make_layer, message', [
    (lambda: layers.ReLU(max_value=-1.0), 'max_value'),
    (lambda: layers.ReLU(negative_slope=-0.1), 'negative_slope'),
    (lambda: layers.LeakyReLU(alpha='big'), 'alpha'),
    (lambda: layers.Softmax(axis=1.5), 'axis'),
])
def test_bad_arguments_are_named(make_layer, message):
    with pytest.raises(ValueError, match=message):
        make_layer()


def test_configs_round_trip_through_json():
    for layer in [layers.LeakyReLU(0.2), layers.PReLU(shared_axes=[1]), layers.ELU(0.5),
                  layers.ThresholdedReLU(0.3), layers.Softmax(axis=1),
                  layers.ReLU(6.0, 0.1, 0.5)]:
        config = json.loads(json.dumps(layer.get_config()))
        config.pop('name')
        clone = type(layer).from_config(config)
        assert {k: v for k, v in clone.get_config().items() if k != 'name'} == config


def test_masks_pass_through():
    assert all(cls.supports_masking for cls in (
        layers.LeakyReLU, layers.PReLU, layers.ELU, layers.ThresholdedReLU, layers.Softmax,
        layers.ReLU))
