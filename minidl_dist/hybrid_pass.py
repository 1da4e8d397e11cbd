"""One forward pass of a hybrid model's model-parallel part: whose rows, which tensors.

The layers from the first model-parallel one on compute the *global batch*
(:mod:`minidl_dist.model_parallel`), whose rows change with every batch:
each rank brings its own, and in the rank-count-invariant mode each rank
brings one micro-shard per round. :class:`~minidl_dist.hybrid.HybridParallel`
describes each pass in a :class:`Pass` and hands it to the model's
:class:`~minidl_dist.model_parallel.Region`, whose placements compute it.
The pass also records which tensors it made into the global batch, so that
a layer reading one does not gather it again.
"""

import contextlib
import weakref


class Pass:
    """The rows of the global batch in one forward pass, and the tensors that hold them.

    Args:
        row_counts: Rows each rank brings, in rank order.
        micro_shards: None; in the rank-count-invariant mode, the micro-shard
            each rank brings to this pass (a round), in rank order.
        streams: The step's :class:`~minidl_dist.randomness.PartStreams`,
            or None before the strategy's ``begin``.
    """

    def __init__(self, row_counts, micro_shards=None, streams=None):
        self.row_counts = list(row_counts)
        self.micro_shards = None if micro_shards is None else list(micro_shards)
        self.streams = streams
        # Weakly held: a tensor that is gone frees its id for another tensor.
        self._global = weakref.WeakValueDictionary()

    def blocks(self):
        """``[(index, rows)]`` of the global batch's blocks, in order.

        A block is a micro-shard in the invariant mode, else a rank's rows
        (indexed by rank).
        """
        indices = self.micro_shards if self.micro_shards is not None \
            else range(len(self.row_counts))
        return list(zip(indices, self.row_counts))

    def randomness(self, micro_shard=None):
        """A context in which random layers draw alike on every rank: the global
        batch's stream, or that of one micro-shard."""
        return self.streams.shared(micro_shard) if self.streams is not None \
            else contextlib.nullcontext()

    def mark_global(self, tensor):
        """``tensor``, recorded as holding the global batch in this pass."""
        self._global[id(tensor)] = tensor
        return tensor

    def holds_global(self, tensor):
        """Whether this pass made ``tensor`` the global batch."""
        return self._global.get(id(tensor)) is tensor
