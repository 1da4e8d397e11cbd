"""Batch normalization through oneDNN: training, inference and backward.

minidl normalises over every axis but the channel axis. oneDNN's data is
(N, C, spatial...) with any strides, so an array of up to five axes is
described as it lies, channels last or first, with the channel axis moved to
second place (channels-last data then takes oneDNN's fast ``nhwc``
kernels). oneDNN's batch statistics are the mean and the biased variance, as
``functions.normalization.BatchNorm`` keeps them; the running statistics stay
with the caller (``functions.batch_norm`` updates them, Keras's way).

A batch norm's statistics and its scale and shift gradients are sums over
the whole batch, so its primitives are made for one thread: oneDNN's order
of summation would change with the count.
"""

import numpy as np

from minidl.compute.onednn import api, constants, memory
from minidl.compute.onednn.primitive import Primitive, cached, engine

THREADS = 1
MAX_AXES = 5  # oneDNN normalises (N, C, D, H, W) at most
AFFINE = constants.USE_SCALE | constants.USE_SHIFT


class BatchNormPlan:
    """The primitives of one shape and channel axis: forward for ``kind`` ('training' or
    'inference') and, for training, backward (made on first use)."""

    def __init__(self, shape, axis, epsilon, kind):
        others = [a for a in range(1, len(shape)) if a != axis]
        self.data = memory.of_shape(shape, (0, axis, *others))
        self.epsilon = epsilon
        prop, flags = ((constants.FORWARD_TRAINING, AFFINE) if kind == 'training' else
                       (constants.FORWARD_INFERENCE, AFFINE | constants.USE_GLOBAL_STATS))
        self.forward = Primitive(
            lambda pd, attr: api.functions().batch_normalization_forward_primitive_desc_create(
                pd, engine(), prop, self.data.handle, self.data.handle, epsilon, flags, attr),
            THREADS)
        self._backward = None

    @property
    def backward(self):
        if self._backward is None:
            self._backward = Primitive(
                lambda pd, attr: (
                    api.functions().batch_normalization_backward_primitive_desc_create(
                        pd, engine(), constants.BACKWARD, self.data.handle, self.data.handle,
                        self.data.handle, self.epsilon, AFFINE, self.forward.descriptor,
                        attr)),
                THREADS)
        return self._backward


class BatchNormKernel:
    """oneDNN batch normalization with the signatures of ``BatchNorm``'s forward and
    backward; ``mean`` and ``variance`` (biased) hold the batch statistics."""

    KIND = 'training'

    def __init__(self, axis, epsilon):
        self.axis, self.epsilon = axis, epsilon

    def _prepare(self, x, *parameters):
        x = np.ascontiguousarray(x, dtype=np.float32)
        axis = self.axis % x.ndim
        key = ('batch_norm', self.KIND, x.shape, axis, self.epsilon)
        self.plan = cached(key, lambda: BatchNormPlan(x.shape, axis, self.epsilon, self.KIND))
        return x, [np.ascontiguousarray(p, dtype=np.float32) for p in parameters]

    def forward(self, x, gamma, beta):
        x, (gamma, beta) = self._prepare(x, gamma, beta)
        y = np.empty_like(x)
        self.mean, self.variance = np.empty_like(gamma), np.empty_like(gamma)
        self.plan.forward.execute({
            constants.SRC: x, constants.DST: y, constants.SCALE: gamma, constants.SHIFT: beta,
            constants.MEAN: self.mean, constants.VARIANCE: self.variance})
        self.x, self.gamma = x, gamma
        return y

    def backward(self, grad, needs_input_grad):
        """Gradients ``(x, gamma, beta)``; None where ``needs_input_grad`` is false."""
        grad = np.ascontiguousarray(grad, dtype=np.float32)
        grad_x = np.empty_like(self.x)
        grad_gamma, grad_beta = np.empty_like(self.gamma), np.empty_like(self.gamma)
        self.plan.backward.execute({
            constants.SRC: self.x, constants.MEAN: self.mean, constants.VARIANCE: self.variance,
            constants.DIFF_DST: grad, constants.SCALE: self.gamma, constants.DIFF_SRC: grad_x,
            constants.DIFF_SCALE: grad_gamma, constants.DIFF_SHIFT: grad_beta})
        return tuple(g if needed else None for g, needed in
                     zip((grad_x, grad_gamma, grad_beta), needs_input_grad))


class BatchNormInferenceKernel(BatchNormKernel):
    """oneDNN batch normalization with fixed statistics, forward only: used when no
    input needs a gradient (evaluation and prediction)."""

    KIND = 'inference'

    def forward(self, x, gamma, beta, mean, variance, in_place=False):
        """y of ``x``; with ``in_place``, written over ``x`` (oneDNN reads each element
        before it writes it: the same values)."""
        given = x
        x, (gamma, beta, mean, variance) = self._prepare(x, gamma, beta, mean, variance)
        # A converted x is this call's own copy: it can take y too.
        y = x if in_place or x is not given else np.empty_like(x)
        self.plan.forward.execute({
            constants.SRC: x, constants.DST: y, constants.SCALE: gamma, constants.SHIFT: beta,
            constants.MEAN: mean, constants.VARIANCE: variance})
        return y
