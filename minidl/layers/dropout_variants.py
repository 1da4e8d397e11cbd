"""Dropout that drops whole feature maps (SpatialDropout1D/2D/3D), and
ActivityRegularization, which penalises its input (Keras 2).
"""

from minidl import regularizers
from minidl.layers.base import Layer
from minidl.layers.conv import normalize_data_format
from minidl.layers.core import Dropout
from minidl.layers.input_spec import InputSpec


class _SpatialDropout(Dropout):
    """Dropout with one mask entry per sample and channel, shared across the
    spatial (or time) axes: correlated neighbours of a feature map are dropped
    together, so the map is dropped as a whole. Kept maps are scaled by
    ``1 / (1 - rate)``; inference passes the input unchanged.

    Args:
        rate: Fraction of the channels to drop, in [0, 1).
        data_format: 'channels_last' (default) or 'channels_first'.
        seed: Seed of this layer's own random generator (see Dropout).
    """

    spatial_rank = None

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        data_format = normalize_data_format(data_format)
        super().__init__(rate, seed=seed, **kwargs)
        self.data_format = data_format
        if self.data_format == 'channels_first':
            self.noise_shape = (None, None) + (1,) * self.spatial_rank
        else:
            self.noise_shape = (None,) + (1,) * self.spatial_rank + (None,)
        self.input_spec = InputSpec(ndim=self.spatial_rank + 2)

    def get_config(self):
        config = super().get_config()
        del config['noise_shape']  # fixed by the data format
        config['data_format'] = self.data_format
        return config


class SpatialDropout1D(_SpatialDropout):
    """Drops whole channels of (batch, steps, channels) sequences, the same ones
    at every step. Arguments as for _SpatialDropout, without ``data_format``
    (Keras 2.2.4's SpatialDropout1D is channels last only)."""

    spatial_rank = 1

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, data_format='channels_last', seed=seed, **kwargs)

    def get_config(self):
        config = super().get_config()
        del config['data_format']
        return config


class SpatialDropout2D(_SpatialDropout):
    """Drops whole channels of (batch, rows, cols, channels) images (see _SpatialDropout)."""

    spatial_rank = 2


class SpatialDropout3D(_SpatialDropout):
    """Drops whole channels of (batch, depth, rows, cols, channels) volumes (see
    _SpatialDropout)."""

    spatial_rank = 3


class ActivityRegularization(Layer):
    """Passes its input through unchanged and adds ``l1 * sum(|x|) + l2 * sum(x ** 2)``
    of it to the loss, through the layer's ``activity_regularizer``.

    Args:
        l1: Factor of the L1 penalty (>= 0).
        l2: Factor of the L2 penalty (>= 0).
    """

    supports_masking = True

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = self.activity_regularizer.l1, self.activity_regularizer.l2

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.pop('activity_regularizer', None)
        config.update({'l1': self.l1, 'l2': self.l2})
        return config
