"""Argument checks and plumbing shared by the recurrent functions (rnn, gru, lstm).

Shapes and dtypes are checked before any array is touched, so a wrong kernel
or mask fails with a message that names it; the masks and the biases that
may be absent are then put in the form :class:`~minidl.functions.rnn._Recurrence`
takes.
"""

import numpy as np

from minidl.tensor import Tensor


def check_arguments(name, x, weights, initial_states, gates, bias_shape):
    """Raise a clear error for inconsistent shapes or non-floating inputs.

    Args:
        name: The function's name, for messages.
        x: The input sequence.
        weights: ``(kernel, recurrent_kernel, bias)`` of each direction (bias may be None).
        initial_states: Tuple of initial-state arguments (may be empty).
        gates: Number of gate blocks in the kernels' columns.
        bias_shape: Callable from units to the expected bias shape.
    """
    # The checks depend only on the shapes and dtypes (and on the bias shape the
    # units ask for): a layer calls with the same ones on every step, so those
    # found consistent once are not checked again.
    key = _signature(name, x, weights, initial_states, gates, bias_shape)
    if key is not None and key in _CONSISTENT:
        return
    _check_arguments(name, x, weights, initial_states, gates, bias_shape)
    if key is not None:
        if len(_CONSISTENT) >= 1024:  # shapes that change from call to call: stay bounded
            _CONSISTENT.clear()
        _CONSISTENT.add(key)


_CONSISTENT = set()  # signatures (see _signature) whose arguments passed the checks


def _signature(name, x, weights, initial_states, gates, bias_shape):
    """Everything :func:`check_arguments` reads, hashable; None for a value without a
    shape and a dtype (a list: checked every time)."""
    if not weights:
        return None
    values = [x] + [value for triple in weights for value in triple] + list(initial_states)
    try:
        shapes = tuple([None if value is None else (tuple(value.shape), np.dtype(value.dtype))
                        for value in values])
    except (AttributeError, TypeError):
        return None
    recurrent_shape = shapes[2][0] if shapes[2] is not None else ()
    units = recurrent_shape[0] if len(recurrent_shape) == 2 else None
    return (name, gates, len(weights), len(initial_states),
            None if units is None else bias_shape(units), shapes)


def _check_arguments(name, x, weights, initial_states, gates, bias_shape):
    named = [('x', x)]
    for d, (kernel, recurrent_kernel, bias) in enumerate(weights):
        suffix = f' (direction {d})' if len(weights) > 1 else ''
        named += [('kernel' + suffix, kernel), ('recurrent_kernel' + suffix, recurrent_kernel),
                  ('bias' + suffix, bias)]
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
    x_shape = shapes['x']
    if len(x_shape) != 3 or x_shape[1] == 0:
        raise ValueError(f'{name}: x must have shape (batch, steps, features) with at least '
                         f'one step, got {x_shape}')
    units = None
    for d, (_, _, bias) in enumerate(weights):
        suffix = f' (direction {d})' if len(weights) > 1 else ''
        k_shape, r_shape = shapes['kernel' + suffix], shapes['recurrent_kernel' + suffix]
        if len(r_shape) != 2 or r_shape[1] != gates * r_shape[0]:
            raise ValueError(f'{name}: recurrent_kernel{suffix} must have shape '
                             f'(units, {gates} * units), got {r_shape}')
        if units is not None and r_shape[0] != units:
            raise ValueError(f'{name}: every direction must have the same units, got '
                             f'{units} and {r_shape[0]}')
        units = r_shape[0]
        if k_shape != (x_shape[2], gates * units):
            raise ValueError(f'{name}: kernel{suffix} must have shape (features, {gates} * '
                             f'units) = {(x_shape[2], gates * units)} for x {x_shape} and '
                             f'recurrent_kernel {r_shape}, got {k_shape}')
        if bias is not None and shapes['bias' + suffix] != bias_shape(units):
            raise ValueError(f'{name}: bias{suffix} must have shape {bias_shape(units)}, got '
                             f'{shapes["bias" + suffix]}')
    for i in range(len(initial_states)):
        if shapes[f'initial_state[{i}]'] != (x_shape[0], units):
            raise ValueError(f'{name}: initial state {i} must have shape (batch, units) = '
                             f'{(x_shape[0], units)}, got {shapes[f"initial_state[{i}]"]}')


