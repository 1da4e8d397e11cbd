"""Layer wrappers (Keras 2): TimeDistributed and Bidirectional.

A wrapper holds another layer and owns its weights. Its config carries the
inner layer serialized as ``{'class_name', 'config'}``; ``from_config``
rebuilds it by class name through :mod:`minidl.layers.serialization` (only
minidl's registered layers and the caller's ``custom_objects``).
"""

from minidl import functions as F
from minidl.functions.lstm import bidirectional_lstm
from minidl.layers.base import Layer
from minidl.layers.input_spec import InputSpec
from minidl.layers.recurrent import LSTM
from minidl.layers.rnn import reverse_time, states_from_inputs
from minidl.layers.rnn_cells import state_sizes
from minidl.layers.serialization import deserialize, serialize
from minidl.tensor import Tensor

_MERGE_MODES = ('concat', 'sum', 'mul', 'ave', None)


class Wrapper(Layer):
    """Base class of the layers that wrap another one.

    Args:
        layer: The wrapped layer.
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise TypeError(f'{type(self).__name__}: layer must be a Layer instance, got '
                            f'{layer!r}')
        super().__init__(**kwargs)
        self.layer = layer

    @property
    def integer_inputs(self):
        """The wrapped layer's: TimeDistributed(Embedding) reads indices as they are."""
        return self.layer.integer_inputs

    def get_config(self):
        config = super().get_config()
        config['layer'] = serialize(self.layer)
        return config

    @classmethod
    def from_config(cls, config_dict):
        config_dict = dict(config_dict)
        layer = deserialize(config_dict.pop('layer'))
        return cls(layer, **config_dict)


class TimeDistributed(Wrapper):
    """Applies a layer to every time step of a sequence, with the same weights.

    Inputs (batch, time, ...) are reshaped to (batch * time, ...), passed
    through the inner layer once, and reshaped back to (batch, time, ...).
    The weights are the inner layer's.

    Args:
        layer: The layer to apply at each step (one input, one output).
    """

    supports_masking = True

    def __init__(self, layer, **kwargs):
        super().__init__(layer, **kwargs)
        self.input_spec = InputSpec(min_ndim=3)

    def _step_shape(self, input_shape):
        if len(input_shape) < 3:
            raise ValueError(f'layer {self.name!r} needs inputs of rank >= 3 (batch, time, '
                             f'...); got input shape {tuple(input_shape)}')
        return (None,) + tuple(input_shape[2:])

    def build(self, input_shape):
        self.layer._build_once(self._step_shape(input_shape))
        self.built = True

    def call(self, inputs, training=None, mask=None):
        batch, steps = inputs.shape[:2]
        kwargs = {'training': training}
        if mask is not None and self.layer._accepts('mask'):
            # A mask of the steps, (batch, steps), is one entry per row of the inner call.
            kwargs['mask'] = F.reshape(mask, (batch * steps,) + tuple(mask.shape[2:]))
        outputs = self.layer(F.reshape(inputs, (batch * steps,) + inputs.shape[2:]), **kwargs)
        if not isinstance(outputs, Tensor):
            raise NotImplementedError(f'layer {self.name!r}: the wrapped layer '
                                      f'{self.layer.name!r} returns several outputs, which '
                                      f'TimeDistributed does not support')
        return F.reshape(outputs, (batch, steps) + outputs.shape[1:])

    def compute_output_shape(self, input_shape):
        step_output = self.layer.compute_output_shape(self._step_shape(input_shape))
        if isinstance(step_output, list):
            raise NotImplementedError(f'layer {self.name!r}: the wrapped layer '
                                      f'{self.layer.name!r} returns several outputs, which '
                                      f'TimeDistributed does not support')
        return tuple(input_shape[:2]) + tuple(step_output[1:])


