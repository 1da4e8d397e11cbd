"""SpatialDropout1D/2D/3D drop whole channels (masks predicted from a twin of the
layer's generator), and ActivityRegularization adds its penalty to the losses."""

import json

import numpy as np
import pytest

from minidl import layers
from minidl.compute import Generator
from minidl.layers import Input
from minidl.models import Sequential
from minidl.tensor import Tensor


def twin(layer):
    """A Generator in the state of the layer's, to predict its next draws."""
    generator = Generator()
    generator.set_state(layer.generator.get_state())
    return generator


def inputs(shape, seed=0):
    return (Generator(seed).normal(shape) + 3).astype('float32')  # no zeros of its own


@pytest.mark.parametrize('layer_cls, kwargs, shape, mask_shape', [
    (layers.SpatialDropout1D, {}, (4, 7, 6), (4, 1, 6)),
    (layers.SpatialDropout2D, {}, (4, 5, 5, 6), (4, 1, 1, 6)),
    (layers.SpatialDropout2D, {'data_format': 'channels_first'}, (4, 6, 5, 5), (4, 6, 1, 1)),
    (layers.SpatialDropout3D, {}, (3, 2, 3, 4, 6), (3, 1, 1, 1, 6)),
    (layers.SpatialDropout3D, {'data_format': 'channels_first'}, (3, 6, 2, 3, 4),
     (3, 6, 1, 1, 1)),
], ids=lambda value: getattr(value, '__name__', None))
def test_whole_channels_are_dropped_and_the_rest_scaled(layer_cls, kwargs, shape, mask_shape):
    rate, x = 0.4, inputs(shape)
    layer = layer_cls(rate, seed=3, **kwargs)
    kept = twin(layer).bernoulli(mask_shape, 1 - rate)
    y = layer(x, training=True).numpy()
    np.testing.assert_allclose(y, x * kept / (1 - rate), rtol=1e-6)
    # Each (sample, channel) map is all kept or all dropped, and both happen.
    dropped = (y == 0)
    spatial = tuple(i for i, size in enumerate(mask_shape) if size == 1)
    assert np.array_equal(dropped.all(axis=spatial), dropped.any(axis=spatial))
    assert 0 < dropped.mean() < 1


def test_inference_passes_the_input_through_and_gradients_follow_the_mask():
    layer, x = layers.SpatialDropout2D(0.5, seed=1), inputs((2, 3, 3, 4))
    np.testing.assert_array_equal(layer(x).numpy(), x)
    kept = twin(layer).bernoulli((2, 1, 1, 4), 0.5)
    x_tensor = Tensor(x, requires_grad=True)
    layer(x_tensor, training=True).sum().backward()
    np.testing.assert_array_equal(x_tensor.grad.numpy(), np.broadcast_to(kept * 2.0, x.shape))


def test_spatial_dropout_checks_the_rank_and_round_trips_its_config():
    with pytest.raises(ValueError, match='spatial_dropout1d'):
        layers.SpatialDropout1D(0.2)(np.zeros((2, 3, 4, 5), 'float32'))
    for layer in [layers.SpatialDropout1D(0.2, seed=4),
                  layers.SpatialDropout3D(0.3, data_format='channels_first')]:
        config = json.loads(json.dumps(layer.get_config()))
        config.pop('name')
        clone = type(layer).from_config(config)
        assert {k: v for k, v in clone.get_config().items() if k != 'name'} == config
        assert clone.noise_shape == layer.noise_shape


def test_activity_regularization_adds_its_penalty_and_passes_the_input():
    x = inputs((2, 3)) - 3
    layer = layers.ActivityRegularization(l1=0.1, l2=0.01)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    # minidl's activity penalty is the regularizer of the output over the batch size.
    expected = (0.1 * np.abs(x).sum() + 0.01 * (x ** 2).sum()) / 2
    [loss] = layer.losses
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-6)


def test_activity_regularization_enters_the_training_loss():
    x, y = inputs((4, 3)) - 3, np.zeros((4, 1), 'float32')
    model = Sequential([layers.Dense(1, kernel_initializer='ones', input_shape=(3,)),
                        layers.ActivityRegularization(l2=0.5)])
    model.compile('sgd', 'mse')
    plain = np.mean(model.predict(x) ** 2)
    output = x.sum(axis=1)
    assert np.isclose(model.evaluate(x, y, verbose=0),
                      plain + 0.5 * (output ** 2).sum() / 4, rtol=1e-5)
    config = json.loads(json.dumps(model.layers[1].get_config()))
    assert config['l2'] == 0.5 and 'activity_regularizer' not in config
    assert layers.ActivityRegularization.from_config(config).activity_regularizer.l2 == 0.5


def test_layers_build_in_a_graph():
    output = layers.SpatialDropout1D(0.1)(Input((5, 2)))
    assert output.shape == (None, 5, 2)
    assert layers.ActivityRegularization(0.1)(Input((5, 2))).shape == (None, 5, 2)
