"""Sharding: which samples of a global batch each rank and each micro-shard computes.

A global batch of ``count`` samples (an index array drawn from the epoch's
permutation, or a slice) is cut into contiguous blocks whose sizes differ by
at most one. In the plain data-parallel mode the blocks are the ranks'
parts; in the rank-count-invariant mode they are the micro-shards, and rank
``r`` of ``N`` computes micro-shards ``r S/N`` to ``(r + 1) S/N - 1``, so the
blocks do not depend on ``N``.
"""


def block_bounds(count, blocks):
    """``(start, stop)`` of each of ``blocks`` contiguous blocks of ``count`` samples."""
    return [(index * count // blocks, (index + 1) * count // blocks) for index in range(blocks)]


def select(indices, start, stop):
    """The samples ``start:stop`` of a batch's ``indices`` (an int array or a slice)."""
    if isinstance(indices, slice):
        assert indices.step in (None, 1), 'batches are contiguous slices'
        first = indices.start or 0
        return slice(first + start, first + stop)
    return indices[start:stop]
