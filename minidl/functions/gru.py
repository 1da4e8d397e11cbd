"""Gated recurrent unit over a whole sequence, in Keras 2's weight layout.

Gate blocks are in Keras order z (update), r (reset), h (candidate)::

    z = sigmoid(x_t W_z + h_{t-1} U_z + b_z)        r likewise
    reset_after=True:   n = tanh(x_t W_h + b_h + r * (h_{t-1} U_h + b'_h))
    reset_after=False:  n = tanh(x_t W_h + (r * h_{t-1}) U_h + b_h)
    h_t = z * h_{t-1} + (1 - z) * n

With ``reset_after=True`` (PyTorch's and cuDNN's formulation) the bias has two
rows, input and recurrent; with ``reset_after=False`` it is one vector. The time
loop and layouts are described in ``rnn.py``.
"""

import numpy as np

from minidl.compute.products import StepProduct
from minidl.functions.rnn import _Recurrence, by_step
from minidl.functions.rnn_arguments import (
    bidirectional_arguments, check_arguments, recurrence, recurrent_options)


class _GRU(_Recurrence):
    """What both GRU variants share: the gates' layout and the state update."""

    block_scales = (-1, -1, 1)  # sigmoid z and r through one exp; the candidate unscaled

    def _update(self, h, h_next, z, candidate):
        """``h_t = z * h_{t-1} + (1 - z) * n``, as ``n + z * (h_{t-1} - n)``."""
        state = self.xp.subtract(h, candidate, out=h_next)
        state *= z
        state += candidate

    def _update_factors(self, update):
        """``d h_t / d z_pre`` (written to ``update``) and ``d h_t / d n_pre`` (returned),
        for all steps at once."""
        blocks, previous = self.activations, self.hidden[:, :-1]
        z, candidate = blocks[..., 0, :], blocks[..., 2, :]
        self.xp.subtract(previous, candidate, out=update)
        update *= z
        keep = 1 - z
        update *= keep  # (h_{t-1} - n) z (1 - z)
        candidate_factor = candidate * candidate
        self.xp.subtract(1, candidate_factor, out=candidate_factor)
        candidate_factor *= keep  # (1 - z) (1 - n^2)
        return candidate_factor


class GRUResetAfter(_GRU):
    """GRU whose reset gate scales the recurrent projection (``reset_after=True``)."""

    vendor_cell = 'gru'

    def _run(self, gates, recurrent_kernels, biases, states):
        xp = self.xp
        hidden = self._state_buffer(gates, states[0])
        blocks = gates.reshape(gates.shape[:3] + (3, -1))
        # h_{t-1} U + b_rec for every step, kept: backward needs its candidate block.
        recurrent = xp.empty_like(gates)
        recurrent_blocks = recurrent.reshape(blocks.shape)
        self.recurrent_kernels = recurrent_kernels
        recurrent_product = StepProduct(recurrent_kernels * self.scale, gates.shape[2], xp)
        recurrent_bias = None if biases is None else biases[:, None, 1] * self.scale
        width = 2 * recurrent_kernels.shape[1]
        product = xp.empty_like(hidden[:, 0])
        dropout = self.dropout
        dropped = None if dropout is None else xp.empty_like(product)
        steps = by_step(gates, recurrent, *(blocks[..., k, :] for k in range(3)),
                        recurrent_blocks[..., 2, :], hidden[:, :-1], hidden[:, 1:], self.invalid)
        with np.errstate(over='ignore'):  # exp overflows to inf for saturated gates: exact 0
            for (step, recurrent_step, z, r, candidate, recurrent_candidate, h, h_next,
                 invalid) in steps:
                if dropout is None:
                    recurrent_product(h, recurrent_step)
                else:
                    recurrent_product(xp.multiply(h, dropout, out=dropped), recurrent_step)
                if recurrent_bias is not None:
                    recurrent_step += recurrent_bias
                update_reset = step[..., :width]
                update_reset += recurrent_step[..., :width]
                self._sigmoid_(update_reset)
                xp.multiply(r, recurrent_candidate, out=product)
                candidate += product
                xp.tanh(candidate, out=candidate)
                self._update(h, h_next, z, candidate)
                if invalid is not None:  # a masked step carries the state over
                    xp.copyto(h_next, h, where=invalid)
        self.activations, self.hidden, self.recurrent = blocks, hidden, recurrent_blocks
        return hidden, ()

    def _backprop(self, grad_hidden, grad_finals):
        xp, blocks = self.xp, self.activations
        z, r = blocks[..., 0, :], blocks[..., 1, :]
        # Gradients of the recurrent pre-activations (h U + b_rec) per unit of dh_t,
        # for all steps at once.
        factors = xp.empty_like(blocks)
        candidate_factor = self._update_factors(factors[..., 0, :])
        xp.multiply(candidate_factor, self.recurrent[..., 2, :], out=factors[..., 1, :])
        factors[..., 1, :] *= r
        factors[..., 1, :] *= 1 - r
        xp.multiply(candidate_factor, r, out=factors[..., 2, :])
        # A masked step has no gate gradients and passes dh on unchanged (z = 1).
        self._zero_invalid(factors, candidate_factor)
        z = self._one_where_invalid(z)

        carry = grad_finals[0]
        product = xp.empty_like(carry)
        recurrent_t = StepProduct(self.recurrent_kernels.transpose(0, 2, 1), carry.shape[1], xp)
        dropout = self.dropout
        steps = by_step(grad_hidden, factors, factors.reshape(factors.shape[:3] + (-1,)), z,
                        reverse=True)
        for dh, step_factors, grad_step, z_t in steps:
            dh += carry
            step_factors *= dh[:, :, None]  # used once: the step's gradients, in place
            recurrent_t(grad_step, carry)
            if dropout is not None:
                carry *= dropout
            xp.multiply(dh, z_t, out=product)
            carry += product
        grad_gates = factors.reshape(factors.shape[:3] + (-1,))
        grad_recurrent = grad_recurrent_bias = None
        if self._needs_grad(1):
            grad_recurrent = self._weight_gradient(self._recurrent_inputs(self.hidden),
                                                   grad_gates)
        if self.has_bias and self._needs_grad(2):
            grad_recurrent_bias = grad_gates.sum(axis=(1, 2))
        # The input side differs only in the candidate block: dn_pre = dh (1 - z)(1 - n^2).
        xp.multiply(grad_hidden, candidate_factor, out=factors[..., 2, :])
        return grad_gates, grad_recurrent, grad_recurrent_bias, (carry,)


