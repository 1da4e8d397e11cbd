"""Keras 2's CuDNNGRU and CuDNNLSTM, as minidl's fused GRU and LSTM.

Keras 2 offers them as the fast layers of NVIDIA GPUs, with fixed
activations (tanh, sigmoid gates), no dropout and no masks, and with cuDNN's
biases: an input bias and a recurrent bias per gate block, stored one after
the other in a bias of ``2*G*units`` entries. Here they are the GRU and LSTM
layers with that bias layout (so weights, parameter counts and HDF5 files
are Keras 2's), on any device: the LSTM adds its two biases before the fused
recurrence, and CuDNNGRU is ``GRU(reset_after=True)``, whose two bias rows
are exactly cuDNN's.

The kernels are Keras 2's CuDNN layout too: Keras hands each gate's block of
the kernel (features, units) to cuDNN flattened in C order, and cuDNN reads
that as its (units, features) matrix W of ``W x``. So the block equals
``W.reshape(features, units)``, not the plain layers' ``W.T``, and a recurrent
block is ``W_hh`` itself, not its transpose. ``_plain_kernels`` turns them
into the plain layers' kernels before the fused recurrence; loading moves
weights between the two layouts (``minidl/saving/rnn_weights.py``) as Keras
2's ``preprocess_weights_for_loading`` does.
"""

from minidl import functions as F
from minidl import initializers
from minidl.functions import gru, lstm
from minidl.layers.base import Layer
from minidl.layers.recurrent import GRU, LSTM
from minidl.layers.rnn_cells import GRUCell, LSTMCell
from minidl.tensor import Tensor

# What Keras 2's CuDNN layers take beyond the plain layers' arguments they share.
_FIXED = {'activation': 'tanh', 'recurrent_activation': 'sigmoid', 'use_bias': True,
          'dropout': 0.0, 'recurrent_dropout': 0.0, 'implementation': 2}


class _CuDNNGRUCell(GRUCell):
    """A reset-after GRU cell whose bias (6*units,) is cuDNN's input then recurrent bias.

    The layer always runs fused (its activations are fixed), so the cell only
    holds the weights; it has no step of its own.
    """

    def _bias_shape(self):
        return (6 * self.units,)

    def call(self, inputs, states, training=None):
        raise NotImplementedError('CuDNNGRU runs as a whole sequence; use GRUCell for steps')


class _CuDNNLSTMCell(LSTMCell):
    """An LSTM cell whose bias (8*units,) is cuDNN's input then recurrent bias (weights only,
    as :class:`_CuDNNGRUCell`)."""

    def _bias_shape(self):
        return (8 * self.units,)

    def call(self, inputs, states, training=None):
        raise NotImplementedError('CuDNNLSTM runs as a whole sequence; use LSTMCell for steps')

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer

        def recurrent_forget_gate_ones(shape, dtype=None):
            # Keras 2's layout: the recurrent bias's forget block starts at 1.
            blocks = [self.bias_initializer((5 * self.units,), dtype),
                      initializers.Ones()((self.units,), dtype),
                      self.bias_initializer((2 * self.units,), dtype)]
            return F.concat([b if isinstance(b, Tensor) else Tensor(b, dtype=dtype)
                             for b in blocks])

        return recurrent_forget_gate_ones


