"""A byte limit on the weights that new layers create, and building them without drawing values.

A model rebuilt from a file is described by data that may be hostile: a
config asking for ``Dense(units=2**31)`` must be refused before its 24 GiB
kernel exists, and weights that the file's values will replace need not be
drawn from their initializers. Inside :func:`weight_budget`,
:meth:`Layer.add_weight` counts every new weight's bytes against the limit
before creating it, raising a ValueError that names the layer and the
shapes once the model's weights would exceed it, and (with ``draw=False``)
fills the weight with zeros instead of calling its initializer, which also
leaves the random generators untouched. The arrays a layer makes otherwise
while it is built (a stateful layer's states, the stand-in inputs that infer
output shapes) are checked against it too (:func:`reserve_array`). The
budget belongs to the thread that opened it.
"""

import contextlib
import math
import threading

_local = threading.local()


class _Budget:
    def __init__(self, max_bytes, draw, hint):
        self.max_bytes, self.draw, self.hint = max_bytes, draw, hint
        self.used = 0
        self.weights = []  # (layer name, weight name, shape, bytes) in creation order


@contextlib.contextmanager
def weight_budget(max_bytes, draw=True, hint=''):
    """Count the weights that layers create in this thread against ``max_bytes``.

    Args:
        max_bytes: The most bytes all new weights together may take.
        draw: Whether initializers run; if False, weights start as zeros
            (for weights about to be overwritten).
        hint: Appended to the error message (how to raise the limit).
    """
    previous = getattr(_local, 'budget', None)
    _local.budget = _Budget(int(max_bytes), draw, hint)
    try:
        yield
    finally:
        _local.budget = previous


def reserve(layer, name, shape, dtype):
    """Count a new weight of ``layer`` against the open budget, if any.

    Returns:
        Whether the weight's initializer should be run (False: make zeros).

    Raises:
        ValueError: If the weight would take the total past the limit.
    """
    budget = getattr(_local, 'budget', None)
    if budget is None:
        return True
    size = math.prod(shape) * dtype.itemsize
    if budget.used + size > budget.max_bytes:
        own = [f'{weight} {tuple(weight_shape)}' for owner, weight, weight_shape, _
               in budget.weights if owner == layer.name]
        own.append(f'{name} {tuple(shape)} {dtype}')
        raise ValueError(
            f'layer {layer.name!r} ({type(layer).__name__}) asks for weights '
            f'{", ".join(own)}; its weight {name} alone takes {_size(size)}, and with the '
            f'{_size(budget.used)} of the weights before it the model would need more than '
            f'the limit of {_size(budget.max_bytes)}, so nothing was allocated{budget.hint}')
    budget.used += size
    budget.weights.append((layer.name, name, shape, size))
    return budget.draw


def reserve_array(layer, what, shape, dtype, kept):
    """Count an array that ``layer`` makes outside :meth:`Layer.add_weight` while a model
    is built (a stateful layer's states, kept; a stand-in input that infers shapes,
    dropped at once) against the open budget, if any, before it is allocated.

    Raises:
        ValueError: If the array does not fit in what the weights before it left.
    """
    budget = getattr(_local, 'budget', None)
    if budget is None:
        return
    size = math.prod(1 if s is None else s for s in shape) * dtype.itemsize
    if budget.used + size > budget.max_bytes:
        raise ValueError(
            f'layer {layer.name!r} ({type(layer).__name__}) needs {what} of shape '
            f'{tuple(shape)} {dtype}, which takes {_size(size)}; with the '
            f'{_size(budget.used)} of the weights before it the model would need more than '
            f'the limit of {_size(budget.max_bytes)}, so nothing was allocated{budget.hint}')
    if kept:
        budget.used += size


def _size(count):
    """A byte count for people: '24.0 GiB (25769803776 bytes)'."""
    for unit, scale in (('GiB', 2 ** 30), ('MiB', 2 ** 20), ('KiB', 2 ** 10)):
        if count >= scale:
            return f'{count / scale:.1f} {unit} ({count} bytes)'
    return f'{count} bytes'
