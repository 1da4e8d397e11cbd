"""A functional model's graph as JSON-ready config, and back (Keras 2's layout).

``{'name', 'layers': [{'class_name', 'config', 'name', 'inbound_nodes'}],
'input_layers', 'output_layers'}``: each inbound node lists the tensors a
layer call read, as ``[layer name, node index, tensor index, call kwargs]``.
Call arguments that are themselves tensors (an RNN's ``initial_state``) are
written as ``{'class_name': '__tensor__', 'config': [layer, node, index]}``.
"""

from minidl.layers.input_layer import InputLayer
from minidl.layers.nest import flatten, map_structure
from minidl.layers.serialization import deserialize, serialize
from minidl.layers.symbolic import SymbolicTensor

_TENSOR = '__tensor__'


def network_config(model):
    """The config dict of a functional ``model``."""
    node_index = {}
    for node in model._nodes:
        node_index[id(node)] = sum(1 for n in model._nodes
                                   if n.layer is node.layer and n.id < node.id)

    def reference(tensor):
        return [tensor.node.layer.name, node_index[id(tensor.node)], tensor.index]

    def kwarg(value):
        if isinstance(value, SymbolicTensor):
            return {'class_name': _TENSOR, 'config': reference(value)}
        return value

    layers = []
    for layer in model.layers:
        nodes = [node for node in model._nodes if node.layer is layer]
        inbound = [] if isinstance(layer, InputLayer) else [
            [reference(t) + [map_structure(kwarg, node.kwargs)] for t in flatten(node.inputs)]
            for node in nodes]
        entry = serialize(layer)
        entry.update(name=layer.name, inbound_nodes=inbound)
        layers.append(entry)

    def ends(structure):
        if isinstance(structure, list):
            return [reference(t) for t in structure]
        return reference(structure)

    return {'name': model.name, 'layers': layers,
            'input_layers': ends(model._input_structure),
            'output_layers': ends(model._output_structure)}


def network_from_config(cls, config, custom_objects=None):
    """Rebuild a functional model of class ``cls`` from :func:`network_config`'s dict."""
    try:
        layer_entries = list(config['layers'])
        made = {entry['name']: deserialize(entry, custom_objects) for entry in layer_entries}
    except (KeyError, TypeError) as error:
        raise ValueError(f'malformed model config: missing or wrong entry {error}') from None
    outputs = {name: [] for name in made}  # layer name -> outputs of each node replayed
    for name, layer in made.items():
        if isinstance(layer, InputLayer):
            outputs[name].append(layer.output)
    pending = {entry['name']: list(entry.get('inbound_nodes', [])) for entry in layer_entries}

    def tensor(reference):
        layer_name, node, index = reference[:3]
        if layer_name not in outputs:
            raise ValueError(f'malformed model config: unknown layer {layer_name!r}')
        if node >= len(outputs[layer_name]):
            return None
        return flatten(outputs[layer_name][node])[index]

    missing = object()

    def kwarg(value):
        if isinstance(value, dict) and value.get('class_name') == _TENSOR:
            found = tensor(value['config'])
            return missing if found is None else found
        if isinstance(value, dict):
            return {key: kwarg(item) for key, item in value.items()}
        if isinstance(value, list):
            return [kwarg(item) for item in value]
        return value

    progress = True
    while progress and any(pending.values()):
        progress = False
        for entry in layer_entries:
            name = entry['name']
            while pending[name]:
                node = pending[name][0]
                inputs = [tensor(reference) for reference in node]
                kwargs = kwarg(node[0][3] if node and len(node[0]) > 3 else {})
                if any(t is None for t in inputs) or any(v is missing for v in flatten(kwargs)):
                    break
                result = made[name](inputs[0] if len(inputs) == 1 else inputs, **kwargs)
                outputs[name].append(result)
                pending[name].pop(0)
                progress = True
    if any(pending.values()):
        stuck = sorted(name for name, nodes in pending.items() if nodes)
        raise ValueError(f'malformed model config: the graph cannot be rebuilt; layers '
                         f'{stuck} wait for tensors that no layer makes')

    def ends(structure):
        if structure and isinstance(structure[0], list):
            return [tensor(reference) for reference in structure]
        return tensor(structure)

    return cls(inputs=ends(config['input_layers']), outputs=ends(config['output_layers']),
               name=config.get('name'))
