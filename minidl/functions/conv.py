"""Convolutions: conv2d and conv1d with Keras kernel layouts.

The CPU algorithm is im2col + GEMM. A strided view of the padded input
(``as_strided``, no copy) presents each output position's receptive field as
one row of a ``(positions, kh*kw*in)`` matrix; copying it out and multiplying
by the kernel reshaped to ``(kh*kw*in, out)`` gives the output in one GEMM.
Channels-last is the natural layout (a Keras kernel flattens in the same
order as a window of an NHWC image); channels-first data is read through a
transposed view and its output transposed back.

Backward takes the kernel gradient as ``columns.T @ grad`` and the input
gradient by col2im: ``grad @ kernel_matrix.T`` is formed one kernel offset's
column block at a time, and each block is added to the strided slice of the
input that the offset read (kh*kw vectorised adds; no ``add.at``). Large
batches are processed in cache-sized chunks of images (see :class:`Conv2D`).

:func:`resolve_padding`, :func:`output_size` and :func:`offset_slices` are
shared with :mod:`minidl.functions.pooling`.
"""

import numpy as np

from minidl.tensor import Function


def as_pair(value, name):
    """``value`` (an int or a pair of ints) as a pair of positive ints."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) and v >= 1 for v in pair):
        raise ValueError(f'{name} must be a positive int or a pair of positive ints, got {value!r}')
    return tuple(int(v) for v in pair)


def resolve_padding(padding, sizes, windows, strides, dilations=(1, 1)):
    """Explicit ``((top, bottom), (left, right))`` padding for a 2-D window op.

    Args:
        padding: 'valid', 'same' (TensorFlow's: ``ceil(size / stride)``
            outputs, the odd padded cell at the bottom/right), an int, a pair
            ``(rows, cols)`` or a pair of pairs ``((top, bottom), (left, right))``.
        sizes: Input ``(height, width)``.
        windows: Window ``(height, width)`` before dilation.
        strides: ``(row, col)`` strides.
        dilations: ``(row, col)`` dilation rates.
    """
    if isinstance(padding, str):
        mode = padding.lower()
        if mode == 'valid':
            return (0, 0), (0, 0)
        if mode == 'same':
            return tuple(_same_padding(*args) for args in zip(sizes, windows, strides, dilations))
        raise ValueError(f"padding must be 'valid', 'same' or explicit sizes, got {padding!r}")
    if isinstance(padding, (int, np.integer)):
        padding = (padding, padding)
    try:
        pads = tuple((p, p) if isinstance(p, (int, np.integer)) else tuple(p) for p in padding)
        valid = len(pads) == 2 and all(
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

    ``padded`` may have any strides (a transposed NCHW array works). The
    copy's cost is mostly per run of values it reads in order, so the matrix
    is gathered in whichever memory order makes the longer runs: row-major (a
    window row, ``kw*C`` adjacent values when channels are innermost) or
    column-major (an output row, ``OW`` values ``stride`` pixels apart: long
    runs for few channels or NCHW data). A run of spread-out values counts as
    proportionally shorter, as each value then costs its own cache line.
    BLAS consumes either order without a further copy.
    """
    n, _, _, c = padded.shape
    s_n, s_h, s_w, s_c = padded.strides
    item = padded.itemsize
    rows, cols = n * out_size[0] * out_size[1], window[0] * window[1] * c
    row_run = (window[1] * c if s_w * dilations[1] == c * item else c) if s_c == item else 1
    column_run = out_size[1] * item / (s_w * strides[1])
    if column_run > row_run:
        view = xp.lib.stride_tricks.as_strided(
            padded, shape=(*window, c, n, *out_size),
            strides=(s_h * dilations[0], s_w * dilations[1], s_c,
                     s_n, s_h * strides[0], s_w * strides[1]))
        return view.reshape(cols, rows).T
    view = xp.lib.stride_tricks.as_strided(
        padded, shape=(n, *out_size, *window, c),
        strides=(s_n, s_h * strides[0], s_w * strides[1],
                 s_h * dilations[0], s_w * dilations[1], s_c))
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


