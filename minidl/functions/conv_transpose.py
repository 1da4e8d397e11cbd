"""Transposed convolutions (Keras's Conv2DTranspose and Conv3DTranspose, "deconvolution").

A transposed convolution is the input gradient of a convolution: it maps
the convolution's output back onto its input grid. Here it is exactly that.
:class:`ConvTranspose2D` is a :class:`~minidl.functions.conv.Conv2D` whose
forward is Conv2D's input gradient (col2im of one GEMM per kernel offset, or
a flipped-kernel convolution for stride 1) and whose backward is Conv2D's
forward (im2col + GEMM) for the input gradient and Conv2D's kernel gradient
(``im2col(grad).T @ x``) for the kernel gradient.

A 2-D transposed convolution runs the vendor library's kernel instead where
one serves it (:mod:`minidl.compute.vendor`: oneDNN's convolution run the
other way round, for float32 numpy arrays); ``vendor_kernel`` shows which
branch a call took (None: the reference code).

The kernel has Keras's transposed layout ``(kh, kw, filters, in_channels)``,
which is the layout of the kernel of the convolution being transposed (it
takes ``filters`` channels to ``in_channels``).

Sizes follow Keras 2.2.4 (``conv_utils.deconv_length``) with the TensorFlow
backend. Without ``output_padding`` an input of size ``n`` gives
``n*stride + max(extent - stride, 0)`` ('valid') or ``n*stride`` ('same'),
where ``extent = dilation*(kernel - 1) + 1``; with it,
``(n - 1)*stride + extent - 2*pad + output_padding``, ``pad`` being 0
('valid') or ``extent // 2`` ('same'). The output is placed as TensorFlow
places it: output position ``o`` receives input ``i`` through kernel tap
``t`` where ``o = i*stride + t*dilation - before``, with ``before = 0`` for
'valid' and, for 'same', half (rounded down) of ``(n - 1)*stride + extent -
size``, clipped at 0. Taps landing outside the output are dropped; output
cells no tap reaches are zero (plus bias). PyTorch crops ``padding`` from
both ends instead, so the two differ for odd ``output_padding``.
"""

import math

from minidl.compute import vendor
from minidl.functions.conv import Conv2D, _channels_first, _shape
from minidl.functions.windows import as_tuple, output_size


class ConvTranspose2D(Conv2D):
    """Transposed 2-D convolution of ``x`` with a Keras transposed kernel, plus bias.

    Inputs are ``x`` (NHWC, or NCHW when ``channels_first``), ``kernel``
    ``(kh, kw, filters, in)`` and optionally ``bias`` ``(filters,)``.
    ``pads`` and ``target_size`` describe the convolution being transposed:
    its padding and its input (this function's output) size. Like Conv2D it
    works for any number of spatial axes (the kernel's rank says how many);
    :class:`~minidl.functions.conv3d.ConvTranspose3D` is it at rank three.
    """

    rank = 2

    def __init__(self, strides, pads, dilations, channels_first, target_size):
        super().__init__(strides, pads, dilations, channels_first)
        self.target_size = target_size

    def forward(self, x, kernel, *bias):
        if kernel.ndim == 4:  # ConvTranspose3D reuses this class; the vendors serve 2-D here
            self.vendor_kernel = vendor.kernel(
                self.xp, 'conv2d_transpose', self.xp.result_type(x, kernel),
                strides=self.strides, pads=self.pads, dilations=self.dilations,
                channels_first=self.channels_first, target_size=self.target_size)
        if self.vendor_kernel is not None:
            return self.vendor_kernel.forward(x, kernel, *bias)
        return self._forward_reference(x, kernel, *bias)

    def _forward_reference(self, x, kernel, *bias):
        xp = self.xp
        if self.channels_first:
            x = xp.moveaxis(x, 1, -1)
        x = xp.ascontiguousarray(x)
        filters = kernel.shape[-2]
        # The transposed convolution's geometry, as Conv2D's input gradient reads it.
        self.kernel, self.out_size = kernel, x.shape[1:-1]
        self.in_shape = (x.shape[0], *self.target_size, filters)
        itemsize = xp.result_type(x, kernel).itemsize
        self.chunk = max(1, self.CHUNK_BYTES // (
            math.prod(self.out_size) * math.prod(kernel.shape[:-1]) * itemsize))
        y = self._input_grad(x)
        if bias:
            y += bias[0]
        self.input_rows = x.reshape(-1, x.shape[-1]) if self.needs_input_grad[1] else None
        return xp.ascontiguousarray(xp.moveaxis(y, -1, 1)) if self.channels_first else y

    def _backward_reference(self, grad):
        xp = self.xp
        kernel, input_rows = self.kernel, self.input_rows
        # The convolution being transposed, run forward on the output gradient:
        # its output is the input gradient; it keeps what its kernel gradient needs.
        grad = xp.ascontiguousarray(grad)  # may arrive broadcast (zero strides)
        grad_x = Conv2D._forward_reference(self, grad, kernel)
        grad_kernel = grad_bias = None
        if self.needs_input_grad[1]:
            grad_kernel = self._kernel_grad(input_rows).reshape(kernel.shape)
        if len(self.needs_input_grad) == 3 and self.needs_input_grad[2]:
            rows = xp.moveaxis(grad, 1, -1) if self.channels_first else grad
            rows = xp.ascontiguousarray(rows).reshape(-1, kernel.shape[-2])
            grad_bias = xp.ones(rows.shape[0], dtype=rows.dtype) @ rows
        return (grad_x if self.needs_input_grad[0] else None, grad_kernel,
                grad_bias)[:len(self.needs_input_grad)]


