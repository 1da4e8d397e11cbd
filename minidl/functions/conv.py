"""Convolutions: conv2d and conv1d with Keras kernel layouts.

On every backend the CPU algorithm is im2col: a strided view of the padded
input gathers each output position's receptive field into one row of a
``(positions, kh*kw*in)`` matrix, and a single GEMM with the kernel reshaped
to ``(kh*kw*in, out)`` gives the output. Channels-last is the natural layout
for this (a Keras kernel ``(kh, kw, in, out)`` flattens in the same order as a
window of an NHWC image); channels-first data is transposed on the way in and
out. The backward pass is one GEMM for the kernel gradient and one for the
input-gradient columns, which col2im scatters back by adding one strided
slice per kernel offset (kh*kw vectorised adds, no ``add.at``).

The padding helpers here are shared with :mod:`minidl.functions.pooling`.
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


def window_view(xp, padded, out_size, window, strides, dilations):
    """A read-only ``(N, OH, OW, kh, kw, C)`` view of an NHWC array's windows."""
    n, _, _, c = padded.shape
    s_n, s_h, s_w, s_c = padded.strides
    return xp.lib.stride_tricks.as_strided(
        padded, shape=(n, *out_size, *window, c),
        strides=(s_n, s_h * strides[0], s_w * strides[1],
                 s_h * dilations[0], s_w * dilations[1], s_c),
        writeable=False)


def offset_slices(window, out_size, strides, dilations):
    """For each window offset (i, j), the (rows, cols) slices of the padded
    input that the offset touches, in row-major offset order."""
    return [(slice(i * dilations[0], i * dilations[0] + (out_size[0] - 1) * strides[0] + 1,
                   strides[0]),
             slice(j * dilations[1], j * dilations[1] + (out_size[1] - 1) * strides[1] + 1,
                   strides[1]))
            for i in range(window[0]) for j in range(window[1])]


def pad_nhwc(xp, x, pads, fill=0):
    """``x`` (NHWC, any strides) copied into a contiguous buffer padded with ``fill``."""
    (top, bottom), (left, right) = pads
    n, h, w, c = x.shape
    padded = xp.empty((n, h + top + bottom, w + left + right, c), dtype=x.dtype)
    if top or bottom or left or right:
        padded.fill(fill)
    padded[:, top:top + h, left:left + w] = x
    return padded


class Conv2D(Function):
    """2-D convolution (cross-correlation) of ``x`` with a Keras kernel, plus bias.

    Inputs are ``x`` (NHWC, or NCHW when ``channels_first``), ``kernel``
    ``(kh, kw, in, out)`` and optionally ``bias`` ``(out,)``.
    """

    def __init__(self, strides, pads, dilations, channels_first):
        self.strides, self.pads, self.dilations = strides, pads, dilations
        self.channels_first = channels_first

    def forward(self, x, kernel, *bias):
        xp = self.xp
        if self.channels_first:
            x = x.transpose(0, 2, 3, 1)
        n, h, w, c = x.shape
        kh, kw, _, out = kernel.shape
        self.in_shape, self.kernel_shape = x.shape, kernel.shape
        self.out_size = tuple(output_size(*args) for args in zip(
            (h, w), self.pads, (kh, kw), self.strides, self.dilations))
        needs_padding = self.pads != ((0, 0), (0, 0))
        source = pad_nhwc(xp, x, self.pads) if needs_padding or x.strides[-1] != x.itemsize \
            else x
        self.padded_shape = source.shape
        windows = window_view(xp, source, self.out_size, (kh, kw), self.strides, self.dilations)
        # The reshape copies (a view only for 1x1 stride-1 kernels): these are the im2col rows.
        self.columns = windows.reshape(n * self.out_size[0] * self.out_size[1], kh * kw * c)
        self.kernel_matrix = kernel.reshape(kh * kw * c, out)
        y = self.columns @ self.kernel_matrix
        if bias:
            y += bias[0]
        y = y.reshape(n, *self.out_size, out)
        return xp.ascontiguousarray(y.transpose(0, 3, 1, 2)) if self.channels_first else y

    def backward(self, grad):
        xp = self.xp
        if self.channels_first:
            grad = grad.transpose(0, 2, 3, 1)
        grad = xp.ascontiguousarray(grad).reshape(-1, self.kernel_shape[-1])
        grad_x = grad_kernel = None
        if self.needs_input_grad[0]:
            grad_x = self._col2im(grad @ self.kernel_matrix.T)
        if self.needs_input_grad[1]:
            grad_kernel = (self.columns.T @ grad).reshape(self.kernel_shape)
        if len(self.needs_input_grad) == 2:
            return grad_x, grad_kernel
        grad_bias = grad.sum(axis=0) if self.needs_input_grad[2] else None
        return grad_x, grad_kernel, grad_bias

    def _col2im(self, grad_columns):
        """Sum the gradient of every window row back onto the input it was read from."""
        xp = self.xp
        n, h, w, c = self.in_shape
        kh, kw = self.kernel_shape[:2]
        grad_windows = grad_columns.reshape(n, *self.out_size, kh, kw, c)
        grad_padded = xp.zeros(self.padded_shape, dtype=grad_columns.dtype)
        slices = offset_slices((kh, kw), self.out_size, self.strides, self.dilations)
        for index, (rows, cols) in enumerate(slices):
            grad_padded[:, rows, cols] += grad_windows[:, :, :, index // kw, index % kw]
        (top, _), (left, _) = self.pads
        grad_x = grad_padded[:, top:top + h, left:left + w]
        return grad_x.transpose(0, 3, 1, 2) if self.channels_first else grad_x


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
        strides: Int.
        padding: 'valid', 'same' (TensorFlow's), 'causal' (dilation*(k-1)
            zeros on the left only, so output t sees inputs up to t), an int,
            or a (left, right) pair.
        dilation_rate: Int.
        data_format: 'channels_last' or 'channels_first'; the output has the same.

    Returns:
        Tensor (N, out_steps, out_channels) or (N, out_channels, out_steps).
    """
    channels_first = _channels_first(data_format)
    x_shape, kernel_shape = _shape(x), _shape(kernel)
    _check_operands('conv1d', x_shape, kernel_shape, bias, channels_first, rank=1)
    stride, dilation = as_pair(strides, 'strides')[0], as_pair(dilation_rate, 'dilation_rate')[0]
    steps, window = x_shape[-1] if channels_first else x_shape[1], kernel_shape[0]
    if isinstance(padding, str) and padding.lower() == 'causal':
        pads = (dilation * (window - 1), 0)
    elif isinstance(padding, str):
        pads = resolve_padding(padding, (1, steps), (1, window), (1, stride), (1, dilation))[1]
    else:
        pads = (padding, padding) if isinstance(padding, (int, np.integer)) else padding
        pads = resolve_padding(((0, 0), pads), (1, steps), (1, window), (1, stride))[1]
    _check_output('conv1d', x_shape, kernel_shape, [output_size(steps, pads, window, stride, dilation)])
    function = Conv1D((1, stride), ((0, 0), pads), (1, dilation), channels_first)
    return function(x, kernel) if bias is None else function(x, kernel, bias)
