"""Recurrent layers (Keras 2): SimpleRNN, GRU and LSTM.

Each is an :class:`~minidl.layers.RNN` of its cell (SimpleRNNCell, GRUCell,
LSTMCell), so it takes everything RNN takes (masks, ``initial_state``,
``stateful``, ``go_backwards``, ``return_state``) and its cell's arguments
(activations, initializers, ``dropout``, ``recurrent_dropout``, ...), with
Keras 2's names, defaults and weight layouts. The whole sequence runs
through one fused recurrence from ``minidl.functions`` (``simple_rnn``,
``gru``, ``lstm``: one input projection for all steps, a batched time loop,
an analytic backward), masks and both dropouts included, whenever the
activations are those the fused kernels compute (tanh, and the sigmoid for
the gates; SimpleRNN also relu and linear). Any other activation (Keras
2.2.4's 'hard_sigmoid', a function of the user's) runs the cell step by step
instead: the same numbers, slower.

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
    recurrent_dropout: Fraction of the previous output's units dropped where
        it enters the recurrent product while training (one mask per sample
        per sequence, Gal & Ghahramani 2016).
    return_sequences, return_state, go_backwards, stateful, unroll,
        time_major: As for :class:`~minidl.layers.RNN`.
"""

from minidl import activations, regularizers
from minidl.functions.gru import gru
from minidl.functions.lstm import lstm
from minidl.functions.rnn import simple_rnn
from minidl.layers.rnn import RNN
from minidl.layers.rnn_cells import GRUCell, LSTMCell, SimpleRNNCell
from minidl.tensor import Tensor

# Arguments of the RNN layer itself; the others configure the cell.
_RNN_ARGUMENTS = ('return_sequences', 'return_state', 'go_backwards', 'stateful', 'unroll',
                  'time_major')


class _FusedRNN(RNN):
    """An RNN of one of minidl's cells, configured by the cell's arguments, with a fused loop.

    Subclasses set ``cell_class`` and ``fused_activations`` (names of the
    ``activation`` values the fused function computes) and define
    :meth:`_fused` to call it.
    """

    cell_class = None
    fused_activations = ('tanh',)

    def __init__(self, cell_arguments, rnn_arguments, activity_regularizer=None, **kwargs):
        cell = self.cell_class(**cell_arguments)
        super().__init__(cell, **rnn_arguments, **kwargs)
        cell.dtype = self.dtype  # checked by the layer, whose name the error gives
        cell._dtype_policy = self.dtype_policy  # a mixed one too: the cell's weights are cast
        # Named after the layer, so that the names of its weights and of its dropout
        # generator (saved with the model) are the same wherever the layer is rebuilt.
        cell.name = f'{self.name}_cell'
        self.activity_regularizer = regularizers.get(activity_regularizer)

    def __getattr__(self, name):
        # Keras 2 reads the cell's settings and weights on the layer (lstm.units,
        # lstm.kernel); only reached for names the layer itself does not have.
        cell = self.__dict__.get('cell')
        if cell is not None and not name.startswith('_') and hasattr(cell, name):
            return getattr(cell, name)
        raise AttributeError(f'{type(self).__name__!r} object has no attribute {name!r}')

    def fusable(self):
        """Whether the fused recurrence computes this layer's activations."""
        return (_named(self.cell.activation, self.fused_activations) is not None
                and _named(getattr(self.cell, 'recurrent_activation', activations.sigmoid),
                           ('sigmoid',)) is not None)

    def _recurrence(self, x, states, mask, training):
        if not self.fusable():
            return super()._recurrence(x, states, mask, training)
        input_mask, recurrent_mask = self.cell.dropout_masks(
            (x.shape[0], x.shape[2]), training, x.xp, x.dtype)
        if input_mask is not None:
            # One mask per sample, the same at every step.
            x = x * Tensor.wrap(input_mask[:, None, :])
        outputs, *final_states = self._fused(x, states, mask, recurrent_mask)
        return outputs, final_states

    def _fused_bias(self):
        """The bias the fused function takes (the cell's; the CuDNN layers combine theirs)."""
        return self.cell.bias

    def get_config(self):
        config = self.cell.get_config()
        for name in ('name', 'trainable', 'dtype'):
            config.pop(name, None)
        rnn_config = super().get_config()
        rnn_config.pop('cell')
        config.update(rnn_config)
        config['activity_regularizer'] = regularizers.serialize(self.activity_regularizer) \
            if self.activity_regularizer is not None else None
        return config

    @classmethod
    def from_config(cls, config_dict, custom_objects=None):
        return cls(**config_dict)


