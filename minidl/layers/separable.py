"""Depthwise and separable convolution layers (Keras 2): DepthwiseConv2D, SeparableConv1D/2D.

Weights in Keras 2's names, layouts and order: ``depthwise_kernel``
``kernel_size + (in_channels, depth_multiplier)``, then (separable layers)
``pointwise_kernel`` ``(1,)*rank + (in_channels*depth_multiplier, filters)``,
then ``bias``. The arguments are parsed by the convolution layers' shared
base; the depthwise and pointwise weights take the place of its kernel.
"""

import numpy as np

from minidl import constraints, initializers, regularizers
from minidl.functions.depthwise import depthwise_conv2d, separable_conv1d, separable_conv2d
from minidl.layers.conv import Conv2D, _Conv, check_positive_output, conv_output_length
from minidl.layers.input_spec import InputSpec


def _check_depth_multiplier(layer_cls, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f'{layer_cls.__name__}: depth_multiplier must be a positive int, '
                         f'got {value!r}')
    return int(value)


class _Depthwise:
    """The depthwise weight's arguments, creation and config, shared by the layers below."""

    def _set_depthwise_arguments(self, depth_multiplier, initializer, regularizer, constraint):
        self.depth_multiplier = _check_depth_multiplier(type(self), depth_multiplier)
        self.depthwise_initializer = initializers.get(initializer)
        self.depthwise_regularizer = regularizers.get(regularizer)
        self.depthwise_constraint = constraints.get(constraint)

    def _input_channels(self, input_shape):
        if len(input_shape) != self.rank + 2:
            raise ValueError(f'layer {self.name!r} expects inputs of rank {self.rank + 2}; got '
                             f'input shape {tuple(input_shape)}')
        channels = input_shape[self._channel_axis]
        if channels is None:
            raise ValueError(f'layer {self.name!r}: the channel dimension of the inputs must be '
                             f'known; got input shape {tuple(input_shape)}')
        return channels

    def _add_depthwise_kernel(self, channels):
        self.depthwise_kernel = self.add_weight(
            'depthwise_kernel', self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)

    def _add_bias(self, size):
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight('bias', (size,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def _depthwise_config(self, config):
        """``config`` of the shared base without its plain kernel, with the depthwise entries."""
        for key in ('groups', 'kernel_initializer', 'kernel_regularizer', 'kernel_constraint'):
            del config[key]
        config.update({
            'depth_multiplier': self.depth_multiplier,
            'depthwise_initializer': initializers.serialize(self.depthwise_initializer),
            'depthwise_regularizer': regularizers.serialize(self.depthwise_regularizer),
            'depthwise_constraint': constraints.serialize(self.depthwise_constraint),
        })
        return config


class _SeparableConv(_Depthwise, _Conv):
    """Depthwise convolution then a pointwise (1x1) convolution to ``filters`` channels."""

    paddings = ('valid', 'same')

    def __init__(self, filters, kernel_size, strides=1, padding='valid', data_format=None,
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer='glorot_uniform', pointwise_initializer='glorot_uniform',
                 bias_initializer='zeros', depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, **kwargs)
        self._set_depthwise_arguments(depth_multiplier, depthwise_initializer,
                                      depthwise_regularizer, depthwise_constraint)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self.compute_output_shape(input_shape)  # an input too small fails before any weight
        self._add_depthwise_kernel(channels)
        self.pointwise_kernel = self.add_weight(
            'pointwise_kernel', (1,) * self.rank + (channels * self.depth_multiplier,
                                                    self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self._add_bias(self.filters)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis: channels})
        self.built = True

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)
        outputs = self.function(inputs, self.depthwise_kernel, self.pointwise_kernel, self.bias,
                                strides=self.strides, padding=self.padding,
                                dilation_rate=self.dilation_rate, data_format=self.data_format)
        return self.activation(outputs)

    def get_config(self):
        config = self._depthwise_config(super().get_config())
        config.update({
            'pointwise_initializer': initializers.serialize(self.pointwise_initializer),
            'pointwise_regularizer': regularizers.serialize(self.pointwise_regularizer),
            'pointwise_constraint': constraints.serialize(self.pointwise_constraint),
        })
        return config


class SeparableConv1D(_SeparableConv):
    """Depthwise separable 1-D convolution: each channel filtered alone, then mixed by a 1x1.

    Args:
        filters: Number of output channels.
        kernel_size: Window length (int or 1-tuple).
        strides: Step between windows.
        padding: 'valid' or 'same' (output ``ceil(steps / stride)``).
        data_format: 'channels_last' (batch, steps, channels), the default,
            or 'channels_first' (batch, channels, steps).
        dilation_rate: Spacing between the kernel's taps.
        depth_multiplier: Depthwise outputs per input channel.
        activation: Activation applied to the output (name or callable).
        use_bias: Whether to add a bias vector ``(filters,)``.
        depthwise_initializer, pointwise_initializer, bias_initializer:
            Initializers of ``depthwise_kernel`` ``(kernel_size, in, depth_multiplier)``,
            ``pointwise_kernel`` ``(1, in*depth_multiplier, filters)`` and ``bias``.
        depthwise_regularizer, pointwise_regularizer, bias_regularizer,
            activity_regularizer: Penalties.
        depthwise_constraint, pointwise_constraint, bias_constraint:
            Projections applied after updates.
    """

    rank = 1
    function = staticmethod(separable_conv1d)

    def __init__(self, filters, kernel_size, strides=1, padding='valid',
                 data_format='channels_last', **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, **kwargs)


class SeparableConv2D(_SeparableConv):
    """Depthwise separable 2-D convolution: each channel filtered alone, then mixed by a 1x1.

    Args:
        filters: Number of output channels.
        kernel_size: Window size, an int or (rows, cols).
        strides: Int or (rows, cols).
        padding: 'valid' or 'same' (TensorFlow's).
        data_format: 'channels_last' (batch, rows, cols, channels), the
            default for None, or 'channels_first' (batch, channels, rows, cols).
        dilation_rate: Int or (rows, cols) spacing between the kernel's taps.
        depth_multiplier: Depthwise outputs per input channel.
        activation: Activation applied to the output (name or callable).
        use_bias: Whether to add a bias vector ``(filters,)``.
        depthwise_initializer, pointwise_initializer, bias_initializer:
            Initializers of ``depthwise_kernel`` ``(rows, cols, in, depth_multiplier)``,
            ``pointwise_kernel`` ``(1, 1, in*depth_multiplier, filters)`` and ``bias``.
        depthwise_regularizer, pointwise_regularizer, bias_regularizer,
            activity_regularizer: Penalties.
        depthwise_constraint, pointwise_constraint, bias_constraint:
            Projections applied after updates.
    """

    rank = 2
    function = staticmethod(separable_conv2d)

    def __init__(self, filters, kernel_size, strides=(1, 1), padding='valid', data_format=None,
                 dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)


class DepthwiseConv2D(_Depthwise, Conv2D):
    """Depthwise 2-D convolution: each input channel filtered on its own.

    The output has ``in_channels * depth_multiplier`` channels; channel
    ``c*depth_multiplier + m`` comes from input channel ``c``.

    Args:
        kernel_size: Window size, an int or (rows, cols).
        strides: Int or (rows, cols).
        padding: 'valid' or 'same' (TensorFlow's).
        depth_multiplier: Outputs per input channel.
        data_format: 'channels_last' (the default for None) or 'channels_first'.
        dilation_rate: Int or (rows, cols) spacing between the kernel's taps.
        activation: Activation applied to the output (name or callable).
        use_bias: Whether to add a bias vector ``(in_channels*depth_multiplier,)``.
        depthwise_initializer, bias_initializer: Initializers of
            ``depthwise_kernel`` ``(rows, cols, in_channels, depth_multiplier)`` and ``bias``.
        depthwise_regularizer, bias_regularizer, activity_regularizer: Penalties.
        depthwise_constraint, bias_constraint: Projections applied after updates.
    """

    def __init__(self, kernel_size, strides=(1, 1), padding='valid', depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 depthwise_initializer='glorot_uniform', bias_initializer='zeros',
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        depth_multiplier = _check_depth_multiplier(type(self), depth_multiplier)
        # The base's filters stand for the outputs per input channel until build.
        super().__init__(depth_multiplier, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, **kwargs)
        self._set_depthwise_arguments(depth_multiplier, depthwise_initializer,
                                      depthwise_regularizer, depthwise_constraint)

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self.compute_output_shape(input_shape)
        self._add_depthwise_kernel(channels)
        self._add_bias(channels * self.depth_multiplier)
        self.input_spec = InputSpec(ndim=4, axes={self._channel_axis: channels})
        self.built = True

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)
        outputs = depthwise_conv2d(inputs, self.depthwise_kernel, self.bias, strides=self.strides,
                                   padding=self.padding, dilation_rate=self.dilation_rate,
                                   data_format=self.data_format)
        return self.activation(outputs)

    def compute_output_shape(self, input_shape):
        channels = input_shape[self._channel_axis]
        outputs = None if channels is None else channels * self.depth_multiplier
        sizes = tuple(conv_output_length(*args) for args in zip(
            self._spatial(input_shape), self.kernel_size, (self.padding,) * 2, self.strides,
            self.dilation_rate))
        output_shape = (input_shape[0],) + (
            (outputs,) + sizes if self.data_format == 'channels_first' else sizes + (outputs,))
        check_positive_output(self, input_shape, output_shape)
        return output_shape

    def get_config(self):
        config = self._depthwise_config(super().get_config())
        del config['filters']
        return config


SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D
