"""Seeded random generators: the only source of randomness in minidl.

Every random draw (initializers, dropout masks, shuffling) comes from an
explicit :class:`Generator`. Nothing reads numpy's global random state, so a
program's results depend only on the seeds it sets.

Randomness belongs to the objects that use it: a Dropout layer, a recurrent
layer's input dropout and a model's epoch shuffling each own a Generator
(:func:`new_generator`), which is saved with the model and restored only into
it. One given no seed is seeded, when it is made, from the process-wide
default generator, so ``set_seed(s)`` before building still makes a whole
script repeatable from one seed, while loading or training one model never
changes the draws of another.
"""

import numpy as np

from minidl.compute.cuda import random as device_random


class Generator:
    """A seeded random stream (PCG64) whose draws are identical on every device.

    Uniform and Bernoulli draws for a GPU are made on the GPU, by a kernel
    that reproduces the host's stream (``minidl.compute.cuda.random``); the
    others are made on the host and copied. Either way a CPU run and a GPU
    run with the same seed see the same numbers.

    Args:
        seed: Integer seed, or None for the seed 0.
    """

    def __init__(self, seed=None):
        self.seed(seed)

    def seed(self, seed=None):
        """Restart the stream from ``seed``."""
        seed = 0 if seed is None else seed
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f'seed must be a non-negative integer, got {seed!r}')
        self._rng = np.random.Generator(np.random.PCG64(int(seed)))

    def uniform(self, shape, low=0.0, high=1.0, dtype='float32', xp=np):
        """Uniform draws in [low, high)."""
        if xp is not np:
            return device_random.uniform(self._rng.bit_generator, shape, low, high).astype(
                dtype, copy=False)
        return self._rng.uniform(low, high, size=shape).astype(dtype, copy=False)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype='float32', xp=np):
        """Normal draws with the given mean and standard deviation."""
        values = self._rng.normal(mean, stddev, size=shape).astype(dtype, copy=False)
        return xp.asarray(values)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype='float32', xp=np):
        """Normal draws redrawn until within two standard deviations of the mean."""
        values = self._rng.standard_normal(size=shape)
        outside = np.abs(values) > 2.0
        while outside.any():
            values[outside] = self._rng.standard_normal(size=int(outside.sum()))
            outside = np.abs(values) > 2.0
        return xp.asarray((mean + stddev * values).astype(dtype, copy=False))

    def bernoulli(self, shape, p, xp=np):
        """Boolean mask whose entries are True with probability ``p``."""
        if xp is not np:
            return device_random.uniform(self._rng.bit_generator, shape) < p
        return self._rng.random(size=shape) < p

    def permutation(self, n, xp=np):
        """A random permutation of ``range(n)`` (int64)."""
        return xp.asarray(self._rng.permutation(n))

    def integers(self, low, high, shape=None, xp=np):
        """Integers in [low, high) (int64)."""
        return xp.asarray(self._rng.integers(low, high, size=shape, dtype=np.int64))

    def get_state(self):
        """The generator's state as a JSON-serialisable dict (for checkpoints)."""
        return self._rng.bit_generator.state

    def set_state(self, state):
        """Restore a state returned by :meth:`get_state`."""
        self._rng.bit_generator.state = state


_default = Generator(0)


def default_generator():
    """The process-wide Generator used when no generator is given explicitly."""
    return _default


def new_generator(seed=None):
    """A Generator of one's own: started at ``seed``, or at a seed drawn from the default one.

    Args:
        seed: Non-negative integer, or None to take the next draw of the
            default generator (what ``set_seed`` decides).
    """
    if seed is None:
        seed = int(_default.integers(0, 2**63))
    return Generator(seed)


def set_seed(seed):
    """Seed all of minidl's randomness that has no explicit generator.

    Args:
        seed: Non-negative integer.
    """
    _default.seed(seed)
