"""Convolutions and pooling with Keras's backend arguments.

Kernels are in Keras's layout: (width, in_channels, out_channels) for 1-D,
(rows, columns, in_channels, out_channels) for 2-D. ``data_format=None``
means :func:`~minidl.backend.config.image_data_format`.
"""

import minidl.functions as F
from minidl.backend.config import normalize_data_format
from minidl.backend.convert import as_tensor
from minidl.layers.operation import recordable


@recordable
def conv1d(x, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1):
    """1-D convolution; ``padding`` is 'valid', 'same' or 'causal'."""
    return F.conv1d(as_tensor(x), as_tensor(kernel), strides=strides, padding=padding,
                    dilation_rate=dilation_rate, data_format=normalize_data_format(data_format))


@recordable
def conv2d(x, kernel, strides=(1, 1), padding='valid', data_format=None, dilation_rate=(1, 1)):
    """2-D convolution; ``padding`` is 'valid' or 'same'."""
    return F.conv2d(as_tensor(x), as_tensor(kernel), strides=strides, padding=padding,
                    dilation_rate=dilation_rate, data_format=normalize_data_format(data_format))


@recordable
def pool2d(x, pool_size, strides=(1, 1), padding='valid', data_format=None, pool_mode='max'):
    """2-D max or average pooling (``pool_mode`` 'max' or 'avg')."""
    if pool_mode not in ('max', 'avg'):
        raise ValueError(f"pool2d: pool_mode must be 'max' or 'avg', got {pool_mode!r}")
    pool = F.max_pool2d if pool_mode == 'max' else F.avg_pool2d
    return pool(as_tensor(x), pool_size, strides, padding, normalize_data_format(data_format))
