"""LSTM and GRU (``reset_after=True``) through oneDNN, forward and backward.

The kernels have the signatures of ``functions.lstm.LSTM`` and
``functions.gru.GRUResetAfter`` for one direction: batch-major ``(N, T, F)``
sequences, Keras 2 weights, optional initial states, ``reverse`` for a
sequence read from its end (oneDNN's right-to-left direction, with outputs
aligned with the input steps, as minidl's). oneDNN's gate orders are Keras's
(LSTM i, f, c, o; GRU z, r, h), so a Keras kernel ``(F, G*u)`` is oneDNN's
``ldigo`` weights as it lies, and the LSTM's bias too. The GRU is oneDNN's
linear-before-reset GRU, whose bias has four blocks: the input and recurrent
biases of z and r added, then the candidate's input bias and its recurrent
bias apart. Weights are reordered into the layout each primitive chooses on
every call (the optimizer changes them between steps).

Sequences go to oneDNN time-major, each chunk's ``(T, n, X)`` copied
contiguous (its ``tnc`` layout with a trivial time stride), not as the
batch-major ``(N, T, X)`` arrays lie: only with a trivial time stride does
oneDNN 3.2's backward do the input-weight products of all steps as one GEMM
(``merge_gemm_layer``, and the LSTM's recurrent-weight gradient as one,
``merge_gemm_iter``; ``rnn_utils.hpp``) instead of one thin ``(n, 4u)``
product per step. Measured on 2-core AMD EPYC (the thread's CPU time, under
load), one direction of W5's LSTMs (16 x 100 steps, 256 units) on one
thread: backward 32 -> 29 ms (161 inputs) and 60 -> 50 ms (512 inputs), now
about the speed of one core's GEMMs (~95 GFLOP/s); Z4's GRUs (8 x 50 steps)
8.3 -> 7.6 ms (256 inputs). The forward costs the same (the copies, well
under a millisecond) and gives the same bits.

The batch runs in fixed chunks on minidl's pool, each call on one thread;
the weight gradients are the chunks' parts summed in chunk order, so no bit
depends on the number of threads. The forward makes every chunk's arguments
before the hand-off, so that a task is the primitive's call alone (tasks
that made their own made the calling thread wait for the GIL). In inference
the chunks write their hidden states into their columns of one time-major
array of the whole batch (the output described strided), whose batch-major
view is the outputs, and the primitive is oneDNN's forward_inference, which
keeps no workspace for a backward (8 MB a chunk of 16 of W6's LSTM,
written at every call): W6's prediction step 1.92 -> 1.82 ms (2-core AMD
EPYC, interleaved, faster in 16 of 16 rounds). It rounds differently from
the training forward on some shapes (11 of 120 random ones; an LSTM of 512
inputs, for one), so a prediction agrees with the training pass's outputs
to float32 rounding, not bitwise. Like the training forward's, a
sequence's result is the same in any chunk of two rows or more (those 120
shapes), so predictions keep their bits on any number of threads or
ranks. A direction's batch is cut into at most
:data:`CHUNKS` chunks of at least :data:`MIN_CHUNK_ROWS` sequences: the
per-step products of thinner chunks run far below the machine's speed. The
rule is the same for a bidirectional layer, whose directions are tasks of
their own already, so that its result is bitwise that of its two directions
run apart.
"""

import numpy as np

from minidl.compute.onednn import api, constants, memory
from minidl.compute.onednn.primitive import Primitive, batch_chunks, cached, engine, reorder
from minidl.compute.pool import map_tasks, sum_in_order

THREADS = 1  # the weight gradients sum over the batch and the steps
CHUNKS = 2
MIN_CHUNK_ROWS = 16
GATES = {'lstm': 4, 'gru': 3}
C = constants


