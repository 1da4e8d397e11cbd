"""Weight initializers with Keras 2's names, arguments and defaults.

An initializer is called as ``initializer(shape, dtype=None)`` and returns a
Tensor on the default device. Randomness comes from a seeded
:class:`~minidl.compute.Generator`: an initializer given ``seed=s`` draws from
its own generator started at ``s`` (the same values on every call, as in
Keras); one given no seed draws from the default generator, which
``minidl.set_seed`` restarts, so a whole model is repeatable from one seed.

``get(identifier)`` resolves a name ('glorot_uniform'), a config dict
(``{'class_name': ..., 'config': ...}``), an instance or a callable.
"""

import math

import numpy as np

from minidl import config
from minidl.compute import Generator, default_generator, get_default_device
from minidl.compute import threads
from minidl.registry import Registry
from minidl.tensor import Tensor


class Initializer:
    """Base class: subclasses define ``sample(shape, dtype, xp)`` and ``get_config``."""

    def __call__(self, shape, dtype=None):
        shape = tuple(int(n) for n in shape)
        dtype = np.dtype(dtype or config.default_dtype)
        return Tensor(self.sample(shape, dtype, get_default_device().xp), dtype=dtype)

    def sample(self, shape, dtype, xp):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config_dict):
        return cls(**config_dict)


class _Seeded(Initializer):
    """An initializer that draws random numbers, from ``seed`` or the default generator."""

    def __init__(self, seed=None):
        self.seed = seed

    def generator(self):
        return default_generator() if self.seed is None else Generator(self.seed)


class Zeros(Initializer):
    def sample(self, shape, dtype, xp):
        return xp.zeros(shape, dtype)


class Ones(Initializer):
    def sample(self, shape, dtype, xp):
        return xp.ones(shape, dtype)


class Constant(Initializer):
    def __init__(self, value=0):
        self.value = value

    def sample(self, shape, dtype, xp):
        return xp.full(shape, self.value, dtype)

    def get_config(self):
        return {'value': self.value}


class RandomNormal(_Seeded):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def sample(self, shape, dtype, xp):
        return self.generator().normal(shape, self.mean, self.stddev, dtype, xp)

    def get_config(self):
        return {'mean': self.mean, 'stddev': self.stddev, 'seed': self.seed}


class RandomUniform(_Seeded):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def sample(self, shape, dtype, xp):
        return self.generator().uniform(shape, self.minval, self.maxval, dtype, xp)

    def get_config(self):
        return {'minval': self.minval, 'maxval': self.maxval, 'seed': self.seed}


class TruncatedNormal(RandomNormal):
    """Normal draws more than two standard deviations from the mean are redrawn."""

    def sample(self, shape, dtype, xp):
        return self.generator().truncated_normal(shape, self.mean, self.stddev, dtype, xp)


class VarianceScaling(_Seeded):
    """Draws scaled to the kernel's fan: variance ``scale / n``.

    Args:
        scale: Positive scaling factor.
        mode: 'fan_in', 'fan_out' or 'fan_avg' (which fan is ``n``).
        distribution: 'truncated_normal', 'untruncated_normal' or 'uniform'.
        seed: Optional integer seed.
    """

    def __init__(self, scale=1.0, mode='fan_in', distribution='truncated_normal', seed=None):
        super().__init__(seed)
        if scale <= 0:
            raise ValueError(f'VarianceScaling: scale must be positive, got {scale}')
        if mode not in ('fan_in', 'fan_out', 'fan_avg'):
            raise ValueError(f"VarianceScaling: mode must be 'fan_in', 'fan_out' or 'fan_avg', "
                             f"got {mode!r}")
        if distribution == 'normal':  # Keras's older name for the truncated normal
            distribution = 'truncated_normal'
        if distribution not in ('truncated_normal', 'untruncated_normal', 'uniform'):
            raise ValueError(f'VarianceScaling: unknown distribution {distribution!r}')
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def sample(self, shape, dtype, xp):
        fan_in, fan_out = compute_fans(shape)
        n = {'fan_in': fan_in, 'fan_out': fan_out, 'fan_avg': (fan_in + fan_out) / 2}[self.mode]
        variance = self.scale / max(1.0, n)
        generator = self.generator()
        if self.distribution == 'uniform':
            limit = math.sqrt(3 * variance)
            return generator.uniform(shape, -limit, limit, dtype, xp)
        if self.distribution == 'untruncated_normal':
            return generator.normal(shape, 0.0, math.sqrt(variance), dtype, xp)
        # The standard deviation of a unit normal truncated to [-2, 2] is 0.8796...
        stddev = math.sqrt(variance) / 0.87962566103423978
        return generator.truncated_normal(shape, 0.0, stddev, dtype, xp)

    def get_config(self):
        return {'scale': self.scale, 'mode': self.mode, 'distribution': self.distribution,
                'seed': self.seed}


class _Preset(VarianceScaling):
    """A VarianceScaling with fixed ``preset = (scale, mode, distribution)``."""

    preset = (1.0, 'fan_in', 'truncated_normal')

    def __init__(self, seed=None):
        super().__init__(*self.preset, seed=seed)

    def get_config(self):
        return {'seed': self.seed}


class GlorotUniform(_Preset):
    """Uniform in ``±sqrt(6 / (fan_in + fan_out))``: Keras's default kernel initializer."""
    preset = (1.0, 'fan_avg', 'uniform')


class GlorotNormal(_Preset):
    """Truncated normal with variance ``2 / (fan_in + fan_out)``."""
    preset = (1.0, 'fan_avg', 'truncated_normal')


