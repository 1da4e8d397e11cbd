"""Recurrent cells (Keras 2): one time step of SimpleRNN, GRU and LSTM, and stacks of cells.

A cell computes one step, ``call(inputs, states, training=None)`` ->
``(output, new_states)``, with ``inputs`` ``(batch, features)`` and
``states`` a list of ``(batch, size)`` tensors, one per entry of
``state_size``. :class:`minidl.layers.RNN` runs a cell over a sequence; any
object with that ``call`` and a ``state_size`` (an int or a list of ints)
and, optionally, ``output_size`` works there, as in Keras 2.

Weights are in Keras 2's layouts: kernel ``(features, G*units)``,
recurrent_kernel ``(units, G*units)`` and bias, the columns being ``G`` gate
blocks (LSTM i, f, c, o; GRU z, r, h).

Dropout: ``dropout`` drops input features and ``recurrent_dropout`` drops
units of the previous output where it enters the recurrent matrix product
(Gal & Ghahramani 2016), each with one mask per sample for a whole sequence,
shared by all gates (Keras 2's ``implementation=2``). The masks are drawn
from the cell's own generator by :meth:`dropout_masks` the first time a step
is computed with ``training`` true, and kept until
:meth:`reset_dropout_masks`, which :class:`~minidl.layers.RNN` calls before
each sequence.
"""

import numbers

import numpy as np

from minidl import activations, constraints, initializers, regularizers
from minidl import functions as F
from minidl.compute import new_generator
from minidl.layers.base import Layer, _parameters
from minidl.layers.conv import serialize_or_none
from minidl.layers.serialization import deserialize, serialize
from minidl.tensor import Tensor


def _rate(cell, argument, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < 1:
        raise ValueError(f'{cell}: {argument} must be a number in [0, 1), got {value!r}')
    return float(value)


def _scaled_keep_mask(generator, shape, rate, dtype, xp):
    """Inverted dropout's mask: 0 with probability ``rate``, else ``1 / (1 - rate)``."""
    keep = 1.0 - rate
    mask = generator.bernoulli(shape, keep, xp=xp).astype(dtype)
    mask *= mask.dtype.type(1.0 / keep)
    return mask


def _columns(tensor, block, units):
    """Gate block ``block`` (``units`` columns wide) of a ``(batch, G*units)`` tensor."""
    return tensor[:, block * units:(block + 1) * units]


class _Cell(Layer):
    """What the three cells share: arguments, weights, dropout masks and config."""

    gate_count = 1

    def __init__(self, units, activation='tanh', use_bias=True,
                 kernel_initializer='glorot_uniform', recurrent_initializer='orthogonal',
                 bias_initializer='zeros', kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, **kwargs):
        name = type(self).__name__
        if isinstance(units, bool) or not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(f'{name}: units must be a positive int, got {units!r}')
        dropout, recurrent_dropout = (_rate(name, 'dropout', dropout),
                                      _rate(name, 'recurrent_dropout', recurrent_dropout))
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout, self.recurrent_dropout = dropout, recurrent_dropout
        self.state_size = self.output_size = self.units
        self.generator = new_generator()  # the dropout masks
        self._dropout_masks = None

    # ----- weights -------------------------------------------------------------

    def _bias_shape(self):
        return (self.gate_count * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def build(self, input_shape):
        features, width = input_shape[-1], self.gate_count * self.units
        if features is None:
            raise ValueError(f'cell {self.name!r} needs a known number of input features; got '
                             f'input shape {tuple(input_shape)}')
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
        self.built = True

    # ----- dropout -------------------------------------------------------------

    def dropout_masks(self, inputs_shape, training, xp=np, dtype=None):
        """The dropout masks of the current sequence, drawn on first use.

        Args:
            inputs_shape: Shape ``(batch, features)`` of one step's input.
            training: Whether dropout applies; when false nothing is drawn.
            xp: Array module of the masks (numpy or cupy).
            dtype: Their dtype (the cell's by default).

        Returns:
            ``(input_mask, recurrent_mask)``: arrays ``(batch, features)`` and
            ``(batch, units)`` of 0 and ``1 / (1 - rate)``, each None where its
            rate is 0 or ``training`` is false. The same arrays are returned
            (and used by :meth:`call`) until :meth:`reset_dropout_masks`.
        """
        if not training or not (self.dropout or self.recurrent_dropout):
            return None, None
        if self._dropout_masks is None:
            dtype = np.dtype(dtype or self.dtype)
            batch = inputs_shape[0]
            self._dropout_masks = (
                _scaled_keep_mask(self.generator, tuple(inputs_shape), self.dropout, dtype, xp)
                if self.dropout else None,
                _scaled_keep_mask(self.generator, (batch, self.units), self.recurrent_dropout,
                                  dtype, xp)
                if self.recurrent_dropout else None)
        return self._dropout_masks

    def reset_dropout_masks(self):
        """Forget the masks, so the next training step draws new ones (a new sequence)."""
        self._dropout_masks = None

    def _dropped(self, inputs, previous_output, training):
        """The step's input and the previous output as they enter the matrix products."""
        input_mask, recurrent_mask = self.dropout_masks(inputs.shape, training, inputs.xp,
                                                        inputs.dtype)
        if input_mask is not None:
            inputs = inputs * Tensor.wrap(input_mask)
        if recurrent_mask is not None:
            previous_output = previous_output * Tensor.wrap(recurrent_mask)
        return inputs, previous_output

    def _input_projection(self, inputs, bias):
        projection = F.matmul(inputs, self.kernel)
        return projection if bias is None else projection + bias

    # ----- config --------------------------------------------------------------

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
            'kernel_constraint': serialize_or_none(constraints, self.kernel_constraint),
            'recurrent_constraint': serialize_or_none(constraints, self.recurrent_constraint),
            'bias_constraint': serialize_or_none(constraints, self.bias_constraint),
            'dropout': self.dropout,
            'recurrent_dropout': self.recurrent_dropout,
        })
        return config


