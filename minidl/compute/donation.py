"""Donated arrays: inputs that the running layer call may overwrite with its output.

A model's inference writes each layer's output into a fresh array, and the
array it read is dropped a moment later. Where a layer is its input's only
reader, the input can take the output instead: a ResNet's batch norms, ReLUs
and residual adds then write over what they just read, still in the cache,
instead of into cold memory (ResNet-20's inference, W3 of the benchmarks:
those three passes took 7.7 instead of 14.1 ms a step, 2-core AMD EPYC under
load). The values computed are the same, bit for bit.

Who may be overwritten is decided by the graph, not here: the model's replay
(:func:`minidl.layers.replay.run_nodes`, with the plan of
:mod:`minidl.layers.in_place`) donates an input only while autograd records
nothing, only to layers known to read it once, and only where no other layer,
output or mask of the model reads it. A Function that can work in place asks
:func:`may_overwrite` about its own input array, and must also need no
gradient. Outside such a call nothing is donated.
"""

import threading

_state = threading.local()  # .donated: {id(array): array} of the running layer call


class donating:
    """Context manager: ``arrays`` may be overwritten by the Functions run inside.

    The previous donations are put back on exit, so that a layer call nested
    in another one sees only its own.
    """

    def __init__(self, arrays):
        self.donated = {id(array): array for array in arrays}

    def __enter__(self):
        self._previous = getattr(_state, 'donated', None)
        _state.donated = self.donated
        return self

    def __exit__(self, *exc_info):
        _state.donated = self._previous


def may_overwrite(array):
    """Whether ``array`` itself (not a copy, not a view) was donated to the running call."""
    donated = getattr(_state, 'donated', None)
    return bool(donated) and donated.get(id(array)) is array
