"""3-D convolution and transposed convolution with Keras kernel layouts.

Both run the N-D machinery of :class:`~minidl.functions.conv.Conv2D` (im2col
over a strided view of the padded NDHWC input, one GEMM, col2im or a
flipped-kernel convolution for the input gradient), which is written for
any number of spatial axes; the classes here fix the rank at three and the
wrappers check and normalise Keras's arguments.

The transposed convolution is the input gradient of a convolution, sized and
placed as Keras 2.2.4 with TensorFlow (``conv_utils.deconv_length``; see
:mod:`minidl.functions.conv_transpose` for the 2-D form and the rules).
"""

import math

import numpy as np

from minidl.functions.conv import Conv2D, _channels_first, _check_operands, _shape
from minidl.functions.conv_transpose import _placement, transposed_output_size
from minidl.functions.windows import output_size, resolve_padding


def as_triple(value, name):
    """``value`` (an int or three ints) as a triple of positive ints."""
    triple = (value,) * 3 if isinstance(value, (int, np.integer)) else tuple(value)
    if len(triple) != 3 or not all(isinstance(v, (int, np.integer)) and v >= 1 for v in triple):
        raise ValueError(f'{name} must be a positive int or three positive ints, got {value!r}')
    return tuple(int(v) for v in triple)


class Conv3D(Conv2D):
    """3-D convolution (cross-correlation) of ``x`` with a Keras kernel, plus bias.

    Inputs are ``x`` (NDHWC, or NCDHW when ``channels_first``), ``kernel``
    ``(kd, kh, kw, in, out)`` and optionally ``bias`` ``(out,)``; ``strides``,
    ``pads`` and ``dilations`` have one entry per spatial axis.
    """


class ConvTranspose3D(Conv3D):
    """Transposed 3-D convolution of ``x`` with a Keras transposed kernel, plus bias.

    Inputs are ``x`` (NDHWC, or NCDHW when ``channels_first``), ``kernel``
    ``(kd, kh, kw, filters, in)`` and optionally ``bias`` ``(filters,)``.
    ``pads`` and ``target_size`` describe the convolution being transposed:
    its padding and its input (this function's output) size. Forward is that
    convolution's input gradient; backward is its forward (the input
    gradient) and its kernel gradient with the roles of input and output
    gradient exchanged.
    """

    def __init__(self, strides, pads, dilations, channels_first, target_size):
        super().__init__(strides, pads, dilations, channels_first)
        self.target_size = target_size

    def forward(self, x, kernel, *bias):
        xp = self.xp
        if self.channels_first:
            x = x.transpose(0, 2, 3, 4, 1)
        x = xp.ascontiguousarray(x)
        filters = kernel.shape[3]
        # The geometry of the convolution being transposed, as its input gradient reads it.
        self.kernel, self.out_size = kernel, x.shape[1:4]
        self.in_shape = (x.shape[0], *self.target_size, filters)
        itemsize = xp.result_type(x, kernel).itemsize
        self.chunk = max(1, self.CHUNK_BYTES // (
            math.prod(self.out_size) * math.prod(kernel.shape[:4]) * itemsize))
        y = self._input_grad(x)
        if bias:
            y += bias[0]
        self.input_rows = x.reshape(-1, x.shape[-1]) if self.needs_input_grad[1] else None
        return xp.ascontiguousarray(y.transpose(0, 4, 1, 2, 3)) if self.channels_first else y

    def backward(self, grad):
        xp = self.xp
        kernel, input_rows = self.kernel, self.input_rows
        # Running the transposed convolution's convolution forward on the
        # output gradient gives the input gradient and keeps what its
        # kernel gradient (im2col(grad).T @ x) needs.
        grad = xp.ascontiguousarray(grad)  # may arrive broadcast (zero strides)
        grad_x = Conv2D.forward(self, grad, kernel)
        grad_kernel = grad_bias = None
        if self.needs_input_grad[1]:
            grad_kernel = self._kernel_grad(input_rows).reshape(kernel.shape)
        if len(self.needs_input_grad) == 3 and self.needs_input_grad[2]:
            rows = xp.moveaxis(grad, 1, -1) if self.channels_first else grad
            rows = xp.ascontiguousarray(rows).reshape(-1, kernel.shape[3])
            grad_bias = xp.ones(rows.shape[0], dtype=rows.dtype) @ rows
        return (grad_x if self.needs_input_grad[0] else None, grad_kernel,
                grad_bias)[:len(self.needs_input_grad)]


