"""One rank's training step on its own samples, as the modes without a gradient sum take it.

Model averaging and the parameter server's workers train each rank alone:
the rank's samples of the global batch, its own batch-norm statistics
(``local_statistics``) and the random streams of its part, so that dropout
draws follow the part, not the rank count. A rank with no sample in a small
last batch takes a zero gradient, so the update that follows changes only
what the optimizer's state changes.
"""

from minidl import Tensor
from minidl.compute import get_array_module
from minidl.models import collected_weights
from minidl_dist import data
from minidl_dist.failfast import doing
from minidl_dist.sync_batch_norm import local_statistics


def train_alone(model, streams, step, indices, part, bounds, step_number):
    """Run ``step`` on samples ``bounds`` (start, stop) of the global batch ``indices``.

    Args:
        model: The model being trained.
        streams: The strategy's :class:`~minidl_dist.randomness.PartStreams`.
        step: fit's step function of a batch.
        indices: The global batch's sample indices.
        part: The part whose random streams the step draws from.
        bounds: ``(start, stop)`` of this rank's samples within ``indices``.
        step_number: The strategy's count of steps, for error messages.
    """
    start, stop = bounds
    streams.begin_step(model.optimizer.iterations)
    if stop == start:  # a batch smaller than the number of ranks: a zero gradient
        for param in collected_weights.training_weights(model):
            param.grad = Tensor(get_array_module(param.data).zeros_like(param.data))
        return
    with doing(f'training step {step_number} on samples {start}:{stop} of the global '
               f'batch'), streams.part(part), local_statistics():
        step(data.select(indices, start, stop))
