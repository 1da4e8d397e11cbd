"""Random tensors: seeds, shapes, dtypes and the distributions' moments."""

import numpy as np

from minidl import backend as K
from minidl import set_seed
from minidl.layers import Input
from minidl.models import Model


def test_a_seed_gives_the_same_numbers():
    for function in (K.random_normal, K.random_uniform, K.truncated_normal):
        first, second = K.eval(function((3, 4), seed=3)), K.eval(function((3, 4), seed=3))
        np.testing.assert_array_equal(first, second)
        assert first.shape == (3, 4) and first.dtype == np.float32
        assert not np.array_equal(first, K.eval(function((3, 4), seed=4)))


def test_without_a_seed_the_default_generator_decides():
    set_seed(11)
    first = K.eval(K.random_normal((5,)))
    second = K.eval(K.random_normal((5,)))
    set_seed(11)
    np.testing.assert_array_equal(K.eval(K.random_normal((5,))), first)
    assert not np.array_equal(first, second)


def test_moments():
    normal = K.eval(K.random_normal((20000,), mean=2.0, stddev=0.5, seed=0))
    assert abs(normal.mean() - 2.0) < 0.02 and abs(normal.std() - 0.5) < 0.02
    uniform = K.eval(K.random_uniform((20000,), -1.0, 3.0, seed=0))
    assert uniform.min() >= -1.0 and uniform.max() < 3.0 and abs(uniform.mean() - 1.0) < 0.05
    truncated = K.eval(K.truncated_normal((20000,), 1.0, 2.0, seed=0))
    assert truncated.min() >= -3.0 and truncated.max() <= 5.0
    binomial = K.eval(K.random_binomial((20000,), p=0.3, seed=0))
    assert set(np.unique(binomial)) == {0.0, 1.0} and abs(binomial.mean() - 0.3) < 0.02
    assert K.random_normal((2,), dtype='float64', seed=0).dtype == np.float64


def test_shapes_may_hold_batch_sizes_from_shape():
    x = K.zeros((3, 2))
    assert K.int_shape(K.random_normal((K.shape(x)[0], 4), seed=0)) == (3, 4)
    assert K.int_shape(K.random_uniform(K.shape(x), seed=0)) == (3, 2)


def test_a_symbolic_shape_records_a_node():
    inputs = Input((2,))
    noise = K.random_normal(K.shape(inputs), seed=5)
    assert K.int_shape(noise) == (None, 2)
    got = Model(inputs, inputs + noise).predict(np.zeros((4, 2), 'float32'))
    np.testing.assert_array_equal(got, K.eval(K.random_normal((4, 2), seed=5)))


def test_random_variables():
    v = K.random_uniform_variable((2, 3), 0.0, 1.0, seed=1, name='u')
    assert v.requires_grad and v.name == 'u' and v.shape == (2, 3)
    np.testing.assert_array_equal(K.eval(v), K.eval(K.random_uniform((2, 3), seed=1)))
    w = K.random_normal_variable((4,), 0.0, 2.0, seed=2)
    np.testing.assert_array_equal(K.eval(w), K.eval(K.random_normal((4,), 0.0, 2.0, seed=2)))