class Bidirectional(Wrapper):
    """Runs a recurrent layer over the sequence forwards and backwards, merging the two.

    The forward and backward layers are new layers made from ``layer``'s
    config (``go_backwards`` flipped for the backward one), named
    'forward_<name>' and 'backward_<name>'. With ``return_sequences`` the
    backward layer's outputs are put back in forward time order before the
    merge, so step t of the result sees the whole sequence.

    Args:
        layer: The recurrent layer (SimpleRNN, GRU, LSTM or one like them).
        merge_mode: How to combine the two outputs: 'concat' (the default;
            the last axis doubles), 'sum', 'mul', 'ave', or None for the list
            ``[forward, backward]``.
        weights: Initial weights, the forward layer's then the backward
            layer's, set once the layer is built.
        backward_layer: Optional layer to use (a copy of it) for the backward
            direction; it must have ``go_backwards`` opposite to ``layer``'s
            and the same ``return_sequences`` and ``return_state``.

    An input shape given to the wrapped layer (``Bidirectional(LSTM(8,
    input_shape=(10, 4)))``) is the wrapper's too, so either form can start
    a Sequential model.

    Call arguments: ``inputs``, ``training``, and ``initial_state``: the
    forward layer's initial states followed by the backward layer's. With
    ``return_state`` the output is followed by the forward then the
    backward final states.

    Two LSTMs run both directions in one fused time loop
    (``bidirectional_lstm``), with the same results as running them one
    after the other, unless something only the layers' own calls do is
    asked for (input dropout while training, an activity regularizer,
    time-major inputs).
    """

    supports_masking = True

    def __init__(self, layer, merge_mode='concat', weights=None, backward_layer=None,
                 **kwargs):
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f'Bidirectional: merge_mode must be one of '
                             f'{", ".join(map(repr, _MERGE_MODES))}, got {merge_mode!r}')
        given = [('layer', layer)] + [('backward_layer', backward_layer)] * (
            backward_layer is not None)
        for argument, value in given:
            if not (isinstance(value, Layer) and 'go_backwards' in value.get_config()):
                raise ValueError(f'Bidirectional: {argument} must be a recurrent layer (with '
                                 f'go_backwards), got {value!r}')
        if backward_layer is not None:
            _check_backward_layer(layer, backward_layer)
        if all(kwargs.get(name) is None
               for name in ('input_shape', 'batch_input_shape', 'input_dim')):
            # Bidirectional(LSTM(8, input_shape=...)) starts a model like the wrapped layer.
            kwargs['batch_input_shape'] = layer.batch_input_shape
        super().__init__(layer, weights=weights, **kwargs)
        self.merge_mode = merge_mode
        self._backward_layer_given = backward_layer
        self.forward_layer = _copy(layer, 'forward_', flip=False)
        self.backward_layer = _copy(backward_layer or layer, 'backward_',
                                    flip=backward_layer is None)

    def _tracked_layers(self):
        return [self.forward_layer, self.backward_layer]

    @property
    def return_sequences(self):
        return self.forward_layer.return_sequences

    @property
    def return_state(self):
        return self.forward_layer.return_state

    def build(self, input_shape):
        self.forward_layer._build_once(input_shape)
        self.backward_layer._build_once(input_shape)
        self.input_spec = self.forward_layer.input_spec
        self.built = True

    def __call__(self, inputs, *args, **kwargs):
        inputs, kwargs = states_from_inputs(self, inputs, kwargs)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs, mask=None, training=None, initial_state=None):
        forward_states = backward_states = None
        if initial_state is not None:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) \
                else [initial_state]
            if len(states) % 2:
                raise ValueError(f'layer {self.name!r}: initial_state must hold the forward '
                                 f'states then the backward ones (an even number), got '
                                 f'{len(states)}')
            forward_states, backward_states = states[:len(states) // 2], \
                states[len(states) // 2:]
        if self._fused(training):
            return self._call_fused(inputs, mask, forward_states, backward_states)
        # With a mask the backward layer, reading the sequence reversed, starts at each
        # sample's last unmasked step.
        forward = self.forward_layer(inputs, mask=mask, training=training,
                                     initial_state=forward_states)
        backward = self.backward_layer(inputs, mask=mask, training=training,
                                       initial_state=backward_states)
        states = []
        if self.return_state:
            states = forward[1:] + backward[1:]
            forward, backward = forward[0], backward[0]
        if self.return_sequences:
            backward = reverse_time(backward, 0 if self.forward_layer.time_major else 1)
        return self._with_states(self._merge(forward, backward), states)

    def _fused(self, training):
        """Whether both directions can run in one ``bidirectional_lstm``."""
        forward, backward = self.forward_layer, self.backward_layer
        return (type(forward) is LSTM and type(backward) is LSTM
                and forward.fusable() and backward.fusable()
                and not (forward.stateful or backward.stateful)
                and not forward.go_backwards and backward.go_backwards
                and forward.units == backward.units and forward.use_bias == backward.use_bias
                and not (forward.time_major or backward.time_major)
                and not (training and (forward.dropout or backward.dropout
                                       or forward.recurrent_dropout
                                       or backward.recurrent_dropout))
                and forward.activity_regularizer is None
                and backward.activity_regularizer is None)

    def _call_fused(self, inputs, mask, forward_states, backward_states):
        forward, backward = self.forward_layer, self.backward_layer
        states = [forward._initial_states(forward_states, inputs),
                  backward._initial_states(backward_states, inputs)]
        sequences, *final_states = bidirectional_lstm(
            inputs, (forward.kernel, forward.recurrent_kernel, forward._fused_bias()),
            (backward.kernel, backward.recurrent_kernel, backward._fused_bias()),
            initial_state=states[0] + states[1], mask=mask)
        if self.return_sequences and self.merge_mode == 'concat':
            output = sequences
        elif self.return_sequences:
            units = forward.units
            output = self._merge(F.getitem(sequences, (Ellipsis, slice(None, units))),
                                 F.getitem(sequences, (Ellipsis, slice(units, None))))
        else:
            output = self._merge(final_states[0], final_states[2])
        return self._with_states(output, final_states)

    def compute_mask(self, inputs, mask=None):
        """The input's mask for returned sequences (twice, for merge_mode None), as
        Keras 2; None for the final outputs and the states."""
        if isinstance(mask, list):
            mask = mask[0]
        output = mask if self.return_sequences else None
        output = [output] if self.merge_mode is not None else [output, output]
        if self.return_state:
            output += [None] * (2 * len(state_sizes(self.forward_layer.cell)))
        return output if len(output) > 1 else output[0]

    def _with_states(self, output, states):
        """The layer's result: the merged output, then the final states if asked for."""
        if not self.return_state:
            return output
        return (output if self.merge_mode is None else [output]) + states

    def _merge(self, forward, backward):
        if self.merge_mode == 'concat':
            return F.concat([forward, backward], axis=-1)
        if self.merge_mode == 'sum':
            return forward + backward
        if self.merge_mode == 'mul':
            return forward * backward
        if self.merge_mode == 'ave':
            return (forward + backward) * 0.5
        return [forward, backward]

    def compute_output_shape(self, input_shape):
        output = self.forward_layer.compute_output_shape(input_shape)
        states = []
        if self.return_state:
            output, states = output[0], output[1:]
        if self.merge_mode == 'concat':
            output = tuple(output[:-1]) + (None if output[-1] is None else 2 * output[-1],)
        output = [output, output] if self.merge_mode is None else [output]
        output += states * 2
        return output if len(output) > 1 else output[0]

    def get_config(self):
        config = super().get_config()
        config['merge_mode'] = self.merge_mode
        if self._backward_layer_given is not None:
            config['backward_layer'] = serialize(self._backward_layer_given)
        return config

    @classmethod
    def from_config(cls, config_dict):
        config_dict = dict(config_dict)
        if config_dict.get('backward_layer') is not None:
            config_dict['backward_layer'] = deserialize(config_dict['backward_layer'])
        return super().from_config(config_dict)


def _copy(layer, prefix, flip):
    """A new, unbuilt layer from ``layer``'s config, renamed, ``go_backwards`` flipped if asked."""
    config = layer.get_config()
    config['name'] = prefix + layer.name
    if flip:
        config['go_backwards'] = not config['go_backwards']
    return type(layer).from_config(config)


def _check_backward_layer(layer, backward_layer):
    forward_config, backward_config = layer.get_config(), backward_layer.get_config()
    if forward_config['go_backwards'] == backward_config['go_backwards']:
        raise ValueError(f'Bidirectional: backward_layer {backward_layer.name!r} must have '
                         f'go_backwards opposite to layer {layer.name!r}\'s')
    for argument in ('return_sequences', 'return_state'):
        if forward_config.get(argument) != backward_config.get(argument):
            raise ValueError(f'Bidirectional: layer and backward_layer must have the same '
                             f'{argument}; got {forward_config.get(argument)} and '
                             f'{backward_config.get(argument)}')
