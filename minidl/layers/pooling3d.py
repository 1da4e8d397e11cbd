"""3-D pooling layers (Keras 2): windowed max/average pooling and global pooling of volumes.

The windowed layers are the shared pooling layer at rank 3 over
:func:`minidl.functions.max_pool3d` / ``avg_pool3d``; the global ones reduce
the three spatial axes with ``max`` / ``mean``.
"""

from minidl import functions as F
from minidl.layers.pooling_base import _GlobalPooling, _Pooling


class MaxPooling3D(_Pooling):
    """Max over 3-D windows of a volume.

    Args:
        pool_size: Int or (depth, rows, cols) window.
        strides: Int or three ints (``pool_size`` when None).
        padding: 'valid' or 'same' (output ``ceil(size / stride)``; padded
            cells never win).
        data_format: 'channels_last' (the default for None) or 'channels_first'.
    """

    rank = 3
    function = staticmethod(F.max_pool3d)

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding='valid', data_format=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling3D(_Pooling):
    """Mean over 3-D windows; padded cells are not counted. Arguments as MaxPooling3D."""

    rank = 3
    function = staticmethod(F.avg_pool3d)

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding='valid', data_format=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class GlobalAveragePooling3D(_GlobalPooling):
    """Mean over depth, rows and columns: (batch, d, r, c, channels) -> (batch, channels).

    Args:
        data_format: 'channels_last' (the default for None) or 'channels_first'.
        keepdims: Keep the spatial axes with size 1.
    """

    rank = 3

    def call(self, inputs):
        return F.mean(inputs, axis=self._spatial_axes, keepdims=self.keepdims)


class GlobalMaxPooling3D(_GlobalPooling):
    """Max over depth, rows and columns. Arguments as GlobalAveragePooling3D."""

    rank = 3

    def call(self, inputs):
        return F.max(inputs, axis=self._spatial_axes, keepdims=self.keepdims)


MaxPool3D, AvgPool3D = MaxPooling3D, AveragePooling3D
GlobalMaxPool3D, GlobalAvgPool3D = GlobalMaxPooling3D, GlobalAveragePooling3D