def recurrent_options(name, x, weights, mask, recurrent_dropout_mask):
    """Check a step mask and recurrent dropout masks; return them as Function options.

    Args:
        name: The function's name, for messages.
        x: The input sequence (already checked).
        weights: ``(kernel, recurrent_kernel, bias)`` of each direction (already checked).
        mask: None or a ``(batch, steps)`` array or Tensor, nonzero (True) where a
            step is valid.
        recurrent_dropout_mask: None, or a ``(batch, units)`` array or Tensor for
            one direction, or a pair of them (either may be None) for two.

    Returns:
        Keyword arguments ``mask`` and ``recurrent_dropout`` for :class:`_Recurrence`.
    """
    batch, steps = _data(x).shape[:2]
    units = _data(weights[0][1]).shape[0]
    mask = _data(mask)
    if mask is not None and tuple(mask.shape) != (batch, steps):
        raise ValueError(f'{name}: mask must have shape (batch, steps) = {(batch, steps)}, '
                         f'got {tuple(mask.shape)}')
    masks = recurrent_dropout_mask
    if masks is not None:
        if len(weights) == 1:
            masks = (masks,)
        elif not isinstance(masks, (tuple, list)) or len(masks) != len(weights):
            raise ValueError(f'{name}: recurrent_dropout_mask must be a pair '
                             '(forward_mask, backward_mask)')
        masks = [_data(m) for m in masks]
        if all(m is None for m in masks):
            masks = None
    if masks is not None:
        for d, m in enumerate(masks):
            suffix = f' (direction {d})' if len(weights) > 1 else ''
            if m is not None and tuple(m.shape) != (batch, units):
                raise ValueError(f'{name}: recurrent_dropout_mask{suffix} must have shape '
                                 f'(batch, units) = {(batch, units)}, got {tuple(m.shape)}')
        # A direction without dropout keeps its state: a mask of ones (exact).
        masks = [np.ones((batch, units)) if m is None else m for m in masks]
    return {'mask': mask, 'recurrent_dropout': masks}


def _data(value):
    """The array of a Tensor, or ``value`` itself (an array, or None)."""
    if isinstance(value, Tensor):
        return value.data
    return value if value is None or hasattr(value, 'shape') else np.asarray(value)


def recurrence(function, x, weights, initial_states):
    """Apply a :class:`_Recurrence` to its arguments, leaving out absent biases.

    Args:
        function: The Function object.
        x: The input sequence.
        weights: ``(kernel, recurrent_kernel, bias)`` of each direction; the
            biases are all None or all given.
        initial_states: The initial states of each direction in turn (may be empty).
    """
    if len({bias is None for _, _, bias in weights}) > 1:
        raise ValueError('every direction must have a bias, or none')
    inputs = [w for kernel, recurrent, bias in weights
              for w in (kernel, recurrent) + ((bias,) if bias is not None else ())]
    return function(x, *inputs, *initial_states)


def bidirectional_arguments(name, forward_weights, backward_weights, initial_state, state_names):
    """Both directions' weight triples and the initial states, checked for their count.

    Args:
        name: The function's name, for messages.
        forward_weights: ``(kernel, recurrent_kernel, bias)`` of the forward direction.
        backward_weights: The same for the backward direction.
        initial_state: None or a sequence of states named by ``state_names``.
        state_names: The initial states' names, forward direction's first.

    Returns:
        ``(weights, states)``: a list of two triples and a tuple of states (may be empty).
    """
    if initial_state is None:
        states = ()
    elif isinstance(initial_state, (tuple, list)) and len(initial_state) == len(state_names):
        states = tuple(initial_state)
    else:
        count = {2: 'two', 4: 'four'}[len(state_names)]
        raise ValueError(f'{name}: initial_state must be None or {count} states '
                         f'({", ".join(state_names)})')
    weights = [tuple(forward_weights), tuple(backward_weights)]
    if any(len(w) != 3 for w in weights):
        raise ValueError(f'{name}: each direction\'s weights must be a triple '
                         '(kernel, recurrent_kernel, bias)')
    return weights, states
