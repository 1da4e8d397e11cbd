"""Locally connected layers (Keras 2): LocallyConnected1D and LocallyConnected2D.

Like a convolution, but every output position has its own weights. Weight
shapes are Keras 2.2.4's: kernel ``(positions, prod(kernel_size)*in, filters)``
(a window flattened as ``(k..., in)`` for channels-last inputs and
``(in, k...)`` for channels-first ones) and bias ``(*output_size,
filters)``. Only 'valid' windows exist, as in Keras 2.2.4.
"""

import math

import numpy as np

from minidl import activations, constraints, initializers, regularizers
from minidl import functions as F
from minidl.layers.base import Layer
from minidl.layers.conv import (
    check_positive_output, conv_output_length, normalize_data_format, normalize_tuple)
from minidl.layers.input_spec import InputSpec


class _LocallyConnected(Layer):
    """Shared unshared-weight convolution layer; subclasses set ``rank``."""

    rank = None

    def __init__(self, filters, kernel_size, strides=1, padding='valid', data_format=None,
                 activation=None, use_bias=True, kernel_initializer='glorot_uniform',
                 bias_initializer='zeros', kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        name = type(self).__name__
        if isinstance(filters, bool) or not isinstance(filters, (int, np.integer)) \
                or filters <= 0:
            raise ValueError(f'{name}: filters must be a positive int, got {filters!r}')
        kernel_size = normalize_tuple(kernel_size, self.rank, 'kernel_size')
        strides = normalize_tuple(strides, self.rank, 'strides')
        if not isinstance(padding, str) or padding.lower() != 'valid':
            raise ValueError(f"{name}: only padding='valid' is supported (as in Keras 2.2.4), "
                             f'got {padding!r}')
        padding = padding.lower()
        data_format = normalize_data_format(data_format)
        activation = activations.get(activation)
        kernel_initializer = initializers.get(kernel_initializer)
        bias_initializer = initializers.get(bias_initializer)
        kernel_regularizer = regularizers.get(kernel_regularizer)
        bias_regularizer = regularizers.get(bias_regularizer)
        kernel_constraint = constraints.get(kernel_constraint)
        bias_constraint = constraints.get(bias_constraint)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.filters, self.kernel_size, self.strides = int(filters), kernel_size, strides
        self.padding, self.data_format = padding, data_format
        self.activation, self.use_bias = activation, bool(use_bias)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(ndim=self.rank + 2)

    @property
    def _channel_axis(self):
        return 1 if self.data_format == 'channels_first' else -1

    def _output_size(self, input_shape):
        spatial = input_shape[2:] if self.data_format == 'channels_first' else input_shape[1:-1]
        return tuple(conv_output_length(size, window, 'valid', stride)
                     for size, window, stride in zip(spatial, self.kernel_size, self.strides))

    def build(self, input_shape):
        if len(input_shape) != self.rank + 2:
            raise ValueError(f'layer {self.name!r} expects inputs of rank {self.rank + 2}; got '
                             f'input shape {tuple(input_shape)}')
        channels = input_shape[self._channel_axis]
        out_size = self._output_size(input_shape)
        if channels is None or None in out_size:
            raise ValueError(f'layer {self.name!r}: the spatial and channel dimensions of the '
                             f'inputs must be known; got input shape {tuple(input_shape)}')
        self.compute_output_shape(input_shape)  # an input too small fails before any weight
        self.kernel = self.add_weight(
            'kernel', (math.prod(out_size), math.prod(self.kernel_size) * channels, self.filters),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight('bias', out_size + (self.filters,),
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis: channels})
        self.built = True

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)  # an input too small is named here
        outputs = F.local_conv(inputs, self.kernel, self.bias, self.kernel_size, self.strides,
                               self.data_format)
        return self.activation(outputs)

    def compute_output_shape(self, input_shape):
        sizes = self._output_size(input_shape)
        output_shape = (input_shape[0],) + (
            (self.filters,) + sizes if self.data_format == 'channels_first'
            else sizes + (self.filters,))
        check_positive_output(self, input_shape, output_shape)
        return output_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            'filters': self.filters, 'kernel_size': self.kernel_size, 'strides': self.strides,
            'padding': self.padding, 'data_format': self.data_format,
            'activation': activations.serialize(self.activation),
            'use_bias': self.use_bias,
            'kernel_initializer': initializers.serialize(self.kernel_initializer),
            'bias_initializer': initializers.serialize(self.bias_initializer),
            'kernel_regularizer': regularizers.serialize(self.kernel_regularizer),
            'bias_regularizer': regularizers.serialize(self.bias_regularizer),
            'activity_regularizer': regularizers.serialize(self.activity_regularizer),
            'kernel_constraint': constraints.serialize(self.kernel_constraint),
            'bias_constraint': constraints.serialize(self.bias_constraint),
        })
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
