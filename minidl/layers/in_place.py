"""Which inputs a model's inference may let a layer overwrite (see
:mod:`minidl.compute.donation`).

A value is donated to the layer that reads it only when all of these hold,
so that nothing else can see it change:

- no other node of the graph (nor a symbolic loss's node, nor a mask) reads
  it, it is not an output of the model, and the node reads it once;
- the node that made it is a Conv2D, BatchNormalization, Add (of two
  inputs or more) or ``Activation('relu')``, whose outputs are arrays of
  their own, never their input passed on or a view of it (nor kept by the
  layer, as a stateful RNN keeps its states);
- the reading layer is a BatchNormalization, Add or ``Activation('relu')``,
  whose ``call`` reads that input once, by one Function (a subclass may do
  otherwise, so types match exactly);
- the model has no symbolic losses (they read values after the replay).

The replay (:func:`minidl.layers.replay.run_nodes`) donates only while
autograd records nothing: a Function that needs gradients keeps its input.
"""

from minidl import activations
from minidl.layers.conv import Conv2D
from minidl.layers.core import Activation
from minidl.layers.merge import Add
from minidl.layers.nest import flatten
from minidl.layers.normalization import BatchNormalization
from minidl.layers.symbolic import SymbolicTensor


def _is_relu(layer):
    """``Activation('relu')``: ``activations.relu`` with its defaults, one F.relu."""
    return type(layer) is Activation and layer.activation is activations.relu


def _produces_own_array(node):
    layer = node.layer
    if type(layer) in (Conv2D, BatchNormalization) or _is_relu(layer):
        return True
    # Add of one input would return that input itself.
    return type(layer) is Add and len(flatten(node.inputs)) >= 2


def _reads_once(layer):
    return type(layer) in (BatchNormalization, Add) or _is_relu(layer)


def plan(nodes, loss_nodes, outputs, output_masks, symbolic_losses):
    """``{node.id: (id of a symbolic tensor it may overwrite, ...)}`` for a model's graph.

    Args:
        nodes: The graph's nodes, in replay order.
        loss_nodes: The further nodes its symbolic losses need.
        outputs: The model's output tensors.
        output_masks: Their masks (symbolic tensors or None, any nesting).
        symbolic_losses: The model's symbolic losses; with any, nothing is donated.
    """
    if symbolic_losses:
        return {}
    readers = {}
    for node in list(nodes) + list(loss_nodes):
        for tensor in node.parents:
            readers[id(tensor)] = readers.get(id(tensor), 0) + 1
    for tensor in list(outputs) + flatten(output_masks):
        if isinstance(tensor, SymbolicTensor):
            readers[id(tensor)] = readers.get(id(tensor), 0) + 2  # never donated
    donations = {}
    for node in nodes:
        if (not _reads_once(node.layer) or node.mask is not None
                or any(isinstance(t, SymbolicTensor) for t in flatten(node.kwargs))):
            continue
        donated = tuple(id(tensor) for tensor in flatten(node.inputs)
                        if isinstance(tensor, SymbolicTensor) and readers.get(id(tensor)) == 1
                        and _produces_own_array(tensor.node)
                        and len(flatten(tensor.node.outputs)) == 1)
        if donated:
            donations[node.id] = donated
    return donations


def plan_of(network):
    """:func:`plan` of a network's graph, made once per graph (kept on the network)."""
    made = network.__dict__.get('_in_place_plan')
    # The graph's lists are replaced, not changed, when it is made again; losses are added.
    key = (id(network._nodes), id(network._loss_nodes), len(network._symbolic_losses))
    if made is None or made[0] != key:
        made = (key, plan(network._nodes, network._loss_nodes, network.outputs,
                          network._output_masks, network._symbolic_losses),
                network._nodes, network._loss_nodes)  # kept, so that their ids stay theirs
        network.__dict__['_in_place_plan'] = made
    return made[1]
