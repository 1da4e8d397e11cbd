"""The two shapes of pooling layer that the 1-D, 2-D and 3-D ones specialise.

:class:`_Pooling` slides a window over ``rank`` spatial axes (a subclass sets
``rank`` and ``function``); :class:`_GlobalPooling` reduces every spatial
axis (a subclass sets ``rank`` and ``call``).
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
