"""Recurrent networks over whole sequences: the shared time loop and the simple RNN.

The LSTM (``lstm.py``), the GRU (``gru.py``) and the simple RNN below are
Functions of one mechanism, :class:`_Recurrence`. Sequences are batch-major,
``(N, T, F)`` as in Keras, and weights use Keras 2's layouts: a kernel
``(F, G*u)`` and a recurrent kernel ``(u, G*u)`` whose columns are ``G`` gate
blocks of ``u`` units.

One Function runs one or several directions over the same input (a
bidirectional layer's forward and backward recurrences), each with its own
weights. The directions are independent until their outputs are joined, so
each runs its own time loop as a task of the worker pool
(:mod:`minidl.compute.threads`): on two cores a bidirectional layer's two
loops run side by side, about twice as fast. At step ``t`` a reversed
direction processes input step ``T-1-t``. The loops keep a leading direction
axis (of length 1) on every buffer.

For speed the input is copied once per direction to time-major order
``(T, N, F)`` (reversed in time for a reversed direction), so that every step
reads and writes contiguous ``(N, ...)`` slices. All steps' input projections
are one GEMM per direction before the loop, which then costs one recurrent
product per step (:class:`~minidl.compute.products.StepProduct`, one
``matmul`` call) plus a few in-place elementwise operations. Backward runs the
loop the other way with one product per step for the recurrent gradient,
collecting every step's gate pre-activation gradients in one ``(1, T, N, G*u)``
buffer, from which the kernel, recurrent kernel and input gradients are one
GEMM each. Hidden states live in a ``(1, T+1, N, u)`` buffer whose slot 0
holds the initial state.

Two options change the loop, and only when given. A step mask ``(N, T)``
(a constructor argument of the Function, as it is not differentiated) marks
valid steps, in Keras 2's way: at an invalid step of a sample its states
are carried over unchanged, so its output there repeats the previous state.
Each step computes as usual and then copies the carried states back into the
rows of invalid samples; backward zeroes the gate gradients of invalid steps
(once, for all steps) and passes their state gradients straight through. A
reversed direction reads the mask reversed with the input. A recurrent dropout
mask ``(N, u)`` per direction (Gal and Ghahramani's, one for the whole sequence
and all gates) scales ``h_{t-1}`` where it enters the recurrent matrix
product(s) only; the state updates use the undropped state.

That is the reference code. Each direction of an LSTM or of a GRU with
``reset_after=True`` runs the vendor library's kernel instead where one
serves it (:mod:`minidl.compute.vendor`: oneDNN for float32 numpy arrays,
cuDNN for CuPy arrays) and neither option is given, or, for the GRU, the
mask marks padding at the end of each sample (:mod:`minidl.functions.rnn_ragged`);
other masks and recurrent dropout keep the reference loop. ``vendor_kernel``
on a direction's part shows which branch it took (None: the reference code).

Sigmoid gates are evaluated as ``1 / (1 + exp(-z))`` over a whole row of gates
at once: the kernels' sigmoid columns are pre-multiplied by -1 (exactly), so a
single ``exp`` serves every gate. numpy's float32 ``exp`` is much faster than
its ``tanh``, and ``tanh(z) = 2 sigmoid(2z) - 1`` brings the LSTM's tanh gate
into the same pass with a factor of -2.
"""

import itertools

from minidl.compute import pool, products, vendor
from minidl.compute.products import StepProduct
from minidl.functions.rnn_arguments import (
    bidirectional_arguments, check_arguments, recurrence, recurrent_options)
from minidl.functions.rnn_ragged import RaggedSteps, prefix_lengths
from minidl.tensor import Function


