"""GaussianNoise, GaussianDropout and AlphaDropout against their formulas, drawn from a twin
stream."""

import math

import numpy as np
import pytest

from minidl import layers
from minidl.compute import Generator
from minidl.gradcheck import gradcheck
from minidl.tensor import Tensor

ALPHA_PRIME = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946


def twin(layer):
    """A Generator in the state of the layer's, to predict its next draws."""
    generator = Generator()
    generator.set_state(layer.generator.get_state())
    return generator


def inputs(shape=(64, 20), seed=0):
    return Generator(seed).normal(shape).astype('float32')


@pytest.mark.parametrize('layer', [layers.GaussianNoise(0.3), layers.GaussianDropout(0.4),
                                   layers.AlphaDropout(0.2)],
                         ids=lambda layer: type(layer).__name__)
def test_inference_passes_the_input_through(layer):
    x = inputs()
    np.testing.assert_array_equal(layer(x).numpy(), x)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)


def test_gaussian_noise_adds_normal_draws():
    layer, x = layers.GaussianNoise(0.3), inputs()
    noise = twin(layer).normal(x.shape, 0.0, 0.3)
    np.testing.assert_allclose(layer(x, training=True).numpy(), x + noise, rtol=1e-6)


def test_gaussian_dropout_multiplies_by_unit_mean_noise():
    layer, x = layers.GaussianDropout(0.4), inputs()
    noise = twin(layer).normal(x.shape, 1.0, math.sqrt(0.4 / 0.6))
    np.testing.assert_allclose(layer(x, training=True).numpy(), x * noise, rtol=1e-6)


def test_alpha_dropout_follows_the_self_normalising_formula():
    rate, x = 0.2, inputs()
    layer = layers.AlphaDropout(rate, seed=4)
    kept = twin(layer).bernoulli(x.shape, 1 - rate)
    a = ((1 - rate) * (1 + rate * ALPHA_PRIME ** 2)) ** -0.5
    b = -a * ALPHA_PRIME * rate
    expected = a * np.where(kept, x, ALPHA_PRIME) + b
    np.testing.assert_allclose(layer(x, training=True).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_alpha_dropout_keeps_zero_mean_and_unit_variance():
    x = inputs((400, 500), seed=1)  # standard normal, as SELU activations are meant to be
    y = layers.AlphaDropout(0.3, seed=2)(x, training=True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.var() - 1) < 0.01


def test_alpha_dropout_noise_shape_shares_the_mask():
    y = layers.AlphaDropout(0.5, noise_shape=(None, 1), seed=3)(
        np.ones((8, 5), 'float32'), training=True).numpy()
    assert all(len(set(row)) == 1 for row in y)


@pytest.mark.parametrize('make', [lambda: layers.GaussianNoise(0.5),
                                  lambda: layers.GaussianDropout(0.3),
                                  lambda: layers.AlphaDropout(0.3, seed=1)])
def test_gradients_match_finite_differences(make):
    layer = make()
    state = layer.generator.get_state()

    def function(x):
        layer.generator.set_state(state)  # the same noise at every evaluation
        return layer(x, training=True)

    assert gradcheck(function, [Tensor(inputs((3, 4)).astype('float64'), requires_grad=True)])


@pytest.mark.parametrize('layer, arguments', [
    (layers.GaussianNoise, {'stddev': -1}), (layers.GaussianDropout, {'rate': 1.0}),
    (layers.AlphaDropout, {'rate': 'half'})])
def test_bad_arguments_are_refused(layer, arguments):
    with pytest.raises(ValueError, match=layer.__name__):
        layer(**arguments)


def test_config_round_trip():
    layer = layers.AlphaDropout(0.25, noise_shape=(None, 1), seed=7, name='alpha')
    clone = layers.AlphaDropout.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    x = inputs((4, 6))
    np.testing.assert_array_equal(clone(x, training=True).numpy(),
                                  layer(x, training=True).numpy())
