"""Gradient clipping as Keras 2 applies it, before the update.

Clipping never changes the arrays in ``param.grad``: a clipped gradient is a
new array, an unclipped one is passed on as it is.
"""

import math

from minidl.compute import get_array_module


def l2_norm(array):
    """The L2 norm of an array, summed in float64 (the same bits on every call)."""
    xp = get_array_module(array)
    return math.sqrt(float(xp.sum(xp.square(array), dtype=xp.float64)))


def clip_gradients(grads, clipvalue=None, clipnorm=None, global_clipnorm=None):
    """The gradients clipped in Keras 2's order: by value, then by norm, then by global norm.

    Args:
        grads: List of gradient arrays.
        clipvalue: Clip each element to ``[-clipvalue, clipvalue]``.
        clipnorm: Scale each gradient whose L2 norm exceeds ``clipnorm`` down to
            that norm, each array on its own: ``g * clipnorm / max(norm(g), clipnorm)``.
        global_clipnorm: Scale all gradients by the same factor so that the
            norm of them all together is at most ``global_clipnorm``.

    Returns:
        A new list of arrays (the given ones where nothing changed).
    """
    grads = list(grads)
    if clipvalue is not None:
        grads = [get_array_module(g).clip(g, -clipvalue, clipvalue) for g in grads]
    if clipnorm is not None:
        grads = [_scaled(g, clipnorm, l2_norm(g)) for g in grads]
    if global_clipnorm is not None:
        total = math.sqrt(sum(l2_norm(g) ** 2 for g in grads))
        grads = [_scaled(g, global_clipnorm, total) for g in grads]
    return grads


def _scaled(grad, limit, norm):
    """``grad * limit / norm`` when ``norm`` exceeds ``limit`` (or is NaN), else ``grad`` itself."""
    if norm <= limit:
        return grad
    return grad * (limit / norm)
