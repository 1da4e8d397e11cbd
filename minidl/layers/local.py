"""Locally connected layers (Keras 2): LocallyConnected1D and LocallyConnected2D.

Like a convolution, but every output position has its own weights. Weight
shapes are Keras 2.2.4's: kernel ``(positions, prod(kernel_size)*in, filters)``
(a window flattened as ``(k..., in)`` for channels-last inputs and
``(in, k...)`` for channels-first ones) and bias ``(*output_size,
filters)``. Only 'valid' windows exist, as in Keras 2.2.4.
"""

import math

from minidl import functions as F
from minidl.layers.conv import _Conv, normalize_data_format


class _LocallyConnected(_Conv):
    """A convolution layer whose every output position has its own weights; subclasses
    set ``rank``. It takes a convolution's arguments except dilation and groups."""

    paddings = ('valid',)

    def __init__(self, filters, kernel_size, strides=1, padding='valid', data_format=None,
                 activation=None, use_bias=True, kernel_initializer='glorot_uniform',
                 bias_initializer='zeros', kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        if not isinstance(padding, str) or padding.lower() != 'valid':
            raise ValueError(f"{type(self).__name__}: only padding='valid' is supported (as in "
                             f"Keras 2.2.4), got {padding!r}")
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         **kwargs)

    def build(self, input_shape):
        if len(input_shape) == self.rank + 2 and None in self._spatial(input_shape):
            raise ValueError(f'layer {self.name!r}: the spatial and channel dimensions of the '
                             f'inputs must be known; got input shape {tuple(input_shape)}')
        super().build(input_shape)

    def _kernel_shape(self, input_shape, channels):
        positions = math.prod(self._output_sizes(self._spatial(input_shape)))
        return (positions, math.prod(self.kernel_size) * channels, self.filters)

    def _bias_shape(self, input_shape):
        return self._output_sizes(self._spatial(input_shape)) + (self.filters,)

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)  # an input too small is named here
        outputs = F.local_conv(inputs, self.kernel, self.bias, self.kernel_size, self.strides,
                               self.data_format)
        return self.activation(outputs)

    def get_config(self):
        config = super().get_config()
        del config['dilation_rate'], config['groups']  # Keras 2.2.4's have neither
        return config


class LocallyConnected1D(_LocallyConnected):
    """1-D convolution with separate weights at every output step.

    Input (batch, steps, channels), output (batch, new_steps, filters).

    Args:
        filters: Number of output channels.
        kernel_size: Window length (int or 1-tuple).
        strides: Step between windows.
        padding: Only 'valid'.
        data_format: Only 'channels_last' (Keras 2.2.4 reads 1-D input that
            way whatever it is given; minidl refuses 'channels_first' rather
            than ignore it).
        activation: Activation applied to the output (name or callable).
        use_bias: Whether to add a bias ``(new_steps, filters)``.
        kernel_initializer, bias_initializer: Initializers of the kernel
            ``(new_steps, kernel_size*channels, filters)`` and the bias.
        kernel_regularizer, bias_regularizer, activity_regularizer: Penalties.
        kernel_constraint, bias_constraint: Projections applied after updates.
    """

    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding='valid', data_format=None,
                 **kwargs):
        if data_format is not None and normalize_data_format(data_format) != 'channels_last':
            raise ValueError(f"LocallyConnected1D: data_format must be 'channels_last', got "
                             f'{data_format!r}')
        super().__init__(filters, kernel_size, strides, padding, 'channels_last', **kwargs)

    def get_config(self):
        config = super().get_config()
        del config['data_format']  # Keras 2.2.4's 1-D layer has none in its config
        return config


class LocallyConnected2D(_LocallyConnected):
    """2-D convolution with separate weights at every output pixel.

    Args:
        filters: Number of output channels.
        kernel_size: Window size, an int or (rows, cols).
        strides: Int or (rows, cols).
        padding: Only 'valid'.
        data_format: 'channels_last' (the default for None) or 'channels_first'.
        activation: Activation applied to the output (name or callable).
        use_bias: Whether to add a bias ``(new_rows, new_cols, filters)``.
        kernel_initializer, bias_initializer: Initializers of the kernel
            ``(new_rows*new_cols, rows*cols*channels, filters)`` and the bias.
        kernel_regularizer, bias_regularizer, activity_regularizer: Penalties.
        kernel_constraint, bias_constraint: Projections applied after updates.
    """

    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding='valid', data_format=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, **kwargs)