class GRUResetBefore(_GRU):
    """GRU whose reset gate scales the previous state (``reset_after=False``)."""

    def _run(self, gates, recurrent_kernels, biases, states):
        xp = self.xp
        hidden = self._state_buffer(gates, states[0])
        blocks = gates.reshape(gates.shape[:3] + (3, -1))
        width = 2 * recurrent_kernels.shape[1]
        self.recurrent_kernels = recurrent_kernels
        rows = gates.shape[2]
        gate_product = StepProduct(recurrent_kernels[..., :width] * self.scale[:width], rows, xp)
        candidate_product = StepProduct(recurrent_kernels[..., width:], rows, xp)
        reset_hidden = xp.empty_like(hidden[:, 1:])  # r * h_{t-1}, kept for backward
        recurrent = xp.empty_like(gates[:, 0, :, :width])
        product = xp.empty_like(hidden[:, 0])
        dropout = self.dropout
        dropped = None if dropout is None else xp.empty_like(product)
        steps = by_step(gates, *(blocks[..., k, :] for k in range(3)), hidden[:, :-1],
                        hidden[:, 1:], reset_hidden, self.invalid)
        with np.errstate(over='ignore'):  # exp overflows to inf for saturated gates: exact 0
            for step, z, r, candidate, h, h_next, reset_h, invalid in steps:
                # Both recurrent products read the dropped state, the update the kept one.
                h_in = h if dropout is None else xp.multiply(h, dropout, out=dropped)
                gate_product(h_in, recurrent)
                update_reset = step[..., :width]
                update_reset += recurrent
                self._sigmoid_(update_reset)
                xp.multiply(r, h_in, out=reset_h)
                candidate_product(reset_h, product)
                candidate += product
                xp.tanh(candidate, out=candidate)
                self._update(h, h_next, z, candidate)
                if invalid is not None:  # a masked step carries the state over
                    xp.copyto(h_next, h, where=invalid)
        self.activations, self.hidden, self.reset_hidden = blocks, hidden, reset_hidden
        return hidden, ()

    def _backprop(self, grad_hidden, grad_finals):
        xp, blocks = self.xp, self.activations
        z, r = blocks[..., 0, :], blocks[..., 1, :]
        update_factor = xp.empty_like(z)
        candidate_factor = self._update_factors(update_factor)
        reset_factor = self._recurrent_inputs(self.hidden) * r
        reset_factor *= 1 - r  # h_{t-1} r (1 - r), h_{t-1} as the products read it
        # A masked step has no gate gradients and passes dh on unchanged (z = 1).
        self._zero_invalid(update_factor, candidate_factor)
        z = self._one_where_invalid(z)

        grad_blocks = xp.empty_like(blocks)
        carry = grad_finals[0]
        grad_reset_hidden, product = xp.empty_like(carry), xp.empty_like(carry)
        width = 2 * carry.shape[-1]
        rows = carry.shape[1]
        kernels_t = self.recurrent_kernels.transpose(0, 2, 1)
        gate_product_t = StepProduct(kernels_t[:, :width], rows, xp)
        candidate_product_t = StepProduct(kernels_t[:, width:], rows, xp)
        dropout = self.dropout
        steps = by_step(grad_hidden, candidate_factor, update_factor, reset_factor, r, z,
                        *(grad_blocks[..., k, :] for k in range(3)),
                        grad_blocks[..., :2, :].reshape(grad_blocks.shape[:3] + (width,)),
                        reverse=True)
        for (dh, candidate_t, update_t, reset_t, r_t, z_t, grad_update, grad_reset,
             grad_candidate, grad_update_reset) in steps:
            dh += carry
            xp.multiply(dh, candidate_t, out=grad_candidate)
            candidate_product_t(grad_candidate, grad_reset_hidden)
            xp.multiply(dh, update_t, out=grad_update)
            xp.multiply(grad_reset_hidden, reset_t, out=grad_reset)
            gate_product_t(grad_update_reset, carry)
            xp.multiply(grad_reset_hidden, r_t, out=product)
            carry += product
            if dropout is not None:
                carry *= dropout
            xp.multiply(dh, z_t, out=product)
            carry += product
        grad_gates = grad_blocks.reshape(grad_blocks.shape[:3] + (-1,))
        grad_recurrent = None
        if self._needs_grad(1):
            grad_recurrent = xp.concatenate(
                [self._weight_gradient(self._recurrent_inputs(self.hidden),
                                       grad_gates[..., :width]),
                 self._weight_gradient(self.reset_hidden, grad_gates[..., width:])], axis=2)
        return grad_gates, grad_recurrent, None, (carry,)


