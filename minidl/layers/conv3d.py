"""3-D convolution layers (Keras 2): Conv3D and Conv3DTranspose.

Conv3D is the shared convolution layer at rank 3: kernel ``(kd, kh, kw, in,
out)``, the layout :func:`minidl.functions.conv3d` takes. Conv3DTranspose
has Keras's transposed layout ``(kd, kh, kw, filters, in)`` and Keras
2.2.4's output sizes (``deconv_length``, with ``output_padding``); as in
Keras 2.2.4 it has no dilation.
"""

from minidl import functions as F
from minidl.layers.conv import _Conv
from minidl.layers.conv_transpose import TransposedConvolution


class Conv3D(_Conv):
    """3-D convolution over volumes (or video: frames, rows, cols).

    Args:
        filters: Number of output channels.
        kernel_size: Window size, an int or (depth, rows, cols).
        strides: Int or three ints.
        padding: 'valid' or 'same' (TensorFlow's: output ``ceil(size / stride)``,
            the odd padded cell at the end).
        data_format: 'channels_last' (batch, depth, rows, cols, channels), the
            default, or 'channels_first' (batch, channels, depth, rows, cols).
        dilation_rate: Int or three ints, the spacing between the kernel's taps.
        activation: Activation applied to the output (name or callable).
        use_bias: Whether to add a bias vector.
        kernel_initializer, bias_initializer: Initializers of the kernel
            ``(depth, rows, cols, in_channels, filters)`` and the bias ``(filters,)``.
        kernel_regularizer, bias_regularizer, activity_regularizer: Penalties.
        kernel_constraint, bias_constraint: Projections applied after updates.
    """

    rank = 3
    function = staticmethod(F.conv3d)

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding='valid',
                 data_format=None, dilation_rate=(1, 1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)


class Conv3DTranspose(TransposedConvolution, Conv3D):
    """Transposed 3-D convolution, upsampling a volume by its strides.

    Args:
        filters: Number of output channels.
        kernel_size: Window size, an int or (depth, rows, cols).
        strides: Int or three ints; the output is about ``strides`` times larger.
        padding: 'valid' (output ``size*stride + max(kernel - stride, 0)``)
            or 'same' (output ``size*stride``).
        output_padding: None (the size is inferred as above), or an int or
            three ints, each smaller than its stride: the output is then
            ``(size - 1)*stride + kernel - 2*pad + output_padding``, ``pad``
            being 0 ('valid') or ``kernel // 2`` ('same').
        data_format: 'channels_last' (the default for None) or 'channels_first'.
        activation, use_bias, initializers, regularizers, constraints: As
            Conv3D; the kernel is ``(depth, rows, cols, filters, in_channels)``.
    """

    function = staticmethod(F.conv3d_transpose)

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding='valid',
                 output_padding=None, data_format=None, **kwargs):
        if 'dilation_rate' in kwargs:
            raise TypeError(f'{type(self).__name__} takes no dilation_rate (as in Keras 2.2.4)')
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         output_padding=output_padding, data_format=data_format, **kwargs)

    def get_config(self):
        config = super().get_config()
        del config['dilation_rate']  # Keras 2.2.4's transposed 3-D convolution has none
        return config


Convolution3D = Conv3D
Deconvolution3D = Deconv3D = Conv3DTranspose
