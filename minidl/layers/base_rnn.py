"""What the recurrent layers share: arguments, weights, initial states and shapes.

The layers themselves (SimpleRNN, GRU, LSTM) are in
:mod:`minidl.layers.recurrent`. Each runs a whole sequence through one fused
recurrence from ``minidl.functions`` (``simple_rnn``, ``gru``, ``lstm``), with
weights in Keras 2's layouts: kernel ``(features, G*units)``,
recurrent_kernel ``(units, G*units)`` and bias, the columns being ``G`` gate
blocks (LSTM i, f, c, o; GRU z, r, h).

What the fused recurrences do not implement raises NotImplementedError:
activations other than the standard ones (tanh, and sigmoid for the gates;
SimpleRNN also takes relu and linear), ``recurrent_dropout`` other than 0,
``stateful=True`` and masks. ``unroll`` is accepted and ignored (it only
changes how TensorFlow builds its graph). ``dropout`` drops input features
with one mask per sample shared by every time step, as Keras does.
"""

import numbers

import numpy as np

from minidl import activations, constraints, initializers, regularizers
from minidl import functions as F
from minidl.compute import new_generator
from minidl.layers.base import Layer
from minidl.layers.conv import serialize_or_none
from minidl.layers.input_spec import InputSpec
from minidl.tensor import Tensor


def _activation_name(layer_name, argument, activation, supported):
    """The name of a resolved activation, or NotImplementedError if it is not ``supported``."""
    name = activations.serialize(activation)
    # By identity: a function of the user's that happens to be called 'tanh' is not ours.
    if name not in supported or activations.get(name) is not activation:
        raise NotImplementedError(
            f'{layer_name}: {argument}={name!r} is not supported; the fused recurrence '
            f'implements {" or ".join(map(repr, supported))}')
    return name


