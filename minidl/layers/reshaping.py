"""Spatial reshaping layers (Keras 2): zero padding, cropping and upsampling, 1-D and 2-D.

They are built from ``pad``, ``getitem`` and ``reshape``/``broadcast_to``,
whose gradients are the exact inverse operations (crop, scatter, sum over
each block); bilinear upsampling is its own function (``upsample_bilinear2d``).
"""

import numpy as np

from minidl import functions as F
from minidl.functions.resize import upsample_bilinear2d
from minidl.layers.base import Layer
from minidl.layers.conv import check_positive_output, normalize_data_format, normalize_tuple
from minidl.layers.input_spec import InputSpec

_INTERPOLATIONS = ('area', 'bicubic', 'bilinear', 'gaussian', 'lanczos3', 'lanczos5',
                   'mitchellcubic', 'nearest')


def _normalize_pairs(value, name, rank):
    """``((before, after), ...)`` for ``rank`` axes from an int, ``rank`` ints or ``rank`` pairs.

    For one axis a plain ``(before, after)`` pair is accepted, as Keras's 1-D
    layers take it.
    """
    if rank == 1:
        return (normalize_tuple(value, 2, name, allow_zero=True),)
    if isinstance(value, (int, np.integer)):
        return (normalize_tuple(value, 2, name, allow_zero=True),) * rank
    try:
        parts = tuple(value)
    except TypeError:
        parts = ()
    if len(parts) != rank:
        raise ValueError(f'{name} must be an int, a tuple of {rank} ints or a tuple of {rank} '
                         f'(before, after) pairs, got {value!r}')
    return tuple(normalize_tuple(part, 2, name, allow_zero=True) for part in parts)


class _Spatial(Layer):
    """Shared geometry: which axes are spatial for ``rank`` and the data format."""

    rank = None

    def __init__(self, data_format, **kwargs):
        data_format = normalize_data_format(data_format)
        super().__init__(**kwargs)
        self.data_format = data_format
        self.input_spec = InputSpec(ndim=self.rank + 2)

    @property
    def _spatial_axes(self):
        first = 2 if self.data_format == 'channels_first' else 1
        return tuple(range(first, first + self.rank))

    def _map_spatial(self, input_shape, resize):
        """``input_shape`` with each spatial size replaced by ``resize(axis_index, size)``."""
        shape = list(input_shape)
        for index, axis in enumerate(self._spatial_axes):
            if shape[axis] is not None:
                shape[axis] = resize(index, shape[axis])
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        if self.rank >= 2:
            config['data_format'] = self.data_format
        return config


class _ZeroPadding(_Spatial):
    def __init__(self, padding, data_format, **kwargs):
        padding = _normalize_pairs(padding, 'padding', self.rank)
        super().__init__(data_format, **kwargs)
        self.padding = padding

    def compute_output_shape(self, input_shape):
        return self._map_spatial(input_shape, lambda i, size: size + sum(self.padding[i]))

    def call(self, inputs):
        pad_width = [(0, 0)] * inputs.ndim
        for axis, pads in zip(self._spatial_axes, self.padding):
            pad_width[axis] = pads
        return F.pad(inputs, pad_width)

    def get_config(self):
        config = super().get_config()
        config['padding'] = self.padding[0] if self.rank == 1 else self.padding
        return config


class ZeroPadding1D(_ZeroPadding):
    """Zeros added before and after the steps of (batch, steps, features).

    Args:
        padding: Int (both sides) or (left, right).
    """

    rank = 1

    def __init__(self, padding=1, **kwargs):
        super().__init__(padding, 'channels_last', **kwargs)


