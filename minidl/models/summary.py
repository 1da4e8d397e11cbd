"""``Model.summary()``: Keras 2's table of layers, output shapes and parameter counts."""

from minidl.layers.nest import flatten
from minidl.models import collected_weights

_PLACEMENT_WIDTH = 34


def print_summary(model, line_length=None, positions=None, print_fn=None):
    """Print the summary table of ``model`` (see ``Model.summary``)."""
    print_fn = print_fn or print
    sequential_like = _is_sequential_like(model)
    if sequential_like:
        line_length = line_length or 65
        positions = positions or [0.45, 0.85, 1.0]
        headers = ['Layer (type)', 'Output Shape', 'Param #']
    else:
        line_length = line_length or 98
        positions = positions or [0.33, 0.55, 0.67, 1.0]
        headers = ['Layer (type)', 'Output Shape', 'Param #', 'Connected to']
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    placed = any(layer.placement is not None for layer in model.layers)
    if placed:  # a distributed strategy placed layers: one more column says where
        headers = headers + ['Placement']
        positions = positions + [positions[-1] + _PLACEMENT_WIDTH]
        line_length = positions[-1]

    def row(fields):
        # As Keras: each field starts where the previous one's column ends, after a
        # space that replaces the previous field's last character if it ran long.
        line = ''
        for index, (field, stop) in enumerate(zip(fields, positions)):
            if index:
                line = line[:-1] + ' '
            line = (line + str(field))[:stop].ljust(stop)
        print_fn(line)

    print_fn(f'Model: "{model.name}"')
    print_fn('_' * line_length)
    row(headers)
    print_fn('=' * line_length)
    layers = model.layers
    for index, layer in enumerate(layers):
        for number, fields in enumerate(_rows(model, layer, sequential_like)):
            if placed:
                fields = fields + [_placement_text(layer) if number == 0 else '']
            row(fields)
        print_fn(('=' if index == len(layers) - 1 else '_') * line_length)
    # As Keras 2: a compiled model counts the trainable weights its compile
    # collected (warning if `trainable` changed since), the total is the two
    # counts added.
    collected = getattr(model, '_collected_trainable_weights', None)
    if collected is not None:
        collected_weights.check_consistency(model, stacklevel=4)
    trainable = sum(w.size for w in _unique(
        model.trainable_weights if collected is None else collected))
    non_trainable = sum(w.size for w in _unique(model.non_trainable_weights))
    print_fn(f'Total params: {trainable + non_trainable:,}')
    print_fn(f'Trainable params: {trainable:,}')
    print_fn(f'Non-trainable params: {non_trainable:,}')
    print_fn('_' * line_length)


def _rows(model, layer, sequential_like):
    name = f'{layer.name} ({type(layer).__name__})'
    nodes = [node for node in model._nodes if node.layer is layer] or layer._inbound_nodes[:1]
    shapes = [_shape_text(node.outputs) for node in nodes]
    output_shape = shapes[0] if len(set(shapes)) == 1 else 'multiple'
    params = layer.count_params() if layer.built else 0
    if sequential_like:
        return [[name, output_shape, params]]
    sources = []
    for node in nodes:
        for parent in node.inbound:
            owner = parent.node.layer
            node_index = [n for n in model._nodes if n.layer is owner].index(parent.node)
            sources.append(f'{owner.name}[{node_index}][{parent.index}]')
    rows = [[name, output_shape, params, sources[0] if sources else '']]
    rows += [['', '', '', source] for source in sources[1:]]
    return rows


def _placement_text(layer):
    return 'data-parallel' if layer.placement is None else str(layer.placement)


def _shape_text(outputs):
    shapes = [tensor.shape for tensor in flatten(outputs)]
    return str(shapes[0]) if len(shapes) == 1 else str(shapes)


def _is_sequential_like(model):
    """Keras's rule: a chain, one node per depth, none fed by several tensors.

    A node's depth is its distance from the outputs (the longest path), so
    branches, several outputs and merges all break the chain.
    """
    if type(model).__name__ == 'Sequential':
        return True
    graph = [node for node in model._nodes if not node.layer.computes_mask]
    depths = {id(tensor.node): 0 for tensor in flatten(model.outputs)}
    for node in reversed(graph):  # children before their parents
        for parent in node.inbound:
            key = id(parent.node)
            depths[key] = max(depths.get(key, 0), depths.get(id(node), 0) + 1)
    nodes_at = {}
    for node in graph:
        nodes_at.setdefault(depths[id(node)], []).append(node)
    return all(len(nodes) == 1 and len(nodes[0].inbound) <= 1 for nodes in nodes_at.values())


def _unique(weights):
    return list({id(w): w for w in weights}.values())
