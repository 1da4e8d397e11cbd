"""ConvLSTM2D (Keras 2): an LSTM whose input and recurrent transforms are convolutions.

Shi et al., "Convolutional LSTM Network" (2015). Each step computes the four
gates i, f, c, o (in Keras's order) from a convolution of the input frame
with ``kernel`` and a 'same' convolution of the previous output ``h`` with
``recurrent_kernel``; the states ``h`` and ``c`` are feature maps.

The recurrence is a Python loop over time built from ``minidl.functions``
(autograd gives the backward pass). The input convolutions of all steps run
as one conv2d over (batch * time) frames before the loop, so the loop only
does the recurrent convolution and elementwise work.
"""

import numbers

import numpy as np

from minidl import activations, constraints, initializers, regularizers
from minidl import functions as F
from minidl.compute import new_generator
from minidl.layers.base import Layer
from minidl.layers.conv import (
    check_positive_output, conv_output_length, normalize_data_format, normalize_padding,
    normalize_tuple, serialize_or_none)
from minidl.layers.input_spec import InputSpec
from minidl.tensor import Tensor

_GATES = 4  # i, f, c, o


class ConvLSTM2D(Layer):
    """Convolutional LSTM over sequences of images.

    Args:
        filters: Channels of the output and of the states.
        kernel_size: Int or (rows, cols) window of both convolutions.
        strides: Strides of the input convolution (the recurrent one has 1).
        padding: 'valid' or 'same', of the input convolution (the recurrent
            one is always 'same', so the state keeps its size).
        data_format: 'channels_last': inputs (batch, time, rows, cols,
            channels); 'channels_first': (batch, time, channels, rows, cols).
        dilation_rate: Dilation of the input convolution.
        activation: Activation of the candidate and of the output ('tanh').
        recurrent_activation: Activation of the gates ('hard_sigmoid', Keras
            2.2.4's default).
        use_bias: Whether the layer has a bias.
        kernel_initializer, recurrent_initializer, bias_initializer:
            Initializers of the kernel (kh, kw, channels, 4*filters), the
            recurrent_kernel (kh, kw, filters, 4*filters) and the bias
            (4*filters,).
        unit_forget_bias: Start the forget gate's bias at 1.
        kernel_regularizer, recurrent_regularizer, bias_regularizer,
            activity_regularizer: Penalties.
        kernel_constraint, recurrent_constraint, bias_constraint: Projections
            applied after each optimizer update.
        return_sequences: Return every step's output rather than the last.
        return_state: Also return the final states: [output, h, c].
        go_backwards: Process the sequence from its end; a returned sequence
            is in processing order, as in Keras.
        stateful: Must be False (not supported).
        dropout: Fraction of the input dropped while training; as in Keras
            2.2.4, each gate has its own mask, one per sample for the whole
            sequence, and kept values are scaled by ``1 / (1 - dropout)``.
        recurrent_dropout: The same for ``h`` as the recurrent convolution
            reads it (the state itself is not dropped).

    The states start at zero: ``initial_state`` and masks are not taken.
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding='valid', data_format=None,
                 dilation_rate=(1, 1), activation='tanh', recurrent_activation='hard_sigmoid',
                 use_bias=True, kernel_initializer='glorot_uniform',
                 recurrent_initializer='orthogonal', bias_initializer='zeros',
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, dropout=0.0,
                 recurrent_dropout=0.0, **kwargs):
        if isinstance(filters, bool) or not isinstance(filters, (int, np.integer)) \
                or filters <= 0:
            raise ValueError(f'ConvLSTM2D: filters must be a positive int, got {filters!r}')
        if stateful:
            raise NotImplementedError('ConvLSTM2D: stateful=True is not supported; split long '
                                      'sequences into whole sequences per batch instead')
        kernel_size = normalize_tuple(kernel_size, 2, 'kernel_size')
        strides = normalize_tuple(strides, 2, 'strides')
        dilation_rate = normalize_tuple(dilation_rate, 2, 'dilation_rate')
        padding = normalize_padding(padding)
        data_format = normalize_data_format(data_format)
        dropout = _rate('dropout', dropout)
        recurrent_dropout = _rate('recurrent_dropout', recurrent_dropout)
        activation = activations.get(activation)
        recurrent_activation = activations.get(recurrent_activation)
        initializer_values = [initializers.get(i) for i in (
            kernel_initializer, recurrent_initializer, bias_initializer)]
        regularizer_values = [regularizers.get(r) for r in (
            kernel_regularizer, recurrent_regularizer, bias_regularizer)]
        constraint_values = [constraints.get(c) for c in (
            kernel_constraint, recurrent_constraint, bias_constraint)]
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.filters, self.kernel_size, self.strides = int(filters), kernel_size, strides
        self.padding, self.data_format, self.dilation_rate = padding, data_format, dilation_rate
        self.activation, self.recurrent_activation = activation, recurrent_activation
        self.use_bias, self.unit_forget_bias = bool(use_bias), bool(unit_forget_bias)
        (self.kernel_initializer, self.recurrent_initializer,
         self.bias_initializer) = initializer_values
        (self.kernel_regularizer, self.recurrent_regularizer,
         self.bias_regularizer) = regularizer_values
        (self.kernel_constraint, self.recurrent_constraint,
         self.bias_constraint) = constraint_values
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), False
        self.dropout, self.recurrent_dropout = dropout, recurrent_dropout
        self.generator = new_generator()  # dropout masks
        self.input_spec = InputSpec(ndim=5)

    @property
    def _channel_axis(self):
        return 2 if self.data_format == 'channels_first' else -1

    def build(self, input_shape):
        channels = input_shape[self._channel_axis]
        if len(input_shape) != 5 or channels is None:
            raise ValueError(f'layer {self.name!r} needs inputs of shape (batch, time, rows, '
                             f'cols, channels) ({self.data_format}) with a known number of '
                             f'channels; got input shape {tuple(input_shape)}')
        width = _GATES * self.filters
        self.kernel = self.add_weight('kernel', self.kernel_size + (channels, width),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            'recurrent_kernel', self.kernel_size + (self.filters, width),
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight('bias', (width,), initializer=self._bias_initializer(),
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=5, axes={self._channel_axis: channels})
        self.built = True

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer

        def forget_gate_ones(shape, dtype=None):
            filters, initializer = self.filters, self.bias_initializer
            blocks = [initializer((filters,), dtype), initializers.Ones()((filters,), dtype),
                      initializer((2 * filters,), dtype)]
            return F.concat([b if isinstance(b, Tensor) else Tensor(b, dtype=dtype)
                             for b in blocks])

        return forget_gate_ones

    # ----- calling -------------------------------------------------------------

    def call(self, inputs, training=None):
        if self.data_format == 'channels_first':
            inputs = F.transpose(inputs, (0, 1, 3, 4, 2))  # computed channels last
        batch, steps = inputs.shape[:2]
        projections = self._input_projections(inputs, bool(training))
        rows, cols = projections.shape[2:4]
        h = Tensor(inputs.xp.zeros((batch, rows, cols, self.filters)), dtype=inputs.dtype)
        c = h
        recurrent_masks = self._masks(h.shape, inputs, self.recurrent_dropout, bool(training))
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        frames = F.split(projections, steps, axis=1)
        outputs = []
        for t in order:
            gates = F.reshape(frames[t], (batch, rows, cols, _GATES * self.filters))
            gates = gates + self._recurrent_projection(h, recurrent_masks)
            i, f, candidate, o = F.split(gates, _GATES, axis=-1)
            c = self.recurrent_activation(f) * c + \
                self.recurrent_activation(i) * self.activation(candidate)
            h = self.recurrent_activation(o) * self.activation(c)
            outputs.append(h)
        output = F.stack(outputs, axis=1) if self.return_sequences else h
        if self.data_format == 'channels_first':
            output = F.transpose(output, (0, 1, 4, 2, 3) if self.return_sequences
                                 else (0, 3, 1, 2))
            h, c = (F.transpose(s, (0, 3, 1, 2)) for s in (h, c))
        return [output, h, c] if self.return_state else output

    def _input_projections(self, inputs, training):
        """The input convolution (with the bias) of every step: (batch, time, rows', cols',
        4*filters), as one conv2d over all frames, or one per gate under dropout."""
        batch, steps = inputs.shape[:2]
        masks = self._masks((batch,) + inputs.shape[2:], inputs, self.dropout, training)
        frames = [F.reshape(inputs, (batch * steps,) + inputs.shape[2:])]
        kernels, biases = [self.kernel], [self.bias]
        if masks is not None:
            # Each gate reads the input through its own mask, the same at every step.
            frames = [F.reshape(inputs * F.expand_dims(mask, 1), frames[0].shape)
                      for mask in masks]
            kernels = F.split(self.kernel, _GATES, axis=-1)
            biases = F.split(self.bias, _GATES) if self.use_bias else [None] * _GATES
        projections = [F.conv2d(x, kernel, bias, strides=self.strides, padding=self.padding,
                                dilation_rate=self.dilation_rate)
                       for x, kernel, bias in zip(frames, kernels, biases)]
        projection = projections[0] if len(projections) == 1 else F.concat(projections, axis=-1)
        return F.reshape(projection, (batch, steps) + projection.shape[1:])

    def _recurrent_projection(self, h, masks):
        if masks is None:
            return F.conv2d(h, self.recurrent_kernel, padding='same')
        kernels = F.split(self.recurrent_kernel, _GATES, axis=-1)
        return F.concat([F.conv2d(h * mask, kernel, padding='same')
                         for mask, kernel in zip(masks, kernels)], axis=-1)

    def _masks(self, shape, like, rate, training):
        """Four inverted-dropout masks of ``shape`` (one per gate) on ``like``'s device
        and dtype, or None."""
        if not training or rate == 0:
            return None
        ones = Tensor(like.xp.ones(shape), dtype=like.dtype)
        return [F.dropout(ones, rate, self.generator) for _ in range(_GATES)]

    def compute_output_shape(self, input_shape):
        batch, steps = input_shape[:2]
        if self.data_format == 'channels_first':
            sizes = input_shape[3:5]
        else:
            sizes = input_shape[2:4]
        rows, cols = (conv_output_length(size, window, self.padding, stride, dilation)
                      for size, window, stride, dilation in zip(
                          sizes, self.kernel_size, self.strides, self.dilation_rate))
        check_positive_output(self, input_shape, (rows, cols))
        state = (batch, self.filters, rows, cols) if self.data_format == 'channels_first' \
            else (batch, rows, cols, self.filters)
        output = state[:1] + (steps,) + state[1:] if self.return_sequences else state
        return [output, state, state] if self.return_state else output

    def get_config(self):
        config = super().get_config()
        config.update({
            'filters': self.filters,
            'kernel_size': self.kernel_size,
            'strides': self.strides,
            'padding': self.padding,
            'data_format': self.data_format,
            'dilation_rate': self.dilation_rate,
            'activation': serialize_or_none(activations, self.activation),
            'recurrent_activation': serialize_or_none(activations, self.recurrent_activation),
            'use_bias': self.use_bias,
            'kernel_initializer': initializers.serialize(self.kernel_initializer),
            'recurrent_initializer': initializers.serialize(self.recurrent_initializer),
            'bias_initializer': initializers.serialize(self.bias_initializer),
            'unit_forget_bias': self.unit_forget_bias,
            'kernel_regularizer': serialize_or_none(regularizers, self.kernel_regularizer),
            'recurrent_regularizer': serialize_or_none(regularizers, self.recurrent_regularizer),
            'bias_regularizer': serialize_or_none(regularizers, self.bias_regularizer),
            'activity_regularizer': serialize_or_none(regularizers, self.activity_regularizer),
            'kernel_constraint': serialize_or_none(constraints, self.kernel_constraint),
            'recurrent_constraint': serialize_or_none(constraints, self.recurrent_constraint),
            'bias_constraint': serialize_or_none(constraints, self.bias_constraint),
            'return_sequences': self.return_sequences,
            'return_state': self.return_state,
            'go_backwards': self.go_backwards,
            'stateful': self.stateful,
            'dropout': self.dropout,
            'recurrent_dropout': self.recurrent_dropout,
        })
        return config


def _rate(argument, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < 1:
        raise ValueError(f'ConvLSTM2D: {argument} must be a number in [0, 1), got {value!r}')
    return float(value)
