"""LocallyConnected1D/2D layers: Keras 2.2.4 weight shapes, parameter counts and
configs, and results against a numpy loop over output positions."""

import numpy as np
import pytest

from minidl import layers
from minidl.layers.input_layer import Input
from minidl.layers.local import LocallyConnected1D, LocallyConnected2D
from minidl.models import Sequential
from tests.minidl.functions.test_local import _loop_reference


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_keras_parameter_counts_and_weight_shapes():
    # The examples of Keras 2.2.4's docstrings.
    model = Sequential([LocallyConnected2D(64, (3, 3), input_shape=(32, 32, 3), name='lc')])
    assert model.output_shape == (None, 30, 30, 64)
    assert model.count_params() == 30 * 30 * (27 * 64 + 64)
    assert [w.name for w in model.weights] == ['lc/kernel:0', 'lc/bias:0']
    assert [w.shape for w in model.get_weights()] == [(900, 27, 64), (30, 30, 64)]
    model.add(LocallyConnected2D(32, (3, 3)))
    assert model.output_shape == (None, 28, 28, 32)
    model = Sequential([LocallyConnected1D(64, 3, input_shape=(10, 32))])
    assert model.output_shape == (None, 8, 64)
    assert [w.shape for w in model.get_weights()] == [(8, 96, 64), (8, 64)]
    model.add(LocallyConnected1D(32, 3))
    assert model.output_shape == (None, 6, 32)
    layer = LocallyConnected2D(5, 2, strides=2, data_format='channels_first', use_bias=False)
    layer(Input((3, 7, 6)))
    assert [w.shape for w in layer.get_weights()] == [(3 * 3, 4 * 3, 5)]


@pytest.mark.parametrize('make, shape, window, strides, channels_first', [
    (lambda: LocallyConnected1D(4, 3, strides=2, activation='relu'), (2, 9, 3), (3,), (2,),
     False),
    (lambda: LocallyConnected2D(4, (2, 3), activation='relu'), (2, 5, 6, 3), (2, 3), (1, 1),
     False),
    (lambda: LocallyConnected2D(4, 2, strides=(2, 1), activation='relu',
                                data_format='channels_first'), (2, 3, 5, 4), (2, 2), (2, 1),
     True),
])
def test_layer_matches_loop_reference(make, shape, window, strides, channels_first):
    layer = make()
    x = _random(*shape)
    layer.build(x.shape)
    kernel, bias = (_random(*w.shape, seed=i + 1) for i, w in enumerate(layer.get_weights()))
    layer.set_weights([kernel, bias])
    expected = np.maximum(_loop_reference(x.astype(np.float64), kernel, bias, window, strides,
                                          channels_first), 0)
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_configs_round_trip_as_keras():
    config = LocallyConnected2D(3, 2, data_format='channels_first').get_config()
    assert config['kernel_size'] == (2, 2) and config['padding'] == 'valid'
    assert config['data_format'] == 'channels_first'
    assert LocallyConnected2D.from_config(config).get_config() == config
    config = LocallyConnected1D(3, 2).get_config()
    assert 'data_format' not in config and config['strides'] == (1,)
    assert LocallyConnected1D.from_config(config).get_config() == config


def test_model_trains():
    model = Sequential([LocallyConnected2D(3, 2, activation='tanh', input_shape=(4, 4, 2)),
                        layers.Flatten(), layers.Dense(1)])
    model.compile('adam', 'mse')
    x, y = _random(8, 4, 4, 2), _random(8, 1, seed=1)
    losses = model.fit(x, y, epochs=10, batch_size=4, verbose=0).history['loss']
    assert losses[-1] < losses[0]


@pytest.mark.parametrize('make, message', [
    (lambda: LocallyConnected2D(2, 3, padding='same'), "padding='valid'"),
    (lambda: LocallyConnected1D(2, 3, data_format='channels_first'), 'channels_last'),
    (lambda: LocallyConnected2D(0, 3), 'filters'),
    (lambda: LocallyConnected2D(2, (3, 3, 3)), 'kernel_size'),
])
def test_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_unknown_or_too_small_inputs_are_named():
    with pytest.raises(ValueError, match="'lc'.*must be known"):
        LocallyConnected1D(2, 3, name='lc')(Input((None, 4)))
    with pytest.raises(ValueError, match="'small'"):
        LocallyConnected2D(2, 3, name='small')(Input((2, 5, 1)))