def _rate(layer_name, argument, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < 1:
        raise ValueError(f'{layer_name}: {argument} must be a number in [0, 1), got {value!r}')
    return float(value)


def reverse_time(tensor, time_axis=1):
    """``tensor`` with its time axis reversed (differentiable)."""
    index = [slice(None)] * tensor.ndim
    index[time_axis] = slice(None, None, -1)
    return F.getitem(tensor, tuple(index))


def states_from_inputs(layer, inputs, kwargs):
    """Keras's ``layer([x, h0, c0])`` as ``layer(x, initial_state=[h0, c0])``.

    Returns:
        The input and the call's keyword arguments, with any states moved there.
    """
    if not isinstance(inputs, (list, tuple)):
        return inputs, kwargs
    if not inputs:
        raise ValueError(f'layer {layer.name!r} was called on an empty list')
    if len(inputs) > 1:
        if kwargs.get('initial_state') is not None:
            raise ValueError(f'layer {layer.name!r}: initial states were given twice, in the '
                             f'inputs list and as initial_state')
        kwargs = dict(kwargs, initial_state=list(inputs[1:]))
    return inputs[0], kwargs


class _RNN(Layer):
    """What the recurrent layers share: arguments, weights, states and output shapes.

    Subclasses set ``gate_count`` (gate blocks in the kernels), ``state_count``
    (1, or 2 for the LSTM's (h, c)) and define ``_recurrence(x, states)``,
    returning ``(outputs, *final_states)`` for a batch-major sequence.
    """

    gate_count = 1
    state_count = 1

    def __init__(self, units, activation, use_bias, kernel_initializer, recurrent_initializer,
                 bias_initializer, kernel_regularizer, recurrent_regularizer, bias_regularizer,
                 activity_regularizer, kernel_constraint, recurrent_constraint, bias_constraint,
                 dropout, recurrent_dropout, return_sequences, return_state, go_backwards,
                 stateful, unroll, time_major, supported_activations=('tanh',), **kwargs):
        name = type(self).__name__
        if isinstance(units, bool) or not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(f'{name}: units must be a positive int, got {units!r}')
        activation = activations.get(activation)
        activation_name = _activation_name(name, 'activation', activation,
                                           supported_activations)
        dropout = _rate(name, 'dropout', dropout)
        if _rate(name, 'recurrent_dropout', recurrent_dropout):
            raise NotImplementedError(f'{name}: recurrent_dropout is not supported (the fused '
                                      f'recurrence has no dropout on the state); got '
                                      f'recurrent_dropout={recurrent_dropout!r}')
        if stateful:
            raise NotImplementedError(f'{name}: stateful=True is not supported; pass the '
                                      f'previous final states as initial_state instead')
        initializer_values = [initializers.get(i) for i in (
            kernel_initializer, recurrent_initializer, bias_initializer)]
        regularizer_values = [regularizers.get(r) for r in (
            kernel_regularizer, recurrent_regularizer, bias_regularizer)]
        constraint_values = [constraints.get(c) for c in (
            kernel_constraint, recurrent_constraint, bias_constraint)]
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units, self.activation, self.use_bias = int(units), activation, bool(use_bias)
        self._activation_name = activation_name
        (self.kernel_initializer, self.recurrent_initializer,
         self.bias_initializer) = initializer_values
        (self.kernel_regularizer, self.recurrent_regularizer,
         self.bias_regularizer) = regularizer_values
        (self.kernel_constraint, self.recurrent_constraint,
         self.bias_constraint) = constraint_values
        self.dropout, self.recurrent_dropout = dropout, 0.0
        self.generator = new_generator()  # input dropout masks
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), False
        self.unroll, self.time_major = bool(unroll), bool(time_major)
        self.input_spec = InputSpec(ndim=3)

    # ----- weights -------------------------------------------------------------

    def _bias_shape(self):
        return (self.gate_count * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            order = '(time, batch, features)' if self.time_major else '(batch, time, features)'
            raise ValueError(f'layer {self.name!r} needs inputs of shape {order} with a known '
                             f'number of features; got input shape {tuple(input_shape)}')
        features, width = input_shape[-1], self.gate_count * self.units
        self.kernel = self.add_weight('kernel', (features, width),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight('recurrent_kernel', (self.units, width),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight('bias', self._bias_shape(),
                                        initializer=self._bias_initializer(),
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=3, axes={-1: features})
        self.built = True

    # ----- calling -------------------------------------------------------------

    def __call__(self, inputs, *args, **kwargs):
        inputs, kwargs = states_from_inputs(self, inputs, kwargs)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs, mask=None, training=None, initial_state=None):
        if mask is not None:
            raise NotImplementedError(f'layer {self.name!r}: masks are not supported yet')
        x = F.transpose(inputs, (1, 0, 2)) if self.time_major else inputs
        states = self._initial_states(initial_state, x)
        if training and self.dropout:
            x = F.dropout(x, self.dropout, self.generator, training=True,
                          noise_shape=(None, 1, None))
        outputs, *final_states = self._recurrence(x, states)
        if not self.return_sequences:
            output = final_states[0]
        else:
            # Keras returns the steps in the order they were processed.
            output = reverse_time(outputs) if self.go_backwards else outputs
            if self.time_major:
                output = F.transpose(output, (1, 0, 2))
        return [output] + final_states if self.return_state else output

    def _initial_states(self, initial_state, x):
        """The initial states as Tensors on ``x``'s device (None for zeros), checked."""
        if initial_state is None:
            return None
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) \
            else [initial_state]
        if len(states) != self.state_count:
            raise ValueError(f'layer {self.name!r} ({type(self).__name__}) takes '
                             f'{self.state_count} initial state(s), got {len(states)}')
        states = [s if isinstance(s, Tensor) else Tensor(s, device=x.device) for s in states]
        batch = x.shape[0]
        for index, state in enumerate(states):
            if state.shape != (batch, self.units):
                raise ValueError(f'layer {self.name!r}: initial state {index} must have shape '
                                 f'(batch, units) = {(batch, self.units)}, got {state.shape}')
        return states

    def compute_output_shape(self, input_shape):
        batch, steps = input_shape[:2]
        if self.time_major:
            batch, steps = steps, batch
        output = (batch, self.units)
        if self.return_sequences:
            output = (steps, batch, self.units) if self.time_major \
                else (batch, steps, self.units)
        if self.return_state:
            return [output] + [(batch, self.units)] * self.state_count
        return output

    def get_config(self):
        config = super().get_config()
        config.update({
            'units': self.units,
            'activation': serialize_or_none(activations, self.activation),
            'use_bias': self.use_bias,
            'kernel_initializer': initializers.serialize(self.kernel_initializer),
            'recurrent_initializer': initializers.serialize(self.recurrent_initializer),
            'bias_initializer': initializers.serialize(self.bias_initializer),
            'kernel_regularizer': serialize_or_none(regularizers, self.kernel_regularizer),
            'recurrent_regularizer': serialize_or_none(regularizers,
                                                       self.recurrent_regularizer),
            'bias_regularizer': serialize_or_none(regularizers, self.bias_regularizer),
            'activity_regularizer': serialize_or_none(regularizers, self.activity_regularizer),
            'kernel_constraint': serialize_or_none(constraints, self.kernel_constraint),
            'recurrent_constraint': serialize_or_none(constraints, self.recurrent_constraint),
            'bias_constraint': serialize_or_none(constraints, self.bias_constraint),
            'dropout': self.dropout,
            'recurrent_dropout': self.recurrent_dropout,
            'return_sequences': self.return_sequences,
            'return_state': self.return_state,
            'go_backwards': self.go_backwards,
            'stateful': self.stateful,
            'unroll': self.unroll,
            'time_major': self.time_major,
        })
        return config


class _GatedRNN(_RNN):
    """GRU and LSTM: a sigmoid recurrent activation and Keras's ``implementation``."""

    def __init__(self, units, recurrent_activation, implementation, **kwargs):
        name = type(self).__name__
        if implementation not in (1, 2):
            raise ValueError(f'{name}: implementation must be 1 or 2, got {implementation!r}')
        recurrent_activation = activations.get(recurrent_activation)
        _activation_name(name, 'recurrent_activation', recurrent_activation, ('sigmoid',))
        super().__init__(units, **kwargs)
        self.recurrent_activation = recurrent_activation
        self.implementation = int(implementation)

    def get_config(self):
        config = super().get_config()
        config.update({
            'recurrent_activation': serialize_or_none(activations, self.recurrent_activation),
            'implementation': self.implementation,
        })
        return config
