"""Which weights training updates: those that were trainable when the model was compiled.

Keras 2 fixes a model's trainable weights when it is compiled (its
``_collected_trainable_weights``). Every Keras GAN relies on it::

    discriminator.compile(...)          # collects the discriminator's weights
    discriminator.trainable = False     # frozen from now on ...
    combined = Model(z, discriminator(generator(z)))
    combined.compile(...)               # ... so combined collects the generator's only

Training ``combined`` then leaves the discriminator's weights as they are,
while ``discriminator.train_on_batch`` still updates them. Changing
``trainable`` takes effect at the next ``compile``; until then, training (and
``summary``) warns with Keras's message when the number of trainable weights
differs from the number collected.

A model built only by its first data (a Sequential without an input shape,
a subclassed model) has no weights at ``compile``: its weights are collected
at its first training step, once built, as Keras 2's deferred compile does.
"""

import contextlib
import warnings

DISCREPANCY = ('Discrepancy between trainable weights and collected trainable weights, '
               'did you set `model.trainable` without calling `model.compile` after ?')


def collect(model):
    """The weights ``compile`` fixes: the trainable ones, or None while not built."""
    return list(model.trainable_weights) if model.built else None


def training_weights(model):
    """The weights training updates (collected now if the model was built since compile)."""
    collected = getattr(model, '_collected_trainable_weights', None)
    if collected is None:
        if not model.built:
            return model.trainable_weights
        collected = model._collected_trainable_weights = list(model.trainable_weights)
    return collected


def check_consistency(model, stacklevel=3):
    """Warn as Keras 2 does when ``trainable`` changed since compile (counts differ)."""
    collected = getattr(model, '_collected_trainable_weights', None)
    if collected is not None and len(model.trainable_weights) != len(collected):
        warnings.warn(DISCREPANCY, UserWarning, stacklevel=stacklevel)


@contextlib.contextmanager
def gradients_for(model, params):
    """Record gradients for exactly ``params`` among ``model``'s weights, inside the block.

    A weight records gradients when its layer is trainable now, but training
    follows the weights collected at compile: a discriminator frozen after
    its compile still trains in its own model, and weights unfrozen since
    compile should cost no gradient they will not use. Each weight's flag
    is put back on leaving.
    """
    current = model.trainable_weights
    if len(current) == len(params) and all(a is b for a, b in zip(current, params)):
        yield  # trainable as compiled: the flags already say so
        return
    wanted = {id(param) for param in params}
    flipped = []
    for weight in {id(w): w for w in list(model.weights) + list(params)}.values():
        if weight.requires_grad != (id(weight) in wanted):
            weight.requires_grad_(not weight.requires_grad)
            flipped.append(weight)
    try:
        yield
    finally:
        for weight in flipped:
            weight.requires_grad_(not weight.requires_grad)
