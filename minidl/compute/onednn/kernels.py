"""oneDNN's kernels, under the factory names every vendor library shares (see
:mod:`minidl.compute.vendor`). Each takes the dtype and the Function's
parameters and returns a kernel, or None where oneDNN does not serve the
configuration: minidl binds it for float32 only, so other dtypes keep the
reference code.
"""

import numpy as np

from minidl.compute.onednn import batch_norm as _batch_norm
from minidl.compute.onednn.convolution import Conv2DKernel, ConvTranspose2DKernel
from minidl.compute.onednn.dense import DenseKernel
from minidl.compute.onednn.pooling import Pool2DKernel
from minidl.compute.onednn.rnn import RNNKernel


def conv2d(dtype, strides, pads, dilations, channels_first):
    """A convolution kernel for ``functions.conv.Conv2D`` (float32)."""
    if dtype != np.float32:
        return None
    return Conv2DKernel(strides, pads, dilations, channels_first)


def conv2d_transpose(dtype, strides, pads, dilations, channels_first, target_size):
    """A transposed convolution kernel for ``functions.conv_transpose.ConvTranspose2D``
    (float32); the arguments are those of the convolution it transposes."""
    if dtype != np.float32:
        return None
    return ConvTranspose2DKernel(strides, pads, dilations, channels_first, target_size)


def depthwise_conv2d(dtype, strides, pads, dilations, channels_first):
    """A depthwise convolution kernel for ``functions.depthwise.DepthwiseConv2D`` (float32)."""
    if dtype != np.float32:
        return None
    return Conv2DKernel(strides, pads, dilations, channels_first, depthwise=True)


def dense(dtype, relu):
    """A fully connected kernel for ``functions.dense.Dense`` (float32), with the ReLU
    fused when ``relu``."""
    if dtype != np.float32:
        return None
    return DenseKernel(relu)


def pool2d(dtype, kind, window, strides, pads, channels_first):
    """A 'max' or 'average' pooling kernel for ``functions.pooling`` (float32)."""
    if dtype != np.float32:
        return None
    return Pool2DKernel(kind, window, strides, pads, channels_first)


def batch_norm(dtype, kind, shape, axis, epsilon):
    """A 'training' or 'inference' batch-norm kernel for ``functions.normalization``
    (float32, at most five axes, channels second or last: oneDNN has fast kernels for
    those layouts only, and its reference code for the others is slower than ours)."""
    if (dtype != np.float32 or len(shape) > _batch_norm.MAX_AXES
            or axis % len(shape) not in (1, len(shape) - 1)):
        return None
    kernel = (_batch_norm.BatchNormKernel if kind == 'training'
              else _batch_norm.BatchNormInferenceKernel)
    return kernel(axis, epsilon)


def rnn(dtype, cell, reverse, has_bias, has_state, training):
    """An 'lstm' or 'gru' (``reset_after=True``) kernel for one direction of
    ``functions.lstm`` / ``functions.gru`` (float32)."""
    if dtype != np.float32:
        return None
    return RNNKernel(cell, reverse, has_bias, has_state, training)
