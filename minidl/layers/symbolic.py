"""Symbolic tensors and nodes: how the functional API records a graph of layers.

``Input(shape=(784,))`` returns a :class:`SymbolicTensor`, a placeholder that
knows only its shape (batch dimension None) and dtype. Calling a layer on
symbolic tensors computes no numbers: it builds the layer, infers the output
shape with ``compute_output_shape`` and records a :class:`Node` (layer,
inputs, outputs). ``Model(inputs, outputs)`` then walks the nodes back from
its outputs and replays them in order on real data. Python operators on
symbolic tensors (``x + 1``, ``x[:, 0]``) record nodes too, of
:class:`~minidl.layers.operation.Operation` layers.
"""

import itertools

import numpy as np

from minidl.layers.nest import flatten

_node_ids = itertools.count()


class SymbolicTensor:
    """A placeholder for a tensor in a layer graph.

    Attributes:
        shape: Tuple with None for unknown sizes (always the batch size).
        dtype: numpy dtype of the data it will hold.
        node: The :class:`Node` that produces it (None until recorded).
        index: Which of the node's outputs it is.
    """

    _keras_mask = None  # the mask that travels with it (minidl.layers.masking)

    def __init__(self, shape, dtype='float32', node=None, index=0, name=None):
        self.shape = tuple(None if size is None else int(size) for size in shape)
        self.dtype = np.dtype(dtype)
        self.node, self.index, self.name = node, index, name

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        layer = self.node.layer.name if self.node else None
        return f'<SymbolicTensor shape={self.shape} dtype={self.dtype} from={layer!r}>'

    def __bool__(self):
        raise TypeError('a symbolic tensor has no value yet; it cannot be used in a condition')

    # Arithmetic, comparisons and indexing record operation nodes (bound below),
    # as Keras 2 allows; ``==`` stays identity, as there, so symbolic tensors can
    # be kept in lists and dicts.
    __array_ufunc__ = None  # numpy and Tensor defer to the reflected operators

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f'{self!r} has no value to convert to an array; combine it with '
                        f'operators or backend functions, which record graph nodes')

    def __iter__(self):
        raise TypeError(f'{self!r} cannot be iterated over; index it instead (x[0], x[:, 1])')

    # Keras 2's private attributes of its graph tensors, which scripts and third-party
    # layers read.
    @property
    def _keras_shape(self):
        """The shape, batch size included (Keras 2's name)."""
        return self.shape

    @property
    def _keras_history(self):
        """``(layer, node_index, tensor_index)``: the layer that made this tensor, which of
        its calls (``layer._inbound_nodes``) and which of that call's outputs."""
        if self.node is None:
            raise AttributeError(f'{self!r} was made by no layer')
        layer = self.node.layer
        return layer, layer._inbound_nodes.index(self.node), self.index

    @property
    def _uses_learning_phase(self):
        """Whether the value differs between training and inference: some layer on its way
        from the inputs does (Dropout with a rate, a noise layer, BatchNormalization, an RNN
        with dropout, a model holding one), unless that call fixed ``training``. A layer
        may set it, as Keras 2's layers do."""
        flag = self.__dict__.get('_learning_phase_flag')
        return _uses_learning_phase(self) if flag is None else flag

    @_uses_learning_phase.setter
    def _uses_learning_phase(self, value):
        self.__dict__['_learning_phase_flag'] = bool(value)


