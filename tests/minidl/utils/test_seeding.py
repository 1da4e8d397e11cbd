"""set_random_seed seeds minidl, Python and numpy, as tf.keras.utils.set_random_seed."""

import random

import numpy as np
import pytest

from minidl.compute import default_generator
from minidl.utils import set_random_seed


def draws():
    return (default_generator().uniform((3,)).tolist(), random.random(),
            np.random.random())


def test_the_same_seed_repeats_every_generator_and_another_seed_does_not():
    set_random_seed(5)
    first = draws()
    set_random_seed(5)
    assert draws() == first
    set_random_seed(6)
    second = draws()
    assert all(a != b for a, b in zip(first, second))


@pytest.mark.parametrize('seed', [-1, 2 ** 32, 1.5, '3', None])
def test_bad_seeds_are_refused(seed):
    with pytest.raises(ValueError, match='seed must be an integer'):
        set_random_seed(seed)
