"""``set_random_seed``: one call that makes a script's random numbers repeatable."""

import numbers
import random

import numpy as np

from minidl.compute import set_seed


def set_random_seed(seed):
    """Seed minidl's default generator, and Python's and numpy's global generators.

    As ``tf.keras.utils.set_random_seed``: minidl itself draws only from its
    own generators (``minidl.set_seed`` alone fixes them), but scripts often
    make data with ``random`` or ``numpy.random``, which this seeds too.

    Args:
        seed: Integer from 0 to 2**32 - 1.

    Raises:
        ValueError: If ``seed`` is not such an integer.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) \
            or not 0 <= seed < 2 ** 32:
        raise ValueError(f'set_random_seed: seed must be an integer from 0 to 2**32 - 1, '
                         f'got {seed!r}')
    random.seed(int(seed))
    np.random.seed(int(seed))
    set_seed(int(seed))
