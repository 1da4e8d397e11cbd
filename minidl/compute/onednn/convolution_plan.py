"""The oneDNN primitives of one 2-D convolution, and the thread count each runs on.

A :class:`ConvolutionPlan` holds the forward, backward-data and
backward-weights primitives of one configuration and chunk size, made on
first use, and the reorders between the Keras kernel and the layouts the
primitives chose (:mod:`~minidl.compute.onednn.convolution` runs them).

The weight gradient's primitive runs on one OpenMP thread: a thread count
would change the order of its sum over the batch. The forward and the input
gradient sum over no image's neighbours in the batch, but oneDNN 3.2 does
not keep their bits on every OpenMP thread count either: its ``brgconv`` and
``jit`` kernels choose their blocking (and so the order of each output's
sum over kernel taps and input channels) with the thread count in their
cost estimates (``brg_blocking_t::est_eff`` and ``iterate_ker_block`` in
``src/cpu/x64/jit_brgemm_conv_utils.cpp``, ``get_thr_eff`` in
``jit_avx512_common_conv_kernel.cpp``), ``brgconv_strided``'s input gradient
likewise, and ``x64:gemm:jit`` (NCHW data, dilations) runs its products
through oneDNN's sgemm, whose threaded drivers can split a thin product's
depth (as its RNN's do, ``rnn.py``). Measured on AVX-512, 1 against 2, 4, 8
and 16 threads: a 7x7 stride-4 convolution of 16 channels differs by 5e-6
on 2 threads, an 11x11 NCHW one by 3e-4. Only the kernels of 1x1
convolutions (``brgconv_1x1``, ``jit_1x1``: a product whose every output's
sum over the input channels runs in one thread, as in matmul) and of
depthwise ones (``jit_dw``, ``brdgmm_dw``: sums over the taps only) kept
every bit in a sweep of 2,100 random convolutions, in which each ran 30
(``jit_1x1``, ``jit_dw``) to 500 (``brgconv_1x1``) shapes
(:data:`THREAD_SAFE_KERNELS`; ``tests/minidl/compute/test_onednn_thread_counts.py``
pins some). Any other forward or input gradient runs on one OpenMP thread,
and a threaded one runs only where oneDNN picks the same kernel for one
thread. The bits of every result therefore depend on the shapes and the
CPU's instruction set, never on how many threads, ranks or pool workers
there are.
"""

import numpy as np

from minidl.compute.onednn import api, constants, memory
from minidl.compute.onednn.primitive import Primitive, call_threads, engine, reorder

# oneDNN 3.2's forward / input-gradient kernels (the part after the last '+' of the
# implementation's name, before its ':') whose bits are the same on any OpenMP thread count.
THREAD_SAFE_KERNELS = frozenset({'brgconv_1x1', 'jit_1x1', 'jit_dw', 'brdgmm_dw'})


def keeps_bits_on_threads(implementation):
    """Whether a forward or input-gradient primitive of oneDNN's ``implementation``
    (e.g. ``'brg_fwd:avx512_core+brgconv_1x1:avx512_core'``) gives the same bits on any
    number of OpenMP threads (see the module's docstring)."""
    return implementation.split('+')[-1].split(':')[0] in THREAD_SAFE_KERNELS


