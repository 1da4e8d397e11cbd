"""Locally connected (unshared-weight) convolution with Keras 2.2.4's layouts.

Every output position has its own weights: kernel ``(positions,
patch_size, filters)``, where a patch is one window of the input flattened
as Keras flattens it (``(k..., channels)`` for channels-last data,
``(channels, k...)`` for channels-first), and bias ``(*output_size,
filters)``. Only 'valid' windows exist, as in Keras 2.2.4.

Forward gathers every window with im2col (one strided view, one copy) and
multiplies the ``(positions, batch, patch)`` stack by the kernel stack in one
batched GEMM. Backward is the same product transposed for the kernel, and for
the input the patch gradients are added back one window offset at a time
into the strided input cells that offset read (no ``add.at``).
"""

import itertools
import math

import numpy as np

from minidl.functions.windows import im2col, output_size
from minidl.tensor import Function


class LocalConv(Function):
    """Unshared-weight convolution over any number of spatial axes.

    Inputs are ``x`` (N, *spatial, C) (or (N, C, *spatial) when
    ``channels_first``), ``kernel`` ``(positions, prod(window)*C, filters)``
    and optionally ``bias`` ``(*output_size, filters)``.
    """

    def __init__(self, window, strides, channels_first):
        self.window, self.strides, self.channels_first = window, strides, channels_first

    def _to_last(self, array):
        """A channels-first array viewed channels-last (no copy)."""
        return array.transpose(0, *range(2, array.ndim), 1) if self.channels_first else array

    def _reorder(self, kernel, channels, inverse=False):
        """Swap a channels-first kernel's patch order (C, k...) to (k..., C), or back."""
        if not self.channels_first:
            return kernel
        rank, (positions, _, filters) = len(self.window), kernel.shape
        if inverse:
            kernel = kernel.reshape(positions, *self.window, channels, filters)
            kernel = kernel.transpose(0, rank + 1, *range(1, rank + 1), rank + 2)
        else:
            kernel = kernel.reshape(positions, channels, *self.window, filters)
            kernel = kernel.transpose(0, *range(2, rank + 2), 1, rank + 2)
        return kernel.reshape(positions, -1, filters)

    def forward(self, x, kernel, *bias):
        xp = self.xp
        x = self._to_last(x)
        n, channels = x.shape[0], x.shape[-1]
        self.x_shape = x.shape
        self.out_size = tuple(output_size(size, (0, 0), window, stride) for size, window, stride
                              in zip(x.shape[1:-1], self.window, self.strides))
        positions, patch, filters = kernel.shape
        columns = im2col(xp, x, self.out_size, self.window, self.strides, (1,) * len(self.window))
        patches = columns.reshape(n, positions, patch).transpose(1, 0, 2)  # (P, N, patch)
        self.kernel = self._reorder(kernel, channels)
        y = xp.matmul(patches, self.kernel)  # (P, N, filters)
        if bias:
            y += bias[0].reshape(positions, 1, filters)
        self.patches = patches if self.needs_input_grad[1] else None
        y = y.transpose(1, 0, 2).reshape(n, *self.out_size, filters)
        return xp.ascontiguousarray(y.transpose(0, y.ndim - 1, *range(1, y.ndim - 1))) \
            if self.channels_first else y

    def backward(self, grad):
        xp = self.xp
        n, channels, filters = self.x_shape[0], self.x_shape[-1], self.kernel.shape[-1]
        grad = xp.ascontiguousarray(self._to_last(grad)).reshape(n, -1, filters)
        grad = grad.transpose(1, 0, 2)  # (P, N, filters)
        grad_x = grad_kernel = grad_bias = None
        if self.needs_input_grad[0]:
            grad_patches = xp.matmul(grad, self.kernel.transpose(0, 2, 1))  # (P, N, patch)
            grad_x = self._col2im(grad_patches)
            if self.channels_first:
                grad_x = grad_x.transpose(0, grad_x.ndim - 1, *range(1, grad_x.ndim - 1))
        if self.needs_input_grad[1]:
            grad_kernel = self._reorder(
                xp.matmul(self.patches.transpose(0, 2, 1), grad), channels, inverse=True)
        if len(self.needs_input_grad) == 3 and self.needs_input_grad[2]:
            grad_bias = grad.sum(axis=1).reshape(*self.out_size, filters)
        return (grad_x, grad_kernel, grad_bias)[:len(self.needs_input_grad)]

    def _col2im(self, grad_patches):
        """Sum each window offset's patch gradients into the input cells it read."""
        xp = self.xp
        n, rank = self.x_shape[0], len(self.window)
        # (N, *out_size, *window, C): each window offset is one index into the middle axes.
        blocks = grad_patches.transpose(1, 0, 2).reshape(
            n, *self.out_size, *self.window, self.x_shape[-1])
        grad_x = xp.zeros(self.x_shape, dtype=grad_patches.dtype)
        for offset in itertools.product(*map(range, self.window)):
            cells = tuple(slice(start, start + stride * (out - 1) + 1, stride)
                          for start, stride, out in zip(offset, self.strides, self.out_size))
            grad_x[(slice(None), *cells)] += blocks[(slice(None),) * (rank + 1) + offset]
        return grad_x