class _Recurrence(Function):
    """Forward and backward through time shared by the recurrent Functions.

    Inputs: ``x (N, T, F)``, then for each direction ``kernel,
    recurrent_kernel[, bias]``, then for each direction its initial states.
    Outputs: ``outputs (N, T, D*u)`` (direction ``d``'s hidden states in
    columns ``d*u:(d+1)*u``, aligned with the input steps), then for each
    direction its final states: ``h_last (N, u)`` and any further ones of the
    cell (the LSTM's cell state).

    Subclasses set ``block_scales`` (the factor applied to each gate block's
    pre-activation before the loop: -1 for sigmoid, -2 for tanh via sigmoid,
    1 for blocks activated otherwise) and ``state_count``, and define::

        _run(gates, recurrent_kernels, biases, states) -> (hidden, finals)
        _backprop(grad_hidden, grad_finals)
            -> (grad_gates, grad_recurrent_kernels, grad_recurrent_biases, grad_states)

    Both run once per direction, on that direction's copy of the Function
    (:meth:`_direction`), which keeps what ``_run`` saves for ``_backprop``.
    Every array there has a leading direction axis ``D`` of length 1.
    ``gates`` is the time-major ``(D, T, N, G*u)`` input projection, scaled
    and with the input bias added; ``_run`` may overwrite it (with
    activations). ``recurrent_kernels`` is ``(D, u, G*u)``, unscaled;
    ``biases`` the bias ``(D, G*u)`` (``(D, 2, G*u)`` with a recurrent row) or
    None; ``states`` one ``(D, N, u)`` array per state. ``hidden`` is the
    ``(D, T+1, N, u)`` buffer of states and ``finals`` a tuple of further
    final states ``(D, N, u)``. ``grad_hidden`` is a ``(D, T, N, u)`` buffer
    that ``_backprop`` may overwrite. ``grad_gates`` holds the gradients of
    the unscaled pre-activations of the input projection,
    ``grad_recurrent_biases`` is None unless the bias has a separate
    recurrent row.

    There, ``self.invalid`` is None or a ``(D, T, N, 1)`` boolean array, True
    where a step of a sample is masked (in the direction's reading order), and
    ``self.dropout`` None or the ``(D, N, u)`` recurrent dropout mask.
    """

    block_scales = (1,)
    state_count = 1
    vendor_cell = None  # the vendor kernels' name for the cell ('lstm', 'gru'), if they have it
    vendor_kernel = None

    def __init__(self, directions, has_bias, has_state, mask=None, recurrent_dropout=None):
        """Set up the recurrence.

        Args:
            directions: One flag per direction, True where it reads the sequence reversed.
            has_bias: Whether each direction has a bias input.
            has_state: Whether the initial states are inputs.
            mask: None or a ``(N, T)`` array, nonzero where a step is valid.
            recurrent_dropout: None or one ``(N, u)`` array per direction, multiplied
                onto ``h_{t-1}`` before the recurrent matrix products.
        """
        self.directions = tuple(directions)
        self.has_bias, self.has_state = has_bias, has_state
        self.width = 3 if has_bias else 2  # inputs per direction
        self.mask, self.recurrent_dropout = mask, recurrent_dropout

    def forward(self, x, *arrays):
        xp, count, width = self.xp, len(self.directions), self.width
        dtype = xp.result_type(x, *arrays)
        arrays = [a.astype(dtype, copy=False) for a in arrays]
        batch, steps, features = x.shape
        self.shape = (steps, batch, features)
        self.kernels = arrays[0:count * width:width] if self.needs_input_grad[0] else None
        # A mask with every step valid changes nothing: it is dropped, so that such a
        # call computes (and rounds) as one without. Read once for all directions.
        valid = None if self.mask is None else xp.asarray(self.mask) != 0
        if valid is not None and bool(valid.all()):
            valid = None
        # Padding at the end of each sample: a vendor kernel can run it (rnn_ragged).
        lengths = (prefix_lengths(valid, xp) if valid is not None and self.state_count == 1
                   else None)
        self.parts = [self._direction(d, dtype, valid, lengths) for d in range(count)]
        initial = arrays[count * width:]  # (h, c, ...) of each direction in turn, or none
        count_states = self.state_count

        def run(d):
            weights = arrays[d * width:(d + 1) * width]
            states = initial[d * count_states:(d + 1) * count_states]
            return self.parts[d]._forward_one(x, weights, states)
        results = pool.map_tasks(run, range(count), xp)
        return (self._outputs([outputs for outputs, _ in results]),) + sum(
            (last for _, last in results), ())

    def backward(self, grad_outputs, *grad_finals):
        count, count_states = len(self.directions), self.state_count
        steps, batch, _ = self.shape
        per_direction = grad_outputs.reshape(batch, steps, count, -1)
        results = pool.map_tasks(
            lambda d: self.parts[d]._backward_one(
                d, per_direction[:, :, d],
                grad_finals[d * count_states:(d + 1) * count_states]),
            range(count), self.xp)
        grad_x = None
        if self.needs_input_grad[0]:
            grad_x = pool.sum_in_order([grad for grad, _, _ in results])
        grads = sum((weight_grads for _, weight_grads, _ in results), [])
        if self.has_state:
            grads += sum((state_grads for _, _, state_grads in results), [])
        return (grad_x,) + tuple(grads)

    def _direction(self, d, dtype, valid, lengths):
        """This Function for direction ``d`` alone, to run as a task of its own.

        A shallow copy, whose mask and dropout are direction ``d``'s and on
        which ``_run`` and ``_backprop`` keep what they save. ``valid`` is the
        ``(N, T)`` mask with a masked step (or None), ``lengths`` its valid
        prefixes' lengths where it marks padding at the end (or None).
        """
        xp = self.xp
        part = object.__new__(type(self))  # copy.copy's result, without its generic machinery
        part.__dict__.update(self.__dict__)
        part.reverse = self.directions[d]
        part.invalid = part.dropout = part.ragged = None
        if valid is not None:
            invalid = self._time_major(~valid, part.reverse)
            part.invalid = xp.ascontiguousarray(invalid)[None, ..., None]
            if lengths is not None:
                part.ragged = RaggedSteps(lengths, valid.shape[1], part.reverse, xp)
        # A dropout mask of ones changes nothing: dropped, as an all-valid mask is.
        if self.recurrent_dropout is not None:
            dropout = xp.asarray(self.recurrent_dropout[d], dtype=dtype)
            if not (dropout == 1).all():
                part.dropout = dropout[None]
        return part

    def _forward_one(self, x, weights, states):
        """One direction: its outputs ``(N, T, u)`` and final states ``(h_last, ...)``.

        ``states`` are the direction's initial states, or none (zeros).
        """
        if (self.vendor_cell is not None and self.dropout is None
                and (self.invalid is None or self.ragged is not None)):
            self.vendor_kernel = vendor.kernel(
                self.xp, 'rnn', weights[0].dtype, cell=self.vendor_cell, reverse=self.reverse,
                has_bias=self.has_bias, has_state=self.has_state,
                training=any(self.needs_input_grad))
        if self.vendor_kernel is not None and self.ragged is not None:
            outputs, _ = self.vendor_kernel.forward(self.ragged.inputs(x), *weights, *states)
            outputs, final = self.ragged.outputs(outputs, states[0] if states else None)
            return outputs, (final,)
        if self.vendor_kernel is not None:
            outputs, *finals = self.vendor_kernel.forward(x, *weights, *states)
            return outputs, tuple(finals)
        hidden, finals = self._forward_reference(x, weights, states)
        return (self._batch_major(hidden[0, 1:], self.reverse),
                (hidden[0, -1],) + tuple(final[0] for final in finals))

    def _forward_reference(self, x, weights, states):
        """One direction's input projection and time loop: ``(hidden, finals)``."""
        xp = self.xp
        kernel, recurrent_kernel = weights[:2]
        bias = weights[2] if self.has_bias else None
        steps, batch, features = self.shape
        units = recurrent_kernel.shape[0]
        # Made here, where the reference code needs it (its backward runs on this part too).
        self.scale = xp.repeat(xp.asarray(self.block_scales, kernel.dtype), units)
        states = [state[None] for state in states] or \
            [xp.zeros((1, batch, units), kernel.dtype)] * self.state_count
        sequence = xp.ascontiguousarray(self._time_major(x, self.reverse), dtype=kernel.dtype)
        gates = xp.empty((1, steps, batch, len(self.scale)), kernel.dtype)
        projection = steps_as_rows(gates[0])
        products.matmul(steps_as_rows(sequence), kernel * self.scale, out=projection, xp=xp)
        if bias is not None:
            projection += (bias if bias.ndim == 1 else bias[0]) * self.scale
        self.sequence = sequence if self._needs_grad(0) else None
        return self._run(gates, recurrent_kernel[None], None if bias is None else bias[None],
                         states)

    def _backward_one(self, d, grad_outputs, grad_finals):
        """One direction's backward: ``(grad_x part, weight gradients, state gradients)``."""
        if self.vendor_kernel is not None:
            width, count = self.width, len(self.directions)
            first_state = 1 + count * width + d * self.state_count
            needs = ((self.needs_input_grad[0],)
                     + self.needs_input_grad[1 + d * width:1 + (d + 1) * width]
                     + self.needs_input_grad[first_state:first_state + self.state_count])
            if self.ragged is None:
                grads = self.vendor_kernel.backward(grad_outputs, *grad_finals,
                                                    needs_input_grad=needs)
                return grads[0], list(grads[1:1 + width]), list(grads[1 + width:])
            return self._backward_ragged(grad_outputs, grad_finals[0], needs)
        return self._backward_reference(d, grad_outputs, grad_finals)

    def _backward_ragged(self, grad_outputs, grad_final, needs):
        """:meth:`_backward_one` by the vendor kernel over padded sequences (``rnn_ragged``)."""
        ragged, width = self.ragged, self.width
        grad_kernel_outputs = ragged.grad_kernel_outputs(grad_outputs, grad_final)
        # The kernel's own final state is one of its unread steps': nothing depends on it.
        grads = self.vendor_kernel.backward(grad_kernel_outputs, self.xp.zeros_like(grad_final),
                                            needs_input_grad=needs)
        grad_x = None if grads[0] is None else ragged.grad_inputs(grads[0])
        grad_states = [None if g is None else g + ragged.grad_initial(grad_outputs)
                       for g in grads[1 + width:]]
        return grad_x, list(grads[1:1 + width]), grad_states

    def _backward_reference(self, d, grad_outputs, grad_finals):
        """:meth:`_backward_one` by the reference loop."""
        xp = self.xp
        steps, batch, features = self.shape
        grad_hidden = xp.array(self._time_major(grad_outputs, self.reverse), order='C')[None]
        grad_finals = [g[None].astype(grad_hidden.dtype) for g in grad_finals]  # written to
        grad_gates, grad_recurrent, grad_recurrent_bias, grad_states = self._backprop(
            grad_hidden, grad_finals)
        flat = steps_as_rows(grad_gates[0])
        needs = self.needs_input_grad[1 + d * self.width:1 + (d + 1) * self.width]
        grad_x = None
        if self.needs_input_grad[0]:
            grad_x = self._batch_major(
                products.matmul(flat, self.kernels[d].T, xp=xp).reshape(steps, batch, features),
                self.reverse)
        grads = [products.matmul(steps_as_rows(self.sequence).T, flat, xp=xp) if needs[0] else None,
                 grad_recurrent[0] if needs[1] else None]
        if self.has_bias:
            grad_bias = flat.sum(axis=0) if needs[2] else None
            if grad_bias is not None and grad_recurrent_bias is not None:
                grad_bias = xp.stack([grad_bias, grad_recurrent_bias[0]])
            grads.append(grad_bias)
        return grad_x, grads, [state[0] for state in grad_states]

    def _needs_grad(self, position):
        """Whether any direction's weight at ``position`` (0 kernel, 1 recurrent, 2 bias)
        needs a gradient."""
        return any(self.needs_input_grad[1 + position::self.width][:len(self.directions)])

    def _outputs(self, per_direction):
        """The hidden states ``(N, T, D*u)`` aligned with the input steps, from each
        direction's ``(N, T, u)`` ones."""
        if len(per_direction) == 1:
            return per_direction[0]  # a view of the reference loop's buffer: no copy
        batch, steps, units = per_direction[0].shape
        count = len(per_direction)
        outputs = self.xp.empty((batch, steps, count, units), per_direction[0].dtype)
        for d, direction in enumerate(per_direction):
            outputs[:, :, d] = direction
        return outputs.reshape(batch, steps, count * units)

    @staticmethod
    def _time_major(array, reverse):
        """View of a batch-major ``(N, T, ...)`` array as ``(T, N, ...)`` in reading order."""
        array = array.swapaxes(0, 1)
        return array[::-1] if reverse else array

    @staticmethod
    def _batch_major(array, reverse):
        """Inverse of :meth:`_time_major`."""
        return (array[::-1] if reverse else array).swapaxes(0, 1)

    def _state_buffer(self, gates, initial):
        """A ``(D, T+1, N, u)`` buffer of states with ``initial`` in slot 0."""
        count, steps = gates.shape[:2]
        states = self.xp.empty((count, steps + 1) + initial.shape[1:], gates.dtype)
        states[:, 0] = initial
        return states

    def _weight_gradient(self, inputs, grad_gates):
        """Per direction ``sum_t inputs_t^T grad_t``:
        ``(D, T, N, a), (D, T, N, b) -> (D, a, b)``."""
        return self.xp.stack([products.matmul(steps_as_rows(i).T, steps_as_rows(g), xp=self.xp)
                              for i, g in zip(inputs, grad_gates)])

    def _recurrent_inputs(self, hidden):
        """The states ``h_{t-1}`` as they enter the recurrent product: ``(D, T, N, u)``."""
        previous = hidden[:, :-1]
        return previous if self.dropout is None else previous * self.dropout[:, None]

    def _zero_invalid(self, *arrays):
        """Set the invalid steps of ``(D, T, N, ...)`` arrays to 0 in place (when masked)."""
        if self.invalid is not None:
            for array in arrays:
                invalid = self.invalid.reshape(self.invalid.shape + (1,) * (array.ndim - 4))
                self.xp.copyto(array, 0, where=invalid)

    def _one_where_invalid(self, array):
        """A copy of ``(D, T, N, u)`` ``array`` with 1 at invalid steps, or ``array``
        itself when unmasked."""
        if self.invalid is None:
            return array
        return self.xp.where(self.invalid, array.dtype.type(1), array)

    def _sigmoid_(self, array):
        """In place ``1 / (1 + exp(array))``: the sigmoid of the negated (pre-scaled) input."""
        xp = self.xp
        xp.exp(array, out=array)
        array += 1
        xp.divide(1, array, out=array)  # the same bits as reciprocal, faster in numpy


