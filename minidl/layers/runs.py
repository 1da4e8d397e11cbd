"""Forward passes ("runs"), which decide the loss terms and updates layers keep.

A run is an outermost layer call: a model's forward pass on one batch, or a
layer called on its own. Terms that layers add during a run (``add_loss``)
replace those of earlier runs, so ``model.losses`` holds exactly the terms of
the batch just computed; so do the updates they add (``add_update``), which
the training step then applies. Calls nested inside the run (a model's
layers) belong to it.

Each thread has its own runs: a ``predict`` in one thread neither ends the
run of a ``fit`` in another nor mixes its terms into that run's loss.
"""

import contextlib
import threading

from minidl.layers.nest import flatten


class _Runs(threading.local):
    """This thread's run state: ``depth`` is the nesting of layer calls in progress,
    ``recording`` is False where add_loss terms are dropped, and ``terms`` maps
    each layer's id to the layer (kept alive, so ids stay unique) and the terms
    it added in the latest run; ``keys`` holds each term's inputs key (see
    :func:`inputs_key`), and ``updates`` each layer's ``(inputs key, update)``
    pairs."""

    depth, recording = 0, True

    def __init__(self):
        self.terms, self.keys, self.updates = {}, {}, {}


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
            if runs.updates or runs.keys:  # new dicts only after a run that filled them
                runs.updates, runs.keys = {}, {}
        runs.depth += 1

    def __exit__(self, *exc_info):
        runs.depth -= 1


def add_run_loss(layer, term, key=None):
    """Keep ``term`` (a scalar Tensor) as one of ``layer``'s terms in the current run,
    added for the inputs whose :func:`inputs_key` is ``key``."""
    if runs.recording:
        runs.terms.setdefault(id(layer), (layer, []))[1].append(term)
        runs.keys.setdefault(id(layer), []).append(key)


def run_losses(layer, key=None, keyed=False):
    """The terms ``layer`` added in this thread's latest run (with ``keyed``, only those
    added for the inputs whose key is ``key``)."""
    terms = runs.terms.get(id(layer), (layer, []))[1]
    if not keyed:
        return terms
    return [term for term, kept in zip(terms, runs.keys.get(id(layer), [])) if kept == key]


def add_run_update(layer, update, key=None):
    """Keep ``update`` as one of ``layer``'s updates in the current run (dropped where
    add_loss terms are: shape inference on zeros must change nothing)."""
    if runs.recording:
        runs.updates.setdefault(id(layer), (layer, []))[1].append((key, update))


def run_updates_of(layer):
    """The ``(inputs key, update)`` pairs ``layer`` added in this thread's latest run."""
    return runs.updates.get(id(layer), (layer, []))[1]


def inputs_key(inputs):
    """What ties a loss or an update to the inputs it was added for (Keras 2's
    ``object_list_uid``): the ids of the tensors, or None for unconditional ones."""
    if inputs is None or (isinstance(inputs, list) and not inputs):
        return None
    return tuple(id(leaf) for leaf in flatten(inputs))


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
