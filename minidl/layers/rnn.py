"""Keras 2's generic recurrent layer: ``RNN(cell)`` runs a cell over a sequence."""

import numpy as np

from minidl import functions as F
from minidl.compute import to_numpy
from minidl.layers import weight_budget
from minidl.layers.base import Layer
from minidl.layers.input_spec import InputSpec
from minidl.layers.rnn_cells import (
    StackedRNNCells, call_cell, output_size, state_sizes, takes_constants)
from minidl.layers.serialization import deserialize, serialize
from minidl.tensor import Tensor


def reverse_time(tensor, time_axis=1):
    """``tensor`` with its time axis reversed (differentiable)."""
    index = [slice(None)] * tensor.ndim
    index[time_axis] = slice(None, None, -1)
    return F.getitem(tensor, tuple(index))


def states_from_inputs(layer, inputs, kwargs):
    """Keras's ``layer([x, h0, c0])`` as ``layer(x, initial_state=[h0, c0])``.

    Returns:
        The input and the call's keyword arguments, with any states moved there.
    """
    if not isinstance(inputs, (list, tuple)):
        return inputs, kwargs
    if not inputs:
        raise ValueError(f'layer {layer.name!r} was called on an empty list')
    if len(inputs) > 1:
        if kwargs.get('initial_state') is not None:
            raise ValueError(f'layer {layer.name!r}: initial states were given twice, in the '
                             f'inputs list and as initial_state')
        kwargs = dict(kwargs, initial_state=list(inputs[1:]))
    return inputs[0], kwargs


