"""Convolution layers: Conv1D and Conv2D (Keras 2).

Kernels are stored in Keras's layout, ``(k, in, out)`` and
``(kh, kw, in, out)``, which is the layout ``minidl.functions.conv1d`` and
``conv2d`` take, so a layer is a thin wrapper that validates its arguments,
creates the weights and infers shapes.

The argument helpers at the top (:func:`normalize_tuple`,
:func:`normalize_data_format`, :func:`conv_output_length`, ...) are shared
with the other layer modules.
"""

import numpy as np

from minidl import activations, config, constraints, initializers, regularizers
from minidl import functions as F
from minidl.layers.base import Layer
from minidl.layers.input_spec import InputSpec

_DATA_FORMATS = ('channels_last', 'channels_first')
_FUSES_RELU = (F.conv1d, F.conv2d)  # the functions that take activation='relu'


def normalize_tuple(value, n, name, allow_zero=False):
    """``value`` (an int or ``n`` ints) as a tuple of ``n`` positive (or >= 0) ints."""
    values = (value,) * n if isinstance(value, (int, np.integer)) else value
    try:
        values = tuple(values)
    except TypeError:
        values = ()
    smallest = 0 if allow_zero else 1
    if len(values) != n or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= smallest
            for v in values):
        kind = 'non-negative' if allow_zero else 'positive'
        raise ValueError(f'{name} must be a {kind} int or a tuple of {n} {kind} ints, '
                         f'got {value!r}')
    return tuple(int(v) for v in values)


def normalize_data_format(value):
    """'channels_last' or 'channels_first'; None gives ``config.image_data_format``."""
    if value is None:
        value = config.image_data_format
    if not isinstance(value, str) or value.lower() not in _DATA_FORMATS:
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', got {value!r}")
    return value.lower()


def normalize_padding(value, allowed=('valid', 'same')):
    """A padding mode name, lower-cased, checked against ``allowed``."""
    if not isinstance(value, str) or value.lower() not in allowed:
        raise ValueError(f'padding must be one of {", ".join(map(repr, allowed))}, got {value!r}')
    return value.lower()


def conv_output_length(length, window, padding, stride, dilation=1):
    """Output size along one axis of a convolution or pooling (None stays None)."""
    if length is None:
        return None
    extent = dilation * (window - 1) + 1
    covered = length if padding in ('same', 'causal') else length - extent + 1
    return (covered + stride - 1) // stride


def check_positive_output(layer, input_shape, output_shape):
    """Raise a ValueError naming ``layer`` if an output size would be zero or less."""
    if any(size is not None and size <= 0 for size in output_shape):
        raise ValueError(f'layer {layer.name!r}: input of shape {tuple(input_shape)} is too '
                         f'small; the output would have shape {tuple(output_shape)}')


def serialize_or_none(module, value):
    """``module.serialize(value)``, or None when nothing is set (used by other layer modules)."""
    return None if value is None else module.serialize(value)


