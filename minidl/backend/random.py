"""Random tensors and variables, drawn from minidl's seeded generators.

With ``seed`` a function draws from a fresh ``Generator(seed)``, so the same
seed gives the same numbers; without it, it draws from the default
generator, which ``minidl.set_seed`` makes repeatable. ``shape`` may hold
0-d Tensors, as in ``random_normal((K.shape(x)[0], 2))``.
"""

from minidl.backend.config import floatx
from minidl.backend.convert import as_shape
from minidl.backend.variables import variable
from minidl.compute import Device, Generator, default_generator, get_default_device
from minidl.layers.operation import recordable
from minidl.tensor import Tensor


@recordable
def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal draws with the given mean and standard deviation."""
    return Tensor.wrap(_generator(seed).normal(
        as_shape(shape), mean, stddev, dtype or floatx(), xp=_xp()))


@recordable
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal draws, those beyond two standard deviations drawn again."""
    return Tensor.wrap(_generator(seed).truncated_normal(
        as_shape(shape), mean, stddev, dtype or floatx(), xp=_xp()))


@recordable
def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Uniform draws in ``[minval, maxval)``."""
    return Tensor.wrap(_generator(seed).uniform(
        as_shape(shape), minval, maxval, dtype or floatx(), xp=_xp()))


@recordable
def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """Ones with probability ``p``, else zeros."""
    mask = _generator(seed).bernoulli(as_shape(shape), p, xp=_xp())
    return Tensor.wrap(mask.astype(dtype or floatx()))


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """A variable of normal draws (standard deviation ``scale``)."""
    return variable(random_normal(shape, mean, scale, dtype, seed), dtype, name)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """A variable of uniform draws in ``[low, high)``."""
    return variable(random_uniform(shape, low, high, dtype, seed), dtype, name)


def _generator(seed):
    return default_generator() if seed is None else Generator(seed)


def _xp():
    return Device(get_default_device()).xp
