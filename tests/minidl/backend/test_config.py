"""Keras's backend settings: epsilon, floatx, image_data_format, backend()."""

import numpy as np
import pytest

from minidl import backend as K, layers
from minidl import config
from minidl.layers import Input


def test_defaults_are_keras_defaults():
    assert K.epsilon() == 1e-7
    assert K.floatx() == 'float32'
    assert K.image_data_format() == 'channels_last'
    assert K.backend() == 'minidl'


def test_set_floatx_is_minidl_default_dtype():
    try:
        K.set_floatx('float64')
        assert config.default_dtype == 'float64'
        assert Input((2,)).dtype == np.float64
        assert K.variable([1, 2]).dtype == np.float64
    finally:
        K.set_floatx('float32')
    with pytest.raises(ValueError, match="unknown floatx 'float8'"):
        K.set_floatx('float8')


def test_set_epsilon_changes_the_clipping_of_crossentropy():
    try:
        K.set_epsilon(0.1)
        assert K.epsilon() == 0.1
        # A prediction of 0 is clipped to 0.1: -log(0.1).
        loss = K.categorical_crossentropy(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]))
        np.testing.assert_allclose(loss.numpy(), [-np.log(0.1)], rtol=1e-6)
    finally:
        K.set_epsilon(1e-7)


def test_image_data_format_is_the_default_of_data_format_arguments():
    x = np.arange(2 * 3 * 1 * 1, dtype='float32').reshape(2, 3, 1, 1)
    bias = np.array([10.0, 20.0, 30.0], dtype='float32')
    try:
        K.set_image_data_format('channels_first')
        assert K.image_data_format() == 'channels_first'
        np.testing.assert_array_equal(K.bias_add(x, bias).numpy(), x + bias[:, None, None])
        pooled = layers.MaxPooling2D(data_format=None)(np.ones((1, 3, 4, 4), 'float32'))
        assert pooled.shape == (1, 3, 2, 2)  # layers follow the setting too
    finally:
        K.set_image_data_format('channels_last')
    with pytest.raises(ValueError, match="data_format must be .* got 'nchw'"):
        K.set_image_data_format('nchw')
    assert K.normalize_data_format(None) == 'channels_last'


def test_cast_to_floatx():
    result = K.cast_to_floatx([1, 2])
    assert isinstance(result, np.ndarray) and result.dtype == np.float32
