"""Forward passes ("runs"), which decide the loss terms a layer's ``add_loss`` keeps.

A run is an outermost layer call: a model's forward pass on one batch, or a
layer called on its own. Terms that layers add during a run replace those of
earlier runs, so ``model.losses`` holds exactly the terms of the batch just
computed. Calls nested inside the run (a model's layers) belong to it.
"""

import contextlib


class _Runs:
    """``current`` counts the outermost calls, ``depth`` is the nesting of calls in
    progress, ``recording`` is False where add_loss terms are dropped."""

    current, depth, recording = 0, 0, True


runs = _Runs()


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