class _Conv(Layer):
    """Shared N-D convolution layer; subclasses set ``rank`` and ``function``."""

    rank = None
    paddings = ('valid', 'same')

    def __init__(self, filters, kernel_size, strides=1, padding='valid', data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer='glorot_uniform', bias_initializer='zeros',
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        if isinstance(filters, bool) or not isinstance(filters, (int, np.integer)) \
                or filters <= 0:
            raise ValueError(f'{type(self).__name__}: filters must be a positive int, '
                             f'got {filters!r}')
        if groups != 1:
            raise NotImplementedError(f'{type(self).__name__}: grouped convolution '
                                      f'(groups={groups!r}) is not supported; use groups=1')
        kernel_size = normalize_tuple(kernel_size, self.rank, 'kernel_size')
        strides = normalize_tuple(strides, self.rank, 'strides')
        padding = normalize_padding(padding, self.paddings)
        data_format = normalize_data_format(data_format)
        dilation_rate = normalize_tuple(dilation_rate, self.rank, 'dilation_rate')
        activation = activations.get(activation)
        kernel_initializer = initializers.get(kernel_initializer)
        bias_initializer = initializers.get(bias_initializer)
        kernel_regularizer = regularizers.get(kernel_regularizer)
        bias_regularizer = regularizers.get(bias_regularizer)
        kernel_constraint = constraints.get(kernel_constraint)
        bias_constraint = constraints.get(bias_constraint)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.filters, self.kernel_size, self.strides = int(filters), kernel_size, strides
        self.padding, self.data_format, self.dilation_rate = padding, data_format, dilation_rate
        self.groups = 1
        self.activation, self.use_bias = activation, bool(use_bias)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(ndim=self.rank + 2)

    @property
    def _channel_axis(self):
        return 1 if self.data_format == 'channels_first' else -1

    def _spatial(self, shape):
        return tuple(shape[2:]) if self.data_format == 'channels_first' else tuple(shape[1:-1])

    def build(self, input_shape):
        if len(input_shape) != self.rank + 2:
            raise ValueError(f'layer {self.name!r} expects inputs of rank {self.rank + 2}; got '
                             f'input shape {tuple(input_shape)}')
        channels = input_shape[self._channel_axis]
        if channels is None:
            raise ValueError(f'layer {self.name!r}: the channel dimension of the inputs must be '
                             f'known; got input shape {tuple(input_shape)}')
        self.compute_output_shape(input_shape)  # an input too small fails before any weight
        self.kernel = self.add_weight('kernel', self._kernel_shape(input_shape, channels),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight('bias', self._bias_shape(input_shape),
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis: channels})
        self.built = True

    # The shapes that the variants (transposed, locally connected) choose otherwise.

    def _kernel_shape(self, input_shape, channels):
        return self.kernel_size + (channels, self.filters)

    def _bias_shape(self, input_shape):
        return (self.filters,)

    def _output_sizes(self, spatial):
        """The output's spatial sizes for the input's (None stays None)."""
        return tuple(conv_output_length(*args) for args in zip(
            spatial, self.kernel_size, (self.padding,) * self.rank, self.strides,
            self.dilation_rate))

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)  # an input too small is named here
        # ReLU, the common case, runs in place inside conv1d's and conv2d's Function
        # (one graph node, the same bits); a subclass's own function keeps it apart.
        fused = self.activation is activations.relu and self.function in _FUSES_RELU
        extra = {'activation': 'relu'} if fused else {}
        outputs = self.function(inputs, self.kernel, self.bias, strides=self.strides,
                                padding=self.padding, dilation_rate=self.dilation_rate,
                                data_format=self.data_format, **extra)
        return outputs if fused else self.activation(outputs)

    def compute_output_shape(self, input_shape):
        sizes = self._output_sizes(self._spatial(input_shape))
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
            'dilation_rate': self.dilation_rate, 'groups': self.groups,
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


class Conv1D(_Conv):
    """1-D convolution over the steps of a sequence (temporal convolution).

    Args:
        filters: Number of output channels.
        kernel_size: Window length (int or 1-tuple).
        strides: Step between windows.
        padding: 'valid', 'same' (output ``ceil(steps / stride)``) or 'causal'
            (zeros on the left only, so output t sees inputs up to t).
        data_format: 'channels_last' (batch, steps, channels), the default,
            or 'channels_first' (batch, channels, steps).
        dilation_rate: Spacing between the kernel's taps.
        groups: Only 1 (grouped convolution is not supported).
        activation: Activation applied to the output (name or callable).
        use_bias: Whether to add a bias vector.
        kernel_initializer, bias_initializer: Initializers of the kernel
            ``(kernel_size, in_channels, filters)`` and the bias ``(filters,)``.
        kernel_regularizer, bias_regularizer, activity_regularizer: Penalties.
        kernel_constraint, bias_constraint: Projections applied after updates.
    """

    rank = 1
    paddings = ('valid', 'same', 'causal')
    function = staticmethod(F.conv1d)


class Conv2D(_Conv):
    """2-D convolution over images.

    Args:
        filters: Number of output channels.
        kernel_size: Window size, an int or (rows, cols).
        strides: Int or (rows, cols).
        padding: 'valid' or 'same' (TensorFlow's: output ``ceil(size / stride)``,
            the odd padded row/column at the bottom/right).
        data_format: 'channels_last' (batch, rows, cols, channels), the
            default, or 'channels_first' (batch, channels, rows, cols).
        dilation_rate: Int or (rows, cols) spacing between the kernel's taps.
        groups: Only 1 (grouped convolution is not supported).
        activation: Activation applied to the output (name or callable).
        use_bias: Whether to add a bias vector.
        kernel_initializer, bias_initializer: Initializers of the kernel
            ``(rows, cols, in_channels, filters)`` and the bias ``(filters,)``.
        kernel_regularizer, bias_regularizer, activity_regularizer: Penalties.
        kernel_constraint, bias_constraint: Projections applied after updates.
    """

    rank = 2
    function = staticmethod(F.conv2d)

