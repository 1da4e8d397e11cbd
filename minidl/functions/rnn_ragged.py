"""Padded sequences through a vendor recurrence kernel, which knows no mask.

A batch of sequences of different lengths is padded at the end, and its mask
marks each sample's first ``L_n`` steps valid. Keras 2's semantics for the
steps after them (the reference loop in :mod:`minidl.functions.rnn`): the
state is carried over unchanged, so a forward direction's outputs there
repeat its state at step ``L_n - 1``, which is also its final state; a
reversed direction reads the padding first, so its outputs there are its
initial state, and it starts on step ``L_n - 1`` from that initial state.

A kernel that runs every step of every sample gives the same, up to
rounding, if each sample's valid steps come first in its reading order:

- forward: the input as it is. The kernel's steps after ``L_n`` compute
  states that nothing reads; the outputs there are replaced by the state at
  ``L_n - 1`` (one gather with index ``min(t, L_n - 1)``);
- reversed: each sample shifted ``T - L_n`` steps later, so that its last
  valid step is the kernel's first (``T - 1``); the steps before ``T - L_n``,
  read last, compute states that nothing reads. The outputs are shifted
  back, with the initial state at the padding steps.

Backward is the adjoint of these gathers: the gradients of the repeated
states are added onto the one they repeat, the kernel's unread steps get
zero gradients (so they add nothing to the weights' and the input's
gradients), and the final state's gradient is added onto its output step.
Only cells whose one state is their output (the GRU) fit: an LSTM's final
cell state is in no output, so masked LSTMs keep the reference loop.
"""


def prefix_lengths(valid, xp):
    """Each sample's count of valid steps, or None unless every sample's valid steps
    are a prefix of one step or more (``valid``: a ``(N, T)`` boolean array)."""
    lengths = valid.sum(axis=1)
    steps = xp.arange(valid.shape[1])
    if int(lengths.min()) < 1 or not bool((valid == (steps < lengths[:, None])).all()):
        return None
    return lengths


class RaggedSteps:
    """The gathers between a padded batch and a mask-free kernel's steps, for one direction.

    Args:
        lengths: ``(N,)`` valid steps per sample (:func:`prefix_lengths`).
        steps: ``T``, the padded length.
        reverse: Whether the direction reads the sequence reversed.
        xp: The array module.
    """

    def __init__(self, lengths, steps, reverse, xp):
        self.xp, self.reverse = xp, reverse
        t = xp.arange(steps)[None, :]
        lengths = lengths[:, None]
        self.padding = t >= lengths  # (N, T): the steps after each sample's valid ones
        self.rows = xp.arange(len(lengths))
        if reverse:
            shift = steps - lengths
            # Kernel step t holds input step t - shift (zeros before it).
            self.to_kernel = xp.maximum(t - shift, 0)
            self.unread = t < shift
            # Output step s is kernel step s + shift; its final state, kernel step shift.
            self.from_kernel = xp.minimum(t + shift, steps - 1)
            self.final_step = shift[:, 0]
        else:
            self.from_kernel = xp.minimum(t, lengths - 1)
            self.final_step = lengths[:, 0] - 1

    def _gather(self, array, index, zero=None):
        out = self.xp.take_along_axis(array, index[..., None], axis=1)
        if zero is not None:
            out[zero] = 0
        return out

    def inputs(self, x):
        """``(N, T, F)`` input as the kernel must read it."""
        return self._gather(x, self.to_kernel, self.unread) if self.reverse else x

    def outputs(self, kernel_outputs, initial):
        """``(outputs, final state)`` in Keras's semantics from the kernel's ``(N, T, u)``
        outputs; ``initial``: the ``(N, u)`` initial state (None: zeros)."""
        xp = self.xp
        final = kernel_outputs[self.rows, self.final_step]
        outputs = self._gather(kernel_outputs, self.from_kernel)
        if self.reverse:
            fill = 0 if initial is None else xp.broadcast_to(initial[:, None], outputs.shape)
            outputs = xp.where(self.padding[..., None], fill, outputs)
        return outputs, final

    def grad_kernel_outputs(self, grad_outputs, grad_final):
        """The gradient of the kernel's outputs from those of :meth:`outputs`' results."""
        xp = self.xp
        if self.reverse:
            grad = self._gather(grad_outputs, self.to_kernel, self.unread)
        else:
            grad = xp.where(self.padding[..., None], grad_outputs.dtype.type(0), grad_outputs)
            # The repeated final state: every padding step's gradient is its too.
            grad_final = grad_final + (grad_outputs * self.padding[..., None]).sum(axis=1)
        grad[self.rows, self.final_step] += grad_final
        return grad

    def grad_inputs(self, grad_kernel_inputs):
        """The input's gradient from that of the kernel's input."""
        if not self.reverse:
            return grad_kernel_inputs
        return self._gather(grad_kernel_inputs, self.from_kernel, self.padding)

    def grad_initial(self, grad_outputs):
        """What the padding steps' outputs add to the initial state's gradient."""
        if not self.reverse:
            return 0
        return (grad_outputs * self.padding[..., None]).sum(axis=1)