class SimpleRNN(_Recurrence):
    """``h_t = activation(x_t kernel + h_{t-1} recurrent_kernel + bias)``."""

    def __init__(self, directions, has_bias, has_state, activation, **options):
        super().__init__(directions, has_bias, has_state, **options)
        self.activation = activation

    def _run(self, gates, recurrent_kernels, biases, states):
        xp, dropout = self.xp, self.dropout
        hidden = self._state_buffer(gates, states[0])
        recurrent = xp.empty_like(hidden[:, 0])
        recurrent_product = StepProduct(recurrent_kernels, gates.shape[2], xp)
        dropped = None if dropout is None else xp.empty_like(recurrent)
        for step, h, h_next, invalid in by_step(gates, hidden[:, :-1], hidden[:, 1:],
                                                self.invalid):
            if dropout is None:
                recurrent_product(h, recurrent)
            else:
                recurrent_product(xp.multiply(h, dropout, out=dropped), recurrent)
            state = xp.add(step, recurrent, out=h_next)
            if self.activation == 'tanh':
                xp.tanh(state, out=state)
            elif self.activation == 'relu':
                xp.maximum(state, 0, out=state)
            if invalid is not None:
                xp.copyto(h_next, h, where=invalid)
        self.hidden, self.recurrent_kernels = hidden, recurrent_kernels
        return hidden, ()

    def _backprop(self, grad_hidden, grad_finals):
        xp, hidden, dropout = self.xp, self.hidden, self.dropout
        states = hidden[:, 1:]
        # The activation's derivative, from its output, for all steps at once.
        if self.activation == 'tanh':
            derivative = 1 - states * states
        elif self.activation == 'relu':
            derivative = (states > 0).astype(states.dtype)
        else:
            derivative = None if self.invalid is None else xp.ones_like(states)
        if derivative is not None:
            self._zero_invalid(derivative)  # no gate gradient at masked steps
        carry = grad_finals[0]
        through = None if self.invalid is None else xp.empty_like(carry)
        recurrent_t = StepProduct(self.recurrent_kernels.transpose(0, 2, 1), carry.shape[1], xp)
        # grad_hidden becomes the gradient of the pre-activations, step by step.
        for step, derivative_t, invalid in by_step(grad_hidden, derivative, self.invalid,
                                                   reverse=True):
            step += carry
            if invalid is not None:
                xp.copyto(through, step)
            if derivative_t is not None:
                step *= derivative_t
            recurrent_t(step, carry)
            if dropout is not None:
                carry *= dropout
            if invalid is not None:
                xp.copyto(carry, through, where=invalid)  # a masked step passes dh on
        grad_recurrent = None
        if self._needs_grad(1):
            grad_recurrent = self._weight_gradient(self._recurrent_inputs(hidden), grad_hidden)
        return grad_hidden, grad_recurrent, None, (carry,)


