"""Values of symbolic tensors, computed from values fed to tensors they depend on.

The nodes between the fed tensors and the wanted ones are replayed in
creation order (a node is always made after the nodes it reads), each layer
called on the values of its inputs (:func:`run_nodes`, which is also how a
model replays its graph). Fed tensors may be inputs or any tensor inside the
graph. :func:`evaluate` serves graphs that are not models: the backend's
``function`` and ``gradients``, and the shape inference of operation nodes.
"""

import numpy as np

from minidl import config
from minidl.compute.donation import donating
from minidl.layers.input_layer import InputLayer
from minidl.layers.nest import flatten, map_structure
from minidl.layers.symbolic import SymbolicTensor


def evaluate(outputs, feeds, training=False, on_value=None):
    """The values of ``outputs`` (a list; other items than symbolic tensors pass through).

    Args:
        outputs: The tensors wanted.
        feeds: ``{id(symbolic tensor): value}`` for the tensors given.
        training: Passed to the layers that take it.
        on_value: Optional ``on_value(symbol, value) -> value`` through which
            each computed value passes (to replace it, e.g. by a leaf that
            collects gradients).

    Raises:
        ValueError: If an output needs an input that is not fed.
    """
    values = dict(feeds)
    run_nodes(_nodes_to_run(outputs, values), values, training, on_value)
    return [value_of(tensor, values) for tensor in outputs]


def run_nodes(nodes, values, training=None, on_value=None, donations=None):
    """Call each node's layer on the values of its inputs, adding its outputs' values.

    Args:
        nodes: The nodes, each after the nodes it reads; input layers' nodes
            compute nothing (an unfed input that wraps a tensor takes its value).
        values: ``{id(symbolic tensor): value}``, read and extended in place;
            a value already there (a fed tensor) is kept.
        training: Passed to the layers that take it, unless the node's own
            call arguments set it.
        on_value: Optional ``on_value(symbol, value) -> value`` through which
            each computed value passes.
        donations: Optional ``{node.id: (id of an input tensor, ...)}``
            (:func:`minidl.layers.in_place.plan`): while autograd records
            nothing, those inputs' numpy arrays are donated to the node's
            layer call, which may write its output over them.
    """
    def lookup(leaf):  # made once, not per node: a model replays its nodes every step
        return values[id(leaf)] if isinstance(leaf, SymbolicTensor) else leaf

    if donations and config.per_thread.grad_enabled:
        donations = None
    for node in nodes:
        if isinstance(node.layer, InputLayer):
            _input_value(node, values)
            continue
        kwargs = map_structure(lookup, node.kwargs)
        kwargs.setdefault('training', training)  # layers that do not take it drop it
        if node.mask is not None:
            kwargs['mask'] = map_structure(lookup, node.mask)
        donated = donations.get(node.id) if donations else None
        if donated:
            arrays = [getattr(values[key], 'data', None) for key in donated]
            with donating([a for a in arrays if type(a) is np.ndarray]):
                results = node.layer(map_structure(lookup, node.inputs), **kwargs)
        else:
            results = node.layer(map_structure(lookup, node.inputs), **kwargs)
        for symbol, value in zip(flatten(node.outputs), flatten(results)):
            if id(symbol) not in values:
                values[id(symbol)] = value if on_value is None else on_value(symbol, value)


def _input_value(node, values):
    """An unfed input that wraps a tensor (``Input(tensor=...)``) takes that tensor's value."""
    if id(node.outputs) in values:
        return
    if node.inputs:
        values[id(node.outputs)] = values[id(node.inputs[0])]
    elif node.layer.constant is not None:
        values[id(node.outputs)] = node.layer.constant


def value_of(leaf, values):
    """The value of ``leaf`` if it is a symbolic tensor, else ``leaf`` itself."""
    return values[id(leaf)] if isinstance(leaf, SymbolicTensor) else leaf


def _nodes_to_run(outputs, fed):
    nodes, pending = {}, [t for t in outputs if isinstance(t, SymbolicTensor)]
    while pending:
        tensor = pending.pop()
        if id(tensor) in fed or id(tensor.node) in nodes:
            continue
        if isinstance(tensor.node.layer, InputLayer) and tensor.node.layer.is_placeholder:
            raise ValueError(f'a value is needed for input {tensor.node.layer.name!r}, which is '
                             f'not among the tensors fed')
        nodes[id(tensor.node)] = tensor.node
        pending.extend(tensor.node.parents)
    return sorted(nodes.values(), key=lambda node: node.id)
