"""Keras's backend settings: the fuzz factor, the float type and the image layout.

``floatx`` is minidl's ``config.default_dtype`` and ``image_data_format``
its ``config.image_data_format`` (what layers given ``data_format=None``
use): setting one sets the other. ``epsilon`` is read by the backend
functions that clip (the cross-entropies); minidl's losses and constraints
keep Keras's default, 1e-7.
"""

import numpy as np

from minidl import config
from minidl.layers.conv import normalize_data_format

_FLOAT_TYPES = ('float16', 'float32', 'float64')
_settings = {'epsilon': 1e-7}


def backend():
    """The name of the engine under Keras's API: 'minidl'."""
    return 'minidl'


def epsilon():
    """The fuzz factor that keeps divisions and logarithms finite (1e-7)."""
    return _settings['epsilon']


def set_epsilon(value):
    """Set the fuzz factor returned by :func:`epsilon`."""
    _settings['epsilon'] = float(value)


def floatx():
    """The default float type, as a string ('float32')."""
    return str(config.default_dtype)


def set_floatx(value):
    """Set the default float type: 'float16', 'float32' or 'float64'."""
    if value not in _FLOAT_TYPES:
        raise ValueError(f'unknown floatx {value!r}; expected one of {", ".join(_FLOAT_TYPES)}')
    config.default_dtype = str(value)


def cast_to_floatx(x):
    """A numpy array of ``x`` in the default float type."""
    return np.asarray(x, dtype=floatx())


def image_data_format():
    """The default layout of images: 'channels_last' (NHWC) or 'channels_first' (NCHW)."""
    return config.image_data_format


def set_image_data_format(data_format):
    """Set the layout returned by :func:`image_data_format` (and used by layers)."""
    config.image_data_format = normalize_data_format(data_format)
