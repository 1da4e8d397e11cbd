"""Which layers of a hybrid model are model-parallel, and which compute the global batch.

:class:`~minidl_dist.hybrid.HybridParallel` splits the Dense layers that
``model_parallel`` names (or, given 'dense', every Dense layer after the
model's last convolution) by columns. Every layer that computes on their
outputs, directly or through other layers, then computes the global batch
too; those layers are found in the model's graph, walking its nodes from
the outputs back to the inputs as Keras 2.2.4's ``Network`` orders them by
depth. This module finds both sets and refuses what the hybrid step cannot
compute.
"""

from minidl.layers import (Conv1D, Conv2D, Conv3D, Dense, LocallyConnected1D,
                           LocallyConnected2D, SeparableConv1D, SeparableConv2D)

# Every convolution layer derives from one of these (DepthwiseConv2D and the
# transposed convolutions from Conv2D and Conv3D).
_CONVOLUTIONS = (Conv1D, Conv2D, Conv3D, LocallyConnected1D, LocallyConnected2D,
                 SeparableConv1D, SeparableConv2D)


def model_parallel_layers(model, model_parallel, size):
    """The Dense layers of ``model`` to split over ``size`` ranks, in the order given.

    Args:
        model: A built model.
        model_parallel: 'dense', or a list of layer names.
        size: The number of ranks, which must divide each layer's units.

    Raises:
        ValueError: For a name the model lacks, a layer that is not Dense,
            or units that ``size`` ranks cannot share evenly.
    """
    layers = list(model.layers)
    if model_parallel == 'dense':
        convolutions = [index for index, layer in enumerate(layers)
                        if isinstance(layer, _CONVOLUTIONS)]
        first = convolutions[-1] + 1 if convolutions else 0
        chosen = [layer for layer in layers[first:] if isinstance(layer, Dense)]
        if not chosen:
            raise ValueError(f"model_parallel='dense': model {model.name!r} has no Dense "
                             f"layer after its last convolution")
    else:
        by_name = {layer.name: layer for layer in layers}
        missing = [name for name in model_parallel if name not in by_name]
        if missing:
            dense = [layer.name for layer in layers if isinstance(layer, Dense)]
            raise ValueError(f'model_parallel names {missing}, which model {model.name!r} '
                             f'does not have; its Dense layers are {dense}')
        chosen = [by_name[name] for name in model_parallel]
    for layer in chosen:
        if not isinstance(layer, Dense):
            raise ValueError(f'model_parallel: layer {layer.name!r} is a '
                             f'{type(layer).__name__}; only Dense layers can be split')
        if layer.units % size:
            raise ValueError(f'model_parallel: layer {layer.name!r} has {layer.units} units, '
                             f'which {size} ranks cannot share evenly; use a number of '
                             f'ranks that divides it, or leave the layer data-parallel')
    return chosen


def downstream_layers(model, sharded):
    """The layers of ``model`` that compute on the outputs of ``sharded`` layers, in model order.

    The ``sharded`` layers are included. A layer computes the global batch
    in every call once it is placed, so a shared layer that one of its
    calls puts downstream takes all of its calls' readers along.

    Raises:
        ValueError: If ``model`` has no graph (a subclassed model).
    """
    if not model.outputs:
        raise ValueError(f'model_parallel places the layers of a Sequential or functional '
                         f'model; {model.name!r} is subclassed (it has no graph to read)')
    nodes = _graph_nodes(model)
    reached = {id(layer) for layer in sharded}
    grew = True
    while grew:  # until no call of a reached layer reaches another layer
        grew = False
        for node in nodes:
            if id(node.layer) not in reached and any(
                    id(parent.node.layer) in reached for parent in node.parents):
                reached.add(id(node.layer))
                grew = True
    return [layer for layer in model.layers if id(layer) in reached]


def _graph_nodes(model):
    """The nodes that compute ``model``'s outputs, each after the nodes it reads.

    Node ids follow creation, and a node is made after the tensors it reads,
    so sorting by id orders them as the graph runs.
    """
    found, stack = {}, [tensor.node for tensor in model.outputs]
    while stack:
        node = stack.pop()
        if id(node) not in found:
            found[id(node)] = node
            stack.extend(parent.node for parent in node.parents)
    return sorted(found.values(), key=lambda node: node.id)


def check_no_penalties(downstream):
    """Refuse weight and activity penalties on the layers that compute the global batch.

    Penalties are added to each rank's loss scaled by its share of the batch,
    which is right for weights every rank holds whole and sums gradients of,
    not for shards or for weights each rank computes the whole gradient of.
    """
    for layer in downstream:
        if layer.losses or layer.activity_regularizer is not None:
            raise NotImplementedError(
                f'model_parallel: layer {layer.name!r} (a model-parallel layer or one after it) '
                f'has a weight or activity penalty; penalties there are not supported yet '
                f'(leave them out, or the layer data-parallel)')


def check_invariant_mode(downstream, sharded, micro_shards):
    """Refuse what the rank-count-invariant mode cannot keep bitwise (``micro_shards=S``)."""
    for layer in sharded:
        if layer.units % micro_shards:
            raise ValueError(f'model_parallel with micro_shards={micro_shards}: layer '
                             f'{layer.name!r} has {layer.units} units, which cannot be cut into '
                             f'{micro_shards} equal column blocks')
    for layer in downstream:
        if layer not in sharded and layer.trainable_weights:
            raise NotImplementedError(
                f'model_parallel with micro_shards: layer {layer.name!r} comes after a '
                f'model-parallel layer and has weights; in the invariant mode the layers there '
                f'must be model-parallel Dense layers or have no weights (Dropout, Activation)')
