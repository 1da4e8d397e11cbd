"""Deterministic allreduce: a fixed summation order over mpi4py buffer calls.

``MPI_Allreduce`` lets the MPI library choose the order in which it adds
the ranks' values, and that order may change with the message size, the
library version or the number of ranks. Here the order is part of the
algorithm, so the same inputs give the same bits on every rank and in
every run:

- With a power-of-two number of ranks: recursive halving reduce-scatter,
  then recursive doubling all-gather (Rabenseifner's algorithm). Partners
  are at distance 1, 2, 4, ..., so every element is summed in the binary
  tree ``((p0 + p1) + (p2 + p3)) + ...`` over the ranks in order, each
  element on exactly one rank, which then sends the result to the others.
  Each rank sends ``2 (N - 1) / N`` of the buffer, the minimum.
- With any other number: a ring reduce-scatter and a ring all-gather;
  chunk ``c`` is summed as ``((p_c + p_c+1) + p_c+2) + ...``.

Buffers are reduced in pieces of ``bucket_bytes`` (a few MiB), which keeps
each piece's exchange and addition in the cache. With float16 on the wire,
partial sums travel as float16 and are added in float32; each element's
sum is rounded to float16 once, on the rank that computed it, so that all
ranks still hold the same bits.

:class:`PairwiseSum` adds a rank's own terms (micro-shard gradients) in the
same kind of binary tree, so a local sum followed by the allreduce is one
fixed tree over all terms.
"""

import numpy as np

from minidl_dist import traffic
from minidl_dist.watchdog import exchanging_with, waiting

#: Default size of the pieces a buffer is reduced in.
BUCKET_BYTES = 4 << 20


