"""``keras.utils.conv_utils``: the size and argument helpers custom convolution layers import.

A Keras 2 layer written by hand typically calls ``conv_utils.normalize_tuple``
on its ``kernel_size`` and ``conv_utils.conv_output_length`` in its
``compute_output_shape``; these give Keras 2.2.4's results, from minidl's own
argument checks (:mod:`minidl.layers.conv`) where they agree.
"""

import numpy as np

from minidl.layers.conv import conv_output_length as layer_conv_output_length
from minidl.layers.conv import normalize_data_format

__all__ = ['conv_input_length', 'conv_output_length', 'convert_kernel', 'deconv_length',
           'normalize_data_format', 'normalize_padding', 'normalize_tuple']

_PADDINGS = ('valid', 'same', 'causal', 'full')


def normalize_tuple(value, n, name):
    """``value`` (an int, or an iterable of ``n`` ints) as a tuple of ``n`` ints.

    Args:
        value: An int, or an iterable of ``n`` ints.
        n: The length of the tuple.
        name: The argument's name, for the error message.

    Raises:
        ValueError: For anything else.
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    try:
        values = tuple(value)
    except TypeError:
        values = None
    if values is None or len(values) != n or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        raise ValueError(f'The `{name}` argument must be a tuple of {n} integers. '
                         f'Received: {value!r}')
    return tuple(int(v) for v in values)


def normalize_padding(value):
    """'valid', 'same' or 'causal', lower-cased; a ValueError for anything else."""
    padding = value.lower() if isinstance(value, str) else value
    if padding not in ('valid', 'same', 'causal'):
        raise ValueError(f'The `padding` argument must be one of "valid", "same" (or "causal" '
                         f'for Conv1D). Received: {value!r}')
    return padding


def convert_kernel(kernel):
    """A kernel with its spatial axes reversed (Theano's convolution <-> TensorFlow's).

    The last two axes (input and output channels) stay; the transformation is
    its own inverse.

    Args:
        kernel: A 3-D, 4-D or 5-D array (spatial axes, then channels).
    """
    kernel = np.asarray(kernel)
    if not 3 <= kernel.ndim <= 5:
        raise ValueError(f'convert_kernel: a kernel has 3 to 5 axes, got shape {kernel.shape}')
    flipped = (slice(None, None, -1),) * (kernel.ndim - 2) + (slice(None), slice(None))
    return np.copy(kernel[flipped])


def _dilated(filter_size, dilation):
    return filter_size + (filter_size - 1) * (dilation - 1)


def _check_padding(padding, allowed):
    if padding not in allowed:
        raise ValueError(f'padding must be one of {", ".join(map(repr, allowed))}, '
                         f'got {padding!r}')


def conv_output_length(input_length, filter_size, padding, stride, dilation=1):
    """The output length of a convolution along one axis (None for None).

    Args:
        input_length: The input's length, or None.
        filter_size: The kernel's size along the axis.
        padding: 'same', 'valid', 'causal' or 'full'.
        stride: The stride.
        dilation: The dilation rate.
    """
    if input_length is None:
        return None
    _check_padding(padding, _PADDINGS)
    if padding != 'full':  # the layers' own rule; 'full' is Keras 2's alone
        return layer_conv_output_length(input_length, filter_size, padding, stride, dilation)
    return (input_length + _dilated(filter_size, dilation) - 1 + stride - 1) // stride


def conv_input_length(output_length, filter_size, padding, stride):
    """The input length that gives ``output_length`` (None for None): the inverse of
    :func:`conv_output_length` for 'same', 'valid' and 'full'."""
    if output_length is None:
        return None
    _check_padding(padding, ('same', 'valid', 'full'))
    pad = {'same': filter_size // 2, 'valid': 0, 'full': filter_size - 1}[padding]
    return (output_length - 1) * stride - 2 * pad + filter_size


def deconv_length(dim_size, stride_size, kernel_size, padding, output_padding, dilation=1):
    """The output length of a transposed convolution along one axis (None for None).

    Args:
        dim_size: The input's length, or None.
        stride_size: The stride.
        kernel_size: The kernel's size along the axis.
        padding: 'same', 'valid' or 'full'.
        output_padding: Extra length on the output's far side, or None to
            take the length each padding gives by default.
        dilation: The dilation rate.
    """
    _check_padding(padding, ('same', 'valid', 'full'))
    if dim_size is None:
        return None
    extent = _dilated(kernel_size, dilation)
    if output_padding is None:
        return {'valid': dim_size * stride_size + max(extent - stride_size, 0),
                'full': dim_size * stride_size - (stride_size + extent - 2),
                'same': dim_size * stride_size}[padding]
    pad = {'same': extent // 2, 'valid': 0, 'full': extent - 1}[padding]
    return (dim_size - 1) * stride_size + extent - 2 * pad + output_padding
