"""Shapes, joins, repeats and selections of tensors, with Keras's backend arguments.

``slice`` is one of them, so Python's own is written ``builtins.slice`` here.
"""

import builtins

import numpy as np

import minidl.functions as F
from minidl.backend.config import floatx, normalize_data_format
from minidl.backend.convert import as_shape, as_tensor, data_of, wrap
from minidl.layers.operation import recordable


@recordable
def reshape(x, shape):
    """``x`` with a new shape (one entry may be -1)."""
    return F.reshape(as_tensor(x), as_shape(shape))


@recordable
def permute_dimensions(x, pattern):
    """``x`` with its axes reordered: output axis i is input axis ``pattern[i]``."""
    return F.transpose(as_tensor(x), tuple(pattern))


@recordable
def expand_dims(x, axis=-1):
    """``x`` with a new axis of size 1 at ``axis``."""
    return F.expand_dims(as_tensor(x), axis)


@recordable
def squeeze(x, axis):
    """``x`` without its axis ``axis`` of size 1."""
    return F.squeeze(as_tensor(x), axis)


@recordable
def flatten(x):
    """``x`` as a 1-D tensor."""
    return F.reshape(as_tensor(x), (-1,))


@recordable
def batch_flatten(x):
    """``x`` as (batch, everything else)."""
    x = as_tensor(x)
    return F.reshape(x, (x.shape[0], int(np.prod(x.shape[1:]))))


@recordable
def concatenate(tensors, axis=-1):
    """Join tensors along an existing axis."""
    return F.concat([as_tensor(t) for t in tensors], axis)


@recordable
def stack(x, axis=0):
    """Join tensors of one shape along a new axis."""
    return F.stack([as_tensor(t) for t in x], axis)


@recordable
def tile(x, n):
    """``x`` repeated ``n[i]`` times along axis i (``n`` as long as x has axes)."""
    x = as_tensor(x)
    counts = as_shape(n)
    if len(counts) != x.ndim:
        raise ValueError(f'tile: {len(counts)} repeat counts {counts} for a tensor of '
                         f'{x.ndim} dimensions')
    # Interleave a repeat axis before each axis, broadcast it, then merge the pairs.
    spread = F.reshape(x, tuple(size for axis_size in x.shape for size in (1, axis_size)))
    pairs = tuple(size for count, axis_size in zip(counts, x.shape) for size in (count, axis_size))
    return F.reshape(F.broadcast_to(spread, pairs),
                     tuple(count * size for count, size in zip(counts, x.shape)))


@recordable
def repeat_elements(x, rep, axis):
    """Each element repeated ``rep`` times along ``axis``, like ``numpy.repeat``."""
    x = as_tensor(x)
    axis = axis % x.ndim
    index = np.repeat(np.arange(x.shape[axis]), rep)
    return F.getitem(x, (builtins.slice(None),) * axis + (index,))


@recordable
def repeat(x, n):
    """A 2-D (batch, features) tensor repeated into (batch, n, features)."""
    x = as_tensor(x)
    if x.ndim != 2:
        raise ValueError(f'repeat takes a 2-D tensor, got shape {x.shape}')
    return F.broadcast_to(F.expand_dims(x, 1), (x.shape[0], int(n), x.shape[1]))


@recordable
def reverse(x, axes):
    """``x`` with the order of its elements reversed along ``axes`` (an int or a list)."""
    x = as_tensor(x)
    axes = {a % x.ndim for a in (axes if isinstance(axes, (list, tuple)) else [axes])}
    return F.getitem(x, tuple(builtins.slice(None, None, -1) if a in axes else builtins.slice(None)
                              for a in range(x.ndim)))


@recordable
def slice(x, start, size):
    """``x[start[0]:start[0] + size[0], ...]``; a size of -1 takes the rest of the axis."""
    x = as_tensor(x)
    start, size = as_shape(start), as_shape(size)
    return F.getitem(x, tuple(builtins.slice(first, None if count == -1 else first + count)
                              for first, count in zip(start, size)))


@recordable
def gather(reference, indices):
    """The rows ``reference[indices]`` (integer indices of any shape)."""
    indices = data_of(indices)
    return F.getitem(as_tensor(reference), np.asarray(indices) if isinstance(indices, list)
                     else indices)


@recordable
def one_hot(indices, num_classes):
    """One-hot vectors of integer ``indices``: shape ``indices.shape + (num_classes,)``."""
    indices = as_tensor(indices)
    xp = indices.xp
    return wrap(xp.eye(num_classes, dtype=floatx())[indices.data.astype(np.int64)])


@recordable
def arange(start, stop=None, step=1, dtype='int32'):
    """``[start, stop)`` by ``step`` (``arange(n)`` counts from 0), as a 1-D Tensor."""
    if stop is None:
        start, stop = 0, start
    return wrap(np.arange(start, stop, step, dtype=dtype))


@recordable
def temporal_padding(x, padding=(1, 1)):
    """Zeros added before and after the steps (axis 1) of a 3-D tensor."""
    return F.pad(as_tensor(x), ((0, 0), tuple(padding), (0, 0)))


@recordable
def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """Zeros added around the rows and columns of a 4-D tensor of images."""
    return _pad_spatial(x, padding, data_format)


@recordable
def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """Zeros added around the three spatial axes of a 5-D tensor."""
    return _pad_spatial(x, padding, data_format)


def _pad_spatial(x, padding, data_format):
    pads = [tuple(pair) for pair in padding]
    if normalize_data_format(data_format) == 'channels_first':
        pads = [(0, 0), (0, 0)] + pads
    else:
        pads = [(0, 0)] + pads + [(0, 0)]
    return F.pad(as_tensor(x), pads)


@recordable
def resize_images(x, height_factor, width_factor, data_format, interpolation='nearest'):
    """Images scaled up by whole factors, each pixel repeated (nearest neighbour)."""
    return _resize(x, (height_factor, width_factor), data_format, interpolation)


@recordable
def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Volumes scaled up by whole factors, each voxel repeated."""
    return _resize(x, (depth_factor, height_factor, width_factor), data_format, 'nearest')


def _resize(x, factors, data_format, interpolation):
    if interpolation != 'nearest':
        raise NotImplementedError(f'resizing by {interpolation!r} interpolation; only '
                                  f"'nearest' is available")
    first = 2 if normalize_data_format(data_format) == 'channels_first' else 1
    for offset, factor in enumerate(factors):
        x = repeat_elements(x, factor, first + offset)
    return x
