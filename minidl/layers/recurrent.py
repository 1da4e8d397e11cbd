"""Recurrent layers (Keras 2): SimpleRNN, GRU and LSTM.

Shared arguments (every layer)::

    units: Size of the state and of the output.
    activation: Activation of the state (or candidate) ('tanh').
    use_bias: Whether the layer has a bias.
    kernel_initializer ('glorot_uniform'), recurrent_initializer
        ('orthogonal'), bias_initializer ('zeros'): Initializers of the
        kernel (features, G*units), the recurrent_kernel (units, G*units)
        and the bias.
    kernel_regularizer, recurrent_regularizer, bias_regularizer,
        activity_regularizer: Penalties.
    kernel_constraint, recurrent_constraint, bias_constraint: Projections
        applied after each optimizer update.
    dropout: Fraction of the input features dropped while training (one
        mask per sample, shared by every time step).
    recurrent_dropout: Must be 0 (not supported).
    return_sequences: Return every step's output (batch, time, units) rather
        than the last one (batch, units).
    return_state: Also return the final states: [output, h] ([output, h, c]
        for the LSTM).
    go_backwards: Process the sequence from its end; a returned sequence is
        in processing order (reversed), as in Keras.
    stateful: Must be False (not supported).
    unroll: Accepted and ignored.
    time_major: Inputs and returned sequences are (time, batch, ...).

Call arguments: ``inputs`` (batch, time, features), the time length may
vary between calls; ``training`` (enables dropout); ``initial_state``, the
list of initial states (each (batch, units), zeros by default), which may
be symbolic tensors in a functional model (an encoder's final states).
``layer([x, h0, c0])`` is the same as ``layer(x, initial_state=[h0, c0])``.
See :mod:`minidl.layers.base_rnn` for what is not supported.
"""

from minidl import functions as F
from minidl import initializers
from minidl.layers.base_rnn import _GatedRNN, _RNN
from minidl.tensor import Tensor


class SimpleRNN(_RNN):
    """Fully connected recurrence: ``h_t = activation(x_t W + h_{t-1} U + b)``.

    Arguments as listed in :mod:`minidl.layers.recurrent`; ``activation`` may
    be 'tanh', 'relu' or None ('linear'). Weights: kernel (features, units),
    recurrent_kernel (units, units), bias (units,).
    """

    def __init__(self, units, activation='tanh', use_bias=True,
                 kernel_initializer='glorot_uniform', recurrent_initializer='orthogonal',
                 bias_initializer='zeros', kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, time_major=False, **kwargs):
        super().__init__(
            units, activation, use_bias, kernel_initializer, recurrent_initializer,
            bias_initializer, kernel_regularizer, recurrent_regularizer, bias_regularizer,
            activity_regularizer, kernel_constraint, recurrent_constraint, bias_constraint,
            dropout, recurrent_dropout, return_sequences, return_state, go_backwards, stateful,
            unroll, time_major, supported_activations=('tanh', 'relu', 'linear'), **kwargs)

    def _recurrence(self, x, states):
        return F.simple_rnn(x, self.kernel, self.recurrent_kernel, self.bias,
                            initial_state=states and states[0], reverse=self.go_backwards,
                            activation=self._activation_name)


class GRU(_GatedRNN):
    """Gated recurrent unit (Cho et al. 2014), gates z (update), r (reset), h (candidate).

    Arguments as listed in :mod:`minidl.layers.recurrent`, plus:

    Args:
        recurrent_activation: Activation of the gates; 'sigmoid' (Keras
            2.3.1's default; 2.2.4's 'hard_sigmoid' is not supported).
        implementation: 1 or 2; accepted for compatibility, no effect.
        reset_after: False (Keras 2's default): the reset gate scales the
            previous state before the recurrent matrix product, and the bias
            has shape (3*units,). True applies it after the product (tf.keras
            2's default, cuDNN's and PyTorch's GRU, the fast one on a GPU);
            the bias then has shape (2, 3*units), an input row and a
            recurrent row.

    Weights: kernel (features, 3*units), recurrent_kernel (units, 3*units),
    bias.
    """

    gate_count = 3

    def __init__(self, units, activation='tanh', recurrent_activation='sigmoid', use_bias=True,
                 kernel_initializer='glorot_uniform', recurrent_initializer='orthogonal',
                 bias_initializer='zeros', kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, implementation=2, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 time_major=False, reset_after=False, **kwargs):
        super().__init__(
            units, recurrent_activation, implementation, activation=activation,
            use_bias=use_bias, kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
            kernel_constraint=kernel_constraint, recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint, dropout=dropout,
            recurrent_dropout=recurrent_dropout, return_sequences=return_sequences,
            return_state=return_state, go_backwards=go_backwards, stateful=stateful,
            unroll=unroll, time_major=time_major, **kwargs)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _recurrence(self, x, states):
        return F.gru(x, self.kernel, self.recurrent_kernel, self.bias,
                     initial_state=states and states[0], reverse=self.go_backwards,
                     reset_after=self.reset_after)

    def get_config(self):
        config = super().get_config()
        config['reset_after'] = self.reset_after
        return config


class LSTM(_GatedRNN):
    """Long short-term memory (Hochreiter & Schmidhuber 1997), gates i, f, c, o.

    Arguments as listed in :mod:`minidl.layers.recurrent`, plus:

    Args:
        recurrent_activation: Activation of the gates; 'sigmoid' (Keras
            2.3.1's default; 2.2.4's 'hard_sigmoid' is not supported).
        unit_forget_bias: Start the forget gate's bias at 1 (the other
            blocks from ``bias_initializer``), as Jozefowicz et al. advise.
        implementation: 1 or 2; accepted for compatibility, no effect.

    Weights: kernel (features, 4*units), recurrent_kernel (units, 4*units),
    bias (4*units,). States: h and c, each (batch, units).
    """

    gate_count = 4
    state_count = 2

    def __init__(self, units, activation='tanh', recurrent_activation='sigmoid', use_bias=True,
                 kernel_initializer='glorot_uniform', recurrent_initializer='orthogonal',
                 bias_initializer='zeros', unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, implementation=2, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, time_major=False,
                 unroll=False, **kwargs):
        super().__init__(
            units, recurrent_activation, implementation, activation=activation,
            use_bias=use_bias, kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
            kernel_constraint=kernel_constraint, recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint, dropout=dropout,
            recurrent_dropout=recurrent_dropout, return_sequences=return_sequences,
            return_state=return_state, go_backwards=go_backwards, stateful=stateful,
            unroll=unroll, time_major=time_major, **kwargs)
        self.unit_forget_bias = bool(unit_forget_bias)

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer

        def forget_gate_ones(shape, dtype=None):
            units, initializer = self.units, self.bias_initializer
            blocks = [initializer((units,), dtype), initializers.Ones()((units,), dtype),
                      initializer((2 * units,), dtype)]
            return F.concat([b if isinstance(b, Tensor) else Tensor(b, dtype=dtype)
                             for b in blocks])

        return forget_gate_ones

    def _recurrence(self, x, states):
        return F.lstm(x, self.kernel, self.recurrent_kernel, self.bias, initial_state=states,
                      reverse=self.go_backwards)

    def get_config(self):
        config = super().get_config()
        config['unit_forget_bias'] = self.unit_forget_bias
        return config
