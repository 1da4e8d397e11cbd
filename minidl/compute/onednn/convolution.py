"""2-D convolution through oneDNN: forward, backward data and backward weights.

Arguments and results use minidl's layouts, as ``functions.conv.Conv2D``
does: ``x`` NHWC (or NCHW when ``channels_first``) and a Keras kernel
``(kh, kw, in, out)``. oneDNN reads the data where it lies (described by
strides, :mod:`~minidl.compute.onednn.memory`) and chooses the weights'
layout itself: with plain data and weights of its choice it takes its
fastest kernels (``brgconv`` / ``jit``; plain weights would select its
reference code, thousands of times slower). The Keras kernel is reordered
into that layout once per call and the weight gradient back out of it.
oneDNN pads each side by its own amount, so TensorFlow's 'same' padding
needs no copy. A depthwise convolution is oneDNN's grouped convolution with
one group per input channel: a Keras depthwise kernel ``(kh, kw, in,
multiplier)`` is oneDNN's ``(groups=in, multiplier, 1, kh, kw)`` weights, and
output channel ``c*multiplier + m`` is TensorFlow's order too.

The batch is cut into chunks fixed by the shapes alone
(:func:`~minidl.compute.onednn.primitive.batch_chunks`), run as tasks of
minidl's pool; the weight and bias gradients are the chunks' parts summed in
chunk order, each computed by a one-thread call. The forward and the input
gradient run on several OpenMP threads only with the kernels that keep their
bits on any count (:mod:`~minidl.compute.onednn.convolution_plan`, which
makes the primitives, says which and why).
"""

import functools
import math

import numpy as np

from minidl.compute.onednn import constants, memory
from minidl.compute.onednn.convolution_plan import ConvolutionPlan
from minidl.compute.onednn.primitive import batch_chunks, cached
from minidl.compute.pool import map_tasks, run_tasks, sum_in_order
from minidl.compute.relu import positive_part_grad