class _GatedCell(_Cell):
    """GRUCell and LSTMCell: a recurrent (gate) activation and Keras's ``implementation``."""

    def __init__(self, units, recurrent_activation='sigmoid', implementation=2, **kwargs):
        if implementation not in (1, 2):
            raise ValueError(f'{type(self).__name__}: implementation must be 1 or 2, got '
                             f'{implementation!r}')
        super().__init__(units, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.implementation = int(implementation)

    def get_config(self):
        config = super().get_config()
        config.update({
            'recurrent_activation': serialize_or_none(activations, self.recurrent_activation),
            'implementation': self.implementation,
        })
        return config


class SimpleRNNCell(_Cell):
    """One step of SimpleRNN: ``h_t = activation(x_t W + b + h_{t-1} U)``.

    Args:
        units: Size of the state and of the output.
        activation: Activation ('tanh'; None is linear).
        use_bias: Whether the cell has a bias.
        kernel_initializer, recurrent_initializer, bias_initializer:
            Initializers of the kernel (features, units), the
            recurrent_kernel (units, units) and the bias (units,).
        kernel_regularizer, recurrent_regularizer, bias_regularizer: Penalties.
        kernel_constraint, recurrent_constraint, bias_constraint: Projections
            applied after each optimizer update.
        dropout: Fraction of the input features dropped while training.
        recurrent_dropout: Fraction of the previous output's units dropped
            where it enters the recurrent product, while training.
    """

    def call(self, inputs, states, training=None):
        previous = states[0]
        inputs, recurrent_input = self._dropped(inputs, previous, training)
        output = self.activation(self._input_projection(inputs, self.bias) +
                                 F.matmul(recurrent_input, self.recurrent_kernel))
        return output, [output]


class GRUCell(_GatedCell):
    """One step of the GRU (Cho et al. 2014), gates z (update), r (reset), h (candidate).

    ``h_t = z * h_{t-1} + (1 - z) * candidate``; the interpolation uses the
    previous output without recurrent dropout.

    Args:
        units, activation, use_bias, initializers, regularizers,
            constraints, dropout, recurrent_dropout: As for
            :class:`SimpleRNNCell`; the kernels have ``3*units`` columns.
        recurrent_activation: Activation of the gates ('sigmoid'; Keras
            2.2.4's default was 'hard_sigmoid', which is also accepted).
        implementation: 1 or 2, accepted for compatibility; both compute the
            same thing here.
        reset_after: False (Keras 2's default): the reset gate scales the
            previous output before the recurrent product, and the bias has
            shape (3*units,). True: it scales the product (CuDNNGRU's and
            PyTorch's GRU), and the bias has shape (2, 3*units), an input row
            and a recurrent row.
    """

    gate_count = 3

    def __init__(self, units, reset_after=False, **kwargs):
        super().__init__(units, **kwargs)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs, states, training=None):
        previous, units = states[0], self.units
        inputs, recurrent_input = self._dropped(inputs, previous, training)
        input_bias = recurrent_bias = None
        if self.bias is not None:
            input_bias, recurrent_bias = (self.bias[0], self.bias[1]) if self.reset_after \
                else (self.bias, None)
        projection = self._input_projection(inputs, input_bias)
        if self.reset_after:
            recurrent = F.matmul(recurrent_input, self.recurrent_kernel)
            if recurrent_bias is not None:
                recurrent = recurrent + recurrent_bias
        else:
            recurrent = F.matmul(recurrent_input, self.recurrent_kernel[:, :2 * units])
        update = self.recurrent_activation(_columns(projection, 0, units) +
                                           _columns(recurrent, 0, units))
        reset = self.recurrent_activation(_columns(projection, 1, units) +
                                          _columns(recurrent, 1, units))
        if self.reset_after:
            recurrent_candidate = reset * _columns(recurrent, 2, units)
        else:
            recurrent_candidate = F.matmul(reset * recurrent_input,
                                           self.recurrent_kernel[:, 2 * units:])
        candidate = self.activation(_columns(projection, 2, units) + recurrent_candidate)
        output = update * previous + (1 - update) * candidate
        return output, [output]

    def get_config(self):
        config = super().get_config()
        config['reset_after'] = self.reset_after
        return config


