"""Data parallelism with quantized (QSGD) or sparsified (top-k) gradients.

The fixed-order allreduce adds the ranks' buffers piece by piece on the
wire; a quantized or sparse gradient cannot be added so without decoding
and encoding again at every hop (which would quantize partial sums, or
let the sparse sets grow). So each rank encodes its gradient once, the
ranks all-gather the encodings, and every rank decodes them and adds them
in rank order: ``((g_0 + g_1) + g_2) + ...`` in float32, the same bits on
every rank. This is the honest simple scheme, not the cheapest: a rank
sends its encoding to each other rank, ``(N - 1) * encoded_bytes`` per
step (counted by :func:`~minidl_dist.traffic.bytes_sent`), which pays
against the dense allreduce's ``2 (N - 1) / N * 4`` bytes per element only
for encodings much smaller than the gradient, or few ranks.

What else a step sums (the batch-norm statistics' changes, the flags that
say which weights got a gradient, the count of parts) is small and must be
exact: it goes through the ordinary allreduce.

Determinism: QSGD's rounding draws from a stream seeded by minidl's
default generator, the step and the rank
(:meth:`~minidl_dist.randomness.PartStreams.rank_stream`), top-k breaks ties
by index, so a run with the same seed replays bit for bit. Top-k's residual
lives in the strategy, not in the saved model: a run resumed from a
checkpoint starts with an empty residual, so it is not the run it continues.
"""

import numpy as np

from minidl_dist.collectives import gather_rows
from minidl_dist.failfast import doing
from minidl_dist.qsgd import QSGD
from minidl_dist.strategy import DataParallel
from minidl_dist.topk import TopK, error_feedback_step

#: The names ``DistributedOptimizer(compression=...)`` takes for the default codecs.
CODECS = {'qsgd': QSGD, 'topk': TopK}


def codec_of(compression):
    """The codec for a ``compression`` argument, or None for the allreduce's own modes."""
    if isinstance(compression, (QSGD, TopK)):
        return compression
    if isinstance(compression, str) and compression in CODECS:
        return CODECS[compression]()
    return None


class CompressedDataParallel(DataParallel):
    """Synchronous data parallelism whose gradients travel encoded by ``codec``.

    Everything but the gradients' sum is :class:`~minidl_dist.strategy.DataParallel`'s.
    With one rank the codec still applies (the same algorithm as on N ranks).

    Args:
        comm: The mpi4py communicator of the ranks.
        reducer: The :class:`~minidl_dist.allreduce.Reducer` for the exact sums.
        codec: A :class:`~minidl_dist.qsgd.QSGD` or :class:`~minidl_dist.topk.TopK`.
        every_rank_writes: Let every rank print progress and write files.

    Attributes:
        residual: Top-k's error feedback on this rank: what it has not sent
            yet (None before the first step, and for QSGD).
    """

    def __init__(self, comm, reducer, codec, every_rank_writes=False):
        super().__init__(comm, reducer, None, every_rank_writes)
        self.codec = codec
        self.residual = None

    def reduce_gradients(self, params):
        """Exchange the encoded gradients, add them up; sum the rest exactly."""
        packing = self._packing
        assert packing.matches(params, packing.states), \
            'reduce_gradients got other weights than run_step packed'
        term = self._sums.result()
        split = packing.offsets[len(packing.params)]
        with doing(f'training step {self._steps}, exchanging {self.codec!r}-encoded gradients'):
            exact = self.reducer.sum_(term[split:])
            gradients = self.exchange(term[:split])
        total = np.concatenate([gradients.astype(term.dtype, copy=False), exact])
        packing.unpack(total, self._snapshot)

    def exchange(self, gradient):
        """The sum over ranks of the codec's decoding of each rank's ``gradient``."""
        if self.residual is not None and self.residual.shape != gradient.shape:
            self.residual = None  # another model: its residual does not apply
        rng = self._streams.rank_stream(self.rank)
        encoded, self.residual = error_feedback_step(self.codec, gradient, self.residual, rng)
        rows = gather_rows(self.comm, encoded[None, :], [1] * self.size)
        total = self.codec.decode(rows[0], gradient.size)
        for row in rows[1:]:
            total += self.codec.decode(row, gradient.size)
        return total