class CuDNNGRU(GRU):
    """Keras 2's CuDNNGRU: a GRU with the reset gate after the recurrent product.

    Args:
        units: Size of the state and of the output.
        kernel_initializer, recurrent_initializer, bias_initializer,
            kernel_regularizer, recurrent_regularizer, bias_regularizer,
            activity_regularizer, kernel_constraint, recurrent_constraint,
            bias_constraint: As for :class:`~minidl.layers.GRU`.
        return_sequences, return_state, go_backwards, stateful: As for
            :class:`~minidl.layers.RNN`.

    Weights: kernel (features, 3*units), recurrent_kernel (units, 3*units),
    bias (6*units,): the input bias, then the recurrent bias.
    """

    cell_class = _CuDNNGRUCell
    compute_mask = Layer.compute_mask  # refuses masks, as Keras 2's: cuDNN's kernel takes none
    supports_masking = False

    def __init__(self, units, kernel_initializer='glorot_uniform',
                 recurrent_initializer='orthogonal', bias_initializer='zeros',
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, **kwargs):
        super().__init__(
            units, kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
            kernel_constraint=kernel_constraint, recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint, return_sequences=return_sequences,
            return_state=return_state, go_backwards=go_backwards, stateful=stateful,
            reset_after=True, **{**_FIXED, **kwargs})

    def _fused_bias(self):
        return F.reshape(self.cell.bias, (2, 3 * self.units))

    def _fused(self, x, states, mask, recurrent_mask):
        kernel, recurrent_kernel = _plain_kernels(self.cell, 3)
        return gru(x, kernel, recurrent_kernel, self._fused_bias(), initial_state=states[0],
                   reset_after=True, mask=mask, recurrent_dropout_mask=recurrent_mask)

    def get_config(self):
        return _cudnn_config(super().get_config(), ('reset_after', 'unroll', 'time_major'))


class CuDNNLSTM(LSTM):
    """Keras 2's CuDNNLSTM: an LSTM with cuDNN's two biases.

    Args:
        units: Size of the state and of the output.
        kernel_initializer, recurrent_initializer, bias_initializer,
            unit_forget_bias, kernel_regularizer, recurrent_regularizer,
            bias_regularizer, activity_regularizer, kernel_constraint,
            recurrent_constraint, bias_constraint: As for
            :class:`~minidl.layers.LSTM`; ``unit_forget_bias`` starts the
            recurrent bias's forget block at 1.
        return_sequences, return_state, go_backwards, stateful: As for
            :class:`~minidl.layers.RNN`.

    Weights: kernel (features, 4*units), recurrent_kernel (units, 4*units),
    bias (8*units,): the input bias, then the recurrent bias.
    """

    cell_class = _CuDNNLSTMCell
    compute_mask = Layer.compute_mask  # refuses masks, as Keras 2's: cuDNN's kernel takes none
    supports_masking = False

    def __init__(self, units, kernel_initializer='glorot_uniform',
                 recurrent_initializer='orthogonal', bias_initializer='zeros',
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, **kwargs):
        super().__init__(
            units, kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
            unit_forget_bias=unit_forget_bias, kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint,
            return_sequences=return_sequences, return_state=return_state,
            go_backwards=go_backwards, stateful=stateful, **{**_FIXED, **kwargs})

    def _fused_bias(self):
        units = 4 * self.units
        return self.cell.bias[:units] + self.cell.bias[units:]

    def _fused(self, x, states, mask, recurrent_mask):
        kernel, recurrent_kernel = _plain_kernels(self.cell, 4)
        return lstm(x, kernel, recurrent_kernel, self._fused_bias(), initial_state=states,
                    mask=mask, recurrent_dropout_mask=recurrent_mask)

    def get_config(self):
        return _cudnn_config(super().get_config(), ('unroll', 'time_major'))


def _plain_kernels(cell, gates):
    """The plain layers' (kernel, recurrent_kernel) of a CuDNN cell's weights (differentiable).

    Each gate block of the kernel, read in C order as cuDNN reads it, is the
    (units, features) matrix W; the plain kernel's block is W.T. Each
    recurrent block is W_hh; the plain block is its transpose.
    """
    units, features = cell.units, cell.kernel.shape[0]
    kernel = F.concat([F.transpose(F.reshape(block, (units, features)), (1, 0))
                       for block in F.split(cell.kernel, gates, axis=1)], axis=1)
    recurrent = F.concat([F.transpose(block, (1, 0))
                          for block in F.split(cell.recurrent_kernel, gates, axis=1)], axis=1)
    return kernel, recurrent


def _cudnn_config(config, extra):
    """Keras 2's CuDNN configs: the arguments the layers take (no activations, dropout)."""
    for name in tuple(_FIXED) + extra:
        config.pop(name, None)
    return config