class HeUniform(_Preset):
    """Uniform in ``±sqrt(6 / fan_in)``."""
    preset = (2.0, 'fan_in', 'uniform')


class HeNormal(_Preset):
    """Truncated normal with variance ``2 / fan_in``."""
    preset = (2.0, 'fan_in', 'truncated_normal')


class LecunUniform(_Preset):
    """Uniform in ``±sqrt(3 / fan_in)``."""
    preset = (1.0, 'fan_in', 'uniform')


class LecunNormal(_Preset):
    """Truncated normal with variance ``1 / fan_in``."""
    preset = (1.0, 'fan_in', 'truncated_normal')


class Orthogonal(_Seeded):
    """A (semi-)orthogonal matrix from the QR decomposition of normal draws, times ``gain``."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def sample(self, shape, dtype, xp):
        if len(shape) < 2:
            raise ValueError(f'Orthogonal needs a shape of at least 2 dimensions, got {shape}')
        rows, cols = math.prod(shape[:-1]), shape[-1]
        normal = self.generator().normal((max(rows, cols), min(rows, cols)), dtype='float64')
        threads.hold_blas()
        q, r = np.linalg.qr(normal)
        q *= np.sign(np.diag(r))  # makes the result uniformly distributed
        if rows < cols:
            q = q.T
        return xp.asarray((self.gain * q).reshape(shape).astype(dtype))

    def get_config(self):
        return {'gain': self.gain, 'seed': self.seed}


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def sample(self, shape, dtype, xp):
        if len(shape) != 2:
            raise ValueError(f'Identity needs a 2-D shape, got {shape}')
        return self.gain * xp.eye(*shape, dtype=dtype)

    def get_config(self):
        return {'gain': self.gain}


def compute_fans(shape):
    """Keras's (fan_in, fan_out): a conv kernel ``(*window, in, out)`` counts its window."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


def _compute_fans(shape, data_format='channels_last'):
    """Keras 2's private ``(fan_in, fan_out)``, which custom initializers import.

    As :func:`compute_fans` for 2-D to 5-D shapes, plus the ``channels_first``
    kernel layout ``(out, in, *window)``; any other rank gives the square root
    of the size for both (where :func:`compute_fans` differs, for 0-D, 1-D and
    above 5-D shapes, minidl's own initializers keep theirs).
    """
    if len(shape) == 2 or (len(shape) in (3, 4, 5) and data_format == 'channels_last'):
        return compute_fans(shape)
    if len(shape) in (3, 4, 5):
        if data_format != 'channels_first':
            raise ValueError(f"data_format must be 'channels_last' or 'channels_first', got "
                             f"{data_format!r}")
        receptive_field = math.prod(shape[2:])
        return shape[1] * receptive_field, shape[0] * receptive_field
    root = math.sqrt(math.prod(shape))
    return root, root


REGISTRY = Registry('initializer', base=Initializer)
for _name, _cls in {
        'zeros': Zeros, 'zero': Zeros, 'ones': Ones, 'one': Ones, 'constant': Constant,
        'random_normal': RandomNormal, 'normal': RandomNormal, 'random_uniform': RandomUniform,
        'uniform': RandomUniform, 'truncated_normal': TruncatedNormal,
        'variance_scaling': VarianceScaling, 'glorot_uniform': GlorotUniform,
        'glorot_normal': GlorotNormal, 'he_uniform': HeUniform, 'he_normal': HeNormal,
        'lecun_uniform': LecunUniform, 'lecun_normal': LecunNormal, 'orthogonal': Orthogonal,
        'identity': Identity}.items():
    REGISTRY.register(_cls, _name)
for _cls in (Zeros, Ones, Constant, RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling,
             GlorotUniform, GlorotNormal, HeUniform, HeNormal, LecunUniform, LecunNormal,
             Orthogonal, Identity):
    REGISTRY.register(_cls)


def get(identifier):
    """An initializer from a name, a ``{'class_name', 'config'}`` dict, an instance or a callable.

    None gives None (the layer's default applies).
    """
    return REGISTRY.get(identifier)


def serialize(initializer):
    """The ``{'class_name', 'config'}`` dict that :func:`get` turns back into ``initializer``."""
    return REGISTRY.serialize(initializer)


def deserialize(config, custom_objects=None):
    """The initializer a name or a ``{'class_name', 'config'}`` dict stands for."""
    return REGISTRY.deserialize(config, custom_objects)


# Keras 2's lower-case names: the classes under their function names, and the preset
# variance scalings as functions of a seed (``initializers.he_normal(seed=1)``).
zero = zeros = Zeros
one = ones = Ones
constant = Constant
uniform = random_uniform = RandomUniform
normal = random_normal = RandomNormal
truncated_normal = TruncatedNormal
identity = Identity
orthogonal = Orthogonal


def lecun_uniform(seed=None):
    """:class:`LecunUniform` with ``seed``."""
    return LecunUniform(seed=seed)


def lecun_normal(seed=None):
    """:class:`LecunNormal` with ``seed``."""
    return LecunNormal(seed=seed)


def glorot_uniform(seed=None):
    """:class:`GlorotUniform` with ``seed``."""
    return GlorotUniform(seed=seed)


def glorot_normal(seed=None):
    """:class:`GlorotNormal` with ``seed``."""
    return GlorotNormal(seed=seed)


def he_uniform(seed=None):
    """:class:`HeUniform` with ``seed``."""
    return HeUniform(seed=seed)


def he_normal(seed=None):
    """:class:`HeNormal` with ``seed``."""
    return HeNormal(seed=seed)