class LSTMCell(_GatedCell):
    """One step of the LSTM (Hochreiter & Schmidhuber 1997), gates i, f, c, o.

    ``c_t = f * c_{t-1} + i * activation(.)``, ``h_t = o * activation(c_t)``;
    recurrent dropout acts on ``h_{t-1}`` in the recurrent product only.

    Args:
        units, activation, use_bias, initializers, regularizers,
            constraints, dropout, recurrent_dropout: As for
            :class:`SimpleRNNCell`; the kernels have ``4*units`` columns.
        recurrent_activation: Activation of the gates i, f, o ('sigmoid';
            'hard_sigmoid' and others accepted).
        unit_forget_bias: Start the forget gate's bias at 1 (the other blocks
            from ``bias_initializer``), as Jozefowicz et al. advise.
        implementation: 1 or 2, accepted for compatibility.

    States: ``[h, c]``, each (batch, units) (``state_size`` is
    ``[units, units]``).
    """

    gate_count = 4

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.state_size = [self.units, self.units]

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer

        def forget_gate_ones(shape, dtype=None):
            blocks = [self.bias_initializer((self.units,), dtype),
                      initializers.Ones()((self.units,), dtype),
                      self.bias_initializer((2 * self.units,), dtype)]
            return F.concat([b if isinstance(b, Tensor) else Tensor(b, dtype=dtype)
                             for b in blocks])

        return forget_gate_ones

    def call(self, inputs, states, training=None):
        previous, previous_cell, units = states[0], states[1], self.units
        inputs, recurrent_input = self._dropped(inputs, previous, training)
        gates = self._input_projection(inputs, self.bias) + \
            F.matmul(recurrent_input, self.recurrent_kernel)
        input_gate = self.recurrent_activation(_columns(gates, 0, units))
        forget_gate = self.recurrent_activation(_columns(gates, 1, units))
        cell = forget_gate * previous_cell + \
            input_gate * self.activation(_columns(gates, 2, units))
        output_gate = self.recurrent_activation(_columns(gates, 3, units))
        output = output_gate * self.activation(cell)
        return output, [output, cell]

    def get_config(self):
        config = super().get_config()
        config['unit_forget_bias'] = self.unit_forget_bias
        return config


