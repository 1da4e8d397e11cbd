"""Turning autograd's recording back on where a layer needs gradients during inference.

A Lambda that takes a gradient inside the model (Keras 2's mnist_swwae finds
where max pooling took its maxima with ``K.gradients(K.sum(pooled),
pre_pooling)``) needs the graph between those tensors, which ``predict`` and
``evaluate`` do not record (they run under ``no_grad``). The backend then
raises :class:`GraphNotRecorded`, and the model replays the batch with
recording on (see ``Network.call``): the same values, as recording changes
no arithmetic. So it does when a gradient is asked at a tensor outside
autograd's graph (computed from data by layers whose weights are frozen).
"""

import contextlib

from minidl import config
from minidl.tensor import Tensor


class GraphNotRecorded(RuntimeError):
    """A gradient was asked for inside a forward pass that autograd does not record."""


@contextlib.contextmanager
def recording_graph():
    """Record autograd's graph inside the block, even within ``no_grad``."""
    previous = config.per_thread.grad_enabled
    config.per_thread.grad_enabled = True
    try:
        yield
    finally:
        config.per_thread.grad_enabled = previous


def is_recording_graph():
    """Whether autograd records the operations run now in this thread."""
    return config.per_thread.grad_enabled



def run_recording_if_needed(owner, run, values):
    """``run(values)`` (which fills ``values`` in); again, recording everything, if it needed to.

    When a gradient inside the graph raises :class:`GraphNotRecorded`, the
    graph is replayed with autograd recording and with each fed value that
    is outside autograd's graph (data, not a tensor computed upstream)
    standing in as a leaf that requires gradients, so that every tensor
    computed from the inputs is part of the graph.

    Args:
        owner: The model replaying its graph: once one of its passes needed
            this, the later ones do it from the start.
        run: Replays the graph, reading and extending a dict of values.
        values: The values fed, ``{id(symbolic tensor): value}``.

    Returns:
        The dict of values the successful replay filled in.
    """
    if not getattr(owner, '_records_everything', False):
        fed = dict(values)
        try:
            run(values)
            return values
        except GraphNotRecorded:
            owner._records_everything = True
        values = fed
    values = {key: _as_leaf(value) for key, value in values.items()}
    with recording_graph():
        run(values)
    return values


def _as_leaf(value):
    if isinstance(value, Tensor) and not value.requires_grad and value.dtype.kind == 'f':
        # A new Tensor on the same data: the caller's own is left as it was.
        return Tensor.wrap(value.data).requires_grad_()
    return value