def _named(activation, names):
    """The name of ``activation`` if it is minidl's function of one of ``names``, else None."""
    name = activations.serialize(activation)
    # By identity: a function of the user's that happens to be called 'tanh' is not ours.
    return name if name in names and activations.get(name) is activation else None


def _split(arguments):
    """A constructor's ``locals()``, as (cell arguments, RNN arguments)."""
    cell = {key: value for key, value in arguments.items()
            if key not in ('self', 'kwargs', '__class__', 'activity_regularizer')}
    rnn = {key: cell.pop(key) for key in _RNN_ARGUMENTS}
    return cell, rnn


class SimpleRNN(_FusedRNN):
    """Fully connected recurrence: ``h_t = activation(x_t W + h_{t-1} U + b)``.

    Arguments as listed in :mod:`minidl.layers.recurrent`; 'tanh', 'relu' and
    None ('linear') run fused. Weights: kernel (features, units),
    recurrent_kernel (units, units), bias (units,).
    """

    cell_class = SimpleRNNCell
    fused_activations = ('tanh', 'relu', 'linear')

    def __init__(self, units, activation='tanh', use_bias=True,
                 kernel_initializer='glorot_uniform', recurrent_initializer='orthogonal',
                 bias_initializer='zeros', kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, time_major=False, **kwargs):
        super().__init__(*_split(locals()), activity_regularizer, **kwargs)

    def _fused(self, x, states, mask, recurrent_mask):
        cell = self.cell
        return simple_rnn(x, cell.kernel, cell.recurrent_kernel, cell.bias,
                          initial_state=states[0], mask=mask,
                          activation=_named(cell.activation, self.fused_activations),
                          recurrent_dropout_mask=recurrent_mask)


class GRU(_FusedRNN):
    """Gated recurrent unit (Cho et al. 2014), gates z (update), r (reset), h (candidate).

    Arguments as listed in :mod:`minidl.layers.recurrent`, plus:

    Args:
        recurrent_activation: Activation of the gates ('sigmoid', Keras
            2.3.1's default; 2.2.4's 'hard_sigmoid' runs step by step).
        implementation: 1 or 2; accepted for compatibility, no effect.
        reset_after: False (Keras 2's default): the reset gate scales the
            previous state before the recurrent matrix product, and the bias
            has shape (3*units,). True applies it after the product (CuDNNGRU's
            and PyTorch's GRU); the bias then has shape (2, 3*units), an input
            row and a recurrent row.

    Weights: kernel (features, 3*units), recurrent_kernel (units, 3*units),
    bias.
    """

    cell_class = GRUCell

    def __init__(self, units, activation='tanh', recurrent_activation='sigmoid', use_bias=True,
                 kernel_initializer='glorot_uniform', recurrent_initializer='orthogonal',
                 bias_initializer='zeros', kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, implementation=2, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 time_major=False, reset_after=False, **kwargs):
        super().__init__(*_split(locals()), activity_regularizer, **kwargs)

    def _fused(self, x, states, mask, recurrent_mask):
        cell = self.cell
        return gru(x, cell.kernel, cell.recurrent_kernel, self._fused_bias(),
                   initial_state=states[0], reset_after=cell.reset_after, mask=mask,
                   recurrent_dropout_mask=recurrent_mask)


class LSTM(_FusedRNN):
    """Long short-term memory (Hochreiter & Schmidhuber 1997), gates i, f, c, o.

    Arguments as listed in :mod:`minidl.layers.recurrent`, plus:

    Args:
        recurrent_activation: Activation of the gates ('sigmoid', Keras
            2.3.1's default; 2.2.4's 'hard_sigmoid' runs step by step).
        unit_forget_bias: Start the forget gate's bias at 1 (the other
            blocks from ``bias_initializer``), as Jozefowicz et al. advise.
        implementation: 1 or 2; accepted for compatibility, no effect.

    Weights: kernel (features, 4*units), recurrent_kernel (units, 4*units),
    bias (4*units,). States: h and c, each (batch, units).
    """

    cell_class = LSTMCell

    def __init__(self, units, activation='tanh', recurrent_activation='sigmoid', use_bias=True,
                 kernel_initializer='glorot_uniform', recurrent_initializer='orthogonal',
                 bias_initializer='zeros', unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, implementation=2, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, time_major=False,
                 unroll=False, **kwargs):
        super().__init__(*_split(locals()), activity_regularizer, **kwargs)

    def _fused(self, x, states, mask, recurrent_mask):
        cell = self.cell
        return lstm(x, cell.kernel, cell.recurrent_kernel, self._fused_bias(),
                    initial_state=states, mask=mask, recurrent_dropout_mask=recurrent_mask)