class RNN(Layer):
    """Runs a recurrent cell over the time steps of a sequence (Keras 2's ``RNN``).

    Args:
        cell: A cell (an object with ``call(inputs, states, training=None)``
            returning ``(output, new_states)`` and a ``state_size``), such as
            :class:`~minidl.layers.LSTMCell`, or a list of cells, which
            becomes a :class:`~minidl.layers.StackedRNNCells`.
        return_sequences: Return every step's output (batch, steps, units)
            rather than the last one (batch, units).
        return_state: Also return the final states: ``[output] + states``.
        go_backwards: Process the sequence from its end; a returned sequence
            is in processing order (reversed), as in Keras 2.
        stateful: Each call starts from the final states of the previous
            call (until :meth:`reset_states`); needs a fixed batch size
            (``batch_input_shape`` or ``batch_size`` on the first layer, or
            ``Input(batch_shape=...)``).
        unroll: Accepted for compatibility (the steps are always a Python loop).
        time_major: Inputs and returned sequences are (steps, batch, ...).

    Call arguments: ``inputs`` (batch, steps, features); ``mask``
    (batch, steps), True at real steps: at a masked step the states are
    carried over unchanged and the output is the previous step's output (the
    first initial state before any step, for a cell whose output is its first
    state, else zeros, as Keras 2's ``K.rnn``); ``training`` (dropout);
    ``initial_state``, a list of (batch, size) states (zeros by default);
    ``constants``, a tensor or list of tensors passed unchanged to every step
    of a cell whose ``call(inputs, states, constants)`` takes them (Keras 2's
    way to condition a cell on static inputs: attention). Such a cell's
    ``build`` gets ``[step shape] + constants' shapes``.
    ``layer([x, h0, c0])`` is ``layer(x, initial_state=[h0, c0])``; once a
    layer has been called with constants (or rebuilt from a config with
    ``num_constants``, as Keras 2 writes it), the last entries of such a list
    are its constants.

    Subclasses may replace the step loop alone by overriding
    :meth:`_recurrence` (a fused kernel, say): :meth:`call` has already
    transposed time-major input, reversed the input and mask for
    ``go_backwards``, made the initial states (given, stateful, or zeros)
    and drawn the cell's dropout masks for the sequence, which
    ``self.cell.dropout_masks(step_shape, training, xp, dtype)`` returns
    again; it then assembles the outputs and keeps stateful states.
    """

    supports_masking = True

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, time_major=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if not callable(getattr(cell, 'call', None)) or not hasattr(cell, 'state_size'):
            raise ValueError(f'{type(self).__name__}: cell must have a call method and a '
                             f'state_size attribute, got {cell!r}')
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), bool(stateful)
        self.unroll, self.time_major = bool(unroll), bool(time_major)
        self.input_spec = InputSpec(ndim=3)
        self._batch_size = None  # fixed by build for a stateful layer
        self.states = None  # a stateful layer's states between calls (Tensors, no graph)
        self._num_constants = None  # set by the first call with constants, saved in the config
        self._constants_shapes = None  # their shapes, which the cell's build takes

    # ----- building --------------------------------------------------------------

    def _batch_and_steps_axes(self):
        return (1, 0) if self.time_major else (0, 1)

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            order = '(steps, batch, features)' if self.time_major else '(batch, steps, features)'
            raise ValueError(f'layer {self.name!r} needs inputs of shape {order} with a known '
                             f'number of features; got input shape {tuple(input_shape)}')
        batch_axis, _ = self._batch_and_steps_axes()
        features = input_shape[-1]
        if self.stateful:
            self._batch_size = input_shape[batch_axis]
            if self._batch_size is None:
                raise ValueError(
                    f'layer {self.name!r} is stateful, so it needs a fixed batch size: pass '
                    f'batch_input_shape (or batch_size with input_shape) to the first layer '
                    f'of a Sequential model, or Input(batch_shape=...) in a functional one')
        if isinstance(self.cell, Layer) and not self.cell.built:
            step_shape = (input_shape[batch_axis], features)
            self.cell._build_once(step_shape if self._constants_shapes is None
                                  else [step_shape] + self._constants_shapes)
            self._name_cell_weights()
        self.input_spec = InputSpec(ndim=3, axes={-1: features})
        self.built = True
        if self.stateful:
            self.reset_states()

    def _name_cell_weights(self):
        """Keras 2's names: a cell's weights are named after the layer ('lstm_1/kernel:0')."""
        prefix = self.cell.name + '/'
        for weight in self.cell.weights:
            suffix = weight.name[len(prefix):] if weight.name.startswith(prefix) \
                else weight.name
            weight.name = f'{self.name}/{suffix}'

    # ----- calling ---------------------------------------------------------------

    def __call__(self, inputs, *args, constants=None, **kwargs):
        if isinstance(inputs, (list, tuple)) and self._num_constants and constants is None:
            # Keras 2's files list the constants after the input and states.
            inputs = list(inputs)
            constants = inputs[-self._num_constants:]
            inputs = inputs[:-self._num_constants]
        inputs, kwargs = states_from_inputs(self, inputs, kwargs)
        if constants is not None:
            constants = list(constants) if isinstance(constants, (list, tuple)) \
                else [constants]
            if not takes_constants(self.cell):
                raise ValueError(f'layer {self.name!r}: its cell does not support constants '
                                 f'(its call has no `constants` argument)')
            self._num_constants = len(constants)
            self._constants_shapes = [tuple(c.shape) for c in constants]
            kwargs['constants'] = constants
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs, mask=None, training=None, initial_state=None, constants=None):
        x = F.transpose(inputs, (1, 0, 2)) if self.time_major else inputs
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if mask is not None:
            mask = _boolean_mask(mask, x)
        states = self._initial_states(initial_state, x)
        if self.go_backwards:
            x = reverse_time(x)
            mask = None if mask is None else mask[:, ::-1]
        if hasattr(self.cell, 'reset_dropout_masks'):
            self.cell.reset_dropout_masks()
        if hasattr(self.cell, 'dropout_masks'):
            self.cell.dropout_masks((x.shape[0], x.shape[2]), training, x.xp, x.dtype)
        if constants:
            constants = [c if isinstance(c, Tensor) else Tensor(c, dtype=x.dtype,
                                                                device=x.device)
                         for c in constants]
            outputs, final_states = self._recurrence(x, states, mask, training, constants)
        else:
            outputs, final_states = self._recurrence(x, states, mask, training)
        if self.stateful:
            self.states = [state.detach() for state in final_states]
        if self.return_sequences:
            output = F.transpose(outputs, (1, 0, 2)) if self.time_major else outputs
        else:
            output = outputs[:, -1]
        return [output] + list(final_states) if self.return_state else output

    def _recurrence(self, x, states, mask, training, constants=None):
        """The loop over the steps of ``x`` (batch, steps, features), in that order.

        Args:
            x: The input, batch-major, already reversed for ``go_backwards``.
            states: The initial states, a list of (batch, size) Tensors.
            mask: None or a boolean array (batch, steps), aligned with ``x``.
            training: Whether dropout applies.
            constants: None, or the list of Tensors every step gets (only
                passed when given, so subclasses with a loop of their own,
                whose cells take none, need not accept it).

        Returns:
            ``(outputs, final_states)``: every step's output (batch, steps,
            size) in the order processed, and the list of final states.
        """
        xp = x.xp
        steps = [F.reshape(step, (x.shape[0], x.shape[2]))
                 for step in F.split(x, x.shape[1], axis=1)]
        position = _output_state_position(self.cell)
        previous = None if position is None else states[position]
        outputs = []
        for index, step in enumerate(steps):
            output, new_states = call_cell(self.cell, step, states, training, constants)
            new_states = list(new_states) if isinstance(new_states, (list, tuple)) \
                else [new_states]
            if mask is not None:
                valid = mask[:, index:index + 1]
                if previous is None:
                    previous = Tensor.wrap(xp.zeros(output.shape, output.dtype))
                output = F.where(_broadcast(valid, output), output, previous)
                new_states = [F.where(_broadcast(valid, new), new, old)
                              for new, old in zip(new_states, states)]
            outputs.append(output)
            previous, states = output, new_states
        return F.stack(outputs, axis=1), states

    def _initial_states(self, initial_state, x):
        """The initial states as Tensors on ``x``'s device: given, stateful or zeros."""
        batch, sizes = x.shape[0], state_sizes(self.cell)
        if initial_state is None:
            if self.stateful:
                self._check_stateful_batch(batch)
                return [s if s.device == x.device else s.to(x.device) for s in self.states]
            return [Tensor.wrap(x.xp.zeros((batch, size), x.dtype)) for size in sizes]
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) \
            else [initial_state]
        if len(states) != len(sizes):
            raise ValueError(f'layer {self.name!r} has {len(sizes)} state(s) but was given '
                             f'{len(states)} initial state(s)')
        states = [s if isinstance(s, Tensor) else Tensor(s, device=x.device) for s in states]
        for index, (state, size) in enumerate(zip(states, sizes)):
            if state.shape != (batch, size):
                raise ValueError(f'layer {self.name!r}: initial state {index} must have shape '
                                 f'{(batch, size)}, got {state.shape}')
        return states

    def _check_stateful_batch(self, batch):
        if batch != self._batch_size:
            raise ValueError(f'layer {self.name!r} is stateful with batch size '
                             f'{self._batch_size}; it was called on a batch of {batch}')

    def reset_states(self, states=None):
        """Set a stateful layer's states to zeros, or to ``states`` (arrays (batch, size)).

        Raises:
            AttributeError: If the layer is not stateful.
            ValueError: For the wrong number of states or a wrong shape.
        """
        if not self.stateful:
            raise AttributeError(f'layer {self.name!r} is not stateful, so it has no states '
                                 f'to reset')
        if not self.built:
            raise ValueError(f'layer {self.name!r} is not built yet, so its batch size is '
                             f'unknown; call it on an input first')
        shapes = [(self._batch_size, size) for size in state_sizes(self.cell)]
        if states is None:
            for shape in shapes:
                weight_budget.reserve_array(self, 'a state', shape, np.dtype(self.dtype),
                                            kept=True)
            values = [np.zeros(shape, self.dtype) for shape in shapes]
        else:
            values = [np.asarray(to_numpy(s.data if isinstance(s, Tensor) else s))
                      for s in (states if isinstance(states, (list, tuple)) else [states])]
            if len(values) != len(shapes):
                raise ValueError(f'layer {self.name!r} has {len(shapes)} state(s), '
                                 f'reset_states got {len(values)}')
            for index, (value, shape) in enumerate(zip(values, shapes)):
                if value.shape != shape:
                    raise ValueError(f'layer {self.name!r}: state {index} must have shape '
                                     f'{shape}, got {value.shape}')
        self.states = [Tensor(np.asarray(value, self.dtype)) for value in values]

    # ----- shapes, masks and config ------------------------------------------------

    def compute_output_shape(self, input_shape):
        if isinstance(input_shape, list):
            input_shape = input_shape[0]
        batch_axis, steps_axis = self._batch_and_steps_axes()
        batch, steps = input_shape[batch_axis], input_shape[steps_axis]
        units = output_size(self.cell)
        output = (batch, units)
        if self.return_sequences:
            output = (steps, batch, units) if self.time_major else (batch, steps, units)
        if self.return_state:
            return [output] + [(batch, size) for size in state_sizes(self.cell)]
        return output

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(state_sizes(self.cell))
        return output_mask

    def get_config(self):
        config = super().get_config()
        config.update({
            'cell': serialize(self.cell),
            'return_sequences': self.return_sequences,
            'return_state': self.return_state,
            'go_backwards': self.go_backwards,
            'stateful': self.stateful,
            'unroll': self.unroll,
            'time_major': self.time_major,
        })
        if self._num_constants is not None:
            config['num_constants'] = self._num_constants  # Keras 2's key
        return config

    @classmethod
    def from_config(cls, config_dict, custom_objects=None):
        config_dict = dict(config_dict)
        cell = deserialize(config_dict.pop('cell'), custom_objects)
        num_constants = config_dict.pop('num_constants', None)
        layer = cls(cell, **config_dict)
        layer._num_constants = num_constants
        return layer


def _boolean_mask(mask, x):
    """``mask`` as a boolean array (batch, steps) on ``x``'s device, its shape checked."""
    data = mask.data if isinstance(mask, Tensor) else mask
    data = x.xp.asarray(data).astype(bool, copy=False)
    if data.shape != x.shape[:2]:
        raise ValueError(f'the mask must have shape (batch, steps) = {x.shape[:2]}, got '
                         f'{data.shape}')
    return data


def _broadcast(valid, tensor):
    """A (batch, 1) condition spread over ``tensor``'s shape (where's gradient needs it)."""
    return tensor.xp.broadcast_to(valid, tensor.shape)


def _output_state_position(cell):
    """Where a cell's output is among its flat states, or None.

    A cell whose output size is its first state's (the built-in cells, most
    user cells) returns that state as its output; in a stack the output is
    the last cell's. Before the first step, a masked step outputs that
    initial state, as Keras 2's ``K.rnn`` does.
    """
    if isinstance(cell, StackedRNNCells):
        inner = _output_state_position(cell.cells[-1])
        before = sum(len(state_sizes(c)) for c in cell.cells[:-1])
        return None if inner is None else before + inner
    return 0 if output_size(cell) == state_sizes(cell)[0] else None
