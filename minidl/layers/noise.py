"""Noise layers (Keras 2): GaussianNoise, GaussianDropout, AlphaDropout.

Each is active only when called with ``training=True`` (as ``fit`` does)
and passes its input unchanged otherwise. Each owns a random generator,
seeded from the default one when it is made (or from ``seed`` where Keras 2
takes one), so its draws are saved with the model and repeat under
``minidl.set_seed``.
"""

import math
import numbers

from minidl import functions as F
from minidl.compute import new_generator
from minidl.layers.base import Layer
from minidl.tensor import Tensor

# The self-normalising ELU's constants (Klambauer et al. 2017), as in activations.selu.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _check_rate(layer, name, value, high_inclusive=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            0 <= value <= 1 if high_inclusive else 0 <= value < 1):
        interval = '[0, 1]' if high_inclusive else '[0, 1)'
        raise ValueError(f'{layer}: {name} must be a number in {interval}, got {value!r}')
    return float(value)


class GaussianNoise(Layer):
    """Adds zero-mean Gaussian noise of standard deviation ``stddev`` while training.

    Args:
        stddev: Standard deviation of the noise (>= 0).
    """

    supports_masking = True

    def __init__(self, stddev, **kwargs):
        if isinstance(stddev, bool) or not isinstance(stddev, numbers.Real) or stddev < 0:
            raise ValueError(f'GaussianNoise: stddev must be a number >= 0, got {stddev!r}')
        super().__init__(**kwargs)
        self.stddev = float(stddev)
        self.generator = new_generator()

    def call(self, inputs, training=None):
        if not training or self.stddev == 0:
            return inputs
        noise = self.generator.normal(inputs.shape, 0.0, self.stddev, inputs.dtype, inputs.xp)
        return F.add(inputs, Tensor(noise))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), 'stddev': self.stddev}


class GaussianDropout(Layer):
    """Multiplies by Gaussian noise of mean 1 and variance ``rate / (1 - rate)`` while training.

    Args:
        rate: Drop probability of the equivalent dropout, in [0, 1).
    """

    supports_masking = True

    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = _check_rate('GaussianDropout', 'rate', rate)
        self.generator = new_generator()

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        noise = self.generator.normal(inputs.shape, 1.0, stddev, inputs.dtype, inputs.xp)
        return F.mul(inputs, Tensor(noise))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), 'rate': self.rate}


class AlphaDropout(Layer):
    """Dropout for self-normalising networks: keeps the mean and variance of SELU outputs.

    Dropped units are set to SELU's negative saturation value, then an affine
    map restores zero mean and unit variance (Klambauer et al. 2017).

    Args:
        rate: Fraction to drop, in [0, 1).
        noise_shape: Shape of the mask, broadcast against the input (None
            entries take the input's size), as in Dropout.
        seed: Seed of this layer's generator; without it, it is seeded from
            the default one when the layer is made.
    """

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _check_rate('AlphaDropout', 'rate', rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self.generator = new_generator(seed)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        shape = inputs.shape if self.noise_shape is None else tuple(
            size if entry is None else int(entry)
            for entry, size in zip(self.noise_shape, inputs.shape))
        kept = self.generator.bernoulli(shape, 1.0 - self.rate, inputs.xp).astype(inputs.dtype)
        saturation = -_SELU_ALPHA * _SELU_SCALE
        a = ((1 - self.rate) * (1 + self.rate * saturation ** 2)) ** -0.5
        b = -a * saturation * self.rate
        # a * (x * kept + saturation * (1 - kept)) + b, with the constants folded.
        scale = Tensor(a * kept)
        shift = Tensor((a * saturation * (1 - kept) + b).astype(inputs.dtype))
        return F.add(F.mul(inputs, scale), shift)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), 'rate': self.rate, 'seed': self.seed,
                'noise_shape': None if self.noise_shape is None else list(self.noise_shape)}
