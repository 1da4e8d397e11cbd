"""3-D spatial reshaping layers (Keras 2): zero padding, cropping and nearest upsampling of volumes.

They are the shared reshaping layers of :mod:`minidl.layers.reshaping` at
rank 3 (depth, rows, cols).
"""

from minidl.layers.reshaping import _Cropping, _UpSampling, _ZeroPadding


class ZeroPadding3D(_ZeroPadding):
    """Zeros added around a volume along depth, rows and columns.

    Args:
        padding: Int (all sides), three ints (each added on both sides of
            its axis) or three (before, after) pairs.
        data_format: 'channels_last' (the default for None) or 'channels_first'.
    """

    rank = 3

    def __init__(self, padding=(1, 1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class Cropping3D(_Cropping):
    """Cells removed from the edges of a volume along depth, rows and columns.

    Args:
        cropping: Int (all sides), three ints (each removed at both ends of
            its axis) or three (before, after) pairs.
        data_format: 'channels_last' (the default for None) or 'channels_first'.
    """

    rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


class UpSampling3D(_UpSampling):
    """Nearest-neighbour upsampling: each cell repeated ``size`` times along depth, rows, cols.

    Args:
        size: Int or three factors.
        data_format: 'channels_last' (the default for None) or 'channels_first'.
    """

    rank = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(size, data_format, **kwargs)
