"""Long short-term memory over a whole sequence, in Keras 2's weight layout.

Gate blocks are in Keras order i, f, c, o; the recurrent activation is the
sigmoid and the activation tanh::

    i, f, g, o = sigmoid(.), sigmoid(.), tanh(.), sigmoid(.)   of  x_t W + h_{t-1} U + b
    c_t = f * c_{t-1} + i * g
    h_t = o * tanh(c_t)

The time loop, layouts and the one-``exp`` gate evaluation are described in
``rnn.py``.
"""

import numpy as np

from minidl.compute.products import StepProduct
from minidl.functions.rnn import _Recurrence, by_step
from minidl.functions.rnn_arguments import (
    bidirectional_arguments, check_arguments, recurrence, recurrent_options)


class LSTM(_Recurrence):
    """The LSTM recurrence; outputs ``(outputs, h_last, c_last)`` (those of each direction)."""

    block_scales = (-1, -1, -2, -1)
    state_count = 2
    vendor_cell = 'lstm'

    def _run(self, gates, recurrent_kernels, biases, states):
        xp = self.xp
        hidden = self._state_buffer(gates, states[0])
        cells = self._state_buffer(gates, states[1])
        # Backward needs tanh(c_t); without it, tanh(c_t) goes where h_t = o * tanh(c_t) goes.
        tanh_cells = xp.empty_like(hidden[:, 1:]) if any(self.needs_input_grad) else hidden[:, 1:]
        blocks = gates.reshape(gates.shape[:3] + (4, -1))
        self.recurrent_kernels = recurrent_kernels
        recurrent_product = StepProduct(recurrent_kernels * self.scale, gates.shape[2], xp)
        recurrent = xp.empty_like(gates[:, 0])
        product = xp.empty_like(hidden[:, 0])
        dropout = self.dropout
        dropped = None if dropout is None else xp.empty_like(product)
        multiply, tanh = xp.multiply, xp.tanh
        steps = by_step(gates, *(blocks[..., k, :] for k in range(4)), hidden[:, :-1],
                        hidden[:, 1:], cells[:, :-1], cells[:, 1:], tanh_cells, self.invalid)
        with np.errstate(over='ignore'):  # exp overflows to inf for saturated gates: exact 0
            for step, i, f, g, o, h, h_next, c, c_next, tanh_c, invalid in steps:
                if dropout is None:
                    recurrent_product(h, recurrent)
                else:
                    recurrent_product(multiply(h, dropout, out=dropped), recurrent)
                step += recurrent
                self._sigmoid_(step)
                g *= 2  # tanh(z) = 2 sigmoid(2z) - 1
                g -= 1
                multiply(f, c, out=c_next)
                multiply(i, g, out=product)
                c_next += product
                tanh(c_next, out=tanh_c)
                multiply(o, tanh_c, out=h_next)
                if invalid is not None:  # a masked step carries the states over
                    xp.copyto(h_next, h, where=invalid)
                    xp.copyto(c_next, c, where=invalid)
        self.activations, self.hidden = blocks, hidden
        self.cells, self.tanh_cells = cells, tanh_cells
        return hidden, (cells[:, -1],)

    def _backprop(self, grad_hidden, grad_finals):
        xp = self.xp
        blocks, tanh_cells = self.activations, self.tanh_cells
        i, f, g, o = (blocks[..., k, :] for k in range(4))
        # What does not depend on the recurrence, for all steps at once: the gates'
        # pre-activation gradients are factors * dc (i, f, g) and factors * dh (o),
        # with dc = dh * o_factor + (dc_{t+1} f_{t+1}).
        factors = xp.subtract(1, blocks)
        factors *= blocks  # sigmoid' = s (1 - s)
        xp.multiply(g, g, out=factors[..., 2, :])
        xp.subtract(1, factors[..., 2, :], out=factors[..., 2, :])  # tanh' = 1 - g^2
        factors[..., 0, :] *= g
        factors[..., 1, :] *= self.cells[:, :-1]
        factors[..., 2, :] *= i
        factors[..., 3, :] *= tanh_cells
        o_factor = tanh_cells * tanh_cells
        xp.subtract(1, o_factor, out=o_factor)
        o_factor *= o
        # A masked step has no gate gradients and passes dc on unchanged (f = 1).
        self._zero_invalid(factors, o_factor)
        f = self._one_where_invalid(f)

        grad_h, grad_c = grad_finals
        dc = xp.empty_like(grad_c)
        dc_per_gate = dc[:, :, None]
        grad_gates = factors.reshape(factors.shape[:3] + (-1,))
        recurrent_t = StepProduct(self.recurrent_kernels.transpose(0, 2, 1), dc.shape[1], xp)
        multiply, dropout = xp.multiply, self.dropout
        # Each step's factors are used once: they become its gradients in place.
        steps = by_step(grad_hidden, o_factor, f, factors[..., :3, :], factors[..., 3, :],
                        grad_gates, self.invalid, reverse=True)
        for dh, o_factor_t, f_t, cell_gates, output_gate, grad_step, invalid in steps:
            dh += grad_h
            multiply(dh, o_factor_t, out=dc)
            dc += grad_c
            cell_gates *= dc_per_gate
            output_gate *= dh
            multiply(dc, f_t, out=grad_c)
            recurrent_t(grad_step, grad_h)
            if dropout is not None:
                grad_h *= dropout
            if invalid is not None:
                xp.copyto(grad_h, dh, where=invalid)
        grad_recurrent = None
        if self._needs_grad(1):
            grad_recurrent = self._weight_gradient(self._recurrent_inputs(self.hidden),
                                                   grad_gates)
        return grad_gates, grad_recurrent, None, (grad_h, grad_c)


