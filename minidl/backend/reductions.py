"""Reductions over axes and running totals, with Keras's arguments.

``axis`` is None (all axes), an int or a list of ints; ``keepdims`` keeps the
reduced axes with size 1. Means and variances of integer or boolean tensors
are taken in ``floatx()``, as Keras does.
"""

import minidl.functions as F
from minidl.backend.config import floatx
from minidl.backend.convert import as_axis, as_tensor, wrap
from minidl.layers.operation import recordable


@recordable
def sum(x, axis=None, keepdims=False):
    """Sum of the elements over ``axis``."""
    return F.sum(as_tensor(x), as_axis(axis), keepdims)


@recordable
def prod(x, axis=None, keepdims=False):
    """Product of the elements over ``axis``."""
    return F.prod(as_tensor(x), as_axis(axis), keepdims)


@recordable
def mean(x, axis=None, keepdims=False):
    """Mean over ``axis``."""
    return F.mean(_floating(x), as_axis(axis), keepdims)


@recordable
def var(x, axis=None, keepdims=False):
    """Variance over ``axis`` (the biased estimate, dividing by the count)."""
    return F.var(_floating(x), as_axis(axis), keepdims)


@recordable
def std(x, axis=None, keepdims=False):
    """Standard deviation over ``axis`` (the square root of :func:`var`)."""
    return F.sqrt(F.var(_floating(x), as_axis(axis), keepdims))


@recordable
def max(x, axis=None, keepdims=False):
    """Maximum over ``axis``."""
    return F.max(as_tensor(x), as_axis(axis), keepdims)


@recordable
def min(x, axis=None, keepdims=False):
    """Minimum over ``axis``."""
    return F.min(as_tensor(x), as_axis(axis), keepdims)


@recordable
def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over ``axis``, computed without overflow."""
    return F.logsumexp(as_tensor(x), as_axis(axis), keepdims)


@recordable
def any(x, axis=None, keepdims=False):
    """Whether any element over ``axis`` is nonzero (a boolean Tensor)."""
    x = as_tensor(x)
    return wrap(x.xp.any(x.data.astype(bool), axis=as_axis(axis), keepdims=keepdims))


@recordable
def all(x, axis=None, keepdims=False):
    """Whether every element over ``axis`` is nonzero (a boolean Tensor)."""
    x = as_tensor(x)
    return wrap(x.xp.all(x.data.astype(bool), axis=as_axis(axis), keepdims=keepdims))


@recordable
def argmax(x, axis=-1):
    """Index of the largest element along ``axis`` (int64; the first on ties)."""
    x = as_tensor(x)
    return wrap(x.xp.argmax(x.data, axis=axis))


@recordable
def argmin(x, axis=-1):
    """Index of the smallest element along ``axis`` (int64; the first on ties)."""
    x = as_tensor(x)
    return wrap(x.xp.argmin(x.data, axis=axis))


@recordable
def cumsum(x, axis=0):
    """Running sum along ``axis``."""
    return F.cumsum(as_tensor(x), axis)


@recordable
def cumprod(x, axis=0):
    """Running product along ``axis``."""
    return F.cumprod(as_tensor(x), axis)


def _floating(x):
    x = as_tensor(x)
    return x if x.dtype.kind == 'f' else F.cast(x, floatx())
