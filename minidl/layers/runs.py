"""Forward passes ("runs"), which decide the loss terms a layer's ``add_loss`` keeps.

A run is an outermost layer call: a model's forward pass on one batch, or a
layer called on its own. Terms that layers add during a run replace those of
earlier runs, so ``model.losses`` holds exactly the terms of the batch just
computed. Calls nested inside the run (a model's layers) belong to it.

Each thread has its own runs: a ``predict`` in one thread neither ends the
run of a ``fit`` in another nor mixes its terms into that run's loss.
"""

import contextlib
import threading


class _Runs(threading.local):
    """This thread's run state: ``depth`` is the nesting of layer calls in progress,
    ``recording`` is False where add_loss terms are dropped, and ``terms`` maps
    each layer's id to the layer (kept alive, so ids stay unique) and the terms
    it added in the latest run."""

    depth, recording = 0, True

    def __init__(self):
        self.terms = {}


runs = _Runs()


class layer_call:
    """Around a layer's ``call``: an outermost call starts a new run, whose terms
    replace those of the thread's earlier run.

    A class, not a generator-based context manager: it wraps every layer
    call, and this costs a fraction.
    """

    def __enter__(self):
        if runs.depth == 0:
            runs.terms = {}
        runs.depth += 1

    def __exit__(self, *exc_info):
        runs.depth -= 1


def add_run_loss(layer, term):
    """Keep ``term`` (a scalar Tensor) as one of ``layer``'s terms in the current run."""
    if runs.recording:
        runs.terms.setdefault(id(layer), (layer, []))[1].append(term)


def run_losses(layer):
    """The terms ``layer`` added in this thread's latest run."""
    return runs.terms.get(id(layer), (layer, []))[1]


@contextlib.contextmanager
def not_recording_losses():
    """Within this context layer calls add no loss terms and start no new run
    (shape inference on zeros; a model recomputing a loss graph's inner nodes)."""
    recording = runs.recording
    runs.recording = False
    runs.depth += 1
    try:
        yield
    finally:
        runs.depth -= 1
        runs.recording = recording