def transposed_output_size(size, window, stride, padding, output_padding=None, dilation=1):
    """Keras 2.2.4's output size of a transposed convolution along one axis (None stays None).

    Args:
        size: Input size.
        window: Kernel size before dilation.
        stride: Stride.
        padding: 'valid' or 'same'.
        output_padding: None (the size is inferred) or the extra cells
            added at the end.
        dilation: Dilation rate.
    """
    if size is None:
        return None
    extent = dilation * (window - 1) + 1
    if output_padding is None:
        return size * stride + (max(extent - stride, 0) if padding == 'valid' else 0)
    pad = extent // 2 if padding == 'same' else 0
    return (size - 1) * stride + extent - 2 * pad + output_padding


def _placement(size, target, window, stride, dilation, padding):
    """Padding ``(before, after)`` of the convolution that maps ``target`` cells to ``size``."""
    extent = dilation * (window - 1) + 1
    spread = (size - 1) * stride + extent  # cells the full transposed output covers
    before = max(spread - target, 0) // 2 if padding == 'same' else 0
    return before, max(spread - target - before, 0)


def _normalize_output_padding(output_padding, strides):
    """None for each axis, or ``output_padding`` per axis, each in ``[0, stride)``."""
    rank = len(strides)
    if output_padding is None:
        return (None,) * rank
    values = (output_padding,) * rank if isinstance(output_padding, int) \
        else tuple(output_padding)
    if len(values) != rank or not all(isinstance(v, int) and 0 <= v < s
                                      for v, s in zip(values, strides)):
        raise ValueError(f'output_padding must be None or an int or {rank} ints, each >= 0 '
                         f'and smaller than its stride {strides}, got {output_padding!r}')
    return values


def transposed_convolution(function_class, name, x, kernel, bias, strides, padding,
                           output_padding, dilation_rate, data_format):
    """Check Keras's arguments, size and place the output, and apply ``function_class``.

    The rank (spatial axes) is the kernel's minus two; see
    :func:`conv2d_transpose` for the arguments.
    """
    channels_first = _channels_first(data_format)
    x_shape, kernel_shape = _shape(x), _shape(kernel)
    rank = function_class.rank
    if len(x_shape) != rank + 2 or len(kernel_shape) != rank + 2:
        raise ValueError(f'{name} expects a {rank + 2}-D input and a {rank + 2}-D kernel, got '
                         f'input {x_shape} and kernel {kernel_shape}')
    channels = x_shape[1] if channels_first else x_shape[-1]
    if channels != kernel_shape[-1]:
        raise ValueError(f'{name}: input {x_shape} has {channels} channels but kernel '
                         f'{kernel_shape} (window..., filters, in) expects {kernel_shape[-1]}')
    if bias is not None and _shape(bias) != (kernel_shape[-2],):
        raise ValueError(f'{name}: bias must have shape ({kernel_shape[-2]},) for kernel '
                         f'{kernel_shape}, got {_shape(bias)}')
    if not isinstance(padding, str) or padding.lower() not in ('valid', 'same'):
        raise ValueError(f"{name}: padding must be 'valid' or 'same', got {padding!r}")
    padding = padding.lower()
    strides = as_tuple(strides, rank, 'strides')
    dilations = as_tuple(dilation_rate, rank, 'dilation_rate')
    extras = _normalize_output_padding(output_padding, strides)
    sizes = x_shape[2:] if channels_first else x_shape[1:-1]
    geometry = list(zip(sizes, kernel_shape[:rank], strides, dilations))
    targets = tuple(transposed_output_size(size, window, stride, padding, extra, dilation)
                    for (size, window, stride, dilation), extra in zip(geometry, extras))
    pads = tuple(_placement(size, target, window, stride, dilation, padding)
                 for (size, window, stride, dilation), target in zip(geometry, targets))
    if min(targets) < 1 or any(
            output_size(target, pad, window, stride, dilation) != size
            for (size, window, stride, dilation), target, pad in zip(geometry, targets, pads)):
        raise ValueError(f'{name}: input {x_shape} with kernel {kernel_shape}, strides '
                         f'{strides}, padding {padding!r} and output_padding '
                         f'{output_padding!r} gives output size {targets}, which no '
                         f'convolution maps back onto the input')
    function = function_class(strides, pads, dilations, channels_first, targets)
    return function(x, kernel) if bias is None else function(x, kernel, bias)


def conv2d_transpose(x, kernel, bias=None, strides=1, padding='valid', output_padding=None,
                     dilation_rate=1, data_format='channels_last'):
    """Transposed 2-D convolution, sized and placed as Keras 2.2.4 with TensorFlow.

    Args:
        x: Input, (N, H, W, C) or (N, C, H, W) for 'channels_first'.
        kernel: Kernel in Keras's transposed layout (kh, kw, filters, in_channels).
        bias: Optional (filters,) bias.
        strides: Int or (row, col) pair.
        padding: 'valid' or 'same' (see the module docstring for the sizes).
        output_padding: None, an int or a (row, col) pair, each smaller than
            its stride: cells added at the end of each spatial axis.
        dilation_rate: Int or (row, col) pair.
        data_format: 'channels_last' or 'channels_first'; the output has the same.

    Returns:
        Tensor (N, OH, OW, filters) or (N, filters, OH, OW).
    """
    return transposed_convolution(ConvTranspose2D, 'conv2d_transpose', x, kernel, bias,
                                  strides, padding, output_padding, dilation_rate, data_format)