class ConvolutionPlan:
    """The primitives of one convolution configuration for a chunk of ``n`` images.

    Made lazily, direction by direction; ``primitives`` maps each (direction,
    thread count asked for) so far to the
    :class:`~minidl.compute.onednn.primitive.Primitive` that runs it (tests read
    their ``implementation``), and ``made`` each (direction, thread count) to the
    primitive made for it: one asked for several threads that would change its
    bits runs the one made for one thread.
    """

    def __init__(self, x_shape, kernel_shape, y_shape, strides, pads, dilations,
                 channels_first, bias, depthwise):
        data_axes = (0, 1, 2, 3) if channels_first else (0, 3, 1, 2)
        self.x = memory.of_shape(x_shape, data_axes)
        self.y = memory.of_shape(y_shape, data_axes)
        kh, kw, channels, out = kernel_shape
        if depthwise:  # (kh, kw, in, multiplier) seen as (kh, kw, in, multiplier, 1)
            self.keras_kernel = memory.of_shape(kernel_shape + (1,), (2, 3, 4, 0, 1))
            self.weights = memory.any_format((channels, out, 1, kh, kw))
        else:
            self.keras_kernel = memory.of_shape(kernel_shape, (3, 2, 0, 1))
            self.weights = memory.any_format((out, channels, kh, kw))
        outputs = channels * out if depthwise else out
        self.bias = memory.strided((outputs,), (1,)) if bias else None
        # oneDNN counts dilation from 0 (no gap), Keras from 1.
        self.geometry = (api.dims(strides), api.dims([d - 1 for d in dilations]),
                         api.dims([before for before, _ in pads]),
                         api.dims([after for _, after in pads]))
        self.primitives, self.made, self.reorders = {}, {}, {}

    def primitive(self, direction):
        """The 'forward', 'backward_data' or 'backward_weights' primitive for this call's
        thread count, made on first use. The weight gradient's is made for one thread:
        a thread count would change the order of its sum over the batch. A forward or
        input gradient asked for several threads runs on them only where oneDNN picks
        the same kernel as for one thread and that kernel keeps its bits on any count
        (:func:`keeps_bits_on_threads`); otherwise on one thread."""
        threads = 1 if direction == 'backward_weights' else call_threads()
        key = direction, threads
        if key not in self.primitives:
            made = self._made(direction, threads)
            if threads > 1 and not (
                    keeps_bits_on_threads(made.implementation)
                    and made.implementation == self._made(direction, 1).implementation):
                made = self._made(direction, 1)
            self.primitives[key] = made
        return self.primitives[key]

    def _made(self, direction, threads):
        """The ``direction`` primitive made for ``threads`` OpenMP threads, made on first use."""
        key = direction, threads
        if key not in self.made:
            functions = api.functions()
            bias = self.bias.handle if self.bias is not None else None
            if direction == 'forward':
                make = lambda pd, attr: functions.convolution_forward_primitive_desc_create(
                    pd, engine(), constants.FORWARD_TRAINING, constants.CONVOLUTION_DIRECT,
                    self.x.handle, self.weights.handle, bias, self.y.handle,
                    *self.geometry, attr)
            elif direction == 'backward_data':
                make = lambda pd, attr: functions.convolution_backward_data_primitive_desc_create(
                    pd, engine(), constants.CONVOLUTION_DIRECT, self.x.handle, self.weights.handle,
                    self.y.handle, *self.geometry, self.primitive('forward').descriptor, attr)
            else:
                make = lambda pd, attr: (
                    functions.convolution_backward_weights_primitive_desc_create(
                        pd, engine(), constants.CONVOLUTION_DIRECT, self.x.handle,
                        self.weights.handle, bias, self.y.handle, *self.geometry,
                        self.primitive('forward').descriptor, attr))
            self.made[key] = Primitive(make, threads)
        return self.made[key]

    def weights_in(self, direction, kernel):
        """The Keras ``kernel`` laid out as ``direction``'s primitive wants it."""
        arg = constants.DIFF_WEIGHTS if direction == 'backward_weights' else constants.WEIGHTS
        target = self.primitive(direction).md(arg)
        if memory.equal(target, self.keras_kernel.handle):
            return kernel
        if direction not in self.reorders:
            self.reorders[direction] = reorder(self.keras_kernel.handle, target)
        weights = memory.buffer(memory.size(target)).view(np.float32)
        self.reorders[direction].execute({constants.SRC: kernel, constants.DST: weights})
        return weights

    def weights_out(self, weights, kernel_shape):
        """The Keras kernel of ``weights`` laid out as the weight gradient's primitive wrote it."""
        source = self.primitive('backward_weights').md(constants.DIFF_WEIGHTS)
        if memory.equal(source, self.keras_kernel.handle):
            return weights.reshape(kernel_shape)
        if 'keras' not in self.reorders:
            self.reorders['keras'] = reorder(source, self.keras_kernel.handle)
        kernel = np.empty(kernel_shape, np.float32)
        self.reorders['keras'].execute({constants.SRC: weights, constants.DST: kernel})
        return kernel
