"""Recurrent networks over whole sequences: the shared time loop and the simple RNN.

The LSTM (``lstm.py``), the GRU (``gru.py``) and the simple RNN below are
Functions of one mechanism, :class:`_Recurrence`. Sequences are batch-major,
``(N, T, F)`` as in Keras, and weights use Keras 2's layouts: a kernel
``(F, G*u)`` and a recurrent kernel ``(u, G*u)`` whose columns are ``G`` gate
blocks of ``u`` units.

For speed the input is copied once to time-major order ``(T, N, F)`` (reversed
in time when ``reverse=True``), so that every step reads and writes contiguous
``(N, ...)`` slices. All steps' input projections are one GEMM before the loop,
which then costs one recurrent GEMM per step plus a few in-place elementwise
operations. Backward runs the loop the other way with one GEMM per step for
the recurrent gradient, collecting every step's gate pre-activation gradients
in one ``(T, N, G*u)`` buffer, from which the kernel and input gradients are
one GEMM each. Hidden states live in a ``(T+1, N, u)`` buffer whose first slot
holds the initial state; the outputs are a batch-major view of it.

Sigmoid gates are evaluated as ``1 / (1 + exp(-z))`` over a whole row of gates
at once: the kernels' sigmoid columns are pre-multiplied by -1 (exactly), so a
single ``exp`` serves every gate. numpy's float32 ``exp`` is much faster than
its ``tanh``, and ``tanh(z) = 2 sigmoid(2z) - 1`` brings the LSTM's tanh gate
into the same pass with a factor of -2.
"""

import numpy as np

from minidl.tensor import Function


class _Recurrence(Function):
    """Forward and backward through time shared by the recurrent Functions.

    Inputs: ``x (N, T, F), kernel, recurrent_kernel[, bias][, *initial_states]``.
    Outputs: ``outputs (N, T, u), h_last (N, u)``, then any further final
    states of the cell (the LSTM's cell state).

    Subclasses set ``block_scales`` (the factor applied to each gate block's
    pre-activation before the loop: -1 for sigmoid, -2 for tanh via sigmoid,
    1 for blocks activated otherwise) and ``state_count``, and define::

        _run(gates, recurrent_kernel, bias, states) -> (hidden, finals)
        _backprop(grad_hidden, grad_finals)
            -> (grad_gates, grad_recurrent_kernel, grad_recurrent_bias, grad_states)

    ``gates`` is the time-major ``(T, N, G*u)`` input projection, scaled and
    with the input bias added; ``_run`` may overwrite it (with activations).
    ``hidden`` is the ``(T+1, N, u)`` buffer of states, ``finals`` a tuple of
    further final states. ``grad_gates`` holds the gradients of the unscaled
    pre-activations of the input projection, ``grad_recurrent_bias`` is None
    unless the bias has a separate recurrent row.
    """

    block_scales = (1,)
    state_count = 1

    def __init__(self, reverse, has_bias, has_state):
        self.reverse, self.has_bias, self.has_state = reverse, has_bias, has_state

    def forward(self, x, kernel, recurrent_kernel, *rest):
        xp = self.xp
        dtype = xp.result_type(x, kernel, recurrent_kernel, *rest)
        kernel = kernel.astype(dtype, copy=False)
        recurrent_kernel = recurrent_kernel.astype(dtype, copy=False)
        bias = rest[0].astype(dtype, copy=False) if self.has_bias else None
        batch, steps, features = x.shape
        units = recurrent_kernel.shape[0]
        if self.has_state:
            states = tuple(s.astype(dtype, copy=False) for s in rest[int(self.has_bias):])
        else:
            states = tuple(xp.zeros((batch, units), dtype) for _ in range(self.state_count))

        inputs = xp.ascontiguousarray(self._time_major(x), dtype=dtype)
        self.scale = xp.repeat(xp.asarray(self.block_scales, dtype), units)
        gates = inputs.reshape(steps * batch, features) @ (kernel * self.scale)
        if bias is not None:
            gates += (bias if bias.ndim == 1 else bias[0]) * self.scale
        hidden, finals = self._run(gates.reshape(steps, batch, -1), recurrent_kernel, bias, states)

        self.shape = inputs.shape
        self.sequence = inputs if self.needs_input_grad[1] else None
        self.kernel = kernel if self.needs_input_grad[0] else None
        return (self._batch_major(hidden[1:]), hidden[-1]) + finals

    def backward(self, grad_outputs, *grad_finals):
        grad_gates, grad_recurrent, grad_recurrent_bias, grad_states = self._backprop(
            self._time_major(grad_outputs), grad_finals)
        steps, batch, features = self.shape
        flat = grad_gates.reshape(steps * batch, -1)
        grad_x = grad_kernel = None
        if self.needs_input_grad[0]:
            grad_x = self._batch_major((flat @ self.kernel.T).reshape(steps, batch, features))
        if self.needs_input_grad[1]:
            grad_kernel = self.sequence.reshape(steps * batch, features).T @ flat
        grads = (grad_x, grad_kernel, grad_recurrent)
        if self.has_bias:
            grad_bias = flat.sum(axis=0) if self.needs_input_grad[3] else None
            if grad_bias is not None and grad_recurrent_bias is not None:
                grad_bias = self.xp.stack([grad_bias, grad_recurrent_bias])
            grads += (grad_bias,)
        return grads + (grad_states if self.has_state else ())

    def _time_major(self, array):
        """View of a batch-major ``(N, T, ...)`` array as ``(T, N, ...)`` in reading order."""
        array = array.swapaxes(0, 1)
        return array[::-1] if self.reverse else array

    def _batch_major(self, array):
        """Inverse of :meth:`_time_major`."""
        return (array[::-1] if self.reverse else array).swapaxes(0, 1)

    def _state_buffer(self, gates, initial):
        """A ``(T+1, N, u)`` buffer of states with ``initial`` in its first slot."""
        states = self.xp.empty((len(gates) + 1,) + initial.shape, gates.dtype)
        states[0] = initial
        return states

    def _sigmoid_(self, array):
        """In place ``1 / (1 + exp(array))``: the sigmoid of the negated (pre-scaled) input."""
        xp = self.xp
        xp.exp(array, out=array)
        array += 1
        xp.reciprocal(array, out=array)


