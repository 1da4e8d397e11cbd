"""Transposed convolution layers (Keras 2's "deconvolution"): Conv2DTranspose, and the
mixin that Conv3DTranspose shares.

The kernel has Keras's transposed layout ``(window..., filters, in_channels)``
and the output size is Keras 2.2.4's (see
:mod:`minidl.functions.conv_transpose` for the sizes and the placement).
"""

from minidl.functions.conv_transpose import conv2d_transpose, transposed_output_size
from minidl.layers.conv import Conv2D, normalize_tuple


class TransposedConvolution:
    """Turns a convolution layer class into its transpose (``class X(TransposedConvolution,
    ConvND)``): Keras's transposed kernel layout, ``output_padding`` and output sizes.
    Subclasses set ``function`` to the transposed convolution of their rank."""

    def __init__(self, *args, output_padding=None, **kwargs):
        super().__init__(*args, **kwargs)
        if output_padding is not None:
            output_padding = normalize_tuple(output_padding, self.rank, 'output_padding',
                                             allow_zero=True)
            if any(extra >= stride for extra, stride in zip(output_padding, self.strides)):
                raise ValueError(f'{type(self).__name__}: each output_padding {output_padding} '
                                 f'must be smaller than its stride {self.strides}')
        self.output_padding = output_padding

    def _kernel_shape(self, input_shape, channels):
        return self.kernel_size + (self.filters, channels)

    def _output_sizes(self, spatial):
        extras = self.output_padding or (None,) * self.rank
        return tuple(transposed_output_size(*args) for args in zip(
            spatial, self.kernel_size, self.strides, (self.padding,) * self.rank, extras,
            self.dilation_rate))

    def call(self, inputs):
        outputs = self.function(inputs, self.kernel, self.bias, strides=self.strides,
                                padding=self.padding, output_padding=self.output_padding,
                                dilation_rate=self.dilation_rate,
                                data_format=self.data_format)
        return self.activation(outputs)

    def get_config(self):
        config = super().get_config()
        del config['groups']  # Keras 2's transposed convolutions have no groups
        config['output_padding'] = self.output_padding
        return config


class Conv2DTranspose(TransposedConvolution, Conv2D):
    """Transposed 2-D convolution, upsampling an image by its strides.

    Args:
        filters: Number of output channels.
        kernel_size: Window size, an int or (rows, cols).
        strides: Int or (rows, cols); the output is about ``strides`` times larger.
        padding: 'valid' (output ``size*stride + max(extent - stride, 0)``)
            or 'same' (output ``size*stride``), where ``extent`` is the
            dilated kernel size.
        output_padding: None (the output size is inferred as above), or an
            int or (rows, cols), each smaller than its stride: the output is
            then ``(size - 1)*stride + extent - 2*pad + output_padding``,
            ``pad`` being 0 ('valid') or ``extent // 2`` ('same').
        data_format: 'channels_last' (batch, rows, cols, channels), the
            default, or 'channels_first' (batch, channels, rows, cols).
        dilation_rate: Int or (rows, cols) spacing between the kernel's taps.
        activation: Activation applied to the output (name or callable).
        use_bias: Whether to add a bias vector.
        kernel_initializer, bias_initializer: Initializers of the kernel
            ``(rows, cols, filters, in_channels)`` and the bias ``(filters,)``.
        kernel_regularizer, bias_regularizer, activity_regularizer: Penalties.
        kernel_constraint, bias_constraint: Projections applied after updates.
    """

    function = staticmethod(conv2d_transpose)

    def __init__(self, filters, kernel_size, strides=(1, 1), padding='valid',
                 output_padding=None, data_format=None, dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer='glorot_uniform', bias_initializer='zeros',
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         output_padding=output_padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         **kwargs)


Deconvolution2D = Deconv2D = Convolution2DTranspose = Conv2DTranspose