def conv3d(x, kernel, bias=None, strides=1, padding='valid', dilation_rate=1,
           data_format='channels_last'):
    """3-D convolution (cross-correlation, as in Keras and PyTorch).

    Args:
        x: Input, (N, D, H, W, C) or (N, C, D, H, W) for 'channels_first'.
        kernel: Kernel in Keras layout (kd, kh, kw, in_channels, out_channels).
        bias: Optional (out_channels,) bias.
        strides: Int or three ints.
        padding: 'valid', 'same' (TensorFlow's: output ``ceil(in / stride)``,
            the odd padded cell at the end), an int, three ints or three
            (before, after) pairs.
        dilation_rate: Int or three ints.
        data_format: 'channels_last' or 'channels_first'; the output has the same.

    Returns:
        Tensor (N, OD, OH, OW, out_channels) or (N, out_channels, OD, OH, OW).
    """
    channels_first = _channels_first(data_format)
    x_shape, kernel_shape = _shape(x), _shape(kernel)
    _check_operands('conv3d', x_shape, kernel_shape, bias, channels_first, rank=3)
    strides = as_triple(strides, 'strides')
    dilations = as_triple(dilation_rate, 'dilation_rate')
    sizes = x_shape[2:] if channels_first else x_shape[1:4]
    pads = resolve_padding(padding, sizes, kernel_shape[:3], strides, dilations)
    if min(output_size(*args) for args in zip(sizes, pads, kernel_shape[:3], strides,
                                               dilations)) < 1:
        raise ValueError(f'conv3d: kernel {kernel_shape} (with its dilation) does not fit in '
                         f'the padded input {x_shape}')
    function = Conv3D(strides, pads, dilations, channels_first)
    return function(x, kernel) if bias is None else function(x, kernel, bias)


def _normalize_output_padding(output_padding, strides):
    if output_padding is None:
        return (None,) * 3
    triple = (output_padding,) * 3 if isinstance(output_padding, (int, np.integer)) \
        else tuple(output_padding)
    if len(triple) != 3 or not all(isinstance(v, (int, np.integer)) and 0 <= v < s
                                   for v, s in zip(triple, strides)):
        raise ValueError(f'output_padding must be None, an int or three ints, each >= 0 and '
                         f'smaller than its stride {strides}, got {output_padding!r}')
    return tuple(int(v) for v in triple)


def conv3d_transpose(x, kernel, bias=None, strides=1, padding='valid', output_padding=None,
                     data_format='channels_last'):
    """Transposed 3-D convolution, sized and placed as Keras 2.2.4 with TensorFlow.

    An input of size ``n`` along an axis gives ``n*stride + max(k - stride, 0)``
    ('valid') or ``n*stride`` ('same') cells without ``output_padding``, and
    ``(n - 1)*stride + k - 2*pad + output_padding`` with it (``pad`` 0 for
    'valid', ``k // 2`` for 'same').

    Args:
        x: Input, (N, D, H, W, C) or (N, C, D, H, W) for 'channels_first'.
        kernel: Kernel in Keras's transposed layout (kd, kh, kw, filters, in_channels).
        bias: Optional (filters,) bias.
        strides: Int or three ints.
        padding: 'valid' or 'same'.
        output_padding: None, an int or three ints, each smaller than its stride.
        data_format: 'channels_last' or 'channels_first'; the output has the same.

    Returns:
        Tensor (N, OD, OH, OW, filters) or (N, filters, OD, OH, OW).
    """
    channels_first = _channels_first(data_format)
    x_shape, kernel_shape = _shape(x), _shape(kernel)
    if len(x_shape) != 5 or len(kernel_shape) != 5:
        raise ValueError(f'conv3d_transpose expects a 5-D input and a 5-D kernel, got input '
                         f'{x_shape} and kernel {kernel_shape}')
    channels = x_shape[1] if channels_first else x_shape[-1]
    if channels != kernel_shape[4]:
        raise ValueError(f'conv3d_transpose: input {x_shape} has {channels} channels but kernel '
                         f'{kernel_shape} (kd, kh, kw, filters, in) expects {kernel_shape[4]}')
    if bias is not None and _shape(bias) != (kernel_shape[3],):
        raise ValueError(f'conv3d_transpose: bias must have shape ({kernel_shape[3]},) for '
                         f'kernel {kernel_shape}, got {_shape(bias)}')
    if not isinstance(padding, str) or padding.lower() not in ('valid', 'same'):
        raise ValueError(f"conv3d_transpose: padding must be 'valid' or 'same', got {padding!r}")
    padding = padding.lower()
    strides = as_triple(strides, 'strides')
    extras = _normalize_output_padding(output_padding, strides)
    sizes = x_shape[2:] if channels_first else x_shape[1:4]
    geometry = list(zip(sizes, kernel_shape[:3], strides))
    targets = tuple(transposed_output_size(size, window, stride, padding, extra)
                    for (size, window, stride), extra in zip(geometry, extras))
    pads = tuple(_placement(size, target, window, stride, 1, padding)
                 for (size, window, stride), target in zip(geometry, targets))
    if min(targets) < 1 or any(
            output_size(target, pad, window, stride) != size
            for (size, window, stride), target, pad in zip(geometry, targets, pads)):
        raise ValueError(f'conv3d_transpose: input {x_shape} with kernel {kernel_shape}, '
                         f'strides {strides}, padding {padding!r} and output_padding '
                         f'{output_padding!r} gives output size {targets}, which no '
                         f'convolution maps back onto the input')
    function = ConvTranspose3D(strides, pads, (1, 1, 1), channels_first, targets)
    return function(x, kernel) if bias is None else function(x, kernel, bias)