class SimpleRNN(_Recurrence):
    """``h_t = activation(x_t kernel + h_{t-1} recurrent_kernel + bias)``."""

    def __init__(self, reverse, has_bias, has_state, activation):
        super().__init__(reverse, has_bias, has_state)
        self.activation = activation

    def _run(self, gates, recurrent_kernel, bias, states):
        xp = self.xp
        hidden = self._state_buffer(gates, states[0])
        recurrent = xp.empty_like(hidden[0])
        for t in range(len(gates)):
            xp.matmul(hidden[t], recurrent_kernel, out=recurrent)
            state = xp.add(gates[t], recurrent, out=hidden[t + 1])
            if self.activation == 'tanh':
                xp.tanh(state, out=state)
            elif self.activation == 'relu':
                xp.maximum(state, 0, out=state)
        self.hidden, self.recurrent_kernel = hidden, recurrent_kernel
        return hidden, ()

    def _backprop(self, grad_hidden, grad_finals):
        xp, hidden = self.xp, self.hidden
        states = hidden[1:]
        # The activation's derivative, from its output, for all steps at once.
        if self.activation == 'tanh':
            derivative = 1 - states * states
        elif self.activation == 'relu':
            derivative = (states > 0).astype(states.dtype)
        else:
            derivative = None
        grad_gates = xp.empty_like(states)
        carry = grad_finals[0].astype(states.dtype, copy=True)
        recurrent_t = self.recurrent_kernel.T
        for t in reversed(range(len(states))):
            step = xp.add(grad_hidden[t], carry, out=grad_gates[t])
            if derivative is not None:
                step *= derivative[t]
            xp.matmul(step, recurrent_t, out=carry)
        grad_recurrent = None
        if self.needs_input_grad[2]:
            grad_recurrent = steps_as_rows(hidden[:-1]).T @ steps_as_rows(grad_gates)
        return grad_gates, grad_recurrent, None, (carry,)


