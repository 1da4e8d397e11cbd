"""_Pooling layers (Keras 2): windowed max/average pooling and global pooling, 1-D and 2-D.

The 1-D windowed pools run the 2-D functions on a height-1 view of the
sequence, so both share one implementation.
"""

from minidl import functions as F
from minidl.layers.pooling_base import _GlobalPooling, _Pooling
# Keras 2's keras.layers.pooling also holds the 3-D poolings.
from minidl.layers.pooling3d import (  # noqa: F401
    AveragePooling3D, AvgPool3D, GlobalAveragePooling3D, GlobalAvgPool3D, GlobalMaxPool3D,
    GlobalMaxPooling3D, MaxPool3D, MaxPooling3D)


class MaxPooling1D(_Pooling):
    """Max over windows of steps; input (batch, steps, features) or channels-first.

    Args:
        pool_size: Window length.
        strides: Step between windows (``pool_size`` when None).
        padding: 'valid' or 'same' (output ``ceil(steps / stride)``; padded
            cells never win).
        data_format: 'channels_last' (the default) or 'channels_first'.
    """

    rank = 1
    function = staticmethod(F.max_pool2d)

    def __init__(self, pool_size=2, strides=None, padding='valid', data_format='channels_last',
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling1D(_Pooling):
    """Mean over windows of steps; padded cells are not counted. Arguments as MaxPooling1D."""

    rank = 1
    function = staticmethod(F.avg_pool2d)

    def __init__(self, pool_size=2, strides=None, padding='valid', data_format='channels_last',
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class MaxPooling2D(_Pooling):
    """Max over 2-D windows of an image.

    Args:
        pool_size: Int or (rows, cols) window.
        strides: Int or pair (``pool_size`` when None).
        padding: 'valid' or 'same' (output ``ceil(size / stride)``; padded
            cells never win).
        data_format: 'channels_last' (the default for None) or 'channels_first'.
    """

    rank = 2
    function = staticmethod(F.max_pool2d)

    def __init__(self, pool_size=(2, 2), strides=None, padding='valid', data_format=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling2D(_Pooling):
    """Mean over 2-D windows; padded cells are not counted. Arguments as MaxPooling2D."""

    rank = 2
    function = staticmethod(F.avg_pool2d)

    def __init__(self, pool_size=(2, 2), strides=None, padding='valid', data_format=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class GlobalAveragePooling1D(_GlobalPooling):
    """Mean over the steps: (batch, steps, features) -> (batch, features).

    Args:
        data_format: 'channels_last' (the default) or 'channels_first'.
        keepdims: Keep the steps axis with size 1.
    """

    rank = 1

    def __init__(self, data_format='channels_last', keepdims=False, **kwargs):
        super().__init__(data_format, keepdims, **kwargs)

    supports_masking = True

    def call(self, inputs, mask=None):
        if mask is not None:
            # The mean over the unmasked steps only, as Keras 2 takes it.
            return F.masks.masked_mean(inputs, mask, self._spatial_axes[0], self.keepdims)
        return F.mean(inputs, axis=self._spatial_axes, keepdims=self.keepdims)

    def compute_mask(self, inputs, mask=None):
        return None


class GlobalMaxPooling1D(_GlobalPooling):
    """Max over the steps. Arguments as GlobalAveragePooling1D."""

    rank = 1

    def __init__(self, data_format='channels_last', keepdims=False, **kwargs):
        super().__init__(data_format, keepdims, **kwargs)

    def call(self, inputs):
        return F.max(inputs, axis=self._spatial_axes, keepdims=self.keepdims)


class GlobalAveragePooling2D(_GlobalPooling):
    """Mean over rows and columns: (batch, rows, cols, channels) -> (batch, channels).

    Args:
        data_format: 'channels_last' (the default for None) or 'channels_first'.
        keepdims: Keep the spatial axes with size 1.
    """

    rank = 2

    def call(self, inputs):
        return F.global_avg_pool2d(inputs, self.data_format, self.keepdims)


class GlobalMaxPooling2D(_GlobalPooling):
    """Max over rows and columns. Arguments as GlobalAveragePooling2D."""

    rank = 2

    def call(self, inputs):
        return F.global_max_pool2d(inputs, self.data_format, self.keepdims)
