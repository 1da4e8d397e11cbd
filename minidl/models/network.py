"""A graph of layers between symbolic inputs and outputs, itself a layer.

``Network(inputs, outputs)`` walks the nodes recorded by calling layers on
symbolic tensors, from the outputs back to the inputs, and keeps them in an
order in which every node comes after the nodes it reads from. Calling the
network replays those nodes on real data. A network can be called on
symbolic tensors like any layer, which is how a model is used inside another.

Losses given to :meth:`Network.add_loss` as symbolic tensors of the graph
(Keras's variational autoencoder adds one computed from the model's input,
its output and tensors inside its encoder) are computed on every forward
pass, on the same batch, and join :attr:`losses` for that pass.
"""

import heapq

from minidl.layers.base import Layer
from minidl.layers import in_place
from minidl.layers.graph_recording import run_recording_if_needed
from minidl.layers.runs import not_recording_losses
from minidl.layers.input_layer import InputLayer
from minidl.layers.input_spec import InputSpec
from minidl.layers.nest import flatten, map_structure, unpack_single
from minidl.layers.replay import run_nodes, value_of
from minidl.layers.symbolic import SymbolicTensor
from minidl.tensor import Tensor


class Network(Layer):
    """Layers connected from ``inputs`` to ``outputs`` (the functional API).

    Args:
        inputs: A symbolic tensor from ``Input``, or a list of them.
        outputs: The symbolic tensor(s) computed from ``inputs``.
        name: Model name.
    """

    # It gives integer data the dtype of the Input it feeds itself (see call).
    integer_inputs = True
    # Its float16 outputs (of mixed precision layers) leave in float32, for the loss.
    float32_outputs = True

    def __init__(self, inputs=None, outputs=None, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.layers = []
        self._nodes = []
        self.inputs, self.outputs = [], []
        self.input_names, self.output_names = [], []
        self._symbolic_losses = []  # from add_loss, computed each forward pass
        self._loss_nodes = []  # the nodes they need beyond those of the outputs
        if inputs is not None or outputs is not None:
            self._init_graph(inputs, outputs)

    def _init_graph(self, inputs, outputs):
        self._input_structure = list(inputs) if isinstance(inputs, (list, tuple)) else inputs
        self._output_structure = list(outputs) if isinstance(outputs, (list, tuple)) else outputs
        self.inputs, self.outputs = flatten(self._input_structure), flatten(self._output_structure)
        for tensor in self.inputs + self.outputs:
            if not isinstance(tensor, SymbolicTensor):
                raise TypeError(f'model {self.name!r}: inputs and outputs must be symbolic '
                                f'tensors (from Input and layer calls), got {tensor!r}')
        for tensor in self.inputs:
            if not isinstance(tensor.node.layer, InputLayer):
                raise ValueError(f'model {self.name!r}: input {tensor!r} does not come from Input')
        # The outputs' masks (minidl.layers.masking) are computed with them, for the loss.
        self._output_masks = [t._keras_mask for t in self.outputs]
        masks = [m for m in flatten(self._output_masks) if isinstance(m, SymbolicTensor)]
        self._nodes = _sorted_nodes(self.inputs, self.outputs + masks, self.name)
        self.layers = list(dict.fromkeys(node.layer for node in self._nodes
                                         if not node.layer.computes_mask))
        names = [layer.name for layer in self.layers]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f'model {self.name!r}: layer names must be unique; repeated: '
                             f'{", ".join(duplicates)}')
        self.input_names = [t.node.layer.name for t in self.inputs]
        self.output_names = [t.node.layer.name for t in self.outputs]
        self.input_spec = [InputSpec(shape=t.shape) for t in self.inputs]
        self._keeps_integers = self._integer_inputs()
        self.built = True
        self._find_loss_nodes(self._symbolic_losses)

    def _add_symbolic_loss(self, loss):
        if not self.inputs:
            raise ValueError(f'model {self.name!r} has no graph yet; add symbolic losses once '
                             f'its inputs and outputs are known')
        self._find_loss_nodes(self._symbolic_losses + [loss])
        self._symbolic_losses.append(loss)

    def _find_loss_nodes(self, losses):
        """The nodes ``losses`` read that the outputs do not; raises if they need
        tensors that do not come from the model's inputs."""
        if not losses:
            return
        try:
            nodes = _sorted_nodes(self.inputs, self.outputs + losses, self.name)
        except ValueError as error:
            raise ValueError(f'model {self.name!r}: a symbolic loss must be computed from the '
                             f'model\'s inputs: {error}') from None
        in_graph = {id(node) for node in self._nodes}
        self._loss_nodes = [node for node in nodes if id(node) not in in_graph]

    def _tracked_layers(self):
        return [layer for layer in self.layers if not isinstance(layer, InputLayer)]

    # Weights are listed layer by layer, as Keras 2's get_weights and HDF5 files do.
    @property
    def weights(self):
        if not self.trainable:
            return self.non_trainable_weights
        return [weight for layer in self._tracked_layers() for weight in layer.weights]

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [w for layer in self._tracked_layers() for w in layer.trainable_weights]

    @property
    def non_trainable_weights(self):
        if not self.trainable:
            return [w for layer in self._tracked_layers() for w in layer.weights]
        return [w for layer in self._tracked_layers() for w in layer.non_trainable_weights]

    def call(self, inputs, training=None):
        """Replay the graph's nodes on ``inputs`` (a Tensor, list, or dict by input name);
        integer and boolean data first take their Input's floating dtype (see
        :func:`_as_input_dtype`)."""
        inputs = [_as_input_dtype(value, symbol, keep)
                  for value, symbol, keep in zip(self._flatten_inputs(inputs), self.inputs,
                                                 self._keeps_integers)]
        values = {id(symbol): value for symbol, value in zip(self.inputs, inputs)}
        values = run_recording_if_needed(
            self, lambda values: run_nodes(self._nodes, values, training,
                                           donations=in_place.plan_of(self)), values)
        if self._symbolic_losses:
            # These nodes recompute layers that already ran in this pass (an inner
            # model's, inside its node): their add_loss terms are counted once.
            with not_recording_losses():
                run_nodes(self._loss_nodes, values, training)
            self.add_loss([values[id(loss)] for loss in self._symbolic_losses])
        for symbol, mask in zip(self.outputs, self._output_masks):
            if mask is not None:
                # Fresh Tensors made by the graph's layers: the mask can ride on them.
                values[id(symbol)]._keras_mask = value_of(mask, values)
        return map_structure(lambda leaf: value_of(leaf, values), self._output_structure)

    def compute_mask(self, inputs, mask=None):
        """None: a model called as a layer passes no mask on, and takes none in.

        The masks its own layers make stay inside it (they still weigh its
        loss when it is trained itself).
        """
        return None

    def _flatten_inputs(self, inputs):
        if isinstance(inputs, dict):
            missing = [name for name in self.input_names if name not in inputs]
            if missing:
                raise ValueError(f'model {self.name!r}: no data for input(s) {missing}; '
                                 f'got keys {sorted(inputs)}')
            return [inputs[name] for name in self.input_names]
        inputs = flatten(inputs)
        if len(inputs) != len(self.inputs):
            raise ValueError(f'model {self.name!r} has {len(self.inputs)} input(s) '
                             f'({", ".join(self.input_names)}), but it was given {len(inputs)}')
        return inputs

    def _integer_inputs(self):
        """For each input, whether every layer reading it takes integer data (indices)."""
        return [all(node.layer.integer_inputs for node in self._nodes
                    if any(parent is symbol for parent in node.parents))
                for symbol in self.inputs]

    @property
    def input_shape(self):
        """Shape of the model's input (a list of shapes for several inputs)."""
        return unpack_single([t.shape for t in self._graph_ends(self.inputs)])

    @property
    def output_shape(self):
        """Shape of the model's output (a list of shapes for several outputs)."""
        return unpack_single([t.shape for t in self._graph_ends(self.outputs)])

    @property
    def input(self):
        """The model's input tensor (a list for several):
        ``Model(base.input, head(base.output))``."""
        return unpack_single(self._graph_ends(self.inputs))

    @property
    def output(self):
        """The model's output tensor (a list for several)."""
        return unpack_single(self._graph_ends(self.outputs))

    def _graph_ends(self, tensors):
        if not tensors:
            raise AttributeError(f'model {self.name!r} has no graph yet (it is not built)')
        return tensors

    def compute_output_shape(self, input_shape):
        return map_structure(lambda t: t.shape, unpack_single(self._output_structure))

    @property
    def uses_learning_phase(self):
        """Whether a layer computes differently in training (takes ``training``: Dropout, ...)."""
        return any(layer.uses_learning_phase if isinstance(layer, Network)
                   else layer._accepts('training') for layer in self._tracked_layers())

    def reset_states(self):
        """Reset the states of every stateful layer (RNNs with ``stateful=True``), as
        Keras 2 scripts do between epochs or independent sequences."""
        for layer in self.flatten_layers():
            if layer is not self and getattr(layer, 'stateful', False) \
                    and hasattr(layer, 'reset_states'):
                layer.reset_states()

    def get_layer(self, name=None, index=None):
        """The layer called ``name``, or at position ``index`` of :attr:`layers`
        (``index`` wins when both are given, as in Keras)."""
        if name is None and index is None:
            raise ValueError(f'get_layer needs a layer name or an index (model {self.name!r})')
        if index is not None:
            if not -len(self.layers) <= index < len(self.layers):
                raise ValueError(f'model {self.name!r} has {len(self.layers)} layers; '
                                 f'index {index} is out of range')
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f'no layer named {name!r} in model {self.name!r}; layers: '
                         f'{", ".join(layer.name for layer in self.layers)}')