def steps_as_rows(array):
    """``(T, N, k)`` time-major buffer as a ``(T*N, k)`` matrix (a view)."""
    return array.reshape(-1, array.shape[-1])


def check_arguments(name, x, kernel, recurrent_kernel, bias, initial_states, gates, bias_shape):
    """Raise a clear error for inconsistent shapes or non-floating inputs.

    Args:
        name: The function's name, for messages.
        x, kernel, recurrent_kernel, bias: The arguments (bias may be None).
        initial_states: Tuple of initial-state arguments (may be empty).
        gates: Number of gate blocks in the kernels' columns.
        bias_shape: Callable from units to the expected bias shape.
    """
    named = [('x', x), ('kernel', kernel), ('recurrent_kernel', recurrent_kernel), ('bias', bias)]
    named += [(f'initial_state[{i}]', s) for i, s in enumerate(initial_states)]
    shapes = {}
    for label, value in named:
        if value is None:
            continue
        if not hasattr(value, 'shape'):
            value = np.asarray(value)
        if np.dtype(value.dtype).kind != 'f':
            raise TypeError(f'{name}: {label} must be floating, got dtype {value.dtype}')
        shapes[label] = tuple(value.shape)
    x_shape, k_shape, r_shape = shapes['x'], shapes['kernel'], shapes['recurrent_kernel']
    if len(x_shape) != 3 or x_shape[1] == 0:
        raise ValueError(f'{name}: x must have shape (batch, steps, features) with at least '
                         f'one step, got {x_shape}')
    if len(r_shape) != 2 or r_shape[1] != gates * r_shape[0]:
        raise ValueError(f'{name}: recurrent_kernel must have shape (units, {gates} * units), '
                         f'got {r_shape}')
    units = r_shape[0]
    if k_shape != (x_shape[2], gates * units):
        raise ValueError(f'{name}: kernel must have shape (features, {gates} * units) = '
                         f'{(x_shape[2], gates * units)} for x {x_shape} and recurrent_kernel '
                         f'{r_shape}, got {k_shape}')
    if bias is not None and shapes['bias'] != bias_shape(units):
        raise ValueError(f'{name}: bias must have shape {bias_shape(units)}, got {shapes["bias"]}')
    for i in range(len(initial_states)):
        if shapes[f'initial_state[{i}]'] != (x_shape[0], units):
            raise ValueError(f'{name}: initial state {i} must have shape (batch, units) = '
                             f'{(x_shape[0], units)}, got {shapes[f"initial_state[{i}]"]}')


def recurrence(function, x, kernel, recurrent_kernel, bias, initial_states):
    """Apply a :class:`_Recurrence` to its arguments, leaving out the absent ones."""
    inputs = (x, kernel, recurrent_kernel) + ((bias,) if bias is not None else ())
    return function(*inputs, *initial_states)


def simple_rnn(x, kernel, recurrent_kernel, bias=None, initial_state=None, reverse=False,
               activation='tanh'):
    """Fully-connected recurrent network over a whole sequence (Keras ``SimpleRNN``).

    Args:
        x: Input sequence, shape ``(batch, steps, features)``.
        kernel: Input weights, shape ``(features, units)``.
        recurrent_kernel: Recurrent weights, shape ``(units, units)``.
        bias: Optional bias, shape ``(units,)``.
        initial_state: Optional initial hidden state ``(batch, units)``; zeros if None.
        reverse: Read the sequence from its last step to its first. ``outputs``
            stay aligned with the input steps and ``h_last`` is the state after step 0.
        activation: ``'tanh'``, ``'relu'`` or ``'linear'``.

    Returns:
        ``(outputs, h_last)``: all states ``(batch, steps, units)`` and the final one.
    """
    if activation not in ('tanh', 'relu', 'linear'):
        raise ValueError(f"simple_rnn: activation must be 'tanh', 'relu' or 'linear', "
                         f'got {activation!r}')
    states = () if initial_state is None else (initial_state,)
    check_arguments('simple_rnn', x, kernel, recurrent_kernel, bias, states, 1, lambda u: (u,))
    function = SimpleRNN(bool(reverse), bias is not None, bool(states), activation)
    return recurrence(function, x, kernel, recurrent_kernel, bias, states)
