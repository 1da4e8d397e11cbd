"""Max and average pooling over 3-D windows.

The windowed pools of :mod:`minidl.functions.pooling` loop over the window
offsets of any number of spatial axes; these classes fix the rank at three
(kd*kh*kw vectorised operations each way, no scatter-add). Padding follows
Keras/TensorFlow: padded cells never win a max and are not counted by an
average.
"""

from minidl.functions.pooling import AvgPool2D, MaxPool2D, pool


class MaxPool3D(MaxPool2D):
    """Max over each (depth, row, col) window; the gradient goes to the
    window's first maximum in row-major window order."""


class AvgPool3D(AvgPool2D):
    """Mean over each window's cells that lie inside the input (padding excluded)."""


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
    return pool(MaxPool3D, 'max_pool3d', x, pool_size, strides, padding, data_format, rank=3)


def avg_pool3d(x, pool_size=2, strides=None, padding='valid', data_format='channels_last'):
    """Average pooling over 3-D windows; padded cells are left out of each count.

    Arguments as :func:`max_pool3d`.
    """
    return pool(AvgPool3D, 'avg_pool3d', x, pool_size, strides, padding, data_format, rank=3)
