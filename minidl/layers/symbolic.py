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
