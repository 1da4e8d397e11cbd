"""Matrix products through oneDNN's matmul primitive, with a fused bias and ReLU.

A product runs as one oneDNN call on the process's share of the cores
(:func:`product_threads`), not cut into tasks of minidl's pool as the
convolutions are: oneDNN hands a call's work to its OpenMP threads in a few
microseconds, where a pool task costs about 60 us to start, and a
multilayer perceptron's products (``(128, 784) @ (784, 512)``: 0.5 ms on two
cores) are short enough for that to be a fifth of their time. Measured on
2-core AMD EPYC (AVX-512), one product on two threads: oneDNN 0.50 ms,
OpenBLAS cut into four pool tasks 0.70 ms, PyTorch (MKL) 0.59 ms.

Bits and threads: oneDNN's matmul (``brg:*``, its brgemm kernels) splits the
output's rows and columns among its threads and each output's sum over the
depth runs in one thread, in an order fixed by the shapes; so the result is
the same on any number of threads. There is one exception, which
:func:`matmul` keeps clear of: with a transposed left operand (a weight
gradient, ``x.T @ grad``) and a depth of at least 2048, oneDNN 3.2 splits
the depth among its threads when the output is too small to keep them busy
(``bwd_w_par_k_blk`` in ``src/cpu/x64/matmul/brgemm_matmul_utils.cpp``).
Such a product's depth is cut here into chunks of ``DEPTH_CHUNK``, fixed by
the shape, multiplied one by one and summed in order. An implementation other
than ``brg:*`` (a CPU without AVX2) runs on one thread.
"""

import ctypes

import numpy as np

from minidl.compute import pool, threads
from minidl.compute.onednn import api, constants, memory
from minidl.compute.onednn.primitive import Primitive, cached, engine

SPLIT_DEPTH = 2048  # from this depth a transposed left operand's sum may be split
DEPTH_CHUNK = 1024
# Multiply-adds (about 0.7 ms on one core) below which a product runs on one thread.
# oneDNN's other threads spin after each threaded call (see library.py) and take cores that
# minidl's pool may want next: with 1 << 22 here, the bidirectional LSTM's inference step
# (W5 of the benchmarks: a 1600 x 512 x 29 dense product beside pool tasks) took 51 ms
# instead of 45, and LeNet's (W2) small dense layers lost more than they gained. A
# multilayer perceptron's products (128 x 512 x 512 and up) are at least this large.
MIN_THREADED_WORK = 1 << 25


def product_threads(work):
    """OpenMP threads for one product of ``work`` multiply-adds: the process's share of
    the cores, or one for a product under ``MIN_THREADED_WORK`` or inside a task of
    minidl's pool (whose other threads have the other cores)."""
    if work < MIN_THREADED_WORK or pool.in_task():
        return 1
    return threads.cpu_share()


def readable(array):
    """``array`` as float32 with its rows or its columns contiguous (as it is, when it
    already is: a transposed view stays a view)."""
    array = np.asarray(array, dtype=np.float32)
    if array.flags.c_contiguous or array.flags.f_contiguous:
        return array
    return np.ascontiguousarray(array)


def _strides(array):
    """Element strides of a 2-D array that :func:`readable` returned; both 1 where an
    axis has one element (its stride is then meaningless to oneDNN and the cache)."""
    rows, columns = array.shape
    if rows <= 1 or columns <= 1:
        return (columns, 1)
    return (array.strides[0] // 4, array.strides[1] // 4)


def matmul(a, b, bias=None, relu=False):
    """``a @ b`` (+ ``bias``, then ReLU) of 2-D float32 arrays, as a new C-contiguous array.

    Args:
        a: ``(rows, depth)``, with its rows or its columns contiguous (a
            transposed view is read in place).
        b: ``(depth, width)``, likewise.
        bias: Optional ``(width,)`` float32 array added to every row.
        relu: Apply ``max(., 0)`` to the result, as oneDNN's post-op: NaN becomes 0
            (numpy's maximum keeps it; ``onednn.dense`` applies that one instead).

    Returns:
        The ``(rows, width)`` float32 result.
    """
    rows, depth = a.shape
    width = b.shape[1]
    transposed = _strides(a)[0] == 1 and rows > 1
    if transposed and depth >= SPLIT_DEPTH:
        return _matmul_in_depth_chunks(a, b, bias, relu)
    out = np.empty((rows, width), np.float32)
    if 0 in (rows, depth, width):  # oneDNN makes no primitive for an empty product
        out[...] = 0 if bias is None else bias
        return np.maximum(out, 0, out=out) if relu else out
    arrays = {constants.SRC: a, constants.WEIGHTS: b, constants.DST: out}
    if bias is not None:
        arrays[constants.BIAS] = np.ascontiguousarray(bias, dtype=np.float32)
    primitive(a.shape, _strides(a), b.shape, _strides(b), bias is not None, relu).execute(arrays)
    return out


def _matmul_in_depth_chunks(a, b, bias, relu):
    """:func:`matmul` of a transposed ``a`` whose depth oneDNN might split: chunk by chunk
    of the depth, summed in order."""
    depth = a.shape[1]
    out = None
    for start in range(0, depth, DEPTH_CHUNK):
        part = matmul(a[:, start:start + DEPTH_CHUNK], b[start:start + DEPTH_CHUNK])
        out = part if out is None else np.add(out, part, out=out)
    if bias is not None:
        out += bias
    return np.maximum(out, 0, out=out) if relu else out


def primitive(a_shape, a_strides, b_shape, b_strides, has_bias, relu):
    """The matmul :class:`Primitive` for operands of these shapes and element strides,
    made once per configuration and thread count (:func:`product_threads`)."""
    omp_threads = product_threads(a_shape[0] * a_shape[1] * b_shape[1])
    key = ('matmul', a_shape, a_strides, b_shape, b_strides, has_bias, relu, omp_threads)
    return cached(key, lambda: _make(a_shape, a_strides, b_shape, b_strides, has_bias, relu,
                                     omp_threads))


def _make(a_shape, a_strides, b_shape, b_strides, has_bias, relu, omp_threads):
    rows, width = a_shape[0], b_shape[1]
    descriptors = (memory.strided(a_shape, a_strides), memory.strided(b_shape, b_strides),
                   memory.strided((1, width), (width, 1)) if has_bias else None,
                   memory.strided((rows, width), (width, 1)))

    def create(pd, attr):
        if relu:
            _append_relu(attr)
        handles = [None if d is None else d.handle for d in descriptors]
        api.functions().matmul_primitive_desc_create(pd, engine(), *handles, attr)

    made = Primitive(create, omp_threads)
    if omp_threads > 1 and not made.implementation.startswith('brg'):
        made = Primitive(create, 1)  # only brgemm's split is known to keep the bits
    made.descriptors = descriptors  # kept alive with the primitive
    return made


def _append_relu(attr):
    """Give the primitive attributes ``attr`` a ReLU post-op."""
    functions = api.functions()
    post_ops = ctypes.c_void_p()
    functions.post_ops_create(ctypes.byref(post_ops))
    try:
        functions.post_ops_append_eltwise(post_ops, constants.ELTWISE_RELU, 0.0, 0.0)
        functions.primitive_attr_set_post_ops(attr, post_ops)
    finally:
        functions.post_ops_destroy(post_ops)