def _as_input_dtype(value, symbol, keep_integers):
    """Integer and boolean data cast to the floating dtype of the Input it feeds.

    As in Keras, data takes the dtype of its model input ('float32' unless
    ``Input(dtype=...)`` says otherwise), so integer images or one-hot
    booleans run the model in float32, not float64. Integer data stays as it
    is for an integer Input, and for an input read only by layers of indices
    (``integer_inputs``: Embedding), which float32 could not hold exactly
    beyond 2**24.
    """
    kind = value.dtype.kind if isinstance(value, Tensor) else None
    if kind not in ('b', 'i', 'u') or symbol.dtype.kind != 'f':
        return value
    if kind != 'b' and keep_integers:
        return value
    return Tensor.wrap(value.data.astype(symbol.dtype))


def _sorted_nodes(inputs, outputs, model_name):
    """The nodes between ``inputs`` and ``outputs``, each after the nodes it reads.

    Ties are broken by creation order, so the order (and with it the order of
    the model's layers and weights) is the order in which the user wrote the
    layer calls.
    """
    input_nodes = {id(t.node) for t in inputs}
    nodes, stack = {}, [t.node for t in outputs]
    while stack:
        node = stack.pop()
        if id(node) in nodes:
            continue
        nodes[id(node)] = node
        if id(node) in input_nodes:
            continue
        if isinstance(node.layer, InputLayer) and node.layer.is_placeholder:
            raise ValueError(f'graph disconnected in model {model_name!r}: the output needs '
                             f'input {node.layer.name!r}, which is not among the model inputs')
        stack.extend(parent.node for parent in node.parents)
    waiting = {key: {id(p.node) for p in node.parents} if key not in input_nodes else set()
               for key, node in nodes.items()}
    readers = {key: [] for key in nodes}
    for key, parents in waiting.items():
        for parent in parents:
            readers[parent].append(key)
    ready = [(node.id, key) for key, node in nodes.items() if not waiting[key]]
    heapq.heapify(ready)
    ordered = []
    while ready:
        _, key = heapq.heappop(ready)
        ordered.append(nodes[key])
        for reader in readers[key]:
            waiting[reader].discard(key)
            if not waiting[reader]:
                heapq.heappush(ready, (nodes[reader].id, reader))
    return ordered
