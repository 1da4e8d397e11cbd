"""Random draws per micro-shard, the same whichever rank computes the micro-shard.

Dropout and other random layers draw from minidl Generators (their own, or
the default generator). Under data parallelism each part of a global batch
must draw its own numbers, and in the rank-count-invariant mode micro-shard
``j`` must draw the same numbers on 1, 2 or 4 ranks. So, at each step,
every rank draws one key from each generator (which keeps the generators
equal on all ranks), and part ``j`` draws from streams seeded with
``(key, j)``. After the step each generator goes on from its own stream,
so the sequence of steps stays reproducible from ``minidl.set_seed``.
"""

import contextlib

import numpy as np


class PartStreams:
    """Switches a list of Generators to per-part streams during a step.

    Args:
        generators: The minidl Generators to switch (the same list on every rank).
    """

    def __init__(self, generators):
        self.generators = generators
        self._keys = None
        self._states = None

    def begin_step(self):
        """Draw this step's keys (once per step, on every rank)."""
        self._keys = [int(generator.integers(0, 2 ** 63 - 1)) for generator in self.generators]
        self._states = [generator.get_state() for generator in self.generators]

    @contextlib.contextmanager
    def part(self, index):
        """Within the block, the generators draw from the streams of part ``index``."""
        for generator, key in zip(self.generators, self._keys):
            stream = np.random.PCG64(np.random.SeedSequence([key, index]))
            generator.set_state(stream.state)
        try:
            yield
        finally:
            for generator, state in zip(self.generators, self._states):
                generator.set_state(state)
