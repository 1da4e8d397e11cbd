"""Shape, join, repeat and selection functions against numpy; gradients by finite differences."""

import numpy as np
import pytest

from minidl import backend as K
from minidl.gradcheck import gradcheck
from minidl.tensor import Tensor

rng = np.random.default_rng(2)
x3 = rng.standard_normal((2, 3, 4))


def t(array):
    return Tensor(array, dtype=array.dtype)


def test_reshapes_match_numpy():
    np.testing.assert_array_equal(K.eval(K.reshape(t(x3), (6, -1))), x3.reshape(6, -1))
    np.testing.assert_array_equal(K.eval(K.reshape(t(x3), (K.shape(t(x3))[0], -1))),
                                  x3.reshape(2, -1))
    np.testing.assert_array_equal(K.eval(K.permute_dimensions(t(x3), (2, 0, 1))),
                                  x3.transpose(2, 0, 1))
    np.testing.assert_array_equal(K.eval(K.expand_dims(t(x3))), x3[..., None])
    np.testing.assert_array_equal(K.eval(K.squeeze(t(x3[:, :1]), 1)), x3[:, 0])
    np.testing.assert_array_equal(K.eval(K.flatten(t(x3))), x3.reshape(-1))
    np.testing.assert_array_equal(K.eval(K.batch_flatten(t(x3))), x3.reshape(2, 12))


def test_joins_match_numpy():
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    np.testing.assert_array_equal(K.eval(K.concatenate([t(a), t(b)])),
                                  np.concatenate([a, b], -1))
    np.testing.assert_array_equal(K.eval(K.concatenate([t(a), t(b)], axis=0)),
                                  np.concatenate([a, b], 0))
    np.testing.assert_array_equal(K.eval(K.stack([t(a), t(b)], axis=1)), np.stack([a, b], 1))


def test_repeats_match_numpy():
    np.testing.assert_array_equal(K.eval(K.tile(t(x3), [2, 1, 3])), np.tile(x3, (2, 1, 3)))
    np.testing.assert_array_equal(K.eval(K.repeat_elements(t(x3), 2, axis=1)),
                                  np.repeat(x3, 2, axis=1))
    np.testing.assert_array_equal(K.eval(K.repeat_elements(t(x3), 3, axis=-1)),
                                  np.repeat(x3, 3, axis=-1))
    a = rng.standard_normal((2, 3))
    repeated = K.eval(K.repeat(t(a), 4))
    assert repeated.shape == (2, 4, 3)
    np.testing.assert_array_equal(repeated, np.broadcast_to(a[:, None], (2, 4, 3)))
    with pytest.raises(ValueError, match='2 repeat counts'):
        K.tile(t(x3), [2, 2])


def test_selections_match_numpy():
    np.testing.assert_array_equal(K.eval(K.reverse(t(x3), 1)), x3[:, ::-1])
    np.testing.assert_array_equal(K.eval(K.reverse(t(x3), [0, -1])), x3[::-1, :, ::-1])
    np.testing.assert_array_equal(K.eval(K.slice(t(x3), (0, 1, 1), (1, 2, -1))),
                                  x3[0:1, 1:3, 1:])
    table = rng.standard_normal((5, 3))
    indices = np.array([[4, 0], [4, 2]])
    np.testing.assert_array_equal(K.eval(K.gather(t(table), indices)), table[indices])
    np.testing.assert_array_equal(K.eval(K.gather(t(table), [1, 1])), table[[1, 1]])
    np.testing.assert_array_equal(K.eval(K.one_hot(Tensor([[2, 0]]), 3)),
                                  [[[0, 0, 1], [1, 0, 0]]])
    np.testing.assert_array_equal(K.eval(K.arange(5)), np.arange(5))
    np.testing.assert_array_equal(K.eval(K.arange(1, 7, 2)), [1, 3, 5])


def test_paddings_match_numpy():
    np.testing.assert_array_equal(K.eval(K.temporal_padding(t(x3), (1, 2))),
                                  np.pad(x3, ((0, 0), (1, 2), (0, 0))))
    images = rng.standard_normal((1, 2, 3, 2))
    np.testing.assert_array_equal(K.eval(K.spatial_2d_padding(t(images), ((1, 0), (0, 2)))),
                                  np.pad(images, ((0, 0), (1, 0), (0, 2), (0, 0))))
    np.testing.assert_array_equal(
        K.eval(K.spatial_2d_padding(t(images), data_format='channels_first')),
        np.pad(images, ((0, 0), (0, 0), (1, 1), (1, 1))))
    volumes = rng.standard_normal((1, 2, 2, 2, 1))
    np.testing.assert_array_equal(K.eval(K.spatial_3d_padding(t(volumes))),
                                  np.pad(volumes, ((0, 0), (1, 1), (1, 1), (1, 1), (0, 0))))


def test_resizes_repeat_pixels():
    images = rng.standard_normal((1, 2, 3, 2))
    np.testing.assert_array_equal(K.eval(K.resize_images(t(images), 2, 3, 'channels_last')),
                                  images.repeat(2, axis=1).repeat(3, axis=2))
    np.testing.assert_array_equal(K.eval(K.resize_images(t(images), 2, 1, 'channels_first')),
                                  images.repeat(2, axis=2))
    volumes = rng.standard_normal((1, 2, 1, 2, 1))
    np.testing.assert_array_equal(K.eval(K.resize_volumes(t(volumes), 1, 2, 2, 'channels_last')),
                                  volumes.repeat(2, axis=2).repeat(2, axis=3))
    with pytest.raises(NotImplementedError, match="'bilinear'"):
        K.resize_images(t(images), 2, 2, 'channels_last', interpolation='bilinear')


@pytest.mark.parametrize('call', [
    lambda x: K.tile(x, (1, 2, 2)),
    lambda x: K.repeat_elements(x, 2, axis=1),
    lambda x: K.reverse(x, [1, 2]),
    lambda x: K.slice(x, (1, 0, 1), (1, 2, 2)),
    lambda x: K.gather(x, np.array([1, 0, 1])),
    lambda x: K.batch_flatten(K.permute_dimensions(x, (0, 2, 1))),
    lambda x: K.spatial_2d_padding(K.expand_dims(x), ((1, 0), (2, 1))),
], ids=['tile', 'repeat_elements', 'reverse', 'slice', 'gather', 'permute-flatten', 'padding'])
def test_gradients_match_finite_differences(call):
    assert gradcheck(call, [x3])