class Conv2DKernel:
    """oneDNN convolution with the signature of ``Conv2D``'s forward and backward.

    Args:
        strides, pads, dilations, channels_first: As ``Conv2D`` holds them
            (``pads`` is ((top, bottom), (left, right))).
        depthwise: A depthwise convolution (``DepthwiseConv2D``'s kernel).
    """

    def __init__(self, strides, pads, dilations, channels_first, depthwise=False):
        self.strides, self.pads, self.dilations = tuple(strides), tuple(pads), tuple(dilations)
        self.channels_first, self.depthwise = channels_first, depthwise

    def forward(self, x, kernel, bias=None):
        """The convolution of ``x`` with the Keras ``kernel``, plus ``bias``."""
        self.x = np.ascontiguousarray(x, dtype=np.float32)
        self._prepare(self.x.shape, kernel, bias is not None)
        return self._convolve(self.x, bias)

    def _prepare(self, x_shape, kernel, has_bias):
        """The kernel, the shapes and the batch's chunks of a call on inputs of ``x_shape``."""
        self.kernel = np.ascontiguousarray(kernel, dtype=np.float32)
        self.x_shape, self.has_bias = tuple(x_shape), has_bias
        kh, kw, channels, _ = self.kernel.shape
        sizes = x_shape[2:] if self.channels_first else x_shape[1:3]
        self.out_size = tuple(
            (size + sum(pads) - dilation * (k - 1) - 1) // stride + 1
            for size, pads, dilation, k, stride in zip(
                sizes, self.pads, self.dilations, (kh, kw), self.strides))
        depth = 1 if self.depthwise else channels  # inputs per output
        n = x_shape[0]
        work = math.prod(self._y_shape(n)) * kh * kw * depth
        self.chunks = batch_chunks(n, work)  # the weight gradients' sums follow these
        # The forward and the input gradient sum over no image's neighbours, and oneDNN
        # gives each image the same bits in a chunk of any size (tested): their chunks
        # may be cut for an even load (LeNet's first convolution: 3 chunks, 4 here).
        self.data_chunks = batch_chunks(n, work, even=True)

    def _convolve(self, x, bias=None):
        """The forward primitive on ``x``, chunk by chunk."""
        y = np.empty(self._y_shape(x.shape[0]), np.float32)
        weights = {size: self._plan(size).weights_in('forward', self.kernel)
                   for size in {stop - start for start, stop in self.data_chunks}}
        bias = None if bias is None else np.ascontiguousarray(bias, dtype=np.float32)

        def convolve(bounds):
            start, stop = bounds
            arrays = {constants.SRC: x[start:stop], constants.WEIGHTS: weights[stop - start],
                      constants.DST: y[start:stop]}
            if bias is not None:
                arrays[constants.BIAS] = bias
            self._plan(stop - start).primitive('forward').execute(arrays)

        map_tasks(convolve, self.data_chunks)
        return y

    def backward(self, grad, needs_input_grad, relu_output=None):
        """Gradients ``(x, kernel[, bias])`` for the output gradient ``grad``; None where
        ``needs_input_grad`` is false.

        ``relu_output`` is the forward's output after a ReLU fused behind it (by
        ``functions.conv.Conv2D``), whose mask ``relu_output > 0`` ``grad`` goes
        through first. When only the kernel's gradient is wanted (a network's first
        convolution) each weight chunk masks its own rows in its pool task, in cache
        and on every thread; otherwise the whole array is masked here (the input
        gradient's chunks differ from the weights'). The same products either way.
        """
        grad = np.ascontiguousarray(grad, dtype=np.float32)
        grad_x = grad_kernel = grad_bias = None
        wants_bias = len(needs_input_grad) == 3 and needs_input_grad[2]
        if relu_output is not None and (needs_input_grad[0] or not needs_input_grad[1]):
            grad, relu_output = positive_part_grad(grad, relu_output), None
        if needs_input_grad[0] and needs_input_grad[1]:
            grad_x, grad_kernel, chunk_bias = self._input_and_weight_grads(grad)
            grad_bias = chunk_bias if wants_bias else None
        elif needs_input_grad[0]:
            grad_x = self._input_grad(grad)
        elif needs_input_grad[1]:
            grad_kernel, chunk_bias = self._weight_grads(self.x, grad, relu_output)
            grad_bias = chunk_bias if wants_bias else None
        if wants_bias and not needs_input_grad[1]:
            grad_bias = grad.sum(axis=(0, 2, 3) if self.channels_first else (0, 1, 2))
        return (grad_x, grad_kernel, grad_bias)[:len(needs_input_grad)]

    def _input_and_weight_grads(self, grad):
        """``(grad_x, grad_kernel, grad_bias or None)``, the two directions' chunks run as
        one set of pool tasks: one hand-off to the threads instead of two, and each
        thread gets an input-gradient and a weight-gradient chunk in turn, whose costs
        differ (LeNet's second convolution: about 0.27 and 0.1 ms per 16 images).
        Each result is computed exactly as apart, the weight parts summed in chunk order."""
        grad_x, backward_data = self._input_grad_task(grad)
        backward_weights = self._weight_grad_task(self.x, grad)
        data = [functools.partial(backward_data, bounds) for bounds in self.data_chunks]
        weights = [functools.partial(backward_weights, bounds) for bounds in self.chunks]
        tasks = []  # (a weight chunk's?, task), alternating while both last
        for index in range(max(len(data), len(weights))):
            tasks += [(False, task) for task in data[index:index + 1]]
            tasks += [(True, task) for task in weights[index:index + 1]]
        results = run_tasks([task for _, task in tasks])
        parts = [result for (is_weight, _), result in zip(tasks, results) if is_weight]
        return (grad_x, *self._sum_weight_parts(parts))

    def _input_grad(self, grad):
        """The backward-data primitive on the output gradient ``grad``, chunk by chunk."""
        grad_x, backward_data = self._input_grad_task(grad)
        map_tasks(backward_data, self.data_chunks)
        return grad_x

    def _input_grad_task(self, grad):
        """The input gradient to fill, and the task that fills one chunk's rows of it."""
        grad_x = np.empty(self.x_shape, np.float32)
        weights = {size: self._plan(size).weights_in('backward_data', self.kernel)
                   for size in {stop - start for start, stop in self.data_chunks}}

        def backward_data(bounds):
            start, stop = bounds
            self._plan(stop - start).primitive('backward_data').execute({
                constants.DIFF_DST: grad[start:stop], constants.WEIGHTS: weights[stop - start],
                constants.DIFF_SRC: grad_x[start:stop]})

        return grad_x, backward_data

    def _weight_grads(self, x, grad, relu_output=None):
        """The kernel gradient and the bias's (or None) of input ``x`` and output gradient
        ``grad`` (masked with ``relu_output > 0`` chunk by chunk, when given), summed over
        the chunks in order."""
        return self._sum_weight_parts(
            map_tasks(self._weight_grad_task(x, grad, relu_output), self.chunks))

    def _weight_grad_task(self, x, grad, relu_output=None):
        """The task giving one chunk's (plan, kernel gradient in the layout its primitive
        wrote, bias gradient or None)."""
        out = self._out_channels()

        def backward_weights(bounds):
            start, stop = bounds
            plan = self._plan(stop - start)
            primitive = plan.primitive('backward_weights')
            weights = memory.buffer(primitive.bytes(constants.DIFF_WEIGHTS)).view(np.float32)
            rows = grad[start:stop]
            if relu_output is not None:
                rows = positive_part_grad(rows, relu_output[start:stop])
            arrays = {constants.SRC: x[start:stop], constants.DIFF_DST: rows,
                      constants.DIFF_WEIGHTS: weights}
            bias = np.empty(out, np.float32) if self.has_bias else None
            if bias is not None:
                arrays[constants.DIFF_BIAS] = bias
            primitive.execute(arrays)
            return plan, weights, bias

        return backward_weights

    def _sum_weight_parts(self, parts):
        """The chunks' (kernel, bias) gradients summed in chunk order.

        Where every chunk's primitive wrote the kernel gradient in one layout, the
        parts are summed in it and the sum is reordered into the Keras layout once,
        not each part (LeNet's convolutions: 5 reorders of 7 fewer a step). Each
        element is the same sum in the same order either way: the same bits.
        """
        plans = [plan for plan, _, _ in parts]
        layouts = [plan.primitive('backward_weights').md(constants.DIFF_WEIGHTS)
                   for plan in plans]
        if all(memory.equal(layout, layouts[0]) for layout in layouts[1:]):
            grad_kernel = plans[0].weights_out(
                _sum_aligned([weights for _, weights, _ in parts]), self.kernel.shape)
        else:
            grad_kernel = sum_in_order([plan.weights_out(weights, self.kernel.shape)
                                        for plan, weights, _ in parts])
        grad_bias = sum_in_order([bias for _, _, bias in parts]) if self.has_bias else None
        return grad_kernel, grad_bias

    def _out_channels(self):
        _, _, channels, out = self.kernel.shape
        return channels * out if self.depthwise else out

    def _y_shape(self, n):
        out = self._out_channels()
        return (n, out) + self.out_size if self.channels_first else (n,) + self.out_size + (out,)

    def _plan(self, n):
        x_shape = (n,) + self.x_shape[1:]
        key = ('conv2d', x_shape, self.kernel.shape, self.strides, self.pads, self.dilations,
               self.channels_first, self.has_bias, self.depthwise)
        return cached(key, lambda: ConvolutionPlan(
            x_shape, self.kernel.shape, self._y_shape(n), self.strides, self.pads,
            self.dilations, self.channels_first, self.has_bias, self.depthwise))