def state_sizes(cell):
    """A cell's ``state_size`` as a list of ints."""
    size = cell.state_size
    return [int(s) for s in size] if isinstance(size, (list, tuple)) else [int(size)]


def output_size(cell):
    """A cell's ``output_size``, or its first state's size where it has none (Keras 2)."""
    size = getattr(cell, 'output_size', None)
    return int(size) if size is not None else state_sizes(cell)[0]


def call_cell(cell, inputs, states, training, constants=None):
    """``cell.call(inputs, states)``, with ``training`` where its ``call`` takes it, and
    ``constants`` (a list) when given (Keras 2's RNN ``constants``, for attention cells)."""
    kwargs = {'constants': constants} if constants is not None else {}
    if 'training' in _parameters(type(cell).call):
        kwargs['training'] = training
    return cell.call(inputs, states, **kwargs)


def takes_constants(cell):
    """Whether ``cell.call`` takes Keras 2's ``constants`` argument."""
    return 'constants' in _parameters(type(cell).call)


class StackedRNNCells(Layer):
    """Cells run one after the other within each step, as one cell.

    Each cell's output is the next one's input; the stack's output is the
    last cell's. The states are the cells' states in order, flattened
    (``[h1, c1, h2, c2]`` for two LSTM cells), and so is ``state_size``.

    Args:
        cells: A list of cells.
    """

    def __init__(self, cells, **kwargs):
        cells = list(cells)
        for cell in cells:
            if not callable(getattr(cell, 'call', None)) or not hasattr(cell, 'state_size'):
                raise ValueError(f'StackedRNNCells: every cell needs a call method and a '
                                 f'state_size attribute; {cell!r} does not have both')
        if not cells:
            raise ValueError('StackedRNNCells: cells must not be empty')
        super().__init__(**kwargs)
        self.cells = cells

    def _tracked_layers(self):
        return [cell for cell in self.cells if isinstance(cell, Layer)]

    @property
    def state_size(self):
        return [size for cell in self.cells for size in state_sizes(cell)]

    @property
    def output_size(self):
        return output_size(self.cells[-1])

    def build(self, input_shape):
        shape = tuple(input_shape)
        for cell in self.cells:
            if isinstance(cell, Layer):
                cell._build_once(shape)
            shape = (shape[0], output_size(cell))
        self.built = True

    def reset_dropout_masks(self):
        """Forget every cell's dropout masks (a new sequence begins)."""
        for cell in self.cells:
            if hasattr(cell, 'reset_dropout_masks'):
                cell.reset_dropout_masks()

    def call(self, inputs, states, training=None):
        states, new_states = list(states), []
        for cell in self.cells:
            count = len(state_sizes(cell))
            inputs, cell_states = call_cell(cell, inputs, states[:count], training)
            new_states += list(cell_states) if isinstance(cell_states, (list, tuple)) \
                else [cell_states]
            states = states[count:]
        return inputs, new_states

    def get_config(self):
        return {**super().get_config(), 'cells': [serialize(cell) for cell in self.cells]}

    @classmethod
    def from_config(cls, config_dict, custom_objects=None):
        config_dict = dict(config_dict)
        cells = [deserialize(cell, custom_objects) for cell in config_dict.pop('cells')]
        return cls(cells, **config_dict)