class Conv2D(Function):
    """2-D convolution (cross-correlation) of ``x`` with a Keras kernel, plus bias.

    Inputs are ``x`` (NHWC, or NCHW when ``channels_first``), ``kernel``
    ``(kh, kw, in, out)`` and optionally ``bias`` ``(out,)``.

    The batch is processed in chunks of images whose im2col matrix is about
    ``CHUNK_BYTES``, so that each matrix is still in cache when its GEMM
    reads it: small-channel layers are otherwise bound by memory traffic.
    When the batch needs several chunks their matrices are not kept: backward
    rebuilds them from the saved input, which is cheaper than reading them
    back from memory and keeps a network's saved state to its activations.
    """

    CHUNK_BYTES = 4 << 20

    def __init__(self, strides, pads, dilations, channels_first):
        self.strides, self.pads, self.dilations = strides, pads, dilations
        self.channels_first = channels_first

    def forward(self, x, kernel, *bias):
        xp = self.xp
        if self.pads != ((0, 0), (0, 0)):
            x = pad_spatial(xp, x, self.pads, (2, 3) if self.channels_first else (1, 2))
        if self.channels_first:
            x = x.transpose(0, 2, 3, 1)
        n, c = x.shape[0], x.shape[3]
        kh, kw, _, out = kernel.shape
        self.kernel = kernel
        self.in_shape = (n,) + tuple(
            size - sum(pads) for size, pads in zip(x.shape[1:3], self.pads)) + (c,)
        self.out_size = tuple(output_size(size, (0, 0), *args) for size, args in zip(
            x.shape[1:3], zip((kh, kw), self.strides, self.dilations)))
        rows = self.out_size[0] * self.out_size[1]
        dtype = xp.result_type(x, kernel)
        self.chunk = max(1, self.CHUNK_BYTES // (rows * kh * kw * c * dtype.itemsize))
        kernel_matrix = kernel.reshape(kh * kw * c, out)
        y = xp.empty((n * rows, out), dtype=dtype)
        if bias:
            # Added one output row (OW pixels) at a time: far fewer, longer
            # runs than one pixel's few channels at a time.
            row_bias = xp.tile(bias[0].astype(dtype, copy=False), self.out_size[1])
        chunks, columns = self._chunks(), None
        for images, chunk_rows in chunks:
            columns = self._columns(x, images)
            y_chunk = y[chunk_rows]
            xp.matmul(columns, kernel_matrix, out=y_chunk)
            if bias:
                y_rows = y_chunk.reshape(-1, row_bias.size)
                y_rows += row_bias
        # The kernel gradient needs the columns: keep a single chunk's, or
        # else the input to rebuild them from.
        keep = self.needs_input_grad[1]
        self.columns = columns if keep and len(chunks) == 1 else None
        self.x = x if keep and len(chunks) > 1 else None
        y = y.reshape(n, *self.out_size, out)
        return xp.ascontiguousarray(y.transpose(0, 3, 1, 2)) if self.channels_first else y

    def _chunks(self):
        """(images, im2col rows) slices of each chunk of the batch."""
        rows = self.out_size[0] * self.out_size[1]
        return [(slice(start, start + self.chunk),
                 slice(start * rows, (start + self.chunk) * rows))
                for start in range(0, self.in_shape[0], self.chunk)]

    def _columns(self, x, images):
        kh, kw = self.kernel.shape[:2]
        return im2col(self.xp, x[images], self.out_size, (kh, kw), self.strides, self.dilations)

    def backward(self, grad):
        xp = self.xp
        if self.channels_first:
            grad = grad.transpose(0, 2, 3, 1)
        grad = xp.ascontiguousarray(grad).reshape(-1, self.kernel.shape[-1])
        grad_x = grad_kernel = grad_bias = None
        if self.needs_input_grad[0]:
            grad_x = xp.zeros(self.in_shape, dtype=grad.dtype)
        for images, chunk_rows in self._chunks():
            if grad_x is not None:
                self._col2im(grad[chunk_rows], grad_x[images])
            if self.needs_input_grad[1]:
                # Summed chunk by chunk in a fixed order: deterministic.
                columns = self.columns if self.x is None else self._columns(self.x, images)
                part = columns.T @ grad[chunk_rows]
                grad_kernel = part if grad_kernel is None else grad_kernel + part
        if grad_x is not None and self.channels_first:
            grad_x = grad_x.transpose(0, 3, 1, 2)
        if grad_kernel is not None:
            grad_kernel = grad_kernel.reshape(self.kernel.shape)
        if len(self.needs_input_grad) == 3 and self.needs_input_grad[2]:
            # A matrix-vector product sums the rows much faster than grad.sum(axis=0).
            grad_bias = xp.ones(grad.shape[0], dtype=grad.dtype) @ grad
        return (grad_x, grad_kernel, grad_bias)[:len(self.needs_input_grad)]

    def _col2im(self, grad, grad_x):
        """Add into ``grad_x`` (NHWC) the input gradient of output gradient ``grad``.

        This is col2im of ``grad @ kernel_matrix.T``, computed one kernel
        offset's (rows, C) column block at a time so that each block is
        contiguous and is added in one vectorised operation to the strided
        input positions that offset read.
        """
        n, c = grad_x.shape[0], grad_x.shape[3]
        kh, kw = self.kernel.shape[:2]
        row_pairs, col_pairs = (
            offset_slices(*args) for args in zip(
                self.in_shape[1:3], self.pads, (kh, kw), self.strides, self.dilations,
                self.out_size))
        for i, row_pair in enumerate(row_pairs):
            for j, col_pair in enumerate(col_pairs):
                if row_pair is None or col_pair is None:
                    continue
                block = (grad @ self.kernel[i, j].T).reshape(n, *self.out_size, c)
                grad_x[:, row_pair[0], col_pair[0]] += block[:, row_pair[1], col_pair[1]]


class Conv1D(Conv2D):
    """1-D convolution as a :class:`Conv2D` over a height-1 image.

    Inputs are ``x`` (N, L, C) (or (N, C, L) when ``channels_first``),
    ``kernel`` ``(k, in, out)`` and optionally ``bias`` ``(out,)``; the
    padding, strides and dilations are given for the 2-D view (height 1).
    """

    def forward(self, x, kernel, *bias):
        x = x[:, :, None] if self.channels_first else x[:, None]
        y = super().forward(x, kernel[None], *bias)
        return y[:, :, 0] if self.channels_first else y[:, 0]

    def backward(self, grad):
        grad = grad[:, :, None] if self.channels_first else grad[:, None]
        grads = list(super().backward(grad))
        if grads[0] is not None:
            grads[0] = grads[0][:, :, 0] if self.channels_first else grads[0][:, 0]
        if grads[1] is not None:
            grads[1] = grads[1][0]
        return tuple(grads)


def _shape(value):
    return tuple(value.shape) if hasattr(value, 'shape') else np.shape(value)


def _channels_first(data_format):
    if data_format not in ('channels_last', 'channels_first'):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', "
                         f'got {data_format!r}')
    return data_format == 'channels_first'


