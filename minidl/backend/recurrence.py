"""Keras 2's ``K.rnn``: a step function iterated over the time axis of a tensor.

Custom recurrent layers written for Keras 2 call it from ``call``. minidl's
own recurrent layers have their own loop (``minidl/layers/rnn.py``) or a
fused kernel; this is Keras 2.2.4's backend contract for user code, with its
two masking rules: a masked step keeps the states and outputs ``states[0]``
(the TensorFlow ``while_loop`` path), or, with ``unroll=True``, the previous
step's output (zeros before the first).
"""

import minidl.functions as F
from minidl.backend.convert import as_tensor
from minidl.layers.operation import recordable
from minidl.tensor import Tensor


def _where(valid, new, old):
    """``new`` where the sample's step is valid, else ``old`` (``valid`` is (batch,) bool)."""
    condition = valid.reshape(valid.shape + (1,) * (new.ndim - 1))
    # where's gradient wants the condition at the full shape.
    return F.where(new.xp.broadcast_to(condition, new.shape), new, old)


@recordable
def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None,
        unroll=False, input_length=None):
    """Iterate ``step_function`` over the time axis (axis 1) of ``inputs``.

    Args:
        step_function: ``f(step_inputs, states) -> (output, new_states)``:
            ``step_inputs`` is ``(samples, ...)``, ``states`` the list of
            current states followed by ``constants``; ``new_states`` a list
            as long as ``initial_states``, of the same shapes.
        inputs: ``(samples, time, ...)`` tensor, at least 3-D.
        initial_states: List of ``(samples, ...)`` tensors.
        go_backwards: Iterate from the last step; ``outputs`` are then in
            the order processed (reversed), as in Keras 2.
        mask: Optional ``(samples, time)`` or ``(samples, time, 1)`` tensor,
            zero at masked steps: there the states are carried over, and the
            output is ``states[0]`` (or the previous output with ``unroll``).
        constants: Optional list of tensors passed to every step after the
            states.
        unroll: Keras 2's choice of loop, which only changes what a masked
            step outputs (see ``mask``); the steps always run as a Python loop.
        input_length: Ignored (Theano's; the TensorFlow backend ignores it too).

    Returns:
        ``(last_output, outputs, new_states)``: the last step's output
        ``(samples, ...)``, every step's ``(samples, time, ...)``, and the
        final states.

    Raises:
        ValueError: For inputs of fewer than 3 dimensions, or a mask
            without initial states (without ``unroll``).
    """
    inputs = as_tensor(inputs)
    if inputs.ndim < 3:
        raise ValueError(f'K.rnn needs inputs of at least 3 dimensions (samples, time, ...), '
                         f'got shape {inputs.shape}')
    states = [as_tensor(state) for state in initial_states]
    constants = [as_tensor(constant) for constant in (constants or [])]
    valid = None
    if mask is not None:
        if not states and not unroll:
            raise ValueError('K.rnn with a mask needs initial states: a masked step outputs '
                             'states[0], the output of the step before')
        data = mask.data if isinstance(mask, Tensor) else mask
        valid = inputs.xp.asarray(data).astype(bool).reshape(inputs.shape[:2])
    steps = range(inputs.shape[1] - 1, -1, -1) if go_backwards else range(inputs.shape[1])
    outputs = []
    for step in steps:
        output, new_states = step_function(F.getitem(inputs, (slice(None), step)),
                                           states + constants)
        new_states = [as_tensor(state) for state in new_states]
        if valid is not None:
            if not unroll:
                fallback = states[0]
            elif outputs:
                fallback = outputs[-1]
            else:
                fallback = Tensor.wrap(output.xp.zeros(output.shape, output.dtype))
            output = _where(valid[:, step], output, fallback)
            new_states = [_where(valid[:, step], new, old)
                          for new, old in zip(new_states, states)]
        outputs.append(output)
        states = new_states
    return outputs[-1], F.stack(outputs, axis=1), states
