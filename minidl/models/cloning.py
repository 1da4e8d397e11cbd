"""``clone_model``: the same architecture made of new layers, with fresh weights (Keras 2's)."""

from minidl.layers.base import Layer
from minidl.layers.core import Lambda
from minidl.layers.input_layer import InputLayer
from minidl.layers.nest import flatten, map_structure
from minidl.registry import custom_object_scope
from minidl.layers.symbolic import SymbolicTensor
from minidl.models.model import Model
from minidl.models.network import Network
from minidl.models.sequential import Sequential


def clone_model(model, input_tensors=None):
    """A new model with ``model``'s architecture, its layers made anew from their configs.

    The new layers have the configs (names included) of the old ones and
    newly initialised weights; copy the weights with
    ``clone.set_weights(model.get_weights())``. A layer used at several
    places of a functional graph is made once and stays shared; inner models
    are cloned the same way. What is not architecture is not copied: the
    compile settings and the losses given to ``model.add_loss``.

    Args:
        model: A Sequential or functional model (a subclassed model's
            architecture is Python code, which cannot be cloned).
        input_tensors: Symbolic tensors from ``Input`` to build the clone on,
            one per model input (a list, or one tensor); by default new
            inputs like the model's.

    Returns:
        A ``Sequential`` for a Sequential model, else a functional ``Model``.

    Raises:
        ValueError: For a subclassed model, or input tensors that do not
            come from ``Input`` or do not match the model's inputs in number.
    """
    if not isinstance(model, Network):
        raise TypeError(f'clone_model takes a model, got {model!r}')
    if input_tensors is not None:
        input_tensors = _checked_inputs(model, input_tensors)
    if isinstance(model, Sequential):
        return _clone_sequential(model, input_tensors)
    if not model.outputs:
        raise ValueError(f'model {model.name!r} is a subclassed model: its architecture is '
                         f'Python code, which clone_model cannot copy; make a new instance')
    return _clone_functional(model, input_tensors)


def _checked_inputs(model, input_tensors):
    tensors = flatten(input_tensors)
    expected = 1 if isinstance(model, Sequential) else len(model.inputs)
    if len(tensors) != expected:
        raise ValueError(f'clone_model: model {model.name!r} has {expected} input(s), but '
                         f'{len(tensors)} input tensor(s) were given')
    for tensor in tensors:
        if not (isinstance(tensor, SymbolicTensor) and isinstance(tensor.node.layer, InputLayer)):
            raise ValueError(f'clone_model: input_tensors must come from Input(...), got '
                             f'{tensor!r}')
    return tensors


def _clone_sequential(model, input_tensors):
    layers = [_clone_layer(layer) for layer in model.layers]
    if input_tensors is not None:
        layers.insert(0, input_tensors[0])
    elif model._input_layer is not None:
        layers.insert(0, InputLayer.from_config(model._input_layer.get_config()))
    return Sequential(layers, name=model.name)


def _clone_functional(model, input_tensors):
    if input_tensors is None:
        input_tensors = [InputLayer.from_config(t.node.layer.get_config()).output
                         for t in model.inputs]
    values = {id(old): new for old, new in zip(model.inputs, input_tensors)}

    def value_of(leaf):
        return values[id(leaf)] if isinstance(leaf, SymbolicTensor) else leaf

    clones = {}
    for node in model._nodes:
        if isinstance(node.layer, InputLayer) or node.layer.computes_mask:
            continue  # masks are made again by the cloned layers
        if id(node.layer) not in clones:
            clones[id(node.layer)] = _clone_layer(node.layer)
        outputs = clones[id(node.layer)](map_structure(value_of, node.inputs),
                                         **map_structure(value_of, node.kwargs))
        for old, new in zip(flatten(node.outputs), flatten(outputs)):
            values[id(old)] = new
    return Model(map_structure(value_of, model._input_structure),
                 map_structure(value_of, model._output_structure), name=model.name)


def _clone_layer(layer):
    """A new layer with ``layer``'s config and fresh weights."""
    if isinstance(layer, Network):
        return clone_model(layer)
    if isinstance(layer, Lambda):
        # Its function is code, absent from configs: the clone calls the same function.
        return Lambda(layer.function, output_shape=layer._output_shape, mask=layer.mask,
                      arguments=layer.arguments, **Layer.get_config(layer))
    classes = {type(inner).__name__: type(inner) for inner in layer.flatten_layers()}
    with custom_object_scope(classes):
        return type(layer).from_config(layer.get_config())
