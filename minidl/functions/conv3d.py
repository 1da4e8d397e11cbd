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

from minidl.functions.conv import Conv2D, _channels_first, _check_operands, _shape
from minidl.functions.conv_transpose import ConvTranspose2D, transposed_convolution
from minidl.functions.windows import as_tuple, output_size, resolve_padding


class Conv3D(Conv2D):
    """3-D convolution (cross-correlation) of ``x`` with a Keras kernel, plus bias.

    Inputs are ``x`` (NDHWC, or NCDHW when ``channels_first``), ``kernel``
    ``(kd, kh, kw, in, out)`` and optionally ``bias`` ``(out,)``; ``strides``,
    ``pads`` and ``dilations`` have one entry per spatial axis.
    """


class ConvTranspose3D(ConvTranspose2D):
    """Transposed 3-D convolution of ``x`` with a Keras transposed kernel, plus bias.

    Inputs are ``x`` (NDHWC, or NCDHW when ``channels_first``), ``kernel``
    ``(kd, kh, kw, filters, in)`` and optionally ``bias`` ``(filters,)``;
    :class:`~minidl.functions.conv_transpose.ConvTranspose2D` at rank three.
    """

    rank = 3


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
    strides = as_tuple(strides, 3, 'strides')
    dilations = as_tuple(dilation_rate, 3, 'dilation_rate')
    sizes = x_shape[2:] if channels_first else x_shape[1:4]
    pads = resolve_padding(padding, sizes, kernel_shape[:3], strides, dilations)
    if min(output_size(*args) for args in zip(sizes, pads, kernel_shape[:3], strides,
                                               dilations)) < 1:
        raise ValueError(f'conv3d: kernel {kernel_shape} (with its dilation) does not fit in '
                         f'the padded input {x_shape}')
    function = Conv3D(strides, pads, dilations, channels_first)
    return function(x, kernel) if bias is None else function(x, kernel, bias)


def conv3d_transpose(x, kernel, bias=None, strides=1, padding='valid', output_padding=None,
                     dilation_rate=1, data_format='channels_last'):
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
        dilation_rate: Int or three ints (Keras 2.2.4's layer has none: 1).
        data_format: 'channels_last' or 'channels_first'; the output has the same.

    Returns:
        Tensor (N, OD, OH, OW, filters) or (N, filters, OD, OH, OW).
    """
    return transposed_convolution(ConvTranspose3D, 'conv3d_transpose', x, kernel, bias,
                                  strides, padding, output_padding, dilation_rate,
                                  data_format)