def _sum_aligned(parts):
    """``((parts[0] + parts[1]) + parts[2]) + ...`` of float32 arrays, in an aligned
    buffer for oneDNN's reorder (the one part itself when there is one). The padding
    of a blocked layout is summed too: nothing reads it."""
    if len(parts) == 1:
        return parts[0]
    total = memory.buffer(parts[0].nbytes).view(np.float32)
    with np.errstate(all='ignore'):  # the padding's bits are oneDNN's to choose
        np.add(parts[0], parts[1], out=total)
        for part in parts[2:]:
            np.add(total, part, out=total)
    return total


class ConvTranspose2DKernel(Conv2DKernel):
    """oneDNN transposed convolution with the signature of ``ConvTranspose2D``.

    It is the convolution it transposes, run the other way round: its forward
    is that convolution's input gradient (the backward-data primitive), its
    input gradient that convolution's forward, and its kernel gradient that
    convolution's weight gradient with this function's output gradient as the
    input. Keras's transposed kernel ``(kh, kw, filters, in)`` is that
    convolution's kernel as it lies.

    Args:
        strides, pads, dilations, channels_first: Those of the convolution transposed.
        target_size: Its input's spatial size: this function's output size.
    """

    def __init__(self, strides, pads, dilations, channels_first, target_size):
        super().__init__(strides, pads, dilations, channels_first)
        self.target_size = tuple(target_size)

    def forward(self, x, kernel, bias=None):
        self.source = x = np.ascontiguousarray(x, dtype=np.float32)
        n, filters = x.shape[0], kernel.shape[2]
        self._prepare((n, filters, *self.target_size) if self.channels_first else
                      (n, *self.target_size, filters), kernel, has_bias=False)
        y = self._input_grad(x)
        if bias is not None:
            bias = np.asarray(bias, dtype=np.float32)
            y += bias.reshape(-1, 1, 1) if self.channels_first else bias
        return y

    def backward(self, grad, needs_input_grad):
        """Gradients ``(x, kernel[, bias])``; None where ``needs_input_grad`` is false."""
        grad = np.ascontiguousarray(grad, dtype=np.float32)
        grad_x = self._convolve(grad) if needs_input_grad[0] else None
        grad_kernel = self._weight_grads(grad, self.source)[0] if needs_input_grad[1] else None
        grad_bias = None
        if len(needs_input_grad) == 3 and needs_input_grad[2]:
            grad_bias = grad.sum(axis=(0, 2, 3) if self.channels_first else (0, 1, 2))
        return (grad_x, grad_kernel, grad_bias)[:len(needs_input_grad)]
