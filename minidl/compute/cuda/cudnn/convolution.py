"""2-D convolution through cuDNN: forward, backward data and backward filter.

Arguments and results use minidl's layouts, as ``functions.conv.Conv2D``
does: ``x`` NHWC (or NCHW when ``channels_first``) and a Keras kernel
``(kh, kw, in, out)``. cuDNN gets the data as it is, with tensor descriptors
of that layout, and the kernel transposed to the matching filter layout,
KRSC for NHWC and KCRS for NCHW. cuDNN pads symmetrically, so the odd row or
column of TensorFlow's 'same' padding is padded explicitly first and its
gradient cropped off. The bias is added and its gradient summed with CuPy.
"""

from minidl import config
from minidl.compute.arrays import get_array_module
from minidl.compute.cuda import runtime
from minidl.compute.cuda.cudnn import algorithms, api, constants, descriptors
from minidl.compute.cuda.cudnn.handle import (
    cached_plan, handle, math_type, plan_key, pointer, scalars)


class ConvolutionPlan:
    """Descriptors of one convolution shape and its chosen algorithms.

    ``algorithms`` maps each direction used so far to ``(algorithm,
    deterministic, workspace bytes)``; tests assert on it.
    """

    def __init__(self, x_dims, weight_dims, y_dims, pads, strides, dilations, dtype,
                 tensor_format):
        self.x = descriptors.tensor_4d(*x_dims, dtype, tensor_format)
        self.w = descriptors.filter_4d(*weight_dims, dtype, tensor_format)
        self.y = descriptors.tensor_4d(*y_dims, dtype, tensor_format)
        self.convolution = descriptors.convolution(pads, strides, dilations, dtype)
        self.math_type, self.deterministic = math_type(dtype), bool(config.deterministic)
        self.algorithms = {}

    def algorithm(self, direction, cudnn_handle):
        """``(algorithm, workspace bytes)`` for ``direction``, chosen on first use."""
        if direction not in self.algorithms:
            operands = {'forward': (self.x, self.w, self.convolution, self.y),
                        'backward_data': (self.w, self.y, self.convolution, self.x),
                        'backward_filter': (self.x, self.y, self.convolution, self.w)}
            self.algorithms[direction] = algorithms.select(
                direction, cudnn_handle, operands[direction], self.math_type, self.deterministic)
        algorithm, _, workspace = self.algorithms[direction]
        return algorithm, workspace


class Conv2DKernel:
    """cuDNN convolution with the signature of ``Conv2D``'s forward and backward.

    Args:
        strides, pads, dilations, channels_first: As ``Conv2D`` holds them
            (``pads`` is ((top, bottom), (left, right))).
    """

    def __init__(self, strides, pads, dilations, channels_first):
        self.strides, self.dilations, self.channels_first = strides, dilations, channels_first
        self.pads = tuple(min(pair) for pair in pads)
        self.extra = tuple((before - p, after - p) for (before, after), p in zip(pads, self.pads))
        self.spatial_axes = (2, 3) if channels_first else (1, 2)

    def forward(self, x, kernel, bias=None):
        """The convolution of ``x`` with the Keras ``kernel``, plus ``bias``."""
        xp = self.xp = get_array_module(x)
        dtype = xp.result_type(x, kernel)
        if any(any(pair) for pair in self.extra):
            widths = [(0, 0)] * 4
            for axis, pair in zip(self.spatial_axes, self.extra):
                widths[axis] = pair
            x = xp.pad(x, widths)
        self.x = xp.ascontiguousarray(x, dtype=dtype)
        kh, kw, channels, out = kernel.shape
        order = (3, 2, 0, 1) if self.channels_first else (3, 0, 1, 2)  # KCRS or KRSC
        self.weight = xp.ascontiguousarray(kernel.transpose(order), dtype=dtype)
        n = self.x.shape[0]
        h, w = (self.x.shape[axis] for axis in self.spatial_axes)
        out_size = tuple((size + 2 * pad - dilation * (k - 1) - 1) // stride + 1
                         for size, pad, dilation, k, stride in zip(
                             (h, w), self.pads, self.dilations, (kh, kw), self.strides))
        tensor_format = constants.TENSOR_NCHW if self.channels_first else constants.TENSOR_NHWC
        key = plan_key('conv2d', x.device.id, self.x.shape, kernel.shape, dtype.str, self.pads,
                       self.strides, self.dilations, tensor_format)
        self.plan = cached_plan(key, lambda: ConvolutionPlan(
            (n, channels, h, w), (out, channels, kh, kw), (n, out) + out_size, self.pads,
            self.strides, self.dilations, dtype, tensor_format))
        y_shape = (n, out) + out_size if self.channels_first else (n,) + out_size + (out,)
        y = xp.empty(y_shape, dtype)
        self._run('ConvolutionForward', 'forward', self.plan.x, self.x, self.plan.w, self.weight,
                  self.plan.y, y)
        if bias is not None:
            y += bias.reshape(-1, 1, 1) if self.channels_first else bias
        return y

    def backward(self, grad, needs_input_grad, relu_output=None):
        """Gradients ``(x, kernel[, bias])`` for the output gradient ``grad``; None where
        ``needs_input_grad`` is false. ``relu_output``: the output of a ReLU fused behind
        the forward, whose mask (``relu_output > 0``) ``grad`` goes through first."""
        xp = self.xp
        if relu_output is not None:
            grad = grad * (relu_output > 0)
        grad = xp.ascontiguousarray(grad, dtype=self.x.dtype)
        grad_x = grad_kernel = grad_bias = None
        if needs_input_grad[0]:
            grad_x = xp.empty_like(self.x)
            self._run('ConvolutionBackwardData', 'backward_data', self.plan.w, self.weight,
                      self.plan.y, grad, self.plan.x, grad_x)
            crop = [slice(None)] * 4
            for axis, (before, after) in zip(self.spatial_axes, self.extra):
                crop[axis] = slice(before, grad_x.shape[axis] - after)
            grad_x = grad_x[tuple(crop)]
        if needs_input_grad[1]:
            grad_weight = xp.empty_like(self.weight)
            self._run('ConvolutionBackwardFilter', 'backward_filter', self.plan.x, self.x,
                      self.plan.y, grad, self.plan.w, grad_weight)
            grad_kernel = grad_weight.transpose((2, 3, 1, 0) if self.channels_first
                                                else (1, 2, 3, 0))
        if len(needs_input_grad) == 3 and needs_input_grad[2]:
            grad_bias = grad.sum(axis=(0,) + self.spatial_axes)
        return (grad_x, grad_kernel, grad_bias)[:len(needs_input_grad)]

    def _run(self, function_name, direction, a_descriptor, a, b_descriptor, b,
             out_descriptor, out):
        """``out = op(a, b)`` with the plan's algorithm for ``direction``."""
        cudnn_handle = handle()
        algorithm, workspace_size = self.plan.algorithm(direction, cudnn_handle)
        workspace = runtime.allocate(workspace_size)
        one, zero = scalars(out.dtype)
        getattr(api.functions(), function_name)(
            cudnn_handle, one, a_descriptor.value, pointer(a), b_descriptor.value, pointer(b),
            self.plan.convolution.value, algorithm, workspace.ptr, workspace_size, zero,
            out_descriptor.value, pointer(out))
