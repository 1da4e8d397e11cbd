"""Convolutions: conv2d and conv1d with Keras kernel layouts.

The CPU algorithm is im2col + GEMM. A strided view of the padded input
(:func:`~minidl.functions.windows.im2col`) presents each output position's
receptive field as one row of a ``(positions, kh*kw*in)`` matrix; copying it
out and multiplying by the kernel reshaped to ``(kh*kw*in, out)`` gives the
output in one GEMM. Channels-last is the natural layout (a Keras kernel
flattens in the same order as a window of an NHWC image); channels-first
data is read through a transposed view and its output transposed back.

Backward takes the kernel gradient as ``columns.T @ grad``. The input
gradient is col2im: ``grad @ kernel_matrix.T`` one kernel offset's column
block at a time, each added to the strided slice of the input that the
offset read (kh*kw vectorised adds; no ``add.at``). With few channels those
per-offset products are too thin to run well; the input gradient of a
stride-1 convolution is then taken as what it also is, a convolution of the
output gradient, padded by ``extent - 1 - pad`` on each side, with the
kernel flipped in space and its in/out axes swapped: one im2col + GEMM with
``K = kh*kw*out``, as in forward. (A strided convolution's transposed form
would multiply the zeros between strided outputs, so it keeps col2im.)

That is the reference code. A 2-D convolution runs the vendor library's
kernel instead where one serves it (:mod:`minidl.compute.vendor`: oneDNN for
float32 numpy arrays, cuDNN for CuPy arrays); each call shows which branch
it took in its ``vendor_kernel`` (None: the reference code ran).

A ReLU after the convolution (``activation='relu'``, as a Conv2D or Conv1D
layer with ``activation='relu'`` asks) runs inside the same Function, after
either branch: numpy's ``max(y, 0)`` in place on the convolution's own fresh
output (:func:`~minidl.compute.relu.maximum_with_zero`, NaN kept; not
oneDNN's ReLU, which maps NaN to 0), and backward masks the output gradient
with ``y > 0`` before the convolution's backward (a vendor kernel is handed
``y`` and masks it itself: oneDNN's in its weight tasks where only the
kernel's gradient is wanted, as in a network's first layer). The float
operations are those of ``conv2d`` then ``relu``, so every bit is too; one
graph node, one output array and no separate ReLU pass over a copy.
"""

import itertools
import math

import numpy as np

from minidl.compute import products, vendor
from minidl.compute.relu import maximum_with_zero, positive_part_grad
from minidl.compute.pool import map_tasks, sum_in_order
from minidl.functions.windows import (
    as_pair, im2col, offset_slices, output_size, pad_spatial, resolve_padding)
