"""cuDNN's kernels, under the factory names every vendor library shares (see
:mod:`minidl.compute.vendor`). Each takes the dtype and the Function's
parameters and returns a kernel, or None where cuDNN cannot compute the
configuration (asymmetric pooling padding, a GRU with ``reset_after=False``,
a batch norm epsilon below 1e-5); cuDNN takes float16, float32 and float64.
"""

from minidl.compute.cuda.cudnn import batch_norm as _batch_norm
from minidl.compute.cuda.cudnn import pooling as _pooling
from minidl.compute.cuda.cudnn import rnn as _rnn
from minidl.compute.cuda.cudnn.convolution import Conv2DKernel


def conv2d(dtype, strides, pads, dilations, channels_first):
    """A convolution kernel for ``functions.conv.Conv2D``."""
    return Conv2DKernel(strides, pads, dilations, channels_first)


def conv2d_transpose(dtype, strides, pads, dilations, channels_first, target_size):
    """Not bound: transposed convolutions keep the CuPy reference code on the GPU."""
    return None


def depthwise_conv2d(dtype, strides, pads, dilations, channels_first):
    """Not bound: depthwise convolutions keep the CuPy reference code on the GPU."""
    return None


def dense(dtype, relu):
    """Not bound: a fully connected layer keeps the CuPy reference code (one cuBLAS
    product) on the GPU."""
    return None


def pool2d(dtype, kind, window, strides, pads, channels_first):
    """A 'max' or 'average' pooling kernel for ``functions.pooling``."""
    return _pooling.pool_kernel(kind, window, strides, pads, channels_first)


def batch_norm(dtype, kind, shape, axis, epsilon):
    """A 'training' or 'inference' batch-norm kernel for ``functions.normalization``."""
    return _batch_norm.batch_norm_kernel(kind, axis, epsilon)


def rnn(dtype, cell, reverse, has_bias, has_state, training):
    """An 'lstm' or 'gru' (``reset_after=True``) kernel for one direction of
    ``functions.lstm`` / ``functions.gru``."""
    return _rnn.rnn_kernel(cell, reverse, has_bias, has_state, training)