def _check_operands(name, x_shape, kernel_shape, bias, channels_first, rank):
    if len(x_shape) != rank + 2 or len(kernel_shape) != rank + 2:
        raise ValueError(f'{name} expects a {rank + 2}-D input and a {rank + 2}-D kernel, got '
                         f'input {x_shape} and kernel {kernel_shape}')
    channels = x_shape[1] if channels_first else x_shape[-1]
    if channels != kernel_shape[-2]:
        raise ValueError(f'{name}: input {x_shape} has {channels} channels but kernel '
                         f'{kernel_shape} expects {kernel_shape[-2]}')
    if bias is not None and _shape(bias) != (kernel_shape[-1],):
        raise ValueError(f'{name}: bias must have shape ({kernel_shape[-1]},) for kernel '
                         f'{kernel_shape}, got {_shape(bias)}')


def _as_int(value, name):
    """A positive int given as such or as a 1-tuple (Keras' Conv1D accepts both)."""
    if not isinstance(value, (int, np.integer)):
        value = tuple(value)
        if len(value) != 1:
            raise ValueError(f'{name} must be a positive int or a 1-tuple, got {value!r}')
        value = value[0]
    return as_pair(value, name)[0]


def _check_output(name, x_shape, kernel_shape, out_size):
    if min(out_size) < 1:
        raise ValueError(f'{name}: kernel {kernel_shape} (with its dilation) does not fit in '
                         f'the padded input {x_shape}')


