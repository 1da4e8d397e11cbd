"""Conv2DTranspose (Keras 2's "deconvolution"): the transposed 2-D convolution layer.

The kernel has Keras's transposed layout ``(rows, cols, filters, in_channels)``
and the output size is Keras 2.2.4's (see
:mod:`minidl.functions.conv_transpose` for the sizes and the placement).
"""

from minidl.functions.conv_transpose import conv2d_transpose, transposed_output_size
from minidl.layers.conv import Conv2D, check_positive_output, normalize_tuple
from minidl.layers.input_spec import InputSpec


class Conv2DTranspose(Conv2D):
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

    def __init__(self, filters, kernel_size, strides=(1, 1), padding='valid',
                 output_padding=None, data_format=None, dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer='glorot_uniform', bias_initializer='zeros',
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         **kwargs)
        if output_padding is not None:
            output_padding = normalize_tuple(output_padding, 2, 'output_padding',
                                             allow_zero=True)
            if any(extra >= stride for extra, stride in zip(output_padding, self.strides)):
                raise ValueError(f'{type(self).__name__}: each output_padding {output_padding} '
                                 f'must be smaller than its stride {self.strides}')
        self.output_padding = output_padding

    def build(self, input_shape):
        if len(input_shape) != 4:
            raise ValueError(f'layer {self.name!r} expects inputs of rank 4; got input shape '
                             f'{tuple(input_shape)}')
        channels = input_shape[self._channel_axis]
        if channels is None:
            raise ValueError(f'layer {self.name!r}: the channel dimension of the inputs must be '
                             f'known; got input shape {tuple(input_shape)}')
        self.compute_output_shape(input_shape)
        self.kernel = self.add_weight('kernel', self.kernel_size + (self.filters, channels),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight('bias', (self.filters,),
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=4, axes={self._channel_axis: channels})
        self.built = True

    def call(self, inputs):
        outputs = conv2d_transpose(inputs, self.kernel, self.bias, strides=self.strides,
                                   padding=self.padding, output_padding=self.output_padding,
                                   dilation_rate=self.dilation_rate,
                                   data_format=self.data_format)
        return self.activation(outputs)

    def compute_output_shape(self, input_shape):
        extras = self.output_padding or (None, None)
        sizes = tuple(transposed_output_size(*args) for args in zip(
            self._spatial(input_shape), self.kernel_size, self.strides, (self.padding,) * 2,
            extras, self.dilation_rate))
        output_shape = (input_shape[0],) + (
            (self.filters,) + sizes if self.data_format == 'channels_first'
            else sizes + (self.filters,))
        check_positive_output(self, input_shape, output_shape)
        return output_shape

    def get_config(self):
        config = super().get_config()
        del config['groups']  # Keras 2's transposed convolution has no groups
        config['output_padding'] = self.output_padding
        return config


Deconvolution2D = Deconv2D = Convolution2DTranspose = Conv2DTranspose
