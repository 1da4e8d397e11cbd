"""3-D convolution layers (Keras 2): Conv3D and Conv3DTranspose.

Conv3D is the shared convolution layer at rank 3: kernel ``(kd, kh, kw, in,
out)``, the layout :func:`minidl.functions.conv3d` takes. Conv3DTranspose
has Keras's transposed layout ``(kd, kh, kw, filters, in)`` and Keras
2.2.4's output sizes (``deconv_length``, with ``output_padding``); as in
Keras 2.2.4 it has no dilation.
"""

from minidl import functions as F
from minidl.functions.conv_transpose import transposed_output_size
from minidl.layers.conv import _Conv, check_positive_output, normalize_tuple
from minidl.layers.input_spec import InputSpec


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


class Conv3DTranspose(Conv3D):
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

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding='valid',
                 output_padding=None, data_format=None, **kwargs):
        if 'dilation_rate' in kwargs:
            raise TypeError(f'{type(self).__name__} takes no dilation_rate (as in Keras 2.2.4)')
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, **kwargs)
        if output_padding is not None:
            output_padding = normalize_tuple(output_padding, 3, 'output_padding',
                                             allow_zero=True)
            if any(extra >= stride for extra, stride in zip(output_padding, self.strides)):
                raise ValueError(f'{type(self).__name__}: each output_padding {output_padding} '
                                 f'must be smaller than its stride {self.strides}')
        self.output_padding = output_padding

    def build(self, input_shape):
        if len(input_shape) != 5:
            raise ValueError(f'layer {self.name!r} expects inputs of rank 5; got input shape '
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
        self.input_spec = InputSpec(ndim=5, axes={self._channel_axis: channels})
        self.built = True

    def call(self, inputs):
        outputs = F.conv3d_transpose(inputs, self.kernel, self.bias, strides=self.strides,
                                     padding=self.padding, output_padding=self.output_padding,
                                     data_format=self.data_format)
        return self.activation(outputs)

    def compute_output_shape(self, input_shape):
        extras = self.output_padding or (None,) * 3
        sizes = tuple(transposed_output_size(*args) for args in zip(
            self._spatial(input_shape), self.kernel_size, self.strides, (self.padding,) * 3,
            extras))
        output_shape = (input_shape[0],) + (
            (self.filters,) + sizes if self.data_format == 'channels_first'
            else sizes + (self.filters,))
        check_positive_output(self, input_shape, output_shape)
        return output_shape

    def get_config(self):
        config = super().get_config()
        # Keras 2.2.4's transposed 3-D convolution has neither dilation nor groups.
        del config['dilation_rate'], config['groups']
        config['output_padding'] = self.output_padding
        return config


Convolution3D = Conv3D
Deconvolution3D = Deconv3D = Conv3DTranspose