def conv2d(x, kernel, bias=None, strides=1, padding='valid', dilation_rate=1,
           data_format='channels_last'):
    """2-D convolution (cross-correlation, as in Keras and PyTorch).

    Args:
        x: Input, (N, H, W, C) or (N, C, H, W) for 'channels_first'.
        kernel: Kernel in Keras layout (kh, kw, in_channels, out_channels).
        bias: Optional (out_channels,) bias.
        strides: Int or (row, col) pair.
        padding: 'valid', 'same' (TensorFlow's: output ``ceil(in / stride)``,
            the odd padded row/column at the bottom/right), an int, a pair
            (rows, cols) or ((top, bottom), (left, right)).
        dilation_rate: Int or (row, col) pair.
        data_format: 'channels_last' or 'channels_first'; the output has the same.

    Returns:
        Tensor (N, OH, OW, out_channels) or (N, out_channels, OH, OW).
    """
    channels_first = _channels_first(data_format)
    x_shape, kernel_shape = _shape(x), _shape(kernel)
    _check_operands('conv2d', x_shape, kernel_shape, bias, channels_first, rank=2)
    strides, dilations = as_pair(strides, 'strides'), as_pair(dilation_rate, 'dilation_rate')
    sizes = x_shape[2:] if channels_first else x_shape[1:3]
    pads = resolve_padding(padding, sizes, kernel_shape[:2], strides, dilations)
    _check_output('conv2d', x_shape, kernel_shape, [
        output_size(*args) for args in zip(sizes, pads, kernel_shape[:2], strides, dilations)])
    function = Conv2D(strides, pads, dilations, channels_first)
    return function(x, kernel) if bias is None else function(x, kernel, bias)


def conv1d(x, kernel, bias=None, strides=1, padding='valid', dilation_rate=1,
           data_format='channels_last'):
    """1-D convolution over the steps of a sequence.

    Args:
        x: Input, (N, steps, C) or (N, C, steps) for 'channels_first'.
        kernel: Kernel in Keras layout (k, in_channels, out_channels).
        bias: Optional (out_channels,) bias.
        strides: Int (or a 1-tuple).
        padding: 'valid', 'same' (TensorFlow's), 'causal' (dilation*(k-1)
            zeros on the left only, so output t sees inputs up to t), an int,
            or a (left, right) pair.
        dilation_rate: Int (or a 1-tuple).
        data_format: 'channels_last' or 'channels_first'; the output has the same.

    Returns:
        Tensor (N, out_steps, out_channels) or (N, out_channels, out_steps).
    """
    channels_first = _channels_first(data_format)
    x_shape, kernel_shape = _shape(x), _shape(kernel)
    _check_operands('conv1d', x_shape, kernel_shape, bias, channels_first, rank=1)
    stride, dilation = _as_int(strides, 'strides'), _as_int(dilation_rate, 'dilation_rate')
    steps, window = x_shape[-1] if channels_first else x_shape[1], kernel_shape[0]
    if isinstance(padding, str) and padding.lower() == 'causal':
        pads = (dilation * (window - 1), 0)
    elif isinstance(padding, str):
        pads = resolve_padding(padding, (1, steps), (1, window), (1, stride), (1, dilation))[1]
    else:
        pads = (padding, padding) if isinstance(padding, (int, np.integer)) else padding
        pads = resolve_padding(((0, 0), pads), (1, steps), (1, window), (1, stride))[1]
    _check_output('conv1d', x_shape, kernel_shape,
                  [output_size(steps, pads, window, stride, dilation)])
    function = Conv1D((1, stride), ((0, 0), pads), (1, dilation), channels_first)
    return function(x, kernel) if bias is None else function(x, kernel, bias)
