"""What a model holds that data-parallel training must keep equal on every rank.

Besides the trainable weights (made equal by reducing their gradients),
these are: the *state* weights, non-trainable weights that a training step
changes (a trainable BatchNormalization layer's moving statistics, as
opposed to a frozen layer's weights), and the random generators that
random layers (Dropout) draw from.
"""

from minidl import Generator
from minidl.compute import default_generator
from minidl.layers import Layer


def all_layers(model):
    """The model and every layer inside it (nested models, wrapped layers), once each."""
    found, pending = {}, [model]
    while pending:
        layer = pending.pop()
        if id(layer) in found:
            continue
        found[id(layer)] = layer
        for value in vars(layer).values():
            if isinstance(value, Layer):
                pending.append(value)
            elif isinstance(value, (list, tuple)):
                pending.extend(item for item in value if isinstance(item, Layer))
    return list(found.values())


def state_weights(model):
    """Non-trainable weights of trainable layers (e.g. moving statistics), in model order."""
    frozen = {id(weight) for layer in all_layers(model) if not layer.trainable
              for weight in layer.weights}
    return [weight for weight in model.non_trainable_weights if id(weight) not in frozen]


def generators(model):
    """The default generator, then the generators the model's layers own, in model order.

    The order follows the model's structure, not layer names (automatic names
    differ between ranks that built other models before).
    """
    owned = {}
    for layer in all_layers(model):
        for name in sorted(vars(layer)):
            value = vars(layer)[name]
            if isinstance(value, Generator) and id(value) not in owned:
                owned[id(value)] = value
    return [default_generator()] + list(owned.values())
