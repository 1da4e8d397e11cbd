"""What a model holds that data-parallel training must keep equal on every rank.

Besides the trainable weights (made equal by reducing their gradients),
these are: the *state* weights, non-trainable weights that a training step
changes (a trainable BatchNormalization layer's moving statistics, as
opposed to a frozen layer's weights), and the random generators that
random layers (Dropout) draw from.
"""

from minidl.compute import default_generator


def state_weights(model):
    """Non-trainable weights of trainable layers (e.g. moving statistics), in model order."""
    frozen = {id(weight) for layer in model.flatten_layers() if not layer.trainable
              for weight in layer.weights}
    return [weight for weight in model.non_trainable_weights if id(weight) not in frozen]


def generators(model):
    """The default generator, then the model's own generators, in the model's structure order.

    The order follows the model's structure, not layer names (automatic names
    differ between ranks that built other models before). The default
    generator is included for what draws from it during training (data
    augmentation given no seed of its own).
    """
    return [default_generator()] + [generator for _, generator in model.named_generators()]


def held_bytes(model):
    """Bytes of weights and optimizer state that this rank holds for ``model``.

    With model-parallel layers each rank holds only its shards (and their
    optimizer slots); with data parallelism every rank holds everything.
    """
    arrays = [weight.data for weight in model.weights]
    optimizer = model.optimizer
    if optimizer is not None and optimizer.built:
        arrays += [optimizer.get_slot(param, slot) for param in model.trainable_weights
                   for slot in optimizer.slot_names]
    return int(sum(array.nbytes for array in arrays))
