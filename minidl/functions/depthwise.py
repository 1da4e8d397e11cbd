"""Depthwise and separable convolutions with Keras kernel layouts.

A depthwise convolution filters each input channel on its own with
``depth_multiplier`` kernels: kernel ``(kh, kw, in, multiplier)``, output
channel ``c*multiplier + m`` from input channel ``c`` and kernel ``[:, :, c, m]``
(TensorFlow's order). With no sum over channels there is no GEMM to form;
the work is one vectorised multiply-add per kernel offset (and per depth
multiplier, usually 1) over the strided slice of the padded input that
offset reads: kh*kw operations on whole arrays, no loop over channels or
pixels. They run over a few images at a time, so that the output being
accumulated stays in cache (the operations are otherwise bound by memory
traffic). The backward is the same loop: the kernel gradient sums each
offset's slice times the output gradient, and the input gradient adds each
offset's weighted output gradient back into that slice (col2im by offsets,
no ``add.at``).

That is the reference code. The depthwise convolution runs the vendor
library's kernel instead where one serves it (:mod:`minidl.compute.vendor`:
oneDNN's grouped convolution for float32 numpy arrays); ``vendor_kernel``
shows which branch a call took (None: the reference code).

A separable convolution is a depthwise convolution followed by a 1x1
convolution (``pointwise_kernel`` ``(1, 1, in*multiplier, filters)``); the
1-D forms run the 2-D ones on a height-1 image.
"""

from minidl.compute import vendor
from minidl.functions.array import expand_dims, squeeze
from minidl.functions.conv import _as_int, _channels_first, _shape, conv2d
from minidl.functions.windows import as_pair, output_size, pad_spatial, resolve_padding
from minidl.tensor import Function


