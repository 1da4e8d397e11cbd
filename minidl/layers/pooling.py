"""Pooling layers (Keras 2): windowed max/average pooling and global pooling, 1-D and 2-D.

The 1-D windowed pools run the 2-D functions on a height-1 view of the
sequence, so both share one implementation.
"""

from minidl import functions as F
from minidl.layers.base import Layer
from minidl.layers.conv import (
    conv_output_length, check_positive_output, normalize_data_format, normalize_padding,
    normalize_tuple)
from minidl.layers.input_spec import InputSpec


class _Pooling(Layer):
    """Windowed pooling of ``rank`` spatial axes; subclasses set ``rank`` and ``function``."""

    rank = None
    function = None

    def __init__(self, pool_size, strides=None, padding='valid', data_format=None, **kwargs):
        pool_size = normalize_tuple(pool_size, self.rank, 'pool_size')
        strides = pool_size if strides is None else normalize_tuple(strides, self.rank, 'strides')
        padding = normalize_padding(padding)
        data_format = normalize_data_format(data_format)
        super().__init__(**kwargs)
        self.pool_size, self.strides = pool_size, strides
        self.padding, self.data_format = padding, data_format
        self.input_spec = InputSpec(ndim=self.rank + 2)

    @property
    def _channels_first(self):
        return self.data_format == 'channels_first'

    def compute_output_shape(self, input_shape):
        spatial = input_shape[2:] if self._channels_first else input_shape[1:-1]
        sizes = tuple(conv_output_length(size, window, self.padding, stride)
                      for size, window, stride in zip(spatial, self.pool_size, self.strides))
        channels = input_shape[1] if self._channels_first else input_shape[-1]
        output_shape = (input_shape[0],) + (
            (channels,) + sizes if self._channels_first else sizes + (channels,))
        check_positive_output(self, input_shape, output_shape)
        return output_shape

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)  # an input too small is named here
        if self.rank >= 2:
            return self.function(inputs, self.pool_size, self.strides, self.padding,
                                 self.data_format)
        # A sequence is pooled as an image of height 1.
        height_axis = 2 if self._channels_first else 1
        outputs = self.function(F.expand_dims(inputs, height_axis), (1,) + self.pool_size,
                                (1,) + self.strides, self.padding, self.data_format)
        return F.squeeze(outputs, height_axis)

    def get_config(self):
        config = super().get_config()
        config.update({'pool_size': self.pool_size, 'padding': self.padding,
                       'strides': self.strides, 'data_format': self.data_format})
        return config


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


class _GlobalPooling(Layer):
    """Reduction over every spatial axis; subclasses set ``rank`` and ``_pool``."""

    rank = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        data_format = normalize_data_format(data_format)
        super().__init__(**kwargs)
        self.data_format, self.keepdims = data_format, bool(keepdims)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    @property
    def _spatial_axes(self):
        first = 2 if self.data_format == 'channels_first' else 1
        return tuple(range(first, first + self.rank))

    def compute_output_shape(self, input_shape):
        axes = self._spatial_axes
        if self.keepdims:
            return tuple(1 if axis in axes else size for axis, size in enumerate(input_shape))
        return tuple(size for axis, size in enumerate(input_shape) if axis not in axes)

    def get_config(self):
        config = super().get_config()
        config.update({'data_format': self.data_format, 'keepdims': self.keepdims})
        return config


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


_POOLING_3D = ('AveragePooling3D', 'AvgPool3D', 'GlobalAveragePooling3D', 'GlobalAvgPool3D',
               'GlobalMaxPool3D', 'GlobalMaxPooling3D', 'MaxPool3D', 'MaxPooling3D')


def __getattr__(name):
    # Keras 2's keras.layers.pooling also holds the 3-D poolings; here they live in
    # pooling3d, which imports this module, so they are found when asked for.
    if name in _POOLING_3D:
        from minidl.layers import pooling3d
        return getattr(pooling3d, name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