class RNNPlan:
    """The primitives of one cell, direction and shape (a chunk of ``batch``): with
    ``training``, oneDNN's training forward (it writes the workspace the backward reads)
    and the backward; else its inference forward."""

    def __init__(self, cell, reverse, batch, steps, features, units, training=True,
                 output_rows=None):
        gates = GATES[cell]
        self.cell, self.gates, self.units = cell, gates, units
        self.bias_gates = 4  # the LSTM's four gates; the GRU's three and a recurrent one
        self.direction = C.RIGHT_TO_LEFT if reverse else C.LEFT_TO_RIGHT
        # Time-major (T, n, X) arrays of one chunk (see the module's docstring).
        self.x = memory.of_shape((steps, batch, features), (0, 1, 2))
        self.y = memory.of_shape((steps, batch, units), (0, 1, 2))
        # The forward's output: the chunk's own (T, n, u) array, or (output_rows given, for
        # inference) its columns of a time-major (T, output_rows, u) array of the whole batch.
        self.y_out = self.y if output_rows is None else memory.strided(
            (steps, batch, units), (output_rows * units, units, 1))
        self.state = memory.of_shape((1, 1, batch, units), (0, 1, 2, 3))
        self.keras_kernel = memory.of_shape((1, 1, features, gates, units), (0, 1, 2, 3, 4))
        self.keras_recurrent = memory.of_shape((1, 1, units, gates, units), (0, 1, 2, 3, 4))
        self.kernel_any = memory.any_format((1, 1, features, gates, units))
        self.recurrent_any = memory.any_format((1, 1, units, gates, units))
        self.bias = memory.of_shape((1, 1, self.bias_gates, units), (0, 1, 2, 3))
        self.training = training
        self.forward = Primitive(self._forward_descriptor(), THREADS)
        self._backward, self.reorders = None, {}

    def _forward_descriptor(self):
        prop = C.FORWARD_TRAINING if self.training else C.FORWARD_INFERENCE
        x, y, state = self.x.handle, self.y_out.handle, self.state.handle
        weights = self.kernel_any.handle, self.recurrent_any.handle
        if self.cell == 'lstm':
            return lambda pd, attr: api.functions().lstm_forward_primitive_desc_create(
                pd, engine(), prop, self.direction, x, state, state, *weights, None, None,
                self.bias.handle, y, state, state, 0, attr)
        return lambda pd, attr: api.functions().lbr_gru_forward_primitive_desc_create(
            pd, engine(), prop, self.direction, x, state, *weights, self.bias.handle, y, state,
            0, attr)

    @property
    def backward(self):
        """The backward primitive (made on first use); its weight gradients are written
        in Keras's layout, overwriting (not adding to) the buffers given."""
        if self._backward is None:
            x, y, state, bias = self.x.handle, self.y.handle, self.state.handle, self.bias.handle
            weights = self.kernel_any.handle, self.recurrent_any.handle
            diff_weights = self.keras_kernel.handle, self.keras_recurrent.handle
            hint, flags = self.forward.descriptor, C.DIFF_WEIGHTS_OVERWRITE
            if self.cell == 'lstm':
                make = lambda pd, attr: api.functions().lstm_backward_primitive_desc_create(
                    pd, engine(), C.BACKWARD, self.direction, x, state, state, *weights, None,
                    None, bias, y, state, state, x, state, state, *diff_weights, None, None,
                    bias, y, state, state, flags, hint, attr)
            else:
                make = lambda pd, attr: api.functions().lbr_gru_backward_primitive_desc_create(
                    pd, engine(), C.BACKWARD, self.direction, x, state, *weights, bias, y,
                    state, x, state, *diff_weights, bias, y, state, flags, hint, attr)
            self._backward = Primitive(make, THREADS)
        return self._backward

    def weights(self, primitive, kernel, recurrent):
        """The Keras ``kernel`` and ``recurrent`` kernel in ``primitive``'s layouts."""
        laid_out = []
        for arg, array, keras in ((C.WEIGHTS, kernel, self.keras_kernel),
                                  (C.WEIGHTS_ITER, recurrent, self.keras_recurrent)):
            target = primitive.md(arg)
            if memory.equal(target, keras.handle):
                laid_out.append(array)
                continue
            key = id(primitive), arg
            if key not in self.reorders:
                self.reorders[key] = reorder(keras.handle, target)
            weights = memory.buffer(memory.size(target)).view(np.float32)
            self.reorders[key].execute({C.SRC: array, C.DST: weights})
            laid_out.append(weights)
        return laid_out