def _shape(value):
    return tuple(value.shape) if hasattr(value, 'shape') else np.shape(value)


def local_conv(x, kernel, bias=None, kernel_size=1, strides=1, data_format='channels_last'):
    """Locally connected convolution ('valid' windows, one set of weights per position).

    Args:
        x: Input (N, *spatial, C), or (N, C, *spatial) for 'channels_first';
            one or two spatial axes (any number works).
        kernel: ``(positions, prod(kernel_size)*C, filters)`` in Keras 2.2.4's
            layout, a patch flattened as ``(k..., C)`` for channels-last data
            and ``(C, k...)`` for channels-first.
        bias: Optional ``(*output_size, filters)``.
        kernel_size: Window sizes, one per spatial axis (or one int for all).
        strides: Strides, one per spatial axis (or one int for all).
        data_format: 'channels_last' or 'channels_first'; the output has the same.

    Returns:
        Tensor (N, *output_size, filters) or (N, filters, *output_size).
    """
    if data_format not in ('channels_last', 'channels_first'):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', "
                         f'got {data_format!r}')
    channels_first = data_format == 'channels_first'
    x_shape, kernel_shape = _shape(x), _shape(kernel)
    rank = len(x_shape) - 2
    window = (kernel_size,) * rank if isinstance(kernel_size, (int, np.integer)) \
        else tuple(kernel_size)
    strides = (strides,) * rank if isinstance(strides, (int, np.integer)) else tuple(strides)
    if rank < 1 or len(window) != rank or len(strides) != rank:
        raise ValueError(f'local_conv: input {x_shape} needs kernel_size and strides with one '
                         f'entry per spatial axis, got {kernel_size!r} and {strides!r}')
    sizes = x_shape[2:] if channels_first else x_shape[1:-1]
    channels = x_shape[1] if channels_first else x_shape[-1]
    out_size = tuple(output_size(*args) for args in zip(sizes, [(0, 0)] * rank, window, strides))
    if min(out_size) < 1:
        raise ValueError(f'local_conv: kernel_size {window} does not fit in input {x_shape}')
    expected = (math.prod(out_size), math.prod(window) * channels)
    if len(kernel_shape) != 3 or kernel_shape[:2] != expected:
        raise ValueError(f'local_conv: kernel must have shape {expected + ("filters",)} for '
                         f'input {x_shape} and kernel_size {window}, got {kernel_shape}')
    if bias is not None and _shape(bias) != out_size + kernel_shape[2:]:
        raise ValueError(f'local_conv: bias must have shape {out_size + kernel_shape[2:]}, '
                         f'got {_shape(bias)}')
    function = LocalConv(window, strides, channels_first)
    return function(x, kernel) if bias is None else function(x, kernel, bias)
