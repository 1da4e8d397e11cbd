"""Random draws per part of a batch, the same whichever rank computes the part.

Dropout and other random layers draw from minidl Generators (their own, or
the default generator). Under data parallelism each part of a global batch
(a rank's part, or a micro-shard) must draw its own numbers, and in the
rank-count-invariant mode micro-shard ``j`` must draw the same numbers on
1, 2 or 4 ranks. So part ``j`` of the step that makes the optimizer's
update number ``i`` draws from a stream seeded with ``(generator state,
i, j)``, and the generators are put back afterwards. Their own streams are
left as one process would leave them between steps (the default generator
still draws each epoch's shuffle, exactly as without minidl_dist), and a
run resumed from a checkpoint (which saves both the generator states and
``iterations``) draws the same numbers as the run it continues.

Layers that compute the global batch, alike on every rank (the
model-parallel part of a hybrid model), draw from one more stream per step,
:meth:`PartStreams.shared`, the same on every rank and for any number of
ranks; it continues from one such layer to the next within the step.
"""

import contextlib
import hashlib
import json

import numpy as np


class PartStreams:
    """Switches a list of Generators to per-part streams during a step.

    Args:
        generators: The minidl Generators to switch (the same list on every rank).
    """

    def __init__(self, generators):
        self.generators = generators
        self._states = None
        self._entropy = None
        self._shared = None

    def begin_step(self, step):
        """Start the step that makes update number ``step`` (on every rank)."""
        self._states = [generator.get_state() for generator in self.generators]
        self._entropy = [[_fingerprint(state), int(step)] for state in self._states]
        self._shared = {}

    @contextlib.contextmanager
    def shared(self, index=None):
        """Within the block, the generators draw from the step's shared stream.

        Args:
            index: None for the global batch's stream, or a micro-shard's
                index for that micro-shard's (the rank-count-invariant mode).

        Outside a step (evaluate, predict) the generators are left as they are.
        """
        if self._entropy is None:
            yield
            return
        key = [SHARED] if index is None else [SHARED, int(index)]
        states = self._shared.get(index) or [_stream_state(entropy + key)
                                             for entropy in self._entropy]
        current = [generator.get_state() for generator in self.generators]
        for generator, state in zip(self.generators, states):
            generator.set_state(state)
        try:
            yield
        finally:
            self._shared[index] = [generator.get_state() for generator in self.generators]
            for generator, state in zip(self.generators, current):
                generator.set_state(state)

    @contextlib.contextmanager
    def part(self, index):
        """Within the block, the generators draw from the streams of part ``index``."""
        for generator, entropy in zip(self.generators, self._entropy):
            generator.set_state(_stream_state(entropy + [index]))
        try:
            yield
        finally:
            for generator, state in zip(self.generators, self._states):
                generator.set_state(state)

    def rank_stream(self, rank):
        """A numpy Generator of this step's draws outside the model for ``rank`` (QSGD's rounding).

        Seeded from the first generator's state at the step's start (the
        default generator's, the same on every rank), the step and the rank,
        so that a run replays them.
        """
        bit_generator = np.random.PCG64()
        bit_generator.state = _stream_state(self._entropy[0] + [RANK_STREAMS, int(rank)])
        return np.random.Generator(bit_generator)


#: The shared stream's index, beyond any part's (parts are numbered from 0).
SHARED = 1 << 32
#: The index of the streams of :meth:`PartStreams.rank_stream`.
RANK_STREAMS = SHARED + 1


def _stream_state(entropy):
    return np.random.PCG64(np.random.SeedSequence(entropy)).state


def _fingerprint(state):
    """A 128-bit integer that identifies a generator state."""
    text = json.dumps(state, sort_keys=True, default=str).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:16], 'little')