class RNNKernel:
    """oneDNN recurrence with the signature of the ``_Recurrence`` Functions (one direction).

    Args:
        cell: 'lstm' or 'gru' (``reset_after=True``).
        reverse, has_bias, has_state: As the Function holds them.
        training: Whether backward will be called (keeps oneDNN's workspace for it).
    """

    def __init__(self, cell, reverse, has_bias, has_state, training):
        self.cell, self.reverse, self.training = cell, reverse, training
        self.has_bias, self.has_state = has_bias, has_state

    def forward(self, x, kernel, recurrent_kernel, *rest):
        """``(outputs, h_last)`` (GRU) or ``(outputs, h_last, c_last)`` (LSTM)."""
        x = np.asarray(x, dtype=np.float32)
        self.shape = x.shape
        self.kernel = np.ascontiguousarray(kernel, dtype=np.float32)
        self.recurrent = np.ascontiguousarray(recurrent_kernel, dtype=np.float32)
        batch, steps, _ = x.shape
        units = self.recurrent.shape[0]
        self.bias = self._onednn_bias(rest[0] if self.has_bias else None, units)
        count = 2 if self.cell == 'lstm' else 1
        states = rest[int(self.has_bias):] if self.has_state else ()
        self.states = [np.ascontiguousarray(s, dtype=np.float32) for s in states] or \
            [np.zeros((batch, units), np.float32)] * count
        finals = [np.empty((batch, units), np.float32) for _ in range(count)]
        work = self.kernel.shape[1] * (self.kernel.shape[0] + units) * batch * steps
        self.chunks = batch_chunks(batch, work, min(CHUNKS, max(1, batch // MIN_CHUNK_ROWS)))
        self.sequences, self.workspaces = {}, {}
        # Inference writes each chunk's states into its columns of one time-major array, whose
        # batch-major view is the outputs: no copy to join the chunks.
        joined = None
        if not self.training and len(self.chunks) > 1:
            joined = np.empty((steps, batch, units), np.float32)
        output_rows = None if joined is None else batch
        plans = {size: self._plan(size, self.training, output_rows)
                 for size in {stop - start for start, stop in self.chunks}}
        weights = {size: plan.weights(plan.forward, self.kernel, self.recurrent)
                   for size, plan in plans.items()}

        def prepare(bounds):
            """The chunk's primitive, its arguments and its output."""
            start, stop = bounds
            plan, rows = plans[stop - start], slice(start, stop)
            sequence = time_major(x[rows])
            states = np.empty((steps, stop - start, units), np.float32) if joined is None \
                else joined[:, rows]
            arrays = {C.SRC: sequence, C.DST: states, C.BIAS: self.bias,
                      C.WEIGHTS: weights[stop - start][0],
                      C.WEIGHTS_ITER: weights[stop - start][1],
                      C.SRC_ITER: self.states[0][rows], C.DST_ITER: finals[0][rows]}
            if self.cell == 'lstm':
                arrays.update({C.SRC_ITER_C: self.states[1][rows], C.DST_ITER_C: finals[1][rows]})
            if self.training:
                arrays[C.WORKSPACE] = self.workspaces[start] = memory.buffer(
                    plan.forward.bytes(C.WORKSPACE))
                self.sequences[start] = sequence, states
            return plan.forward, arrays, states

        # Every chunk gets its arguments before the hand-off, so that a task is the primitive's
        # call alone, in which the GIL is let go. A task that made its own (numpy's copies let
        # the GIL go and take it back) could make the calling thread wait for the GIL between
        # two Python lines while a pool thread's Python ran, and a thread that waits loses its
        # core on a busy machine: most steps then ran the two chunks one after the other.
        calls = [prepare(bounds) for bounds in self.chunks]
        hidden = map_tasks(_execute, calls)
        self.finals = finals
        if joined is not None:
            return (joined.swapaxes(0, 1), *finals)
        if len(hidden) == 1:
            return (hidden[0].swapaxes(0, 1), *finals)  # a view, as the reference loop's
        outputs = np.empty((batch, steps, units), np.float32)
        for (start, stop), part in zip(self.chunks, hidden):
            outputs[start:stop] = part.swapaxes(0, 1)
        return (outputs, *finals)

    def backward(self, grad_outputs, *grad_finals, needs_input_grad):
        """Gradients in the Function's input order; None where not needed."""
        grad_outputs = np.asarray(grad_outputs, dtype=np.float32)
        grad_finals = [np.ascontiguousarray(g, dtype=np.float32) for g in grad_finals]
        grad_states = [np.empty_like(s) for s in self.states]

        def run(bounds):
            start, stop = bounds
            plan, rows = self._plan(stop - start, training=True), slice(start, stop)
            primitive = plan.backward
            kernel, recurrent = plan.weights(primitive, self.kernel, self.recurrent)
            grad_kernel = np.empty_like(self.kernel)
            grad_recurrent = np.empty_like(self.recurrent)
            grad_bias = np.empty_like(self.bias)
            sequence, hidden = self.sequences[start]
            grad_x = np.empty_like(sequence)
            arrays = {C.SRC: sequence, C.SRC_ITER: self.states[0][rows],
                      C.WEIGHTS: kernel, C.WEIGHTS_ITER: recurrent, C.BIAS: self.bias,
                      C.DST: hidden, C.DST_ITER: self.finals[0][rows],
                      C.DIFF_DST: time_major(grad_outputs[rows]),
                      C.DIFF_DST_ITER: grad_finals[0][rows],
                      C.DIFF_SRC: grad_x, C.DIFF_SRC_ITER: grad_states[0][rows],
                      C.DIFF_WEIGHTS: grad_kernel, C.DIFF_WEIGHTS_ITER: grad_recurrent,
                      C.DIFF_BIAS: grad_bias, C.WORKSPACE: self.workspaces[start]}
            if self.cell == 'lstm':
                arrays.update({
                    C.SRC_ITER_C: self.states[1][rows], C.DST_ITER_C: self.finals[1][rows],
                    C.DIFF_DST_ITER_C: grad_finals[1][rows],
                    C.DIFF_SRC_ITER_C: grad_states[1][rows]})
            primitive.execute(arrays)
            return grad_kernel, grad_recurrent, grad_bias, grad_x

        parts = map_tasks(run, self.chunks)
        if len(parts) == 1:
            grad_x = parts[0][3].swapaxes(0, 1)
        else:
            grad_x = np.empty(self.shape, np.float32)
            for (start, stop), part in zip(self.chunks, parts):
                grad_x[start:stop] = part[3].swapaxes(0, 1)
        grads = [grad_x, sum_in_order([p[0] for p in parts]),
                 sum_in_order([p[1] for p in parts])]
        if self.has_bias:
            grads.append(self._keras_bias_grad(sum_in_order([p[2] for p in parts])))
        if self.has_state:
            grads += grad_states
        return tuple(g if needed else None for g, needed in zip(grads, needs_input_grad))

    def _onednn_bias(self, bias, units):
        """oneDNN's (4, u) bias from Keras's: the LSTM's as it is; the GRU's (2, 3u) input and
        recurrent rows as z and r summed, then the candidate's input and recurrent parts."""
        if bias is None:
            return np.zeros((4, units), np.float32)
        bias = np.asarray(bias, dtype=np.float32)
        if self.cell == 'lstm':
            return np.ascontiguousarray(bias.reshape(4, units))
        rows = bias.reshape(2, 3, units)
        return np.concatenate([rows[0, :2] + rows[1, :2], rows[:, 2]])

    def _keras_bias_grad(self, grad):
        """Keras's bias gradient from oneDNN's (4, u) one."""
        if self.cell == 'lstm':
            return grad.reshape(-1)
        both = np.concatenate([grad[:2], grad[2:3]]).reshape(-1)
        recurrent = np.concatenate([grad[:2], grad[3:4]]).reshape(-1)
        return np.stack([both, recurrent])

    def _plan(self, n, training, output_rows=None):
        _, steps, features = self.shape
        units = self.recurrent.shape[0]
        key = ('rnn', self.cell, self.reverse, n, steps, features, units, training, output_rows)
        return cached(key, lambda: RNNPlan(self.cell, self.reverse, n, steps, features, units,
                                           training, output_rows))


def _execute(call):
    """Run ``call`` (a primitive, its arguments, its output) and return its output: a task."""
    primitive, arrays, output = call
    primitive.execute(arrays)
    return output


def time_major(sequence):
    """A batch-major ``(n, T, X)`` array as a new C-contiguous time-major ``(T, n, X)`` one."""
    return np.ascontiguousarray(sequence.swapaxes(0, 1))