def gru(x, kernel, recurrent_kernel, bias=None, initial_state=None, reverse=False,
        reset_after=True, mask=None, recurrent_dropout_mask=None):
    """Gated recurrent unit over a whole sequence (Keras 2 ``GRU`` weights).

    Args:
        x: Input sequence, shape ``(batch, steps, features)``.
        kernel: Input weights ``(features, 3 * units)``, gate blocks z, r, h.
        recurrent_kernel: Recurrent weights ``(units, 3 * units)``.
        bias: Optional bias: ``(2, 3 * units)`` (input row, recurrent row) when
            ``reset_after``, else ``(3 * units,)``.
        initial_state: Optional initial state ``(batch, units)``; zeros if None.
        reverse: Read the sequence from its last step to its first. ``outputs``
            stay aligned with the input steps; ``h_last`` is the state after step 0.
        reset_after: Apply the reset gate after the recurrent matrix product
            (PyTorch's and cuDNN's GRU) rather than before it.
        mask: Optional ``(batch, steps)`` array or Tensor (bool or 0/1, not
            differentiated), True where a step is valid. At a masked step the
            state is carried over unchanged and is also the output there; the
            final state is the one after the last valid step read.
        recurrent_dropout_mask: Optional ``(batch, units)`` array or Tensor of
            0 and ``1 / (1 - rate)``, the same at every step, multiplied onto
            ``h_{t-1}`` where it enters the recurrent products (with
            ``reset_after=False`` both of them); the update
            ``z * h_{t-1} + (1 - z) * n`` uses the undropped state.

    Returns:
        ``(outputs, h_last)``: all states ``(batch, steps, units)`` and the final one.
    """
    states = () if initial_state is None else (initial_state,)
    bias_shape = (lambda u: (2, 3 * u)) if reset_after else (lambda u: (3 * u,))
    weights = [(kernel, recurrent_kernel, bias)]
    check_arguments('gru', x, weights, states, 3, bias_shape)
    options = recurrent_options('gru', x, weights, mask, recurrent_dropout_mask)
    variant = GRUResetAfter if reset_after else GRUResetBefore
    function = variant((bool(reverse),), bias is not None, bool(states), **options)
    return recurrence(function, x, weights, states)


def bidirectional_gru(x, forward_weights, backward_weights, initial_state=None,
                      reset_after=True, mask=None, recurrent_dropout_mask=None):
    """Both directions of a bidirectional GRU in one time loop (Keras 2 ``GRU`` weights).

    Equal to :func:`gru` run forwards with ``forward_weights`` and with
    ``reverse=True`` with ``backward_weights``, outputs concatenated on the last axis.

    Args:
        x: Input sequence, shape ``(batch, steps, features)``.
        forward_weights: ``(kernel, recurrent_kernel, bias)`` of the forward
            direction, as in :func:`gru`; bias may be None.
        backward_weights: The same for the backward direction.
        initial_state: None (zeros) or ``(h0, h0_backward)``, each ``(batch, units)``.
        reset_after: As in :func:`gru`, for both directions.
        mask: Optional ``(batch, steps)`` step mask, as in :func:`gru`; the
            backward direction reads it reversed.
        recurrent_dropout_mask: None or ``(forward_mask, backward_mask)``, each
            ``(batch, units)`` or None.

    Returns:
        ``(outputs, h_last, h_last_backward)``, ``outputs (batch, steps, 2 * units)``.
    """
    name = 'bidirectional_gru'
    weights, states = bidirectional_arguments(name, forward_weights, backward_weights,
                                              initial_state, ('h0', 'h0_backward'))
    bias_shape = (lambda u: (2, 3 * u)) if reset_after else (lambda u: (3 * u,))
    check_arguments(name, x, weights, states, 3, bias_shape)
    options = recurrent_options(name, x, weights, mask, recurrent_dropout_mask)
    variant = GRUResetAfter if reset_after else GRUResetBefore
    function = variant((False, True), weights[0][2] is not None, bool(states), **options)
    return recurrence(function, x, weights, states)