class ZeroPadding2D(_ZeroPadding):
    """Rows and columns of zeros added around an image.

    Args:
        padding: Int (all sides), (rows, cols) (each added on both sides) or
            ((top, bottom), (left, right)).
        data_format: 'channels_last' (the default for None) or 'channels_first'.
    """

    rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class _Cropping(_Spatial):
    def __init__(self, cropping, data_format, **kwargs):
        cropping = _normalize_pairs(cropping, 'cropping', self.rank)
        super().__init__(data_format, **kwargs)
        self.cropping = cropping

    def compute_output_shape(self, input_shape):
        output_shape = self._map_spatial(input_shape, lambda i, size: size - sum(self.cropping[i]))
        check_positive_output(self, input_shape, output_shape)
        return output_shape

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)  # cropping everything away is named here
        index = [slice(None)] * inputs.ndim
        for axis, (before, after) in zip(self._spatial_axes, self.cropping):
            index[axis] = slice(before, inputs.shape[axis] - after)
        return F.getitem(inputs, tuple(index))

    def get_config(self):
        config = super().get_config()
        config['cropping'] = self.cropping[0] if self.rank == 1 else self.cropping
        return config


class Cropping1D(_Cropping):
    """Steps removed from the start and end of (batch, steps, features).

    Args:
        cropping: Int (both ends) or (start, end).
    """

    rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping, 'channels_last', **kwargs)


class Cropping2D(_Cropping):
    """Rows and columns removed from the edges of an image.

    Args:
        cropping: Int (all sides), (rows, cols) (each removed at both ends) or
            ((top, bottom), (left, right)).
        data_format: 'channels_last' (the default for None) or 'channels_first'.
    """

    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


class _UpSampling(_Spatial):
    def __init__(self, size, data_format, **kwargs):
        size = normalize_tuple(size, self.rank, 'size')
        super().__init__(data_format, **kwargs)
        self.size = size

    def compute_output_shape(self, input_shape):
        return self._map_spatial(input_shape, lambda i, length: length * self.size[i])

    def call(self, inputs):
        # Each spatial axis gets a size-1 axis after it, broadcast to the
        # factor; merging the pairs repeats every cell factor times along
        # that axis. The gradient sums each block back (broadcast_to's).
        expanded, tiled = list(inputs.shape), list(inputs.shape)
        for offset, (axis, factor) in enumerate(zip(self._spatial_axes, self.size)):
            position = axis + offset + 1
            expanded.insert(position, 1)
            tiled.insert(position, factor)
        outputs = F.broadcast_to(F.reshape(inputs, expanded), tiled)
        return F.reshape(outputs, self._map_spatial(
            inputs.shape, lambda i, length: length * self.size[i]))

    def get_config(self):
        config = super().get_config()
        config['size'] = self.size[0] if self.rank == 1 else self.size
        return config


class UpSampling1D(_UpSampling):
    """Each step of (batch, steps, features) repeated ``size`` times.

    Args:
        size: Repetition factor.
    """

    rank = 1

    def __init__(self, size=2, **kwargs):
        super().__init__(size, 'channels_last', **kwargs)


class UpSampling2D(_UpSampling):
    """Nearest-neighbour upsampling: each pixel repeated ``size`` times along rows and columns.

    Args:
        size: Int or (rows, cols) factors.
        data_format: 'channels_last' (the default for None) or 'channels_first'.
        interpolation: 'nearest', or 'bilinear' as Keras 2.2.4 with TensorFlow
            (source coordinate ``output / factor``, no half-pixel centers; see
            :mod:`minidl.functions.resize`).
    """

    rank = 2

    def __init__(self, size=(2, 2), data_format=None, interpolation='nearest', **kwargs):
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(f'UpSampling2D: interpolation must be one of '
                             f'{", ".join(map(repr, _INTERPOLATIONS))}, got {interpolation!r}')
        if interpolation not in ('nearest', 'bilinear'):
            raise NotImplementedError(f"UpSampling2D: interpolation={interpolation!r} is not "
                                      f"implemented; minidl supports 'nearest' and 'bilinear'")
        super().__init__(size, data_format, **kwargs)
        self.interpolation = interpolation

    def call(self, inputs):
        if self.interpolation == 'bilinear':
            return upsample_bilinear2d(inputs, self.size, self.data_format)
        return super().call(inputs)

    def get_config(self):
        config = super().get_config()
        config['interpolation'] = self.interpolation
        return config
