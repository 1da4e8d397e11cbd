"""Elementwise arithmetic, comparisons and products of tensors, as Keras's backend has them.

Arguments may be Tensors, arrays or numbers. Comparisons, ``round`` and
``sign`` have no gradient (their results are constants of the graph), as
in Keras.
"""

import numpy as np

import minidl.functions as F
from minidl.backend.convert import as_tensor, data_of, wrap
from minidl.compute import get_array_module
from minidl.layers.operation import recordable


@recordable
def square(x):
    """Elementwise ``x ** 2``."""
    x = as_tensor(x)
    return x * x


@recordable
def abs(x):
    """Elementwise absolute value."""
    return F.abs(as_tensor(x))


@recordable
def sqrt(x):
    """Elementwise square root, of ``x`` clipped at 0 first (as Keras does)."""
    return F.sqrt(F.clip(as_tensor(x), 0.0, None))


@recordable
def exp(x):
    """Elementwise exponential."""
    return F.exp(as_tensor(x))


@recordable
def log(x):
    """Elementwise natural logarithm."""
    return F.log(as_tensor(x))


@recordable
def pow(x, a):
    """Elementwise ``x ** a``."""
    return F.pow(as_tensor(x), a)


@recordable
def sin(x):
    """Elementwise sine."""
    return F.sin(as_tensor(x))


@recordable
def cos(x):
    """Elementwise cosine."""
    return F.cos(as_tensor(x))


@recordable
def round(x):
    """Elementwise rounding to the nearest integer, halves to even (no gradient)."""
    x = as_tensor(x)
    return wrap(x.xp.round(x.data))


@recordable
def sign(x):
    """Elementwise sign: -1, 0 or 1 (no gradient)."""
    x = as_tensor(x)
    return wrap(x.xp.sign(x.data))


@recordable
def clip(x, min_value, max_value):
    """Elementwise clipping into ``[min_value, max_value]`` (either may be None).

    As in Keras, a ``max_value`` below ``min_value`` is raised to it.
    """
    if min_value is not None and max_value is not None and max_value < min_value:
        max_value = min_value
    return F.clip(as_tensor(x), min_value, max_value)


@recordable
def maximum(x, y):
    """Elementwise maximum."""
    return F.maximum(x, y)


@recordable
def minimum(x, y):
    """Elementwise minimum."""
    return F.minimum(x, y)


def _comparison(compare, name, sign):
    def comparison(x, y):
        a, b = data_of(x), data_of(y)
        return wrap(compare(get_array_module(a, b).asarray(a), b))
    comparison.__name__ = comparison.__qualname__ = name
    comparison.__doc__ = f'Elementwise ``x {sign} y`` (a boolean Tensor).'
    return recordable(comparison)


equal = _comparison(np.equal, 'equal', '==')
not_equal = _comparison(np.not_equal, 'not_equal', '!=')
greater = _comparison(np.greater, 'greater', '>')
greater_equal = _comparison(np.greater_equal, 'greater_equal', '>=')
less = _comparison(np.less, 'less', '<')
less_equal = _comparison(np.less_equal, 'less_equal', '<=')


@recordable
def transpose(x):
    """``x`` with its axes reversed."""
    return F.transpose(as_tensor(x))


@recordable
def dot(x, y):
    """Matrix product; for more than two dimensions, Theano's rule as in Keras.

    The last axis of ``x`` is contracted with the second-to-last of ``y``:
    shapes (2, 3) and (4, 3, 5) give (2, 4, 5).
    """
    x, y = as_tensor(x), as_tensor(y)
    if y.ndim < 2 or (x.ndim <= 2 and y.ndim == 2):
        return F.matmul(x, y)
    moved = list(range(y.ndim))
    moved.insert(0, moved.pop(-2))
    rows = F.reshape(x, (-1, x.shape[-1]))
    columns = F.reshape(F.transpose(y, moved), (y.shape[-2], -1))
    return F.reshape(F.matmul(rows, columns), x.shape[:-1] + y.shape[:-2] + y.shape[-1:])


@recordable
def batch_dot(x, y, axes=None):
    """Dot product of each sample of ``x`` with the same sample of ``y``.

    Args:
        x: Tensor of shape (batch, ...), at least 2-D.
        y: Tensor of shape (batch, ...), at least 2-D.
        axes: The axis of ``x`` and the axis of ``y`` contracted: an int for
            both, or a pair. By default the last axis of ``x`` with the
            second-to-last of ``y`` (the last, when ``y`` is 2-D), a batched
            matrix product.

    Returns:
        The shape of ``x`` without its contracted axis, then that of ``y``
        without its batch and contracted axes; (batch, 1) rather than (batch,).
    """
    x, y = as_tensor(x), as_tensor(y)
    if x.ndim < 2 or y.ndim < 2:
        raise ValueError(f'batch_dot needs tensors of at least 2 dimensions, got shapes '
                         f'{x.shape} and {y.shape}')
    if axes is None:
        axes = (x.ndim - 1, y.ndim - 1 if y.ndim == 2 else y.ndim - 2)
    elif isinstance(axes, (int, np.integer)):
        axes = (axes, axes)
    x_axis, y_axis = (int(axis) % tensor.ndim for axis, tensor in zip(axes, (x, y)))
    if x_axis == 0 or y_axis == 0 or x.shape[x_axis] != y.shape[y_axis]:
        raise ValueError(f'batch_dot cannot contract axis {axes[0]} of shape {x.shape} with axis '
                         f'{axes[1]} of shape {y.shape} (not the batch axis; equal sizes)')
    x_rest = [axis for axis in range(1, x.ndim) if axis != x_axis]
    y_rest = [axis for axis in range(1, y.ndim) if axis != y_axis]
    x_kept = tuple(x.shape[axis] for axis in x_rest)
    y_kept = tuple(y.shape[axis] for axis in y_rest)
    batch, size = x.shape[0], x.shape[x_axis]
    rows = F.reshape(F.transpose(x, [0] + x_rest + [x_axis]),
                     (batch, int(np.prod(x_kept)), size))
    columns = F.reshape(F.transpose(y, [0, y_axis] + y_rest),
                        (batch, size, int(np.prod(y_kept))))
    result = F.reshape(F.matmul(rows, columns), (batch,) + x_kept + y_kept)
    return F.expand_dims(result, 1) if result.ndim == 1 else result
