"""Max and average pooling through cuDNN, forward and backward.

Max pooling uses ``CUDNN_POOLING_MAX_DETERMINISTIC`` (plain MAX's backward is
documented as non-deterministic); average pooling leaves padded cells out of
each window's count, as Keras does. cuDNN pads symmetrically only:
:func:`pool_kernel` declines other paddings and the caller's plain kernels
run instead.
"""

from minidl.compute.arrays import get_array_module
from minidl.compute.cuda.cudnn import api, constants, descriptors
from minidl.compute.cuda.cudnn.handle import cached_plan, handle, plan_key, pointer, scalars

MODES = {'max': constants.POOLING_MAX_DETERMINISTIC,
         'average': constants.POOLING_AVERAGE_COUNT_EXCLUDE_PADDING}


class PoolingPlan:
    """Descriptors of one pooling shape."""

    def __init__(self, mode, window, pads, strides, x_dims, y_dims, dtype, tensor_format):
        self.pooling = descriptors.pooling(mode, window, pads, strides)
        self.x = descriptors.tensor_4d(*x_dims, dtype, tensor_format)
        self.y = descriptors.tensor_4d(*y_dims, dtype, tensor_format)


class Pool2DKernel:
    """cuDNN pooling with the signature of ``MaxPool2D`` / ``AvgPool2D``."""

    def __init__(self, kind, window, strides, pads, channels_first):
        self.mode, self.window, self.strides = MODES[kind], window, strides
        self.pads = tuple(before for before, _ in pads)
        self.channels_first = channels_first

    def forward(self, x):
        xp = self.xp = get_array_module(x)
        x = xp.ascontiguousarray(x)
        if self.channels_first:
            n, c, h, w = x.shape
        else:
            n, h, w, c = x.shape
        out_size = tuple((size + 2 * pad - window) // stride + 1 for size, pad, window, stride
                         in zip((h, w), self.pads, self.window, self.strides))
        tensor_format = constants.TENSOR_NCHW if self.channels_first else constants.TENSOR_NHWC
        key = plan_key('pool2d', x.device.id, x.shape, x.dtype.str, self.mode, self.window,
                       self.pads, self.strides, tensor_format)
        self.plan = cached_plan(key, lambda: PoolingPlan(
            self.mode, self.window, self.pads, self.strides, (n, c, h, w), (n, c) + out_size,
            x.dtype, tensor_format))
        y = xp.empty((n, c) + out_size if self.channels_first else (n,) + out_size + (c,),
                       x.dtype)
        one, zero = scalars(x.dtype)
        api.functions().PoolingForward(handle(), self.plan.pooling.value, one, self.plan.x.value,
                                       pointer(x), zero, self.plan.y.value, pointer(y))
        self.x, self.y = x, y
        return y

    def backward(self, grad):
        xp = self.xp
        grad = xp.ascontiguousarray(grad, dtype=self.y.dtype)
        grad_x = xp.empty_like(self.x)
        one, zero = scalars(grad.dtype)
        plan = self.plan
        api.functions().PoolingBackward(
            handle(), plan.pooling.value, one, plan.y.value, pointer(self.y), plan.y.value,
            pointer(grad), plan.x.value, pointer(self.x), zero, plan.x.value, pointer(grad_x))
        return grad_x


def pool_kernel(kind, window, strides, pads, channels_first):
    """A :class:`Pool2DKernel`, or None when cuDNN cannot pool with ``pads``
    (different padding before and after)."""
    if any(before != after for before, after in pads):
        return None
    return Pool2DKernel(kind, window, strides, pads, channels_first)
