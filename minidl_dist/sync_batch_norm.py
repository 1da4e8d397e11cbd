"""SyncBatchNormalization: batch normalization with the statistics of the global batch.

With plain data parallelism a BatchNormalization layer normalises each
rank's part with that part's statistics, so results change with the number
of ranks. SyncBatchNormalization sums the per-channel sums over ranks (in
the fixed order of :mod:`minidl_dist.allreduce`, in forward and backward),
so it normalises with the mean and variance of the whole global batch, as
one process would, and all ranks keep the same moving statistics.

In the rank-count-invariant mode each micro-shard is normalised with its
own statistics instead (that is what makes the mode invariant); the
strategy switches this with :func:`local_statistics`. With one rank, or
outside training, the layer is a BatchNormalization.
"""

import contextlib
import threading

import numpy as np

from minidl import functions as F, no_grad
from minidl.layers import BatchNormalization, Layer
from minidl_dist import collectives
from minidl_dist.functions import allreduce_sum


class _Statistics(threading.local):
    """Whether this thread's SyncBatchNormalization calls use local statistics."""

    local = False


_statistics = _Statistics()


@contextlib.contextmanager
def local_statistics(local=True):
    """Within the block, SyncBatchNormalization uses the local batch's statistics if ``local``
    (in the current thread only)."""
    previous = _statistics.local
    _statistics.local = local
    try:
        yield
    finally:
        _statistics.local = previous


class SyncBatchNormalization(BatchNormalization):
    """BatchNormalization over the global batch of all ranks; same arguments and weights.

    Every rank must call the layer, with at least one sample each, as fit
    does. The moving variance receives the unbiased variance of the global
    batch.

    Models holding it save, and ``load_model`` finds it by name, as
    importing minidl_dist registers it with minidl's layers (loading builds
    only registered classes, never code from the file). A layer class of
    your own must be named at loading instead:
    ``load_model(path, custom_objects={'MyLayer': MyLayer})`` (or within
    ``minidl.registry.custom_object_scope``); it needs ``get_config``
    returning its constructor arguments.
    """

    def call(self, inputs, training=None):
        # Inference needs no communication (nor minidl_dist.init: a loaded model predicts).
        if not (training and self.trainable) or _statistics.local:
            return super().call(inputs, training)
        reducer = collectives.world_reducer()
        if reducer.size == 1:
            return super().call(inputs, training)
        axes = tuple(axis for axis in range(inputs.ndim) if axis != self._channel_axis)
        local_count = np.array([inputs.size // inputs.shape[self._channel_axis]], np.float64)
        count = float(reducer.sum_(local_count)[0])
        shape = [1] * inputs.ndim
        shape[self._channel_axis] = inputs.shape[self._channel_axis]
        mean = allreduce_sum(F.sum(inputs, axis=axes), reducer) / count
        centered = inputs - F.reshape(mean, shape)
        variance = allreduce_sum(F.sum(centered * centered, axis=axes), reducer) / count
        outputs = centered / F.reshape(F.sqrt(variance + self.epsilon), shape)
        if self.gamma is not None:
            outputs = outputs * F.reshape(self.gamma, shape)
        if self.beta is not None:
            outputs = outputs + F.reshape(self.beta, shape)
        with no_grad():
            momentum = self.momentum
            unbiased = variance.data * (count / max(count - 1.0, 1.0))
            self.moving_mean.data[...] = (self.moving_mean.data * momentum
                                          + mean.data * (1 - momentum))
            self.moving_variance.data[...] = (self.moving_variance.data * momentum
                                              + unbiased * (1 - momentum))
        return outputs


# minidl registers only its own modules' classes; loading must find this one by name too.
Layer.registry.register(SyncBatchNormalization)