def steps_as_rows(array):
    """``(T, N, k)`` time-major buffer as a ``(T*N, k)`` matrix (a view)."""
    return array.reshape(-1, array.shape[-1])


def by_step(*buffers, reverse=False):
    """Iterate over the steps of ``(D, T, ...)`` buffers: per step, a ``(D, ...)`` view of each.

    The views come from numpy's iteration, not from indexing in the loop body:
    a step of a small recurrence is a dozen calls on small arrays, so Python
    overhead is a noticeable part of it.

    An absent buffer (None) gives None at every step.
    """
    steps = [None if buffer is None else buffer.swapaxes(0, 1) for buffer in buffers]
    if reverse:
        steps = [None if s is None else s[::-1] for s in steps]
    return zip(*(itertools.repeat(None) if s is None else s for s in steps))


def simple_rnn(x, kernel, recurrent_kernel, bias=None, initial_state=None, reverse=False,
               activation='tanh', mask=None, recurrent_dropout_mask=None):
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
        mask: Optional ``(batch, steps)`` array or Tensor (bool or 0/1, not
            differentiated), True where a step is valid. At a masked step the
            state is carried over unchanged and is also the output there; the
            final state is the one after the last valid step read.
        recurrent_dropout_mask: Optional ``(batch, units)`` array or Tensor of
            0 and ``1 / (1 - rate)``, multiplied onto ``h_{t-1}`` where it
            enters the recurrent product, the same at every step.

    Returns:
        ``(outputs, h_last)``: all states ``(batch, steps, units)`` and the final one.
    """
    if activation not in ('tanh', 'relu', 'linear'):
        raise ValueError(f"simple_rnn: activation must be 'tanh', 'relu' or 'linear', "
                         f'got {activation!r}')
    states = () if initial_state is None else (initial_state,)
    weights = [(kernel, recurrent_kernel, bias)]
    check_arguments('simple_rnn', x, weights, states, 1, lambda u: (u,))
    options = recurrent_options('simple_rnn', x, weights, mask, recurrent_dropout_mask)
    function = SimpleRNN((bool(reverse),), bias is not None, bool(states), activation, **options)
    return recurrence(function, x, weights, states)


def bidirectional_simple_rnn(x, forward_weights, backward_weights, initial_state=None,
                             activation='tanh', mask=None, recurrent_dropout_mask=None):
    """Both directions of a bidirectional simple RNN in one time loop.

    Equal to :func:`simple_rnn` run forwards with ``forward_weights`` and with
    ``reverse=True`` with ``backward_weights``, outputs concatenated on the last axis.

    Args:
        x: Input sequence, shape ``(batch, steps, features)``.
        forward_weights: ``(kernel, recurrent_kernel, bias)`` of the forward
            direction, as in :func:`simple_rnn`; bias may be None.
        backward_weights: The same for the backward direction.
        initial_state: None (zeros) or ``(h0, h0_backward)``, each ``(batch, units)``.
        activation: ``'tanh'``, ``'relu'`` or ``'linear'``.
        mask: Optional ``(batch, steps)`` step mask, as in :func:`simple_rnn`; the
            backward direction reads it reversed.
        recurrent_dropout_mask: None or ``(forward_mask, backward_mask)``, each
            ``(batch, units)`` or None.

    Returns:
        ``(outputs, h_last, h_last_backward)``, ``outputs (batch, steps, 2 * units)``.
    """
    if activation not in ('tanh', 'relu', 'linear'):
        raise ValueError(f"bidirectional_simple_rnn: activation must be 'tanh', 'relu' or "
                         f"'linear', got {activation!r}")
    name = 'bidirectional_simple_rnn'
    weights, states = bidirectional_arguments(name, forward_weights, backward_weights,
                                              initial_state, ('h0', 'h0_backward'))
    check_arguments(name, x, weights, states, 1, lambda u: (u,))
    options = recurrent_options(name, x, weights, mask, recurrent_dropout_mask)
    function = SimpleRNN((False, True), weights[0][2] is not None, bool(states), activation,
                         **options)
    return recurrence(function, x, weights, states)