class Reducer:
    """Fixed-order, in-place sums of numpy buffers over a communicator's ranks.

    Args:
        comm: An mpi4py communicator.
        bucket_bytes: Size of the pieces a buffer is reduced in.
        wire_dtype: None (send the buffer's own dtype) or 'float16' (float32
            buffers are sent as float16 and summed in float32).
    """

    def __init__(self, comm, bucket_bytes=BUCKET_BYTES, wire_dtype=None):
        if bucket_bytes < 1024:
            raise ValueError(f'bucket_bytes must be at least 1024, got {bucket_bytes}')
        if wire_dtype not in (None, 'float16', np.float16):
            raise ValueError(f"wire_dtype must be None or 'float16', got {wire_dtype!r}")
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.bucket_bytes = int(bucket_bytes)
        self.wire_dtype = None if wire_dtype is None else np.dtype(np.float16)
        self.power_of_two = self.size & (self.size - 1) == 0
        self._scratch = {}

    def sum_(self, buffer):
        """Replace the 1-D contiguous numpy ``buffer`` by its sum over ranks; returns it."""
        if buffer.ndim != 1 or not buffer.flags.c_contiguous:
            raise ValueError('Reducer.sum_ needs a 1-D contiguous array')
        if self.size == 1 or buffer.size == 0:
            return buffer
        wire = buffer.dtype
        if self.wire_dtype is not None and buffer.dtype == np.float32:
            wire = self.wire_dtype
        piece = max(1, self.bucket_bytes // buffer.itemsize)
        with waiting(f'a sum over ranks of {buffer.size} values'):
            for start in range(0, buffer.size, piece):
                part = buffer[start:start + piece]
                if self.power_of_two:
                    self._halving_doubling(part, wire)
                else:
                    self._ring(part, wire)
        return buffer

    def sum_scatter(self, buffer, sizes):
        """This rank's block of the sum over ranks of the 1-D ``buffer`` (a new array).

        The buffer is cut into one block per rank, of ``sizes[r]`` elements, in
        rank order. With a power-of-two number of ranks this is the first half
        of the allreduce (recursive halving, the same summation tree, each rank
        sending ``(N - 1) / N`` of the buffer); otherwise the whole sum is taken.
        """
        edges = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
        if len(sizes) != self.size or edges[-1] != buffer.size:
            raise ValueError(f'sum_scatter: {len(sizes)} blocks of {edges[-1]} elements for '
                             f'{self.size} ranks and a buffer of {buffer.size}')
        if self.size == 1 or not self.power_of_two:
            total = self.sum_(np.ascontiguousarray(buffer))
            return total[edges[self.rank]:edges[self.rank + 1]].copy()
        # Halving leaves rank r the block at position bit_reverse(r): lay the blocks out so.
        positions = [_bit_reverse(position, self.size) for position in range(self.size)]
        arranged = np.concatenate([buffer[edges[r]:edges[r + 1]] for r in positions])
        starts = np.concatenate([[0], np.cumsum([sizes[r] for r in positions])]).astype(int)
        low, high = 0, self.size
        distance = 1
        with waiting(f'a sum-scatter over ranks of {buffer.size} values'):
            while distance < self.size:
                keep, give = _halves(self.rank, distance, low, high)
                kept = arranged[starts[keep[0]]:starts[keep[1]]]
                outgoing = arranged[starts[give[0]]:starts[give[1]]]
                incoming = np.empty_like(kept)
                traffic.add(outgoing.nbytes)
                exchanging_with(self.rank ^ distance)
                self.comm.Sendrecv(outgoing, self.rank ^ distance, recvbuf=incoming,
                                   source=self.rank ^ distance)
                np.add(kept, incoming, out=kept)
                low, high = keep
                distance <<= 1
        return arranged[starts[low]:starts[high]].copy()

    def _scratch_of(self, name, count, dtype):
        """A reused work array of at least ``count`` elements."""
        key = (name, np.dtype(dtype))
        array = self._scratch.get(key)
        if array is None or array.size < count:
            array = self._scratch[key] = np.empty(count, dtype)
        return array[:count]

    def _send_view(self, segment, wire):
        """``segment`` as it goes on the wire (a float16 copy, or itself)."""
        if wire == segment.dtype:
            return segment
        copy = self._scratch_of('send', segment.size, wire)
        np.copyto(copy, segment, casting='same_kind')
        return copy

    def _halving_doubling(self, buffer, wire):
        comm, rank = self.comm, self.rank
        received = self._scratch_of('receive', buffer.size - buffer.size // 2, wire)
        low, high = 0, buffer.size
        ranges = []
        distance = 1
        while distance < self.size:
            partner = rank ^ distance
            keep, give = _halves(rank, distance, low, high)
            kept = buffer[keep[0]:keep[1]]
            incoming = received[:kept.size]
            outgoing = self._send_view(buffer[give[0]:give[1]], wire)
            traffic.add(outgoing.nbytes)
            exchanging_with(partner)
            comm.Sendrecv(outgoing, partner, recvbuf=incoming, source=partner)
            np.add(kept, incoming, out=kept)
            ranges.append((keep, give))
            low, high = keep
            distance <<= 1
        result = buffer if wire == buffer.dtype else self._scratch_of('gather', buffer.size, wire)
        if result is not buffer:
            # The owner rounds its part once; every rank then copies those bits.
            np.copyto(result[low:high], buffer[low:high], casting='same_kind')
        # Back up the levels: what this rank gave away, its partner now holds summed.
        for (keep, give), distance in zip(reversed(ranges), _powers_down(self.size)):
            traffic.add(result[keep[0]:keep[1]].nbytes)
            exchanging_with(rank ^ distance)
            comm.Sendrecv(result[keep[0]:keep[1]], rank ^ distance,
                          recvbuf=result[give[0]:give[1]], source=rank ^ distance)
        if result is not buffer:
            np.copyto(buffer, result, casting='same_kind')

    def _ring(self, buffer, wire):
        comm, rank, size = self.comm, self.rank, self.size
        bounds = [index * buffer.size // size for index in range(size + 1)]
        chunk = lambda index, array: array[bounds[index % size]:bounds[index % size + 1]]
        right, left = (rank + 1) % size, (rank - 1) % size
        received = self._scratch_of('receive', buffer.size // size + 1, wire)
        for step in range(size - 1):
            target = chunk(rank - step - 1, buffer)
            incoming = received[:target.size]
            outgoing = self._send_view(chunk(rank - step, buffer), wire)
            traffic.add(outgoing.nbytes)
            exchanging_with(left)
            comm.Sendrecv(outgoing, right, recvbuf=incoming, source=left)
            np.add(target, incoming, out=target)
        result = buffer if wire == buffer.dtype else self._scratch_of('gather', buffer.size, wire)
        if result is not buffer:
            np.copyto(chunk(rank + 1, result), chunk(rank + 1, buffer), casting='same_kind')
        for step in range(size - 1):
            traffic.add(chunk(rank + 1 - step, result).nbytes)
            exchanging_with(left)
            comm.Sendrecv(chunk(rank + 1 - step, result), right,
                          recvbuf=chunk(rank - step, result), source=left)
        if result is not buffer:
            np.copyto(buffer, result, casting='same_kind')


def _halves(rank, distance, low, high):
    """``(kept, given)`` halves of ``low:high`` at one level of recursive halving.

    The lower rank of a pair keeps (and sums) the lower half.
    """
    middle = low + (high - low) // 2
    if rank & distance:
        return (middle, high), (low, middle)
    return (low, middle), (middle, high)


def _bit_reverse(value, size):
    """``value``'s bits in reverse order, over log2(size) bits."""
    result, bits = 0, size.bit_length() - 1
    for _ in range(bits):
        result, value = (result << 1) | (value & 1), value >> 1
    return result


def _powers_down(size):
    """size/2, size/4, ..., 1: the all-gather's partner distances."""
    distance = size >> 1
    while distance:
        yield distance
        distance >>= 1


class PairwiseSum:
    """Sums terms given one after another in the binary tree ``((t0 + t1) + (t2 + t3))``.

    Buffers from :meth:`new_term` are filled by the caller and handed back
    with :meth:`add`; only about log2(count) of them are alive at a time.
    The number of terms must be a power of two.
    """

    def __init__(self):
        self._stack = []  # (level, buffer), levels strictly decreasing
        self._free = []
        self.count = 0

    def new_term(self, like):
        """A buffer shaped like ``like`` to fill with the next term."""
        for index, buffer in enumerate(self._free):
            if buffer.shape == like.shape and buffer.dtype == like.dtype:
                return self._free.pop(index)
        return np.empty_like(like)

    def add(self, term):
        """Add the next term (a buffer from :meth:`new_term`)."""
        level = 0
        while self._stack and self._stack[-1][0] == level:
            _, left = self._stack.pop()
            np.add(left, term, out=left)
            self._free.append(term)
            term, level = left, level + 1
        self._stack.append((level, term))
        self.count += 1

    def result(self):
        """The sum of all terms (a buffer owned by this object until the next term)."""
        assert len(self._stack) == 1, f'{self.count} terms is not a power of two'
        return self._stack[0][1]

    def reset(self):
        """Start a new sum, keeping the buffers for reuse."""
        self._free.extend(buffer for _, buffer in self._stack)
        self._stack.clear()
        self.count = 0