class Node:
    """One call of ``layer`` in a graph: its inputs, call arguments and outputs.

    Attributes:
        layer: The layer called.
        inputs: The structure passed as the first argument (symbolic tensors).
        kwargs: Other call arguments; they may hold symbolic tensors too
            (``initial_state=[h, c]``).
        outputs: The structure of symbolic tensors returned.
        mask: The masks of the inputs, passed to the layer's ``call`` as
            ``mask`` when the graph is replayed (None when there are none, or
            the layer takes none); not part of ``kwargs``, since a saved
            graph recomputes them when it is rebuilt.
        id: Creation order, which breaks ties when the graph is sorted.
    """

    def __init__(self, layer, inputs, kwargs, outputs, mask=None):
        self.layer, self.inputs, self.kwargs, self.outputs = layer, inputs, kwargs, outputs
        self.mask = mask
        self.id = next(_node_ids)

    @property
    def inbound(self):
        """Symbolic tensors the layer was called on, in its inputs and call arguments."""
        return [t for t in flatten([self.inputs, self.kwargs]) if isinstance(t, SymbolicTensor)]

    @property
    def parents(self):
        """Symbolic tensors this node reads: :attr:`inbound` and the masks."""
        return self.inbound + [t for t in flatten(self.mask) if isinstance(t, SymbolicTensor)]

    # Keras 2's names for the same, which scripts and third-party layers read. An Input's
    # node, as there, has its tensor as input and output and no inbound layer.
    @property
    def outbound_layer(self):
        return self.layer

    @property
    def input_tensors(self):
        return self.inbound or self.output_tensors

    @property
    def output_tensors(self):
        return flatten(self.outputs)

    @property
    def inbound_layers(self):
        return [t.node.layer for t in self.inbound]

    @property
    def node_indices(self):
        return [t._keras_history[1] for t in self.inbound]

    @property
    def tensor_indices(self):
        return [t.index for t in self.inbound]

    @property
    def input_shapes(self):
        return [t.shape for t in self.input_tensors]

    @property
    def output_shapes(self):
        return [t.shape for t in self.output_tensors]

    @property
    def input_masks(self):
        return [t._keras_mask for t in self.input_tensors]

    @property
    def output_masks(self):
        return [t._keras_mask for t in self.output_tensors]

    def get_config(self):
        """Keras 2's description of the call, by layer name."""
        return {'outbound_layer': self.layer.name,
                'inbound_layers': [layer.name for layer in self.inbound_layers],
                'node_indices': self.node_indices, 'tensor_indices': self.tensor_indices}


def _uses_learning_phase(tensor):
    """Whether a layer call on the way to ``tensor`` computes differently in training."""
    stack, seen = [tensor], set()
    while stack:
        node = stack.pop().node
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.kwargs.get('training') is None and _phase_dependent(node.layer):
            return True
        stack.extend(node.parents)
    return False


def _phase_dependent(layer):
    """Whether ``layer`` computes differently in training: it takes ``training`` and, where
    it has dropout rates, one is above zero (Keras 2's RNNs and Dropout(0) do not)."""
    if hasattr(layer, 'uses_learning_phase'):  # a model
        return layer.uses_learning_phase
    inner = getattr(layer, 'layer', None)  # a wrapper
    if inner is not None and hasattr(inner, '_accepts'):
        return _phase_dependent(inner)
    if not layer._accepts('training'):
        return False
    owners = [layer] + flatten(getattr(getattr(layer, 'cell', None), 'cells', None)
                               or getattr(layer, 'cell', None))
    rates = [getattr(owner, name) for owner in owners if owner is not None
             for name in ('rate', 'dropout', 'recurrent_dropout') if hasattr(owner, name)]
    if type(layer).__name__ == 'Lambda':
        return False  # Keras 2: only if the function's result says so
    return not rates or any(rate for rate in rates)


def next_node_id():
    """An id below those of every node made from now on (ids only need to increase)."""
    return next(_node_ids)


def is_symbolic(structure):
    """Whether any leaf of ``structure`` is a :class:`SymbolicTensor`.

    Every layer call asks, so the structure is walked in place, not flattened.
    """
    if isinstance(structure, SymbolicTensor):
        return True
    if isinstance(structure, dict):
        structure = structure.values()
    elif not isinstance(structure, (list, tuple)):
        return False
    for item in structure:
        if is_symbolic(item):
            return True
    return False


def get_source_inputs(tensor):
    """The input tensors (from ``Input``) that ``tensor`` is computed from.

    Args:
        tensor: A symbolic tensor.

    Returns:
        A list of symbolic tensors, in the order they were made.
    """
    if not isinstance(tensor, SymbolicTensor):
        raise TypeError(f'get_source_inputs: expected a symbolic tensor, got {tensor!r}')
    found, stack, seen = {}, [tensor], set()
    while stack:
        current = stack.pop()
        node = current.node
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        parents = node.parents
        if not parents:  # an Input's node reads nothing
            found[node.id] = current
        stack.extend(parents)
    return [found[key] for key in sorted(found)]