from minidl.tensor import Function


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
    The chunks are spread over the worker threads of
    :mod:`minidl.compute.threads`; the kernel gradient sums their parts in
    chunk order, so the number of threads does not change a bit.

    With ``relu`` the output is ``max(y, 0)``, applied in place on the
    convolution's output; its backward reads the mask from that output.
    """

    CHUNK_BYTES = 4 << 20
    # At least this many chunks (batch permitting), so that every product of
    # the layer runs in the worker threads: a product left to BLAS's own
    # threads wakes them, and they then spin and take the workers' cores.
    # A constant, not the thread count: the chunks fix the kernel gradient's
    # order of summation.
    MIN_CHUNKS = 4
    # The input gradient is taken as a convolution when col2im's per-offset
    # products would be thin (at most this many weights, in * out, per kernel
    # offset; above it col2im's adds cost less than an im2col copy) and the
    # convolution's own product is not (at least MIN_CONVOLVED_CHANNELS
    # input channels: its output width).
    THIN_KERNEL_SLICE = 64 * 64
    MIN_CONVOLVED_CHANNELS = 16

    def __init__(self, strides, pads, dilations, channels_first, relu=False):
        self.strides, self.pads, self.dilations = strides, pads, dilations
        self.channels_first, self.relu = channels_first, relu

    vendor_kernel = None

    def forward(self, x, kernel, *bias):
        if kernel.ndim == 4:  # Conv3D reuses this class; the vendors serve 2-D here
            self.vendor_kernel = vendor.kernel(
                self.xp, 'conv2d', self.xp.result_type(x, kernel), strides=self.strides,
                pads=self.pads, dilations=self.dilations, channels_first=self.channels_first)
        if self.vendor_kernel is not None:
            y = self.vendor_kernel.forward(x, kernel, *bias)
        else:
            y = self._forward_reference(x, kernel, *bias)
        if self.relu:
            # y is this call's own array, read by nothing yet: ReLU where it lies.
            self.y = maximum_with_zero(y, y, self.xp)
        return y

    def backward(self, grad):
        if self.vendor_kernel is not None:
            # The kernel masks grad with y > 0 itself (oneDNN: in its tasks where it can).
            relu = {'relu_output': self.y} if self.relu else {}
            return self.vendor_kernel.backward(grad, self.needs_input_grad, **relu)
        if self.relu:
            grad = positive_part_grad(grad, self.y, self.xp)  # grad * (y > 0)
        return self._backward_reference(grad)

    def _forward_reference(self, x, kernel, *bias):
        xp = self.xp
        rank = kernel.ndim - 2
        if any(any(pads) for pads in self.pads):
            first = 2 if self.channels_first else 1
            x = pad_spatial(xp, x, self.pads, tuple(range(first, first + rank)))
        if self.channels_first:
            x = x.transpose(0, *range(2, rank + 2), 1)
        n, c = x.shape[0], x.shape[-1]
        window, out = kernel.shape[:-2], kernel.shape[-1]
        self.kernel = kernel
        self.in_shape = (n,) + tuple(
            size - sum(pads) for size, pads in zip(x.shape[1:-1], self.pads)) + (c,)
        self.out_size = tuple(output_size(size, (0, 0), *args) for size, args in zip(
            x.shape[1:-1], zip(window, self.strides, self.dilations)))
        y, columns, self.chunk = self._convolve(
            x, kernel.reshape(math.prod(window) * c, out), self.strides, self.out_size, *bias)
        # The kernel gradient needs the columns: keep a single chunk's, or
        # else the input to rebuild them from.
        keep = self.needs_input_grad[1]
        single = self.chunk >= n
        self.columns = columns if keep and single else None
        self.x = x if keep and not single else None
        y = y.reshape(n, *self.out_size, out)
        if self.channels_first:
            return xp.ascontiguousarray(y.transpose(0, rank + 1, *range(1, rank + 1)))
        return y

    def _convolve(self, x, kernel_matrix, strides, out_size, bias=None):
        """``im2col(x) @ kernel_matrix (+ bias)`` in chunks of images.

        The chunks are tasks of :func:`~minidl.compute.pool.map_tasks`:
        each writes its own rows of the product.

        Returns:
            The ``(N*OH*OW, out)`` product, the im2col matrix when the batch
            is one chunk (else None) and the number of images per chunk.
        """
        xp = self.xp
        n, rows = x.shape[0], math.prod(out_size)
        dtype = xp.result_type(x, kernel_matrix)
        chunk = max(1, min(self.CHUNK_BYTES // (rows * kernel_matrix.shape[0] * dtype.itemsize),
                           -(-n // self.MIN_CHUNKS)))
        y = xp.empty((n * rows, kernel_matrix.shape[1]), dtype=dtype)
        if bias is not None:
            # Added one output row (OW pixels) at a time: far fewer, longer
            # runs than one pixel's few channels at a time.
            row_bias = xp.tile(bias.astype(dtype, copy=False), out_size[-1])

        def convolve(start):
            columns = im2col(xp, x[start:start + chunk], out_size, self.kernel.shape[:-2],
                             strides, self.dilations)
            y_chunk = y[start * rows:(start + chunk) * rows]
            products.small_matmul(columns, kernel_matrix, out=y_chunk, xp=xp)
            if bias is not None:
                y_rows = y_chunk.reshape(-1, row_bias.size)
                y_rows += row_bias
            return columns if chunk >= n else None

        columns = map_tasks(convolve, range(0, n, chunk), xp)[-1]
        return y, columns, chunk

    def _backward_reference(self, grad):
        xp = self.xp
        rank = self.kernel.ndim - 2
        if self.channels_first:
            grad = grad.transpose(0, *range(2, rank + 2), 1)
        grad = xp.ascontiguousarray(grad)
        grad_rows = grad.reshape(-1, self.kernel.shape[-1])
        grad_x = grad_kernel = grad_bias = None
        if self.needs_input_grad[0]:
            grad_x = self._input_grad(grad)
            if self.channels_first:
                grad_x = grad_x.transpose(0, rank + 1, *range(1, rank + 1))
        if self.needs_input_grad[1]:
            grad_kernel = self._kernel_grad(grad_rows).reshape(self.kernel.shape)
        if len(self.needs_input_grad) == 3 and self.needs_input_grad[2]:
            # A matrix-vector product sums the rows much faster than grad.sum(axis=0).
            grad_bias = xp.ones(grad_rows.shape[0], dtype=grad.dtype) @ grad_rows
        return (grad_x, grad_kernel, grad_bias)[:len(self.needs_input_grad)]

    def _kernel_grad(self, grad_rows):
        """``columns.T @ grad``, summed chunk by chunk in a fixed order: deterministic."""
        rows, xp = math.prod(self.out_size), self.xp

        def part(start):
            columns = self.columns if self.x is None else im2col(
                xp, self.x[start:start + self.chunk], self.out_size,
                self.kernel.shape[:-2], self.strides, self.dilations)
            return columns.T @ grad_rows[start * rows:(start + self.chunk) * rows]

        return sum_in_order(map_tasks(part, range(0, self.in_shape[0], self.chunk), xp))

    def _input_grad(self, grad):
        """The (N, H, W, C) input gradient of the NHWC output gradient ``grad``."""
        *window, c, out = self.kernel.shape
        rank = len(window)
        extents = [d * (k - 1) for d, k in zip(self.dilations, window)]
        pads = tuple((e - before, e - after) for e, (before, after) in zip(extents, self.pads))
        convolve = c * out <= self.THIN_KERNEL_SLICE and c >= self.MIN_CONVOLVED_CHANNELS
        if not convolve or any(s != 1 for s in self.strides) or min(min(p) for p in pads) < 0:
            return self._col2im(grad.reshape(-1, out))
        padded = pad_spatial(self.xp, grad, pads, tuple(range(1, rank + 1)))
        # The kernel flipped in space, with in/out swapped: (kh, kw, out, in).
        flipped = self.kernel[(slice(None, None, -1),) * rank].transpose(
            *range(rank), rank + 1, rank)
        matrix = self.xp.ascontiguousarray(flipped).reshape(math.prod(window) * out, c)
        grad_x, _, _ = self._convolve(padded, matrix, (1,) * rank, self.in_shape[1:-1])
        return grad_x.reshape(self.in_shape)

    def _col2im(self, grad_rows):
        """The input gradient by col2im, for strided convolutions.

        ``grad @ kernel_matrix.T`` is formed one kernel offset's (rows, C)
        column block at a time, so that each block is contiguous and is added
        in one vectorised operation to the strided input positions that
        offset read; chunks of images keep the blocks in cache.
        """
        xp = self.xp
        grad_x = xp.zeros(self.in_shape, dtype=grad_rows.dtype)
        axis_pairs = [enumerate(offset_slices(*args)) for args in zip(
            self.in_shape[1:-1], self.pads, self.kernel.shape[:-2], self.strides,
            self.dilations, self.out_size)]
        # One (kernel offset, input slices, output slices) per offset whose
        # slices are non-empty along every axis.
        pairs = [(tuple(i for i, _ in combo), tuple(pair[0] for _, pair in combo),
                  tuple(pair[1] for _, pair in combo))
                 for combo in itertools.product(*axis_pairs)
                 if all(pair is not None for _, pair in combo)]
        rows = math.prod(self.out_size)

        def add_chunk(start):
            grad_chunk = grad_rows[start * rows:(start + self.chunk) * rows]
            grad_x_chunk = grad_x[start:start + self.chunk]
            for offset, source, target in pairs:
                block = products.small_matmul(grad_chunk, self.kernel[offset].T, xp=xp).reshape(
                    grad_x_chunk.shape[0], *self.out_size, -1)
                grad_x_chunk[(slice(None), *source)] += block[(slice(None), *target)]

        map_tasks(add_chunk, range(0, self.in_shape[0], self.chunk), xp)
        return grad_x


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


def _relu(activation, name):
    """Whether ``activation`` asks for the fused ReLU (None or 'relu'; else a ValueError)."""
    if activation not in (None, 'relu'):
        raise ValueError(f'{name}: activation must be None or "relu", got {activation!r}; '
                         f'apply other activations to its output')
    return activation == 'relu'


def _check_output(name, x_shape, kernel_shape, out_size):
    if min(out_size) < 1:
        raise ValueError(f'{name}: kernel {kernel_shape} (with its dilation) does not fit in '
                         f'the padded input {x_shape}')


def conv2d(x, kernel, bias=None, strides=1, padding='valid', dilation_rate=1,
           data_format='channels_last', activation=None):
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
        activation: None (linear) or ``'relu'``, applied in the same graph node.

    Returns:
        Tensor (N, OH, OW, out_channels) or (N, out_channels, OH, OW).
    """
    relu = _relu(activation, 'conv2d')
    channels_first = _channels_first(data_format)
    x_shape, kernel_shape = _shape(x), _shape(kernel)
    _check_operands('conv2d', x_shape, kernel_shape, bias, channels_first, rank=2)
    strides, dilations = as_pair(strides, 'strides'), as_pair(dilation_rate, 'dilation_rate')
    sizes = x_shape[2:] if channels_first else x_shape[1:3]
    pads = resolve_padding(padding, sizes, kernel_shape[:2], strides, dilations)
    _check_output('conv2d', x_shape, kernel_shape, [
        output_size(*args) for args in zip(sizes, pads, kernel_shape[:2], strides, dilations)])
    function = Conv2D(strides, pads, dilations, channels_first, relu)
    return function(x, kernel) if bias is None else function(x, kernel, bias)


def conv1d(x, kernel, bias=None, strides=1, padding='valid', dilation_rate=1,
           data_format='channels_last', activation=None):
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
        activation: None (linear) or ``'relu'``, applied in the same graph node.

    Returns:
        Tensor (N, out_steps, out_channels) or (N, out_channels, out_steps).
    """
    relu = _relu(activation, 'conv1d')
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
    function = Conv1D((1, stride), ((0, 0), pads), (1, dilation), channels_first, relu)
    return function(x, kernel) if bias is None else function(x, kernel, bias)