class DepthwiseConv2D(Function):
    """Depthwise 2-D convolution of ``x`` with a ``(kh, kw, in, multiplier)`` kernel, plus bias.

    Inputs are ``x`` (NHWC, or NCHW when ``channels_first``), ``kernel`` and
    optionally ``bias`` ``(in*multiplier,)``.
    """

    CHUNK_BYTES = 1 << 19

    def __init__(self, strides, pads, dilations, channels_first):
        self.strides, self.pads, self.dilations = strides, pads, dilations
        self.channels_first = channels_first

    def _chunk(self, images, image_bytes):
        """Images per pass: each pass's output stays in cache across the kernel offsets."""
        return min(images, max(1, self.CHUNK_BYTES // image_bytes))

    def _offset_slices(self, out_size):
        """For each kernel offset (i, j), the slice of the padded NHWC input it reads."""
        kh, kw = self.kernel.shape[:2]
        (sh, sw), (dh, dw) = self.strides, self.dilations
        return [(i, j, (slice(None), slice(i * dh, i * dh + (out_size[0] - 1) * sh + 1, sh),
                        slice(j * dw, j * dw + (out_size[1] - 1) * sw + 1, sw)))
                for i in range(kh) for j in range(kw)]

    vendor_kernel = None

    def forward(self, x, kernel, *bias):
        self.vendor_kernel = vendor.kernel(
            self.xp, 'depthwise_conv2d', self.xp.result_type(x, kernel), strides=self.strides,
            pads=self.pads, dilations=self.dilations, channels_first=self.channels_first)
        if self.vendor_kernel is not None:
            return self.vendor_kernel.forward(x, kernel, *bias)
        return self._forward_reference(x, kernel, *bias)

    def backward(self, grad):
        if self.vendor_kernel is not None:
            return self.vendor_kernel.backward(grad, self.needs_input_grad)
        return self._backward_reference(grad)

    def _forward_reference(self, x, kernel, *bias):
        xp = self.xp
        spatial = (2, 3) if self.channels_first else (1, 2)
        if self.pads != ((0, 0), (0, 0)):
            x = pad_spatial(xp, x, self.pads, spatial)
        if self.channels_first:
            x = x.transpose(0, 2, 3, 1)
        kh, kw, channels, multiplier = kernel.shape
        self.kernel, self.padded_shape = kernel, x.shape
        self.out_size = tuple(output_size(size, (0, 0), *args) for size, args in zip(
            x.shape[1:3], zip((kh, kw), self.strides, self.dilations)))
        dtype = xp.result_type(x, kernel)
        # Accumulated as (..., multiplier, channels): channels innermost, so each
        # multiply-add runs along whole pixels rather than along the (often 1) multiplier.
        y = xp.zeros((x.shape[0], *self.out_size, multiplier, channels), dtype=dtype)
        slices = self._offset_slices(self.out_size)
        chunk = self._chunk(y.shape[0], y[0].nbytes)
        product = xp.empty((chunk, *self.out_size, channels), dtype=dtype)
        for start in range(0, x.shape[0], chunk):
            images = slice(start, start + chunk)
            x_chunk, y_chunk = x[images], y[images]
            product_chunk = product[:y_chunk.shape[0]]
            for i, j, window in slices:
                for m in range(multiplier):
                    xp.multiply(x_chunk[window], kernel[i, j, :, m], out=product_chunk)
                    y_chunk[..., m, :] += product_chunk
        y = y.transpose(0, 1, 2, 4, 3).reshape(*y.shape[:3], channels * multiplier)
        if bias:
            y += bias[0]
        self.x = x if self.needs_input_grad[1] else None
        return xp.ascontiguousarray(y.transpose(0, 3, 1, 2)) if self.channels_first else y

    def _backward_reference(self, grad):
        xp = self.xp
        if self.channels_first:
            grad = grad.transpose(0, 2, 3, 1)
        kernel = self.kernel
        channels, multiplier = kernel.shape[2:]
        # (N, OH, OW, multiplier, channels), the forward's accumulation layout.
        grad_outputs = xp.ascontiguousarray(
            grad.reshape(*grad.shape[:3], channels, multiplier).transpose(0, 1, 2, 4, 3))
        grad_x = grad_kernel = grad_bias = None
        slices = self._offset_slices(self.out_size)
        if self.needs_input_grad[0]:
            grad_x = xp.zeros(self.padded_shape, dtype=grad.dtype)
            chunk = self._chunk(grad_x.shape[0], grad_x[0].nbytes)
            product = xp.empty((chunk, *self.out_size, channels), dtype=grad.dtype)
            for start in range(0, grad_x.shape[0], chunk):
                images = slice(start, start + chunk)
                grad_x_chunk, grad_chunk = grad_x[images], grad_outputs[images]
                product_chunk = product[:grad_chunk.shape[0]]
                for i, j, window in slices:
                    for m in range(multiplier):
                        xp.multiply(grad_chunk[..., m, :], kernel[i, j, :, m], out=product_chunk)
                        grad_x_chunk[window] += product_chunk
            (top, _), (left, _) = self.pads
            grad_x = grad_x[:, top:top + self.padded_shape[1] - sum(self.pads[0]),
                            left:left + self.padded_shape[2] - sum(self.pads[1])]
            if self.channels_first:
                grad_x = grad_x.transpose(0, 3, 1, 2)
        if self.needs_input_grad[1]:
            # Per offset, a (multiplier, channels) sum over every pixel of x * grad.
            rows = grad_outputs.reshape(-1, multiplier, channels)
            grad_kernel = xp.stack([
                xp.einsum('pc,pmc->cm', xp.ascontiguousarray(self.x[window]).reshape(-1, channels),
                          rows)
                for _, _, window in slices]).reshape(kernel.shape)
        if len(self.needs_input_grad) == 3 and self.needs_input_grad[2]:
            rows = xp.ascontiguousarray(grad).reshape(-1, channels * multiplier)
            grad_bias = xp.ones(rows.shape[0], dtype=rows.dtype) @ rows
        return (grad_x, grad_kernel, grad_bias)[:len(self.needs_input_grad)]


def depthwise_conv2d(x, depthwise_kernel, bias=None, strides=1, padding='valid',
                     dilation_rate=1, data_format='channels_last'):
    """Depthwise 2-D convolution: each input channel filtered on its own.

    Args:
        x: Input, (N, H, W, C) or (N, C, H, W) for 'channels_first'.
        depthwise_kernel: Kernel (kh, kw, C, depth_multiplier).
        bias: Optional (C*depth_multiplier,) bias.
        strides: Int or (row, col) pair.
        padding: 'valid', 'same' (TensorFlow's), an int, a pair (rows, cols)
            or ((top, bottom), (left, right)).
        dilation_rate: Int or (row, col) pair.
        data_format: 'channels_last' or 'channels_first'; the output has the same.

    Returns:
        Tensor (N, OH, OW, C*depth_multiplier), channel ``c*depth_multiplier + m``
        coming from input channel ``c`` (or the channels-first equivalent).
    """
    channels_first = _channels_first(data_format)
    x_shape, kernel_shape = _shape(x), _shape(depthwise_kernel)
    if len(x_shape) != 4 or len(kernel_shape) != 4:
        raise ValueError(f'depthwise_conv2d expects a 4-D input and a 4-D kernel, got input '
                         f'{x_shape} and kernel {kernel_shape}')
    channels = x_shape[1] if channels_first else x_shape[-1]
    if channels != kernel_shape[2]:
        raise ValueError(f'depthwise_conv2d: input {x_shape} has {channels} channels but kernel '
                         f'{kernel_shape} (kh, kw, in, multiplier) expects {kernel_shape[2]}')
    outputs = kernel_shape[2] * kernel_shape[3]
    if bias is not None and _shape(bias) != (outputs,):
        raise ValueError(f'depthwise_conv2d: bias must have shape ({outputs},) for kernel '
                         f'{kernel_shape}, got {_shape(bias)}')
    strides, dilations = as_pair(strides, 'strides'), as_pair(dilation_rate, 'dilation_rate')
    sizes = x_shape[2:] if channels_first else x_shape[1:3]
    pads = resolve_padding(padding, sizes, kernel_shape[:2], strides, dilations)
    out_size = [output_size(*args) for args in zip(sizes, pads, kernel_shape[:2], strides,
                                                   dilations)]
    if min(out_size) < 1:
        raise ValueError(f'depthwise_conv2d: kernel {kernel_shape} (with its dilation) does not '
                         f'fit in the padded input {x_shape}')
    function = DepthwiseConv2D(strides, pads, dilations, channels_first)
    return function(x, depthwise_kernel) if bias is None else function(
        x, depthwise_kernel, bias)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, bias=None, strides=1,
                     padding='valid', dilation_rate=1, data_format='channels_last'):
    """Depthwise 2-D convolution, then a 1x1 convolution mixing the channels, plus bias.

    Args:
        x: Input, (N, H, W, C) or (N, C, H, W) for 'channels_first'.
        depthwise_kernel: (kh, kw, C, depth_multiplier).
        pointwise_kernel: (1, 1, C*depth_multiplier, filters).
        bias: Optional (filters,) bias.
        strides, padding, dilation_rate: Of the depthwise step (see
            :func:`depthwise_conv2d`).
        data_format: 'channels_last' or 'channels_first'; the output has the same.
    """
    depthwise = depthwise_conv2d(x, depthwise_kernel, strides=strides, padding=padding,
                                 dilation_rate=dilation_rate, data_format=data_format)
    return conv2d(depthwise, pointwise_kernel, bias, data_format=data_format)


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, bias=None, strides=1,
                     padding='valid', dilation_rate=1, data_format='channels_last'):
    """Separable convolution over the steps of a sequence, through :func:`separable_conv2d`.

    Args:
        x: Input, (N, steps, C) or (N, C, steps) for 'channels_first'.
        depthwise_kernel: (k, C, depth_multiplier).
        pointwise_kernel: (1, C*depth_multiplier, filters).
        bias: Optional (filters,) bias.
        strides: Int (or a 1-tuple).
        padding: 'valid' or 'same' (TensorFlow's).
        dilation_rate: Int (or a 1-tuple).
        data_format: 'channels_last' or 'channels_first'; the output has the same.
    """
    if not isinstance(padding, str) or padding.lower() not in ('valid', 'same'):
        raise ValueError(f"separable_conv1d: padding must be 'valid' or 'same', got {padding!r}")
    stride, dilation = _as_int(strides, 'strides'), _as_int(dilation_rate, 'dilation_rate')
    height_axis = 2 if data_format == 'channels_first' else 1
    y = separable_conv2d(expand_dims(x, height_axis), expand_dims(depthwise_kernel, 0),
                         expand_dims(pointwise_kernel, 0), bias, strides=(1, stride),
                         padding=padding, dilation_rate=(1, dilation), data_format=data_format)
    return squeeze(y, height_axis)
