"""Window geometry shared by convolution and pooling.

Padding ('valid', TensorFlow's 'same', explicit sizes), output sizes, the
slices each kernel offset pairs between input and output, zero padding, and
im2col: the matrix of every window of an NHWC array, read through a strided
view (``as_strided``, no copy until it is gathered).
"""

import math

import numpy as np


def as_tuple(value, rank, name):
    """``value`` (an int, or ``rank`` ints) as ``rank`` positive ints, one per spatial axis."""
    values = (value,) * rank if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) != rank or not all(isinstance(v, (int, np.integer)) and v >= 1
                                      for v in values):
        count = 'a pair of' if rank == 2 else f'{rank}'
        raise ValueError(f'{name} must be a positive int or {count} positive ints, got {value!r}')
    return tuple(int(v) for v in values)


def as_pair(value, name):
    """``value`` (an int or a pair of ints) as a pair of positive ints."""
    return as_tuple(value, 2, name)


def resolve_padding(padding, sizes, windows, strides, dilations=None):
    """Explicit ``((top, bottom), (left, right))`` padding for a 2-D window op.

    Args:
        padding: 'valid', 'same' (TensorFlow's: ``ceil(size / stride)``
            outputs, the odd padded cell at the bottom/right), an int, a pair
            ``(rows, cols)`` or a pair of pairs ``((top, bottom), (left, right))``.
        sizes: Input ``(height, width)``.
        windows: Window ``(height, width)`` before dilation.
        strides: ``(row, col)`` strides.
        dilations: ``(row, col)`` dilation rates (1 when None).

    Any number of spatial axes works the same way, one pair per axis;
    explicit padding needs no sizes (None is taken as two axes).
    """
    rank = 2 if sizes is None else len(sizes)
    if isinstance(padding, str):
        mode = padding.lower()
        if mode == 'valid':
            return ((0, 0),) * rank
        if mode == 'same':
            dilations = (1,) * rank if dilations is None else dilations
            return tuple(_same_padding(*args) for args in zip(sizes, windows, strides, dilations))
        raise ValueError(f"padding must be 'valid', 'same' or explicit sizes, got {padding!r}")
    if isinstance(padding, (int, np.integer)):
        padding = (padding,) * rank
    try:
        pads = tuple((p, p) if isinstance(p, (int, np.integer)) else tuple(p) for p in padding)
        valid = len(pads) == rank and all(
            len(p) == 2 and all(isinstance(v, (int, np.integer)) and v >= 0 for v in p)
            for p in pads)
    except TypeError:
        valid = False
    if not valid:
        raise ValueError(f'padding must be an int, (rows, cols) or ((top, bottom), (left, right)) '
                         f'of non-negative ints, got {padding!r}')
    return tuple((int(a), int(b)) for a, b in pads)


def _same_padding(size, window, stride, dilation):
    extent = dilation * (window - 1) + 1
    total = max((-(-size // stride) - 1) * stride + extent - size, 0)
    return total // 2, total - total // 2


def output_size(size, pads, window, stride, dilation=1):
    """Number of window positions along one axis (may be <= 0 if none fit)."""
    return (size + pads[0] + pads[1] - dilation * (window - 1) - 1) // stride + 1


def im2col(xp, padded, out_size, window, strides, dilations):
    """The ``(N*OH*OW, kh*kw*C)`` matrix of every window of an NHWC array.

    Any number of spatial axes works the same way (NDHWC gives
    ``(N*OD*OH*OW, kd*kh*kw*C)``); the runs below are along the last one.

    ``padded`` may have any strides (a transposed NCHW array works). The
    copy's cost is mostly per run of values it reads in order, so the matrix
    is gathered in whichever memory order makes the longer runs: row-major (a
    window row, ``kw*C`` adjacent values when channels are innermost) or
    column-major (an output row, ``OW`` values ``stride`` pixels apart: long
    runs for few channels or NCHW data). A run of spread-out values counts as
    proportionally shorter, as each value then costs its own cache line.
    BLAS consumes either order without a further copy.
    """
    n, c = padded.shape[0], padded.shape[-1]
    s_n, *s_spatial, s_c = padded.strides
    s_w = s_spatial[-1]
    item = padded.itemsize
    rows, cols = n * math.prod(out_size), math.prod(window) * c
    row_run = (window[-1] * c if s_w * dilations[-1] == c * item else c) if s_c == item else 1
    column_run = out_size[-1] * item / (s_w * strides[-1])
    window_strides = tuple(s * d for s, d in zip(s_spatial, dilations))
    output_strides = tuple(s * t for s, t in zip(s_spatial, strides))
    if column_run > row_run:
        view = xp.lib.stride_tricks.as_strided(
            padded, shape=(*window, c, n, *out_size),
            strides=(*window_strides, s_c, s_n, *output_strides))
        return view.reshape(cols, rows).T
    view = xp.lib.stride_tricks.as_strided(
        padded, shape=(n, *out_size, *window, c),
        strides=(s_n, *output_strides, *window_strides, s_c))
    return view.reshape(rows, cols)


def offset_slices(size, pads, window, stride, dilation, out_size):
    """For each kernel offset along one axis, the (input, output) slices it pairs.

    Output position ``o`` reads input ``o*stride + offset*dilation - pad_before``;
    positions that fall in the padding are left out, so the slices index the
    unpadded input and the matching part of the output.
    """
    pairs = []
    for offset in range(window):
        start = offset * dilation - pads[0]
        first = max(0, -(-(-start) // stride))  # first output whose input is >= 0
        last = min(out_size - 1, (size - 1 - start) // stride)  # last one inside
        if first > last:
            pairs.append(None)
            continue
        begin = first * stride + start
        pairs.append((slice(begin, begin + (last - first) * stride + 1, stride),
                      slice(first, last + 1)))
    return pairs


def pad_spatial(xp, x, pads, axes, fill=0):
    """``x`` copied into a buffer padded with ``fill`` along ``axes`` (H, W)."""
    shape = list(x.shape)
    inner = [slice(None)] * x.ndim
    for axis, (before, after) in zip(axes, pads):
        inner[axis] = slice(before, before + shape[axis])
        shape[axis] += before + after
    padded = xp.full(shape, fill, dtype=x.dtype)
    padded[tuple(inner)] = x
    return padded
