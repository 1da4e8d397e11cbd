"""Matrix products cut into pieces small enough for BLAS's small-matrix kernels.

A BLAS product normally copies (packs) both operands into its own layout
first. For a product with a thin side that copying costs as much as the
arithmetic: a recurrent step (``(16, 256) @ (256, 1024)``, the whole kernel
packed again on every call) or a convolution of few channels
(``(65536, 144) @ (144, 16)``, 38 GFLOP/s on one core against 90 for a
square product). OpenBLAS has kernels that read the operands in place, which
it takes for products of at most about 10^6 multiply-adds. So such products
are cut into pieces of at most ``SMALL_PRODUCT`` multiply-adds, and each is
still one ``matmul`` call, batched over the pieces:

- :func:`small_matmul` cuts the rows of ``a`` into slices (the convolutions;
  and each block of :func:`matmul`, which cuts a large product over the
  worker threads);
- :class:`StepProduct` cuts a fixed kernel into column chunks once, before a
  time loop (the recurrent layers, whose few rows cannot be cut).

Measured on 2-core AMD EPYC, OpenBLAS 0.3.31, one thread, whole against cut:
3x3 convolutions of 16, 32 and 64 channels 38 -> 52, 61 -> 87 and
89 -> 111 GFLOP/s, the 1x1 ones 74 -> 104 and 88 -> 108; the LSTM step
``(2, 16, 256) @ (2, 256, 1024)`` 335 -> 150 us (217 us on two threads),
its backward ``(2, 16, 1024) @ (2, 1024, 256)`` 235 -> 157 us.

The pieces depend only on the shapes, so the bits do not depend on the
number of threads. CuPy arrays are multiplied whole.
"""

import numpy as np

from minidl.compute import pool

# OpenBLAS takes its small-matrix path up to about 10^6 multiply-adds; a
# piece stays at half that, where it measured fastest.
SMALL_PRODUCT = 1 << 19
LANES = 16  # chunk widths are multiples of this (a 512-bit register of float32)
MIN_SLICE = 8  # fewer rows per slice gain nothing over the packed product


def slice_rows(depth, width):
    """Rows per slice of a ``(rows, depth) @ (depth, width)`` product: the largest
    power of two with ``rows * depth * width`` at most ``SMALL_PRODUCT``, or None
    where that is fewer than ``MIN_SLICE``."""
    rows = SMALL_PRODUCT // (depth * width)
    return None if rows < MIN_SLICE else 1 << (rows.bit_length() - 1)


def small_matmul(a, b, out=None, xp=np):
    """``a @ b`` of 2-D arrays, ``a``'s rows in slices of :func:`slice_rows` rows.

    Only C-contiguous operands are cut (a strided one would be copied); others
    are multiplied whole.

    Args:
        a, b: The operands, ``(rows, depth)`` and ``(depth, width)``.
        out: Optional ``(rows, width)`` array to write to.
        xp: The array module.

    Returns:
        The product (``out`` when given).
    """
    rows, depth = a.shape
    width = b.shape[1]
    size = slice_rows(depth, width)
    if (xp is not np or size is None or rows < 2 * size or not a.flags.c_contiguous
            or (out is not None and not out.flags.c_contiguous)):
        return xp.matmul(a, b, out=out)
    if out is None:
        out = xp.empty((rows, width), xp.result_type(a, b))
    whole = rows - rows % size
    target = out[:whole].view()
    target.shape = (whole // size, size, width)  # raises rather than copy
    xp.matmul(a[:whole].reshape(-1, size, depth), b, out=target)
    if whole < rows:
        xp.matmul(a[whole:], b, out=out[whole:])
    return out


SPLIT_PRODUCT = 1 << 23  # multiply-adds (about 0.2 ms on one core); smaller products stay whole
PRODUCT_BLOCKS = 4


def product_blocks(rows, depth, width):
    """How a ``(rows, depth) @ (depth, width)`` product is cut: ``(axis, slices)``.

    Once it has ``SPLIT_PRODUCT`` multiply-adds, the longer of its output's
    axes (0: rows, 1: columns) is cut into ``PRODUCT_BLOCKS`` blocks of a
    multiple of 16; a smaller product is one block. The blocks depend on the
    shape alone, so the bits do not depend on the number of threads.
    """
    axis, length = (0, rows) if rows >= width else (1, width)
    if rows * depth * width < SPLIT_PRODUCT or length < 16 * PRODUCT_BLOCKS:
        return axis, [slice(0, length)]
    step = -(-length // (16 * PRODUCT_BLOCKS)) * 16
    return axis, [slice(start, min(start + step, length)) for start in range(0, length, step)]


def matmul(a, b, out=None, xp=np):
    """``a @ b`` of 2-D arrays, cut into blocks (:func:`product_blocks`) run as tasks
    of :mod:`~minidl.compute.threads`, each block in small slices (:func:`small_matmul`).

    While the pool has several threads BLAS has one, so a product that
    should use every core goes through here.
    """
    axis, blocks = product_blocks(a.shape[0], a.shape[1], b.shape[1])
    if len(blocks) == 1 or xp is not np:
        return small_matmul(a, b, out=out, xp=xp)
    if out is None:
        out = xp.empty((a.shape[0], b.shape[1]), xp.result_type(a, b))
    if axis == 0:
        block = lambda rows: small_matmul(a[rows], b, out=out[rows], xp=xp)
    else:
        block = lambda columns: small_matmul(a, b[:, columns], out=out[:, columns], xp=xp)
    pool.map_tasks(block, blocks, xp)
    return out


def chunk_width(rows, depth, width):
    """The widest multiple of ``LANES`` dividing ``width`` with ``rows * depth * chunk``
    at most ``SMALL_PRODUCT``, or ``width`` itself when no narrower chunk is needed
    or none fits."""
    if rows * depth * width <= SMALL_PRODUCT:
        return width
    for chunk in range((width - 1) // LANES * LANES, 0, -LANES):
        if width % chunk == 0 and rows * depth * chunk <= SMALL_PRODUCT:
            return chunk
    return width


class StepProduct:
    """``h @ kernels`` for every step of a time loop, with the kernels fixed.

    Args:
        kernels: ``(D, a, b)`` stacked matrices (a transposed view is fine:
            they are copied once into the layout the product reads).
        rows: The rows ``N`` of every ``h``.
        xp: The array module.
    """

    def __init__(self, kernels, rows, xp):
        self.xp = xp
        count, depth, width = kernels.shape
        self.width = chunk_width(rows, depth, width) if xp is np else width
        if self.width == width:
            self.kernels = xp.ascontiguousarray(kernels)
        else:  # (chunks, D, a, chunk width)
            chunked = kernels.reshape(count, depth, width // self.width, self.width)
            self.kernels = xp.ascontiguousarray(chunked.transpose(2, 0, 1, 3))

    def __call__(self, h, out):
        """Write ``h @ kernels`` (``(D, N, a)`` by ``(D, a, b)``) into ``out`` ``(D, N, b)``
        and return ``out``."""
        if self.kernels.ndim == 3:
            self.xp.matmul(h, self.kernels, out=out)
            return out
        view = out.view()
        count, rows, width = out.shape
        view.shape = (count, rows, width // self.width, self.width)  # raises rather than copy
        self.xp.matmul(h, self.kernels, out=view.transpose(2, 0, 1, 3))
        return out
