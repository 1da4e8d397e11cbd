"""Shape and indexing: reshape, transpose, concat, stack, split, pad, getitem,
broadcast_to, expand_dims, squeeze, cast.
"""

import numpy as np

from minidl.compute import get_array_module
from minidl.functions.scatter import index_add
from minidl.tensor import Function, Tensor


class Reshape(Function):
    def __init__(self, shape):
        self.shape = tuple(shape) if not isinstance(shape, int) else (shape,)

    def forward(self, x):
        self.input_shape = x.shape
        return x.reshape(self.shape)

    def backward(self, grad):
        return grad.reshape(self.input_shape)


class Transpose(Function):
    """Permute axes (reverse them when ``axes`` is None)."""

    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, x):
        self.axes = tuple(reversed(range(x.ndim))) if self.axes is None else tuple(self.axes)
        return x.transpose(self.axes)

    def backward(self, grad):
        inverse = [0] * len(self.axes)
        for position, axis in enumerate(self.axes):
            inverse[axis] = position
        return grad.transpose(inverse)


class Concat(Function):
    def __init__(self, axis=0):
        self.axis = axis

    def forward(self, *xs):
        self.sizes = [x.shape[self.axis] for x in xs]
        return self.xp.concatenate(xs, axis=self.axis)

    def backward(self, grad):
        bounds = _cumulative(self.sizes)[:-1]
        return tuple(self.xp.split(grad, bounds, axis=self.axis))


class Stack(Function):
    def __init__(self, axis=0):
        self.axis = axis

    def forward(self, *xs):
        return self.xp.stack(xs, axis=self.axis)

    def backward(self, grad):
        return tuple(self.xp.moveaxis(grad, self.axis, 0))


class Split(Function):
    """Split into equal sections (an int) or at the given indices (a list)."""

    def __init__(self, indices_or_sections, axis=0):
        self.indices_or_sections, self.axis = indices_or_sections, axis

    def forward(self, x):
        return tuple(self.xp.split(x, self.indices_or_sections, axis=self.axis))

    def backward(self, *grads):
        return self.xp.concatenate(grads, axis=self.axis)


class Pad(Function):
    """Constant padding; ``pad_width`` as numpy's ((before, after), ...) per axis."""

    def __init__(self, pad_width, value=0.0):
        self.pad_width, self.value = pad_width, value

    def forward(self, x):
        self.pad_width = [tuple(p) for p in np.broadcast_to(
            np.asarray(self.pad_width), (x.ndim, 2)).tolist()]
        return self.xp.pad(x, self.pad_width, constant_values=self.value)

    def backward(self, grad):
        return grad[tuple(slice(before, n - after)
                          for (before, after), n in zip(self.pad_width, grad.shape))]


class GetItem(Function):
    """``x[index]`` with basic (slices, ints, None, Ellipsis) or integer/boolean array indices."""

    def __init__(self, index):
        self.index = index

    def forward(self, x):
        self.input_shape = x.shape
        return x[self.index]

    def backward(self, grad):
        xp = self.xp
        if not _is_advanced(self.index):
            # Basic indexing selects each element at most once: scatter by assignment.
            grad_x = xp.zeros(self.input_shape, grad.dtype)
            grad_x[self.index] = grad
            return grad_x
        # An element may be selected several times: sum deterministically by flat position.
        size = 1
        for n in self.input_shape:
            size *= n
        positions = xp.arange(size).reshape(self.input_shape)[self.index]
        return index_add(positions.reshape(-1), grad.reshape(-1), size).reshape(self.input_shape)


class BroadcastTo(Function):
    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, x):
        return self.xp.broadcast_to(x, self.shape)

    def backward(self, grad):
        return grad  # the engine sums it back to the input's shape


class ExpandDims(Function):
    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        self.input_shape = x.shape
        return self.xp.expand_dims(x, self.axis)

    def backward(self, grad):
        return grad.reshape(self.input_shape)


class Squeeze(Function):
    def __init__(self, axis=None):
        self.axis = axis

    def forward(self, x):
        self.input_shape = x.shape
        return self.xp.squeeze(x, self.axis)

    def backward(self, grad):
        return grad.reshape(self.input_shape)


class Cast(Function):
    """Convert to another floating dtype; the gradient is converted back."""

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, x):
        self.input_dtype = x.dtype
        return x.astype(self.dtype)

    def backward(self, grad):
        return grad.astype(self.input_dtype)


def _cumulative(sizes):
    total, out = 0, []
    for size in sizes:
        total += size
        out.append(total)
    return out


def _is_advanced(index):
    parts = index if isinstance(index, tuple) else (index,)
    return any(hasattr(part, 'shape') and hasattr(part, 'dtype') for part in parts)


def _unwrap_index(index, xp):
    """Replace tensors and lists inside an index by arrays."""
    if isinstance(index, tuple):
        return tuple(_unwrap_index(part, xp) for part in index)
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, list):
        return xp.asarray(index)
    return index


def reshape(x, shape):
    """``x`` with a new shape of the same size (one entry may be -1)."""
    return Reshape(shape)(x)


def transpose(x, axes=None):
    """Permute the axes of ``x`` (reverse them if ``axes`` is None)."""
    return Transpose(axes)(x)


def concat(xs, axis=0):
    """Join tensors along an existing axis."""
    return Concat(axis)(*xs)


def stack(xs, axis=0):
    """Join tensors of one shape along a new axis."""
    return Stack(axis)(*xs)


def split(x, indices_or_sections, axis=0):
    """Split ``x`` into a tuple of tensors, as ``numpy.split``."""
    return Split(indices_or_sections, axis)(x)


def pad(x, pad_width, value=0.0):
    """Pad with a constant; ``pad_width`` as in ``numpy.pad``."""
    return Pad(pad_width, value)(x)


def getitem(x, index):
    """``x[index]``: slices, ints, None, Ellipsis, integer or boolean arrays."""
    xp = get_array_module(x.data if isinstance(x, Tensor) else x)
    return GetItem(_unwrap_index(index, xp))(x)


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape``."""
    return BroadcastTo(shape)(x)


def expand_dims(x, axis):
    """``x`` with a new size-1 axis at ``axis``."""
    return ExpandDims(axis)(x)


def squeeze(x, axis=None):
    """``x`` without size-1 axes (only ``axis`` if given)."""
    return Squeeze(axis)(x)


def cast(x, dtype):
    """``x`` converted to ``dtype`` (differentiable between floating dtypes)."""
    return Cast(dtype)(x)
