"""The recurrent matrix product of a time loop, cut for BLAS's small-matrix kernels.

Each step of a recurrent layer multiplies a few rows (the batch) by the same
recurrent kernel: ``(D, N, a) @ (D, a, b)`` with ``N`` around 16-64. A BLAS
product normally copies (packs) both operands into its own layout first, and
for so few rows copying the whole kernel on every call costs more than the
arithmetic. OpenBLAS has small-matrix kernels that read the operands in
place; it takes them when ``N * a * b`` is at most about a million
multiply-adds. So the kernel is stored once, before the loop, as column chunks
narrow enough for that path, and each step is still one ``matmul`` call, which
writes every chunk's product straight into its columns of the output.

Measured on 2 cores (AMD EPYC, OpenBLAS 0.3.31, one thread): the LSTM step of
a 256-unit bidirectional layer, ``(2, 16, 256) @ (2, 256, 1024)``, takes
150 us in chunks of 128 columns against 335 us whole (217 us on two threads);
its backward ``(2, 16, 1024) @ (2, 1024, 256)`` 157 us in chunks of 32 against
235 (143 on two threads).

The chunks depend only on the shapes, so the bits do not depend on the number
of threads. CuPy arrays are multiplied whole.
"""

import numpy as np

# OpenBLAS takes its small-matrix path up to about 10^6 multiply-adds; a
# chunk stays at half that, where it measured fastest.
SMALL_PRODUCT = 1 << 19
LANES = 16  # chunk widths are multiples of this (a 512-bit register of float32)


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
