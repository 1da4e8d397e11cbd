"""Max and average pooling over 3-D windows.

The windowed pools of :mod:`minidl.functions.pooling` loop over the window
offsets of any number of spatial axes; these classes fix the rank at three
(kd*kh*kw vectorised operations each way, no scatter-add). Padding follows
Keras/TensorFlow: padded cells never win a max and are not counted by an
average.
"""

from minidl.functions.conv3d import as_triple
from minidl.functions.pooling import AvgPool2D, MaxPool2D, _shape
from minidl.functions.windows import output_size, resolve_padding


class MaxPool3D(MaxPool2D):
    """Max over each (depth, row, col) window; the gradient goes to the
    window's first maximum in row-major window order."""


class AvgPool3D(AvgPool2D):
    """Mean over each window's cells that lie inside the input (padding excluded)."""


def _pool3d(function_class, name, x, pool_size, strides, padding, data_format):
    if data_format not in ('channels_last', 'channels_first'):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', "
                         f'got {data_format!r}')
    channels_first = data_format == 'channels_first'
    x_shape = _shape(x)
    if len(x_shape) != 5:
        raise ValueError(f'{name} expects a 5-D input, got shape {x_shape}')
    window = as_triple(pool_size, 'pool_size')
    strides = window if strides is None else as_triple(strides, 'strides')
    sizes = x_shape[2:] if channels_first else x_shape[1:4]
    pads = resolve_padding(padding, sizes, window, strides)
    if any(pad >= size for pair, size in zip(pads, window) for pad in pair):
        raise ValueError(f'{name}: padding {pads} must be smaller than pool_size {window} '
                         f'on each side, or some windows would hold only padding')
    if any(output_size(*args) < 1 for args in zip(sizes, pads, window, strides)):
        raise ValueError(f'{name}: pool_size {window} does not fit in input {x_shape} '
                         f'with padding {pads}')
    return function_class(window, strides, pads, channels_first)(x)


def max_pool3d(x, pool_size=2, strides=None, padding='valid', data_format='channels_last'):
    """Max pooling over 3-D windows.

    Args:
        x: Input, (N, D, H, W, C) or (N, C, D, H, W) for 'channels_first'.
        pool_size: Int or three ints.
        strides: Int or three ints; defaults to ``pool_size`` (as in Keras).
        padding: 'valid', 'same' (TensorFlow's: ``ceil(size / stride)``
            outputs), an int, three ints or three (before, after) pairs.
            Padded cells never win the max; each side must be < pool_size.
        data_format: 'channels_last' or 'channels_first'.

    Returns:
        Tensor (N, OD, OH, OW, C) or (N, C, OD, OH, OW).
    """
    return _pool3d(MaxPool3D, 'max_pool3d', x, pool_size, strides, padding, data_format)


def avg_pool3d(x, pool_size=2, strides=None, padding='valid', data_format='channels_last'):
    """Average pooling over 3-D windows; padded cells are left out of each count.

    Arguments as :func:`max_pool3d`.
    """
    return _pool3d(AvgPool3D, 'avg_pool3d', x, pool_size, strides, padding, data_format)