def lstm(x, kernel, recurrent_kernel, bias=None, initial_state=None, reverse=False,
         mask=None, recurrent_dropout_mask=None):
    """Long short-term memory over a whole sequence (Keras 2 ``LSTM`` weights).

    Args:
        x: Input sequence, shape ``(batch, steps, features)``.
        kernel: Input weights ``(features, 4 * units)``, gate blocks i, f, c, o.
        recurrent_kernel: Recurrent weights ``(units, 4 * units)``.
        bias: Optional bias ``(4 * units,)``.
        initial_state: None (zeros) or a pair ``(h0, c0)``, each ``(batch, units)``.
        reverse: Read the sequence from its last step to its first. ``outputs``
            stay aligned with the input steps; the final states are those after step 0.
        mask: Optional ``(batch, steps)`` array or Tensor (bool or 0/1, not
            differentiated), True where a step is valid. At a masked step the
            states ``h`` and ``c`` are carried over unchanged and ``h`` is also
            the output there; the final states are those after the last valid
            step read (with ``reverse``, the first valid step of the input).
        recurrent_dropout_mask: Optional ``(batch, units)`` array or Tensor of
            0 and ``1 / (1 - rate)``, the same at every step, multiplied onto
            ``h_{t-1}`` where it enters the recurrent product only.

    Returns:
        ``(outputs, h_last, c_last)``: hidden states ``(batch, steps, units)``
        and the final hidden and cell states ``(batch, units)``.
    """
    if initial_state is None:
        states = ()
    elif isinstance(initial_state, (tuple, list)) and len(initial_state) == 2:
        states = tuple(initial_state)
    else:
        raise ValueError('lstm: initial_state must be None or a pair (h0, c0)')
    weights = [(kernel, recurrent_kernel, bias)]
    check_arguments('lstm', x, weights, states, 4, lambda u: (4 * u,))
    options = recurrent_options('lstm', x, weights, mask, recurrent_dropout_mask)
    function = LSTM((bool(reverse),), bias is not None, bool(states), **options)
    return recurrence(function, x, weights, states)


def bidirectional_lstm(x, forward_weights, backward_weights, initial_state=None, mask=None,
                       recurrent_dropout_mask=None):
    """Both directions of a bidirectional LSTM in one time loop (Keras 2 ``LSTM`` weights).

    Equal to ``lstm`` run forwards with ``forward_weights`` and with
    ``reverse=True`` with ``backward_weights``, the two outputs concatenated
    on the last axis, but each step is one batched matrix product and one
    call of each elementwise operation for both directions.

    Args:
        x: Input sequence, shape ``(batch, steps, features)``.
        forward_weights: ``(kernel, recurrent_kernel, bias)`` of the forward
            direction, as in :func:`lstm`; bias may be None.
        backward_weights: The same for the backward direction (with the same
            units, and a bias if and only if the forward one has one).
        initial_state: None (zeros) or ``(h0, c0, h0_backward, c0_backward)``,
            each ``(batch, units)``.
        mask: Optional ``(batch, steps)`` step mask, as in :func:`lstm`. The
            backward direction reads it reversed, so with post-padding it
            starts at each sample's last valid step.
        recurrent_dropout_mask: None or ``(forward_mask, backward_mask)``, each
            ``(batch, units)`` as in :func:`lstm` (or None: no dropout there).

    Returns:
        ``(outputs, h_last, c_last, h_last_backward, c_last_backward)``:
        ``outputs (batch, steps, 2 * units)`` holds the forward hidden states
        then the backward ones, both aligned with the input steps; the
        backward direction's final states are those after step 0 (its last
        valid step read, when masked).
    """
    name = 'bidirectional_lstm'
    weights, states = bidirectional_arguments(
        name, forward_weights, backward_weights, initial_state,
        ('h0', 'c0', 'h0_backward', 'c0_backward'))
    check_arguments(name, x, weights, states, 4, lambda u: (4 * u,))
    options = recurrent_options(name, x, weights, mask, recurrent_dropout_mask)
    function = LSTM((False, True), weights[0][2] is not None, bool(states), **options)
    return recurrence(function, x, weights, states)
