"""Max and average pooling through oneDNN, forward and backward.

As ``functions.pooling`` defines them: padded cells never win a max and are
left out of an average's count (``POOLING_AVG_EXCLUDE_PADDING``), and each
side is padded by its own amount (TensorFlow's 'same'). Max pooling's
forward keeps oneDNN's workspace (each window's winner), which its backward
reads; the gradient goes to the first maximum of a window, as in the
reference code. Data is read where it lies, NHWC or NCHW; the batch runs in
chunks on minidl's pool (no sums cross images, so the chunks change no bit).

Threads: the backward of windows that overlap (a window larger than its
stride on some axis) sums several windows' gradients into one input cell,
and oneDNN 3.2's jit pooling takes them in an order that follows the thread
count: on NHWC data it processes ``ur_bc`` channel blocks together, chosen to
spread the work over ``nthr`` threads (``init_conf`` in
``src/cpu/x64/jit_uni_pool_kernel.cpp``). A 3x3 stride-2 max pool's input
gradient differed by 2e-7 between 1 and 2 OpenMP threads. So that backward
runs on one thread; the forward (each output's own window, in a fixed order)
and the backward of windows that do not overlap keep the thread count (the
same bits on 1 to 16 threads in 300 random shapes).
"""

import numpy as np

from minidl.compute.onednn import api, constants, memory
from minidl.compute.onednn.primitive import (
    Primitive, batch_chunks, cached, call_threads, engine)
from minidl.compute.pool import map_tasks

ALGORITHMS = {'max': constants.POOLING_MAX, 'average': constants.POOLING_AVG_EXCLUDE_PADDING}
# What one window visit costs, in the multiply-adds that batch_chunks counts: 0.2 to 0.8 ns a
# visit on one core (forward or backward; a backward on NHWC data with fewer channels than a
# vector is the dearest), 10 to 30 times a convolution's multiply-add. Counted as one, no pool
# was ever split, and LeNet's first max pool's backward (64x28x28x6) ran 0.4 ms on one core.
VISIT_WORK = 16


class PoolingPlan:
    """The forward and (made on first use) backward primitives of one pooling shape,
    made for ``threads`` OpenMP threads; the backward of overlapping windows for one
    (see the module's docstring)."""

    def __init__(self, kind, x_shape, y_shape, window, strides, pads, channels_first, threads):
        axes = (0, 1, 2, 3) if channels_first else (0, 3, 1, 2)
        self.x, self.y = memory.of_shape(x_shape, axes), memory.of_shape(y_shape, axes)
        self.algorithm = ALGORITHMS[kind]
        self.geometry = (api.dims(strides), api.dims(window), api.dims((0, 0)),
                         api.dims([before for before, _ in pads]),
                         api.dims([after for _, after in pads]))
        self.forward = Primitive(
            lambda pd, attr: api.functions().pooling_forward_primitive_desc_create(
                pd, engine(), constants.FORWARD_TRAINING, self.algorithm, self.x.handle,
                self.y.handle, *self.geometry, attr), threads)
        self.threads = threads
        overlapping = any(size > stride for size, stride in zip(window, strides))
        self.backward_threads = 1 if overlapping else threads
        self.workspace_bytes = self.forward.bytes(constants.WORKSPACE)
        self._backward = None

    @property
    def backward(self):
        if self._backward is None:
            self._backward = Primitive(
                lambda pd, attr: api.functions().pooling_backward_primitive_desc_create(
                    pd, engine(), self.algorithm, self.x.handle, self.y.handle, *self.geometry,
                    self.forward.descriptor, attr), self.backward_threads)
        return self._backward


class Pool2DKernel:
    """oneDNN pooling with the signature of ``MaxPool2D`` / ``AvgPool2D``.

    Args:
        kind: 'max' or 'average'.
        window, strides: Pairs.
        pads: ((top, bottom), (left, right)).
        channels_first: NCHW data, else NHWC.
    """

    def __init__(self, kind, window, strides, pads, channels_first):
        self.kind, self.window, self.strides = kind, tuple(window), tuple(strides)
        self.pads, self.channels_first = tuple(pads), channels_first

    def forward(self, x):
        self.x_shape = x.shape
        x = np.ascontiguousarray(x, dtype=np.float32)
        sizes = x.shape[2:] if self.channels_first else x.shape[1:3]
        self.out_size = tuple((size + sum(pads) - window) // stride + 1 for size, pads, window,
                              stride in zip(sizes, self.pads, self.window, self.strides))
        y = np.empty(self._shape(x.shape, self.out_size, x.shape[0]), np.float32)
        visits = y.size * self.window[0] * self.window[1]
        self.chunks = batch_chunks(x.shape[0], work=visits * VISIT_WORK)
        self.workspaces = {}

        def pool(bounds):
            start, stop = bounds
            plan = self._plan(stop - start)
            arrays = {constants.SRC: x[start:stop], constants.DST: y[start:stop]}
            if plan.workspace_bytes:
                arrays[constants.WORKSPACE] = memory.buffer(plan.workspace_bytes)
                self.workspaces[start] = arrays[constants.WORKSPACE]
            plan.forward.execute(arrays)

        map_tasks(pool, self.chunks)
        return y

    def backward(self, grad):
        grad = np.ascontiguousarray(grad, dtype=np.float32)
        grad_x = np.empty(self.x_shape, np.float32)

        def unpool(bounds):
            start, stop = bounds
            plan = self._plan(stop - start)
            arrays = {constants.DIFF_DST: grad[start:stop], constants.DIFF_SRC: grad_x[start:stop]}
            if plan.workspace_bytes:
                arrays[constants.WORKSPACE] = self.workspaces[start]
            plan.backward.execute(arrays)

        map_tasks(unpool, self.chunks)
        return grad_x

    def _shape(self, x_shape, spatial, n):
        channels = x_shape[1] if self.channels_first else x_shape[-1]
        return (n, channels) + spatial if self.channels_first else (n,) + spatial + (channels,)

    def _plan(self, n):
        x_shape, threads = (n,) + tuple(self.x_shape[1:]), call_threads()
        key = ('pool2d', self.kind, x_shape, self.window, self.strides, self.pads,
               self.channels_first, threads)
        return cached(key, lambda: PoolingPlan(
            self.kind, x_shape, self._shape(self.x_shape, self.out_size, n), self.window,
            self.strides, self.pads, self.channels_first, threads))
