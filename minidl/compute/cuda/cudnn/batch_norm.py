"""Batch normalization through cuDNN (SPATIAL mode): training, inference, backward.

minidl normalises over every axis but the channel axis. Viewed as
``(outer, C, inner)`` around that axis, a C-contiguous array is an NCHW tensor
``(outer, C, inner, 1)``; when the channel axis is last (inner = 1) it is
described as NHWC with N the first axis and H the others before the
channels, the layout cuDNN's channels-last kernels expect. (Not N = outer:
cuDNN 9.19's inference kernel refuses an N of 65,536 with NOT_SUPPORTED, seen
on an H100 with ResNet-20's 64 x 32 x 32 x 16 batch.) SPATIAL mode normalises
over N, H and W: every axis but C.
(SPATIAL_PERSISTENT is faster but may be non-deterministic and overflow.)

The running statistics stay with the caller (``functions.batch_norm``
updates them from the batch mean and variance, Keras's way), so cuDNN is
given none; the batch variance is recovered from cuDNN's saved inverse
standard deviation.
"""

import math

import numpy as np

from minidl.compute.arrays import get_array_module
from minidl.compute.cuda.cudnn import api, constants, descriptors
from minidl.compute.cuda.cudnn.handle import cached_plan, handle, plan_key, pointer, scalars

MODE = constants.BATCHNORM_SPATIAL


class BatchNormPlan:
    """Descriptors of one shape: the data and the per-channel parameters."""

    def __init__(self, shape, axis, dtype):
        outer, channels = math.prod(shape[:axis]), shape[axis]
        inner = math.prod(shape[axis + 1:])
        if inner == 1:
            n = shape[0] if axis > 0 else 1
            self.x = descriptors.tensor_4d(n, channels, outer // n, 1, dtype,
                                           constants.TENSOR_NHWC)
        else:
            self.x = descriptors.tensor_4d(outer, channels, inner, 1, dtype,
                                           constants.TENSOR_NCHW)
        self.parameters = descriptors.Descriptor('Tensor')
        api.functions().DeriveBNTensorDescriptor(self.parameters.value, self.x.value, MODE)


def parameter_dtype(dtype):
    """cuDNN keeps per-channel values in float for half and float data, double for double."""
    return np.dtype('float64') if dtype.itemsize == 8 else np.dtype('float32')


class BatchNormKernel:
    """cuDNN batch normalization with the signatures of ``BatchNorm``'s forward and
    backward; ``mean`` and ``variance`` (biased) hold the batch statistics."""

    def __init__(self, axis, epsilon):
        self.axis, self.epsilon = axis, epsilon

    def _prepare(self, x, *parameters):
        xp = self.xp = get_array_module(x)
        x = xp.ascontiguousarray(x)
        axis = self.axis % x.ndim
        key = plan_key('batch_norm', x.device.id, x.shape, axis, x.dtype.str)
        self.plan = cached_plan(key, lambda: BatchNormPlan(x.shape, axis, x.dtype))
        dtype = parameter_dtype(x.dtype)
        return x, [xp.ascontiguousarray(p, dtype=dtype) for p in parameters]

    def forward(self, x, gamma, beta):
        x, (gamma, beta) = self._prepare(x, gamma, beta)
        xp = self.xp
        y = xp.empty_like(x)
        self.saved_mean = xp.empty_like(gamma)
        self.saved_inv_std = xp.empty_like(gamma)
        one, zero = scalars(x.dtype)
        plan = self.plan
        api.functions().BatchNormalizationForwardTraining(
            handle(), MODE, one, zero, plan.x.value, pointer(x), plan.x.value, pointer(y),
            plan.parameters.value, pointer(gamma), pointer(beta), 0.0, None, None,
            self.epsilon, pointer(self.saved_mean), pointer(self.saved_inv_std))
        self.x, self.gamma = x, gamma
        self.mean = self.saved_mean
        self.variance = 1 / (self.saved_inv_std * self.saved_inv_std) - self.epsilon
        return y

    def backward(self, grad, needs_input_grad):
        """Gradients ``(x, gamma, beta)``; None where ``needs_input_grad`` is false."""
        xp = self.xp
        grad = xp.ascontiguousarray(grad, dtype=self.x.dtype)
        grad_x = xp.empty_like(self.x)
        grad_gamma, grad_beta = xp.empty_like(self.gamma), xp.empty_like(self.gamma)
        one, zero = scalars(self.x.dtype)
        plan = self.plan
        api.functions().BatchNormalizationBackward(
            handle(), MODE, one, zero, one, zero, plan.x.value, pointer(self.x), plan.x.value,
            pointer(grad), plan.x.value, pointer(grad_x), plan.parameters.value,
            pointer(self.gamma), pointer(grad_gamma), pointer(grad_beta), self.epsilon,
            pointer(self.saved_mean), pointer(self.saved_inv_std))
        return tuple(g if needed else None for g, needed in
                     zip((grad_x, grad_gamma, grad_beta), needs_input_grad))


class BatchNormInferenceKernel(BatchNormKernel):
    """cuDNN batch normalization with fixed statistics, forward only: used when no
    input needs a gradient (evaluation and prediction)."""

    def forward(self, x, gamma, beta, mean, variance):
        x, parameters = self._prepare(x, gamma, beta, mean, variance)
        xp = self.xp
        y = xp.empty_like(x)
        one, zero = scalars(x.dtype)
        api.functions().BatchNormalizationForwardInference(
            handle(), MODE, one, zero, self.plan.x.value, pointer(x), self.plan.x.value,
            pointer(y), self.plan.parameters.value, *(pointer(p) for p in parameters),
            self.epsilon)
        return y


def batch_norm_kernel(kind, axis, epsilon):
    """A kernel for ``kind`` 'training' or 'inference', or None when ``epsilon`` is
    below cuDNN's minimum (CUDNN_BN_MIN_EPSILON)."""
    if epsilon < constants.BN_MIN_EPSILON:
        return None
    return (BatchNormKernel if kind == 'training' else BatchNormInferenceKernel)(axis, epsilon)
